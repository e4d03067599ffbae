"""What the kernel shows an observer (a tracer): a register's next value before the commit,
the observer's own handle on a register, and a traced channel's edges."""

from archmodel.kernel import ClockDomain, Component, Simulator, connect, model

from .components import Consumer, Producer


@model(catalogue=False)
class Doubler(Component):
    """Doubles its register at every edge for three edges, setting it twice at the second."""

    def setup(self):
        self.x = self.register("x", 1)

    def tick(self):
        if self.cycle == 1:
            self.x.set(-5)  # overwritten: only the last value set counts
        if self.cycle < 3:
            self.x.set(self.x.value * 2)
        else:
            self.sleep()


class Recorder:
    """An observer that logs what it sees at each commit."""

    def __init__(self, channel=None):
        self.channel = channel
        self.registers_seen: list[tuple[int, list]] = []
        self.channels_seen: list[tuple] = []

    def begin(self, sim):
        if self.channel is not None:
            self.channel.traced = True

    def registers(self, t, dirty):
        self.registers_seen.append((t, [(reg.name, reg.value, reg.next) for reg in dirty]))

    def channels(self, t, touched):
        for ch in touched:
            self.channels_seen.append((t, ch.offered, ch.fired, ch.took, ch.payload, ch.credits, ch.occupancy))

    def flush(self, sim):
        pass


def test_next_is_the_value_after_this_edge_and_observers_see_it_before_the_commit():
    top = Component("top", clock=ClockDomain("clk", 1000))
    doubler = Doubler("d", top)
    sim = Simulator(top)
    recorder = Recorder()
    sim.add_observer(recorder)
    assert doubler.x.next == doubler.x.value == 1
    sim.run()
    assert recorder.registers_seen == [(0, [("x", 1, 2)]), (1000, [("x", 2, 4)]), (2000, [("x", 4, 8)])]
    assert doubler.x.value == doubler.x.next == 8


def test_the_kernel_leaves_an_observers_register_handle_alone():
    top = Component("top", clock=ClockDomain("clk", 1000))
    doubler = Doubler("d", top)
    assert doubler.x.var is None
    handle = object()
    doubler.x.var = handle
    Simulator(top).run()
    assert doubler.x.var is handle and doubler.x.value == 8


def channel_design():
    top = Component("top", clock=ClockDomain("clk", 1000))
    producer = Producer("p", top, count=2)
    consumer = Consumer("c", top)
    return top, connect(producer.out, consumer.inp, latency=1, capacity=1)


def test_a_traced_channel_reports_its_edges_after_the_commit():
    top, channel = channel_design()
    sim = Simulator(top)
    recorder = Recorder(channel)
    sim.add_observer(recorder)
    sim.run()
    # (t, offered, fired, took, payload, credits, occupancy): sent at 0, taken at 1000 (the
    # credit is back after that commit), the sender blocked at 1000 (no credit yet: offered,
    # not fired), sent at 2000, taken at 3000.
    assert recorder.channels_seen == [
        (0, True, True, False, 0, 0, 1),
        (1000, True, False, True, 1, 1, 0),
        (2000, True, True, False, 1, 0, 1),
        (3000, False, False, True, 1, 1, 0),
    ]
    assert not (channel.offered or channel.fired or channel.took)  # cleared once observed


def test_an_untraced_channel_is_not_reported():
    top, channel = channel_design()
    sim = Simulator(top)
    recorder = Recorder()
    sim.add_observer(recorder)
    sim.run()
    assert recorder.channels_seen == []


class Committer(Recorder):
    """An observer that takes the kernel's commit over: it logs, then commits itself (and
    settles the channels), so the kernel must not do either."""

    def __init__(self, channel=None):
        super().__init__(channel)
        self.commits = 0
        self.settled = 0

    def commit_registers(self, t, dirty):
        self.registers(t, dirty)
        self.commits += 1
        for reg in dirty:
            reg.value = reg.next
            reg.queued = False

    def settle_channels(self, t, touched):
        self.channels(t, touched)
        self.settled += 1
        for ch in touched:
            ch.marked = ch.offered = ch.fired = ch.took = False


def test_an_observer_may_take_the_commit_over_and_the_others_see_the_registers_first():
    top = Component("top", clock=ClockDomain("clk", 1000))
    doubler = Doubler("d", top)
    sim = Simulator(top)
    first, committer, second = Recorder(), Committer(), Committer()
    for observer in (first, committer, second):
        sim.add_observer(observer)
    sim.run()
    seen = [(0, [("x", 1, 2)]), (1000, [("x", 2, 4)]), (2000, [("x", 4, 8)])]
    # the second committer is only shown the registers, before the commit like the first
    assert first.registers_seen == committer.registers_seen == second.registers_seen == seen
    assert (committer.commits, second.commits) == (3, 0)
    assert doubler.x.value == 8 and not doubler.x.queued


def test_a_register_left_uncommitted_by_the_committing_observer_keeps_its_value():
    top = Component("top", clock=ClockDomain("clk", 1000))
    doubler = Doubler("d", top)
    sim = Simulator(top)

    class Idle(Recorder):
        def commit_registers(self, t, dirty):
            self.registers(t, dirty)

    sim.add_observer(Idle())
    sim.run(cycles=1)
    assert (doubler.x.value, doubler.x.next) == (1, 2)  # the kernel left the commit to the observer


def test_an_observer_may_settle_the_channels_used():
    top, channel = channel_design()
    sim = Simulator(top)
    recorder, committer = Recorder(channel), Committer()
    sim.add_observer(committer)
    sim.add_observer(recorder)
    sim.run()
    assert recorder.channels_seen == [
        (0, True, True, False, 0, 0, 1),
        (1000, True, False, True, 1, 1, 0),
        (2000, True, True, False, 1, 0, 1),
        (3000, False, False, True, 1, 1, 0),
    ]
    assert committer.settled == 4 and committer.channels_seen == recorder.channels_seen
    assert not (channel.offered or channel.fired or channel.took or channel.marked)
