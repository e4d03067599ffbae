"""``archmodel run``: simulate a system, print and write its statistics and a waveform, stop
cleanly on a signal, and say how the run ended."""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
import traceback
from pathlib import Path

import attrs

from .. import __version__
from ..kernel import (ArchError, RunResult, SimulationError, Simulator, format_time, parse_time, stats_csv, stats_dict,
                      stats_table)
from ..kernel.partition import Declined, adopt, run_partitioned, split
from ..kernel.time import HZ_PER
from ..outputs import check_writable, write_whole
from .codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNSTABLE
from .targets import build_top, check_trace_statements, file_hash, is_arch, load_arch, load_models, parse_params


def _resolved_params(sim: Simulator) -> dict:
    return {c.path: attrs.asdict(c.params) for c in sim.components if attrs.asdict(c.params)}


def _instability(sim: Simulator) -> str:
    """Why a network measurement was unstable, under the rule its Noc applied."""
    from ..models.network import Noc

    for noc in (c for c in sim.top.walk() if isinstance(c, Noc)):
        meas = noc.measurement
        if meas is not None and meas.latency_unstable and meas.exceeded_ps is not None:
            return (f"the running average packet latency passed {noc.latency_threshold} cycles at "
                    f"{format_time(meas.exceeded_ps)} (BookSim's rule; stability = \"drain\" waits for the "
                    "drain limit instead)")
    return "packets created in the window did not all arrive before the drain limit"


