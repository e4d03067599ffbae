"""A randomized design for holding the tracer's bytes fixed: registers of every kind the tracer
writes, set in random order (often to the value they hold, to negative values and to values
wider than the register), and channels of random latency, capacity and width between two
clock domains, with random offers, back-pressure and sleeps."""

from __future__ import annotations

import random

from archmodel.kernel import ClockDomain, Component, In, Out, Param, connect, model

# The traced runs pinned by tests/trace/golden_vcd.sha256: (seed, cycles, tracer arguments).
GOLDEN_RUNS = [
    (1, 120, {}),
    (2, 150, {}),
    (3, 100, {"start_ps": 17_000, "end_ps": 61_500}),
    (4, 120, {"select": ("top.u1.*", "top.u2.r*", "*.valid", "*.data")}),
    (5, 200, {"shuffle": True}),
]


def _random_value(rng: random.Random, kind: str, width: int, current):
    """A value for a register of ``kind``: often the one it holds."""
    if rng.random() < 0.3:
        return current
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "int":
        choice = rng.random()
        if choice < 0.1:
            return -rng.randrange(1, 1 << min(width + 3, 80))  # two's complement on screen
        if choice < 0.2:
            return rng.randrange(1 << (width + 5))  # wider than the register: truncated
        return rng.randrange(1 << width) if rng.random() < 0.5 else rng.randrange(min(8, 1 << width))
    if kind == "float":
        return rng.choice([0.0, -1.5, 2.25, 1e-300, 3.0e12, rng.random()])
    return rng.choice(["idle", "busy", "two words", "tab\there", "héllo", "", rng.choice("abc") * rng.randrange(5)])


@model(catalogue=False)
class Scrambler(Component):
    """Registers of random kinds and widths set in random order at every edge, and an output
    and input on which it offers and takes at random; sleeps now and then."""

    registers_count = Param(int, 6, "registers")
    inp = In("anything", required=False)
    out = Out("anything", required=False)

    def setup(self):
        self.choices = random.Random(self.path)  # the design's shape: the same for every seed
        self.kinds = []
        self.regs = []
        for index in range(self.registers_count):
            kind = self.choices.choice(["int", "int", "int", "bool", "str", "float"])
            width = self.choices.choice([1, 3, 8, 13, 32, 64, 70])
            init = {"int": self.choices.randrange(1 << width), "bool": False, "float": 0.5, "str": "reset"}[kind]
            self.regs.append(self.register(f"r{index}", init, width=width if kind == "int" else None))
            self.kinds.append((kind, width))

    def tick(self):
        rng = self.choices
        order = list(range(len(self.regs)))
        rng.shuffle(order)
        for index in order[:rng.randrange(len(order) + 1)]:
            kind, width = self.kinds[index]
            reg = self.regs[index]
            reg.set(_random_value(rng, kind, width, reg.value))
        if self.out.connected and rng.random() < 0.6:
            payload = rng.choice([rng.randrange(1000), f"msg {rng.randrange(50)}", (1, "two", 3.0),
                                  list(range(rng.randrange(9))), None, -7.25])
            self.out.try_send(payload)
        if self.inp.connected and self.inp.valid and rng.random() < 0.5:
            self.inp.recv()
        if rng.random() < 0.05:
            self.sleep_for(rng.randrange(1, 6))


def random_design(seed: int) -> Component:
    """``top`` with a handful of Scramblers in two clock domains, some connected in a chain."""
    rng = random.Random(seed)
    top = Component("top", clock=ClockDomain("clk", 1000))
    slow = ClockDomain("slow", rng.choice([1500, 2500, 3000]), phase_ps=rng.choice([0, 250]))
    units = [Scrambler(f"u{i}", top, registers_count=rng.randrange(1, 9),
                       clock=slow if rng.random() < 0.3 else None) for i in range(rng.randrange(3, 7))]
    for sender, receiver in zip(units, units[1:]):
        if rng.random() < 0.8:
            latency = rng.randrange(1, 4)
            connect(sender.out, receiver.inp, latency=latency, capacity=rng.randrange(1, latency + 3),
                    width_bits=rng.choice([None, None, 8, 32]))
    return top
