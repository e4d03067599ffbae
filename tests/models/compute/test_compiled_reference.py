"""The compiled core + cache pair against the Python models: on random reference streams,
cache geometries, channel latencies and phases, over an ideal memory (played inside the
pair's loop, and left outside it) and a DDR4 controller, both engines finish at the same
cycle with the same statistics of the core, the cache and the memory, and leave the same
bytes in memory."""

import numpy as np
import pytest

from archmodel.kernel import ClockDomain, Component, ModelAssertion, Simulator, connect
from archmodel.models.compute import Barrier, FixedLatencyMemory, ReferenceCore, References, compiled_reference
from archmodel.models.memory import Cache, DramController

BASE = 0


def random_stream(rng, n, span_lines, writes=0.3, gaps=(0, 0, 1, 2, 5)):
    """n references to ``span_lines`` lines, sizes 1..8 aligned inside an 8-byte word, with
    dependences on earlier references and compute cycles between entries drawn from
    ``gaps``; each read expects the value program order gives."""
    size = rng.choice([1, 2, 4, 8], n, p=[0.1, 0.1, 0.3, 0.5])
    word = rng.integers(0, span_lines * 8, n)
    offset = (rng.integers(0, 8, n) // size) * size
    address = BASE + word * 8 + offset
    write = rng.random(n) < writes
    gap = rng.choice(gaps, n)
    dep = np.where(rng.random(n) < 0.3, rng.integers(1, 6, n), 0)
    dep = np.minimum(dep, np.arange(n))
    memory = bytearray(rng.integers(0, 256, span_lines * 64 + 64, dtype=np.uint8).tobytes())
    initial = bytes(memory)
    value = np.zeros(n, dtype=np.uint64)
    for i in range(n):
        a, s = int(address[i]) - BASE, int(size[i])
        if write[i]:
            v = int(rng.integers(0, 1 << 62)) & ((1 << (8 * s)) - 1)
            memory[a:a + s] = v.to_bytes(s, "little")
        else:
            v = int.from_bytes(memory[a:a + s], "little")
        value[i] = v
    return References(address, size, write, gap, dep, value), initial


def build(engine, stream, initial, case, memory_kind):
    top = Component("top", clock=ClockDomain("clk", 500))
    core = ReferenceCore("core", top, window=case["window"], engine=engine)
    cache = Cache("llc", top, size_bytes=case["sets"] * case["ways"] * 64, ways=case["ways"],
                  hit_latency_cycles=case["hit"], mshrs=case["mshrs"], mshr_targets=case["targets"],
                  write_buffer=case["wb"], queue=case["queue"], in_order=case["in_order"], policy=case["policy"],
                  write_hits_touch=case["touch"])
    if memory_kind == "ideal":
        memory = FixedLatencyMemory("mem", top, base_address=BASE, size_bytes=case.get("mem_bytes", 1 << 20),
                                    latency_cycles=case["mem_latency"], bytes_per_cycle=case.get("mem_bpc", 64))
    else:
        memory = DramController("mem", top, standard=case.get("standard", "DDR4-2400R"), base_address=BASE)
    # (lines leave ahead while the credits of mem_req last: few credits and long links too)
    connect(memory.rsp if memory_kind == "ideal" else memory.resp, cache.mem_resp, latency=case.get("mr", 1))
    connect(core.req, cache.req[0], latency=case["lq"])
    connect(cache.resp[0], core.resp, latency=case["lr"])
    connect(cache.mem_req, memory.req, latency=case.get("mq", 1), capacity=case.get("mcap"))
    memory.backdoor_write(BASE, initial)
    ends = case["ends"]
    core.load(stream, ends, Barrier(1, latency_cycles=case["barrier"]) if ends else None)
    core.on_finish(lambda c: c.sim.stop("done"))
    return top, core, cache, memory


def figures(parts):
    out = {}
    for part in parts:
        for stat in part.stats:
            out[f"{part.path}.{stat.name}"] = stat.summary()
    return out


def random_case(rng, n):
    ways = int(rng.choice([1, 2, 4]))
    return dict(window=int(rng.choice([1, 4, 16])), sets=int(rng.choice([2, 4, 8])), ways=ways,
                hit=int(rng.integers(1, 6)), mshrs=int(rng.choice([1, 2, 4])), targets=int(rng.choice([1, 2, 8])),
                wb=int(rng.choice([1, 2, 8])), queue=int(rng.choice([1, 2, 16])), in_order=bool(rng.random() < 0.5),
                policy=str(rng.choice(["lru", "srrip"])), touch=bool(rng.random() < 0.7),
                mem_latency=int(rng.integers(1, 40)), lq=int(rng.integers(1, 3)), lr=int(rng.integers(1, 3)),
                barrier=int(rng.integers(1, 30)),
                ends=sorted(rng.integers(0, n, int(rng.integers(0, 4))).tolist() + [0, n] * int(rng.random() < 0.2)),
                mq=int(rng.integers(1, 4)), mcap=int(rng.integers(1, 5)), mr=int(rng.integers(1, 3)),
                mem_bpc=int(rng.choice([8, 16, 64])),
                standard=str(rng.choice(["DDR4-2400R", "DDR4-3200AA", "DDR5-4800B", "HBM2"])))


@pytest.fixture
def ideal_memory_outside(monkeypatch):
    """The pair leaves an ideal memory outside its loop (as it does any other memory)."""
    monkeypatch.setattr(compiled_reference, "PLAY_IDEAL_MEMORY", False)


@pytest.mark.parametrize("memory_kind", ["ideal", "ideal outside", "dram"])
@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_pair_runs_the_cycles_and_counts_of_the_python_models(seed, memory_kind, monkeypatch):
    if memory_kind == "ideal outside":
        monkeypatch.setattr(compiled_reference, "PLAY_IDEAL_MEMORY", False)
        memory_kind = "ideal"
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 400))
    case = random_case(rng, n)
    stream, initial = random_stream(rng, n, span_lines=int(rng.choice([4, 16, 64])))
    results = {}
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial, case, memory_kind)
        Simulator(top).run()
        assert core.done, (engine, case)
        assert (core.compiled is not None) == (engine == "compiled")
        if engine == "compiled":
            inside = memory_kind == "ideal" and compiled_reference.PLAY_IDEAL_MEMORY
            assert (core.compiled.memory is memory) == inside
        results[engine] = (core.done_cycle, figures([core, cache, memory]),
                           cache.backdoor_read(BASE, len(initial)), memory.backdoor_read(BASE, len(initial)))
    py, comp = results["python"], results["compiled"]
    assert comp[0] == py[0], case
    assert comp[1] == py[1], case
    assert comp[2] == py[2] and comp[3] == py[3]


