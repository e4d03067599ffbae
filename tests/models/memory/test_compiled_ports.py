"""The compiled DRAM core fed through the controller's ports: requests taken on ``req`` are
cut into bursts, the core queues and schedules them ahead, and each response leaves at its
own cycle. It must send the same responses at the same picoseconds, issue the same commands
at the same cycles, end with the same statistics and hold the same bytes as the Python path
scheduling ahead and as the cycle-by-cycle reference (``lookahead_cycles = 0``)."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, ParameterError, Simulator, connect
from archmodel.lang.elaborate import load
from archmodel.models.basic import Sink, Source
from archmodel.models.compute import SnitchCluster
from archmodel.models.memory import DramController, DramTimingChecker, compiled_core
from archmodel.models.memory.commands import ACT, REFPB, WR
from archmodel.models.memory.timing import dram_clock, preset
from archmodel.models.messages import MemRequest
from archmodel.paths import data_path

from .test_splitting import check_against_a_bytearray

MODES = {"reference": dict(engine="python", lookahead_cycles=0), "python": dict(engine="python"),
         "compiled": dict(engine="compiled")}


def _requests(seed, count, span, base, sizes, write_fraction, clients):
    rng = random.Random(seed)
    requests = []
    for i in range(count):
        size = rng.choice(sizes)
        address = base + rng.randrange(0, span - size)
        source = rng.choice(clients)
        if rng.random() < write_fraction:
            data = bytes(rng.getrandbits(8) for _ in range(size))
            requests.append(MemRequest(address=address, size_bytes=size, is_write=True, data=data, source=source,
                                       tag=i))
        else:
            requests.append(MemRequest(address=address, size_bytes=size, source=source, tag=i))
    return requests


def _run(mode, standard, requests, cycles, stall=0.0, seed=0, **params):
    """One run through the ports; its end, commands, responses, statistics and edges ticked."""
    top = Component("top", clock=dram_clock(preset(standard)))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, **{**params, **MODES[mode]})
    sink = Sink("sink", top, stop_after=len(requests), stall_probability=stall)
    checker = DramTimingChecker("checker", top, standard=standard,
                                overrides={"ranks": params["ranks"]} if "ranks" in params else None)
    checker.watch(dram)  # a listener: the command bus stays unconnected, so the controller may run ahead
    commands = []
    dram.add_command_listener(lambda *fields: commands.append(fields))
    connect(src.out, dram.req, latency=2)
    connect(dram.resp, sink.inp, latency=3)
    sim = Simulator(top, seed=seed)
    result = sim.run()
    return dict(end=(result.reason, result.time_ps), commands=commands,
                arrivals=[(a.time_ps, a.message.source, a.message.tag, a.message.data) for a in sink.arrivals],
                stats=[(stat.path, stat.summary()) for stat in sim.all_stats()], ticks=result.ticks, dram=dram,
                sink=sink, checker=checker)


def _all_alike(standard, requests, cycles, stall=0.0, seed=0, **params):
    """Run every mode; check each against the reference and return the compiled run."""
    assert compiled_core.available(), "numba is not installed: pip install numba (the compiled DRAM core uses it)"
    runs = {mode: _run(mode, standard, requests, cycles, stall, seed, **params) for mode in MODES}
    reference = runs["reference"]
    for mode in ("python", "compiled"):
        for key in ("end", "commands", "arrivals", "stats"):
            assert runs[mode][key] == reference[key], (mode, key)
    compiled = runs["compiled"]
    assert compiled["dram"].engine_in_use == "compiled" and runs["python"]["dram"].engine_in_use == "python"
    assert compiled["ticks"] <= reference["ticks"]
    return compiled


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000), standard=st.sampled_from(["DDR4-2400R", "DDR4-3200AA", "HBM2E"]),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]),
       write_drain=st.sampled_from(["ramulator2", "inclusive"]),
       # (the order matters only with per-bank refresh, so idle_first comes with it)
       refresh=st.sampled_from([("all_bank", "round_robin"), ("per_bank", "round_robin"), ("per_bank", "idle_first"),
                                ("none", "round_robin")]),
       queue=st.sampled_from([1, 3, 8, 32, 64]), gap=st.sampled_from([0, 2, 20, 200]),
       sizes=st.sampled_from([(64,), (1, 3, 8, 16, 32, 64, 100), (256, 1024, 4096), (1, 32, 64, 1000, 2048)]),
       write_fraction=st.sampled_from([0.0, 0.3, 0.7]), clients=st.sampled_from([("dma",), ("a", "b", "c")]),
       stall=st.sampled_from([0.0, 0.4]), lookahead=st.sampled_from([1, 16, 512]),
       mapping=st.sampled_from(["RoBaRaCoCh", "RoBaRaCoBgCh"]), ranks=st.sampled_from([1, 2]))
def test_random_requests_through_the_ports_run_alike_on_every_engine(seed, standard, scheduler, write_drain, refresh,
                                                                    queue, gap, sizes, write_fraction, clients,
                                                                    stall, lookahead, mapping, ranks):
    refresh, refresh_order = refresh
    base, span = 0x1000_0000, 1 << 15  # a small span: rows are hit, missed and conflict; writes are forwarded
    requests = _requests(seed, 50, span, base, sizes, write_fraction, clients)
    rng = random.Random(seed + 1)
    cycles = []
    at = 0
    for _ in requests:
        at += rng.randrange(0, gap + 1) if rng.random() < 0.7 else 0  # bursts of requests, then gaps
        cycles.append(at)
    params = dict(scheduler=scheduler, write_drain=write_drain, refresh=refresh, refresh_order=refresh_order,
                  read_queue=queue, write_queue=max(queue, 2), base_address=base, mapping=mapping)
    if ranks > 1:
        params["ranks"] = ranks
    if lookahead != 512:
        params["lookahead_cycles"] = lookahead
    compiled = _all_alike(standard, requests, cycles, stall, seed, **params)
    check_against_a_bytearray(requests, compiled["sink"].messages, base, span, compiled["dram"])
    if refresh != "none":  # (without refresh the checker rightly reports the missing refreshes)
        assert compiled["checker"].violation_count.value == 0


def test_a_busy_stream_with_two_ranks_drains_and_refreshes_alike():
    base, span = 0, 1 << 22  # rows of several banks, so rows conflict
    requests = _requests(5, 400, span, base, (64, 128, 512), 0.5, ("a", "b"))
    requests += [MemRequest(address=r.address, size_bytes=r.size_bytes, source="a", tag=1000 + r.tag)
                 for r in requests[-40:] if r.is_write]  # reads of writes still queued: forwarded
    compiled = _all_alike("DDR4-2400R", requests, [i // 8 * 240 for i in range(len(requests))], ranks=2)
    dram = compiled["dram"]
    assert dram.refs.value > 0 and dram.forwarded_reads.value > 0 and dram.row_conflicts.value > 0
    assert dram.split_requests.value > 0
    check_against_a_bytearray(requests, compiled["sink"].messages, base, span, dram)


@pytest.mark.parametrize("refresh_order", ["round_robin", "idle_first"])
def test_manticores_hbm2e_pseudo_channel_runs_alike_on_every_engine(refresh_order):
    # library/manticore.arch's pseudo-channel: two ranks (stack IDs), per-bank refresh (idle
    # first there), the bank group lowest above the burst; many clients' requests of DMA
    # sizes, reads and writes
    base, span = 0, 1 << 22
    requests = _requests(7, 400, span, base, (32, 256, 1024), 0.4, ("a", "b", "c"))
    requests += [MemRequest(address=r.address, size_bytes=r.size_bytes, source="a", tag=1000 + r.tag)
                 for r in requests[-20:] if r.is_write]  # reads of writes still queued: forwarded
    compiled = _all_alike("HBM2E", requests, [i // 4 * 30 for i in range(len(requests))], ranks=2,
                          refresh="per_bank", refresh_order=refresh_order, mapping="RoBaRaCoBgCh")
    dram = compiled["dram"]
    refreshed = {fields[2] for fields in compiled["commands"] if fields[1] == REFPB}
    assert refreshed == {0, 1} and dram.refpbs.value > 8 and dram.refs.value == 0
    sets = dram.timing.tREFI // dram.timing.tREFIpb
    order = [fields[5] % sets for fields in compiled["commands"] if fields[1] == REFPB and fields[2] == 0]
    assert (order == [i % sets for i in range(len(order))]) == (refresh_order == "round_robin")
    assert dram.row_conflicts.value > 0 and dram.forwarded_reads.value > 0
    assert compiled["checker"].violation_count.value == 0
    check_against_a_bytearray(requests, compiled["sink"].messages, base, span, dram)


@pytest.mark.parametrize("standard", ["HBM2E", "DDR4-2400R"])
def test_requests_arriving_behind_one_waiting_for_room_do_not_wake_the_controller(standard, monkeypatch):
    """Queues of one entry and a request every cycle: while the request at the head waits for
    room, the controller has scheduled the cycles up to the one that leaves it room, and
    lets the requests arriving behind it meanwhile not wake it: it ticks at fewer edges than
    when they do, with the results of the cycle-by-cycle reference."""
    from archmodel.kernel import InPort

    requests = _requests(3, 60, 1 << 16, 0, (64,), 0.3, ("a", "b"))
    cycles = list(range(len(requests)))
    params = dict(read_queue=1, write_queue=1)
    reference = _run("reference", standard, requests, cycles, **params)
    quiet = _run("compiled", standard, requests, cycles, **params)
    monkeypatch.setattr(InPort, "wake_on_arrivals_after", lambda self, time_ps: None)
    woken = _run("compiled", standard, requests, cycles, **params)
    for run in (quiet, woken):
        for key in ("end", "commands", "arrivals", "stats"):
            assert run[key] == reference[key], key
    assert quiet["ticks"] < woken["ticks"] - 20


@pytest.mark.parametrize("refresh", ["all_bank", "none"])
def test_a_write_queue_of_one_entry_takes_the_next_write_at_the_cycle_after_its_write(refresh):
    """Two 64 B writes at cycle 0 (arriving at 2) into a write queue of one entry: the first
    enters at 2, its ACT issues then and its WR tRCDWR (16) later, at 18, which leaves room;
    the second waits on req until then and enters at 19, its ACT issuing there, and each is
    acknowledged the cycle after it enters, 3 cycles over the link: at cycles 6 and 23, on
    every engine alike, where the sink, which has both, stops the run. (A request was taken
    only at a cycle with other work, and with the one queued write gone there was none: the
    second waited for the next refresh, 7.8 us, or for ever without refresh.)"""
    requests = [MemRequest(address=64 * 1024 * k, size_bytes=64, is_write=True, data=bytes(64), source="a", tag=k)
                for k in range(2)]
    run = _all_alike("DDR4-2400R", requests, [0, 0], write_queue=1, refresh=refresh)
    period = run["dram"].domain.period_ps
    assert [(cycle, command) for cycle, command, *_ in run["commands"]] == [(2, ACT), (18, WR), (19, ACT)]
    assert [(arrival.time_ps // period, arrival.message.tag) for arrival in run["sink"].arrivals] == [(6, 0), (23, 1)]


@pytest.mark.parametrize("standard", ["HBM2E", "DDR4-2400R"])
def test_while_a_request_enters_full_queues_the_cycles_until_its_last_burst_enters_are_scheduled_ahead(
        standard, monkeypatch):
    """Reads and writes of 2 KiB into queues of 4 entries, arriving faster than the channel
    serves them: while one request's bursts enter as room frees, the next one is not taken
    whatever arrives, so the cycles up to the one its last burst enters in are scheduled
    ahead without a question of the lookahead, and the requests arriving meanwhile wait
    without waking the controller. Results as the cycle-by-cycle reference and the Python
    path; fewer edges ticked than when each such cycle is worked at its edge."""
    from archmodel.models.memory.schedule_ahead import SchedulesAhead

    requests = _requests(7, 40, 1 << 18, 0, (2048,), 0.3, ("a", "b", "c"))
    cycles = [15 * i for i in range(len(requests))]
    params = dict(read_queue=4, write_queue=4)
    ahead = _all_alike(standard, requests, cycles, **params)
    monkeypatch.setattr(SchedulesAhead, "_schedule_entering", lambda self, c, wake: wake)
    edge_by_edge = _run("compiled", standard, requests, cycles, **params)
    for key in ("end", "commands", "arrivals", "stats"):
        assert edge_by_edge[key] == ahead[key], key
    assert ahead["ticks"] < edge_by_edge["ticks"] - 50  # (223 and 331 on HBM2E, 220 and 295 on DDR4)


def test_a_request_of_more_bursts_than_the_core_buffers_grows_its_buffer(monkeypatch):
    monkeypatch.setattr(compiled_core, "STREAM_CHUNK", 3)
    requests = [MemRequest(address=4096 * i, size_bytes=4096, source="dma", tag=i) for i in range(4)]
    requests.append(MemRequest(address=100, size_bytes=300, is_write=True, data=bytes(range(256)) + bytes(44),
                               source="dma", tag=9))
    compiled = _all_alike("HBM2E", requests, [0, 0, 500, 500, 501])
    assert compiled["dram"].reads.value == 4 * 4096 // 32


def test_auto_schedules_port_fed_work_compiled_where_the_core_applies_and_in_python_elsewhere():
    requests = [MemRequest(address=64 * i, size_bytes=64, tag=i) for i in range(8)]
    for params, engine in ((dict(), "compiled"), (dict(scheduler="fcfs", refresh="none"), "compiled"),
                           (dict(refresh="per_bank", ranks=2), "compiled"), (dict(page_policy="closed"), "python"),
                           (dict(queue="per_bank"), "python"), (dict(lookahead_cycles=0), "python")):
        top = Component("top", clock=dram_clock(preset("DDR4-2400R")))
        src = Source("src", top, pattern="list", messages=requests, wrap_in_packet=False)
        dram = DramController("dram", top, **params)
        sink = Sink("sink", top, stop_after=len(requests))
        connect(src.out, dram.req)
        connect(dram.resp, sink.inp)
        Simulator(top).run()
        assert dram.engine_in_use == engine, params
        assert len(sink.messages) == len(requests)


def test_engine_compiled_on_a_port_fed_configuration_it_does_not_take_names_the_reason():
    top = Component("top", clock=dram_clock(preset("DDR4-2400R")))
    src = Source("src", top, pattern="list", messages=[MemRequest(address=0, size_bytes=64)], wrap_in_packet=False)
    dram = DramController("dram", top, engine="compiled", page_policy="adaptive")
    sink = Sink("sink", top, stop_after=1)
    connect(src.out, dram.req)
    connect(dram.resp, sink.inp)
    with pytest.raises(ParameterError, match="page_policy adaptive"):
        Simulator(top).run()


def _cluster_on_hbm(dram_engine: str):
    elaborated = load(data_path("topologies") / "cluster_hbm.arch", params={"m": "32"})
    commands = []
    for part in elaborated.top.walk():
        if isinstance(part, DramController):
            part.engine = dram_engine
            part.add_command_listener(lambda *fields: commands.append(fields))
            dram = part
        elif isinstance(part, SnitchCluster):
            part.engine = "compiled"
            cluster = part
    sim = Simulator(elaborated.top)
    result = sim.run()
    assert cluster.result_ok  # the GEMM's C equals numpy's, read from the DRAM's backing store
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return (result.reason, result.time_ps, cluster.run_cycles()), commands, stats, dram


def test_a_cluster_gemm_on_an_hbm2e_pseudo_channel_ends_alike_on_both_dram_engines():
    python = _cluster_on_hbm("python")
    compiled = _cluster_on_hbm("compiled")
    assert compiled[3].engine_in_use == "compiled" and python[3].engine_in_use == "python"
    assert compiled[0] == python[0]
    assert compiled[1] == python[1] and len(compiled[1]) > 500
    assert compiled[2] == python[2]


def _pagerank_through_a_cache(dram_engine: str):
    from archmodel.kernel import ClockDomain
    from archmodel.models.compute import ReferenceCore, References
    from archmodel.models.memory import Cache
    from archmodel.workloads.graph import MemoryImage, pagerank, rmat

    image = MemoryImage(0, 1 << 28)
    program = pagerank(rmat(9, 8, seed=2), image, cores=1, iterations=1)
    stream = References.concatenate([phase[0] for phase in program.phases])
    top = Component("top", clock=ClockDomain("clk", 500))
    core = ReferenceCore("core", top, window=16, engine="compiled")
    cache = Cache("llc", top, size_bytes=4 << 10, ways=8, hit_latency_cycles=20, mshrs=16)
    dram = DramController("mem", top, standard="DDR4-2400R", engine=dram_engine)
    commands = []
    dram.add_command_listener(lambda *fields: commands.append(fields))
    connect(core.req, cache.req[0])
    connect(cache.resp[0], core.resp)
    connect(cache.mem_req, dram.req)
    connect(dram.resp, cache.mem_resp)
    image.load(dram)
    core.load(stream)
    core.on_finish(lambda c: c.sim.stop("done"))
    sim = Simulator(top)
    result = sim.run()
    assert core.done and cache.accesses.value == len(stream)
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return (result.reason, result.time_ps), commands, stats, dram


def test_a_graph_kernel_through_a_cache_ends_alike_on_both_dram_engines():
    # a cache's misses and write-backs, many clients' worth of small requests arriving while
    # others are in service: the compiled core's horizons must stay conservative
    python = _pagerank_through_a_cache("python")
    compiled = _pagerank_through_a_cache("compiled")
    assert compiled[3].engine_in_use == "compiled"
    assert compiled[0] == python[0]
    assert compiled[1] == python[1] and len(compiled[1]) > 500
    assert compiled[2] == python[2]


def _sliced_with_a_reset(mode, requests, cycles, reset_at_ps):
    """A port-fed HBM2E channel run in two slices, with its statistics reset between them (as
    a warm-up left out of a measurement would be): each statistic's summary after the run."""
    top = Component("top", clock=dram_clock(preset("HBM2E")))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard="HBM2E", read_queue=4, write_queue=4, **MODES[mode])
    sink = Sink("sink", top, stop_after=len(requests))
    connect(src.out, dram.req, latency=2)
    connect(dram.resp, sink.inp, latency=3)
    sim = Simulator(top)
    assert sim.run(until_ps=reset_at_ps).reason == "limit"
    assert dram.read_queue_depth.value > 0  # (the queue is busy: the reset sets its level at 0 all the same)
    for stat in sim.all_stats():
        if stat.path.startswith("top.dram"):
            stat.reset()
    assert sim.run().reason == "stopped"
    return dram, [(stat.path, stat.summary()) for stat in sim.all_stats() if stat.path.startswith("top.dram")]


