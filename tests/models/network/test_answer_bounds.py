"""The fast engine's bounds on answers from DRAM channels that answer per client hold under
load: requesters crowd two DDR4 channels with small queues, so requests wait at the
channels' interfaces and in the queues, and every response still reaches its requester at or
after each horizon the lookahead gave it (the bounds skip a request waiting for a channel
that already bounds an earlier one of its client, and start the reads still to issue after
the cycles the channel has scheduled for good)."""

import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.memory import DramController
from archmodel.models.messages import MemRequest
from archmodel.models.network import Noc
from archmodel.models.network.tail_bounds import PacketTailBounds

from .test_lookahead_bounds import AskingRequester, BackgroundRequester

MIB = 1 << 20
CHANNELS = {1: 0, 5: MIB}  # terminal -> base address of a DDR4 channel


def crowded(seed: int, engine: str, read_queue: int, write_queue: int, link_latency: int, requesters: int,
            sizes=(8, 64, 64, 256), slots: int = 512):
    """A 2 x 2 mesh of two terminals per router: DDR4 channels at terminals 1 and 5, and
    ``requesters`` asking requesters on the other terminals, each with a random script of
    reads and writes of ``sizes`` bytes at ``slots`` 256-byte aligned addresses per channel
    (several in the same cycles, so the queues fill)."""
    rng = random.Random(seed)
    top = Component("top")
    ranges = [(base, base + MIB, t) for t, base in CHANNELS.items()]
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=ranges, engine=engine, link_latency=link_latency,
              flit_bits=rng.choice([128, 512]))
    for t, base in CHANNELS.items():
        memory = DramController(f"ddr{t}", top, standard="DDR4-2400R", base_address=base, read_queue=read_queue,
                                write_queue=write_queue)
        connect(noc.memory_port("to_memory", t), memory.req, latency=rng.randint(1, 2))
        connect(memory.resp, noc.memory_port("from_memory", t), latency=rng.randint(1, 2))
    probes = []
    free = [t for t in range(8) if t not in CHANNELS]
    for i, t in enumerate(free[:requesters]):
        probe = AskingRequester(f"probe{i}", top)
        connect(probe.req, noc.memory_port("mem_req", t))
        connect(noc.memory_port("mem_rsp", t), probe.rsp)
        cycle = 0
        for n in range(rng.randrange(4, 24)):
            cycle += rng.choice((0, 0, 0, 1, 5, 30))
            base = rng.choice(list(CHANNELS.values()))
            size = rng.choice(sizes)
            address = base + 256 * rng.randrange(slots)
            if rng.random() < 0.35:
                request = MemRequest(address, size, True, bytes(size), tag=n)
            else:
                request = MemRequest(address, size, tag=n)
            probe.script.append((cycle, request))
        probes.append(probe)
    return top, probes


def _watch_questions(sim: Simulator, observe) -> None:
    """Call ``observe(comp, horizon)`` after each of the lookahead's questions in ``sim``
    (``comp`` the component asking, ``horizon`` the answer)."""
    ask = sim.undisturbed_until_ps

    def asking(comp, *args, **kwargs):
        horizon = ask(comp, *args, **kwargs)
        observe(comp, horizon)
        return horizon

    sim.undisturbed_until_ps = asking


def _answered_after_every_horizon(probes) -> None:
    """Every request of every probe is answered, and the first response after each question
    (before the probe's next send) comes at or after the horizon it was given."""
    for probe in probes:
        assert len(probe.received) == len(probe.sent) > 0
        for asked_at, horizon in probe.asked:
            later_sends = [t for t in probe.sent if t > asked_at]
            arrivals = [t for t in probe.received if t > asked_at]
            if arrivals and (not later_sends or arrivals[0] <= later_sends[0]):
                assert horizon is not None and arrivals[0] >= horizon, (probe.path, asked_at, horizon, arrivals[0])


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 100_000), engine=st.sampled_from(["fast", "components"]),
       read_queue=st.integers(1, 8), write_queue=st.integers(1, 8), link_latency=st.integers(1, 3),
       requesters=st.integers(2, 6))
