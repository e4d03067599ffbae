"""The benchmark designs in Amaranth 0.5, run inside the Amaranth virtual environment.

``python amaranth_designs.py DESIGN SIZE CYCLES [VCD_PATH]`` builds ``chain`` (a counter
register followed by SIZE-1 stages computing r[i] <= r[i-1] + 1, one elaboratable each) or
``ring`` (SIZE two-entry valid/ready queues in a ring, a token in every other queue),
simulates CYCLES clock cycles with Amaranth's Python simulator (optionally writing a VCD)
and prints one JSON object: elaboration and run time, cycles and a check value.
benchmarks/engine.py builds the same designs in archmodel and compares.
"""

import json
import os
import sys
import time
from contextlib import nullcontext

from amaranth.hdl import Elaboratable, Module, Mux, Signal
from amaranth.sim import Simulator

PERIOD_S = 1e-6


class Counter(Elaboratable):
    """The head of the chain: a free-running 32-bit counter."""

    def __init__(self):
        self.out = Signal(32)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.out.eq(self.out + 1)
        return m


class PlusOne(Elaboratable):
    """One chain stage: a register loaded with its upstream register plus one."""

    def __init__(self):
        self.inp = Signal(32)
        self.out = Signal(32)

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.out.eq(self.inp + 1)
        return m


class Chain(Elaboratable):
    """A counter followed by ``size - 1`` plus-one stages."""

    def __init__(self, size):
        self.head = Counter()
        self.stages = [PlusOne() for _ in range(size - 1)]
        self.last = self.stages[-1].out if self.stages else self.head.out

    def elaborate(self, platform):
        m = Module()
        m.submodules.head = self.head
        previous = self.head.out
        for i, stage in enumerate(self.stages):
            m.submodules[f"stage{i + 1}"] = stage
            m.d.comb += stage.inp.eq(previous)
            previous = stage.out
        return m


class Queue2(Elaboratable):
    """A two-entry valid/ready queue; ``token`` >= 0 makes it start holding that token."""

    def __init__(self, token=-1):
        self.enq_valid = Signal()
        self.enq_ready = Signal()
        self.enq_data = Signal(16)
        self.deq_valid = Signal()
        self.deq_ready = Signal()
        self.deq_data = Signal(16)
        self.count = Signal(2, init=1 if token >= 0 else 0)
        self.head = Signal()
        self.entry0 = Signal(16, init=max(token, 0))
        self.entry1 = Signal(16)

    def elaborate(self, platform):
        m = Module()
        enq = self.enq_valid & self.enq_ready
        deq = self.deq_valid & self.deq_ready
        m.d.comb += [
            self.deq_valid.eq(self.count != 0),
            self.enq_ready.eq(self.count != 2),
            self.deq_data.eq(Mux(self.head, self.entry1, self.entry0)),
        ]
        with m.If(enq):
            with m.If(self.head ^ self.count[0]):
                m.d.sync += self.entry1.eq(self.enq_data)
            with m.Else():
                m.d.sync += self.entry0.eq(self.enq_data)
        with m.If(deq):
            m.d.sync += self.head.eq(~self.head)
        m.d.sync += self.count.eq(self.count + enq - deq)
        return m


class Ring(Elaboratable):
    """``size`` queues in a ring, a token in every other queue."""

    def __init__(self, size):
        self.queues = [Queue2(token=i if i % 2 == 0 else -1) for i in range(size)]

    def elaborate(self, platform):
        m = Module()
        size = len(self.queues)
        for i, queue in enumerate(self.queues):
            m.submodules[f"q{i}"] = queue
            nxt = self.queues[(i + 1) % size]
            m.d.comb += [nxt.enq_valid.eq(queue.deq_valid), nxt.enq_data.eq(queue.deq_data),
                         queue.deq_ready.eq(nxt.enq_ready)]
        return m


def main(argv):
    design, size, cycles = argv[1], int(argv[2]), int(argv[3])
    vcd = argv[4] if len(argv) > 4 else None
    start = time.perf_counter()
    top = Chain(size) if design == "chain" else Ring(size)
    sim = Simulator(top)
    sim.add_clock(PERIOD_S)
    check = None

    async def observe(ctx):
        # Sleeps through the run (no per-cycle work), then reads the check value.
        nonlocal check
        await ctx.delay(PERIOD_S * cycles)
        if design == "chain":
            check = ctx.get(top.last)
        else:
            check = sum(ctx.get(queue.count) for queue in top.queues)

    sim.add_testbench(observe)
    with (sim.write_vcd(vcd) if vcd else nullcontext()):
        # The first step compiles the design: count it as elaboration.
        sim.run_until(0)
        elaborated = time.perf_counter()
        sim.run()
        finished = time.perf_counter()
    print(json.dumps({"elab_s": elaborated - start, "run_s": finished - elaborated, "cycles": cycles,
                      "check": check, "vcd_bytes": os.path.getsize(vcd) if vcd else None}))


if __name__ == "__main__":
    main(sys.argv)
