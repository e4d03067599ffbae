"""What a VCD costs: each design run untraced and fully traced (some also with one component
selected), in CPU seconds, best of several repetitions, because machines are noisy.

Designs: ``lfsr`` changes every register at every edge (the worst case for registers),
``counters`` is closer to real models (a few registers change per edge, most keep their
value); the register chains and queue rings of ``benchmarks/engine.py`` (a pipeline of 17,
a chain of 1024; rings of 64 and 1024 minimal queues and library Fifos), where every channel
is used at nearly every edge.

Usage: ``python benchmarks/vcd_overhead.py [components cycles repeats] [--baseline PATH] [--quick]
[--only DESIGN,...]``.
``--baseline`` measures a second archmodel (a checkout or worktree, e.g. of ``main``) in the
same run, round by round in turn with this one, and prints both side by side: before and
after a change, on the same machine at the same time; ``--only`` measures the designs named
(``lfsr,ring 1024 Fifo``) and leaves the others out. This is a benchmark, not a test: it
prints a table and exits 0 whatever it measures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # engine.py's designs, when imported from elsewhere

from archmodel.kernel import ClockDomain, Component, Simulator, model  # noqa: E402
from archmodel.trace import VcdTracer  # noqa: E402

# register- or queue-cycles per run of the engine designs (label, design, size, queue model)
ENGINE_WORK = {"full": 1_000_000, "quick": 100_000}
ENGINE_DESIGNS = [
    ("pipeline 17", "chain", 17, None),
    ("chain 1024", "chain", 1024, None),
    ("ring 64 RingQueue", "ring", 64, "RingQueue"),
    ("ring 1024 RingQueue", "ring", 1024, "RingQueue"),
    ("ring 64 Fifo", "ring", 64, "Fifo"),
    ("ring 1024 Fifo", "ring", 1024, "Fifo"),
]


@model(catalogue=False)
class LfsrPipe(Component):
    """A 16-bit LFSR feeding a 4-stage pipeline, a valid bit and a state string."""

    def setup(self):
        self.lfsr = self.register("lfsr", 0xACE1 + len(self.path), width=16)
        self.stages = [self.register(f"s{i}", 0, width=16) for i in range(4)]
        self.valid = self.register("valid", False)
        self.state = self.register("state", "idle")

    def tick(self):
        x = self.lfsr.value
        bit = (x ^ (x >> 2) ^ (x >> 3) ^ (x >> 5)) & 1
        self.lfsr.set((x >> 1) | (bit << 15))
        previous = x
        for stage in self.stages:
            stage.set(previous)
            previous = stage.value
        self.valid.set(bool(x & 1))
        if x & 0xF == 0:
            self.state.set("busy" if self.state.value == "idle" else "idle")


@model(catalogue=False)
class CounterBank(Component):
    """A 32-bit cycle counter, an 8-bit wrap counter, a flag and a mode that rarely changes."""

    def setup(self):
        self.cycles = self.register("cycles", 0)
        self.wraps = self.register("wraps", 0, width=8)
        self.full = self.register("full", False)
        self.mode = self.register("mode", "run")

    def tick(self):
        cycles = self.cycles.value + 1
        self.cycles.set(cycles)
        self.wraps.set((cycles >> 4) & 0xFF)
        self.full.set(cycles & 0xF == 0xF)
        self.mode.set("run" if cycles % 1000 else "drain")


def build(kind: type, count: int) -> Component:
    """``count`` instances of ``kind`` under one top."""
    top = Component("top", clock=ClockDomain("clk", 1000))
    for index in range(count):
        kind(f"u{index}", top)
    return top


def timed(top: Component, cycles: int, select, directory: Path) -> tuple[float, int]:
    """CPU seconds of one run of ``top`` (traced if ``select`` is given) and the VCD's size."""
    sim = Simulator(top)
    path = directory / "overhead.vcd"
    started = time.process_time()
    if select is None:
        sim.run(cycles=cycles)
        return time.process_time() - started, 0
    with VcdTracer(path, select=select, gtkw=False) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=cycles)
    return time.process_time() - started, path.stat().st_size