def test_statistics_reset_between_runs_count_from_the_reset_on_the_compiled_core_too():
    """Fed through the ports, the compiled core keeps its counts and queue-depth levels in its
    arrays while a run lasts and hands them over when it returns: statistics reset between two
    runs count from the reset, as on the Python path (the core takes the levels back from the
    statistics at the next run's first call)."""
    requests = _requests(11, 80, 1 << 14, 0, (64, 256), 0.3, ("a", "b"))
    cycles = [i // 4 * 20 for i in range(len(requests))]
    compiled, stats = _sliced_with_a_reset("compiled", requests, cycles, 150_000)
    _, reference = _sliced_with_a_reset("reference", requests, cycles, 150_000)
    assert compiled.engine_in_use == "compiled" and stats == reference


@pytest.mark.parametrize("calls", [2, 3])
def test_latency_samples_kept_over_calls_reach_the_statistics_alike(calls, monkeypatch):
    """Fed through the ports, the core keeps its calls' latency samples in its arrays and hands
    them over once one more call might not fit (and when the run returns, and before a larger
    buffer replaces them): with room for a few calls only, the samples are handed over many
    times in a run, in their order, as the reference records them."""
    monkeypatch.setattr(compiled_core, "SAMPLE_CALLS", calls)
    base, span = 0, 1 << 22
    requests = _requests(11, 300, span, base, (32, 64, 512, 4096), 0.4, ("a", "b"))
    requests += [MemRequest(address=r.address, size_bytes=r.size_bytes, source="a", tag=1000 + r.tag)
                 for r in requests[-30:] if r.is_write]  # reads of writes still queued: forwarded
    cycles = [i // 4 * 40 for i in range(len(requests))]
    compiled = _all_alike("HBM2E", requests, cycles, lookahead_cycles=16)
    reference = _run("reference", "HBM2E", requests, cycles, lookahead_cycles=16)["dram"]
    dram = compiled["dram"]
    assert dram.forwarded_reads.value > 0 and len(dram.write_latency.samples) > 100
    for name in ("read_latency", "write_latency"):
        assert list(getattr(dram, name).samples) == list(getattr(reference, name).samples), name
