"""Requests of any size on a DRAM channel: split into bursts, reassembled, answered in
request order per client."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import ModelAssertion, Simulator
from archmodel.models.memory import AddressMapping, PRESETS
from archmodel.models.memory.response_order import Bursts, ResponseOrder, split
from archmodel.models.messages import MemRequest

from .wiring import ported_controller, run


def test_split_cuts_at_burst_boundaries_in_address_order():
    assert split(0x1010, 0x40, 32) == [(0x1010, 16), (0x1020, 32), (0x1040, 16)]
    assert split(0x48, 8, 64) == [(0x48, 8)]
    assert split(0, 128, 64) == [(0, 64), (64, 64)]


@given(address=st.integers(0, 1 << 40), size=st.integers(0, 10_000), log_piece=st.integers(0, 12))
def test_split_gives_the_pieces_a_walk_from_cut_to_cut_gives(address, size, log_piece):
    piece = 1 << log_piece
    pieces = []
    at, end = address, address + size
    while at < end:
        stop = min(end, (at | (piece - 1)) + 1)
        pieces.append((at, stop - at))
        at = stop
    assert split(address, size, piece) == pieces


@given(address=st.integers(0, 1 << 40), size=st.integers(0, 10_000), log_piece=st.integers(0, 12))
def test_bursts_are_the_pieces_split_cuts(address, size, log_piece):
    """A compiled core's controller keeps a request's bursts as Bursts, worked out when
    asked: the same pieces as split's list, by index from either end and by slice."""
    piece = 1 << log_piece
    pieces = split(address, size, piece)
    bursts = Bursts(address, size, piece)
    assert len(bursts) == len(pieces) and list(bursts) == pieces and bursts[1:-1] == pieces[1:-1]
    assert [bursts[-k] for k in range(1, len(pieces) + 1)] == [pieces[-k] for k in range(1, len(pieces) + 1)]
    with pytest.raises(IndexError):
        bursts[len(pieces)]


def test_a_request_reported_done_at_once_leaves_as_if_its_pieces_were():
    """ResponseOrder.job_done (a compiled core counts the pieces and reports the request
    once, at its last piece's cycle) orders the responses as piece_done for each piece."""
    for whole in (False, True):
        order = ResponseOrder()
        old = order.open(MemRequest(address=0, size_bytes=64, source="a", tag=1), [(0, 32), (32, 32)], b"o" * 64)
        young = order.open(MemRequest(address=64, size_bytes=64, source="a", tag=2), [(64, 32), (96, 32)], b"y" * 64)
        for job, cycles in ((young, (9, 7)), (old, (20, 25))):
            if whole:
                order.job_done(job, max(cycles))
            else:
                for cycle in cycles:
                    order.piece_done(job, cycle)
        assert (order.due, order.head().tag, old.left, old.done) == (25, 1, 0, 25)
        order.pop()
        assert (order.due, order.head().tag) == (9, 2)


def test_the_response_order_holds_a_younger_finished_request_behind_an_older_one_of_its_client():
    order = ResponseOrder()
    old = order.open(MemRequest(address=0, size_bytes=4, source="a", tag=1), [(0, 4)], b"old!")
    young = order.open(MemRequest(address=8, size_bytes=4, source="a", tag=2), [(8, 4)], b"new!")
    other = order.open(MemRequest(address=16, size_bytes=4, source="b", tag=3), [(16, 4)], b"othr")
    order.piece_done(young, 10)
    order.piece_done(other, 12)
    assert order.due == 12 and order.head().tag == 3
    order.pop()
    order.piece_done(old, 20)
    assert (order.due, order.head().tag) == (20, 1)
    order.pop()
    assert (order.due, order.head().tag, order.head().data) == (10, 2, b"new!")
    order.pop()
    assert len(order) == 0