@pytest.mark.parametrize("memory_kind", ["ideal outside", "dram"])
@pytest.mark.parametrize("seed", range(12))
def test_a_pair_woken_by_a_fill_before_the_end_of_a_quiet_wait_counts_as_the_python_models(seed, memory_kind,
                                                                                         monkeypatch):
    # Long compute gaps: the pair waits quietly for the core's next entry with a wake-up
    # asked for, and a fill that comes before it starts a batch that computes past it; the
    # wake-up then comes in cycles already computed, and must not run them again (it did:
    # the dependence stalls were counted twice).
    if memory_kind == "ideal outside":
        monkeypatch.setattr(compiled_reference, "PLAY_IDEAL_MEMORY", False)
        memory_kind = "ideal"
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(300, 800))
    case = dict(random_case(rng, n), mem_latency=int(rng.integers(20, 80)))
    stream, initial = random_stream(rng, n, span_lines=int(rng.choice([16, 64, 256])), gaps=(0, 0, 1, 3, 12, 40))
    results = {}
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial, case, memory_kind)
        Simulator(top).run()
        assert core.done, (engine, case)
        results[engine] = (core.done_cycle, figures([core, cache, memory]), memory.backdoor_read(BASE, len(initial)))
    assert results["compiled"] == results["python"], case
    if seed == 9:  # (this case meets such a wake-up: the test must keep one that does)
        assert core.compiled.woken_inside


