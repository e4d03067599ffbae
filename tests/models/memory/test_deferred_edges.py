"""A channel with the compiled core, fed through its ports, defers its cycles with work until
an answer's due cycle when nothing else can see them (``SchedulesAhead._deferring``): it works
at fewer edges, and sends the same answers at the same picoseconds, issues the same commands
and ends with the same statistics as edge by edge (the Python path, cycle by cycle), also
when a run returns in the middle of a deferral (``settle``) and when the lookahead asks its
bounds then (the bounds stay conservative)."""

import random

import pytest

from archmodel.kernel import Component, Simulator, connect, model
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import DramController, DramTimingChecker, compiled_core
from archmodel.models.memory.schedule_ahead import SchedulesAhead
from archmodel.models.memory.timing import dram_clock, preset

from .test_compiled_ports import _requests
from .test_splitting import responses_never_before_their_bounds

CLIENTS = ("a", "b", "c")


@model(catalogue=False)
class Prober(Component):
    """Asks a controller's bounds on its answers at every edge, as the lookahead of another
    model would during a run: (time, client, bound, the soonest its next request can arrive)
    in ``marks``. ``requests`` and ``cycles`` are the source's list."""

    def setup(self):
        self.marks: list = []
        self.dram = None
        self.requests: list = []
        self.cycles: list = []

    def tick(self):
        dram, t = self.dram, self.now
        period = dram.domain.period_ps
        channel = dram.req.channel
        sent = channel.sent  # (the source sends its list in order, held back while the queue is full)
        for client in CLIENTS:
            due = [max((c + 2) * period, t + 1) for c, r in zip(self.cycles[sent:], self.requests[sent:])
                   if r.source == client]
            flight = [a for a, m in channel.flight if m.source == client and a > t]
            self.marks.append((t, client, dram.earliest_answer_ps(client), min(due + flight, default=None)))
        dram.earliest_send_ps(dram.resp)  # (the bound for any client, asked too)


def _system(engine, requests, cycles, probe=False, stop=True, **params):
    standard = "HBM2E"
    top = Component("top", clock=dram_clock(preset(standard)))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, engine=engine,
                          **({"lookahead_cycles": 0} if engine == "python" else {}), **params)
    sink = Sink("sink", top, stop_after=len(requests) if stop else None)
    checker = DramTimingChecker("checker", top, standard=standard)
    checker.watch(dram)  # a listener: the command bus stays unconnected
    commands = []
    dram.add_command_listener(lambda *fields: commands.append(fields))
    connect(src.out, dram.req, latency=2)
    connect(dram.resp, sink.inp, latency=2)
    prober = None
    if probe:
        prober = Prober("prober", top)
        prober.dram, prober.requests, prober.cycles = dram, requests, cycles
    return top, dram, sink, checker, commands, prober


def _workload(seed, count=120):
    """Reads of a few bursts from three clients, in bursts of requests (so answers are
    pending while commands issue), a fifth of them writes."""
    requests = _requests(seed, count, 1 << 16, 0, (32, 64, 256), 0.2, CLIENTS)
    rng = random.Random(seed)
    cycles, at = [], 0
    for _ in requests:
        at += rng.choice((0, 0, 0, 1, 40))
        cycles.append(at)
    return requests, cycles


def _run(engine, requests, cycles, slices=None, probe=False, deferring=True, monkeypatch=None, **params):
    if not deferring:
        monkeypatch.setattr(compiled_core.CompiledCore, "answer_cycles", property(lambda self: 0))
    top, dram, sink, checker, commands, prober = _system(engine, requests, cycles, probe=probe, **params)
    sim = Simulator(top)
    deferred = []
    seen = []  # the statistics after each slice of the run
    if slices is None:
        result = sim.run()
    else:
        t = 0
        while True:
            t += slices
            result = sim.run(until_ps=t)
            seen.append([(stat.path, stat.summary()) for stat in sim.all_stats() if stat.path.startswith("top.dram")])
            deferred.append(dram._deferring)
            if result.reason != "limit":
                break
    if not deferring:
        monkeypatch.undo()
    assert checker.violation_count.value == 0
    return dict(end=(result.reason, result.time_ps), commands=commands, seen=seen, deferred=deferred,
                arrivals=[(a.time_ps, a.message.source, a.message.tag, a.message.data) for a in sink.arrivals],
                stats=[(stat.path, stat.summary()) for stat in sim.all_stats() if not stat.path.startswith(
                    "top.prober")],
                ticks=sim.ticks, dram=dram, sink=sink, prober=prober)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_deferring_works_at_fewer_edges_and_changes_nothing_else(seed, monkeypatch):
    assert compiled_core.available(), "numba is not installed: pip install numba"
    requests, cycles = _workload(seed)
    reference = _run("python", requests, cycles)
    edge_by_edge = _run("compiled", requests, cycles, deferring=False, monkeypatch=monkeypatch)
    deferring = _run("compiled", requests, cycles)
    for run in (edge_by_edge, deferring):
        for key in ("end", "commands", "arrivals", "stats"):
            assert run[key] == reference[key], key
    assert deferring["ticks"] < edge_by_edge["ticks"] <= reference["ticks"]


