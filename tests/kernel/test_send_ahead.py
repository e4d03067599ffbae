"""OutPort.send_ahead: a message computed for a later edge arrives as if sent at that edge."""

import pytest

from archmodel.kernel import ClockDomain, Component, ModelAssertion, Out, Param, Simulator, connect, model

from .components import Consumer


@model(catalogue=False)
class Planner(Component):
    """At its first edge sends message k at cycle ``cycles[k]``: all ahead (``ahead``), or
    each at its own edge."""

    cycles = Param(list, [0], "the send cycle of each message")
    ahead = Param(bool, True, "send them all at the first edge with send_ahead")
    bits = Param(list, [], "the length of each message on a channel with a width (default: one beat)")
    out = Out("integers")

    def _bits(self, k):
        return self.bits[k] if self.bits else None

    def tick(self):
        period, phase = self.domain.period_ps, self.domain.phase_ps
        if self.ahead:
            for k, cycle in enumerate(self.cycles):
                self.out.send_ahead(k, phase + cycle * period, self._bits(k))
            self.sleep()
            return
        due = [k for k, cycle in enumerate(self.cycles) if cycle == self.cycle]
        for k in due:
            self.out.send(k, self._bits(k))
        later = [cycle for cycle in self.cycles if cycle > self.cycle]
        if later:
            self.sleep_for(min(later) - self.cycle)
        else:
            self.sleep()


def play(cycles, ahead, latency=3, capacity=8, rx=None, phase=0, width=None, bits=()):
    top = Component("top", clock=ClockDomain("clk", 1000, phase))
    planner = Planner("p", top, cycles=cycles, ahead=ahead, bits=list(bits))
    consumer = Consumer("c", top, clock=rx)
    channel = connect(planner.out, consumer.inp, latency=latency, capacity=capacity, width_bits=width)
    Simulator(top).run()
    return consumer.log, channel.sent, channel.credits, channel.beats


@pytest.mark.parametrize("rx", [None, ClockDomain("fast", 700, 100)])
@pytest.mark.parametrize("cycles", [[0], [0, 1, 2], [1, 4, 9], [3, 5, 6, 20]])
def test_messages_sent_ahead_arrive_as_if_sent_at_their_edges(cycles, rx):
    assert play(cycles, ahead=True, rx=rx) == play(cycles, ahead=False, rx=rx)


def test_a_send_ahead_spends_its_credit_now():
    top = Component("top", clock=ClockDomain("clk", 1000))
    planner = Planner("p", top, cycles=[0, 5])
    Consumer("c", top)
    channel = connect(planner.out, top.child("c").inp, latency=2, capacity=2)
    sim = Simulator(top)
    sim.run(until_ps=0)
    assert channel.credits == 0 and [arrival for arrival, _ in channel.flight] == [2000, 7000]


@pytest.mark.parametrize("cycles, capacity, why", [
    ([2, 1], 8, "7 credits, link busy until 3000 ps"),
    ([0, 0], 8, "7 credits, link busy until 1000 ps"),
    ([0, 1, 2], 2, "0 credits, link busy until 2000 ps"),
])
def test_a_send_ahead_that_breaks_the_channel_rules_is_refused_naming_the_port(cycles, capacity, why):
    with pytest.raises(ModelAssertion) as err:
        play(cycles, ahead=True, capacity=capacity)
    assert str(err.value).startswith("top.p.out: send_ahead() at ") and why in str(err.value)


def test_a_send_ahead_into_the_past_or_between_edges_is_refused():
    top = Component("top", clock=ClockDomain("clk", 1000))
    planner = Planner("p", top, cycles=[5])
    Consumer("c", top)
    connect(planner.out, top.child("c").inp)
    sim = Simulator(top)
    sim.run(until_ps=3000)
    assert sim.now == 3000
    for at in (2000, 3500):
        with pytest.raises(ModelAssertion, match=f"{at} ps is not an edge of clk at or after now"):
            planner.out.send_ahead(0, at)


@pytest.mark.parametrize("rx", [None, ClockDomain("fast", 700, 100)])
@pytest.mark.parametrize("cycles, bits", [([0], [64]), ([0, 2, 5], [16, 24, 8]), ([1, 6, 9], [40, 8, 33])])
def test_a_wide_channel_serialises_messages_sent_ahead_as_at_their_edges(cycles, bits, rx):
    # 8-bit link: a message of b bits holds it for ceil(b / 8) cycles, its tail arrives after
    assert play(cycles, ahead=True, rx=rx, width=8, bits=bits) == play(cycles, ahead=False, rx=rx, width=8, bits=bits)


def test_a_send_ahead_onto_a_link_still_busy_with_a_wide_message_is_refused():
    with pytest.raises(ModelAssertion, match="link busy until 3000 ps"):
        play([0, 2], ahead=True, width=8, bits=[24, 8])
