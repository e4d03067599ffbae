"""Conservative lookahead over the connection graph (Simulator.undisturbed_until_ps)."""

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from archmodel.kernel import ClockDomain, Component, In, Out, Param, Simulator, at_least, connect, model

from .components import Producer


@model(catalogue=False)
class Probe(Component):
    """Takes every message that arrives and, at each tick, asks until when nothing can reach
    it; logs (time, horizon) and the times it took messages. Also looks at the cycles of
    ``look_at``."""

    look_at = Param((tuple, list), (), "cycles to tick at besides arrivals")
    inp = In("anything", required=False)
    inp2 = In("anything", required=False)

    def setup(self):
        self.seen: list = []
        self.seen_within: list = []  # the same, asked to look no further than 7 ns ahead
        self.took: list = []

    def tick(self):
        for port in (self.inp, self.inp2):
            if port.channel is not None and port.valid:
                port.recv()
                self.took.append(self.now)
        self.seen.append((self.now, self.sim.undisturbed_until_ps(self)))
        self.seen_within.append((self.now, self.sim.undisturbed_until_ps(self, self.now + 7000)))
        self.sleep()
        later = [c for c in self.look_at if c > self.cycle]
        if later:
            self.wake_in(min(later) - self.cycle)


@model(catalogue=False)
class Timer(Component):
    """Sends one message at each cycle of ``at`` (sleeping in between); a ``patient`` one
    also sleeps while the channel is not ready (the returning credit wakes it)."""

    at = Param((tuple, list), (), "cycles to send at")
    patient = Param(bool, False, "sleep while blocked")
    out = Out("ticks", required=False)

    def setup(self):
        self.due = deque(sorted(self.at))

    def start(self):
        if self.out.channel is None:
            self.due.clear()

    def tick(self):
        if self.due and self.due[0] <= self.cycle:
            if self.out.try_send(self.cycle):
                self.due.popleft()
            elif self.patient:
                self.sleep()
                return
        if not self.due:
            self.sleep()
        elif self.due[0] > self.cycle + 1:
            self.sleep_for(self.due[0] - self.cycle)


@model(catalogue=False)
class Relay(Component):
    """Forwards each message ``delay_cycles`` after taking it, holding at most ``depth``.
    With ``declare`` it tells the lookahead the truth: that delay as its reaction, and, from
    what it holds and what is on its way to it, when it can send next (a wake-up the arrival
    of a message asked for does not let it send any sooner)."""

    delay_cycles = Param(int, 0, "cycles from taking a message to offering it", check=at_least(0))
    depth = Param(int, 2, "messages held", check=at_least(1))
    declare = Param(bool, False, "declare the delay to the lookahead")
    inp = In("messages")
    out = Out("messages", required=False)

    def setup(self):
        self.held: deque = deque()
        # declaring, it also counts the messages on their way to it (see earliest_send_ps)
        self.bounds_inputs_in_flight = self.declare

    def earliest_send_ps(self, port):
        if not self.declare:
            return super().earliest_send_ps(port)
        domain = self.domain
        times = [domain.phase_ps + self.held[0][0] * domain.period_ps] if self.held else []
        flight = self.inp.channel.flight
        if flight:  # taken at its arrival edge at the soonest, and not before now
            taken = domain.edge_at_or_after(max(flight[0][0], self.now))
            times.append(taken + self.delay_cycles * domain.period_ps)
        return min(times) if times else None

    def reaction_ps(self, inp, out):
        return self.delay_cycles * self.domain.period_ps if self.declare else 0

    def tick(self):
        if self.held and self.held[0][0] <= self.cycle and self.out.channel is not None \
                and self.out.try_send(self.held[0][1]):
            self.held.popleft()
        if self.inp.valid and len(self.held) < self.depth:
            self.held.append((self.cycle + self.delay_cycles, self.inp.recv()))
        if not self.held:
            self.sleep()
        elif self.held[0][0] > self.cycle + 1:
            self.sleep_for(self.held[0][0] - self.cycle)


@model(catalogue=False)
class Busy(Component):
    """Ticks every cycle until its cycle ``until``."""

    until = Param(int, 10, "last cycle it ticks")

    def tick(self):
        if self.cycle >= self.until:
            self.sleep()


def one_clock():
    return Component("top", clock=ClockDomain("clk", 1000))


def test_an_awake_component_not_wired_to_the_probe_does_not_limit_it():
    top = one_clock()
    Busy("busy", top, until=50)
    probe = Probe("p", top)
    Simulator(top).run()
    assert probe.seen == [(0, None)]


