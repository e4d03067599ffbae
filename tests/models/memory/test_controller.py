"""The DRAM controller: exact unloaded latencies, data order, and the independent checker."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodel.models.memory import FIXED_OVERHEAD_CYCLES, PRESETS, AddressMapping, synthetic_stream
from archmodel.models.memory.commands import REFPB
from archmodel.models.messages import MemRequest

from .wiring import attach_synthetic, controller_with_checker, ported_controller, run, writes_then_reads


@pytest.mark.parametrize("standard", sorted(PRESETS))
def test_unloaded_read_latency_is_the_formula_plus_the_fixed_overhead(standard):
    t = PRESETS[standard]
    m = AddressMapping(t)
    a = m.encode(bankgroup=1, bank=2, row=7, column=3)
    hit = m.encode(bankgroup=1, bank=2, row=7, column=9)
    conflict = m.encode(bankgroup=1, bank=2, row=8, column=0)
    reads = [MemRequest(address=x, size_bytes=t.burst_bytes, tag=i) for i, x in enumerate((a, hit, conflict))]
    top, src, dram, sink, checker = ported_controller(standard, reads, cycles=[0, 300, 600])
    run(top)
    expected = [t.latency(case) + FIXED_OVERHEAD_CYCLES for case in ("closed", "hit", "conflict")]
    assert list(dram.read_latency.samples) == expected
    assert expected == [t.tRCD + t.CL + t.tBL, t.CL + t.tBL, t.tRP + t.tRCD + t.CL + t.tBL]
    # One channel cycle each way: request in, response out.
    period = dram.domain.period_ps
    assert [a.time_ps // period for a in sink.arrivals] == [0 + 1 + expected[0] + 1, 300 + 1 + expected[1] + 1,
                                                           600 + 1 + expected[2] + 1]
    assert (dram.row_misses.value, dram.row_hits.value, dram.row_conflicts.value) == (1, 1, 1)
    assert checker.violation_count.value == 0


def test_reads_see_every_earlier_write_to_their_address():
    standard = "DDR4-2400R"
    requests, expected = writes_then_reads(40)
    top, src, dram, sink, checker = ported_controller(standard, requests)
    run(top)
    got = {m.tag: m.data for m in sink.messages if m.data is not None}
    assert got == expected
    assert len(sink.messages) == len(requests)
    assert dram.forwarded_reads.value > 0
    assert checker.violation_count.value == 0


def _mixed_stream(dram, count, seed):
    return synthetic_stream("random", count, capacity_bytes=dram.address_map.capacity_bytes,
                            burst_bytes=dram.burst_bytes, seed=seed, write_fraction=1 / 3)


RANDOM_REQUESTS = 200_000


@pytest.mark.parametrize("standard", sorted(PRESETS))
def test_checker_finds_no_violation_on_random_traffic(standard):
    top, dram, checker = controller_with_checker(standard)
    dram.attach_stream(_mixed_stream(dram, RANDOM_REQUESTS, seed=7))
    run(top)
    assert dram.reads.value + dram.writes.value == RANDOM_REQUESTS
    assert checker.commands.value > 2 * RANDOM_REQUESTS
    assert checker.violation_count.value == 0, checker.violations[:3]
    assert dram.refs.value > 0


@pytest.mark.parametrize("dropped, found", [("tFAW", "tFAW"), ("tRRD_S", "tRRD_S"), ("tRCD", "tRCD"),
                                            ("tWTR_L", "tWTR_L"), ("tRP", "tRP"), ("tCCD_L", "tCCD_L")])
def test_checker_catches_a_constraint_dropped_from_the_scheduler(dropped, found):
    top, dram, checker = controller_with_checker("DDR4-2400R", omit_constraints=(dropped,))
    dram.attach_stream(_mixed_stream(dram, 3000, seed=3))
    run(top)
    assert checker.by_constraint.get(found, 0) > 0, checker.by_constraint


@settings(max_examples=12, deadline=None, derandomize=True)
@given(standard=st.sampled_from(sorted(PRESETS)),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]),
       page_policy=st.sampled_from(["open", "closed", "adaptive"]),
       refresh=st.sampled_from(["all_bank", "per_bank"]),
       pattern=st.sampled_from(["sequential", "random", "hot", "strided"]),
       write_fraction=st.sampled_from([0.0, 1 / 3, 0.9]),
       queue=st.integers(2, 32))
def test_any_configuration_obeys_every_constraint_and_serves_every_request(
        standard, scheduler, page_policy, refresh, pattern, write_fraction, queue):
    top, dram, checker = controller_with_checker(standard, scheduler=scheduler, page_policy=page_policy,
                                                 refresh=refresh, read_queue=queue, write_queue=queue)
    count = 1500
    attach_synthetic(dram, pattern, count, write_fraction)
    run(top)
    assert dram.reads.value + dram.writes.value == count
    assert checker.violation_count.value == 0, checker.violations[:3]


def _record(standard, lookahead, **params):
    top, dram, checker = controller_with_checker(standard, lookahead_cycles=lookahead, engine="python", **params)
    log = []
    dram.add_command_listener(lambda *fields: log.append(fields))
    dram.attach_stream(_mixed_stream(dram, 3000, seed=5))
    sim = run(top)
    stats = {s.path: s.summary() for s in sim.all_stats()}
    return sim.now, log, stats


@pytest.mark.parametrize("params", [{}, {"refresh": "per_bank", "page_policy": "adaptive"},
                                    {"refresh": "none", "stop_when_done": False, "scheduler": "frfcfs_cap"}])
def test_scheduling_ahead_of_simulated_time_changes_nothing(params):
    exact = _record("DDR4-3200AA", 0, **params)
    ahead = _record("DDR4-3200AA", 512, **params)
    assert exact[1] == ahead[1] and len(exact[1]) > 6000
    assert exact == ahead


def test_the_scheduler_picks_the_earliest_ready_command_oldest_first_among_all_candidates(monkeypatch):
    # The choice reads oldest-first buckets and stops early; check each choice against a scan of
    # every bank's candidate (outside refresh, which has its own candidates).
    from archmodel.models.memory.controller import DramController

    choose = DramController._choose
    checked = []

    def checked_choose(self, c):
        choose(self, c)
        if self._refresh_pending or self._to_close or self._refpb_banks or not self._cands:
            return
        nxt = self._nxt
        every = min((max(t, nxt[gi], nxt[ri], c), seq) for t, seq, _, gi, ri, _ in self._cands.values())
        assert self._best[:2] == every
        checked.append(c)

    monkeypatch.setattr(DramController, "_choose", checked_choose)
    top, dram, checker = controller_with_checker("DDR4-2400R", engine="python")
    dram.attach_stream(_mixed_stream(dram, 4000, seed=9))
    run(top)
    assert len(checked) > 8000 and checker.violation_count.value == 0



@pytest.mark.parametrize("standard", ["HBM2E", "DDR5-4800B"])
def test_per_bank_refresh_refreshes_every_bank_of_every_rank(standard):
    # a bank set falls due every tREFIpb; each rank's banks of the set take a REFpb of their
    # own, so every bank of every rank is refreshed once per tREFI (the checker's 9 x tREFI
    # rule fails a rank that is never refreshed)
    top, dram, checker = controller_with_checker(standard, refresh="per_bank", ranks=2, engine="python")
    refreshes = []
    dram.add_command_listener(lambda c, kind, rank, group, bank, flat, row, column:
                              refreshes.append((c, rank, flat)) if kind == REFPB else None)
    attach_synthetic(dram, "random", 6000, 1 / 3)
    run(top)
    assert checker.violation_count.value == 0, checker.violations[:3]
    t = dram.timing
    sets = t.tREFI // t.tREFIpb
    due = dram.elapsed_cycles // t.tREFIpb  # bank sets that fell due (the last may be under way)
    assert 2 * (due - 1) <= len(refreshes) == dram.refpbs.value <= 2 * due and dram.refs.value == 0
    # set by set, rank 0 then rank 1, each on the set's first bank in its rank
    for i, (c, rank, flat) in enumerate(refreshes):
        s = (i // 2) % sets
        assert (rank, flat) == (i % 2, min(b for b in range(rank * t.banks, (rank + 1) * t.banks) if b % sets == s))


def _refpb_sets_by_rank(dram, refreshes):
    sets = dram.timing.tREFI // dram.timing.tREFIpb
    return [[(c, flat % sets) for c, rank, flat in refreshes if rank == r] for r in range(dram.timing.ranks)]


@pytest.mark.parametrize("pattern", ["sequential", "hot"])
def test_idle_first_refreshes_every_bank_once_in_every_tREFI(pattern):
    # refresh_order idle_first takes the bank sets in an order of its own, but each rank's
    # REFpbs still come in rounds of tREFI/tREFIpb, each round every set once, round k
    # issued within (k x tREFI, (k + 1) x tREFI] plus less than a tREFIpb of delay
    top, dram, checker = controller_with_checker("HBM2E", refresh="per_bank", refresh_order="idle_first", ranks=2,
                                                 engine="python")
    refreshes = []
    dram.add_command_listener(lambda c, kind, rank, group, bank, flat, row, column:
                              refreshes.append((c, rank, flat)) if kind == REFPB else None)
    attach_synthetic(dram, pattern, 20000, 1 / 3)
    run(top)
    assert checker.violation_count.value == 0, checker.violations[:3]
    t = dram.timing
    sets = t.tREFI // t.tREFIpb
    orders = []
    for by_rank in _refpb_sets_by_rank(dram, refreshes):
        rounds = len(by_rank) // sets
        assert rounds >= 4
        for k in range(rounds):
            one = by_rank[k * sets:(k + 1) * sets]
            assert sorted(s for _, s in one) == list(range(sets))
            assert all(k * t.tREFI + t.tREFIpb <= c < (k + 1) * t.tREFI + t.tREFIpb for c, _ in one)
            orders.append([s for _, s in one])
    assert any(order != list(range(sets)) for order in orders)  # (not the round robin's order)


def test_the_checker_flags_a_bank_set_refreshed_twice_in_a_round():
    top, dram, checker = controller_with_checker("HBM2E", refresh="per_bank", ranks=2)
    t = dram.timing
    sets = t.tREFI // t.tREFIpb
    checker.observe(100, REFPB, 0, 0, 0, 1)
    checker.observe(100 + t.tREFIpb, REFPB, 0, 0, 0, 2)
    checker.observe(100 + 2 * t.tREFIpb, REFPB, 1, 0, 0, t.banks + 1)  # (rank 1's round is its own)
    assert checker.violation_count.value == 0
    checker.observe(100 + 3 * t.tREFIpb, REFPB, 0, 0, 0, 1 + sets)  # set 1 again, set 0 not yet
    assert checker.violations == [f"REFpb rank 0 bg 0 bank 0 at cycle {100 + 3 * t.tREFIpb}: bank set 1 of rank 0 "
                                  "refreshed again before bank set 0 was refreshed once"]
    checker.observe(100 + 3 * t.tREFIpb + 2 * t.tREFI + 1, REFPB, 0, 0, 0, 2)
    assert checker.by_constraint == {"REFpb order": 2}
    assert checker.violations[1].endswith(f"bank set 2 of rank 0 not refreshed for {2 * t.tREFI + 1 + 2 * t.tREFIpb} "
                                          "cycles, more than 2 x tREFI")
