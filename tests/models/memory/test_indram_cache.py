"""In-DRAM caches: exact FIGARO and LISA relocation sequences, cache hits and misses, and the
subarray-aware timing checker on random traffic."""

import pytest

from archmodel.kernel import Component, Simulator
from archmodel.models.memory import CACHE_MODES, InDramCacheController, SubarrayTimingChecker
from archmodel.models.memory.commands import ACT, PRE, RD, RELOC
from archmodel.models.memory.timing import dram_clock, fast_subarray_timing, preset

STANDARD = "DDR4-2400R"


def _system(streams=None, **params):
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, **params)
    keys = ("cache", "cache_rows_per_bank", "villa_subarrays", "tRELOC", "lisa_hop_cycles")
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD,
                                    **{k: v for k, v in params.items() if k in keys})
    checker.watch(dram)
    if streams is not None:
        dram.attach_cores(streams)
    log = []
    dram.add_command_listener(lambda c, kind, rank, bg, bank, flat, row, column: log.append((c, kind, row, column)))
    Simulator(top, seed=3).run()
    return dram, checker, log


def test_figcache_miss_relocates_the_segment_and_the_next_access_hits_the_fast_cache_row():
    t, fast = preset(STANDARD), fast_subarray_timing(preset(STANDARD))
    dram, checker, log = _system([[(0, 5, 6, False), (0, 5, 7, False)]], cache="figcache_fast",
                                 segment_bursts=4, tRELOC=3, gap_cycles=20)
    cache_row = t.rows  # the first reserved row
    act_dst = t.tRCD + 1  # the cycle after the missing RD (one command per cycle)
    relocs = [act_dst + fast.tRCD + 3 * i for i in range(4)]
    pre = max(relocs[-1] + 3, act_dst + fast.tRAS)  # the cache row restores before it closes
    act_cache = pre + t.tRP  # the slower of the two rows' tRP
    assert log == ([(0, ACT, 5, -1), (t.tRCD, RD, 5, 6), (act_dst, ACT, cache_row, -1)]
                   + [(c, RELOC, cache_row, i) for i, c in enumerate(relocs)]
                   + [(pre, PRE, -1, -1), (act_cache, ACT, cache_row, -1), (act_cache + fast.tRCD, RD, cache_row, 3)])
    assert (dram.cache_misses.value, dram.cache_hits.value, dram.relocations.value) == (1, 1, 1)
    assert dram.reloc_commands.value == 4 and dram.extra_commands.value == 6
    assert dram.finish == [act_cache + fast.tRCD + t.CL + t.tBL]
    assert checker.violation_count.value == 0


def test_figcache_slow_uses_regular_timing_for_its_cache_rows():
    t = preset(STANDARD)
    dram, checker, log = _system([[(2, 9, 0, False), (2, 9, 1, False)]], cache="figcache_slow",
                                 segment_bursts=4, tRELOC=3)
    first_reloc = next(c for c, kind, _, _ in log if kind == RELOC)
    assert first_reloc == t.tRCD + 1 + t.tRCD
    assert log[-1][1:] == (RD, t.rows, 1) and log[-1][0] - log[-2][0] == t.tRCD
    assert checker.violation_count.value == 0


def test_lisa_villa_moves_the_whole_row_at_a_cost_growing_with_the_hops():
    t = preset(STANDARD)
    per_subarray = t.rows // t.subarrays
    gaps = []
    for subarray in (0, 5):
        dram, checker, log = _system([[(0, subarray * per_subarray, 0, False)]], cache="lisa_villa",
                                     lisa_hop_cycles=20)
        kinds = [kind for _, kind, _, _ in log]
        assert kinds == [ACT, RD, ACT, RELOC, PRE]
        assert log[3][3] == -1 and dram.layout.hops(log[0][2], log[2][2]) == subarray + 1
        gaps.append(log[4][0] - log[3][0])
        assert checker.violation_count.value == 0
    assert gaps == [20 * 1, 20 * 6]  # beyond the fast row's tRAS, so the hops bind


def test_the_baseline_never_relocates():
    dram, checker, log = _system(cache="none", cores=2, requests_per_core=300)
    assert dram.relocations.value == dram.extra_commands.value == dram.cache_hits.value == 0
    assert all(kind != RELOC for _, kind, _, _ in log)
    assert checker.violation_count.value == 0


@pytest.mark.parametrize("cache", CACHE_MODES)
def test_random_skewed_traffic_with_caching_breaks_no_timing_rule(cache):
    # One cache row per bank (four for LISA-VILLA's four fast subarrays) forces evictions.
    rows = 4 if cache == "lisa_villa" else 1
    dram, checker, log = _system(cache=cache, cores=4, requests_per_core=1500, cache_rows_per_bank=rows,
                                 hot_segments=64, write_fraction=0.4)
    assert dram.reads.value + dram.writes.value == 6000
    assert min(dram.finish) > 0
    assert checker.violation_count.value == 0, checker.violations[:3]
    if cache != "none":
        assert dram.cache_hits.value > 0 and dram.relocations.value > 0
        assert dram.reloc_commands.value > 0
    if cache.startswith("figcache"):
        assert dram.writebacks.value > 0  # small cache: dirty victims go home


def test_the_checker_flags_a_relocation_too_early():
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache="figcache_slow", tRELOC=4)
    t = preset(STANDARD)
    checker.observe(0, ACT, 0, 0, 0, 0, 5)
    checker.observe(t.tRCD, ACT, 0, 0, 0, 0, t.rows)
    checker.observe(2 * t.tRCD, RELOC, 0, 0, 0, 0, t.rows, 0)
    checker.observe(2 * t.tRCD + 2, RELOC, 0, 0, 0, 0, t.rows, 1)
    checker.observe(2 * t.tRCD + 3, PRE, 0, 0, 0, 0)
    assert checker.by_constraint == {"tRELOC": 2, "tRAS": 2}


def test_the_checker_catches_a_controller_that_relocates_faster_than_its_tRELOC():
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, cache="figcache_slow", tRELOC=1, cores=2,
                                 requests_per_core=200)
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache="figcache_slow", tRELOC=4)
    checker.watch(dram)
    Simulator(top, seed=3).run()
    assert checker.by_constraint.get("tRELOC", 0) >= dram.reloc_commands.value // 2 > 0
