"""Channel-level cross-check: an archmodel channel against credit_channel.v, the RTL reading
of its docstring (a sender credit counter, LATENCY pipeline registers, a receiver buffer of
CAPACITY entries, credits returned through the credit register), on the same stimulus.

A source offers a byte counter when its stimulus says so and holds it until it moves; a sink
takes a word when its stimulus says ready and one is there. Every cycle both sides must agree
on the sender's valid, ready (a credit is held), fire, payload and credits, and on the
receiver's valid, ready, fire, word and number of words waiting.
"""

import numpy as np
import pytest

from archmodel.kernel import Component, In, Out, Param, Simulator, connect, model

from .harness import Stimulus, first_mismatch, longest_run, run_testbench

CYCLES = 400
SEED = 7
SOURCES = ["tb_credit_channel.v", "credit_channel.v"]
# (latency, capacity): one credit, the default latency + 1, more, and too few for full rate.
LINKS = [(1, 1), (1, 2), (1, 3), (2, 2), (2, 3)]


def stimulus_pattern(seed: int, cycles: int, latency: int, capacity: int) -> list[tuple[int, int]]:
    """(offer, out_ready) per cycle: rounds of a burst into a stalled receiver (the sender runs
    out of credits and is held off), a drain, a stream with both sides always willing, idle
    cycles, and a random phase with random rates."""
    rng = np.random.default_rng(seed)
    pattern: list[tuple[int, int]] = []
    while len(pattern) < cycles:
        pattern += [(1, 0)] * (capacity + latency + int(rng.integers(2, 6)))
        pattern += [(0, 1)] * (capacity + latency + int(rng.integers(3, 10)))
        pattern += [(1, 1)] * int(rng.integers(15, 25))
        pattern += [(0, 0)] * int(rng.integers(2, 6))
        offer_rate, ready_rate = rng.uniform(0.2, 0.9, size=2)
        for _ in range(int(rng.integers(20, 40))):
            pattern.append((int(rng.random() < offer_rate), int(rng.random() < ready_rate)))
    return pattern[:cycles]


@model(catalogue=False)
class ByteSource(Component):
    """The testbench's source: raises valid when its stimulus offers, then holds valid and the
    payload (a byte counter) until the word moves, as the stream rules require. Records what
    it sees each cycle before acting. With ``sleepy`` it sleeps while held off and relies on
    the kernel to wake it when a credit returns."""

    sleepy = Param(bool, False, "sleep while blocked for lack of a credit")
    out = Out("bytes")

    def setup(self):
        self.word = self.register("word", 0, 8)
        self.holding = self.register("holding", 0, 1)
        self.rows: dict[int, dict] = {}
        self.sent: list[int] = []

    def tick(self):
        valid = bool(self.parent.stimulus.offer.value or self.holding.value)
        ready = self.out.ready
        credits = self.out.channel.credits
        fired = valid and self.out.try_send(self.word.value)
        if fired:
            self.sent.append(self.word.value)
            self.word.set((self.word.value + 1) % 256)
        self.holding.set(int(valid and not fired))
        self.rows[self.cycle] = {"in_valid": int(valid), "in_ready": int(ready), "in_fire": int(fired),
                                 "in_data": self.word.value, "credits": credits}
        if self.sleepy and valid and not fired:
            self.sleep()


@model(catalogue=False)
class ByteSink(Component):
    """The testbench's sink: takes the waiting word when its stimulus says ready. Records what
    it sees each cycle before acting. With ``sleepy`` it sleeps while nothing has arrived and
    relies on the kernel to wake it when a word arrives."""

    sleepy = Param(bool, False, "sleep while no word is waiting")
    inp = In("bytes")

    def setup(self):
        self.rows: dict[int, dict] = {}
        self.received: list[int] = []

    def tick(self):
        ready = self.parent.stimulus.out_ready.value
        valid = self.inp.valid
        word = self.inp.peek()
        waiting = len(self.inp)
        fired = valid and bool(ready)
        if fired:
            self.received.append(self.inp.recv())
        self.rows[self.cycle] = {"out_valid": int(valid), "out_ready": ready, "out_fire": int(fired),
                                 "out_data": word, "waiting": waiting}
        if self.sleepy and not valid:
            self.sleep()


