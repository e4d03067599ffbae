"""Register-level cross-check: counter.v and fifo2.v under Icarus Verilog against archmodel
components built from Registers, on the same seeded stimulus.

Both sides are sampled once per cycle, on the values settled before each rising edge (see
tb.v). archmodel's two phases (every tick reads ``reg.value``, then the kernel commits every
``reg.set``) are Verilog's non-blocking assignments, so the mirrors below are line-for-line
translations of the RTL and must agree on every signal in every cycle.
"""

import functools

import numpy as np
import pytest

from archmodel.kernel import Component, Param, Simulator, model

from .harness import Stimulus, first_mismatch, longest_run, run_testbench

CYCLES = 600
SEED = 20240611
SOURCES = ["tb.v", "counter.v", "fifo2.v"]


def stimulus_pattern(seed: int, cycles: int) -> list[tuple[int, int]]:
    """(in_valid, out_ready) per cycle: repeated rounds of fill, hold full under backpressure,
    drain to empty, stream (push and pop together), and a random phase with random rates."""
    rng = np.random.default_rng(seed)
    pattern: list[tuple[int, int]] = []
    while len(pattern) < cycles:
        # Two pushes fill the FIFO from any state; the third cycle is already refused.
        pattern += [(1, 0)] * 3
        pattern += [(1, 0)] * int(rng.integers(2, 6))
        # Two pops empty it; the third cycle sees it empty.
        pattern += [(0, 1)] * 3
        pattern += [(1, 1)] * int(rng.integers(8, 20))
        push_rate, pop_rate = rng.uniform(0.2, 0.9, size=2)
        for _ in range(int(rng.integers(10, 30))):
            pattern.append((int(rng.random() < push_rate), int(rng.random() < pop_rate)))
    return pattern[:cycles]


@model(catalogue=False)
class Counter8(Component):
    """counter.v: an 8-bit counter that advances when its bench's ``in_fire`` wire is high and
    wraps from 255 to 0."""

    def setup(self):
        self.value = self.register("value", 0, 8)

    def tick(self):
        if self.parent.in_fire:
            self.value.set((self.value.value + 1) % 256)


@model(catalogue=False)
class Fifo2(Component):
    """fifo2.v: two 8-bit slots, write and read pointers and an occupancy count, driven by its
    bench's ``in_fire``/``out_fire`` wires with the counter's value as the pushed word."""

    def setup(self):
        self.slots = [self.register("slot0", 0, 8), self.register("slot1", 0, 8)]
        self.wr_ptr = self.register("wr_ptr", 0, 1)
        self.rd_ptr = self.register("rd_ptr", 0, 1)
        self.count = self.register("count", 0, 2)

    @property
    def in_ready(self) -> bool:
        return self.count.value != 2

    @property
    def out_valid(self) -> bool:
        return self.count.value != 0

    @property
    def out_data(self) -> int:
        return self.slots[self.rd_ptr.value].value

    def tick(self):
        push, pop = self.parent.in_fire, self.parent.out_fire
        if push:
            self.slots[self.wr_ptr.value].set(self.parent.counter.value.value)
            self.wr_ptr.set(1 - self.wr_ptr.value)
        if pop:
            self.rd_ptr.set(1 - self.rd_ptr.value)
        if push != pop:
            self.count.set(self.count.value + (1 if push else -1))


@model(catalogue=False)
class Probe(Component):
    """Records its bench's ``sample()`` at every edge: the values every tick of that edge reads."""

    def setup(self):
        self.trace: list[dict] = []

    def tick(self):
        self.trace.append(self.parent.sample())


