"""Running one point of a sweep: elaborate the system with the point's parameters (as
``archmodel run -p NAME=VALUE`` does), simulate it, and return its row: the parameters, seed,
outcome, message, simulated time, run time, the input's SHA-256 and the scalar statistics.

:func:`run_point` is what a Dask worker executes; it never raises for a point that fails
(bad parameter value, deadlock, a model's assertion, an exception in model code): the row
says what happened, so the other points go on.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib
import time
import traceback
from pathlib import Path
from typing import Callable

import attrs

from ..kernel import ArchError, DeadlockError, Distribution, Level, SimulationError, Simulator

# The columns every row starts with (after the parameters), in this order.
RUN_COLUMNS = ("seed", "outcome", "message", "simulated_ps", "ticks", "wall_s", "cpu_s", "input_sha256")
# The columns that differ between two runs of the same point (how long it took).
TIMING_COLUMNS = ("wall_s", "cpu_s")
# Outcomes of points that did not run to an end of their own (the others are the reason the
# simulation returned: "quiescent", "limit", or what a model passed to stop(), e.g. "measured").
FAILED = ("bad-input", "deadlock", "failed", "crashed", "lost")
# The figures besides "value" that each kind of statistic reports (its summary() keys), so a
# --metric glob can be checked against a system before anything runs.
FIGURES = {Distribution: ("count", "min", "p50", "p99", "max"), Level: ("max",)}


def file_digest(paths) -> str:
    """SHA-256 of the files' bytes one after another: for one file, its ``sha256sum``."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def source_files(elaborated) -> list[str]:
    """The files a load read, the main file first, then its imports as they were read
    (``-p`` values are recorded beside them as pseudo-files; they are parameters, not input)."""
    return [name for name in elaborated.sources.files if not name.startswith("-p ")]


def builder_files(builder: Callable) -> list[str]:
    """The source file of a builder function, where it has one."""
    source = getattr(getattr(builder, "__code__", None), "co_filename", None)
    return [source] if source and Path(source).is_file() else []


def stat_columns(stats) -> list[str]:
    """Every result column the statistics can fill: a statistic's value under its path, and
    its other figures (a distribution's count, min, p50, p99, max) as ``path.figure``."""
    columns = []
    for stat in stats:
        columns.append(stat.path)
        for kind, figures in FIGURES.items():
            if isinstance(stat, kind):
                columns += [f"{stat.path}.{figure}" for figure in figures]
    return columns


def matches(column: str, metrics: tuple[str, ...]) -> bool:
    """Whether a statistic column is selected by the ``--metric`` globs (all, without globs).
    A pattern equal to the name matches too: in a glob ``router[0]`` is a character class."""
    return not metrics or any(column == pattern or fnmatch.fnmatchcase(column, pattern) for pattern in metrics)


def scalar_statistics(stats, metrics: tuple[str, ...] = ()) -> dict:
    """The selected statistics of a run as ``{column: number or None}``."""
    row = {}
    for stat in stats:
        for figure, value in stat.summary().items():
            column = stat.path if figure == "value" else f"{stat.path}.{figure}"
            if not matches(column, metrics):
                continue
            if hasattr(value, "item"):  # a numpy scalar
                value = value.item()
            if value is None or isinstance(value, (bool, int, float, str)):
                row[column] = value
    return row


def load_models() -> None:
    """The default preparation of a worker: the built-in model families join the catalogue."""
    importlib.import_module("archmodel.models")


@attrs.frozen
class Study:
    """What every point of a sweep shares.

    ``target`` is a ``.arch`` file (an absolute path, so workers started elsewhere find it)
    or a builder callable taking the parameters as keyword arguments. ``input_sha256`` is the
    driver's :func:`file_digest` of the inputs; a worker that reads different bytes (the file
    was edited meanwhile) reports the point as bad input rather than mix two systems in one
    table. ``prepare`` runs before each point (it loads the models and plugins);
    ``metrics`` are the ``--metric`` globs (empty: every scalar statistic).
    """

    target: str | Callable
    input_sha256: str
    top: str | None = None
    extra_inputs: tuple = ()
    metrics: tuple = ()
    until_ps: int | None = None
    cycles: int | None = None
    watchdog_cycles: int = 100_000
    max_instances: int = 1_000_000
    import_paths: tuple = ()
    prepare: Callable = load_models

    @property
    def is_arch(self) -> bool:
        """The target is a ``.arch`` file (else a builder)."""
        return not callable(self.target)

    def build(self, overrides: dict[str, str], display: dict):
        """Elaborate the top with the point's parameters; returns (top, the input files read)."""
        if not callable(self.target):  # (is_arch, spelt so that a type checker sees it)
            from ..lang import Limits, load

            elaborated = load(self.target, top=self.top, params=overrides,
                              limits=Limits(max_instances=self.max_instances),
                              search_path=[Path(p) for p in self.import_paths])
            return elaborated.top, source_files(elaborated)
        return self.target(**display), builder_files(self.target)

    def simulate(self, top, seed: int) -> tuple[Simulator, str]:
        """Run ``top`` to its end or the study's limit; returns the simulator and the reason."""
        sim = Simulator(top, seed=seed, watchdog_cycles=self.watchdog_cycles)
        reason = sim.run(until_ps=self.until_ps, cycles=self.cycles).reason
        # A model that stops the run says why ("measured", "unstable"): that is the outcome.
        return sim, (sim.stopped or reason) if reason == "stopped" else reason


def run_point(study: Study, point) -> dict:
    """Run one point and return its row (see the module docstring); never raises for the
    point's own failure."""
    wall, cpu = time.perf_counter(), time.process_time()
    sim, outcome, message = None, None, ""
    try:
        study.prepare()
        top, files = study.build(point.overrides, point.values)
        if study.is_arch and file_digest(files + list(study.extra_inputs)) != study.input_sha256:
            raise ArchError(f"the input changed during the sweep: {', '.join(files)} no longer has the "
                            f"SHA-256 {study.input_sha256}", hint="run the sweep again (its CSV keeps the finished points)")
        sim, outcome = study.simulate(top, point.seed)
    except ArchError as err:
        outcome, message = "bad-input", err.render()
    except DeadlockError as err:
        outcome, message = "deadlock", str(err)
    except SimulationError as err:
        outcome, message = "failed", str(err)
    except Exception:  # a bug in model code: its author needs the traceback
        outcome, message = "crashed", traceback.format_exc()
    row = dict(point.values)
    row.update(seed=point.seed, outcome=outcome, message=message,
               simulated_ps=sim.now if sim is not None else None, ticks=sim.ticks if sim is not None else None,
               wall_s=round(time.perf_counter() - wall, 6), cpu_s=round(time.process_time() - cpu, 6),
               input_sha256=study.input_sha256)
    if sim is not None:
        try:
            row.update(scalar_statistics(sim.all_stats(), study.metrics))
        except Exception:  # a statistic's formula failed: the point still has its outcome
            row["outcome"], row["message"] = "crashed", traceback.format_exc()
    return row
