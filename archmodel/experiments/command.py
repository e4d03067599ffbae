"""``archmodel sweep`` as the terminal shows it: a line per finished point, a summary, the
plot, the saturation rates of a network, and the exit code.

Exit codes as ``archmodel run``'s: 0 every point ran, 1 some point failed (its row says how),
130 interrupted by Ctrl-C (143 SIGTERM, 129 SIGHUP), with the finished points in the CSV.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from pathlib import Path

from ..kernel import ArchError
from ..outputs import check_writable
from .execution import Executor
from .plots import NOC_FIGURES, PlotSpec, check_plot, plot
from .results import ResultsFile
from .runner import FAILED
from .sweep import Sweep

EXIT_OK, EXIT_FAILED = 0, 1


class _Stopped:
    """Which signal stopped the sweep (SIGINT by default: a KeyboardInterrupt)."""

    signal_number = signal.SIGINT


@contextlib.contextmanager
def _terminate_as_interrupt(stopped: _Stopped):
    """SIGTERM and SIGHUP (batch schedulers, a closed terminal) stop the sweep as Ctrl-C does,
    so the CSV is left complete and the local workers are ended; one the sweep was started
    with ignored (SIGHUP under ``nohup``) stays ignored, as SIGINT does."""
    names = [n for n in ("SIGTERM", "SIGHUP")
             if hasattr(signal, n) and signal.getsignal(getattr(signal, n)) is not signal.SIG_IGN]
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        stopped.signal_number = signum
        raise KeyboardInterrupt

    previous = {n: signal.signal(getattr(signal, n), interrupt) for n in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def _first_line(text) -> str:
    """The line of a message a progress line shows: the first, or a traceback's last."""
    lines = str(text or "").strip().splitlines()
    return lines[-1] if lines and lines[0].startswith("Traceback") else (lines[0] if lines else "")


def _check_outputs(inputs: list, outputs: list) -> None:
    """No output may replace an input of the sweep (its .arch files, plugins), and each can
    be written (checked before any point runs)."""
    read = {Path(name).resolve(): name for name in inputs}
    for what, path in outputs:
        if Path(path).resolve() in read:
            raise ArchError(f"{what} {path} would overwrite the input {read[Path(path).resolve()]}",
                            hint="write the outputs somewhere else, e.g. waves/")
        check_writable(what, Path(path))


def _list_points(plan, csv_path: Path, fresh: bool, retry_failed: bool, out) -> int:
    """``--dry-run``: each point and whether the CSV holds it already."""
    done = ResultsFile(csv_path, plan.names, fresh=fresh).done(retry_failed, FAILED)
    sha = plan.study.input_sha256
    for point in plan.points:
        params = " ".join(f"{name}={value}" for name, value in point.values.items())
        print(f"{params} seed={point.seed}: {'in the CSV' if point.key(sha) in done else 'to run'}", file=out)
    waiting = sum(point.key(sha) not in done for point in plan.points)
    print(f"{len(plan.points)} points, {waiting} to run", file=out)
    return EXIT_OK


def run_command(spec: Sweep, csv_path: Path, *, plot_spec: PlotSpec | None, png_path: Path | None,
                executor: Executor, fresh: bool = False, retry_failed: bool = False, dry_run: bool = False,
                out=None, err=None) -> int:
    """Check and run the sweep, print a line per finished point (to ``out``, default stdout)
    and a summary (to ``err``, default stderr), draw the plot (the latency-throughput figure
    by default for a network swept over one parameter). ``dry_run`` lists the points and
    which of them the CSV already holds, and runs nothing."""
    out, err = out or sys.stdout, err or sys.stderr
    plan = spec.plan()
    _check_outputs(plan.inputs, [("--csv", csv_path)] + ([("--png", png_path)] if png_path else []))
    axes = [axis.name for axis in spec.axes]
    if dry_run:
        return _list_points(plan, csv_path, fresh, retry_failed, out)
    if plot_spec is None and plan.noc is not None and len(axes) == 1:
        # the latency-throughput figure by default, where --metric kept what it draws
        if all(f"{plan.noc}.{figure}" in plan.columns for figure in NOC_FIGURES):
            plot_spec = PlotSpec("noc")
    if plot_spec is not None:
        plot_spec = check_plot(plot_spec, plan.names, axes, plan.columns, plan.noc)
    target = spec.target if isinstance(spec.target, str) else getattr(spec.target, "__name__", "builder")
    print(f"sweep of {target}: {len(plan.points)} points on {executor.describe()}, rows to {csv_path}", file=err)
    width = len(str(len(plan.points)))

    def show(row, finished, total):
        params = " ".join(f"{n}={row.get(n)}" for n in axes)
        seed = f" seed={row['seed']}" if spec.seeds > 1 else ""
        line = f"[{finished:>{width}}/{total}] {params}{seed}: {row['outcome']}"
        if row.get("wall_s") is not None:
            line += f" in {row['wall_s']:.2f} s"
        if row.get("message"):
            line += f": {_first_line(row['message'])}"
        if finished < total:
            left = (time.perf_counter() - started) / finished * (total - finished)
            line += f" (about {left:.0f} s left)"
        print(line, file=out, flush=True)

    stopped = _Stopped()
    started = time.perf_counter()
    with _terminate_as_interrupt(stopped):
        result = spec.run(csv_path, executor=executor, fresh=fresh, retry_failed=retry_failed, on_row=show, plan=plan)
    rate = result.ran / result.wall_s if result.wall_s > 0 and result.ran else 0.0
    failed = result.failed
    kinds = sorted({r["outcome"] for r in failed})
    summary = (f"{len(result.rows)} of {len(plan.points)} points in {csv_path}: {result.ran} run now "
               f"({result.wall_s:.1f} s, {rate:.2f} points/s), {result.skipped} already there")
    if failed:
        summary += f"; {len(failed)} failed (" + ", ".join(f"{k} {sum(r['outcome'] == k for r in failed)}" for k in kinds) + ")"
    print(summary, file=err)
    if result.interrupted:
        how = "interrupted" if stopped.signal_number == signal.SIGINT else f"stopped by {signal.Signals(stopped.signal_number).name}"
        print(f"{how}: the CSV holds the finished points; run the same command again to resume", file=err)
        return 128 + int(stopped.signal_number)
    if plot_spec is not None:
        png_path = png_path or csv_path.with_suffix(".png")
        title = f"{Path(target).stem if isinstance(spec.target, str) else target}: sweep of {', '.join(axes)}"
        saturation = plot(result.rows, plot_spec, png_path, axes, title)
        for hue, (zero, rate) in saturation.items():
            which = f"{plot_spec.hue}={hue}: " if plot_spec.hue else ""
            reached = f"{rate:.4g}" if rate is not None else "not reached"
            print(f"{which}saturation (latency 2 x {zero:.1f} cycles): {reached}", file=out)
        print(f"plot: {png_path}", file=err)
    return EXIT_FAILED if failed else EXIT_OK
