"""The set-associative cache: exact hit and miss counts against pycachesim (LRU), exact cycles
of simple cases, data kept correct in front of DRAM, MSHR and bank limits, SRRIP's order."""

import subprocess
import sys

import cachesim  # noqa: F401  (pycachesim, a test dependency: a missing peer fails the module, never skips it)
import numpy as np
import pytest

from archmodel.kernel import ClockDomain, Component, ParameterError, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.compute import FixedLatencyMemory, ReferenceCore, References
from archmodel.models.memory import Cache, CacheArray, DramController
from archmodel.models.messages import MemRequest, MemResponse


_PYCACHESIM = """
import sys
import cachesim
import numpy as np
lines, writes = np.load(sys.argv[1]), np.load(sys.argv[2])
sets, ways, line_bytes = map(int, sys.argv[3:6])
memory = cachesim.MainMemory()
cache = cachesim.Cache("L", sets, ways, line_bytes, "LRU", write_back=True, write_allocate=True)
memory.load_to(cache)
memory.store_from(cache)
sim = cachesim.CacheSimulator(cache, memory)
for line, write in zip(lines.tolist(), writes.tolist()):
    (sim.store if write else sim.load)(line * line_bytes, 8)
sim.force_write_back()
stats = cache.stats()
print(stats["HIT_count"], stats["MISS_count"], stats["EVICT_count"])
"""


def pycachesim_counts(lines, writes, sets, ways, line_bytes, tmp_path):
    """(read hits, misses, dirty lines written back including those left at the end) of
    pycachesim: its HIT_count counts loads only (a store hit is not counted), its MISS_count
    loads and the fills of store misses. It runs in a process of its own: late in a long
    test session pycachesim's counts were seen to drift by a few accesses from those of a
    fresh process (state its C backend keeps), while a fresh process gives them exactly."""
    np.save(tmp_path / "lines.npy", np.asarray(lines))
    np.save(tmp_path / "writes.npy", np.asarray(writes))
    done = subprocess.run([sys.executable, "-c", _PYCACHESIM, str(tmp_path / "lines.npy"),
                           str(tmp_path / "writes.npy"), str(sets), str(ways), str(line_bytes)],
                          capture_output=True, text=True, check=True)
    return tuple(int(word) for word in done.stdout.split())


def graph_like_stream(n, seed):
    """Line numbers mixing a sequential sweep with skewed random reads, as graph kernels make."""
    rng = np.random.default_rng(seed)
    sweep = np.arange(n) // 8
    hot = (rng.zipf(1.3, n) % 4096) + 10_000
    lines = np.where(rng.random(n) < 0.5, sweep, hot)
    writes = rng.random(n) < 0.2
    return lines, writes


@pytest.mark.parametrize("sets, ways", [(1, 8), (64, 1), (64, 4), (256, 16)])
@pytest.mark.parametrize("with_writes", [False, True])
def test_the_tag_store_counts_what_pycachesim_counts_on_lru(sets, ways, with_writes, tmp_path):
    lines, writes = graph_like_stream(20_000, seed=sets + ways)
    if not with_writes:
        writes[:] = False
    # pycachesim's stores mark a hit line dirty without making it the most recent: the
    # difference matters only with writes, and the option reproduces it.
    array = CacheArray(sets, ways, "lru", write_hits_touch=not with_writes)
    read_hits = misses = writebacks = 0
    for line, write in zip(lines.tolist(), writes.tolist()):
        hit, _, dirty = array.access(line, write)
        read_hits += hit and not write
        misses += not hit
        writebacks += dirty
    want_hits, want_misses, want_evicts = pycachesim_counts(lines, writes, sets, ways, 64, tmp_path)
    assert (read_hits, misses) == (want_hits, want_misses)
    assert writebacks + len(array.dirty) == want_evicts


