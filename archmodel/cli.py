"""The ``archmodel`` command line: ``run``, ``check``, ``list``, ``show`` and ``sweep``.

``run``, ``show`` and ``check`` take a ``.arch`` file (the language, :mod:`archmodel.lang`) or,
for ``run`` and ``show``, a Python builder ``MODULE:FUNCTION`` returning the top component.

Exit codes: 0 success, 1 the simulation failed (deadlock, a model's assertion, a bug in model
code), 2 bad input (the message says what and where), 3 the run ended but the measurement it
made failed (a network past saturation: unstable), 130 interrupted by Ctrl-C (143 SIGTERM, 129
SIGHUP). Errors are
one clear message on stderr, never a Python traceback, except for a bug inside model code,
whose traceback is what its author needs.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import attrs

from . import __version__
from .outputs import check_writable, write_whole
from .kernel import (ArchError, Component, SimulationError, Simulator, Span, catalogue, format_time,
                     parse_time, stats_csv, stats_dict, stats_table)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_UNSTABLE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _load_models(plugins: list[str] | None = None) -> None:
    """Fill the model catalogue: the built-in families, installed plugins (entry point group
    ``archmodel.models``) and plugin files given with ``--plugin``."""
    importlib.import_module("archmodel.models")
    from importlib.metadata import entry_points

    for entry in entry_points(group="archmodel.models"):
        try:
            entry.load()
        except Exception as err:  # a broken third-party plugin is bad input, not our crash
            raise ArchError(f"plugin entry point '{entry.name}' ({entry.value}) failed to load: "
                            f"{type(err).__name__}: {err}") from None
    for plugin in plugins or []:
        _load_plugin_file(plugin)


def _load_plugin_file(plugin: str) -> None:
    path = Path(plugin)
    if path.suffix != ".py" or not path.is_file():
        raise ArchError(f"--plugin {plugin}: no such Python file", hint="give a .py file defining @model classes")
    module_name = f"archmodel_plugin_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    if module_name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except ArchError:
        raise
    except Exception as err:
        del sys.modules[module_name]
        raise ArchError(f"--plugin {plugin} failed to load: {type(err).__name__}: {err}") from None


def _is_arch(target: str) -> bool:
    return target.endswith(".arch")


def load_arch(args):
    """Parse and elaborate the ``.arch`` file of ``args.target`` (with ``--top``, ``-p``,
    ``--max-instances``)."""
    from .lang import Limits, load

    params = {}
    for pair in args.param:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ArchError(f"--param '{pair}' is not NAME=VALUE", hint="for example: -p cores=8 or -p 'lat=2 ns'")
        params[key] = value
    limits = Limits(max_instances=args.max_instances)
    return load(args.target, top=args.top, params=params, limits=limits, search_path=_import_paths(args)), params


def _import_paths(args) -> list[Path]:
    """The folders given with ``--import-path``, each checked to exist."""
    folders = []
    for folder in args.import_path:
        if not Path(folder).is_dir():
            raise ArchError(f"--import-path {folder}: no such folder")
        folders.append(Path(folder))
    return folders


def _parse_value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text in ("true", "false"):
        return text == "true"
    return text


def _parse_params(pairs: list[str]) -> dict:
    params = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ArchError(f"--param '{pair}' is not NAME=VALUE", hint="for example: -p packets=1000")
        params[key] = _parse_value(value)
    return params


def load_builder(target: str):
    """Resolve ``package.module:function`` or ``path/to/file.py:function`` to a callable
    and the file it came from."""
    module_name, sep, func_name = target.partition(":")
    if not sep or not func_name or not module_name:
        raise ArchError(f"'{target}' is not a builder",
                        hint="give MODULE:FUNCTION, e.g. archmodel.examples.banked_memory:build")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise ArchError(f"no such file: {module_name}")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except SyntaxError as err:  # the builder's file does not parse: say where, as for a .arch file
        raise ArchError(f"the builder module does not parse: {err.msg}",
                        span=Span(err.filename or module_name, err.lineno or 1, err.offset or 1)) from None
    except ModuleNotFoundError as err:
        raise ArchError(f"cannot import module '{module_name}': {err}",
                        hint="is the package installed, or did you mean a path ending in .py?") from None
    except (ArchError, KeyboardInterrupt):
        raise
    except Exception:  # the builder module itself raised while loading: its author needs the traceback
        raise SimulationError(f"importing the builder module '{module_name}' raised:\n{traceback.format_exc()}") from None
    builder = getattr(module, func_name, None)
    if not callable(builder):
        names = [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]
        close = difflib.get_close_matches(func_name, names, n=1)
        raise ArchError(f"module '{module_name}' has no function '{func_name}'",
                        hint=f"did you mean '{close[0]}'?" if close else None)
    return builder, getattr(module, "__file__", None)


def build_top(target: str, params: dict) -> tuple[Component, str | None]:
    """Call the builder with ``params`` and check it returns a component tree."""
    builder, source = load_builder(target)
    signature = inspect.signature(builder)
    try:
        signature.bind(**params)
    except TypeError as err:
        accepted = ", ".join(signature.parameters) or "none"
        raise ArchError(f"{target}: {err}", hint=f"the builder's parameters are: {accepted}") from None
    top = builder(**params)
    if not isinstance(top, Component):
        raise ArchError(f"{target} returned {type(top).__name__}, not a Component")
    return top, source


def _file_hash(path: str | None) -> str | None:
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _resolved_params(sim: Simulator) -> dict:
    return {c.path: attrs.asdict(c.params) for c in sim.components if attrs.asdict(c.params)}


def _instability(sim) -> str:
    """Why a network measurement was unstable, under the rule its Noc applied."""
    from .models.network import Noc

    for noc in (c for c in sim.top.walk() if isinstance(c, Noc)):
        meas = noc.measurement
        if meas is not None and meas.latency_unstable:
            return (f"the running average packet latency passed {noc.latency_threshold} cycles at "
                    f"{format_time(meas.exceeded_ps)} (BookSim's rule; stability = \"drain\" waits for the "
                    "drain limit instead)")
    return "packets created in the window did not all arrive before the drain limit"


def _manifest(args, sim: Simulator, source: str | None, build_params: dict, outcome: str,
              files_read: dict[str, str]) -> dict:
    return {
        "archmodel_version": __version__,
        "target": args.target,
        "input_file": source,
        "input_sha256": _file_hash(source),
        "files_read": files_read,
        "build_parameters": build_params,
        "seed": args.seed,
        "outcome": outcome,
        "simulated_ps": sim.now,
        "ticks": sim.ticks,
        "clocks": {d.name: {"period_ps": d.period_ps, "phase_ps": d.phase_ps} for d in sim.domains},
        "parameters": _resolved_params(sim),
    }


class _StopSignals:
    """While active, the first Ctrl-C (SIGINT), SIGTERM or SIGHUP (what batch schedulers and
    closing terminals send) asks the simulator to stop after the current time point, so
    models, the tracer and the statistics are left consistent and written; a second one acts
    at once, as usual. ``signal_number`` is the one that came (None while none did)."""

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.signal_number = None
        self._previous: dict = {}

    @property
    def pressed(self) -> bool:
        """A stop signal came."""
        return self.signal_number is not None

    @property
    def exit_code(self) -> int:
        """128 + the signal's number, as a shell reports a process the signal ended: 130 for
        SIGINT, 143 for SIGTERM, 129 for SIGHUP."""
        return 128 + int(self.signal_number)

    def _handle(self, signum, frame) -> None:
        self.signal_number = signum
        self.sim.stop("interrupted")
        self._restore()

    def _restore(self) -> None:
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous = {}

    def __enter__(self) -> "_StopSignals":
        if threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        self._restore()


def _run_with_progress(sim: Simulator, limit_ps: int | None, show: bool, stop_signals: _StopSignals):
    """Run to ``limit_ps`` (or until done or Ctrl-C) in slices, so a progress bar can follow
    simulated time."""
    period = sim.top.domain.period_ps
    slice_ps = 10_000 * period
    bar = None
    if show:
        from tqdm import tqdm

        bar = tqdm(total=limit_ps, unit="ps", unit_scale=True, dynamic_ncols=True, file=sys.stderr,
                   desc="simulated", leave=False)
    try:
        while True:
            # a slice covers at least the next event, so a long quiet stretch (a link of 10^12
            # cycles, a trace line far ahead) is one step, not billions of empty slices
            end = max(sim.now + slice_ps, sim.next_event_ps() or 0)
            end = end if limit_ps is None else min(end, limit_ps)
            result = sim.run(until_ps=end)
            if bar is not None:
                bar.update(sim.now - bar.n)
                bar.set_postfix_str(format_time(sim.now))
            if stop_signals.pressed or result.reason != "limit" or end == limit_ps:
                return result
    finally:
        if bar is not None:
            bar.close()


def _check_outputs(inputs: list, vcd_path: str | None, stats_path: str | None) -> None:
    """Before the run: no output may replace an input (the .arch files read, plugins) or
    another output (the VCD, its .gtkw save file, the statistics), and each can be written."""
    outputs = []
    if vcd_path is not None:
        if not Path(vcd_path).name or Path(vcd_path).is_dir():
            raise ArchError(f"--vcd {vcd_path} is a folder", hint="give the path of a file to write, e.g. waves/run.vcd")
        outputs += [("--vcd", Path(vcd_path)), ("the waveform's save file", Path(vcd_path).with_suffix(".gtkw"))]
    if stats_path:
        outputs.append(("--stats", Path(stats_path)))
    read = {}
    for name in inputs:
        if Path(name).is_file():
            read[Path(name).resolve()] = name
    written = {}
    for what, path in outputs:
        where = path.resolve()
        if where in read:
            raise ArchError(f"{what} {path} would overwrite the input {read[where]}",
                            hint="write the outputs somewhere else, e.g. waves/")
        if where in written:
            raise ArchError(f"{what} {path} is also {written[where]}: one would overwrite the other",
                            hint="give each output a name of its own (the save file is the VCD's name with .gtkw)")
        written[where] = what
        check_writable(what, path)


def _check_trace_statements(elaborated, sim: Simulator) -> None:
    """Each ``trace`` statement of a ``.arch`` file must select some signal: one that selects
    none is an error at the statement (``check`` finds it, not only ``run``)."""
    from .lang import LanguageErrors
    from .trace import Selection, signal_names

    names = signal_names(sim) if elaborated.traces else []
    errors = []
    for pattern in dict.fromkeys(elaborated.traces):
        try:
            Selection([pattern]).check_matches(names)
        except ArchError as err:
            err.span = elaborated.trace_spans.get(pattern)
            errors.append(err)
    if errors:
        raise LanguageErrors(errors, elaborated.sources)


def cmd_run(args) -> int:
    """Simulate a system; print and write its statistics, and a VCD if asked."""
    _load_models(args.plugin)
    traces = list(args.trace or [])
    if _is_arch(args.target):
        elaborated, build_params = load_arch(args)
        top, source = elaborated.top, args.target
        if not traces:
            traces = elaborated.traces
    else:
        build_params = _parse_params(args.param)
        top, source = build_top(args.target, build_params)
    sim = Simulator(top, seed=args.seed, watchdog_cycles=args.watchdog)
    if _is_arch(args.target) and not args.trace:
        _check_trace_statements(elaborated, sim)
    limit = None
    if args.until is not None:
        limit = parse_time(args.until)
    if args.cycles is not None:
        if args.cycles < 1:
            raise ArchError(f"--cycles must be at least 1, got {args.cycles}")
        clock = sim.top.domain
        edge = clock.phase_ps + (args.cycles - 1) * clock.period_ps
        limit = edge if limit is None else min(limit, edge)
    tracer = None
    vcd_path = args.vcd
    if vcd_path is None and traces:
        vcd_path = "auto"
    if vcd_path == "auto":
        vcd_path = str(Path("waves") / f"{top.name}.vcd")
    inputs = list(elaborated.sources.files) if _is_arch(args.target) else []
    # every file the run read, with its SHA-256: the .arch files as read, the builder, plugins
    files_read = dict(elaborated.sources.digests) if _is_arch(args.target) else {source: _file_hash(source)}
    files_read.update({plugin: _file_hash(plugin) for plugin in args.plugin or []})
    _check_outputs(inputs + list(args.plugin or []), vcd_path, args.stats)
    if vcd_path is not None:
        from .trace import VcdTracer

        Path(vcd_path).parent.mkdir(parents=True, exist_ok=True)
        tracer = VcdTracer(vcd_path, select=tuple(traces or ["*"]),
                           start_ps=parse_time(args.trace_from) if args.trace_from else None,
                           end_ps=parse_time(args.trace_to) if args.trace_to else None)
        try:
            tracer.check(sim)  # a selection that matches nothing is bad input: say so before running
        except ArchError:
            tracer.close()
            raise
        sim.add_observer(tracer)
    show_progress = args.progress if args.progress is not None else sys.stderr.isatty()
    outcome, code, failure = "finished", EXIT_OK, None
    started = time.perf_counter()
    try:
        with _StopSignals(sim) as stop_signals:
            result = _run_with_progress(sim, limit, show_progress, stop_signals)
        outcome = result.reason
        if outcome == "stopped" and sim.stopped not in (None, "stopped"):
            # a model ended the run and said why (measured, unstable, stream done, ...)
            outcome = sim.stopped
        if outcome == "unstable":  # a measurement that failed must not look like success
            code = EXIT_UNSTABLE
        if stop_signals.pressed:
            outcome, code = "interrupted", stop_signals.exit_code
    except KeyboardInterrupt:  # a second Ctrl-C, or one while a model's tick never returns
        outcome, code = "interrupted", EXIT_INTERRUPTED
    except SimulationError as err:
        outcome, code, failure = "failed", EXIT_FAILED, f"error: {err}"
    except ArchError as err:  # bad input found while running (a model's own check)
        outcome, code, failure = "failed", EXIT_BAD_INPUT, err.render()
    except OSError as err:  # the waveform could not be written as it went (a full disk), say
        outcome, code, failure = "failed", EXIT_FAILED, f"error: the run stopped on an input/output error: {err}"
    except Exception:  # a bug in model code: its author needs the traceback
        outcome, code, failure = "failed", EXIT_FAILED, "error: model code raised an exception:\n" + traceback.format_exc()
    finally:
        unwritten = []  # outputs that could not be written: said at the end, exit 1
        if tracer is not None:
            try:
                tracer.close()
            except OSError as err:
                unwritten.append(f"--vcd {vcd_path}: {err.strerror or err}")
    wall = time.perf_counter() - started
    stats = sim.all_stats()
    from .experiments.hierarchy import report_outputs  # clusters in a memory tree: roll-ups, roofline

    report, figures, png, png_error = report_outputs(top, args.stats)
    if png_error:
        unwritten.append(f"the roofline {png_error}")
    # The files first: a reader of the table that goes away (`| head`) must not lose them.
    if args.stats:
        path = Path(args.stats)
        manifest = _manifest(args, sim, source, build_params, outcome, files_read)
        if path.suffix == ".csv":
            text = stats_csv(stats, manifest)
        else:
            document = {"manifest": manifest, "statistics": stats_dict(stats)}
            if figures is not None:
                document["hierarchy"] = figures
            text = json.dumps(document, indent=2, default=str) + "\n"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # (made before the run; gone since?)
            write_whole(path, text)
        except OSError as err:
            unwritten.append(f"--stats {path}: {err.strerror or err}")
    if not args.quiet:
        try:
            print(stats_table(stats) if stats else "(no statistics)", flush=True)
            if report is not None:
                print("\n" + report, flush=True)
        except BrokenPipeError:
            raise
        except OSError as err:  # a full disk behind stdout
            unwritten.append(f"the statistics table on standard output: {err.strerror or err}")
    rate = sim.ticks / wall if wall > 0 else 0.0
    print(f"{outcome} at {format_time(sim.now)} after {sim.ticks} component ticks "
          f"({wall:.2f} s wall, {rate:,.0f} ticks/s)", file=sys.stderr)
    if tracer is not None and not any(line.startswith("--vcd") for line in unwritten):
        print(f"waveform: {vcd_path} (open with: gtkwave {Path(vcd_path).with_suffix('.gtkw')})", file=sys.stderr)
    if failure:
        print(failure, file=sys.stderr)
    if code == EXIT_UNSTABLE:
        print(f"error: the measurement is unstable: {_instability(sim)} (the offered load is past "
              "saturation); its figures are not a steady state", file=sys.stderr)
    if outcome == "interrupted":
        how = "interrupted" if code == EXIT_INTERRUPTED else f"stopped by {signal.Signals(code - 128).name}"
        print(f"{how}: waveform closed and statistics so far written", file=sys.stderr)
    for line in unwritten:
        print(f"error: could not write {line} (the other outputs are written; no partial file is left)",
              file=sys.stderr)
    if unwritten and code == EXIT_OK:
        code = EXIT_FAILED
    return code


def cmd_list(args) -> int:
    """Print the model catalogue, or one model's datasheet."""
    _load_models(args.plugin)
    models = catalogue()
    if args.model:
        if args.model not in models:
            close = difflib.get_close_matches(args.model, list(models), n=1)
            raise ArchError(f"no model named '{args.model}'",
                            hint=f"did you mean '{close[0]}'?" if close else "run 'archmodel list' for the catalogue")
        print(models[args.model].documentation())
        return EXIT_OK
    width = max((len(name) for name in models), default=0)
    for name, klass in models.items():
        print(f"{name.ljust(width)}  {klass.summary_line()}")
    return EXIT_OK