def test_a_4_kib_read_on_hbm2e_is_129_bursts_and_one_response_with_every_byte():
    rng = random.Random(1)
    content = bytes(rng.getrandbits(8) for _ in range(4096))
    reads = [MemRequest(address=0x1010, size_bytes=4096, source="dma", tag=7)]
    top, src, dram, sink, checker = ported_controller("HBM2E", reads)
    dram.backdoor_write(0x1010, content)
    run(top)
    assert [(m.tag, m.data) for m in sink.messages] == [(7, content)]
    # 0x1010 is not 32-byte aligned: a 16-byte head, 127 whole bursts and a 16-byte tail.
    assert (dram.reads.value, dram.bytes_read.value) == (129, 4096)
    assert (dram.client_requests.value, dram.split_requests.value) == (1, 1)
    assert checker.violation_count.value == 0


def test_an_8_byte_write_merges_into_its_stored_burst_as_one_wr():
    requests = [MemRequest(address=0x48, size_bytes=8, is_write=True, data=b"\x11" * 8, source="core", tag=1),
                MemRequest(address=0x40, size_bytes=64, source="core", tag=2)]
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests, cycles=[0, 200])
    dram.backdoor_write(0x40, b"\xaa" * 64)
    run(top)
    assert [(m.tag, m.data) for m in sink.messages] == [(1, None), (2, b"\xaa" * 8 + b"\x11" * 8 + b"\xaa" * 48)]
    assert (dram.wrs.value, dram.bytes_written.value) == (1, 8)
    assert dram.backdoor_read(0x40, 64) == b"\xaa" * 8 + b"\x11" * 8 + b"\xaa" * 48


def test_responses_follow_request_order_per_client_though_fr_fcfs_serves_a_younger_hit_first():
    m = AddressMapping(PRESETS["DDR4-2400R"])
    opener = m.encode(bank=1, row=7, column=0)
    conflict = m.encode(bank=1, row=8, column=0)
    hit = m.encode(bank=1, row=7, column=5)
    requests = [MemRequest(address=opener, size_bytes=64, source="a", tag=0),
                MemRequest(address=conflict, size_bytes=64, source="a", tag=1),
                MemRequest(address=hit, size_bytes=64, source="a", tag=2),
                MemRequest(address=hit, size_bytes=64, source="b", tag=3)]
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests, cycles=[0, 1, 2, 3])
    run(top)
    # Tag 1 must wait tRAS to precharge the row tag 0 opened; meanwhile FR-FCFS reads the open
    # row for tags 2 and 3. Client a still sees 0, 1, 2; client b's answer does not wait for a's.
    assert dram.row_conflicts.value == 1 and dram.row_hits.value == 2
    assert [m.tag for m in sink.messages] == [0, 3, 1, 2]
    assert checker.violation_count.value == 0


def test_the_controllers_that_answer_through_a_response_order_declare_request_order_per_client():
    # (the random tests here and in test_indram_cache hold them to it, writes included)
    from archmodel.models.memory import DramController, InDramCacheController
    assert DramController.answers_in_order_per_client is True
    assert InDramCacheController.answers_in_order_per_client is True


def test_a_request_beyond_the_capacity_names_the_address_the_range_and_the_requester():
    requests = [MemRequest(address=(8 << 30) - 32, size_bytes=64, source="dma", tag=0)]
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests)
    with pytest.raises(ModelAssertion) as err:
        run(top)
    assert str(err.value) == ("top.dram at 833 ps: req: read of 64 bytes at 0x1ffffffe0 from 'dma' is outside "
                              "this memory (0x0 .. 0x1ffffffff, 8589934592 bytes)")


def test_a_request_below_the_base_address_is_outside_too():
    requests = [MemRequest(address=0x7fff_fff8, size_bytes=16, is_write=True, data=bytes(16), source="core")]
    top, src, dram, sink, checker = ported_controller("HBM2E", requests, base_address=0x8000_0000)
    with pytest.raises(ModelAssertion) as err:
        run(top)
    assert str(err.value) == ("top.dram at 625 ps: req: write of 16 bytes at 0x7ffffff8 from 'core' is outside "
                              "this memory (0x80000000 .. 0x8fffffff, 268435456 bytes)")


def _random_requests(seed, count, span, base):
    rng = random.Random(seed)
    requests = []
    for i in range(count):
        size = rng.choice([1, 3, 8, 16, 32, 64, 100, 256, 1024])
        address = base + rng.randrange(0, span - size)
        source = rng.choice(["a", "b", "c"])
        if rng.random() < 0.4:
            data = bytes(rng.getrandbits(8) for _ in range(size))
            requests.append(MemRequest(address=address, size_bytes=size, is_write=True, data=data, source=source, tag=i))
        else:
            requests.append(MemRequest(address=address, size_bytes=size, source=source, tag=i))
    return requests