@model(catalogue=False)
class CounterFifoBench(Component):
    """tb.v in archmodel: stimulus registers, the counter and the FIFO, and the wires between
    them (the properties below), which the parts read during their ticks."""

    pattern = Param(tuple, doc="(in_valid, out_ready) per cycle")
    fifo_model = Param(type, Fifo2, "the FIFO mirror to use")

    def setup(self):
        self.stimulus = Stimulus("stimulus", self, pattern=self.pattern)
        self.counter = Counter8("counter", self)
        self.fifo = self.fifo_model("fifo", self)
        self.probe = Probe("probe", self)

    @property
    def in_fire(self) -> bool:
        return bool(self.stimulus.in_valid.value) and self.fifo.in_ready

    @property
    def out_fire(self) -> bool:
        return self.fifo.out_valid and bool(self.stimulus.out_ready.value)

    def sample(self) -> dict:
        """Every signal tb.v prints, under the same names and in the same order."""
        fifo = self.fifo
        return {
            "cycle": self.probe.cycle,
            "in_valid": self.stimulus.in_valid.value,
            "in_ready": int(fifo.in_ready),
            "in_fire": int(self.in_fire),
            "in_data": self.counter.value.value,
            "out_valid": int(fifo.out_valid),
            "out_ready": self.stimulus.out_ready.value,
            "out_fire": int(self.out_fire),
            "out_data": fifo.out_data,
            "count": fifo.count.value,
            "wr_ptr": fifo.wr_ptr.value,
            "rd_ptr": fifo.rd_ptr.value,
        }


def archmodel_trace(pattern, fifo_model=Fifo2, seed=0) -> list[dict]:
    """The bench's samples over ``len(pattern)`` edges, ticking the parts in a shuffled order."""
    bench = CounterFifoBench("tb", pattern=tuple(pattern), fifo_model=fifo_model)
    Simulator(bench, seed=seed, shuffle=True).run(cycles=len(pattern))
    return bench.probe.trace


@pytest.fixture(scope="module")
def pattern():
    return stimulus_pattern(SEED, CYCLES)


@pytest.fixture(scope="module")
def rtl_trace(pattern, tmp_path_factory):
    """tb.v's trace, computed once per module on first call: inside a test, so that a missing
    Icarus fails that test instead of erroring its setup."""
    return functools.cache(lambda: run_testbench(tmp_path_factory.mktemp("counter_fifo"), "tb", SOURCES,
                                                 pattern, {"CYCLES": CYCLES}))


def test_archmodel_counter_and_fifo_match_icarus_at_every_rising_edge(pattern, rtl_trace):
    trace = rtl_trace()
    for seed in (0, 1):
        mismatch = first_mismatch(trace, archmodel_trace(pattern, seed=seed))
        assert mismatch is None, mismatch


def test_stimulus_fills_holds_drains_and_streams_and_the_counter_wraps(rtl_trace):
    trace = rtl_trace()
    counts = [row["count"] for row in trace]
    longest_hold = longest_run(row["count"] == 2 and row["in_valid"] and not row["out_ready"] for row in trace)
    drained_after_full = sum(1 for k in range(2, len(counts)) if counts[k - 2:k + 1] == [2, 1, 0])
    both_fire = sum(1 for row in trace if row["in_fire"] and row["out_fire"])
    wraps = sum(1 for row in trace if row["in_fire"] and row["in_data"] == 255)
    assert longest_hold >= 3
    assert drained_after_full >= 10
    assert both_fire >= 100
    assert wraps >= 1
    assert trace[-1]["cycle"] == CYCLES - 1


def test_rtl_fifo_delivers_every_pushed_word_once_in_order(rtl_trace):
    trace = rtl_trace()
    pushed = [row["in_data"] for row in trace if row["in_fire"]]
    popped = [row["out_data"] for row in trace if row["out_fire"]]
    last = trace[-1]
    assert len(pushed) - len(popped) == last["count"] + last["in_fire"] - last["out_fire"]
    assert popped == pushed[:len(popped)]


@model(catalogue=False)
class EagerFifo2(Fifo2):
    """A wrong mirror: it accepts a push into a full FIFO in a cycle it is also popped, which
    fifo2.v does not (its in_ready looks only at the count)."""

    @property
    def in_ready(self) -> bool:
        return self.count.value != 2 or bool(self.parent.stimulus.out_ready.value)


def test_the_cross_check_names_the_first_cycle_and_signal_a_wrong_model_gets_wrong(pattern, rtl_trace):
    trace = rtl_trace()
    first_difference = next(row["cycle"] for row in trace
                            if row["count"] == 2 and row["out_ready"])
    mismatch = first_mismatch(trace, archmodel_trace(pattern, fifo_model=EagerFifo2))
    assert mismatch.splitlines()[0] == (
        f"cycle {first_difference}: signal 'in_ready' is 0 in RTL but 1 in archmodel")