def cmd_check(args) -> int:
    """Parse and elaborate a .arch file, reporting every independent error."""
    _load_models(args.plugin)
    if not _is_arch(args.target):
        raise ArchError(f"'{args.target}' is not a .arch file", hint="check takes a .arch file, e.g. topologies/pipeline.arch")
    from .lang import Limits, check_library, is_library

    if args.top is None and not args.param and is_library(args.target):
        # a library: every module on its own, with its defaults, its exposed ports open
        checked = check_library(args.target, limits=Limits(max_instances=args.max_instances),
                                search_path=_import_paths(args))
        print(f"ok: {args.target}: library of {len(checked)} module{'s' if len(checked) != 1 else ''} "
              f"({', '.join(e.top.name for e in checked)})")
        return EXIT_OK
    elaborated, _ = load_arch(args)
    sim = Simulator(elaborated.top, seed=0)
    _check_trace_statements(elaborated, sim)
    print(f"ok: {args.target}: system {elaborated.top.name}, {len(sim.components)} components "
          f"({elaborated.instances} instances), {len(sim.channels)} channels, {len(sim.domains)} "
          f"clock domain{'s' if len(sim.domains) != 1 else ''}")
    return EXIT_OK


def cmd_show(args) -> int:
    """Print the elaborated hierarchy, clocks and instance counts (and a Graphviz file)."""
    _load_models(args.plugin)
    if _is_arch(args.target):
        from .lang import show_text, to_dot

        elaborated, _ = load_arch(args)
        sim = Simulator(elaborated.top, seed=0)
        print(show_text(sim, f"{elaborated.top_module.kind} {elaborated.top_module.name} ({args.target})"))
        if args.dot:
            inputs = list(elaborated.sources.files) + list(args.plugin or [])
            if any(Path(name).is_file() and Path(name).resolve() == Path(args.dot).resolve() for name in inputs):
                raise ArchError(f"--dot {args.dot} would overwrite an input of the system",
                                hint="write the graph somewhere else, e.g. waves/graph.dot")
            check_writable("--dot", Path(args.dot))
            write_whole(Path(args.dot), to_dot(sim))
            print(f"connection graph: {args.dot} (render with: dot -Tsvg {args.dot} -o graph.svg)", file=sys.stderr)
        return EXIT_OK
    top, _ = build_top(args.target, _parse_params(args.param))
    sim = Simulator(top, seed=0)
    counts: dict[str, int] = {}
    for comp in sim.components:
        counts[comp.model_name] = counts.get(comp.model_name, 0) + 1
        depth = comp.path.count(".")
        params = ", ".join(f"{k}={v!r}" for k, v in attrs.asdict(comp.params).items())
        print(f"{'  ' * depth}{comp.name} : {comp.model_name}({params}) @ {comp.domain.name}")
    print()
    print("clocks: " + ", ".join(f"{d.name} {d.period_ps} ps" for d in sim.domains))
    print("instances: " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items())))
    print(f"channels: {len(sim.channels)}")
    return EXIT_OK


