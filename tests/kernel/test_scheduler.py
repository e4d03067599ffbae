"""Scheduler semantics: two-phase edges, order independence, idle skipping, seeds, deadlock."""

import pytest

from archmodel.kernel import (ClockDomain, Component, Counter, DeadlockError, In, ModelAssertion, Out, Param,
                              Simulator, connect, model)

from .components import Consumer, Napper, Producer


@model(catalogue=False)
class Stage(Component):
    """r <= upstream + 1: a pipeline stage reading another component's register."""

    def setup(self):
        self.r = self.register("r", 0, width=16)
        self.upstream = None

    def tick(self):
        self.r.set((self.upstream.value if self.upstream else self.r.value) + 1)


def chain(n, shuffle=False, seed=0):
    top = Component("top")
    stages = [Stage(f"s{i}", top) for i in range(n)]
    for before, after in zip(stages, stages[1:]):
        after.upstream = before.r
    sim = Simulator(top, shuffle=shuffle, seed=seed)
    return sim, stages


def test_registers_commit_after_every_tick_so_a_chain_shifts_one_stage_per_cycle():
    sim, stages = chain(4)
    sim.run(cycles=1)
    assert [s.r.value for s in stages] == [1, 1, 1, 1]
    sim.run(cycles=3)
    # stage i holds the counter value delayed by i, plus i.
    assert [s.r.value for s in stages] == [3, 3, 3, 3]
    sim.run(cycles=10)
    assert [s.r.value for s in stages] == [10, 10, 10, 10]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shuffled_tick_order_gives_identical_results(seed):
    def history(shuffle):
        sim, stages = chain(8, shuffle=shuffle, seed=seed)
        out = []
        for cycle in range(1, 20):
            sim.run(cycles=cycle)
            out.append(tuple(s.r.value for s in stages))
        return out

    assert history(False) == history(True)


def test_idle_skipping_a_billion_cycles_costs_a_handful_of_ticks():
    top = Component("top")
    napper = Napper("n", top, cycles=1_000_000_000)
    sim = Simulator(top)
    result = sim.run()
    assert napper.woke_at == [0, 1_000_000_000 * 1000]
    assert result.reason == "quiescent"
    assert sim.ticks == 2


def test_structural_components_never_tick():
    top = Component("top")
    Component("group", top)
    sim = Simulator(top)
    assert sim.run().ticks == 0


def test_sleeping_receiver_wakes_exactly_at_arrival():
    top = Component("top")
    producer = Producer("p", top, count=1)
    consumer = Consumer("c", top)
    connect(producer.out, consumer.inp, latency=1000)
    sim = Simulator(top)
    sim.run()
    assert consumer.log == [(1_000_000, 0)]
    # p ticks at 0 and 1000, then sleeps for good: it was not waiting for the credit that
    # returns at 1_000_000. c ticks at 0 (then sleeps), at the arrival 1_000_000 and at
    # 1_001_000 (then sleeps).
    assert sim.ticks == 5