@pytest.mark.parametrize("seed", [4, 5])
def test_a_run_returning_while_deferring_settles_the_cycles_its_edges_would_have_done(seed):
    """Runs in slices of 37 ns (ending between edges and at them, HBM2E's tCK being 625 ps):
    after each slice the controller's statistics are those of the cycle-by-cycle Python path
    at that time, though it returned in the middle of a deferral in some of them."""
    requests, cycles = _workload(seed)
    reference = _run("python", requests, cycles, slices=37_000)
    deferring = _run("compiled", requests, cycles, slices=37_000)
    assert deferring["seen"] == reference["seen"]
    assert deferring["commands"] == reference["commands"] and deferring["arrivals"] == reference["arrivals"]
    assert sum(deferring["deferred"]) > 0  # (some slices ended while the controller deferred)


@pytest.mark.parametrize("seed", [6, 7])
def test_bounds_asked_while_deferring_are_kept_and_change_nothing(seed):
    """A model asking the controller's bounds at every edge (the lookahead of a cluster would,
    at any time) finds them no later than the answers that follow, and its questions change
    nothing the controller does (they decide the cycles deferred up to then, no more)."""
    requests, cycles = _workload(seed)
    reference = _run("python", requests, cycles)
    probed = _run("compiled", requests, cycles, probe=True)
    for key in ("end", "commands", "arrivals", "stats"):
        assert probed[key] == reference[key], key
    dram, sink = probed["dram"], probed["sink"]
    # (answers reach the sink two cycles, the link's latency, after they leave)
    checked, exact = responses_never_before_their_bounds(probed["prober"].marks, sink, 2 * dram.domain.period_ps,
                                                         dram.reaction_ps(dram.req, dram.resp))
    assert checked > 100 and exact > 0


@pytest.mark.parametrize("seed, standard, sizes, queue", [(92, "DDR4-2400R", (32, 64, 256), 3),
                                                          (94, "HBM2E", (32, 64), 2),
                                                          (129, "DDR4-2400R", (32, 64), 3)])
def test_a_request_arriving_while_deferring_waits_for_the_edge_it_would_have_entered_at(seed, standard, sizes,
                                                                                          queue):
    """A request that arrives during a deferral and finds the queue full enters at the first
    edge the controller works at after a burst leaves (as on the Python path): among them the
    edge the last cycle deferred would have slept until, which the controller asks for when
    the deferral ends (these runs, found by a search, differ from the Python path without it)."""
    from .test_compiled_ports import _run as run_through_ports

    rng = random.Random(seed)
    assert (rng.choice(["HBM2E", "DDR4-2400R"]), rng.choice([(32, 64), (64,), (32, 64, 256)]),
            rng.choice([1, 2, 3])) == (standard, sizes, queue)
    requests = _requests(seed, 60, 1 << 14, 0, sizes, rng.choice([0.0, 0.2]), CLIENTS)
    cycles, at = [], 0
    for _ in requests:
        at += rng.choice((0, 0, 1, 3, 30))
        cycles.append(at)
    params = dict(read_queue=queue, write_queue=max(2, queue))
    reference = run_through_ports("reference", standard, requests, cycles, 0.0, seed, **params)
    compiled = run_through_ports("compiled", standard, requests, cycles, 0.0, seed, **params)
    for key in ("end", "commands", "arrivals", "stats"):
        assert compiled[key] == reference[key], key
    assert compiled["ticks"] < reference["ticks"]