def test_no_response_from_a_crowded_dram_channel_beats_a_horizon(seed, engine, read_queue, write_queue,
                                                                 link_latency, requesters):
    """Every response reaches each requester at or after every horizon it was given (up to its
    next send), and every request is answered."""
    top, probes = crowded(seed, engine, read_queue, write_queue, link_latency, requesters)
    sim = Simulator(top)
    sim.run(until_ps=500_000_000)  # (quiescent once every request is answered)
    _answered_after_every_horizon(probes)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(seed=st.integers(0, 100_000), engine=st.sampled_from(["fast", "components"]),
       read_queue=st.integers(1, 8), write_queue=st.integers(1, 8), link_latency=st.integers(1, 3),
       requesters=st.integers(2, 6), slots=st.sampled_from([2, 8, 512]))
def test_no_response_to_long_reads_beside_writes_of_their_bytes_beats_a_horizon(seed, engine, read_queue, write_queue,
                                                                                link_latency, requesters, slots):
    """As above with 1 KiB reads and writes on a few addresses: a client's first read, waiting
    at the channel's interface or on its way, is bounded by its 16 RDs only while no write
    can answer it from the write queue, and no response comes before a horizon."""
    top, probes = crowded(seed, engine, read_queue, write_queue, link_latency, requesters,
                          sizes=(8, 64, 1024, 1024), slots=slots)
    sim = Simulator(top)
    sim.run(until_ps=500_000_000)
    _answered_after_every_horizon(probes)


def _probe_of_a_ddr4_channel(network: dict, **channel):
    """A 2x2 mesh of two terminals a router on the fast engine (``network``: more of the
    Noc's parameters) with a DDR4 channel holding the first MiB at terminal 1 (``channel``:
    its parameters) and an asking requester at terminal 0: (top, noc, memory, probe)."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, 1)], engine="fast", **network)
    memory = DramController("ddr", top, standard="DDR4-2400R", base_address=0, **channel)
    connect(noc.memory_port("to_memory", 1), memory.req)
    connect(memory.resp, noc.memory_port("from_memory", 1))
    probe = AskingRequester("probe", top)
    connect(probe.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), probe.rsp)
    return top, noc, memory, probe


def test_a_request_waiting_behind_its_clients_earlier_one_leaves_the_horizon_at_the_channels_bound():
    """One requester's reads crowd a channel whose read queue holds one burst: the later reads
    wait at the channel's interface, and the horizon the requester is given reaches past the
    one DRAM cycle such a read would take alone (the channel bounds the earlier one)."""
    top, noc, memory, probe = _probe_of_a_ddr4_channel({}, read_queue=1)
    for n in range(12):
        probe.script.append((0, MemRequest(4096 * n, 64, tag=n)))
    engine = noc.monitor
    sim = Simulator(top)
    gaps = []

    def observe(comp, horizon):
        if comp is probe and engine.parent.interfaces[1].holds_for_memory(0) and probe.received:
            gaps.append(horizon - sim.now)

    _watch_questions(sim, observe)
    sim.run(until_ps=5_000_000)
    assert len(probe.received) == 12
    # a read waiting at the interface alone would bound the horizon by the links (1 cycle
    # each way), one DRAM cycle and the network: the channel's own bound reaches further
    least = noc.min_latency(1, 0) * 1000 + 2 * 1000 + memory.domain.period_ps
    assert gaps and max(gaps) > least


def _long_read(flit_bits: int, memory_kind: str):
    """The horizons an asking requester at terminal 0 is given for its 1 KiB read of a memory
    at terminal 1 (asked every cycle until the response comes) while the memory's interface
    has not yet sent the response on (the rest of the run does not depend on the response's
    flits until then), each with whether the read was on the link to the memory; and the
    time the response came. ``flit_bits`` sets how many flits the response takes;
    ``memory_kind``: a DDR4 channel ("ddr4"), the same with a read queue of one burst and
    another requester's reads sent first, so the probe's waits at the memory's interface
    ("ddr4 behind"), or a FixedLatencyMemory, which bounds its next response to
    anyone only ("fixed")."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, 1)], engine="fast", flit_bits=flit_bits)
    if memory_kind == "fixed":
        memory = FixedLatencyMemory("mem", top, base_address=0, size_bytes=MIB, latency_cycles=20)
    else:
        memory = DramController("ddr", top, standard="DDR4-2400R", base_address=0,
                                read_queue=1 if memory_kind == "ddr4 behind" else 32)
    connect(noc.memory_port("to_memory", 1), memory.req, latency=6)
    connect(memory.resp if memory_kind != "fixed" else memory.rsp, noc.memory_port("from_memory", 1), latency=6)
    probe = AskingRequester("probe", top)
    connect(probe.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), probe.rsp)
    probe.script.append((20, MemRequest(0x400, 1024, tag=0)))
    if memory_kind == "ddr4 behind":
        other = BackgroundRequester("other", top)
        connect(other.req, noc.memory_port("mem_req", 2))
        connect(noc.memory_port("mem_rsp", 2), other.rsp)
        # (one-flit answers either way) enough to fill the link to the memory
        other.script.extend(MemRequest(0x8000 + 64 * n, 64, tag=n) for n in range(10))
    sim = Simulator(top)
    memory_side = noc.interfaces[1]
    asked = []

    def observe(comp, horizon):
        if comp is probe and (memory_side.holds_requests_of(0) or 0 not in memory_side.expected_from):
            asked.append((sim.now, horizon, bool(memory.req.channel.flight)))

    _watch_questions(sim, observe)
    sim.run(until_ps=5_000_000)
    (received,) = probe.received
    return asked, received