def check_against_a_bytearray(requests, responses, base, span, memory):
    """Every response equals what a plain bytearray answers, each client's in its order."""
    model = bytearray(span)
    expected = {}
    for r in requests:
        offset = r.address - base
        if r.is_write:
            model[offset:offset + r.size_bytes] = r.data
            expected.setdefault(r.source, []).append((r.tag, None))
        else:
            expected.setdefault(r.source, []).append((r.tag, bytes(model[offset:offset + r.size_bytes])))
    got = {}
    for m in responses:
        got.setdefault(m.source, []).append((m.tag, m.data))
    assert got == expected
    assert memory.backdoor_read(base, span) == bytes(model)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]), queue=st.sampled_from([2, 32]))
def test_random_sizes_and_clients_lose_nothing_and_keep_each_clients_order(seed, standard, scheduler, queue):
    base, span = 0x4000_0000, 1 << 14
    requests = _random_requests(seed, 60, span, base)
    cycles = sorted(random.Random(seed).randrange(0, 400) for _ in requests)
    top, src, dram, sink, checker = ported_controller(standard, requests, cycles=cycles, base_address=base,
                                                      scheduler=scheduler, read_queue=queue, write_queue=queue)
    run(top, seed=seed)
    check_against_a_bytearray(requests, sink.messages, base, span, dram)
    assert checker.violation_count.value == 0