def test_cycles_with_work_more_than_an_answer_before_the_next_answer_are_deferred_too(monkeypatch):
    """While the next answer is due more than ``answer_cycles`` (a read's RD to its data,
    the soonest answer a cycle can decide) after the next cycle with work, the controller
    defers that many cycles at a time, each deferral ending before the answer is due; the
    results are the reference's, at fewer edges than edge by edge."""
    requests, cycles = _workload(9)
    short_of_the_answer = []  # the edges that began a deferral ending before the next answer
    original = SchedulesAhead._tick_ports

    def watched(self, c):
        original(self, c)
        if self._deferring and self._deferred_until < self._order.due:
            short_of_the_answer.append(c)

    reference = _run("python", requests, cycles)
    edge_by_edge = _run("compiled", requests, cycles, deferring=False, monkeypatch=monkeypatch)
    monkeypatch.setattr(SchedulesAhead, "_tick_ports", watched)
    deferring = _run("compiled", requests, cycles)
    for run in (edge_by_edge, deferring):
        for key in ("end", "commands", "arrivals", "stats"):
            assert run[key] == reference[key], key
    assert len(short_of_the_answer) > 20 and deferring["ticks"] < edge_by_edge["ticks"]


@pytest.mark.parametrize("seed", [1, 9])
def test_a_catch_up_decides_its_cycles_past_the_requests_that_complete_in_them(seed, monkeypatch):
    """The cycles a deferral passed over are decided with no response sent among them, so a
    call of the core catching them up goes on past a request's completion (CATCHING_UP)
    rather than stopping after it: each ends with no work left up to its last cycle, and
    some complete requests; the results are the reference's."""
    requests, cycles = _workload(seed)
    calls = []  # (the call's last cycle, its next cycle with work, requests completed) while catching up
    catching_up = []
    original_catch_up, original_schedule = SchedulesAhead._catch_up, compiled_core.CompiledCore.schedule

    def catch_up(self, last):
        catching_up.append(True)
        original_catch_up(self, last)
        catching_up.pop()

    def schedule(self, first, last, head=-1):
        result = original_schedule(self, first, last, head)
        if catching_up:
            calls.append((last, result[0], len(result[5])))
        return result

    reference = _run("python", requests, cycles)
    monkeypatch.setattr(SchedulesAhead, "_catch_up", catch_up)
    monkeypatch.setattr(compiled_core.CompiledCore, "schedule", schedule)
    deferring = _run("compiled", requests, cycles)
    for key in ("end", "commands", "arrivals", "stats"):
        assert deferring[key] == reference[key], key
    assert all(wake > last for last, wake, _ in calls)
    assert sum(done for *_, done in calls) > 3


def _left_over_edges(monkeypatch) -> list:
    """Count the controller's ticks at wake-ups left over from deferrals that edge-by-edge
    work would not have had (each an entry)."""
    seen: list = []
    original = SchedulesAhead._left_over_only

    def counted(self, c):
        only = original(self, c)
        if only:
            seen.append(c)
        return only

    monkeypatch.setattr(SchedulesAhead, "_left_over_only", counted)
    return seen


@pytest.mark.parametrize("seed", [5, 15, 18, 27, 31, 35])
def test_a_wake_up_left_over_from_a_deferral_an_arrival_ended_takes_no_request(seed, monkeypatch):
    """Requests in bursts onto small queues: arrivals end deferrals early, and the wake-ups
    those deferrals asked for still come (a wake-up is never taken back). At such an edge
    a request waiting for room must not enter unless edge-by-edge work would have ticked
    there too (it enters at the first edge the controller works at once there is room): the
    commands, answers and statistics are the cycle-by-cycle reference's. (Seeds from a
    search: these runs differ from the reference when the controller works at every edge it
    ticks at.)"""
    from .test_compiled_ports import _run as run_through_ports

    rng = random.Random(seed)
    standard = rng.choice(["HBM2E", "DDR4-2400R"])
    requests = _requests(seed, 80, 1 << 14, 0, rng.choice([(32, 64), (64,), (32, 64, 256)]), 0.2, CLIENTS)
    cycles, at = [], 0
    for _ in requests:
        at += rng.choice((0, 0, 1, 3, 30))
        cycles.append(at)
    queue = rng.choice([1, 2, 3])
    params = dict(read_queue=queue, write_queue=max(2, queue))
    reference = run_through_ports("reference", standard, requests, cycles, 0.0, seed, **params)
    left_over = _left_over_edges(monkeypatch)
    compiled = run_through_ports("compiled", standard, requests, cycles, 0.0, seed, **params)
    for key in ("end", "commands", "arrivals", "stats"):
        assert compiled[key] == reference[key], key
    assert left_over  # (each of these runs has such edges)


