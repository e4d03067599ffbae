"""In-DRAM caches: exact FIGARO and LISA relocation sequences, cache hits and misses, the
subarray-aware timing checker on random traffic, and the controller's read and write queues
(write drain between watermarks, read forwarding, no request lost, idle skipping)."""

import numpy as np
import pytest

from archmodel.kernel import Component, ModelAssertion, Simulator
from archmodel.models.memory import CACHE_MODES, InDramCacheController, SubarrayTimingChecker, skewed_streams
from archmodel.models.memory.commands import ACT, PRE, RD, RELOC, WR
from archmodel.models.memory.timing import dram_clock, fast_subarray_timing, preset
from archmodel.models.messages import MemRequest

from .wiring import ported_cache, run

STANDARD = "DDR4-2400R"


def _system(streams=None, completions=None, **params):
    """Run a controller (with streams, or its synthetic cores) under the checker; return the
    controller, the checker and the command log (cycle, kind, row, column). ``completions``,
    a list, collects (cycle, core, index, is_write, forwarded) per completed request."""
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, **params)
    keys = ("cache", "cache_rows_per_bank", "villa_subarrays", "tRELOC", "lisa_hop_cycles")
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD,
                                    **{k: v for k, v in params.items() if k in keys})
    checker.watch(dram)
    if streams is not None:
        dram.attach_cores(streams)
    if completions is not None:
        dram.add_completion_listener(lambda *done: completions.append(done))
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
                                     lisa_hop_cycles=20, insert_threshold=1)
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
    # Small queues make the write drains frequent.
    rows = 4 if cache == "lisa_villa" else 1
    done = []
    dram, checker, log = _system(cache=cache, cores=4, requests_per_core=1500, cache_rows_per_bank=rows,
                                 hot_segments=64, write_fraction=0.4, read_queue=8, write_queue=8, completions=done)
    assert dram.reads.value + dram.writes.value == 6000
    # No request lost or served twice; every write reached DRAM.
    assert sorted((core, index) for _, core, index, _, _ in done) == [(c, i) for c in range(4) for i in range(1500)]
    assert dram.writes.value == sum(1 for *_, write, _ in done if write) == [k for _, k, _, _ in log].count(WR)
    assert dram.forwarded_reads.value > 0 and dram.write_drains.value > 0
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


def test_lisa_villa_caches_a_row_only_once_it_is_hot():
    once, _, _ = _system([[(0, 5, 0, False)]], cache="lisa_villa")
    twice, checker, log = _system([[(0, 5, 0, False), (0, 5, 1, False)]], cache="lisa_villa")
    assert once.relocations.value == 0 and once.villa_hot_threshold == 2
    assert twice.relocations.value == 1 and [kind for _, kind, _, _ in log].count(RELOC) == 1
    assert checker.violation_count.value == 0


def test_weighted_speedup_follows_the_paper_ordering_and_the_fast_cache_rows_save_energy():
    # A small warm workload: 4 cores, 32 hot 256-byte segments each, fixed seed.
    streams = skewed_streams(STANDARD, 4, 1000, seed=1, hot_segments=32, segment_bursts=4)
    alone = []
    for stream in streams:
        dram, _, _ = _system([stream], cache="none", segment_bursts=4)
        alone.append(dram.finish[0])
    speedup, energy = {}, {}
    for cache in ("none", "lisa_villa", "figcache_slow", "figcache_fast"):
        dram, checker, _ = _system(streams, cache=cache, segment_bursts=4)
        assert checker.violation_count.value == 0
        speedup[cache] = sum(a / f for a, f in zip(alone, dram.finish))
        energy[cache] = dram.energy_nj.value
    assert speedup["figcache_fast"] > speedup["figcache_slow"] > speedup["lisa_villa"] > speedup["none"]
    # Fast cache rows cost less to open and close, and finish sooner, than regular ones. (On
    # this small workload FIGCache-Fast and the baseline use about the same energy: the RELOCs
    # cost what the shorter run saves in background energy.)
    assert energy["figcache_fast"] < energy["figcache_slow"]


def test_a_read_of_a_queued_write_is_forwarded_and_a_later_one_reads_dram_after_the_write():
    t = preset(STANDARD)
    done = []
    # Write at 0 (posted), read at 10 (the WR is not yet issued), read at 20 (it is).
    dram, checker, log = _system([[(0, 5, 3, True), (0, 5, 3, False), (0, 5, 3, False)]], cache="none",
                                 gap_cycles=10, completions=done)
    wr = t.tRCDWR  # a lone write is drained at once: no read waits
    rd = wr + t.write_to_read_l
    assert log == [(0, ACT, 5, -1), (wr, WR, 5, 3), (rd, RD, 5, 3)]
    assert done == [(0, 0, 0, True, False), (11, 0, 1, False, True), (rd + t.CL + t.tBL, 0, 2, False, False)]
    assert dram.forwarded_reads.value == 1 and dram.reads.value == 2 and dram.writes.value == 1
    assert checker.violation_count.value == 0


