"""What a VCD costs: the same run untraced, fully traced and with one component selected.

Run ``python benchmarks/vcd_overhead.py [components cycles repeats]`` (prints a table; CPU seconds, best of several repetitions, because
machines are noisy). Two register-heavy designs: ``lfsr`` changes every register at every
edge (the worst case for a tracer), ``counters`` is closer to real models (a few registers
change per edge, most keep their value).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from archmodel.kernel import ClockDomain, Component, Simulator, model
from archmodel.trace import VcdTracer


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
    top = Component("top", clock=ClockDomain("clk", 1000))
    for index in range(count):
        kind(f"u{index}", top)
    return top


def timed(kind: type, count: int, cycles: int, select, directory: Path) -> float:
    sim = Simulator(build(kind, count))
    started = time.process_time()
    if select is None:
        sim.run(cycles=cycles)
    else:
        with VcdTracer(directory / "overhead.vcd", select=select, gtkw=False) as tracer:
            sim.add_observer(tracer)
            sim.run(cycles=cycles)
    return time.process_time() - started


def main(count: int = 100, cycles: int = 2000, repeats: int = 5) -> None:
    print(f"{count} components x {cycles} cycles, best of {repeats}")
    print(f"{'design':10} {'untraced s':>10} {'all s':>8} {'ratio':>6} {'one s':>8} {'ratio':>6} {'VCD MB':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for name, kind in (("lfsr", LfsrPipe), ("counters", CounterBank)):
            best = {}
            for _ in range(repeats):
                for mode, select in (("off", None), ("all", ("*",)), ("one", ("top.u1.*",))):
                    seconds = timed(kind, count, cycles, select, directory)
                    best[mode] = min(best.get(mode, float("inf")), seconds)
                    if mode == "all":
                        size = (directory / "overhead.vcd").stat().st_size / 1e6
            print(f"{name:10} {best['off']:10.3f} {best['all']:8.3f} {best['all'] / best['off']:6.2f} "
                  f"{best['one']:8.3f} {best['one'] / best['off']:6.2f} {size:7.1f}")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
