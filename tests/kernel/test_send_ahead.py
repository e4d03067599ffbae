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
    out = Out("integers")

    def tick(self):
        period, phase = self.domain.period_ps, self.domain.phase_ps
        if self.ahead:
            for k, cycle in enumerate(self.cycles):
                self.out.send_ahead(k, phase + cycle * period)
            self.sleep()
            return
        due = [k for k, cycle in enumerate(self.cycles) if cycle == self.cycle]
        for k in due:
            self.out.send(k)
        later = [cycle for cycle in self.cycles if cycle > self.cycle]
        if later:
            self.sleep_for(min(later) - self.cycle)
        else:
            self.sleep()


def play(cycles, ahead, latency=3, capacity=8, rx=None, phase=0):
    top = Component("top", clock=ClockDomain("clk", 1000, phase))
    planner = Planner("p", top, cycles=cycles, ahead=ahead)
    consumer = Consumer("c", top, clock=rx)
    channel = connect(planner.out, consumer.inp, latency=latency, capacity=capacity)
    Simulator(top).run()
    return consumer.log, channel.sent, channel.credits


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


def test_a_wide_channel_refuses_a_send_ahead():
    top = Component("top", clock=ClockDomain("clk", 1000))
    planner = Planner("p", top, cycles=[1])
    Consumer("c", top)
    connect(planner.out, top.child("c").inp, width_bits=8)
    with pytest.raises(ModelAssertion, match="traced or has a width"):
        Simulator(top).run()