def cache_system(stream, *, window=8, memory="fixed", **cache_params):
    """ReferenceCore -> Cache -> a memory, one clock; the run stops when the core is done."""
    top = Component("top", clock=ClockDomain("clk", 1000))
    core = ReferenceCore("core", top, window=window)
    cache = Cache("llc", top, **cache_params)
    if memory == "fixed":
        mem = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 22, latency_cycles=20)
        connect(mem.rsp, cache.mem_resp)
    else:
        mem = DramController("mem", top, standard="DDR4-2400R")
        connect(mem.resp, cache.mem_resp)
    connect(core.req, cache.req[0])
    connect(cache.resp[0], core.resp)
    connect(cache.mem_req, mem.req)
    core.load(stream)
    core.on_finish(lambda c: c.sim.stop("core done"))
    return top, core, cache, mem


def line_stream(lines, writes, line_bytes=64):
    """References of 8 bytes at the start of each line; a write stores its index, a read expects
    the last value written there (zero before)."""
    last = {}
    values = []
    for i, (line, write) in enumerate(zip(lines.tolist(), writes.tolist())):
        if write:
            last[line] = i
            values.append(i)
        else:
            values.append(last.get(line, 0))
    n = len(lines)
    return References(np.asarray(lines) * line_bytes, np.full(n, 8), writes, np.zeros(n, int), np.zeros(n, int),
                      values)


@pytest.mark.parametrize("window", [1, 8])
def test_the_timed_cache_counts_what_pycachesim_counts_and_reads_what_was_written(window, tmp_path):
    lines, writes = graph_like_stream(4000, seed=7)
    lines = lines % 60_000  # inside the 4 MiB memory
    top, core, cache, mem = cache_system(line_stream(lines, writes), window=window, size_bytes=16 * 1024, ways=4,
                                         mshrs=4, write_hits_touch=False)
    Simulator(top).run()
    assert core.done and core.references.value == len(lines)
    _, misses, evicts = pycachesim_counts(lines, writes, 64, 4, 64, tmp_path)
    assert cache.misses.value == misses
    assert cache.accesses.value == len(lines)
    assert cache.hits.value + cache.delayed_hits.value == len(lines) - misses
    assert cache.writebacks.value <= evicts
    assert cache.mshr_occupancy.maximum <= 4
    # What the core wrote is what a check reads, through the cache or behind it once written back.
    final = {line: i for i, (line, w) in enumerate(zip(lines.tolist(), writes.tolist())) if w}
    for line, i in final.items():
        assert int.from_bytes(cache.backdoor_read(line * 64, 8), "little") == i


def test_a_miss_then_a_hit_take_the_cycles_the_parameters_say():
    # One read misses (4 cycles of lookup, the link, 1 + 20 cycles in the memory, the link
    # back, one cycle to forward the fill, the link to the core), then one hits (4 cycles).
    stream = References([0x40, 0x48], [8, 8], [False, False], [0, 0], [0, 1], [0, 0])
    top, core, cache, mem = cache_system(stream, size_bytes=4096, ways=2, hit_latency_cycles=4)
    Simulator(top).run()
    # core sends at 0, the cache takes it at 1, looks up until 5, the memory takes it at 6,
    # answers at 6 + 1 + 20 = 27, the cache takes it at 28 and answers at 29, the core has
    # it at 30, sends the dependent read at 30; the cache has it at 31 and answers at 35,
    # the core at 36.
    assert core.done_cycle == 36
    assert (cache.misses.value, cache.hits.value) == (1, 1)
    assert cache.miss_latency.samples.tolist() == [23]


def test_misses_overlap_up_to_the_mshrs():
    n = 64
    stream = References(np.arange(n) * 64, np.full(n, 8), np.zeros(n, bool), np.zeros(n, int), np.zeros(n, int),
                        np.zeros(n, int))
    cycles = {}
    for mshrs in (1, 4, 16):
        top, core, cache, mem = cache_system(stream, window=16, size_bytes=64 * 1024, ways=4, mshrs=mshrs)
        Simulator(top).run()
        cycles[mshrs] = core.done_cycle
        assert cache.mshr_occupancy.maximum == mshrs
    assert cycles[1] > 3 * cycles[4] > 3 * cycles[16] / 1.5
    # one at a time, each miss costs its whole round trip
    assert cycles[1] >= n * 23