@pytest.mark.parametrize("rule, high, low, switches", [
    ("ramulator2", 9, 1, 2),  # the default, DramController's: more than 8 and fewer than 2 of 10 entries
    ("inclusive", 8, 2, 3),  # 0.8 and 0.2 of 10 entries, rounded down
])
def test_write_drain_starts_at_the_high_watermark_and_stops_at_the_low_one(rule, high, low, switches):
    # Core 0 reads row after row of bank 0 (a read waits nearly always, each needs PRE and
    # ACT); core 1 writes along one row of bank 4, slower (every 8 cycles) than a drain
    # writes them (tCCD_L), so writes pile up while reads are served and drain in bursts.
    reads = [(0, row, 0, False) for row in range(200)]
    writes = [(4, 7, column, True) for column in range(60)]
    depths = []
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, cache="none", read_queue=4, write_queue=10,
                                 mlp=4, gap_cycles=8, write_drain=rule)
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache="none")
    checker.watch(dram)
    dram.attach_cores([reads, writes])
    dram.add_command_listener(lambda c, kind, *_: kind in (RD, WR) and depths.append((kind, *dram.queue_depths())))
    Simulator(top, seed=1).run()
    starts = stops = 0
    # Depths are taken as each RD/WR issues, after its request left its queue. Between the
    # decision to drain (or stop) and the next column command, writes only arrive.
    for (before, _, wq_before), (kind, rq, wq) in zip(depths, depths[1:]):
        if before == RD and kind == WR and rq > 0:
            starts += 1
            assert wq + 1 >= high
        if before == WR and kind == RD:
            stops += 1
            assert wq_before <= low
    assert starts >= switches and stops >= switches and dram.write_drains.value >= starts
    assert dram.writes.value == 60 and dram.reads.value == 200
    assert checker.violation_count.value == 0


@pytest.mark.parametrize("cache", CACHE_MODES)
def test_idle_skipping_changes_nothing_but_the_tick_count(cache):
    runs = []
    for skip in (True, False):
        top = Component("top", clock=dram_clock(preset(STANDARD)))
        dram = InDramCacheController("dram", top, standard=STANDARD, cache=cache, cores=2, requests_per_core=300,
                                     hot_segments=16, gap_cycles=60, mlp=2, skip_idle=skip)
        checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache=cache)
        checker.watch(dram)
        log, done = [], []
        dram.add_command_listener(lambda *command: log.append(command))
        dram.add_completion_listener(lambda *request: done.append(request))
        result = Simulator(top, seed=5).run()
        stats = (dram.reads.value, dram.writes.value, dram.cache_hits.value, dram.relocations.value,
                 dram.forwarded_reads.value, dram.energy_nj.value)
        assert checker.violation_count.value == 0
        runs.append((log, done, dram.finish, stats, result.time_ps, result.ticks))
    (log, done, finish, stats, end, ticks), (log0, done0, finish0, stats0, end0, ticks0) = runs
    assert (log, done, finish, stats, end) == (log0, done0, finish0, stats0, end0)
    assert ticks < ticks0 / 2


def test_a_write_after_a_queued_read_of_its_burst_waits_for_that_read_even_in_a_drain():
    t = preset(STANDARD)
    # Core 0 reads burst Y (bank 0, row 5, column 1) at 0, which opens row 5; core 1 reads
    # burst X (column 3) at 0; core 2 writes X at 0, then three other bursts of row 5 at 1, 2
    # and 3: the write queue (four entries) passes its high watermark (more than 3.2) and a
    # drain starts before Y's RD could issue (tRCD). Y goes first all the same: its row was
    # activated for it (the active buffer).
    done = []
    dram, checker, log = _system([[(0, 5, 1, False)], [(0, 5, 3, False)],
                                  [(0, 5, 3, True), (0, 5, 8, True), (0, 5, 9, True), (0, 5, 10, True)]],
                                 cache="none", write_queue=4, gap_cycles=1, mlp=1, completions=done)
    # The drain writes the other bursts and passes over X's write; with only that write left
    # the drain ends, X's read goes, and the write follows it (no read waits any more).
    rd_y = t.tRCD
    wr_8 = rd_y + t.read_to_write
    wr_9 = wr_8 + t.tCCD_L
    wr_10 = wr_9 + t.tCCD_L
    rd_x = wr_10 + t.write_to_read_l
    wr_x = rd_x + t.read_to_write
    assert log == [(0, ACT, 5, -1), (rd_y, RD, 5, 1), (wr_8, WR, 5, 8), (wr_9, WR, 5, 9), (wr_10, WR, 5, 10),
                   (rd_x, RD, 5, 3), (wr_x, WR, 5, 3)]
    assert [d for d in done if d[1] == 1] == [(rd_x + t.CL + t.tBL, 1, 0, False, False)]
    assert dram.write_drains.value == 2 and dram.forwarded_reads.value == 0
    assert checker.violation_count.value == 0