@model(catalogue=False)
class Picky(Component):
    """Takes a message only at every ``every``-th edge, sleeping until then while one waits;
    with ``quiet`` it lets the arrivals before that edge not wake it. Logs its ticks."""

    every = Param(int, 4, "edges from one take to the next")
    quiet = Param(bool, False, "arrivals before the next take do not wake it")
    inp = In("integers")

    def setup(self):
        self.ticked = []
        self.log = []

    def tick(self):
        c = self.cycle
        self.ticked.append(c)
        if self.inp.valid and c % self.every == 0:
            self.log.append((c, self.inp.recv()))
        take = (c // self.every + 1) * self.every
        waiting = len(self.inp) > 0
        if waiting and self.quiet:  # (before sleeping: the kernel looks at the arrivals then)
            self.inp.wake_on_arrivals_after((take - 1) * self.domain.period_ps)
        self.sleep()
        if waiting:
            self.wake_at(take * self.domain.period_ps)


@pytest.mark.parametrize("quiet", [False, True])
def test_a_receiver_may_let_the_arrivals_before_a_time_not_wake_it(quiet):
    """One message a cycle from cycle 0, arriving a cycle later, for a receiver that takes one
    every 4 cycles. Edge by edge it ticks at each arrival too; letting the arrivals before
    its next take not wake it, it skips those (at cycle 2 one already on its way when it fell
    asleep, at 3 one sent while it slept; the last at 6) and takes the same messages at the
    same edges. Edge by edge it looks at the next edge after a take too (5, 9...: it could
    not see the message waiting behind the one it took); letting the arrivals up to its next
    take not wake it, that message (arrived before then) does not wake it either."""
    top = Component("top")
    producer = Producer("p", top, count=6)
    picky = Picky("r", top, every=4, quiet=quiet)
    connect(producer.out, picky.inp, latency=1, capacity=8)
    Simulator(top).run()
    assert picky.log == [(4, 0), (8, 1), (12, 2), (16, 3), (20, 4), (24, 5)]
    if quiet:
        assert picky.ticked == [0, 1, 4, 8, 12, 16, 20, 24]
    else:
        assert picky.ticked == [0, 1, 2, 3, 4, 5, 6, 8, 9, 12, 13, 16, 17, 20, 21, 24]


@model(catalogue=False)
class Burster(Component):
    """Sends messages of the given sizes in bits, one per edge while the channel is ready,
    and sleeps whenever it is not (a returning credit or the freed link wakes it); logs its
    ticks and the edges it sent at."""

    sizes = Param(tuple, (), "the messages' sizes in bits")
    out = Out("sized integers")

    def setup(self):
        self.ticked = []
        self.sent_at = []

    def tick(self):
        self.ticked.append(self.cycle)
        if len(self.sent_at) == len(self.sizes):
            self.sleep()
        elif self.out.try_send(len(self.sent_at), bits=self.sizes[len(self.sent_at)]):
            self.sent_at.append(self.cycle)
        else:
            self.sleep()


def test_a_returning_credit_wakes_a_sender_when_the_link_is_free_not_before():
    """A byte at cycle 0, eight bytes at 1 (a byte-wide link is busy with them until 9), and
    no credit left at 2 for the third (capacity 2): the sender sleeps. The receiver takes the
    first at 2 and its credit returns, but the link is busy until 9: the sender is woken
    then, when it can send, not at 3 to find the link busy."""
    top = Component("top")
    sender = Burster("s", top, sizes=(8, 64, 8))
    consumer = Consumer("c", top)
    connect(sender.out, consumer.inp, latency=2, capacity=2, width_bits=8)
    Simulator(top).run()
    assert sender.sent_at == [0, 1, 9]
    assert [t // 1000 for t, _ in consumer.log] == [2, 10, 11]
    assert sender.ticked == [0, 1, 2, 9, 10]


@model(catalogue=False)
class Noisy(Component):
    """Draws a number from its own random stream every cycle for ``n`` cycles."""

    n = Param(int, 5, "draws")
    draws = Counter("draws", "numbers drawn")

    def setup(self):
        self.values = []

    def tick(self):
        self.values.append(int(self.rng.integers(0, 1 << 30)))
        self.draws.add()
        if len(self.values) == self.n:
            self.sleep()


def noisy_values(seed, names=("a", "b")):
    top = Component("top")
    parts = [Noisy(name, top) for name in names]
    Simulator(top, seed=seed).run()
    return [p.values for p in parts]


def test_same_seed_same_numbers_different_seed_or_name_different_numbers():
    first = noisy_values(7)
    assert first == noisy_values(7)
    assert first != noisy_values(8)
    assert first[0] != first[1]  # each component has its own stream
    # A component's stream depends only on the seed and its name, not on who else exists.
    assert noisy_values(7, names=("b",))[0] == first[1]


@model(catalogue=False)
class Hoarder(Component):
    """Sends until blocked and never takes anything from its input."""

    inp = In("in")
    out = Out("out")

    def tick(self):
        if not self.out.try_send("x"):
            self.sleep()


def test_deadlock_names_full_channels_who_waits_on_whom_and_the_cycle():
    top = Component("top")
    a, b = Hoarder("a", top), Hoarder("b", top)
    connect(a.out, b.inp, capacity=2)
    connect(b.out, a.inp, capacity=2)
    with pytest.raises(DeadlockError) as err:
        Simulator(top).run()
    text = str(err.value)
    assert text.startswith("deadlock at 2 ns: every component is asleep while messages are pending")
    assert "channel top.a.out -> top.b.inp: 2 message(s) waiting, 2/2 credits in use (full)" in text
    assert "top.a waits on top.b (channel top.a.out -> top.b.inp is full)" in text
    assert "wait cycle: top.a -> top.b -> top.a" in text


@model(catalogue=False)
class Spinner(Component):
    """Stays awake forever but never takes its input: a livelock the watchdog must catch."""

    inp = In("in")

    def tick(self):
        pass


def test_watchdog_stops_a_run_where_components_spin_but_nothing_moves():
    top = Component("top")
    producer = Producer("p", top, count=1)
    spinner = Spinner("s", top)
    connect(producer.out, spinner.inp)
    with pytest.raises(DeadlockError, match="no transfer for 1.001 us while messages are pending"):
        Simulator(top, watchdog_cycles=1000).run()


def test_run_in_slices_equals_one_run():
    def log(slices):
        top = Component("top", clock=ClockDomain("clk", 1000))
        producer = Producer("p", top, count=20)
        consumer = Consumer("c", top)
        connect(producer.out, consumer.inp, latency=2, capacity=2)
        sim = Simulator(top)
        for until in slices:
            sim.run(until_ps=until)
        return consumer.log

    assert log([None]) == log([3000, 3500, 10_000, None])


@model(catalogue=False)
class Keeper(Component):
    """Takes every message into an internal buffer and passes it on only when its peer's
    buffer is empty: two keepers holding a message each wait on each other forever."""

    inp = In("in")
    out = Out("out")

    def setup(self):
        self.buffer = ["seed"]
        self.peer = None

    def tick(self):
        if self.inp.valid:
            self.buffer.append(self.inp.recv())
        if self.buffer and not self.peer.buffer and self.out.try_send(self.buffer[0]):
            self.buffer.pop(0)
        else:
            self.sleep()

    def holding(self):
        return f"{len(self.buffer)} message(s)" if self.buffer else None

    def waiting_for(self):
        return [self.peer]


def test_work_held_inside_components_is_a_deadlock_with_who_holds_what():
    top = Component("top")
    a, b = Keeper("a", top), Keeper("b", top)
    a.peer, b.peer = b, a
    connect(a.out, b.inp)
    connect(b.out, a.inp)
    sim = Simulator(top)
    with pytest.raises(DeadlockError) as err:
        sim.run()
    text = str(err.value)
    assert "every component is asleep while messages are pending" in text
    assert "  top.a holds 1 message(s)" in text and "  top.b holds 1 message(s)" in text
    assert "  top.a waits on top.b (it holds work)" in text
    assert "wait cycle: top.a -> top.b -> top.a" in text
    assert not sim.tracing


def test_watchdog_deadline_moves_with_each_transfer():
    top = Component("top", clock=ClockDomain("clk", 1000))
    producer = Producer("src", top, count=1)
    consumer = Consumer("c", top)
    connect(producer.out, consumer.inp, latency=5)
    sim = Simulator(top, watchdog_cycles=100)
    assert sim.watchdog_deadline_ps == 100_000
    sim.run()
    assert sim.watchdog_deadline_ps == 5000 + 100_000  # the message was taken at cycle 5


@model(catalogue=False)
class Settler(Component):
    """Counts ticks and the runs that returned; fails at cycle ``fail_at``."""

    fail_at = Param(int, -1, "cycle to raise a model error at (-1: never)")

    def setup(self):
        self.settled: list = []

    def tick(self):
        if self.cycle == self.fail_at:
            self.fail("planned failure")
        if self.cycle == 20:
            self.sleep()

    def settle(self):
        self.settled.append(self.now)


def test_settle_is_called_whenever_a_run_returns_even_with_an_error():
    top = Component("top", clock=ClockDomain("clk", 1000))
    settler = Settler("s", top)
    sim = Simulator(top)
    sim.run(cycles=5)
    sim.run()
    assert settler.settled == [4000, 20_000]  # at the limit, then quiescent
    top = Component("top", clock=ClockDomain("clk", 1000))
    failing = Settler("s", top, fail_at=7)
    with pytest.raises(ModelAssertion):
        Simulator(top).run()
    assert failing.settled == [7000]


def test_started_says_whether_the_first_run_has_begun():
    chain = Stage("s")
    sim = Simulator(chain)
    assert not sim.started
    sim.run(cycles=2)
    assert sim.started


@model(catalogue=False)
class Dozer(Component):
    """Stays awake but dozes ``span`` cycles after each tick (Component.doze_until), taking
    what arrives; asks for a wake-up at cycle ``alarm`` (if >= 0) at its first tick, and
    falls asleep for good at cycle ``until``. Logs its ticks and what it took."""

    span = Param(int, 10, "cycles it dozes after a tick")
    alarm = Param(int, -1, "a cycle it asks to be woken at (-1: none)")
    until = Param(int, 60, "the cycle it falls asleep at")
    inp = In("integers", required=False)

    def setup(self):
        self.ticked = []
        self.log = []

    def tick(self):
        if self.now < self.doze_end_ps:
            return
        c = self.cycle
        self.ticked.append(c)
        if self.inp.connected and self.inp.valid:
            self.log.append((c, self.inp.recv()))
        if c == 0 and self.alarm >= 0:
            self.wake_at(self.alarm * self.domain.period_ps)
        if c >= self.until:
            self.sleep()
        else:
            self.doze_until(self.now + self.span * self.domain.period_ps)


@model(catalogue=False)
class LateProducer(Component):
    """Sends 0..count-1 from cycle ``first``, one each ``every`` cycles, sleeping between."""

    first = Param(int, 3, "the first send's cycle")
    every = Param(int, 7, "cycles between sends")
    count = Param(int, 2, "messages")
    out = Out("integers")

    def setup(self):
        self.sent = 0

    def tick(self):
        if self.cycle < self.first:
            self.sleep_for(self.first - self.cycle)
        elif self.sent < self.count and self.out.try_send(self.sent):
            self.sent += 1
            self.sleep_for(self.every)
        else:
            self.sleep()


def test_a_dozing_component_works_at_the_end_of_each_doze_and_stops_when_it_sleeps():
    """Dozing 10 cycles after each tick, it works at 0, 10, 20..., and falling asleep ends
    it for good. Alone in its clock domain, it is ticked only where its dozes end: the
    kernel skips the edges where every awake component of a domain dozes."""
    top = Component("top")
    dozer = Dozer("d", top, span=10, until=30)
    sim = Simulator(top)
    sim.run(cycles=25)
    assert dozer.ticked == [0, 10, 20]
    assert sim.ticks == 3
    assert sim.now == 24_000  # (time reaches the limit though nothing happens there)
    sim.run()
    assert dozer.ticked == [0, 10, 20, 30]
    assert sim.now == 30_000


@pytest.mark.parametrize("same_clock", [True, False])
def test_a_doze_is_skipped_only_where_its_whole_clock_domain_dozes(same_clock):
    """A chain of stages awake at every edge of the dozer's clock keeps it ticked there
    (returning at once): 25 + 4 x 25 ticks in 25 cycles. On a clock of its own (3 ns, the
    dozer's 1 ns), the chain ticks at its 9 edges up to 24 ns and the dozer only where its
    dozes end; the chain's values are the same either way."""
    top = Component("top")
    dozer = Dozer("d", top, span=10, until=30)
    clock = top.domain if same_clock else ClockDomain("slow", 3000)
    stages = [Stage(f"s{i}", top, clock=clock) for i in range(4)]
    for before, after in zip(stages, stages[1:]):
        after.upstream = before.r
    sim = Simulator(top)
    sim.run(cycles=25)
    assert dozer.ticked == [0, 10, 20]
    edges = 25 if same_clock else 9
    assert sim.ticks == (25 if same_clock else 3) + 4 * edges
    assert [s.r.value for s in stages] == [edges] * 4


def test_a_message_or_a_wake_up_ends_a_doze_at_its_edge():
    """A message sent at cycle 3 arrives at 5 (latency 2) and one sent at 10 at 12: each
    ends the doze at its arrival; a wake-up asked for cycle 7 ends the doze then."""
    top = Component("top")
    producer = LateProducer("p", top, first=3, every=7, count=2)
    dozer = Dozer("d", top, span=10, until=30)
    connect(producer.out, dozer.inp, latency=2)
    Simulator(top).run()
    assert dozer.log == [(5, 0), (12, 1)]
    assert dozer.ticked == [0, 5, 12, 22, 32]
    top = Component("top")
    alarmed = Dozer("d", top, span=10, alarm=7, until=30)
    Simulator(top).run()
    assert alarmed.ticked == [0, 7, 17, 27, 37]


def test_a_message_from_another_clock_ends_a_doze_at_its_arrival():
    """The producer on a 2 ns clock sends at 6 and 20 ns; with a latency of 2 of the
    dozer's 1 ns cycles after its next edge, they arrive at 8 and 22 ns, where the dozer
    (dozing 10 cycles after each tick, alone on its clock) is ticked, and only there and at
    its dozes' ends: 5 ticks, and the producer's 4."""
    top = Component("top")
    producer = LateProducer("p", top, first=3, every=7, count=2, clock=ClockDomain("slow", 2000))
    dozer = Dozer("d", top, span=10, until=30)
    connect(producer.out, dozer.inp, latency=2)
    sim = Simulator(top)
    sim.run()
    assert dozer.log == [(8, 0), (22, 1)]
    assert dozer.ticked == [0, 8, 18, 22, 32]
    assert sim.ticks == 5 + 4


@model(catalogue=False)
class Asker(Component):
    """Records at each tick whether the edge of ``of``'s clock domain at this time point is
    still being ticked (Simulator.edge_pending)."""

    def setup(self):
        self.of = None
        self.seen = []

    def tick(self):
        self.seen.append((self.now // 1000, self.sim.edge_pending(self.of)))


@pytest.mark.parametrize("same_clock", [True, False])
def test_an_edge_is_pending_while_its_domain_ticks_and_not_where_the_domain_skips_it(same_clock):
    """On the dozer's clock the asker sees the edge pending at each of its ticks (the
    domain's ticks are not over while it ticks). On a 3 ns clock of its own it never does:
    where the dozer's 1 ns domain ticks too (0 and 30 ns) that domain, the top's, ticks
    first; elsewhere the dozer dozes alone and its domain skips the time point. Between
    runs no edge is pending."""
    top = Component("top")
    dozer = Dozer("d", top, span=10, until=30)
    asker = Asker("a", top, clock=None if same_clock else ClockDomain("slow", 3000))
    asker.of = dozer
    sim = Simulator(top)
    sim.run(until_ps=31_000)
    assert dozer.ticked == [0, 10, 20, 30]
    every = 1 if same_clock else 3
    assert asker.seen == [(t, same_clock) for t in range(0, 32, every)]
    assert not sim.edge_pending(dozer)


@model(catalogue=False)
class DozingSender(Component):
    """Sends 0..count-1 while the channel takes them, dozing 50 cycles when it refuses one."""

    count = Param(int, 3, "messages")
    out = Out("integers")

    def setup(self):
        self.sent_at = []

    def tick(self):
        if self.now < self.doze_end_ps:
            return
        if len(self.sent_at) == self.count:
            self.sleep()
        elif self.out.try_send(len(self.sent_at)):
            self.sent_at.append(self.cycle)
        else:
            self.doze_until(self.now + 50 * self.domain.period_ps)


@model(catalogue=False)
class TakeAndSleep(Component):
    """Takes a message where one has arrived, and falls asleep at every edge (an arrival
    wakes it); logs (time, message)."""

    inp = In("integers")

    def setup(self):
        self.log: list[tuple[int, int]] = []

    def tick(self):
        if self.inp.valid:
            self.log.append((self.now, self.inp.recv()))
        self.sleep()


@pytest.mark.parametrize("receiver", [Consumer, TakeAndSleep])
def test_a_credit_returning_to_a_refused_port_ends_a_doze(receiver):
    """One credit: the second message is refused at cycle 1, its credit back after the
    receiver takes the first there; the sender's doze ends at the next edge, 2, not 51,
    also where the receiver falls asleep as it takes and so leaves the sender dozing
    alone on the clock (the kernel skips the edges where every awake component dozes)."""
    top = Component("top")
    sender = DozingSender("s", top, count=3)
    consumer = receiver("c", top)
    connect(sender.out, consumer.inp, latency=1, capacity=1)
    Simulator(top).run()
    assert sender.sent_at == [0, 2, 4]
    assert [t // 1000 for t, _ in consumer.log] == [1, 3, 5]
