"""Design-space sweeps: a system, the parameters to vary, the statistics to keep; one row per
point, run on Dask workers, written to CSV as points finish, resumed where a CSV stops.

:class:`Sweep` is the specification; :meth:`Sweep.plan` checks it against the system before
anything runs (the swept names are parameters of the top, every ``--metric`` glob matches a
statistic, the file elaborates) and :meth:`Sweep.run` runs the points not already in the
CSV. :func:`sweep` is the same for a notebook, returning the table.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Callable, Mapping

import attrs

from ..kernel import ArchError, Tree, did_you_mean
from .execution import Executor, ship_by_value
from .points import Axis, Point, axis_from_values, generate, value_text
from .results import ResultsFile, row_key
from .runner import (FAILED, RUN_COLUMNS, Study, builder_files, file_digest, load_models, matches, source_files,
                     stat_columns)


@attrs.frozen
class Plan:
    """A checked sweep: what every point shares, the points, the statistic columns the
    system offers, and the path of its first ``Noc`` (None without one), for the
    latency-throughput plot."""

    study: Study
    points: list
    columns: list
    noc: str | None
    inputs: list

    @property
    def names(self) -> list[str]:
        """The parameter columns (fixed, then swept)."""
        return [name for name, _ in self.points[0].params] if self.points else []


@attrs.frozen
class SweepResult:
    """What a run of a sweep did: ``rows`` are the rows of its points (run now or read back
    from the CSV) in point order; ``interrupted`` says a Ctrl-C stopped it."""

    rows: list
    ran: int
    skipped: int
    interrupted: bool
    wall_s: float

    @property
    def failed(self) -> list:
        """The rows of points that failed."""
        return [r for r in self.rows if r.get("outcome") in FAILED]


@attrs.define
class Sweep:
    """A sweep of ``target`` (a ``.arch`` file or a builder callable) over ``axes``.

    ``fixed`` are parameters every point shares (``-p``, expression text); ``mode`` is
    ``grid``, ``zip`` or ``random`` (``samples`` points drawn with ``seed``); every point runs
    with the simulation seeds ``seed .. seed + seeds - 1``. ``metrics`` are globs over the
    statistic columns (empty: all). ``until_ps``/``cycles`` bound each run, as in
    ``archmodel run``. ``prepare`` loads the models in a worker before a point (plugins too);
    ``extra_inputs`` are files besides the ``.arch`` sources whose bytes the input hash covers
    (plugins).
    """

    target: str | Callable
    axes: list = attrs.field(factory=list)
    fixed: dict = attrs.field(factory=dict)
    mode: str = "grid"
    samples: int | None = None
    seed: int = 0
    seeds: int = 1
    metrics: tuple = ()
    top: str | None = None
    until_ps: int | None = None
    cycles: int | None = None
    watchdog_cycles: int = 100_000
    max_instances: int = 1_000_000
    import_paths: tuple = ()
    prepare: Callable = load_models
    extra_inputs: tuple = ()

    def plan(self) -> Plan:
        """Check the sweep against the system and list its points (raises ArchError)."""
        if self.cycles is not None and self.cycles < 1:
            raise ArchError(f"--cycles must be at least 1, got {self.cycles}")
        points = generate(self.axes, fixed=self.fixed, mode=self.mode, samples=self.samples, seed=self.seed,
                          seeds=self.seeds)
        names = list(self.fixed) + [axis.name for axis in self.axes]
        for name in names:
            if name in RUN_COLUMNS:
                raise ArchError(f"the parameter '{name}' has the name of a result column",
                                hint="result columns: " + ", ".join(RUN_COLUMNS))
        self.prepare()
        top, files, declared = self._elaborate(points)
        unknown = [n for n in names if n not in declared]
        if unknown:
            raise ArchError(f"--sweep {unknown[0]}: the top has no parameter '{unknown[0]}'",
                            hint=did_you_mean(unknown[0], declared) or "its parameters: " + (", ".join(declared) or "none"))
        study = Study(target=self._worker_target(), input_sha256=file_digest(files + list(self.extra_inputs)),
                      top=self.top, extra_inputs=tuple(str(Path(p).resolve()) for p in self.extra_inputs),
                      metrics=tuple(self.metrics), until_ps=self.until_ps, cycles=self.cycles,
                      watchdog_cycles=self.watchdog_cycles, max_instances=self.max_instances,
                      import_paths=tuple(str(Path(p).resolve()) for p in self.import_paths), prepare=self.prepare)
        tree = Tree(top)  # the statistics and parts of the system, without an engine
        columns = stat_columns(tree.all_stats())
        for pattern in self.metrics:
            if not pattern or not any(matches(c, (pattern,)) for c in columns):
                raise ArchError(f"--metric '{pattern}' matches no statistic of {top.name}",
                                hint=did_you_mean(pattern, columns) or f"statistics look like {columns[0]}"
                                if columns else "the system has no statistics")
        from ..models.network import Noc

        noc = next((c.path for c in tree.components if isinstance(c, Noc)), None)
        return Plan(study, points, [c for c in columns if matches(c, self.metrics)], noc,
                    files + list(self.extra_inputs))

    def _worker_target(self):
        if self._is_arch:
            return str(Path(self.target).resolve())
        return ship_by_value(self.target)

    @property
    def _is_arch(self) -> bool:
        return not callable(self.target)

    def _elaborate(self, points: list[Point]):
        """The top built with the first point's parameters, or with the fixed ones alone if
        those fail (then the first point fails on its own, as a row); the files read; and the
        names of the top's parameters."""
        tries = [points[0].overrides, dict(self.fixed)] if points else [dict(self.fixed)]
        first: ArchError | None = None
        for overrides in tries:
            try:
                if not callable(self.target):  # (_is_arch, spelt so that a type checker sees it)
                    from ..lang import Limits, load

                    if not Path(self.target).is_file():
                        raise ArchError(f"no such file: {self.target}")
                    elaborated = load(self.target, top=self.top, params=overrides,
                                      limits=Limits(max_instances=self.max_instances),
                                      search_path=[Path(p) for p in self.import_paths])
                    declared = [p.name for p in elaborated.top_module.params]
                    return elaborated.top, source_files(elaborated), declared
                declared = list(inspect.signature(self.target).parameters)
                return self.target(**Point(tuple(overrides.items()), 0).values), builder_files(self.target), declared
            except ArchError as err:
                first = first or err
        assert first is not None  # tries is never empty
        raise first

    def run(self, csv_path: str | Path | None = None, *, executor: Executor | None = None, fresh: bool = False,
            retry_failed: bool = False, on_row: Callable | None = None, plan: Plan | None = None) -> SweepResult:
        """Run the points not already in ``csv_path`` (all of them with ``fresh``; failed ones
        again with ``retry_failed``), writing each row as it finishes and calling
        ``on_row(row, finished, total)``. A Ctrl-C stops it with the finished rows written."""
        plan = plan or self.plan()
        results = ResultsFile(csv_path, plan.names, fresh=fresh)
        sha = plan.study.input_sha256
        done = results.done(retry_failed, FAILED)
        todo = [p for p in plan.points if p.key(sha) not in done]
        results.drop({p.key(sha) for p in todo})
        results.start()
        executor = executor or Executor()
        started, finished, interrupted = time.perf_counter(), 0, False

        def finish(point, row):
            nonlocal finished
            finished += 1
            results.add(row)
            if on_row is not None:
                on_row(row, finished, len(todo))

        try:
            if todo:
                with executor:
                    executor.run(plan.study, todo, finish)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            results.finish([p.key(sha) for p in plan.points])
            results.close()
        wanted = {p.key(sha) for p in plan.points}
        rows = [r for r in results.rows if row_key(r, plan.names) in wanted]
        return SweepResult(rows, finished, len(plan.points) - len(todo), interrupted, time.perf_counter() - started)