def _next_arrival_ps(memory, src, now, period):
    """The soonest a request not yet arrived at ``now`` can arrive (None: none will)."""
    flight = [arrival for arrival, _ in memory.req.channel.flight if arrival > now]
    if src.next_due is not None:
        flight.append((max(src.next_due, now // period + 1) + 1) * period)
    return min(flight) if flight else None


def check_the_bound_at_every_slice(top, memory, src, sink, period, step, seed=0):
    """Run in slices of ``step`` cycles, each ending 1 ps before an edge (the edge is still to
    come, so a bound one cycle early is caught); after each, the memory's next response must
    not leave before its own bound or, should a request arrive meanwhile, before that
    arrival plus the reaction bound. Returns the (slice end, bound, first send after it)
    triples."""
    from archmodel.kernel import Simulator

    sim = Simulator(top, seed=seed)
    marks = []
    t = period - 1
    reaction = memory.reaction_ps(memory.req, memory.resp)
    while True:
        result = sim.run(until_ps=t)
        if result.reason != "limit":
            break
        marks.append((t, memory.earliest_send_ps(memory.resp), _next_arrival_ps(memory, src, t, period)))
        t += step * period
    sends = [a.time_ps - period for a in sink.arrivals]  # one cycle of channel latency
    checked = []
    for t, bound, arrival in marks:
        after = [s for s in sends if s > t]
        limits = [x for x in (bound, None if arrival is None else arrival + reaction) if x is not None]
        if after:
            assert limits, f"at {t} ps the memory claims it never answers, but it answers at {after[0]} ps"
            assert after[0] >= min(limits), (t, bound, arrival, after[0])
            checked.append((t, bound, after[0]))
    return checked


def test_the_bound_is_exact_for_a_read_whose_rd_has_issued_and_never_late_for_a_write():
    t = PRESETS["DDR4-2400R"]
    requests = [MemRequest(address=0x40, size_bytes=64, tag=0),
                MemRequest(address=0x1000, size_bytes=8, is_write=True, data=bytes(8), tag=1)]
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests, cycles=[0, 100])
    period = t.tCK_ps
    assert dram.reaction_ps(dram.req, dram.resp) == period
    checked = check_the_bound_at_every_slice(top, dram, src, sink, period, step=1)
    by_time = {mark: (bound, send) for mark, bound, send in checked}
    # The read arrives at cycle 1, ACT at 1, RD at 1 + tRCD: just before the RD the bound is
    # exact, after it the response is due.
    rd = 1 + t.tRCD
    send = (rd + t.CL + t.tBL) * period
    assert by_time[rd * period - 1] == by_time[(rd + 1) * period - 1] == (send, send)
    # Before, the bound counts the closed bank's ACT (allowed at once) and tRCD before the RD:
    # exact too (counting the data bus alone, it was CL + tBL from the next edge).
    assert by_time[2 * period - 1] == (send, send)
    # The write arrives at cycle 101 (before that it is on its way, and the bound counts it
    # from its arrival) and is acknowledged at 102, exactly when the bound says.
    assert by_time[100 * period - 1] == (None, 102 * period)  # not yet sent: nothing held
    assert by_time[101 * period - 1] == (102 * period, 102 * period)
    assert by_time[102 * period - 1] == (102 * period, 102 * period)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       queue=st.sampled_from([2, 8, 32]), forward=st.sampled_from([1, 3]))
def test_no_response_leaves_before_the_controllers_bound(seed, standard, queue, forward):
    base, span = 0, 1 << 13
    requests = _random_requests(seed, 40, span, base)
    cycles = sorted(random.Random(seed + 1).randrange(0, 300) for _ in requests)
    top, src, dram, sink, checker = ported_controller(standard, requests, cycles=cycles, read_queue=queue,
                                                      write_queue=queue, forward_cycles=forward)
    checked = check_the_bound_at_every_slice(top, dram, src, sink, PRESETS[standard].tCK_ps, step=3, seed=seed)
    assert checked


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       queue=st.sampled_from([2, 8, 32]), forward=st.sampled_from([1, 3]))
def test_no_response_to_a_client_leaves_before_the_controllers_bound_for_it(seed, standard, queue, forward):
    """As above, per client (``earliest_answer_ps``): the next response to each of three
    clients leaves no sooner than its own bound, whatever the other clients' requests do
    meanwhile, unless one of its own requests arrives in between (then no sooner than that
    arrival plus the reaction)."""
    from archmodel.kernel import Simulator

    requests = _random_requests(seed, 40, 1 << 13, 0)
    cycles = sorted(random.Random(seed + 1).randrange(0, 300) for _ in requests)
    top, src, dram, sink, checker = ported_controller(standard, requests, cycles=cycles, read_queue=queue,
                                                      write_queue=queue, forward_cycles=forward)
    period = PRESETS[standard].tCK_ps
    reaction = dram.reaction_ps(dram.req, dram.resp)
    sim = Simulator(top, seed=seed)
    marks = []  # (time, client, bound, arrival of the client's next request not yet arrived)
    t = period - 1
    while sim.run(until_ps=t).reason == "limit":
        for client in "abc":
            marks.append((t, client, dram.earliest_answer_ps(client),
                          next_arrival_ps(dram, requests, cycles, period, t, client)))
        t += 3 * period
    checked, _ = responses_never_before_their_bounds(marks, sink, period, reaction)
    assert checked


def next_arrival_ps(memory, requests: list, cycles: list, period: int, t: int, client) -> int | None:
    """The soonest a request of ``client`` not yet arrived at ``memory`` by ``t`` can arrive
    (the source sends ``requests`` in order at ``cycles``, held back while refused; those on
    the link arrive when they land): the ``arrival`` of a mark for
    :func:`responses_never_before_their_bounds`; None: none left."""
    sent = memory.req.channel.sent
    due = [max((c + 1) * period, t + 1) for c, r in zip(cycles[sent:], requests[sent:]) if r.source == client]
    flight = [a for a, m in memory.req.channel.flight if m.source == client and a > t]
    return min(due + flight, default=None)


def client_bound_marks(sim, memory, clients, requests: list, cycles: list, period: int) -> list:
    """Run ``sim`` to 1 ps short of every edge until it stops and ask ``memory``'s bound for
    each of ``clients`` there: the ``(t, client, bound, arrival)`` marks of
    :func:`responses_never_before_their_bounds` (``requests`` sent in order at ``cycles``)."""
    marks = []
    t = period - 1
    while sim.run(until_ps=t).reason == "limit":
        for client in clients:
            marks.append((t, client, memory.earliest_answer_ps(client),
                          next_arrival_ps(memory, requests, cycles, period, t, client)))
        t += period
    return marks