def test_a_sleeping_sender_limits_its_receiver_from_its_wake_up_plus_the_latency():
    top = one_clock()
    timer = Timer("t", top, at=(10,))
    probe = Probe("p", top)
    connect(timer.out, probe.inp, latency=3)
    Simulator(top).run()
    # at 0 the timer sleeps until cycle 10 (it ticked before the probe): 10 + 3
    assert probe.seen == [(0, 13_000), (13_000, None)]
    assert probe.took == [13_000]


def timer_relay_probe(at: int, delay_cycles: int, declare: bool, to_relay: int, to_probe: int) -> Probe:
    """A timer sending at cycle ``at`` through a relay to a probe, run to the end; the probe
    is made last, so at cycle 0 it asks when the others already sleep."""
    top = one_clock()
    timer = Timer("t", top, at=(at,))
    relay = Relay("r", top, delay_cycles=delay_cycles, declare=declare)
    probe = Probe("p", top)
    connect(timer.out, relay.inp, latency=to_relay)
    connect(relay.out, probe.inp, latency=to_probe)
    Simulator(top).run()
    return probe


def test_latencies_add_up_along_a_path_with_the_reactions_models_declare():
    for declare, want in ((False, 10 + 3 + 2), (True, 10 + 3 + 4 + 2)):
        probe = timer_relay_probe(10, 4, declare, to_relay=3, to_probe=2)
        assert probe.seen[0] == (0, want * 1000)
        assert probe.took == [(10 + 3 + 4 + 2) * 1000]


def test_a_message_in_flight_counts_from_its_arrival():
    probe = timer_relay_probe(0, 5, True, to_relay=4, to_probe=1)
    # sent at 0, arrives at the relay at 4, leaves it at 9 and reaches the probe at 10
    assert probe.seen[0] == (0, 10_000)
    assert probe.took == [10_000]


def test_a_credit_the_probe_frees_wakes_its_blocked_sender():
    top = one_clock()
    sender = Timer("src", top, at=(0, 0), patient=True)
    probe = Probe("p", top)
    connect(sender.out, probe.inp, latency=1, capacity=1)
    Simulator(top).run()
    # the first message arrives at 1, when the sender sleeps, blocked; the credit freed
    # then wakes it at 2, and its second message arrives at 3
    assert probe.seen[1] == (1000, 3000)
    assert probe.took == [1000, 3000]


def test_a_sender_that_stays_awake_while_blocked_may_send_at_its_next_edge():
    top = one_clock()
    producer = Producer("src", top, count=2)  # ticks every cycle until it has sent both
    probe = Probe("p", top)
    connect(producer.out, probe.inp, latency=1, capacity=1)
    Simulator(top).run()
    assert probe.seen[1] == (1000, 2000)


def test_clock_domains_round_each_hop_to_the_receivers_edges():
    top = one_clock()
    timer = Timer("t", top, at=(2,), clock=ClockDomain("slow", 3000))  # sends at 6 ns
    probe = Probe("p", top, clock=ClockDomain("odd", 700))
    connect(timer.out, probe.inp, latency=2)
    Simulator(top).run()
    # the probe's first edge after 6 ns is 6.3 ns; the second edge then, 7.0 ns
    assert probe.seen[0] == (0, 7000)
    assert probe.took == [7000]