def test_a_drain_due_while_every_queued_write_waits_for_a_read_lets_the_reads_go():
    t = preset(STANDARD)
    # Reads of X and Y arrive at 0 and 1, each with a write of its burst: the write queue
    # (two entries) is at its high watermark at 1 while both writes wait for their reads.
    # (The inclusive rule: with two entries Ramulator 2's high mark, more than all of them,
    # is never reached while reads wait.)
    dram, checker, log = _system([[(0, 5, 3, False), (0, 5, 4, False)], [(0, 5, 3, True), (0, 5, 4, True)]],
                                 cache="none", write_queue=2, write_high=1.0, write_low=0.0, gap_cycles=0, mlp=2,
                                 write_drain="inclusive")
    rd_x = t.tRCD
    wr_x = rd_x + t.read_to_write  # X's write may go once its read has: the full queue drains it
    rd_y = wr_x + t.write_to_read_l  # no write may go: the drain ends
    wr_y = rd_y + t.read_to_write
    assert log == [(0, ACT, 5, -1), (rd_x, RD, 5, 3), (wr_x, WR, 5, 3), (rd_y, RD, 5, 4), (wr_y, WR, 5, 4)]
    assert dram.reads.value == dram.writes.value == 2 and checker.violation_count.value == 0


@pytest.mark.parametrize("cache", CACHE_MODES)
def test_random_reads_and_writes_of_few_bursts_keep_write_after_read_order(cache):
    # Four cores read and write six bursts (two rows of two banks of one bank group, so the
    # rows conflict and segments get cached), small queues: writes of bursts with reads queued
    # arrive all the time, and drains are frequent.
    rng = np.random.default_rng(7)
    bursts = [(0, 5, 3), (0, 5, 4), (0, 9, 3), (1, 5, 3), (1, 5, 40), (1, 2, 3)]
    streams = [[(*bursts[rng.integers(len(bursts))], bool(rng.random() < 0.5)) for _ in range(400)]
               for _ in range(4)]
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, cache=cache, cache_rows_per_bank=4,
                                 segment_bursts=4, read_queue=4, write_queue=4, gap_cycles=3, mlp=2)
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache=cache, cache_rows_per_bank=4)
    checker.watch(dram)
    dram.attach_cores(streams)
    done = []
    dram.add_completion_listener(lambda *request: done.append(request))
    # Which request each RD/WR serves, with its arrival order (seq): the cache may move a
    # burst, so the command's row and column do not name the request's burst.
    served = []
    column = dram._column
    dram._column = lambda c, req, *where: (served.append((c, req.seq, req.write, (req.bank, req.row, req.column))),
                                           column(c, req, *where))
    result = Simulator(top, seed=3, watchdog_cycles=100_000).run()
    assert result.reason == "stopped" and min(dram.finish) > 0  # the controller stops the run when all is done
    assert sorted((core, index) for _, core, index, _, _ in done) == [(c, i) for c in range(4) for i in range(400)]
    assert len(served) == 1600 - dram.forwarded_reads.value
    assert dram.forwarded_reads.value > 0 and dram.write_drains.value > 0
    order = 0
    for burst in bursts:
        commands = sorted((c, seq, write) for c, seq, write, b in served if b == burst)
        for i, (c, seq, write) in enumerate(commands):
            if not write:
                # No write that arrived after this read reached DRAM before it.
                assert all(later_seq < seq for _, later_seq, later_write in commands[:i] if later_write), burst
                order += sum(1 for _, later_seq, later_write in commands[i:] if later_write and later_seq > seq)
    assert order > 100  # write-after-read pairs were plentiful
    assert checker.violation_count.value == 0, checker.violations[:3]