def cmd_sweep(args) -> int:
    """Run a system once per point of a design space on Dask workers: a CSV row per point as
    it finishes (resumed on a re-run), a plot, a network's saturation rate."""
    import functools

    from .experiments import Executor, Sweep, parse_axis, parse_fixed, parse_plot
    from .experiments.command import run_command
    from .experiments.points import value_text

    _load_models(args.plugin)
    if _is_arch(args.target):
        target, fixed = args.target, parse_fixed(args.param)
    else:
        target, _ = load_builder(args.target)
        fixed = {key: value_text(value) for key, value in _parse_params(args.param).items()}
    if args.samples is not None and args.zip:
        raise ArchError("--samples draws random points; --zip pairs lists: give one of them")
    mode = "random" if args.samples is not None else "zip" if args.zip else "grid"
    spec = Sweep(target, [parse_axis(text) for text in args.sweep], fixed, mode=mode, samples=args.samples,
                 seed=args.seed, seeds=args.seeds, metrics=tuple(args.metric or ()), top=args.top,
                 until_ps=parse_time(args.until) if args.until else None, cycles=args.cycles,
                 watchdog_cycles=args.watchdog, max_instances=args.max_instances,
                 import_paths=tuple(str(p) for p in _import_paths(args)), prepare=functools.partial(_load_models, list(args.plugin)), extra_inputs=tuple(args.plugin))
    stem = Path(args.target).stem if _is_arch(args.target) else args.target.rpartition(":")[2]
    csv_path = Path(args.csv or Path("waves") / f"{stem}-sweep.csv")
    return run_command(spec, csv_path, plot_spec=parse_plot(args.plot) if args.plot else None,
                       png_path=Path(args.png) if args.png else None,
                       executor=Executor(args.workers, args.scheduler), fresh=args.fresh,
                       retry_failed=args.retry_failed, dry_run=args.dry_run)