def cases(count: int, cycles: int, quick: bool, only: Sequence[str] | None = None):
    """(label, make the top, cycles, selections to measure) of every design (of those named
    in ``only``, if given)."""
    import engine

    modes = {"off": None, "all": ("*",)}
    for name, kind in (("lfsr", LfsrPipe), ("counters", CounterBank)):
        if only is None or name in only:
            yield name, (lambda kind=kind: build(kind, count)), cycles, {**modes, "one": ("top.u1.*",)}
    work = ENGINE_WORK["quick" if quick else "full"]
    for label, design, size, queue_model in ENGINE_DESIGNS:
        if queue_model == "Fifo" and engine.library_fifo() is None or only is not None and label not in only:
            continue
        yield label, (lambda design=design, size=size, queue_model=queue_model:
                      engine.build(design, size, queue_model or "Fifo")), max(20, work // size), modes


def measure(count: int, cycles: int, repeats: int, quick: bool, only: Sequence[str] | None = None) -> dict:
    """Best CPU seconds per design and mode, and the fully traced VCD's size."""
    best: dict = {}
    with tempfile.TemporaryDirectory(prefix="archmodel-vcd-") as tmp:
        directory = Path(tmp)
        for label, make, run_cycles, modes in cases(count, cycles, quick, only):
            row = best.setdefault(label, {"cycles": run_cycles})
            for _ in range(repeats):
                for mode, select in modes.items():
                    seconds, size = timed(make(), run_cycles, select, directory)
                    row[mode] = min(row.get(mode, float("inf")), seconds)
                    if mode == "all":
                        row["vcd_bytes"] = size
    return best


def run_worker(archmodel_root: Path, args) -> dict:
    """One round of :func:`measure` in a fresh interpreter importing archmodel from ``archmodel_root``."""
    env = dict(os.environ, PYTHONPATH=str(archmodel_root))
    command = [sys.executable, str(Path(__file__).resolve()), str(args.components), str(args.cycles), "1",
               "--worker"] + (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def merge(into: dict, measured: dict) -> None:
    for label, row in measured.items():
        kept = into.setdefault(label, dict(row))
        for mode, value in row.items():
            if mode in ("off", "all", "one"):
                kept[mode] = min(kept[mode], value)


def ratio(row: dict, mode: str) -> str:
    return f"{row[mode] / row['off']:.2f}x" if mode in row and row["off"] else "-"


def table(results: dict[str, dict]) -> str:
    """One line per design and archmodel measured: CPU seconds and traced/untraced ratios."""
    header = ["design", "archmodel", "cycles", "untraced s", "traced s", "ratio", "one s", "ratio", "VCD MB"]
    lines = [header]
    labels = list(next(iter(results.values())))
    for label in labels:
        for name, best in results.items():
            row = best[label]
            lines.append([label, name, str(row["cycles"]), f"{row['off']:.3f}", f"{row['all']:.3f}", ratio(row, "all"),
                          f"{row['one']:.3f}" if "one" in row else "-", ratio(row, "one"),
                          f"{row['vcd_bytes'] / 1e6:.1f}"])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    out = []
    for n, line in enumerate(lines):
        out.append("  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i])
                             for i, cell in enumerate(line)).rstrip())
        if n == 0:
            out.append("  ".join("-" * w for w in widths))
    out.append("")
    out.append("CPU seconds, best of the repetitions; ratio: traced over untraced (\"one\": one component")
    out.append("of lfsr or counters selected). The target is a VCD of everything at most 2x.")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("components", type=int, nargs="?", default=100, help="instances of lfsr and counters")
    parser.add_argument("cycles", type=int, nargs="?", default=2000, help="cycles of lfsr and counters")
    parser.add_argument("repeats", type=int, nargs="?", default=5, help="repetitions; the best is kept")
    parser.add_argument("--baseline", type=Path, metavar="PATH",
                        help="another archmodel checkout to measure in turn with this one")
    parser.add_argument("--quick", action="store_true", help="a tenth of the work on the engine designs")
    parser.add_argument("--only", metavar="DESIGN,...", help="measure only these designs (comma-separated labels)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    only = None if args.only is None else [label.strip() for label in args.only.split(",")]
    if args.worker:
        print(json.dumps(measure(args.components, args.cycles, args.repeats, args.quick, only)))
        return 0
    print(f"lfsr, counters: {args.components} components x {args.cycles} cycles; best of {args.repeats}")
    if args.baseline is None:
        results = {"this": measure(args.components, args.cycles, args.repeats, args.quick, only)}
    else:
        roots = {"this": HERE.parent, "baseline": args.baseline.resolve()}
        results = {name: {} for name in roots}
        for _ in range(args.repeats):
            for name, root in roots.items():
                merge(results[name], run_worker(root, args))
        print(f"this: {roots['this']}, baseline: {roots['baseline']}; one interpreter per round, in turn")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