@pytest.mark.parametrize("memory_kind", ["ddr4", "ddr4 behind", "fixed"])
def test_a_long_reads_horizons_count_the_flits_of_its_response(memory_kind):
    """The response to a 1 KiB read is 16 flits of 512 bits, or one of 8192 bits (the request
    one flit either way), so with 16 its tail comes 15 cycles after its head at the soonest:
    every horizon given is 15 cycles later than with one flit, whichever leg of the round trip
    bounds it (the request on its way into the network, in it, waiting at the memory's
    interface, on the link to the memory, at a memory that bounds its answer per client, the
    response on the link back), and none comes after the response. A memory that bounds only
    its next response to anyone gives no more while it holds the read."""
    narrow, narrow_received = _long_read(512, memory_kind)
    wide, wide_received = _long_read(8192, memory_kind)
    # (before the probe sends, nothing can reach it: no horizon)
    assert all(horizon is None or horizon <= narrow_received for _, horizon, _ in narrow)
    assert all(horizon is None or horizon <= wide_received for _, horizon, _ in wide)
    compared = [(n, w, forward) for (t, n, forward), (u, w, _) in zip(narrow, wide)
                if t == u and n is not None and w is not None]
    assert len(compared) > 20
    later = 15 * 1000
    if memory_kind == "fixed":
        assert all(n == w + later for n, w, forward in compared if forward)
        assert all(n in (w, w + later) for n, w, _ in compared)
    else:
        assert all(n == w + later for n, w, _ in compared)


def _behind_a_refusing_link():
    """A probe's 64-byte read of a DDR4 channel, both at one router (asked every cycle until
    its response comes), sent behind another requester's 1 KiB reads and writes, which fill
    the channel's queues (four write bursts) and the link to it (two credits). Returns per
    question the time, the horizon given, the soonest the link may take again
    (:meth:`~archmodel.kernel.OutPort.unblocks_from_ps`) and where the read was (on its way
    to the channel's interface, or waiting there), while it was not yet passed on; the
    link's latency; and the time the response came."""
    top, noc, memory, probe = _probe_of_a_ddr4_channel({"flit_bits": 512}, write_queue=4)
    probe.script.append((100, MemRequest(0x8000, 64, tag=0)))
    other = BackgroundRequester("other", top)
    connect(other.req, noc.memory_port("mem_req", 2))
    connect(noc.memory_port("mem_rsp", 2), other.rsp)
    other.script.extend(MemRequest(0x1000 * n, 1024, True, bytes(1024), tag=n) if n % 2 else
                        MemRequest(0x1000 * n, 1024, tag=n) for n in range(12))
    sim = Simulator(top)
    memory_side = noc.interfaces[1]
    to_memory = noc.monitor.to_memory[1]
    link = to_memory.channel
    asked = []

    def observe(comp, horizon):
        if comp is probe and probe.sent:
            if any(request.source[0] == 0 for request in memory_side.for_memory):
                asked.append((sim.now, horizon, to_memory.unblocks_from_ps(), "waiting"))
            elif 0 not in memory_side.expected_from:
                asked.append((sim.now, horizon, to_memory.unblocks_from_ps(), "on its way"))

    _watch_questions(sim, observe)
    sim.run(until_ps=50_000_000)
    (received,) = probe.received
    return asked, link.delay if link.same_domain else link.tail_delay, received