def test_a_client_on_req_reads_4_kib_that_the_backdoor_wrote_and_merges_an_8_byte_write():
    content = bytes(range(256)) * 16
    requests = [MemRequest(address=0x2004, size_bytes=4096, source="dma", tag=1),
                MemRequest(address=0x2008, size_bytes=8, is_write=True, data=b"\xee" * 8, source="dma", tag=2),
                MemRequest(address=0x2000, size_bytes=16, source="dma", tag=3)]
    top, src, mem, sink, checker = ported_cache(requests, cache="figcache_fast")
    mem.backdoor_write(0x2004, content)
    run(top)
    assert [(m.tag, m.data) for m in sink.messages] == [
        (1, content), (2, None), (3, bytes(4) + content[:4] + b"\xee" * 8)]
    assert (mem.client_requests.value, mem.split_requests.value) == (3, 1)
    assert checker.violation_count.value == 0


@pytest.mark.parametrize("cache", CACHE_MODES)
def test_random_requests_on_req_answer_as_a_bytearray_would_in_order_per_client(cache):
    from .test_splitting import _random_requests, check_against_a_bytearray

    base, span = 0x1000_0000, 1 << 15
    requests = _random_requests(3, 120, span, base)
    top, src, mem, sink, checker = ported_cache(requests, cache=cache, base_address=base, read_queue=4,
                                                write_queue=4, segment_bursts=4)
    run(top)
    check_against_a_bytearray(requests, sink.messages, base, span, mem)
    assert checker.violation_count.value == 0
    assert (mem.cache_hits.value > 0) is (cache != "none")


def test_a_request_outside_the_cached_memory_names_the_requester():
    requests = [MemRequest(address=8 << 30, size_bytes=8, source="core0")]
    top, src, mem, sink, checker = ported_cache(requests)
    with pytest.raises(ModelAssertion) as err:
        run(top)
    assert str(err.value) == ("top.mem at 833 ps: req: read of 8 bytes at 0x200000000 from 'core0' is outside "
                              "this memory (0x0 .. 0x1ffffffff, 8589934592 bytes)")


@pytest.mark.parametrize("cache", ["none", "figcache_fast", "lisa_villa"])
def test_no_response_leaves_before_the_cache_controllers_bound(cache):
    import random

    from .test_splitting import _random_requests, check_the_bound_at_every_slice

    for seed in range(3):
        requests = _random_requests(seed, 40, 1 << 13, 0)
        cycles = sorted(random.Random(seed + 1).randrange(0, 300) for _ in requests)
        top, src, mem, sink, checker = ported_cache(requests, cycles, cache=cache, read_queue=4, write_queue=4,
                                                    segment_bursts=4)
        assert mem.reaction_ps(mem.req, mem.resp) == preset(STANDARD).tCK_ps
        assert check_the_bound_at_every_slice(top, mem, src, sink, preset(STANDARD).tCK_ps, step=3, seed=seed)


def test_column_first_serves_a_ready_row_hit_before_an_older_ready_activate_and_frfcfs_the_other_way():
    # Cores issue at once (one read each outstanding). The core-2 read of bank 4 row 1 comes
    # early but needs bank 4 precharged and activated; core 3's second read, of bank 12, comes
    # later. Bank 12's row opens at cycle a, and at a + tRCD both that RD and bank 4's ACT may
    # issue: column-first (the in-DRAM cache's default) takes the RD, frfcfs
    # (DramController's rule) the older request's ACT; the other follows one cycle later.
    streams = [[(1, 0, 0, False)], [(4, 0, 3, False), (1, 2, 0, False)], [(4, 1, 2, False), (0, 0, 2, False)],
               [(8, 2, 1, False), (12, 1, 3, False)], [(4, 0, 2, False)]]
    t = preset(STANDARD)
    orders = {}
    for scheduler in ("frfcfs_column_first", "frfcfs"):
        top = Component("top", clock=dram_clock(t))
        dram = InDramCacheController("dram", top, standard=STANDARD, cache="none", scheduler=scheduler,
                                     gap_cycles=0, mlp=1)
        checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache="none")
        checker.watch(dram)
        dram.attach_cores(streams)
        log = []
        dram.add_command_listener(lambda c, kind, rank, bg, bank, flat, row, column: log.append((c, kind, flat, row)))
        Simulator(top, seed=1).run()
        assert checker.violation_count.value == 0 and dram.reads.value == 8
        a = next(c for c, kind, bank, row in log if (kind, bank, row) == (ACT, 12, 1))
        orders[scheduler] = [(c - a, kind, bank) for c, kind, bank, row in log
                             if (kind, bank, row) in ((RD, 12, 1), (ACT, 4, 1))]
    assert orders == {"frfcfs_column_first": [(t.tRCD, RD, 12), (t.tRCD + 1, ACT, 4)],
                      "frfcfs": [(t.tRCD, ACT, 4), (t.tRCD + 1, RD, 12)]}