def responses_never_before_their_bounds(marks, sink, period: int, reaction: int) -> tuple[int, int]:
    """Check each ``(t, client, bound, arrival)`` of ``marks``: the client's next response
    after ``t`` (sent one cycle of channel latency before it reached ``sink``) leaves no
    sooner than ``bound``, or than ``arrival`` (its next request's, None: none) plus
    ``reaction`` when that is sooner; returns how many were checked and how many were exact."""
    sends = [(a.time_ps - period, a.message.source) for a in sink.arrivals]
    checked = exact = 0
    for t, client, bound, arrival in marks:
        after = [s for s, source in sends if s > t and source == client]
        if after:
            limits = [x for x in (bound, None if arrival is None else arrival + reaction) if x is not None]
            assert limits and after[0] >= min(limits), (t, client, bound, arrival, after[0])
            checked += 1
            exact += bound == after[0]
    return checked, exact


def test_a_newcomer_read_is_bounded_by_its_reads_unless_a_write_may_answer_it():
    """A client's first request, not yet arrived: a 1 KiB read (16 bursts of DDR4, one row of
    one closed bank) on a channel with no write queued, entering or on its way needs 16 RDs:
    after an ACT (at the next edge at the soonest) and tRCD, each tCCD_L after the last, the
    last answered CL + tBL after its RD (more than CL + 16 tBL after the first RD); once a
    write of one of its bursts is queued, the read might be answered from the write queue
    (forward_cycles), but not one of other bursts."""
    write = MemRequest(address=0x40, size_bytes=64, is_write=True, data=bytes(64), source="w", tag=1)
    top, _, dram, sink, _ = ported_controller("DDR4-2400R", [write], cycles=[5])
    sim = Simulator(top)
    sim.run(until_ps=1)
    period, cl, tbl, t = dram.domain.period_ps, dram.timing.CL, dram.timing.tBL, dram.timing
    read = MemRequest(address=0, size_bytes=1024, source="r", tag=2)
    banks = 1 + t.tRCD + 15 * t.tCCD_L + cl + tbl
    assert banks > 1 + cl + 16 * tbl
    assert dram.newcomer_answer_ps(read, sim.now, writes_ahead=False) == banks * period
    assert dram.newcomer_answer_ps(read, sim.now) == (1 + dram.forward_cycles) * period  # a write may come first
    # Arriving at cycle 30, its first RD comes no sooner, and each of the others tCCD_L after
    # the last (the bank may open the row before it arrives, for a burst to it ahead of it,
    # so its path from the next edge binds only when the request comes sooner).
    arriving = 30 + 15 * t.tCCD_L + cl + tbl
    assert arriving > banks and arriving > 30 + cl + 16 * tbl
    assert dram.newcomer_answer_ps(read, 30 * period, writes_ahead=False) == arriving * period
    sim.run(until_ps=20 * period)  # the write is queued at cycle 8 (one after it arrives)
    assert len(sink.messages) == 1 and dram.newcomer_answer_ps(read, sim.now, writes_ahead=False) == 9 * period
    # A read of the 1 KiB after the written burst, asked as the write waits for its WR: no
    # queued write is of its bursts, so each still needs its RD (more than CL + 16 tBL from
    # the next edge), unless an unknown write may come first.
    after = MemRequest(address=0x80, size_bytes=1024, source="r", tag=3)
    assert dram.newcomer_answer_ps(after, sim.now, writes_ahead=False) > sim.now + (cl + 16 * tbl) * period
    assert dram.newcomer_answer_ps(after, sim.now) == 9 * period


