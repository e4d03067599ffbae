"""A DRAM channel's bound on its next answer to a client whose reads wait in its read queue,
counting the banks they need (answer_bounds.BoundsQueuedReads): never later than the answer,
on both engines, scheduling ahead or edge by edge, and exact where a bank's PRE, ACT or the
reads queued before to its row decide it."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import ClockDomain, Component, Simulator, connect, model
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import PRESETS, AddressMapping, DramController, DramTimingChecker
from archmodel.models.memory.timing import dram_clock
from archmodel.models.messages import MemRequest

from .test_deferred_edges import Prober
from .test_splitting import client_bound_marks, next_arrival_ps, responses_never_before_their_bounds

CLIENTS = "abcd"


def bank_traffic(seed: int, standard: str, count: int, writes: float = 0.15) -> tuple[list, list]:
    """``count`` requests of four clients to a few rows of four banks (hits, misses and
    conflicts), of one to three bursts, ``writes`` of them writes, and their cycles on the
    source."""
    rng = random.Random(seed)
    t = PRESETS[standard]
    mapping = AddressMapping(t)
    requests = []
    for tag in range(count):
        bursts = rng.choice([1, 1, 2, 3])
        column = rng.randrange(0, t.bursts_per_row - bursts)
        address = mapping.encode(bankgroup=rng.randrange(2), bank=rng.randrange(2), row=rng.randrange(3),
                                 column=column)
        size = bursts * t.burst_bytes
        source = rng.choice(CLIENTS)
        requests.append(client_request(address, size, source, tag, write=rng.random() < writes))
    cycles = sorted(rng.randrange(0, 6 * count) for _ in requests)
    return requests, cycles


def client_request(address: int, size: int, source: str, tag: int, write: bool) -> MemRequest:
    """A read, or a write of ``size`` zero bytes, of ``source``'s."""
    if write:
        return MemRequest(address=address, size_bytes=size, is_write=True, data=bytes(size), source=source, tag=tag)
    return MemRequest(address=address, size_bytes=size, source=source, tag=tag)


def bank_bound_marks(standard: str, requests: list, cycles: list, engine: str, ahead: bool, seed: int, link: int = 1,
                     **params):
    """Run Source -> controller (a link of ``link`` cycles) -> Sink 1 ps short of every edge
    and ask the controller's bound for each client there: ``(marks, sink, period,
    reaction)`` for :func:`~.test_splitting.responses_never_before_their_bounds`. ``ahead``:
    the controller schedules ahead (its checker listens; on ``engine``), else it works edge
    by edge (its command port connected: the Python path)."""
    top = Component("top", clock=dram_clock(PRESETS[standard]))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, engine=engine if ahead else "python", **params)
    sink = Sink("sink", top, stop_after=len(requests))
    checker = DramTimingChecker("checker", top, standard=standard)
    if ahead:
        checker.watch(dram)
    else:
        connect(dram.cmd, checker.cmd)
    connect(src.out, dram.req, latency=link)
    connect(dram.resp, sink.inp)
    period = PRESETS[standard].tCK_ps
    marks = client_bound_marks(Simulator(top, seed=seed), dram, CLIENTS, requests, cycles, period)
    assert len(sink.messages) == len(requests) and checker.violation_count.value == 0
    assert dram.engine_in_use == (engine if ahead else "python")
    return marks, sink, period, dram.reaction_ps(dram.req, dram.resp)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       engine=st.sampled_from(["python", "compiled"]), ahead=st.booleans(),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]), queue=st.sampled_from([4, 32]))
def test_no_answer_to_a_client_leaves_before_its_bound_counting_the_banks(seed, standard, engine, ahead, scheduler,
                                                                          queue):
    requests, cycles = bank_traffic(seed, standard, 48)
    marks, sink, period, reaction = bank_bound_marks(standard, requests, cycles, engine, ahead, seed,
                                                     scheduler=scheduler, read_queue=queue, write_queue=queue)
    checked, exact = responses_never_before_their_bounds(marks, sink, period, reaction)
    assert checked > 100 and exact > 10, (checked, exact)


FIRST_EXACT = {"DDR4-2400R": {"b": 22, "c": 22, "d": 5}, "HBM2E": {"b": 32, "c": 7, "d": 5}}
"""The first edge from which each client's bound is its answer in
:func:`test_reads_of_one_bank_are_bounded_by_its_precharge_activate_and_the_reads_before_them`."""


