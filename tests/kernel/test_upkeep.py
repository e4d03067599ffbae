"""Upkeep wake-ups (a refresh with nothing outstanding): they keep happening while anything
else does, and a system with nothing else left to do is quiescent, not busy for ever."""

from archmodel.kernel import Component, Simulator, model


@model(catalogue=False)
class Refresher(Component):
    """Does upkeep every 10 cycles, for ever; logs the cycles it did."""

    def setup(self):
        self.done_at: list[int] = []

    def tick(self):
        self.done_at.append(self.cycle)
        self.sleep()
        self.wake_for_upkeep_at(self.now + 10 * self.domain.period_ps)


@model(catalogue=False)
class Alarm(Component):
    """Ticks once at cycle 0 and once at cycle ``at``, then sleeps for good."""

    def setup(self):
        self.ticked_at: list[int] = []

    def tick(self):
        self.ticked_at.append(self.cycle)
        self.sleep()
        if len(self.ticked_at) == 1:
            self.wake_at(self.now + 35 * self.domain.period_ps)


def test_upkeep_alone_is_quiescent_at_once():
    top = Component("top")
    refresher = Refresher("r", top)
    result = Simulator(top).run()
    assert result.reason == "quiescent" and result.time_ps == 0
    assert refresher.done_at == [0]


def test_upkeep_goes_on_while_something_else_is_due_and_stops_with_it():
    top = Component("top")
    refresher, alarm = Refresher("r", top), Alarm("a", top)
    result = Simulator(top).run()
    assert alarm.ticked_at == [0, 35]
    assert refresher.done_at == [0, 10, 20, 30]  # the one due at 40 is past everything else
    assert result.reason == "quiescent" and result.time_ps == 35_000


def test_a_run_limit_still_takes_time_through_upkeep():
    top = Component("top")
    refresher = Refresher("r", top)
    sim = Simulator(top)
    assert sim.run(cycles=25).reason == "quiescent"  # nothing but upkeep: no reason to go on
    assert refresher.done_at == [0]


def test_the_next_event_counts_upkeep():
    top = Component("top")
    Refresher("r", top)
    sim = Simulator(top)
    sim.run(until_ps=0)
    assert sim.next_event_ps() == 10_000