@pytest.mark.parametrize("where", ["on its way", "waiting"])
def test_a_request_behind_a_refusing_link_to_the_memory_is_bounded_from_its_next_credit(where):
    """The probe's read, on its way to the channel's interface (on the link into the network,
    then in it) or waiting there behind the other requester's, cannot be passed on before the
    link to the channel may take again (the channel has scheduled its cycles ahead) nor reach
    the channel sooner than the link's latency after that, so no horizon the probe is given
    before then falls sooner (a write queued may answer the read at once, so the channel's
    own bound starts where the read arrives). Without the link's bound the horizons start
    from the read's arrival at the channel's terminal."""
    asked, link_ps, received = _behind_a_refusing_link()
    here = [(now, horizon, unblocked) for now, horizon, unblocked, at in asked if at == where]
    assert all(horizon is not None and unblocked + link_ps <= horizon <= received for _, horizon, unblocked in here)
    # the link's next credit lies ahead of the questions
    assert sum(unblocked > now + 1000 for now, _, unblocked in here) >= 8


def _slow_then_quick_read(ddr_at: int, quick_at: int, link_latency: int = 1) -> tuple:
    """(top, noc, probe): a 2x2 mesh, two terminals a router, with a DDR4 channel at
    terminal ``ddr_at`` (its first MiB) and a memory answering in one cycle at ``quick_at``
    (the next MiB); the probe at terminal 0 reads 1 KiB of the channel at cycle 0, then 64
    bytes of the quick memory at cycle 1."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, ddr_at), (MIB, 2 * MIB, quick_at)],
              engine="fast", link_latency=link_latency)
    ddr = DramController("ddr", top, standard="DDR4-2400R", base_address=0)
    quick = FixedLatencyMemory("quick", top, base_address=MIB, size_bytes=MIB, latency_cycles=1)
    for t, memory, out in ((ddr_at, ddr, ddr.resp), (quick_at, quick, quick.rsp)):
        connect(noc.memory_port("to_memory", t), memory.req)
        connect(out, noc.memory_port("from_memory", t))
    probe = AskingRequester("probe", top)
    connect(probe.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), probe.rsp)
    probe.script.extend([(0, MemRequest(0x400, 1024, tag=0)), (1, MemRequest(MIB, 64, tag=1))])
    return top, noc, probe


def _horizons_past_their_questions(top, probe, watched) -> None:
    """Run ``top`` until both of the probe's reads are answered, and check that no response
    comes before a horizon and that every horizon given while ``watched(asker)`` held (at
    least one) lies past every such question."""
    sim = Simulator(top)
    asked = []  # (time, horizon) of the questions watched

    def observe(comp, horizon):
        if watched(comp):
            asked.append((sim.now, horizon))

    _watch_questions(sim, observe)
    sim.run(until_ps=5_000_000)
    assert len(probe.received) == 2
    _answered_after_every_horizon([probe])
    assert asked and min(horizon for _, horizon in asked) > max(time for time, _ in asked)


def test_a_later_read_of_a_quicker_memory_leaves_the_horizon_at_the_oldest_reads_channel():
    """A requester's 1 KiB read of a DDR4 channel, then a 64-byte read of a memory answering
    in one cycle: the quick response reaches the requester's interface long before the
    first and waits there (responses leave in the order of the requests), so while the
    first read is held at its channel the horizon is the channel's bound on it, past every
    such question (the quick read's answer would bound it to a few cycles), and no
    response comes before a horizon."""
    top, noc, probe = _slow_then_quick_read(ddr_at=1, quick_at=5)
    channel_side = noc.interfaces[1]

    def first_read_at_its_channel(comp) -> bool:
        return comp is probe and len(probe.sent) == 2 and any(
            trip.requester == 0 and trip.order == 0 for trip in channel_side.at_memory.values())

    _horizons_past_their_questions(top, probe, first_read_at_its_channel)


def test_while_the_oldest_request_is_on_its_way_a_later_quicker_read_leaves_the_horizon_at_it():
    """A requester's 1 KiB read of a DDR4 channel two hops away over slow links, then a
    64-byte read of a memory on its own router answering in one cycle: the quick response
    reaches the requester's interface while the first read's request is still on its way to
    its channel, and waits there (responses leave in the order of the requests), so while
    that request is in the network the horizon is its own answer's bound, past every such
    question (the quick read's answer would bound it to a few cycles), and no response comes
    before a horizon."""
    top, noc, probe = _slow_then_quick_read(ddr_at=7, quick_at=1, link_latency=8)
    requester_side, channel_side = noc.interfaces[0], noc.interfaces[7]
    arrived = []  # (the first read has reached its channel's interface)

    def first_read_on_its_way(comp) -> bool:
        if channel_side.holds_order(0, 0):
            arrived.append(True)
        return comp is probe and len(probe.sent) == 2 and requester_side.requests_issued == 2 and not arrived

    _horizons_past_their_questions(top, probe, first_read_on_its_way)


def _behind_crowding_reads(link_latency: int) -> tuple:
    """A probe at terminal 6 reads 1 KiB of a DDR4 channel at terminal 1 (whose read queue
    holds 8 bursts) at cycle 20, behind eight 1 KiB reads another requester at terminal 0
    sent at cycle 0. Returns, per question the probe is asked until its response comes, the
    time, the horizon, where its read is ("on its way" to the channel's interface, "waiting"
    there, or "held" past it), the reads waiting at the interface ahead of it and those on
    the link to the channel; the channel; and the time of the response."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, 1)], engine="fast",
              link_latency=link_latency)
    memory = DramController("ddr", top, standard="DDR4-2400R", base_address=0, read_queue=8)
    connect(noc.memory_port("to_memory", 1), memory.req)
    connect(memory.resp, noc.memory_port("from_memory", 1))
    probe = AskingRequester("probe", top)
    connect(probe.req, noc.memory_port("mem_req", 6))
    connect(noc.memory_port("mem_rsp", 6), probe.rsp)
    other = BackgroundRequester("other", top)
    connect(other.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), other.rsp)
    other.script.extend(MemRequest(0x1000 * n, 1024, tag=n) for n in range(8))
    probe.script.append((20, MemRequest(0x40000, 1024, tag=0)))
    sim = Simulator(top)
    side = noc.interfaces[1]
    asked = []

    def observe(comp, horizon):
        if comp is probe and probe.sent and not probe.received:
            waiting = list(side.for_memory)
            ahead = next((i for i, request in enumerate(waiting) if request.source[0] == 6), len(waiting))
            where = ("waiting" if ahead < len(waiting) else "on its way" if 6 not in side.expected_from
                     else "held")
            asked.append((sim.now, horizon, where, ahead, len(memory.req.channel.flight)))

    _watch_questions(sim, observe)
    sim.run(until_ps=50_000_000)
    (received,) = probe.received
    return asked, memory, received