@pytest.mark.parametrize("engine, ahead", [("python", False), ("compiled", True)])
@pytest.mark.parametrize("standard", ["DDR4-2400R", "HBM2E"])
def test_reads_of_one_bank_are_bounded_by_its_precharge_activate_and_the_reads_before_them(standard, engine, ahead):
    """Edge by edge, or scheduling ahead: client a reads four bursts of row 1 of bank 0, then b one more burst of
    that row, d one of a closed bank of another bank group, c one of row 2 of bank 0 (one
    request every two cycles, each on a link of one cycle). b's bound counts a's RDs before
    its own (tCCD_L apart); c's the PRE after b's RD (tRTP after it, tRAS after the ACT),
    tRP, the ACT (while the bank is closed: its tRP) and tRCD; d's its bank's tRCD; each
    from the edge before its request arrives (on its way, it comes behind every burst
    queued: its bank terms count then; and the bank's queued reads of its open row before
    its PRE, FR-FCFS keeping the row open for them). Each is never later than the answer and
    is exact from the edge after the last command that the bound does not yet count
    (another bank's RD that takes the data bus first) until the answer."""
    t = PRESETS[standard]
    mapping = AddressMapping(t)
    requests = [MemRequest(address=mapping.encode(row=1), size_bytes=4 * t.burst_bytes, source="a", tag=0),
                MemRequest(address=mapping.encode(row=1, column=4), size_bytes=t.burst_bytes, source="b", tag=1),
                MemRequest(address=mapping.encode(bankgroup=1, row=5), size_bytes=t.burst_bytes, source="d", tag=2),
                MemRequest(address=mapping.encode(row=2), size_bytes=t.burst_bytes, source="c", tag=3)]
    marks, sink, period, reaction = bank_bound_marks(standard, requests, [0, 2, 4, 6], engine, ahead, 0)
    checked, exact = responses_never_before_their_bounds(marks, sink, period, reaction)
    answers = {a.message.source: a.time_ps - period for a in sink.arrivals}
    for client, first in FIRST_EXACT[standard].items():
        bounds = [bound for time, who, bound, _ in marks if who == client and first * period <= time + 1 <= answers[client]]
        assert bounds and set(bounds) == {answers[client]}, (client, bounds, answers[client])
        before = marks[[m[:2] for m in marks].index(((first - 1) * period - 1, client))][2]
        assert before is None or before < answers[client]


@pytest.mark.parametrize("engine, ahead", [("python", False), ("compiled", True)])
@pytest.mark.parametrize("standard", ["DDR4-2400R", "HBM2E"])
def test_a_read_on_its_way_is_bounded_by_its_entry_and_its_own_reads_to_its_row(standard, engine, ahead):
    """Client a reads a burst of row 1 of bank 0 (the row stays open), then b, its first
    request, two more bursts of that row, sent at cycle 60 over a link of four cycles. While
    b is on its way, its bound is its answer: its first RD no sooner than its arrival, its
    second tCCD_L after that (the bank reads a read's own earlier bursts to a row first),
    answered CL + tBL later; on the data bus alone it would be tBL after the first."""
    t = PRESETS[standard]
    mapping = AddressMapping(t)
    requests = [MemRequest(address=mapping.encode(row=1), size_bytes=t.burst_bytes, source="a", tag=0),
                MemRequest(address=mapping.encode(row=1, column=1), size_bytes=2 * t.burst_bytes, source="b", tag=1)]
    marks, sink, period, _ = bank_bound_marks(standard, requests, [0, 60], engine, ahead, 0, link=4)
    answer = next(a.time_ps for a in sink.arrivals if a.message.source == "b") - period
    assert answer == (64 + t.tCCD_L + t.CL + t.tBL) * period and t.tCCD_L > t.tBL
    on_its_way = [bound for time, who, bound, _ in marks if who == "b" and 60 * period < time < 64 * period]
    assert on_its_way == [answer] * 4  # (asked before edges 61 to 64, the last as it arrives)


def bounds_of(marks: list, client: str, period: int) -> dict:
    """Client ``client``'s bounds in ``marks``, by the edge they were asked before (in cycles)."""
    return {(t + 1) // period: None if bound is None else bound // period for t, who, bound, _ in marks
            if who == client}


