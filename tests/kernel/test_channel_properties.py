"""Property: credit flow control never drops, duplicates or reorders a message, whatever the
latency, capacity, width, clocks (producer and consumer on different ones), source gaps
and sink stalls; credits never go negative and are all back when the channel drains."""

from math import ceil

import attrs
from hypothesis import given, settings, strategies as st

from archmodel.kernel import ClockDomain, Component, In, Out, Simulator, connect, model


@attrs.frozen
class Numbered:
    """A message carrying its sequence number and its length on the wire."""

    seq: int
    size_bits: int


def credits_balance(ch) -> bool:
    """Every credit is held by the sender, in flight or waiting, or on its way back."""
    return ch.credits >= 0 and ch.credits + len(ch.flight) + ch.returning == ch.capacity


@model(catalogue=False)
class GappySender(Component):
    """Sends the scripted messages in order, idling ``gaps[i]`` edges before message i.
    While it waits for its gap it sleeps; while it waits for a credit or a busy link it
    sleeps too, or, with ``polls`` set, stays awake and tries again at every edge."""

    out = Out("numbered messages")

    def setup(self):
        self.script: list[tuple[int, Numbered]] = []
        self.next = 0
        self.gap_done = False
        self.polls = False
        self.sent_at: list[int] = []
        self.broken: list[str] = []

    def tick(self):
        ch = self.out.channel
        if not credits_balance(ch):
            self.broken.append(f"credits {ch.credits} at {self.now} ps")
        if self.next == len(self.script):
            self.sleep()
            return
        gap, message = self.script[self.next]
        if gap and not self.gap_done:
            self.gap_done = True
            self.sleep_for(gap)
            return
        if self.out.try_send(message):
            self.sent_at.append(self.now)
            self.next += 1
            self.gap_done = False
        elif not self.polls:
            self.sleep()


@model(catalogue=False)
class StallingReceiver(Component):
    """Takes a message at every edge except those in ``stalls``; logs (time, message)."""

    inp = In("numbered messages")

    def setup(self):
        self.stalls: set[int] = set()
        self.log: list[tuple[int, Numbered]] = []
        self.broken: list[str] = []

    def tick(self):
        ch = self.inp.channel
        if not credits_balance(ch):
            self.broken.append(f"credits {ch.credits} at {self.now} ps")
        if not self.inp.valid:
            self.sleep()
        elif self.cycle not in self.stalls:
            self.log.append((self.now, self.inp.recv()))


periods = st.sampled_from([250, 400, 625, 1000, 1250, 1600])


@st.composite
def scenarios(draw):
    src_period, dst_period = draw(periods), draw(periods)
    src = ClockDomain("src", src_period, draw(st.integers(0, src_period - 1)))
    # On one shared clock both ends tick in the same edge, in shuffled order.
    dst = src if draw(st.booleans()) else ClockDomain("dst", dst_period, draw(st.integers(0, dst_period - 1)))
    count = draw(st.integers(1, 25))
    return {
        "latency": draw(st.integers(1, 4)),
        "capacity": draw(st.none() | st.integers(1, 6)),
        "width_bits": draw(st.none() | st.sampled_from([8, 32, 64])),
        "src": src,
        "dst": dst,
        "script": [(draw(st.integers(0, 3)), Numbered(i, draw(st.integers(1, 128)))) for i in range(count)],
        "stalls": draw(st.sets(st.integers(0, 80), max_size=40)),
    }


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(scenarios(), st.booleans(), st.booleans())
def test_credit_backpressure_never_drops_duplicates_or_reorders(case, shuffle, polls):
    top = Component("top", clock=case["src"])
    sender = GappySender("tx", top)
    receiver = StallingReceiver("rx", top, clock=case["dst"])
    sender.script = case["script"]
    sender.polls = polls
    receiver.stalls = case["stalls"]
    ch = connect(sender.out, receiver.inp, latency=case["latency"], capacity=case["capacity"],
                 width_bits=case["width_bits"])
    sim = Simulator(top, shuffle=shuffle)
    result = sim.run(until_ps=10_000_000)

    messages = [m for _, m in case["script"]]
    assert result.reason == "quiescent"
    assert [m for _, m in receiver.log] == messages  # none dropped, duplicated or reordered
    assert ch.sent == ch.received == len(messages)
    assert not sender.broken and not receiver.broken
    assert ch.credits == ch.capacity and not ch.flight

    src, dst = case["src"], case["dst"]
    beats = [1 if ch.width_bits is None else max(1, ceil(m.size_bits / ch.width_bits)) for m in messages]
    for before, after, n in zip(sender.sent_at, sender.sent_at[1:], beats):
        assert after - before >= n * src.period_ps  # one message per edge; beats hold the link
    taken_at = [t for t, _ in receiver.log]
    assert len(set(taken_at)) == len(taken_at)  # one message per receiver edge
    for sent, taken, n in zip(sender.sent_at, taken_at, beats):
        tail = sent + (n - 1) * src.period_ps
        earliest = dst.edge_after(tail) + (ch.latency - 1) * dst.period_ps
        assert taken >= earliest
        assert (taken - dst.phase_ps) % dst.period_ps == 0
    in_flight = 0
    events = sorted([(t, 1) for t in sender.sent_at] + [(t, -1) for t in taken_at], key=lambda e: (e[0], -e[1]))
    for _, change in events:
        in_flight += change
        assert in_flight <= ch.capacity  # never more messages out than credits