@pytest.mark.parametrize("link_latency", [1, 8])
@pytest.mark.parametrize("where", ["on its way", "waiting"])
def test_a_read_behind_others_for_a_crowded_channel_is_bounded_behind_their_bursts(where, link_latency):
    """The probe's read, on its way to the channel's interface (in the network) or waiting
    there, reaches the channel behind the reads on the link and those waiting ahead of it,
    each of whose 16 bursts needs a read-queue slot, as do the read's own: a slot frees only
    at an RD, one per tBL at the most, so the read's last burst enters no sooner than that
    many RDs less the queue's 8 slots, and no horizon it is given falls sooner (nor after its
    response). Without the reads waiting ahead, the horizons on its way start from the
    channel's least reaction, and those waiting count the reads on the link only."""
    asked, memory, received = _behind_crowding_reads(link_latency)
    burst_ps = memory.timing.tBL * memory.domain.period_ps
    here = [(now, horizon, ahead, on_link) for now, horizon, at, ahead, on_link in asked if at == where]
    assert len(here) >= 8
    for now, horizon, ahead, on_link in here:
        assert horizon is not None and horizon <= received
        assert horizon >= now + ((ahead + on_link + 1) * 16 - 8) * burst_ps, (now, horizon, ahead, on_link)


def _long_read_over_slow_links(depth: int, observe) -> int:
    """A requester's 1 KiB read of a DDR4 channel two routers away over links of 8 cycles
    (512-bit flits, buffers of ``depth`` flits) on the fast network: ``observe(noc, waiting,
    now, horizon)`` is called at each of the lookahead's questions, after its answer
    (``waiting``: the question is the requester's, its read sent and not yet answered);
    returns the response's arrival."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, 7)], engine="fast", link_latency=8,
              flit_bits=512, buffer_depth=depth)
    memory = DramController("ddr", top, standard="DDR4-2400R", base_address=0)
    connect(noc.memory_port("to_memory", 7), memory.req)
    connect(memory.resp, noc.memory_port("from_memory", 7))
    probe = AskingRequester("probe", top)
    connect(probe.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), probe.rsp)
    probe.script.append((0, MemRequest(0x400, 1024, tag=0)))
    sim = Simulator(top)
    _watch_questions(sim, lambda comp, horizon: observe(noc, comp is probe and probe.sent and not probe.received,
                                                        sim.now, horizon))
    sim.run(until_ps=5_000_000)
    (received,) = probe.received
    return received


@pytest.mark.parametrize("depth", [2, 4])
def test_while_a_long_read_is_at_its_channel_the_horizon_counts_the_credits_of_its_response(depth):
    """The long read over slow links (:func:`_long_read_over_slow_links`): the response's 16
    flits reach the requester's router no faster than ``depth`` flits per credit round trip
    over the last link (19 cycles at the least: the link both ways, switch allocation and
    traversal upstream, switch allocation downstream), so the horizons given while the read
    is at its channel reach within a cycle of the response (10 and 22 cycles short with
    buffers of 4 and 2 with the links both ways alone; one flit a cycle behind the head fell
    45 cycles short with buffers of 4, 119 with buffers of 2), and none lies past it."""
    asked = []  # (horizon, whether the read was at its channel)

    def observe(noc, waiting, now, horizon):
        if waiting:
            asked.append((horizon, noc.interfaces[7].holds_order(0, 0)))

    received = _long_read_over_slow_links(depth, observe)
    assert all(horizon is not None and horizon <= received for horizon, _ in asked)
    assert received - max(horizon for horizon, held in asked if held) <= 1_000


@pytest.mark.parametrize("seed", range(4))
def test_no_response_to_long_reads_over_slow_links_beats_a_horizon(seed):
    """As the crowded channels above, over links of 8 cycles, where the credits of 4-flit
    buffers hold a long packet to 4 flits per 19 cycles between routers (the bounds count
    it), with 1 KiB reads and writes among short ones."""
    top, probes = crowded(seed, "fast", 4, 4, 8, 6, sizes=(8, 64, 1024, 1024))
    sim = Simulator(top)
    sim.run(until_ps=500_000_000)
    _answered_after_every_horizon(probes)


@pytest.mark.parametrize("depth", [2, 4])
def test_while_a_long_response_waits_to_be_sent_the_horizon_counts_its_credits(depth):
    """As above, while the 1 KiB read's response waits at the channel's interface or is being
    sent (its head on its way, its tail still to leave): the horizons given then count the
    credits of its flits over the last link too, reaching within a cycle of the response
    (10 with buffers of 4, 22 with buffers of 2 with the links both ways alone as the round
    trip; one flit a cycle behind the head fell 40 cycles short with either), and none lies
    past it."""
    asked = []  # (horizon, whether the response waited at the channel's interface or was being sent)

    def observe(noc, waiting, now, horizon):
        if waiting:
            channel_side = noc.interfaces[7]
            asked.append((horizon, channel_side.sending is not None or bool(channel_side.queue)))

    received = _long_read_over_slow_links(depth, observe)
    assert all(horizon is not None and horizon <= received for horizon, _ in asked)
    waiting = [horizon for horizon, sending in asked if sending]
    assert waiting
    assert received - max(waiting) <= 1_000


@pytest.mark.parametrize("depth", [2, 4])
def test_a_long_responses_tail_in_the_network_counts_the_credits_over_the_last_link(depth):
    """As above, while the 1 KiB read's response has flits in the network: the soonest its
    tail can arrive (``network_tails``) counts the credits its flits yet to cross into the
    requester's router still need, whatever flits are past it: every bound given reaches
    within 33 cycles of the response (33 with buffers of 4, 21 with buffers of 2; 36 and 39
    with the links both ways alone as the round trip; one flit a cycle behind the flits, the
    least over them, fell 49 and 123 cycles short), and none lies past it."""
    tails = []

    def observe(noc, waiting, now, horizon):
        tails.extend(at for packet, at in noc.monitor.network_tails(now) if packet.dest == 0)

    received = _long_read_over_slow_links(depth, observe)
    assert tails and max(tails) <= received
    assert received - min(tails) <= 33_000


@pytest.mark.parametrize("engine", ["fast", "compiled"])
@pytest.mark.parametrize("depth", [2, 4])
def test_a_response_waiting_behind_one_being_sent_starts_after_its_flits(engine, depth):
    """Four requesters each read 1 KiB of a DDR4 channel over links of 8 cycles (512-bit
    flits, buffers of ``depth`` flits), so responses wait at the channel's interface while
    another is being sent, its credits holding it to ``depth`` flits per round trip: the
    horizon of a requester whose response waits there counts the flits ahead of it (the rest
    of the one being sent, those waiting before it), one an edge at the most and on the
    credits of the one being sent (:meth:`~.tail_bounds.PacketTailBounds._sending_tail_ps`),
    and reaches within 19 cycles of the response with buffers of 4 (28 with the links both
    ways alone as the credits' round trip, 32 with the flits one an edge only, 40 from its
    head sent at once), 126 with buffers of 2 (162, 233, 263); none lies past it."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2, 2)", address_map=[(0, MIB, 7)], engine=engine, link_latency=8,
              flit_bits=512, buffer_depth=depth)
    memory = DramController("ddr", top, standard="DDR4-2400R", base_address=0)
    connect(noc.memory_port("to_memory", 7), memory.req)
    connect(memory.resp, noc.memory_port("from_memory", 7))
    probes = []
    for t in range(4):
        probe = AskingRequester(f"probe{t}", top)
        connect(probe.req, noc.memory_port("mem_req", t))
        connect(noc.memory_port("mem_rsp", t), probe.rsp)
        probe.script.append((0, MemRequest(0x400 + 0x1000 * t, 1024, tag=0)))
        probes.append(probe)
    sim = Simulator(top)
    behind = []  # (requester, horizon) while its response waits behind one being sent

    def observe(comp, horizon):
        channel_side = noc.interfaces[7]
        if (comp in probes and comp.sent and not comp.received and channel_side.sending is not None
                and any(packet.dest == probes.index(comp) for packet in channel_side.queue)):
            behind.append((comp, horizon))

    _watch_questions(sim, observe)
    sim.run(until_ps=5_000_000)
    assert len(behind) >= 50
    gaps = [probe.received[0] - horizon for probe, horizon in behind]
    assert min(gaps) >= 0
    assert max(gaps) <= (19_000 if depth == 4 else 126_000)