def test_a_newcomer_read_behind_requests_still_to_be_passed_on_waits_for_their_slots():
    """A client's first 1 KiB read, asked with four 1 KiB reads still to be passed on before
    it (``queued``: a network interface holds them) to an idle channel whose read queue holds
    8 bursts: the 64 bursts ahead and 16 of its own each need a slot, which frees only at an
    RD (one per tBL at the most), so its last burst is read no sooner than the 73rd RD from
    the next edge, answered CL + tBL after it (alone, its 16 RDs to one bank bound it); a
    write of one of its bursts among those ahead may answer it from the write queue, which
    the write seen ahead says."""
    later = MemRequest(address=0x80000, size_bytes=64, source="l", tag=0)  # (long after the questions)
    top, _, dram, _, _ = ported_controller("DDR4-2400R", [later], cycles=[5000], read_queue=8)
    sim = Simulator(top)
    sim.run(until_ps=1)
    period, cl, tbl = dram.domain.period_ps, dram.timing.CL, dram.timing.tBL
    read = MemRequest(address=0, size_bytes=1024, source="r", tag=1)
    ahead = [MemRequest(address=0x10000 * n, size_bytes=1024, source="a", tag=n) for n in range(1, 5)]
    alone = dram.newcomer_answer_ps(read, sim.now, writes_ahead=False)
    behind = dram.newcomer_answer_ps(read, sim.now, False, ahead)
    assert behind >= sim.now + (72 * tbl + cl + tbl) * period > alone
    write = MemRequest(address=0x40, size_bytes=64, is_write=True, data=bytes(64), source="w", tag=3)
    assert dram.newcomer_answer_ps(read, sim.now, False, [write]) == dram.newcomer_answer_ps(read, sim.now)


def bounds_kept_against_fresh(build, memories_of, period, seed, slices=400):
    """Run two identical systems (``build()``: top, memories...) in lockstep slices that end
    at edges and between them. In the first every bound is asked as the lookahead asks it
    (kept while the memory's state holds, whatever the time); in the second every kept bound
    is dropped first (``forget_bounds``), so each is worked out afresh. They must agree (the
    bounds do not change what either system does). Returns how many times a memory was asked
    at a later time with its state unchanged since the last question (the kept terms used)."""
    systems = [build() for _ in range(2)]
    sims = [Simulator(top, seed=seed) for top, _ in systems]
    rng = random.Random(seed)
    t = 0
    held = 0
    versions: dict = {}
    for _ in range(slices):
        t += rng.randrange(1, 2 * period)
        reasons = [sim.run(until_ps=t).reason for sim in sims]
        assert reasons[0] == reasons[1]
        if reasons[0] != "limit":
            break
        answers = []
        for index, (_, memory) in enumerate(systems):
            got = []
            for part in memories_of(memory):
                if index == 1:
                    part.forget_bounds()
                else:
                    held += versions.get(part.path) == part.bounds_version()
                    versions[part.path] = part.bounds_version()
                got.append((part.path, part.earliest_send_ps(part.resp),
                            [part.earliest_answer_ps(client) for client in "abcd"]))
            answers.append(got)
        assert answers[0] == answers[1], t
    return held


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       queue=st.sampled_from([2, 8, 32]), forward=st.sampled_from([1, 3]),
       engine=st.sampled_from(["python", "compiled"]))
def test_a_controllers_bounds_kept_while_its_state_holds_are_those_worked_out_afresh(seed, standard, queue, forward,
                                                                                      engine):
    """A controller fed through its ports (scheduling ahead, so its decided cycles run past
    now) keeps the terms of its response bounds while its state holds, and works the bound
    out from them at each later time: the bound must be the one worked out from scratch,
    for any client and for each one."""
    from archmodel.kernel import Component, connect
    from archmodel.models.basic import Sink, Source
    from archmodel.models.memory import DramController, DramTimingChecker

    requests = _random_requests(seed, 40, 1 << 13, 0)
    cycles = sorted(random.Random(seed + 1).randrange(0, 400) for _ in requests)
    period = PRESETS[standard].tCK_ps

    def build():
        from archmodel.models.memory.timing import dram_clock

        top = Component("top", clock=dram_clock(PRESETS[standard]))
        src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
        dram = DramController("dram", top, standard=standard, read_queue=queue, write_queue=queue,
                              forward_cycles=forward, engine=engine)
        sink = Sink("sink", top, stop_after=len(requests))
        DramTimingChecker("checker", top, standard=standard).watch(dram)  # (a listener: it still runs ahead)
        connect(src.out, dram.req, latency=2)
        connect(dram.resp, sink.inp, latency=3)
        return top, dram

    assert bounds_kept_against_fresh(build, lambda dram: [dram], period, seed) > 0