PERIODS = (1000, 700, 1250)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_no_message_ever_reaches_the_probe_before_the_horizon_it_was_given(data):
    """Random wiring (cycles included) of timers and relays with truthful declared reactions
    in three clock domains: every message the probe takes arrives at or after the horizon
    of each earlier question."""
    top = one_clock()
    clocks = [ClockDomain(f"c{p}", p) for p in PERIODS]
    draw = data.draw
    probe = Probe("p", top, clock=clocks[draw(st.integers(0, 2))])
    timers = [Timer(f"t{i}", top, clock=clocks[draw(st.integers(0, 2))],
                    at=tuple(draw(st.lists(st.integers(0, 40), max_size=4))), patient=draw(st.booleans()))
              for i in range(draw(st.integers(1, 3)))]
    relays = [Relay(f"r{i}", top, clock=clocks[draw(st.integers(0, 2))], delay_cycles=draw(st.integers(0, 6)),
                    depth=draw(st.integers(1, 3)), declare=draw(st.booleans()))
              for i in range(draw(st.integers(1, 4)))]
    free_inputs = [r.inp for r in relays] + [probe.inp, probe.inp2]
    outputs = [t.out for t in timers] + [r.out for r in relays]
    order = draw(st.permutations(range(len(outputs))))
    for k in order:
        if not free_inputs:
            break
        target = free_inputs.pop(draw(st.integers(0, len(free_inputs) - 1)))
        connect(outputs[k], target, latency=draw(st.integers(1, 5)), capacity=draw(st.integers(1, 3)))
    for relay in relays:
        if relay.inp.channel is None:  # every relay needs an input: give it a timer of its own
            timer = Timer(f"feed_{relay.name}", top, at=(draw(st.integers(0, 30)),))
            connect(timer.out, relay.inp, latency=1)
    Simulator(top, watchdog_cycles=10_000).run(until_ps=200_000)
    for asked_at, horizon in probe.seen:
        later = [t for t in probe.took if t > asked_at]
        if horizon is None:
            assert not later, (asked_at, horizon, probe.took)
        elif later:
            assert later[0] >= horizon, (asked_at, horizon, probe.took)
    for (asked_at, horizon), (_, near) in zip(probe.seen, probe.seen_within):
        # looking no further than 7 ns changes nothing before then
        within = asked_at + 7000
        assert near == (horizon if horizon is not None and horizon < within else None), (asked_at, horizon, near)


@model(catalogue=False)
class InOrder(Component):
    """Sends its messages in order, each on the output it names ('a' or 'b'), sleeping while
    the head's channel is not ready (the returning credit wakes it)."""

    a = Out("first output")
    b = Out("second output")

    def setup(self):
        self.queue: deque = deque()

    def tick(self):
        if self.queue and getattr(self, self.queue[0]).try_send(self.cycle):
            self.queue.popleft()
        if not self.queue or not getattr(self, self.queue[0]).ready:
            self.sleep()


@model(catalogue=False)
class LateTaker(Component):
    """Takes one message per cycle from cycle ``from_cycle`` on."""

    from_cycle = Param(int, 20, "first cycle it takes a message")
    inp = In("messages")

    def tick(self):
        if self.cycle < self.from_cycle:
            self.sleep_for(self.from_cycle - self.cycle)
        elif self.inp.valid:
            self.inp.recv()
        else:
            self.sleep()


def test_a_credit_that_frees_a_blocked_head_of_line_lets_its_sender_reach_the_probe():
    top = one_clock()
    sender = InOrder("s", top)
    sender.queue.extend("aab")  # two for the late taker (one credit), then one for the probe
    taker = LateTaker("late", top, from_cycle=20)
    probe = Probe("p", top, look_at=(5,))
    connect(sender.a, taker.inp, latency=1, capacity=1)
    connect(sender.b, probe.inp, latency=2)
    Simulator(top).run()
    # at 5 the sender sleeps with nothing requested, blocked behind the taker, which takes
    # the first message at 20: the credit lets the second go at 21 and the probe's at 22,
    # arriving at 24. The lookahead sees the first message waiting at the taker, which may
    # take it from 5 on, so a credit may come at 6 and the probe's message arrive at 8 at the
    # soonest. (At 0 the sender is to look again at 1, when its link is free: its message
    # could arrive at 3.)
    assert probe.took == [24_000]
    assert probe.seen[:2] == [(0, 3000), (5000, 8000)]


def test_question_backoff_doubles_the_chances_it_passes_after_useless_answers_and_resets():
    from archmodel.kernel import QuestionBackoff
    backoff = QuestionBackoff(most=4)
    asked = []
    for useful in [False, False, False, False, True, False]:
        passed = 0
        while not backoff.should_ask():
            passed += 1
        asked.append(passed)
        backoff.answered(useful)
    # before each question: 0, then 1, 2, 4, 4 (the most) passed after useless answers; a
    # useful one resets, so the question after it comes at once
    assert asked == [0, 1, 2, 4, 4, 0]


def test_a_component_promises_answers_in_request_order_only_where_it_declares_it():
    # (a model computing ahead relies on the promise, so nothing has it by default: not a
    # plain component, not a model that says nothing, as the Relay here)
    top = Component("top", clock=ClockDomain("clk", 1000))
    relay = Relay("relay", top)
    assert Component.answers_in_order_per_client is False
    assert relay.answers_in_order_per_client is False

    class OrderedRelay(Relay):
        """A Relay holds its messages in a FIFO: it does answer in the order it takes them."""

        answers_in_order_per_client = True

    assert OrderedRelay("ordered", top).answers_in_order_per_client is True
    assert relay.answers_in_order_per_client is False  # (declared on the subclass only)