def _manifest(args, sim: Simulator, source: str | None, build_params: dict, outcome: str,
              files_read: dict[str, str | None]) -> dict:
    return {
        "archmodel_version": __version__,
        "target": args.target,
        "input_file": source,
        "input_sha256": file_hash(source),
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
    at once, as usual. One the process was started with ignored (``nohup``) stays ignored.
    ``signal_number`` is the one that came (None while none did)."""

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
        return 128 + int(self.signal_number or 0)

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
                # a signal the run was started with ignored stays ignored: ``nohup`` ignores
                # SIGHUP so a closed terminal does not stop the run, and a background job of a
                # non-interactive shell ignores SIGINT (Python's own convention for SIGINT)
                if signal.getsignal(number) is not signal.SIG_IGN:
                    self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        self._restore()


def _run(sim: Simulator, until_ps: int | None, cycles: int | None, show_progress: bool):
    """Run to ``until_ps`` or ``cycles`` of the top's clock (or until done, or a stop signal):
    in one call, or, with a progress bar, in slices the bar follows. Every slice makes a model
    that computes ahead stop its batch and settle, so only the bar pays for them."""
    if not show_progress:
        return sim.run(until_ps=until_ps, cycles=cycles)
    from tqdm import tqdm

    limit_ps = sim.limit_of(until_ps, cycles)
    slice_ps = 10_000 * sim.top.domain.period_ps
    with tqdm(total=limit_ps, unit="ps", unit_scale=True, dynamic_ncols=True, file=sys.stderr,
              desc="simulated", leave=False) as bar:
        while True:
            # a slice covers at least the next event, so a long quiet stretch (a link of 10^12
            # cycles, a trace line far ahead) is one step, not billions of empty slices
            end = max(sim.now + slice_ps, sim.next_event_ps() or 0)
            end = end if limit_ps is None else min(end, limit_ps)
            result = sim.run(until_ps=end)
            bar.update(sim.now - bar.n)
            bar.set_postfix_str(format_time(sim.now))
            if sim.stopped is not None or result.reason != "limit" or end == limit_ps:
                return result


def _run_split(sim: Simulator, until_ps: int | None, cycles: int | None, show_progress: bool, processes: int,
               watchdog: int) -> RunResult | None:
    """Run the top's parts in up to ``processes`` processes (:mod:`archmodel.kernel.partition`)
    and give ``sim`` their end and statistics; None (``sim`` untouched) when the system does
    not split, or the parts turned out not to be independent (said on stderr)."""
    partitions = split(sim.top, processes)
    if len(partitions) < 2:
        return None
    limit_ps = sim.limit_of(until_ps, cycles)

    def make_simulator(top, partition):
        return Simulator(top, seed=sim.seed, watchdog_cycles=watchdog, progress=False, partition=partition)

    bar = None
    if show_progress:
        from tqdm import tqdm

        bar = tqdm(total=limit_ps, unit="ps", unit_scale=True, dynamic_ncols=True, file=sys.stderr,
                   desc=f"simulated ({len(partitions)} processes)", leave=False)

    def on_progress(reached_ps: int) -> None:
        if bar is not None and reached_ps > bar.n:
            bar.update(reached_ps - bar.n)
            bar.set_postfix_str(format_time(reached_ps))

    try:
        run = run_partitioned(sim.top, partitions, make_simulator, limit_ps, on_progress)
    finally:
        if bar is not None:
            bar.close()
    if isinstance(run, Declined):
        print(f"note: running in one process instead: {run.why}", file=sys.stderr, flush=True)
        return None
    adopt(sim, run)
    return RunResult("limit" if run.reason == "limit" else "stopped", sim.now, sim.ticks)


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
    written: dict[Path, str] = {}
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


def _summary(sim: Simulator, outcome: str, wall: float) -> str:
    """How the run ended, and how fast it went in cycles of the top's clock: the figure that
    means the same whether the models ticked each cycle or a compiled loop ran them all in
    a few ticks (component ticks are given too, for a model author)."""
    clock = sim.top.domain
    cycles = clock.cycle_of(sim.now) + 1 if sim.ticks else 0
    rate = f"{cycles / wall:,.0f}" if wall > 0 else "-"
    hz = clock.frequency_hz
    unit = next(u for u in ("GHz", "MHz", "kHz", "Hz") if hz >= HZ_PER[u] or u == "Hz")
    return (f"{outcome} at {format_time(sim.now)}: {cycles:,} cycles of {clock.name} ({hz / HZ_PER[unit]:.6g} {unit}) "
            f"in {wall:.2f} s wall, {rate} cycles/s, {sim.ticks:,} component ticks")


def cmd_run(args) -> int:
    """Simulate a system; print and write its statistics, and a VCD if asked."""
    load_models(args.plugin)
    traces = list(args.trace or [])
    if is_arch(args.target):
        elaborated, build_params = load_arch(args)
        top, source = elaborated.top, args.target
        if not traces:
            traces = elaborated.traces
    else:
        build_params = parse_params(args.param)
        top, source = build_top(args.target, build_params)
    show_progress = args.progress if args.progress is not None else sys.stderr.isatty()
    sim = Simulator(top, seed=args.seed, watchdog_cycles=args.watchdog, progress=show_progress)
    if is_arch(args.target) and not args.trace:
        check_trace_statements(elaborated, sim)
    until_ps = parse_time(args.until) if args.until is not None else None
    tracer = None
    vcd_path = args.vcd
    if vcd_path is None and traces:
        vcd_path = "auto"
    if vcd_path == "auto":
        vcd_path = str(Path("waves") / f"{top.name}.vcd")
    inputs = list(elaborated.sources.files) if is_arch(args.target) else []
    # every file the run read, with its SHA-256: the .arch files as read, the builder, plugins
    files_read = dict(elaborated.sources.digests) if is_arch(args.target) else {source: file_hash(source)}
    files_read.update({plugin: file_hash(plugin) for plugin in args.plugin or []})
    _check_outputs(inputs + list(args.plugin or []), vcd_path, args.stats)
    if vcd_path is not None:
        from ..trace import VcdTracer

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
    outcome, code, failure = "finished", EXIT_OK, None
    started = time.perf_counter()
    splitting = False  # parts run in other processes: interrupted then, their statistics are lost
    try:
        result = None
        if args.processes > 1 and tracer is not None:
            print("note: running in one process: a waveform is written by one", file=sys.stderr)
        elif args.processes > 1:
            splitting = True
            result = _run_split(sim, until_ps, args.cycles, show_progress, args.processes, args.watchdog)
            splitting = False
        with _StopSignals(sim) as stop_signals:
            if result is None:
                result = _run(sim, until_ps, args.cycles, show_progress)
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
        if splitting:
            print("interrupted: the parts run in other processes are stopped; no statistics are written",
                  file=sys.stderr)
            return code
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
    from ..experiments.hierarchy import report_outputs  # clusters in a memory tree: roll-ups, roofline

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
    print(_summary(sim, outcome, wall), file=sys.stderr)
    if tracer is not None and not any(line.startswith("--vcd") for line in unwritten):
        print(f"waveform: {vcd_path} (open with: gtkwave {Path(vcd_path).with_suffix('.gtkw')})", file=sys.stderr)
    if failure:
        print(failure, file=sys.stderr)
    if code == EXIT_UNSTABLE:
        print(f"error: the measurement is unstable: {_instability(sim)} (the offered load is past "
              "saturation); its figures are not a steady state", file=sys.stderr)
    if outcome == "interrupted":
        how = "interrupted" if code == EXIT_INTERRUPTED else f"stopped by {signal.Signals(code - 128).name}"
        kept = "waveform closed and statistics so far written" if tracer is not None else "statistics so far written"
        print(f"{how}: {kept}", file=sys.stderr)
    for line in unwritten:
        print(f"error: could not write {line} (the other outputs are written; no partial file is left)",
              file=sys.stderr)
    if unwritten and code == EXIT_OK:
        code = EXIT_FAILED
    return code