@pytest.mark.parametrize("memory_kind", ["ideal", "ideal outside", "dram"])
@pytest.mark.parametrize("seed", range(2))
def test_cut_short_the_pair_shows_the_bytes_of_write_backs_still_on_their_way(seed, memory_kind, monkeypatch):
    # Long links to memory keep write-backs travelling; at each cut of the run the pair
    # publishes what it holds, and backdoor_read through the cache (the lines held, then the
    # write-backs not yet acknowledged, over the memory) gives the Python models' bytes.
    if memory_kind == "ideal outside":
        monkeypatch.setattr(compiled_reference, "PLAY_IDEAL_MEMORY", False)
        memory_kind = "ideal"
    rng = np.random.default_rng(100 + seed)
    stream, initial = random_stream(rng, 300, span_lines=32, writes=0.5)
    case = dict(random_case(rng, 300), sets=2, ways=2, mshrs=4, wb=8, ends=[], mq=40, mr=40, mcap=None)
    views = {}
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial, case, memory_kind)
        sim = Simulator(top)
        views[engine] = []
        while not core.done:
            sim.run(until_ps=sim.now + 97 * 500)
            views[engine].append((cache.backdoor_read(BASE, len(initial)), cache.writebacks.value))
    assert len(views["python"]) > 5 and views["compiled"] == views["python"]

def test_the_pair_computes_ahead_in_batches_of_many_cycles():
    rng = np.random.default_rng(7)
    stream, initial = random_stream(rng, 3000, span_lines=16, writes=0.1)
    case = dict(random_case(rng, 3000), sets=8, ways=4, mshrs=4, ends=[])
    top, core, cache, memory = build("compiled", stream, initial, case, "dram")
    Simulator(top).run()
    pair = core.compiled
    assert core.done and pair.batches < core.done_cycle / 4
    # waits for fills asleep; lines leave inside batches, which ask the lookahead where an
    # answer may come (the memory bounds its answers to the lines on their way) and go on
    assert pair.exits["quiet"] and pair.sent_ahead and pair.asked_at_answer


def test_a_batch_asks_its_question_before_its_first_cycle_unless_a_line_leaves_at_it(monkeypatch):
    # The question asked before the first cycle gets the answer it would get after it when
    # that cycle sends nothing, so such a batch is one call of the loop; and a question asked
    # once lines are on their way bounds their answers, so the loop then stops at the round
    # trip only of a line it sends itself (an EXIT_ANSWER follows a send in the same call).
    from archmodel.models.compute import compiled_reference_loop as loop
    rng = np.random.default_rng(7)
    stream, initial = random_stream(rng, 3000, span_lines=256, writes=0.3)
    # (one credit to memory: a line due when the batch holds none leaves at the next one's first cycle)
    case = dict(random_case(rng, 3000), sets=8, ways=4, mshrs=4, ends=[], mcap=1)
    events = []
    run, end, tick = loop.run, compiled_reference.CompiledPair._end, compiled_reference.CompiledPair.tick

    def counted_tick(pair):
        ks = pair.ks
        c = pair.cache.cycle
        due = bool(ks[loop.O_LEN] > 0 and pair.o_leave[ks[loop.O_HEAD]] <= c and not pair.finished)
        events.append(["tick", due and c >= pair.resume])
        tick(pair)

    def counted_run(now, start, stop, geo, cs, ks, *rest):
        out = int(ks[loop.O_OUT])
        more, reason = run(now, start, stop, geo, cs, ks, *rest)
        events.append(["run", reason, int(ks[loop.O_OUT]) > out])
        return more, reason

    def counted_end(pair, c):
        events.append(["ask"])
        return end(pair, c)

    monkeypatch.setattr(loop, "run", counted_run)
    monkeypatch.setattr(compiled_reference.CompiledPair, "_end", counted_end)
    monkeypatch.setattr(compiled_reference.CompiledPair, "tick", counted_tick)
    top, core, cache, memory = build("compiled", stream, initial, case, "dram")
    Simulator(top).run()
    assert core.done
    firsts = {True: 0, False: 0}
    for k, event in enumerate(events):
        if event[0] == "run" and event[1] == loop.EXIT_ANSWER:
            assert event[2], "the loop stopped at the round trip of a line handed over before a question"
        if event[0] == "tick" and k + 1 < len(events) and events[k + 1][0] != "tick":
            first = events[k + 1][0]
            assert first == ("run" if event[1] else "ask")
            firsts[event[1]] += 1
    assert firsts[True] > 50 and firsts[False] > 500  # (both kinds of batch are met)