def test_data_stays_right_in_front_of_dram_with_writebacks_and_any_request_size():
    rng = np.random.default_rng(3)
    n = 3000
    addresses = rng.integers(0, 64 * 1024, n) & ~7
    writes = rng.random(n) < 0.4
    image = bytearray(64 * 1024)
    values = []
    for i, (a, w) in enumerate(zip(addresses.tolist(), writes.tolist())):
        if w:
            image[a:a + 8] = int(i * 2654435761 % (1 << 64)).to_bytes(8, "little")
            values.append(i * 2654435761 % (1 << 64))
        else:
            values.append(int.from_bytes(image[a:a + 8], "little"))
    stream = References(addresses, np.full(n, 8), writes, rng.integers(0, 3, n), np.zeros(n, int), values)
    top, core, cache, mem = cache_system(stream, window=12, memory="dram", size_bytes=4096, ways=2, mshrs=6,
                                         policy="srrip")
    Simulator(top).run()
    assert core.done and cache.writebacks.value > 100
    assert cache.backdoor_read(0, len(image)) == bytes(image)
    # A request spanning lines is cut into line pieces and answered once.
    assert cache.bytes_written.value == 64 * cache.writebacks.value


def test_two_clients_of_one_bank_conflict_and_two_banks_do_not():
    def run(banks):
        top = Component("top", clock=ClockDomain("clk", 1000))
        cache = Cache("llc", top, size_bytes=4096, ways=2, clients=2, banks=banks)
        mem = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 16, latency_cycles=5)
        connect(cache.mem_req, mem.req)
        connect(mem.rsp, cache.mem_resp)
        cores = []
        for k in range(2):
            # both clients read their own line at the same cycles: lines 0,2,4.. and 1,3,5..
            n = 16
            core = ReferenceCore(f"core{k}", top, window=4)
            core.load(References((np.arange(n) % 4 * 2 + k) * 64, np.full(n, 8), np.zeros(n, bool),
                                 np.zeros(n, int), np.zeros(n, int), np.zeros(n, int)))
            connect(core.req, cache.req[k])
            connect(cache.resp[k], core.resp)
            cores.append(core)
        Simulator(top).run()
        assert all(c.done for c in cores)
        return cache.bank_conflicts.value
    assert run(banks=1) > 0
    assert run(banks=2) == 0


def test_srrip_keeps_a_reused_line_through_a_scan_that_lru_loses():
    # One set of 4 ways: line 0 is used twice between scans of 4 new lines each. LRU loses it
    # to every scan (one hit a round); SRRIP predicts the scan lines far and keeps it.
    stream = []
    for scan in range(4):
        stream += [0, 0]
        stream.extend(range(100 + 4 * scan, 104 + 4 * scan))
    def hits(policy):
        array = CacheArray(1, 4, policy)
        return sum(array.access(line)[0] for line in stream)
    assert hits("lru") == 4
    assert hits("srrip") == 1 + 2 * 3


def test_miss_classes_add_up_and_a_direct_mapped_ping_pong_is_conflict():
    top, core, cache, mem = cache_system(References([0, 4096, 0, 4096], [8] * 4, [False] * 4, [0] * 4, [0] * 4,
                                                    [0] * 4), size_bytes=4096, ways=1, classify_misses=True)
    Simulator(top).run()
    assert (cache.compulsory_misses.value, cache.conflict_misses.value, cache.capacity_misses.value) == (2, 2, 0)


def test_a_size_that_is_no_whole_number_of_sets_is_an_error():
    with pytest.raises(ParameterError) as err:
        Cache("llc", Component("top"), size_bytes=3000, ways=4)
    assert str(err.value).startswith("error: top.llc: size_bytes 3000 is not a whole number of sets of 4 lines of 64 "
                                     "bytes")


