"""The benchmark designs in PyMTL3, run inside the PyMTL3 virtual environment.

``python pymtl3_designs.py DESIGN SIZE CYCLES [VCD_PATH]`` builds ``chain`` (a counter
register followed by SIZE-1 stages computing r[i] <= r[i-1] + 1, one component each) or
``ring`` (SIZE two-entry valid/ready queues in a ring, a token in every other queue),
simulates CYCLES clock cycles with PyMTL3's default pure-Python simulator (optionally
writing a VCD) and prints one JSON object: elaboration and run time, cycles and a check
value. benchmarks/engine.py builds the same designs in archmodel and compares.
"""

import json
import os
import sys
import time

from pymtl3 import (Bits1, Bits2, Bits16, Bits32, Component, DefaultPassGroup, InPort, OutPort,
                    Wire, update, update_ff, zext)


class Counter(Component):
    """The head of the chain: a free-running 32-bit counter."""

    def construct(s):
        s.out = OutPort(Bits32)

        @update_ff
        def count():
            if s.reset:
                s.out <<= 0
            else:
                s.out <<= s.out + 1


class PlusOne(Component):
    """One chain stage: a register loaded with its upstream register plus one."""

    def construct(s):
        s.inp = InPort(Bits32)
        s.out = OutPort(Bits32)

        @update_ff
        def stage():
            if s.reset:
                s.out <<= 0
            else:
                s.out <<= s.inp + 1


class Chain(Component):
    """A counter followed by ``size - 1`` plus-one stages."""

    def construct(s, size):
        s.head = Counter()
        s.stages = [PlusOne() for _ in range(size - 1)]
        previous = s.head.out
        for stage in s.stages:
            stage.inp //= previous
            previous = stage.out
        s.last = OutPort(Bits32)
        s.last //= previous


class Queue2(Component):
    """A two-entry valid/ready queue; ``token`` >= 0 makes it start holding that token."""

    def construct(s, token=-1):
        s.enq_val = InPort(Bits1)
        s.enq_rdy = OutPort(Bits1)
        s.enq_msg = InPort(Bits16)
        s.deq_val = OutPort(Bits1)
        s.deq_rdy = InPort(Bits1)
        s.deq_msg = OutPort(Bits16)
        s.count = Wire(Bits2)
        s.head = Wire(Bits1)
        s.entry0 = Wire(Bits16)
        s.entry1 = Wire(Bits16)
        start_count = Bits2(1 if token >= 0 else 0)
        start_token = Bits16(max(token, 0))

        @update
        def handshake():
            s.deq_val @= s.count != 0
            s.enq_rdy @= s.count != 2
            s.deq_msg @= s.entry1 if s.head else s.entry0

        @update_ff
        def state():
            if s.reset:
                s.count <<= start_count
                s.head <<= 0
                s.entry0 <<= start_token
                s.entry1 <<= 0
            else:
                enq = s.enq_val & s.enq_rdy
                deq = s.deq_val & s.deq_rdy
                if enq:
                    if s.head ^ s.count[0]:
                        s.entry1 <<= s.enq_msg
                    else:
                        s.entry0 <<= s.enq_msg
                if deq:
                    s.head <<= ~s.head
                s.count <<= s.count + zext(enq, 2) - zext(deq, 2)


class Ring(Component):
    """``size`` queues in a ring, a token in every other queue."""

    def construct(s, size):
        s.queues = [Queue2(token=i if i % 2 == 0 else -1) for i in range(size)]
        for i in range(size):
            src, dst = s.queues[i], s.queues[(i + 1) % size]
            dst.enq_val //= src.deq_val
            dst.enq_msg //= src.deq_msg
            src.deq_rdy //= dst.enq_rdy


def main(argv):
    design, size, cycles = argv[1], int(argv[2]), int(argv[3])
    vcd = argv[4] if len(argv) > 4 else None
    start = time.perf_counter()
    top = Chain(size) if design == "chain" else Ring(size)
    top.elaborate()
    if vcd:
        # PyMTL3 appends ".vcd" to the name it is given.
        top.apply(DefaultPassGroup(vcdwave=vcd[:-4] if vcd.endswith(".vcd") else vcd))
    else:
        top.apply(DefaultPassGroup())
    top.sim_reset()
    elaborated = time.perf_counter()
    tick = top.sim_tick
    for _ in range(cycles):
        tick()
    finished = time.perf_counter()
    check = int(top.last) if design == "chain" else sum(int(q.count) for q in top.queues)
    if vcd and hasattr(top, "_vcd_file"):
        top._vcd_file.flush()
    print(json.dumps({"elab_s": elaborated - start, "run_s": finished - elaborated, "cycles": cycles,
                      "check": check, "vcd_bytes": os.path.getsize(vcd) if vcd and os.path.exists(vcd) else None}))


if __name__ == "__main__":
    main(sys.argv)