@model(catalogue=False)
class ChannelBench(Component):
    """tb_credit_channel.v in archmodel: stimulus registers, a source and a sink joined by one
    channel of the given latency and capacity."""

    pattern = Param(tuple, doc="(offer, out_ready) per cycle")
    latency = Param(int, 1, "channel latency", unit="cycles")
    capacity = Param(int, 2, "channel credits")
    sleepy = Param(bool, False, "let the source and sink sleep when they have nothing to do")

    def setup(self):
        self.stimulus = Stimulus("stimulus", self, pattern=self.pattern, signals=("offer", "out_ready"))
        self.source = ByteSource("source", self, sleepy=self.sleepy)
        self.sink = ByteSink("sink", self, sleepy=self.sleepy)
        connect(self.source.out, self.sink.inp, latency=self.latency, capacity=self.capacity)

    def trace(self) -> list[dict]:
        """One row per cycle in the testbench's signal order. A cycle a part slept through
        repeats its last row: it sleeps only while blocked (source) or while nothing is
        waiting (sink), and until the kernel wakes it none of its signals can change, except
        the sink's out_ready, which is the stimulus."""
        rows, sender, receiver = [], {}, {}
        for cycle, (_, out_ready) in enumerate(self.pattern):
            sender = self.source.rows.get(cycle, sender)
            receiver = dict(self.sink.rows.get(cycle, receiver), out_ready=out_ready)
            rows.append({"cycle": cycle, **sender, **receiver})
        return rows


def archmodel_run(pattern, latency, capacity, sleepy=False) -> ChannelBench:
    """The bench after ``len(pattern)`` edges, its parts ticked in a shuffled order."""
    bench = ChannelBench("tb", pattern=tuple(pattern), latency=latency, capacity=capacity, sleepy=sleepy)
    Simulator(bench, seed=latency * 10 + capacity, shuffle=True).run(cycles=len(pattern))
    return bench


def rtl_run(workdir, pattern, latency, capacity) -> list[dict]:
    """tb_credit_channel.v's trace for one link, compiled and run in ``workdir``."""
    trace = run_testbench(workdir, "tb_credit_channel", SOURCES, pattern,
                          {"CYCLES": len(pattern), "LATENCY": latency, "CAPACITY": capacity})
    for row in trace:
        # The RTL's data lines are a don't-care while out_valid is low; the kernel has no word.
        if not row["out_valid"]:
            row["out_data"] = None
    return trace


@pytest.mark.parametrize("latency, capacity", LINKS)
def test_archmodel_channel_matches_credit_channel_rtl_at_every_rising_edge(tmp_path, latency, capacity):
    pattern = stimulus_pattern(SEED + capacity, CYCLES, latency, capacity)
    rtl = rtl_run(tmp_path, pattern, latency, capacity)
    eager = archmodel_run(pattern, latency, capacity)
    mismatch = first_mismatch(rtl, eager.trace())
    assert mismatch is None, mismatch
    sleepy = archmodel_run(pattern, latency, capacity, sleepy=True)
    mismatch = first_mismatch(rtl, sleepy.trace())
    assert mismatch is None, f"with sleeping source and sink: {mismatch}"
    # The sleepy run proves the kernel's wake-ups only if the parts really slept.
    assert len(sleepy.source.rows) <= CYCLES - 30 and len(sleepy.sink.rows) <= CYCLES - 30

    blocked = sum(1 for row in rtl if row["in_valid"] and not row["in_ready"])
    assert blocked >= 40
    assert max(row["waiting"] for row in rtl) == capacity
    both_fire = sum(1 for row in rtl if row["in_fire"] and row["out_fire"])
    # A lone credit is spent again only the edge after its word is taken.
    assert both_fire == 0 if capacity == 1 else both_fire >= 50
    assert len(eager.source.sent) >= 100
    assert eager.sink.received == eager.source.sent[:len(eager.sink.received)]


@pytest.mark.parametrize("latency, capacity", LINKS)
def test_the_credit_round_trip_is_latency_plus_one_edges(latency, capacity):
    """The docstring's throughput claim, on the archmodel side (which matches the RTL above):
    with fewer than latency + 1 credits a sender moves at most ``capacity`` words in a row,
    with latency + 1 or more it streams without a gap."""
    pattern = stimulus_pattern(SEED + capacity, CYCLES, latency, capacity)
    fires = [row["in_fire"] for row in archmodel_run(pattern, latency, capacity).trace()]
    if capacity < latency + 1:
        assert longest_run(fires) == capacity
    else:
        assert longest_run(fires) >= 15