def test_a_kept_horizon_holds_until_its_time_comes_or_the_asker_sends():
    from archmodel.kernel import KeptHorizon
    top = one_clock()
    timer = Timer("t", top, at=(5,))
    probe = Probe("p", top)
    connect(timer.out, probe.inp)
    Busy("busy", top, until=50)  # (time goes on)
    sim = Simulator(top)
    sim.run(cycles=2)
    kept = KeptHorizon()
    assert not kept.holds_through(timer, sim.now)  # nothing kept yet
    kept.keep(timer, 8_000)
    assert kept.holds_through(timer, 8_000) and not kept.holds_through(timer, 8_001)
    sim.run(cycles=4)  # (the timer sends at cycle 5)
    assert timer.out.channel.sent == 0 and kept.holds_through(timer, 6_000)
    sim.run(cycles=6)
    assert timer.out.channel.sent == 1 and not kept.holds_through(timer, 6_000)
    kept.keep(timer, 7_000)
    assert sim.now < 7_000 and kept.holds_through(timer, 7_000)
    sim.run(cycles=8)
    assert sim.now >= 7_000 and not kept.holds_through(timer, 7_000)  # its time came
    kept.keep(timer, 20_000)
    kept.forget()
    assert not kept.holds_through(timer, 9_000)


@model(catalogue=False)
class CountedRelay(Relay):
    """A declaring Relay that counts the questions about its sends, and tells the lookahead
    its delay as its least reaction too."""

    def setup(self):
        super().setup()
        self.asked = 0

    def earliest_send_ps(self, port):
        self.asked += 1
        return super().earliest_send_ps(port)

    def least_reaction_ps(self, inp, out):
        return self.reaction_ps(inp, out)


def test_a_sender_that_cannot_beat_the_horizon_found_is_not_asked():
    # Two relays take a message each at cycle 1 and send it at 3: the near one's reaches the
    # probe at 4, the far one's after 20 cycles of link. The search asks the near relay first
    # and stops at its message, never asking the far one (as a memory's question need not
    # walk every node of the tree above it); with nothing at the near relay the far one's
    # answer decides, and it is asked.
    for near_sends, want, far_asked in ((True, 4_000, 0), (False, 23_000, 1)):
        top = one_clock()
        # (the far relay first: the order the models were made in does not matter)
        far_timer = Timer("tf", top, at=(0,))
        near_timer = Timer("tn", top, at=(0,) if near_sends else ())
        far = CountedRelay("far", top, delay_cycles=2, declare=True)
        near = CountedRelay("near", top, delay_cycles=2, declare=True)
        probe = Probe("p", top, look_at=(50,))
        connect(near_timer.out, near.inp)
        connect(far_timer.out, far.inp)
        connect(near.out, probe.inp, latency=1)
        connect(far.out, probe.inp2, latency=20)
        sim = Simulator(top)
        sim.run(cycles=2)
        near.asked = far.asked = 0
        assert sim.undisturbed_until_ps(probe) == want
        assert near.asked == 1 and far.asked == far_asked


def test_senders_are_asked_in_the_order_of_the_soonest_they_can_reach_the_probe():
    # The far relay's own link is the shorter (1 cycle, to a middle relay that waits 20 more),
    # the near relay's 2 cycles straight to the probe: the near one is asked first, and its
    # message, arriving at 5, leaves nothing the far one could send worth asking about.
    top = one_clock()
    far_timer, near_timer = Timer("tf", top, at=(0,)), Timer("tn", top, at=(0,))
    far = CountedRelay("far", top, delay_cycles=2, declare=True)
    middle = CountedRelay("middle", top, delay_cycles=20, declare=True)
    near = CountedRelay("near", top, delay_cycles=2, declare=True)
    probe = Probe("p", top, look_at=(50,))
    connect(far_timer.out, far.inp)
    connect(near_timer.out, near.inp)
    connect(far.out, middle.inp, latency=1)
    connect(middle.out, probe.inp2, latency=1)
    connect(near.out, probe.inp, latency=2)
    sim = Simulator(top)
    sim.run(cycles=2)
    near.asked = far.asked = 0
    assert sim.undisturbed_until_ps(probe) == 5_000
    assert near.asked == 1 and far.asked == 0