def test_hits_under_a_miss_leave_before_it_when_answers_may_overtake():
    # Line 1 is fetched first; later a miss to line 0 is followed by five hits to line 1.
    # In order the hits wait for the miss's fill; out of order they leave after their lookup.
    requests = [MemRequest(address=64, size_bytes=8, tag=0, source="c")]
    requests += [MemRequest(address=0, size_bytes=8, tag=1, source="c")]
    requests += [MemRequest(address=64 + 8 * i, size_bytes=8, tag=2 + i, source="c") for i in range(5)]
    got = {}
    for in_order in (True, False):
        top = Component("top", clock=ClockDomain("clk", 1000))
        src = Source("src", top, pattern="list", messages=requests, cycles=[0, 100, 101, 102, 103, 104, 105],
                     wrap_in_packet=False)
        cache = Cache("llc", top, size_bytes=4096, ways=2, hit_latency_cycles=4, in_order=in_order)
        mem = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 16, latency_cycles=20)
        sink = Sink("sink", top, stop_after=len(requests))
        connect(src.out, cache.req[0])
        connect(cache.resp[0], sink.inp)
        connect(cache.mem_req, mem.req)
        connect(mem.rsp, cache.mem_resp)
        Simulator(top).run()
        got[in_order] = ([m.tag for m in sink.messages], sink.arrival_cycles)
    assert got[True][0] == [0, 1, 2, 3, 4, 5, 6]
    assert got[False][0] == [0, 2, 3, 4, 5, 6, 1]
    # the first hit, sent at 101, is taken at 102, answered after its 4-cycle lookup at 106
    # and at the sink at 107
    assert got[False][1][1] == 101 + 1 + 4 + 1
    assert got[True][1][2] > got[True][1][1] >= 100 + 4 + 23


def test_the_stream_prefetcher_serves_a_sequential_stream_ahead_and_keeps_data():
    n = 512
    values = list(range(n))
    writes = References(np.arange(n) * 8, np.full(n, 8), np.ones(n, bool), np.zeros(n, int), np.zeros(n, int), values)
    reads = References(np.arange(n) * 8 + 64 * 1024, np.full(n, 8), np.zeros(n, bool), np.zeros(n, int),
                       np.zeros(n, int), np.zeros(n, int))
    cycles = {}
    for degree in (0, 4):
        top, core, cache, mem = cache_system(References.concatenate([writes, reads]), window=16, size_bytes=8192,
                                             ways=4, mshrs=16, prefetch_degree=degree, in_order=False)
        Simulator(top).run()
        cycles[degree] = core.done_cycle
        assert cache.backdoor_read(0, 8 * n) == b"".join(v.to_bytes(8, "little") for v in values)
        if degree:
            # all but the first misses of each stream are served from the stream buffers
            assert cache.useful_prefetches.value >= cache.misses.value - 8
            assert cache.prefetches.value <= cache.useful_prefetches.value + 2 * 4 * degree
    assert cycles[4] < 0.6 * cycles[0]


class ReorderingMemory(FixedLatencyMemory):
    """A memory that applies each request as it arrives (so a read sees every write sent
    before it, as any memory keeps one address in order) but answers after a random
    1..``JITTER_CYCLES`` cycles each (drawn from :attr:`delays`, which a test seeds), so
    answers overtake each other as a DRAM's banks, an interleaver's channels or a network's
    paths let them. A test may set :attr:`delay_of` (request -> cycles) to order them itself."""

    JITTER_CYCLES = 80

    def setup(self) -> None:
        super().setup()
        self.delays = np.random.default_rng(0)
        self.delay_of = lambda request: 1 + int(self.delays.integers(0, self.JITTER_CYCLES))
        self.pending = []  # (cycle due, order taken, response)
        self.taken = 0

    def earliest_send_ps(self, port) -> int | None:
        if not self.pending:
            return None
        return self.domain.phase_ps + min(self.pending)[0] * self.domain.period_ps

    def reaction_ps(self, inp, out) -> int:
        return self.domain.period_ps

    @property
    def idle(self) -> bool:
        return not self.pending

    def tick(self) -> None:
        cycle = self.cycle
        if self.req.valid:
            request = self.req.recv()
            offset = self.offset_of(request.address, request.size_bytes)
            data = None
            if request.is_write:
                self.data[offset:offset + request.size_bytes] = request.data
            else:
                data = bytes(self.data[offset:offset + request.size_bytes])
            due = cycle + self.delay_of(request)
            self.pending.append((due, self.taken, MemResponse(tag=request.tag, data=data, source=request.source,
                                                              created_ps=request.created_ps)))
            self.taken += 1
            self.ready_changes += 1
        if self.pending:
            first = min(self.pending)
            if first[0] <= cycle and self.rsp.try_send(first[2]):
                self.pending.remove(first)
                self.ready_changes += 1
        if not self.pending:
            self.sleep()


