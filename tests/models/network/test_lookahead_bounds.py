"""Routers and interfaces tell the kernel's lookahead truthful bounds (earliest sends per
output port, reactions per input and output), on both Python network engines and (auto) the
compiled one."""

import random
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, In, ModelAssertion, Out, Simulator, connect, model
from archmodel.kernel.lookahead import ConnectionGraph, earliest_arrival_ps
from archmodel.kernel.ports import InPort, OutPort
from archmodel.kernel.stats import stats_dict
from archmodel.lang.elaborate import load
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster
from archmodel.models.memory import DramController
from archmodel.models.messages import MemRequest
from archmodel.models.network import Noc
from archmodel.models.network.flit import NO_CREDIT, NetPacket
from archmodel.paths import data_path
from archmodel.workloads.snitch import setup_gemm


def test_a_router_the_fast_engine_steps_fails_with_its_path_and_time():
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", engine="fast")
    sim = Simulator(top)
    sim.run(cycles=3)
    body = NetPacket(7, 0, 3, 2).flits()[1]  # a body flit with no packet in progress
    with pytest.raises(ModelAssertion, match=r"top\.net\.router\[0\] at \d+ ps: inp\[0\] vc0: .* arrived with no "
                                             r"packet in progress"):
        noc.routers[0].take(0, body, NO_CREDIT, sim.now)


MIB = 1 << 20
MEMORIES = {1: 0, 3: MIB}  # terminal -> base address of its 1 MiB memory
ENGINES = ["components", "fast", "auto"]  # (auto: compiled where the configuration allows)


@model(catalogue=False)
class AskingRequester(Component):
    """Sends the MemRequests of its script at their cycles (while the network takes them),
    takes every response, and at each tick, after sending, asks the lookahead until when
    nothing can reach it; logs ``asked`` (time, horizon), ``sent`` and ``received`` times."""

    req = Out("MemRequests")
    rsp = In("MemResponses")

    def setup(self) -> None:
        self.script: deque = deque()  # (cycle, MemRequest)
        self.asked: list = []
        self.sent: list = []
        self.received: list = []

    def tick(self) -> None:
        if self.rsp.valid:
            self.rsp.recv()
            self.received.append(self.now)
        if self.script and self.script[0][0] <= self.cycle and self.req.try_send(self.script[0][1]):
            self.script.popleft()
            self.sent.append(self.now)
        self.asked.append((self.now, self.sim.undisturbed_until_ps(self)))
        if not self.script and len(self.sent) == len(self.received):
            self.sleep()


@model(catalogue=False)
class BackgroundRequester(Component):
    """Sends its script of MemRequests, one per cycle while the network takes them, and
    drops the responses, taking one only at cycles that are multiples of ``pause`` (so with
    a pause its response port fills and the network waits on it): other traffic."""

    req = Out("MemRequests")
    rsp = In("MemResponses")

    def setup(self) -> None:
        self.script: deque = deque()
        self.pause = 1

    def tick(self) -> None:
        wait = -self.cycle % self.pause
        if self.rsp.valid and not wait:
            self.rsp.recv()
        if self.script and self.req.try_send(self.script[0]):
            self.script.popleft()
        if self.script:
            return
        if self.rsp.valid:
            self.sleep_for(wait or self.pause)
        else:
            self.sleep()  # a response wakes it


def mesh(engine: str, latency: int = 10, memories: dict = MEMORIES, **params):
    """A 2 x 2 mesh: the asking requester at terminal 0, a background requester at 2, a
    FixedLatencyMemory at each terminal of ``memories`` (terminal -> base address)."""
    top = Component("top")
    ranges = [(base, base + MIB, t) for t, base in memories.items()]
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=ranges, engine=engine, **params)
    probe = AskingRequester("probe", top)
    other = BackgroundRequester("other", top)
    for t, requester in ((0, probe), (2, other)):
        connect(requester.req, noc.memory_port("mem_req", t))
        connect(noc.memory_port("mem_rsp", t), requester.rsp)
    for t, base in memories.items():
        memory = FixedLatencyMemory(f"mem{t}", top, base_address=base, size_bytes=MIB, latency_cycles=latency,
                                    bytes_per_cycle=16)
        connect(noc.memory_port("to_memory", t), memory.req)
        connect(memory.rsp, noc.memory_port("from_memory", t))
    return top, noc, probe, other