def test_the_pair_plays_an_ideal_memory_below_it_in_a_few_batches():
    rng = np.random.default_rng(5)
    stream, initial = random_stream(rng, 3000, span_lines=64, writes=0.3)
    case = dict(random_case(rng, 3000), sets=4, ways=2, mshrs=4, wb=2, ends=[], mem_latency=30, mcap=2, mem_bpc=8)
    runs = {}
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial, case, "ideal")
        Simulator(top).run()
        runs[engine] = (core.done_cycle, figures([core, cache, memory]), memory.backdoor_read(BASE, len(initial)))
    assert runs["python"] == runs["compiled"]
    pair = core.compiled
    # hundreds of misses, none leaving the loop: the run is a few batches (the first edge, the rest, the finish)
    assert cache.misses.value > 500 and cache.miss_latency.count == cache.misses.value
    assert pair.batches <= 3 and not pair.sent and not pair.sent_ahead
    # a run longer than the watchdog's window: no transfer crosses a channel, yet the pair
    # shows progress in every half window (a batch stops there), so nothing is reported stuck
    top, core, cache, memory = build("compiled", stream, initial, case, "ideal")
    Simulator(top, watchdog_cycles=400).run()
    assert (core.done_cycle, figures([core, cache, memory])) == runs["python"][:2]
    assert core.compiled.batches >= core.done_cycle // 200


def test_a_miss_outside_an_ideal_memory_played_inside_stops_the_run_naming_it():
    rng = np.random.default_rng(9)
    stream, initial = random_stream(rng, 200, span_lines=64, writes=0.0)
    case = dict(random_case(rng, 200), ends=[], mem_bytes=32 * 64)
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial[:32 * 64], case, "ideal")
        with pytest.raises(ModelAssertion, match=r"top.mem at \d+ ps: access of 64 bytes at 0x[0-9a-f]{8} is "
                                                 r"outside this memory \(0x00000000 .. 0x000007ff\)"):
            Simulator(top).run()


def test_lines_leave_inside_a_batch_while_the_credits_to_memory_last(ideal_memory_outside):
    rng = np.random.default_rng(11)
    stream, initial = random_stream(rng, 2000, span_lines=64, writes=0.3)
    base = dict(random_case(rng, 2000), sets=4, ways=2, mshrs=4, wb=8, ends=[], mem_latency=30, mq=2, mr=1)
    runs = {}
    for credits in (1, 8):
        case = dict(base, mcap=credits)
        for engine in ("python", "compiled"):
            top, core, cache, memory = build(engine, stream, initial, case, "ideal")
            Simulator(top).run()
            runs[credits, engine] = (core.done_cycle, figures([core, cache, memory]))
        assert runs[credits, "python"] == runs[credits, "compiled"]
        pair = core.compiled
        # one credit: a second line due in the batch finds none, and the batch stops before it
        assert bool(pair.exits.get("send")) == (credits == 1) and pair.sent_ahead


def test_a_wrong_read_answer_stops_the_compiled_run_naming_the_reference():
    rng = np.random.default_rng(3)
    stream, initial = random_stream(rng, 100, span_lines=4, writes=0.0)
    stream.value[40] ^= np.uint64(1)
    top, core, cache, memory = build("compiled", stream, initial, dict(random_case(rng, 100), ends=[]), "ideal")
    with pytest.raises(ModelAssertion, match="reference 40: read of"):
        Simulator(top).run()


def test_engine_compiled_says_why_it_does_not_apply():
    top = Component("top", clock=ClockDomain("clk", 500))
    core = ReferenceCore("core", top, engine="compiled")
    memory = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 16)
    connect(core.req, memory.req)
    connect(memory.rsp, core.resp)
    core.load(References([0], [8], [False], [0], [0], [0]))
    with pytest.raises(ModelAssertion, match="engine 'compiled' does not apply: top.core.req does not lead "
                                             "straight to a cache"):
        Simulator(top).run()


def isolated_misses(count, hits_between=24):
    """Reads: a miss to a fresh line, then ``hits_between`` independent hits to one hot line,
    ``count`` times: each miss leaves while nothing else of the pair's is out below (the
    previous fill came back during the hits), and the hits go on past its answer's arrival."""
    rng = np.random.default_rng(1)
    lines = 4 + count
    memory = rng.integers(0, 256, lines * 64, dtype=np.uint8).tobytes()
    address = []
    for k in range(count):
        address.append(64 * (4 + k))
        address.extend(8 * (j % 8) for j in range(hits_between))
    address = np.array(address, dtype=np.int64)
    value = [int.from_bytes(memory[a:a + 8], "little") for a in address]
    n = len(address)
    return References(address, np.full(n, 8), np.zeros(n, dtype=bool), np.ones(n, dtype=np.int64),
                      np.zeros(n, dtype=np.int64), value), memory