@pytest.mark.parametrize("engine, ahead", [("python", False), ("compiled", True)])
def test_a_newcomer_waits_for_the_read_slots_of_the_line_ahead_of_it(engine, ahead):
    """A read queue of four: client a reads 8 bursts of one row at cycle 0 (four enter, four
    wait for slots), b writes a burst at cycle 1 and c reads two bursts of a closed bank at
    cycle 2. A read slot frees only at an RD, one per tBL at the most: b is taken once a's
    last four bursts have entered, after four RDs, and acknowledged the cycle after; c's
    last burst waits for six (a's four and its own first two), and is read at an RD after
    them, CL + tBL before its answer. Until a's first RD (after its ACT and tRCD) the bounds
    are those, from each edge; counting the line as the queues alone (a slot free at the
    next edge) they would be the next edges."""
    t = PRESETS["DDR4-2400R"]
    mapping = AddressMapping(t)
    requests = [client_request(mapping.encode(row=1), 8 * t.burst_bytes, "a", 0, False),
                client_request(mapping.encode(bank=1, row=2), t.burst_bytes, "b", 1, True),
                client_request(mapping.encode(bankgroup=1, row=3), 2 * t.burst_bytes, "c", 2, False)]
    marks, sink, period, reaction = bank_bound_marks("DDR4-2400R", requests, [0, 1, 2], engine, ahead, 0,
                                                     read_queue=4)
    responses_never_before_their_bounds(marks, sink, period, reaction)
    first_rd = 1 + t.tRCD
    b, c = bounds_of(marks, "b", period), bounds_of(marks, "c", period)
    assert [b[edge] for edge in range(2, first_rd)] == [edge + 3 * t.tBL + 1 for edge in range(2, first_rd)]
    assert [c[edge] for edge in range(3, first_rd)] == [edge + 6 * t.tBL + t.CL + t.tBL for edge in range(3, first_rd)]


@pytest.mark.parametrize("engine, ahead", [("python", False), ("compiled", True)])
def test_a_read_waits_for_a_write_drain_to_reach_its_low_watermark(engine, ahead):
    """A write queue of eight (a drain from seven writes down to one): client a reads 16
    bursts of one row at cycle 0, b writes eight bursts of another bank at cycle 2 (the
    drain starts with a's reads waiting), c reads a burst of a closed bank of another bank
    group at cycle 4. No RD but that of the burst its row was activated for issues during
    the drain: c's waits for seven WRs (tCCD_S apart at the least), the last tWTR_S after
    the write data (CWL + tBL after that WR), and is answered CL + tBL after it; the bound
    is that from each edge until the drain's first WR (after b's ACT and tRCD), c on its
    way (at edge 5) or queued, where the bank and the data bus alone would give less than
    the activate and CL + tBL."""
    t = PRESETS["DDR4-2400R"]
    mapping = AddressMapping(t)
    requests = [client_request(mapping.encode(row=1), 16 * t.burst_bytes, "a", 0, False),
                client_request(mapping.encode(bank=1, row=2), 8 * t.burst_bytes, "b", 1, True),
                client_request(mapping.encode(bankgroup=1, row=3), t.burst_bytes, "c", 2, False)]
    marks, sink, period, reaction = bank_bound_marks("DDR4-2400R", requests, [0, 2, 4], engine, ahead, 0,
                                                     write_queue=8)
    responses_never_before_their_bounds(marks, sink, period, reaction)
    drain = 6 * t.tCCD_S + t.CWL + t.tBL + t.tWTR_S + t.CL + t.tBL
    assert drain > t.tRCD + t.CL + t.tBL
    c = bounds_of(marks, "c", period)
    assert [c[edge] for edge in range(5, 6 + t.tRCD)] == [edge + drain for edge in range(5, 6 + t.tRCD)]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), engine=st.sampled_from(["python", "compiled"]), ahead=st.booleans(),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]), queue=st.sampled_from([4, 8]))