class SendLog:
    """Records every send and every receive, in order, with the time: (seq, time, port)."""

    def __init__(self, monkeypatch, sim):
        self.sends: dict = {}
        self.takes: dict = {}
        self.seq = 0
        log = self
        try_send, recv = OutPort.try_send, InPort.recv

        def logged_send(port, msg, bits=None):
            ok = try_send(port, msg, bits)
            if ok:
                log.seq += 1
                log.sends.setdefault(port, []).append((log.seq, sim.now))
            return ok

        def logged_recv(port):
            msg = recv(port)
            log.seq += 1
            log.takes.setdefault(port.owner, []).append((log.seq, sim.now))
            return msg

        monkeypatch.setattr(OutPort, "try_send", logged_send)
        monkeypatch.setattr(InPort, "recv", logged_recv)


def random_request(rng: random.Random) -> MemRequest:
    base = rng.choice(list(MEMORIES.values()))
    size = rng.choice((8, 16, 64, 128))
    address = base + 64 * rng.randrange(64)
    if rng.random() < 0.4:
        return MemRequest(address, size, True, bytes(size))
    return MemRequest(address, size)


def random_traffic(rng: random.Random, probe, other, pause: int) -> None:
    """Up to 11 requests of the probe at random cycles, up to 11 of the other requester at
    once, which takes its responses every ``pause`` cycles."""
    cycle = 0
    for _ in range(rng.randrange(1, 12)):
        cycle += rng.randrange(0, 40)
        probe.script.append((cycle, random_request(rng)))
    other.script.extend(random_request(rng) for _ in range(rng.randrange(0, 12)))
    other.pause = pause


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), engine=st.sampled_from(ENGINES), vcs=st.integers(1, 2),
       credit_delay=st.integers(0, 1), routing_delay=st.integers(0, 1), link_latency=st.integers(1, 2),
       router=st.sampled_from(["NocRouter", "SimpleRouter"]), flit_bits=st.sampled_from([64, 128]),
       pause=st.sampled_from([1, 1, 3, 7, 20]))
def test_no_response_beats_a_horizon_and_no_port_sends_before_its_declared_bound(
        seed, engine, vcs, credit_delay, routing_delay, link_latency, router, flit_bits, pause):
    """Random memory traffic: every response reaches the asking requester at or after each
    horizon it was given (up to its next send), and every port of the network sends no sooner
    than it declared, unless its owner took a message in between. The other requester takes
    its responses only every ``pause`` cycles, so the network also waits on a full port (whose
    returning credit lets the fast engine send sooner there only) while responses to the
    asking requester are on their way (which only its own requests can cause)."""
    rng = random.Random(seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        top, noc, probe, other = mesh(engine, latency=rng.randrange(1, 30), vcs=vcs, credit_delay=credit_delay,
                                      routing_delay=routing_delay, link_latency=link_latency, router=router,
                                      flit_bits=flit_bits)
        random_traffic(rng, probe, other, pause)
        sim = Simulator(top)
        log = SendLog(monkeypatch, sim)
        senders = [c for c in sim.components
                   if type(c).earliest_send_ps is not Component.earliest_send_ps and c is not probe]
        declared = []  # (seq, time, port, bound)
        ask = sim.undisturbed_until_ps

        def asking(comp):
            for sender in senders:
                for port in sender.ports:
                    if port.decl.direction == "out" and port.channel is not None:
                        declared.append((log.seq, sim.now, port, sender.earliest_send_ps(port)))
            return ask(comp)

        sim.undisturbed_until_ps = asking
        sim.run(until_ps=3_000_000)
    assert len(probe.received) == len(probe.sent) > 0  # every request answered
    for asked_at, horizon in probe.asked:
        later_sends = [t for t in probe.sent if t > asked_at]
        arrivals = [t for t in probe.received if t > asked_at]
        if arrivals and (not later_sends or arrivals[0] <= later_sends[0]):
            assert horizon is not None and arrivals[0] >= horizon, (asked_at, horizon, probe.received, probe.sent)
    for seq, now, port, bound in declared:
        nxt = next(((s, t) for s, t in log.sends.get(port, []) if s > seq), None)
        if nxt is None:
            continue
        took = [s for s, _ in log.takes.get(port.owner, []) if seq < s < nxt[0]]
        if not took:
            assert bound is not None and nxt[1] >= bound, (port.path, now, bound, nxt)


def searching_in_full(sim) -> list:
    """Make every lookahead question of ``sim`` also run the search that skips nothing (every
    remaining time 0, as if anything could reach the asker at once) and log (asked, pruned
    answer, full answer)."""
    full = ConnectionGraph(sim)
    full.remaining = lambda comp: dict.fromkeys(sim.channels, 0)
    pruned, answers = sim.connection_graph, []

    def asking(comp, within_ps=None):
        answer = earliest_arrival_ps(sim, comp, within_ps)
        sim.connection_graph = full
        try:
            answers.append((comp.path, answer, earliest_arrival_ps(sim, comp, within_ps)))
        finally:
            sim.connection_graph = pruned
        return answer

    sim.undisturbed_until_ps = asking
    return answers


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), engine=st.sampled_from(ENGINES), pause=st.sampled_from([1, 7]),
       link_latency=st.integers(1, 3))