def _idle_edges(monkeypatch) -> list:
    """Count the controller's edges at which it holds nothing (no burst queued, no answer
    owed) and no request arrives: its work there is upkeep (refresh) only."""
    seen: list = []
    original = SchedulesAhead._tick_ports

    def counted(self, c):
        if self.idle and not self.req.valid:
            seen.append(c)
        original(self, c)

    monkeypatch.setattr(SchedulesAhead, "_tick_ports", counted)
    return seen


@pytest.mark.parametrize("refresh", ["all_bank", "per_bank"])
@pytest.mark.parametrize("stop", [True, False])
def test_refresh_while_idle_is_deferred_as_upkeep_and_changes_nothing_else(refresh, stop, monkeypatch):
    """Two bursts of requests 20,000 cycles apart: in between the channel holds nothing and
    refreshes. It defers that upkeep too (``lookahead_cycles`` past the next cycle with
    work, on a wake-up for upkeep only), at fewer edges than edge by edge; the answers,
    commands, statistics and the run's end are the reference's, also when nothing stops the
    run (it ends quiescent once only upkeep is left, at the same time) and when it runs in
    slices (the statistics after each are the reference's)."""
    requests, cycles = _workload(3, count=60)
    cycles = cycles[:30] + [c + 20_000 for c in cycles[30:]]
    reference = _run("python", requests, cycles, stop=stop, refresh=refresh)
    edge_by_edge_idle = _idle_edges(monkeypatch)
    edge_by_edge = _run("compiled", requests, cycles, deferring=False, monkeypatch=monkeypatch, stop=stop,
                        refresh=refresh)
    deferring_idle = _idle_edges(monkeypatch)
    deferring = _run("compiled", requests, cycles, stop=stop, refresh=refresh)
    for run in (edge_by_edge, deferring):
        for key in ("end", "commands", "arrivals", "stats"):
            assert run[key] == reference[key], key
    assert deferring["end"][0] == ("stopped" if stop else "quiescent")
    # (an all-bank refresh's few commands every tREFI take an edge or two either way; a
    # per-bank refresh's, every tREFIpb, fewer)
    assert len(deferring_idle) <= len(edge_by_edge_idle)
    if refresh == "per_bank":
        assert len(deferring_idle) * 2 < len(edge_by_edge_idle)
    sliced = _run("compiled", requests, cycles, slices=211_000, stop=stop, refresh=refresh)
    assert sliced["seen"] == _run("python", requests, cycles, slices=211_000, stop=stop, refresh=refresh)["seen"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_deferral_ending_at_its_own_wake_up_leaves_no_wake_up_that_cuts_the_next_one_short(seed, monkeypatch):
    """Writes only, all sent at once, on a run nothing stops: with no answer to come the
    channel defers ``answer_cycles`` at a time while its queue lasts, a deferral ending at
    its own wake-up and the next beginning there. The wake-up edge-by-edge work would have
    asked after the cycles deferred is asked by that edge itself, or, when it defers
    again, by an arrival that ends the deferral: no deferral ends before its own wake-up
    with nothing arrived and no answer due (before, each such wake-up ended the next
    deferral at its first cycle with work). The results are the reference's."""
    from .test_compiled_ports import _requests

    requests = _requests(seed, 16, 1 << 22, 0, (256,), 1.0, CLIENTS)
    cycles = [0] * len(requests)
    own_end, cut_short = [], []
    original = SchedulesAhead._end_deferral

    def watched(self, c):
        if c == self._deferred_until:
            own_end.append(c)
        elif not self.req.valid and self._order.due != c:
            cut_short.append(c)
        original(self, c)

    reference = _run("python", requests, cycles, stop=False)
    monkeypatch.setattr(SchedulesAhead, "_end_deferral", watched)
    deferring = _run("compiled", requests, cycles, stop=False)
    for key in ("end", "commands", "arrivals", "stats"):
        assert deferring[key] == reference[key], key
    assert len(own_end) > 4 and not cut_short


@pytest.mark.parametrize("seed", [1, 2])
def test_no_question_is_asked_for_cycles_the_edge_defers_anyway(seed, monkeypatch):
    """With every burst entered, no request waiting and the next answer due within
    ``answer_cycles`` of the next cycle with work, the edge defers the cycles up to the
    answer, which it works at either way: the controller asks the lookahead nothing then
    (a question could let it schedule no further), and the results are the reference's."""
    requests, cycles = _workload(seed)
    reference = _run("python", requests, cycles)
    asked, needless, questions = [], [], []
    original, question = SchedulesAhead._schedule_ahead, Simulator.undisturbed_until_ps

    def watched(self, c, wake):
        before = len(questions)
        covered = self._job is None and self._order.due <= wake + self._answer_cycles
        result = original(self, c, wake)
        if len(questions) > before:
            (needless if covered else asked).append(c)
        return result

    def counted(self, comp, *args):
        questions.append(comp)
        return question(self, comp, *args)

    monkeypatch.setattr(SchedulesAhead, "_schedule_ahead", watched)
    monkeypatch.setattr(Simulator, "undisturbed_until_ps", counted)
    deferring = _run("compiled", requests, cycles)
    for key in ("end", "commands", "arrivals", "stats"):
        assert deferring[key] == reference[key], key
    assert asked and not needless


def test_no_question_is_asked_when_no_answer_could_reach_the_short_horizon(monkeypatch):
    """With ``lookahead_cycles`` below the short horizon (4 cycles for the one source that
    reaches the controller), no answer could let it schedule far enough to pay for a
    question: it asks none and counts each chance as a short answer; the results are the
    reference's."""
    requests, cycles = _workload(1)
    reference = _run("python", requests, cycles)
    questions = []
    question = Simulator.undisturbed_until_ps

    def counted(self, comp, *args):
        questions.append(comp)
        return question(self, comp, *args)

    monkeypatch.setattr(Simulator, "undisturbed_until_ps", counted)
    short = _run("compiled", requests, cycles, lookahead_cycles=3)
    for key in ("end", "commands", "arrivals", "stats"):
        assert short[key] == reference[key], key
    dram = short["dram"]
    assert dram.short_horizon_cycles == 4 and not [comp for comp in questions if comp is dram]


@pytest.mark.parametrize("seed", [1, 9])
def test_a_deferral_ending_at_its_own_wake_up_decides_the_edges_cycle_in_the_same_call(seed, monkeypatch):
    """A deferral that ends at its own wake-up with nothing arrived has nothing enter at that
    edge's cycle, so the call of the core catching up the cycles passed over goes on to the
    edge's own cycle: no such edge calls the core twice, some catch-up calls end at their
    edge's cycle, and the results are the reference's."""
    requests, cycles = _workload(seed)
    calls: list = []  # (the edge's cycle, the call's last cycle, head, whether ending a deferral) of each call
    own_ends: list = []  # the cycles of edges ending a deferral at its own wake-up with nothing arrived
    ending: list = []
    original_schedule, original_end = compiled_core.CompiledCore.schedule, SchedulesAhead._end_deferral

    def schedule(self, first, last, head=-1):
        dram = self.dram
        calls.append(((dram.sim.now - dram.domain.phase_ps) // dram.domain.period_ps, last, head, bool(ending)))
        return original_schedule(self, first, last, head)

    def end_deferral(self, c):
        if c == self._deferred_until and not self.req.valid:
            own_ends.append(c)
        ending.append(c)
        try:
            return original_end(self, c)
        finally:
            ending.pop()

    reference = _run("python", requests, cycles)
    monkeypatch.setattr(compiled_core.CompiledCore, "schedule", schedule)
    monkeypatch.setattr(SchedulesAhead, "_end_deferral", end_deferral)
    deferring = _run("compiled", requests, cycles)
    for key in ("end", "commands", "arrivals", "stats"):
        assert deferring[key] == reference[key], key
    through_the_edge = [c for c, last, head, catching_up in calls if catching_up and last == c]
    assert len(through_the_edge) > 3 and set(through_the_edge) <= set(own_ends)
    for c in own_ends:  # (an edge catching up calls the core for its own cycle in that call only)
        at_c = [(last, head, catching_up) for edge, last, head, catching_up in calls if edge == c]
        assert not (any(catching_up for *_, catching_up in at_c) and (c, -1, False) in at_c)