def test_no_answer_leaves_before_its_bound_through_write_drains_and_lines(seed, engine, ahead, scheduler, queue):
    """As the banks' test, with two writes in five and small queues: drains, reads in line
    behind reads that wait for slots, and reads of bursts a queued write may answer."""
    requests, cycles = bank_traffic(seed, "DDR4-2400R", 48, writes=0.4)
    marks, sink, period, reaction = bank_bound_marks("DDR4-2400R", requests, cycles, engine, ahead, seed,
                                                     scheduler=scheduler, read_queue=queue, write_queue=queue)
    checked, exact = responses_never_before_their_bounds(marks, sink, period, reaction)
    assert checked > 100 and exact > 10, (checked, exact)


@model(catalogue=False)
class AnswerProber(Prober):
    """Asks a controller for its bound on each client's next answer 1 ps before each of its
    edges during a run (in a clock of its period, that phase), as another model's lookahead
    would ask it while the controller schedules ahead: the marks of
    :func:`~.test_splitting.responses_never_before_their_bounds` in ``marks``, the source
    sending ``requests`` at ``cycles`` (set as :class:`~.test_deferred_edges.Prober`'s)."""

    def tick(self):
        dram, now = self.dram, self.now
        for client in CLIENTS:
            self.marks.append((now, client, dram.earliest_answer_ps(client),
                               next_arrival_ps(dram, self.requests, self.cycles, dram.domain.period_ps, now, client)))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]),
       queue=st.sampled_from([4, 8, 32]), writes=st.sampled_from([0.15, 0.4]))
def test_no_answer_leaves_before_its_bound_asked_while_the_controller_schedules_ahead(seed, scheduler, queue,
                                                                                     writes):
    """As the banks' test, the bounds asked during one free run on the compiled engine, not
    at the end of runs cut at each edge: the controller has decided its cycles up to the
    next arrival it can see coming, past the question (the bounds count its RDs, WRs and
    the takes of requests after those cycles)."""
    standard = "DDR4-2400R"
    requests, cycles = bank_traffic(seed, standard, 48, writes=writes)
    period = PRESETS[standard].tCK_ps
    top = Component("top", clock=dram_clock(PRESETS[standard]))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, engine="compiled", scheduler=scheduler,
                          read_queue=queue, write_queue=queue)
    sink = Sink("sink", top, stop_after=len(requests))
    prober = AnswerProber("prober", top, clock=ClockDomain("probe", period, period - 1))
    prober.dram, prober.requests, prober.cycles = dram, requests, cycles
    connect(src.out, dram.req, latency=4)
    connect(dram.resp, sink.inp)
    Simulator(top, seed=seed).run()
    assert len(sink.messages) == len(requests) and dram.engine_in_use == "compiled"
    checked, exact = responses_never_before_their_bounds(prober.marks, sink, period, dram.reaction_ps(dram.req,
                                                                                                     dram.resp))
    assert checked > 100 and exact > 10, (checked, exact)


def test_a_write_waiting_for_slots_is_bounded_from_the_first_cycle_not_yet_scheduled():
    """A write of 32 bursts into a write queue of four on the compiled engine, scheduling at
    most 40 cycles ahead: its bursts enter as WRs free slots, in cycles the controller
    decides a batch at a time. Asked at any edge of a batch, the bound counts the slots from
    the first cycle not yet decided (a burst enters at a cycle after those, a WR frees a
    slot at one), so it holds from the batch's first edge to its last; counted from the
    question, it would grow edge by edge."""
    standard = "DDR4-2400R"
    t = PRESETS[standard]
    mapping = AddressMapping(t)
    requests, cycles = [client_request(mapping.encode(row=1), 32 * t.burst_bytes, "b", 0, True)], [0]
    top = Component("top", clock=dram_clock(t))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, engine="compiled", write_queue=4, lookahead_cycles=40)
    sink = Sink("sink", top, stop_after=1)
    prober = AnswerProber("prober", top, clock=ClockDomain("probe", t.tCK_ps, t.tCK_ps - 1))
    prober.dram, prober.requests, prober.cycles = dram, requests, cycles
    connect(src.out, dram.req, latency=4)
    connect(dram.resp, sink.inp)
    Simulator(top, seed=0).run()
    responses_never_before_their_bounds(prober.marks, sink, t.tCK_ps, dram.reaction_ps(dram.req, dram.resp))
    bounds = bounds_of(prober.marks, "b", t.tCK_ps)
    answer = sink.arrivals[0].time_ps // t.tCK_ps - 1
    assert len({bounds[edge] for edge in range(6, 42)}) == 1 and bounds[6] < answer