def test_the_search_skips_only_what_cannot_reach_the_asker_before_its_horizon(seed, engine, pause, link_latency):
    """The lookahead leaves out an arrival from which nothing can reach the asker before the
    soonest arrival found (by the least reactions and link latencies on the way): on random
    memory traffic every horizon is the one the search skipping nothing finds."""
    rng = random.Random(seed)
    top, noc, probe, other = mesh(engine, latency=rng.randrange(1, 30), link_latency=link_latency)
    random_traffic(rng, probe, other, pause)
    sim = Simulator(top)
    answers = searching_in_full(sim)
    sim.run(until_ps=3_000_000)
    assert answers and all(pruned == whole for _, pruned, whole in answers)


def test_the_search_skips_only_what_cannot_reach_a_cluster_or_a_dram_channel():
    """As above, for the questions of four compiled Snitch clusters streaming GEMMs from two
    DDR4 channels over a 2x2 mesh, and of the channels scheduling ahead."""
    top = Component("top")
    span = 1 << 20
    noc = Noc("net", top, topology="mesh(2, 2, 2)", flit_bits=512, engine="fast",
              address_map=[(c * span, (c + 1) * span, 2 * router + 1) for c, router in enumerate((0, 3))])
    for c, router in enumerate((0, 3)):
        memory = DramController(f"ddr{c}", top, standard="DDR4-2400R", base_address=c * span)
        connect(noc.memory_port("to_memory", 2 * router + 1), memory.req)
        connect(memory.resp, noc.memory_port("from_memory", 2 * router + 1))
    clusters = []
    for i in range(4):
        cluster = SnitchCluster(f"cluster{i}", top, engine="compiled")
        connect(cluster.ext_req, noc.memory_port("mem_req", 2 * i))
        connect(noc.memory_port("mem_rsp", 2 * i), cluster.ext_rsp)
        setup_gemm(cluster, None, m=16, n=16, k=8, streamed=True,
                   region=((i // 2) * span + (i % 2) * (span // 2), span // 2))
        clusters.append(cluster)
    sim = Simulator(top)
    answers = searching_in_full(sim)
    sim.run(until_ps=400_000_000)
    assert all(c.result_ok for c in clusters)
    askers = {path for path, _, _ in answers}
    assert {"top.cluster0", "top.ddr0", "top.ddr1"} <= askers
    assert all(pruned == whole for _, pruned, whole in answers)


@pytest.mark.parametrize("engine", ENGINES)
def test_after_one_read_the_horizon_is_the_round_trip_the_network_can_know(engine):
    """One 16-byte read from terminal 0 to the only memory, at terminal 3 (latency 10):
    one-flit request and response. The fast engine sees the whole path (the memory declares
    its own latency), so the horizon right after sending is the exact zero-load round trip.
    (With memories at several terminals too, see below: the request is on its way to the
    engine, which reads its address.)
    The per-component network gives less: its interface knows only the network's least round
    trip, without the memory's time; the lookahead cannot follow the request through the
    routers and the memory and back, because the interface cannot tell the response's flits
    from the credits of its own request on one channel."""
    top, noc, probe, _ = mesh(engine, latency=10, memories={3: MIB})
    probe.script.append((5, MemRequest(MIB + 64, 16)))
    Simulator(top).run()
    ((sent,), (received,)) = probe.sent, probe.received
    horizon = dict(probe.asked)[sent]
    zero_load = noc.zero_load_latency(0, 3) + noc.zero_load_latency(3, 0)
    # links in (1 + the interface's output register) and out, 3 routers, 2 hops
    assert noc.min_latency(0, 3) + noc.min_latency(3, 0) == zero_load == 2 * (2 + 3 * 3 + 2 + 1)
    # mem_req, to_memory, from_memory, mem_rsp links take a cycle each; the memory 1 + 10
    assert received - sent == (zero_load + 4 + 1 + 10) * 1000
    if engine != "components":
        assert horizon == received
    else:
        assert horizon == sent + (1 + zero_load + 1) * 1000  # less the memory's 1 + 10 and its 2 links


def test_a_request_on_its_way_is_answered_no_sooner_than_the_round_trip_to_its_own_memory():
    """As above on the fast engine with a nearer memory at terminal 1 as well: the engine
    counts the request on its way to it by its address, so the horizon is the round trip to
    terminal 3, not to the nearest memory (a reaction, declared per pair of ports, would
    have to assume the nearest)."""
    top, noc, probe, _ = mesh("fast", latency=10)
    probe.script.append((5, MemRequest(MIB + 64, 16)))
    Simulator(top).run()
    ((sent,), (received,)) = probe.sent, probe.received
    assert noc.min_latency(0, 1) < noc.min_latency(0, 3)
    assert received - sent == (noc.zero_load_latency(0, 3) + noc.zero_load_latency(3, 0) + 4 + 1 + 10) * 1000
    assert dict(probe.asked)[sent] == received


def test_another_requesters_traffic_and_full_port_leave_the_horizon_at_the_round_trip():
    """As above on the fast engine, while another requester (terminal 2) has read from the
    same memory before and takes its responses only every 10 cycles, so the engine waits on
    its full port when the probe sends and while the probe's read is served. Responses go only
    to the requester that asked, and a credit returning on that port lets the engine send
    sooner there only: the probe's horizon is still the exact round trip."""
    top, noc, probe, other = mesh("fast", latency=10, memories={3: MIB})
    other.script.extend(MemRequest(MIB + 64 * i, 16) for i in range(8))
    other.pause = 10
    probe.script.append((40, MemRequest(MIB + 64, 16)))
    Simulator(top).run()
    ((sent,), (received,)) = probe.sent, probe.received
    assert received - sent == (noc.zero_load_latency(0, 3) + noc.zero_load_latency(3, 0) + 4 + 1 + 10) * 1000
    assert dict(probe.asked)[sent] == received


def test_the_memory_mesh_runs_the_same_with_the_cluster_compiled_in_fewer_batches():
    """topologies/memory_mesh.arch on both network engines, the Snitch cluster compiled and in
    Python: the same cycles, statistics and GEMM result; the compiled loop runs its cycles in
    a few batches, as far as the network's bounds let it."""
    path = str(data_path("topologies") / "memory_mesh.arch")
    # (199 and 62 batches since injection takes its link and the interface's output register,
    # 199 and 77 since a credit leaves when switch allocation completes, a cycle after its flit
    # won: the network's engine then wakes a cycle after every switch allocation)
    for engine, most_batches in (("components", 200), ("fast", 80)):
        runs = {}
        for cluster_engine in ("compiled", "python"):
            top = load(path, params={"engine": f'"{engine}"'}).top
            cluster, memory = (next(c for c in top.children if c.name == name) for name in ("cluster", "memory"))
            cluster.engine = cluster_engine
            sim = Simulator(top)
            sim.run()
            assert cluster.result_ok
            runs[cluster_engine] = (sim.now, stats_dict(sim.all_stats()), memory.backdoor_read(memory.base_address, 1 << 16))
            if cluster_engine == "compiled":
                assert 0 < cluster.n_compiled_batches <= most_batches, (engine, cluster.n_compiled_batches)
        assert runs["compiled"] == runs["python"], engine
