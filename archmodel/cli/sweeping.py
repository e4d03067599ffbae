"""``archmodel sweep``: the command-line face of :mod:`archmodel.experiments`."""

from __future__ import annotations

from pathlib import Path

from ..kernel import ArchError, parse_time
from .targets import import_paths, is_arch, load_builder, load_models, parse_params


def cmd_sweep(args) -> int:
    """Run a system once per point of a design space on Dask workers: a CSV row per point as
    it finishes (resumed on a re-run), a plot, a network's saturation rate."""
    import functools

    from ..experiments import Executor, Sweep, parse_axis, parse_plot
    from ..experiments.command import run_command
    from ..experiments.points import value_text
    from ..lang import parse_overrides

    load_models(args.plugin)
    if is_arch(args.target):
        target, fixed = args.target, parse_overrides(args.param)
    else:
        target, _ = load_builder(args.target)
        fixed = {key: value_text(value) for key, value in parse_params(args.param).items()}
    if args.samples is not None and args.zip:
        raise ArchError("--samples draws random points; --zip pairs lists: give one of them")
    mode = "random" if args.samples is not None else "zip" if args.zip else "grid"
    spec = Sweep(target, [parse_axis(text) for text in args.sweep], fixed, mode=mode, samples=args.samples,
                 seed=args.seed, seeds=args.seeds, metrics=tuple(args.metric or ()), top=args.top,
                 until_ps=parse_time(args.until) if args.until else None, cycles=args.cycles,
                 watchdog_cycles=args.watchdog, max_instances=args.max_instances,
                 import_paths=tuple(str(p) for p in import_paths(args)),
                 prepare=functools.partial(load_models, list(args.plugin)), extra_inputs=tuple(args.plugin))
    stem = Path(args.target).stem if is_arch(args.target) else args.target.rpartition(":")[2]
    csv_path = Path(args.csv or Path("waves") / f"{stem}-sweep.csv")
    return run_command(spec, csv_path, plot_spec=parse_plot(args.plot) if args.plot else None,
                       png_path=Path(args.png) if args.png else None,
                       executor=Executor(args.workers, args.scheduler), fresh=args.fresh,
                       retry_failed=args.retry_failed, dry_run=args.dry_run)