def _whole_number(low: int, unit: str, why: str):
    """An argparse type: a whole number of at least ``low`` (``why`` is its docstring)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number{unit}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}{unit}, got {value}")
        return value
    convert.__doc__ = why
    return convert


_seed = _whole_number(0, "", "A random seed: numpy's generators take whole numbers from 0 up only.")
_at_least_one = _whole_number(1, " cycle", "An argument that counts cycles (0 would report a deadlock at the "
                                           "first edge that moves nothing).")


def make_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``archmodel`` command."""
    parser = argparse.ArgumentParser(prog="archmodel", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"archmodel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def arch_options(cmd, builder: bool = True):
        cmd.add_argument("target", help="FILE.arch" + (", or MODULE:FUNCTION / FILE.py:FUNCTION returning the "
                                                       "top component" if builder else ""))
        cmd.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                         help="a parameter of the top (a .arch expression, e.g. -p 'lat=2 ns') or keyword "
                              "argument of the builder (repeatable)")
        cmd.add_argument("--top", metavar="NAME", help="the system or module of the .arch file to build")
        cmd.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                         help="a Python file whose @model classes join the catalogue (repeatable)")
        cmd.add_argument("--import-path", action="append", default=[], metavar="DIR",
                         help="a folder .arch imports may also come from (repeatable; by default "
                              "only the importing file's folder and the bundled library)")
        cmd.add_argument("--max-instances", type=int, default=1_000_000, metavar="N",
                         help="refuse .arch systems of more than N components and channels, those models "
                              "build inside them included (default 1000000, about 2-3 GB)")

    run = sub.add_parser("run", help="simulate a system and print its statistics")
    arch_options(run)
    run.add_argument("--cycles", type=int, help="stop after this many cycles of the top clock")
    run.add_argument("--until", metavar="TIME", help="stop at this simulated time, e.g. 10us")
    run.add_argument("--seed", type=_seed, default=0, help="global random seed, 0 or more (default 0)")
    run.add_argument("--vcd", nargs="?", const="auto", metavar="FILE",
                     help="write a VCD (and a .gtkw beside it); default waves/<top>.vcd")
    run.add_argument("--trace", action="append", metavar="GLOB",
                     help="signals to trace, e.g. 'top.cpu.*' (repeatable; implies --vcd)")
    run.add_argument("--trace-from", metavar="TIME", help="start of the traced time window")
    run.add_argument("--trace-to", metavar="TIME", help="end of the traced time window")
    run.add_argument("--stats", metavar="FILE", help="write statistics and the run manifest as JSON, or as CSV if FILE ends in .csv")
    run.add_argument("--watchdog", type=_at_least_one, default=100_000, metavar="CYCLES",
                     help="report a deadlock after this many cycles without a transfer (default 100000)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show a progress bar (default: when stderr is a terminal)")
    run.add_argument("-q", "--quiet", action="store_true", help="do not print the statistics table")
    run.set_defaults(handler=cmd_run)

    lst = sub.add_parser("list", help="list the model catalogue, or document one model")
    lst.add_argument("model", nargs="?", help="a model name, e.g. Fifo")
    lst.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                     help="a Python file whose @model classes join the catalogue (repeatable)")
    lst.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="print the elaborated hierarchy of a system")
    arch_options(show)
    show.add_argument("--dot", metavar="FILE", help="also write the connection graph for Graphviz (.arch files)")
    show.set_defaults(handler=cmd_show)

    sweep = sub.add_parser("sweep", help="run a system over a grid or random sample of its parameters on Dask "
                                         "workers; a CSV row per point, a plot")
    arch_options(sweep)
    sweep.add_argument("--sweep", action="append", required=True, metavar="NAME=VALUES",
                       help="a parameter to vary: START:STOP:STEP (stop inclusive), LOW:HIGH (with --samples) or "
                            "V1,V2,... (.arch expressions, e.g. 'traffic=\"uniform\",\"transpose\"'); repeatable: a grid")
    sweep.add_argument("--zip", action="store_true", help="pair the i-th values of every --sweep instead of a grid")
    sweep.add_argument("--samples", type=int, metavar="N", help="N random points drawn from the --sweep ranges and lists")
    sweep.add_argument("--seed", type=_seed, default=0,
                       help="simulation seed of every point, and seed of --samples (default 0)")
    sweep.add_argument("--seeds", type=int, default=1, metavar="K", help="run each point with seeds SEED .. SEED+K-1")
    sweep.add_argument("--metric", action="append", metavar="GLOB",
                       help="statistics to keep as columns, e.g. '*.net.packet_latency*' (repeatable; default all)")
    sweep.add_argument("--cycles", type=int, help="stop each run after this many cycles of the top clock")
    sweep.add_argument("--until", metavar="TIME", help="stop each run at this simulated time, e.g. 10us")
    sweep.add_argument("--watchdog", type=_at_least_one, default=100_000, metavar="CYCLES",
                       help="report a deadlock after this many cycles without a transfer (default 100000)")
    sweep.add_argument("--workers", type=int, metavar="N",
                       help="local Dask worker processes (default: the CPU count; 0 runs the points in this process)")
    sweep.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on an existing Dask scheduler (tcp://host:8786, or a scheduler file .json)")
    sweep.add_argument("--csv", metavar="FILE", help="the rows, written as points finish (default "
                                                     "waves/<file or function>-sweep.csv); "
                                                     "points already in it are skipped")
    sweep.add_argument("--fresh", action="store_true", help="replace the CSV instead of resuming it")
    sweep.add_argument("--retry-failed", action="store_true", help="run the points whose rows in the CSV failed again")
    sweep.add_argument("--dry-run", action="store_true", help="list the points and which the CSV holds; run nothing")
    sweep.add_argument("--plot", metavar="SPEC", help="x=COLUMN,y=COLUMN[,hue=COLUMN], or noc[,x=PARAM][,hue=PARAM] for "
                                                      "the latency-throughput figure (the default for a Noc swept over one parameter)")
    sweep.add_argument("--png", metavar="FILE", help="where to draw the plot (default: the CSV path with .png)")
    sweep.set_defaults(handler=cmd_sweep)

    check = sub.add_parser("check", help="parse and elaborate a .arch file, reporting every error found")
    arch_options(check, builder=False)
    check.set_defaults(handler=cmd_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``archmodel`` console script."""
    args = make_parser().parse_args(argv)
    try:
        return args.handler(args)
    except ArchError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SimulationError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. `| head`) has gone; stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