def watch_round_trips(monkeypatch):
    """Per call of the pair's loop: the round trip it reads (``geo[G_ROUND_TRIP]``), how many
    lines the pair has out below then, and why the call ended."""
    from archmodel.models.compute import compiled_reference_loop as loop
    calls, run, pairs = [], loop.run, []
    tick = compiled_reference.CompiledPair.tick

    def watched_tick(pair):
        pairs[:] = [pair]
        tick(pair)

    def watched_run(now, start, stop, geo, *rest):
        out = len(pairs[0].sent)
        more, reason = run(now, start, stop, geo, *rest)
        calls.append((int(geo[loop.G_ROUND_TRIP]), out, reason))
        return more, reason

    monkeypatch.setattr(loop, "run", watched_run)
    monkeypatch.setattr(compiled_reference.CompiledPair, "tick", watched_tick)
    return calls


def run_both(stream, initial, case):
    runs = {}
    for engine in ("python", "compiled"):
        top, core, cache, memory = build(engine, stream, initial, case, "dram")
        Simulator(top).run()
        assert core.done
        runs[engine] = (core.done_cycle, figures([core, cache, memory]), memory.backdoor_read(BASE, len(initial)))
    return runs, core.compiled


CASE = dict(window=16, sets=8, ways=4, hit=2, mshrs=4, targets=2, wb=2, queue=16, in_order=False, policy="lru",
            touch=True, lq=1, lr=1, barrier=1, ends=[], mq=3, mr=3, mcap=4)


def test_a_line_sent_with_nothing_of_the_pairs_out_keeps_its_round_trip_over_an_in_order_memory(monkeypatch):
    # Every miss leaves with nothing older out: no question has bounded its answer, so the
    # batch must stop at its round trip even though the DRAM controller answers in order
    # (honouring the order there would compute the hits past the fill's arrival, which the
    # pair's tick then meets in cycles already computed, and stops the run).
    from archmodel.models.compute import compiled_reference_loop as loop
    stream, initial = isolated_misses(40)
    calls = watch_round_trips(monkeypatch)
    runs, pair = run_both(stream, initial, CASE)
    assert runs["compiled"] == runs["python"]
    assert pair.in_order_below
    # (the least round trip: links of 3 cycles each way, into the DDR4-2400 clock of 833 ps
    # and back, and its one-cycle reaction: 3,499 ps, 7 of the pair's cycles of 500 ps)
    assert {t for t, out, _ in calls if out == 0} == {7}
    # each of the 40 misses stops its batch at its round trip, where the pair asks
    answered_at = [call for call in calls if call[2] == loop.EXIT_ANSWER]
    assert len(answered_at) == 40 and pair.asked_at_answer == 40
    assert all(out == 0 and t == 7 for t, out, _ in answered_at)


def test_over_an_in_order_memory_a_line_sent_behind_one_out_does_not_stop_the_batch(monkeypatch):
    # Random streams over the DRAM controller: the loop reads the round trip NEVER only in
    # calls made while lines of the pair are out (a question asked then bounds their answers,
    # and the controller answers the later lines after them), the results are the Python
    # models', and fewer questions are asked where an answer may come than without the order.
    from archmodel.models.compute import compiled_reference_loop as loop
    from archmodel.models.memory import DramController
    rng = np.random.default_rng(7)
    stream, initial = random_stream(rng, 3000, span_lines=1024, writes=0.3)
    case = dict(random_case(rng, 3000), sets=8, ways=4, mshrs=8, targets=8, window=64, ends=[], mq=1, mr=1, mcap=8)
    calls = watch_round_trips(monkeypatch)
    runs, pair = run_both(stream, initial, case)
    assert runs["compiled"] == runs["python"] and pair.in_order_below
    never = [out for t, out, _ in calls if t == loop.NEVER]
    assert never and min(never) > 0
    ordered = pair.asked_at_answer
    # the same memory, declaring nothing: every call keeps the round trip, same results
    monkeypatch.setattr(DramController, "answers_in_order_per_client", False)
    calls.clear()
    undeclared, pair = run_both(stream, initial, case)
    assert undeclared == runs and not pair.in_order_below
    assert len({t for t, _, _ in calls}) == 1 and calls[0][0] < loop.NEVER
    assert (ordered, pair.asked_at_answer) == (1, 1330)