def integrity_stream(n, seed, region_lines):
    """8-byte reads and writes at random words of a few lines, mostly in sequential sweeps
    (so streams start, run into each other and leave full buffers) and partly at random; a
    write stores a value unique to it, a read expects the last value a plain dictionary of
    memory holds for its word (zero before any write)."""
    rng = np.random.default_rng(seed)
    sweep = (np.arange(n) // 2 + rng.integers(0, region_lines)) % region_lines
    lines = np.where(rng.random(n) < 0.7, sweep, rng.integers(0, region_lines, n))
    addresses = lines * 64 + rng.integers(0, 8, n) * 8
    writes = rng.random(n) < 0.4
    memory = {}
    values = []
    for i, (a, w) in enumerate(zip(addresses.tolist(), writes.tolist())):
        if w:
            memory[a] = i + 1
        values.append(memory.get(a, 0))
    stream = References(addresses, np.full(n, 8), writes, np.zeros(n, int), np.zeros(n, int), values)
    return stream, memory


@pytest.mark.parametrize("engine, prefetch_degree", [("python", 4), ("python", 0), ("compiled", 0)])
@pytest.mark.parametrize("seed", range(12))
def test_every_read_sees_the_last_write_with_prefetches_and_answers_that_overtake(engine, prefetch_degree, seed):
    # The invariant: whatever the order answers come back in, every read answers the value a
    # dictionary of memory holds (the core stops the run on a wrong one), and the bytes left
    # through the cache are the dictionary's. Small buffers and a small cache make entries
    # drop, lines leave dirty and come back while older fetches of them are still on their way.
    stream, memory = integrity_stream(3000, seed, region_lines=32)
    top = Component("top", clock=ClockDomain("clk", 1000))
    core = ReferenceCore("core", top, window=16, engine=engine)
    cache = Cache("llc", top, size_bytes=1024, ways=2, mshrs=8, prefetch_degree=prefetch_degree, streams=1,
                  in_order=bool(seed % 2))
    mem = ReorderingMemory("mem", top, base_address=0, size_bytes=1 << 16)
    mem.delays = np.random.default_rng(seed)
    connect(core.req, cache.req[0])
    connect(cache.resp[0], core.resp)
    connect(cache.mem_req, mem.req, latency=20)
    connect(mem.rsp, cache.mem_resp, latency=20)
    core.load(stream)
    core.on_finish(lambda c: c.sim.stop("core done"))
    Simulator(top).run()
    assert core.done and core.references.value == len(stream.address)
    assert (core.compiled is not None) == (engine == "compiled")
    assert cache.writebacks.value > 200
    if prefetch_degree:
        assert cache.prefetches.value > 500 and cache.useful_prefetches.value > 300
    for address, value in memory.items():
        assert int.from_bytes(cache.backdoor_read(address, 8), "little") == value


def test_an_old_prefetch_answer_never_fills_a_newer_fetch_of_its_line():
    # Direct-mapped, 8 sets, one stream buffer of 4 lines, a serial core. Misses to 0, 1, 2
    # prefetch 3..6; the first fetch of line 3 takes 2000 cycles. Misses to 16, 17, 18 start a
    # stream that drops 3..6 from the buffer. The core writes line 3 (a demand fill, 1 cycle),
    # line 11 evicts it dirty (a write-back), misses to 0, 1, 2 prefetch line 3 again (3000
    # cycles) and the read of line 3 claims that fetch. The old fetch's answer comes first, with
    # the zeros from before the write: it must not fill the line (the core checks the read).
    refs = [(0, False), (1, False), (2, False), (16, False), (17, False), (18, False), (3, True), (11, False),
            (0, False), (1, False), (2, False), (3, False)]
    lines = np.array([line for line, _ in refs])
    writes = np.array([write for _, write in refs])
    stream = line_stream(lines, writes)
    assert stream.value[-1] == 6  # the read of line 3 expects the write's value
    top = Component("top", clock=ClockDomain("clk", 1000))
    core = ReferenceCore("core", top, window=1)
    cache = Cache("llc", top, size_bytes=512, ways=1, mshrs=8, prefetch_degree=4, streams=1)
    mem = ReorderingMemory("mem", top, base_address=0, size_bytes=1 << 16)
    reads_of_line_3 = []

    def delay_of(request):
        if request.address == 3 * 64 and not request.is_write:
            reads_of_line_3.append(request.tag)
            return {1: 2000, 2: 1, 3: 3000}[len(reads_of_line_3)]
        return 1

    mem.delay_of = delay_of
    connect(core.req, cache.req[0])
    connect(cache.resp[0], core.resp)
    connect(cache.mem_req, mem.req, latency=20)
    connect(mem.rsp, cache.mem_resp, latency=20)
    core.load(stream)
    core.on_finish(lambda c: c.sim.stop("core done"))
    Simulator(top).run()
    assert core.done and len(reads_of_line_3) == 3
    assert (cache.writebacks.value, cache.useful_prefetches.value) == (1, 1)
    # the last read waited for the second prefetch of line 3, not the first
    assert core.done_cycle > 3000
    assert int.from_bytes(cache.backdoor_read(3 * 64, 8), "little") == 6


def test_a_check_after_the_last_answer_sees_a_write_back_still_on_a_long_link():
    # Shrunk from PageRank's wrong rank (rmat, 60-cycle links, stream buffers on). Direct-mapped,
    # 8 sets, a serial core. Line 0 is written; misses to 13, 14, 15 start a stream that
    # fetches 16..19. The read of 16, long after, finds its line in the buffer: it moves into
    # the cache at once, evicting line 0 dirty, and is answered with no fill of its own, so the
    # core is done while line 0's write-back still travels the 60-cycle link. A check then (the
    # workload's, through backdoor_read) must see the written bytes.
    refs = [(5, False), (0, True), (13, False), (14, False), (15, False), (16, False)]
    stream = line_stream(np.array([line for line, _ in refs]), np.array([write for _, write in refs]))
    stream.gap[-1] = 1000  # (the prefetch of 16 has long arrived)
    top = Component("top", clock=ClockDomain("clk", 1000))
    core = ReferenceCore("core", top, window=1, engine="python")
    cache = Cache("llc", top, size_bytes=512, ways=1, prefetch_degree=4, streams=1)
    mem = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 16, latency_cycles=10)
    connect(core.req, cache.req[0])
    connect(cache.resp[0], core.resp)
    connect(cache.mem_req, mem.req, latency=60)
    connect(mem.rsp, cache.mem_resp, latency=60)
    checked = []
    core.on_finish(lambda c: checked.append((cache.backdoor_read(0, 8), mem.backdoor_read(0, 8))))
    core.on_finish(lambda c: c.sim.stop("core done"))
    core.load(stream)
    sim = Simulator(top)
    sim.run()
    assert (cache.useful_prefetches.value, cache.writebacks.value) == (1, 1)
    through_cache, in_memory = checked[0]
    assert in_memory == bytes(8)  # the write-back had not arrived: the case this test is about
    assert int.from_bytes(through_cache, "little") == 1
    sim.run(until_ps=sim.now + 200 * 1000)  # it arrives, is acknowledged, and is forgotten
    assert int.from_bytes(mem.backdoor_read(0, 8), "little") == 1
    assert int.from_bytes(cache.backdoor_read(0, 8), "little") == 1