class _Sending(PacketTailBounds):
    """The tail terms of an engine over links of 8 cycles (a credit round trip of 19) and
    buffers of 4 flits, at 1 ns a cycle, whose interface at terminal 0 (router 0) sends a
    packet with ``left`` flits to send and ``entering`` in its router's input buffer."""

    def __init__(self, left: int, entering: int):
        self.period, self.terminal_router = 1000, [0, 0, 1]
        self.credit_depth, self.credit_cycles, self.credit_back = 4, 19, 2
        self.left, self.entering = left, entering

    def _flits_to_send(self, ni) -> int:
        return self.left

    def _flits_entering(self, ni) -> int:
        return self.entering


def _interface(dest: int, queued=()):
    """An interface at terminal 0 sending a 16-flit packet to ``dest``, ``queued`` waiting."""
    return SimpleNamespace(terminal=0, sending=SimpleNamespace(size=16, dest=dest), queue=list(queued))


def test_an_interface_sends_its_tail_no_sooner_than_the_credits_over_its_routers_link_allow():
    """Flit i of a 16-flit packet goes through its router's switch no sooner than a credit
    round trip after flit i - 4 (the link's buffer holds 4), and the interface sends it on the
    credit of flit i - 4, back 2 cycles after that flit went through; the packets waiting
    start the cycle after the tail."""
    # 6 to send, 4 in the router's buffer: flits 6..9 through at 0..3 at the soonest, 10 at
    # 19, 11 at 20; the tail (15) on flit 11's credit at 22
    assert _Sending(6, 4)._sending_tail_ps(_interface(2), 0) == 22_000
    # all 16 to send: flit 11 through at 2 * 19 + 3, the tail on its credit at 43
    assert _Sending(16, 0)._sending_tail_ps(_interface(2), 5_000) == 48_000
    # 6 to send, none in the buffer: flit 11 at 1, its credit at 3, sooner than the tail's
    # own turn, one a cycle (5); and for a terminal of the same router, one a cycle
    assert _Sending(6, 0)._sending_tail_ps(_interface(2), 0) == 5_000
    assert _Sending(6, 4)._sending_tail_ps(_interface(1), 0) == 5_000
    first, second = SimpleNamespace(size=16), SimpleNamespace(size=1)
    assert _Sending(6, 4)._queue_starts(_interface(2, (first, second)), 0) == [(first, 23_000), (second, 39_000)]