def sweep(target, axes: Mapping | None = None, *, params: Mapping | None = None, csv: str | Path | None = None,
          workers: int | None = None, scheduler: str | None = None, client=None, frame: bool | None = None,
          fresh: bool = False, retry_failed: bool = False, **options):
    """Run a sweep from Python and return its table, for notebooks.

    ``axes`` maps a parameter to its values (a list, or a spec string as after ``--sweep
    NAME=``, e.g. ``"0.05:0.5:0.05"``); ``params`` are fixed parameters. Values are numbers or
    ``.arch`` expression text (``"2 ns"``, ``'"uniform"'``). ``options`` are the other fields of
    :class:`Sweep` (``mode``, ``samples``, ``seed``, ``seeds``, ``metrics``, ``top``,
    ``until_ps``, ``cycles``, ...). Points run on ``workers`` local Dask processes (default:
    the CPU count; 0 runs them here), the scheduler at ``scheduler``, or the caller's
    ``client``. With ``csv`` the rows are written there as they finish and a re-run resumes.

    Returns a pandas DataFrame if pandas is installed (``frame=None``) or asked for
    (``frame=True``), else a list of dicts, one per point in point order.
    """
    spec = Sweep(target, [axis_from_values(n, v) if not isinstance(v, Axis) else v for n, v in (axes or {}).items()],
                 {n: value_text(v) for n, v in (params or {}).items()}, **options)
    result = spec.run(csv, executor=Executor(workers, scheduler, client), fresh=fresh, retry_failed=retry_failed)
    if result.interrupted:
        raise KeyboardInterrupt
    return table(result.rows, frame)


def table(rows: list[dict], frame: bool | None = None):
    """Rows as a pandas DataFrame (``frame=True``, or None and pandas installed) or as they are."""
    if frame is False:
        return rows
    try:
        import pandas
    except ImportError:
        if frame:
            raise ArchError("frame=True needs pandas", hint="pip install pandas, or take the list of dicts") from None
        return rows
    return pandas.DataFrame(rows)
