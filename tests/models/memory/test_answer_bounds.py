"""A DRAM channel's bound on its next answer to a client whose reads wait in its read queue,
counting the banks they need (answer_bounds.BoundsQueuedReads): never later than the answer,
on both engines, scheduling ahead or edge by edge, and exact where a bank's PRE, ACT or the
reads queued before to its row decide it."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import PRESETS, AddressMapping, DramController, DramTimingChecker
from archmodel.models.memory.timing import dram_clock
from archmodel.models.messages import MemRequest

from .test_splitting import client_bound_marks, responses_never_before_their_bounds

CLIENTS = "abcd"


def bank_traffic(seed: int, standard: str, count: int) -> tuple[list, list]:
    """``count`` requests of four clients to a few rows of four banks (hits, misses and
    conflicts), mostly reads of one to three bursts, and their cycles on the source."""
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
        requests.append(client_request(address, size, source, tag, write=rng.random() < 0.15))
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


FIRST_EXACT = {"DDR4-2400R": {"b": 22, "c": 44, "d": 5}, "HBM2E": {"b": 32, "c": 7, "d": 5}}
"""The first edge from which each client's bound is its answer in
:func:`test_reads_of_one_bank_are_bounded_by_its_precharge_activate_and_the_reads_before_them`."""


@pytest.mark.parametrize("standard", ["DDR4-2400R", "HBM2E"])
def test_reads_of_one_bank_are_bounded_by_its_precharge_activate_and_the_reads_before_them(standard):
    """Edge by edge: client a reads four bursts of row 1 of bank 0, then b one more burst of
    that row, d one of a closed bank of another bank group, c one of row 2 of bank 0 (one
    request every two cycles, each on a link of one cycle). b's bound counts a's RDs before
    its own (tCCD_L apart); c's the PRE after b's RD (tRTP after it, tRAS after the ACT),
    tRP, the ACT (while the bank is closed: its tRP) and tRCD; d's its bank's tRCD; each
    from the edge before its request arrives (on its way, it comes behind every burst
    queued: its bank terms count then). Each is never later than the answer and is exact
    from the edge after the last command that the bound does not yet count (another bank's
    RD that takes the data bus first; the last RD before c's PRE, on DDR4-2400R, where tRTP
    after it comes after tRAS) until the answer."""
    t = PRESETS[standard]
    mapping = AddressMapping(t)
    requests = [MemRequest(address=mapping.encode(row=1), size_bytes=4 * t.burst_bytes, source="a", tag=0),
                MemRequest(address=mapping.encode(row=1, column=4), size_bytes=t.burst_bytes, source="b", tag=1),
                MemRequest(address=mapping.encode(bankgroup=1, row=5), size_bytes=t.burst_bytes, source="d", tag=2),
                MemRequest(address=mapping.encode(row=2), size_bytes=t.burst_bytes, source="c", tag=3)]
    marks, sink, period, reaction = bank_bound_marks(standard, requests, [0, 2, 4, 6], "python", False, 0)
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
