"""Memory traffic on the compiled network (``Noc(engine="compiled")`` with an address map) is held
to the fast engine: random composed systems (requesters and memories on random terminals of
the topologies the compiled edge takes, random flit widths, delays and buffers) give the same
responses at the same cycles, the same bytes in the memories and every statistic alike, and the
lookahead the same answers at every edge."""

import random
from collections import deque

import numpy as np
import pytest

from archmodel.kernel import Component, DeadlockError, In, Out, ParameterError, Simulator, connect, model
from archmodel.kernel.stats import stats_dict
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.messages import MemRequest
from archmodel.models.network import Noc
from archmodel.models.network import compiled_memory_engine
from archmodel.models.network.compiled_edge import interface_tail
from archmodel.models.network.compiled_loop import CREDIT_TO_TERMINAL
from archmodel.models.network.compiled_engine import refusal

MIB = 1 << 20
TOPOLOGIES = [("mesh(2, 2)", "dor"), ("mesh(3, 2, 2)", "dor"), ("torus(3)", "dateline"), ("ring(5)", "dateline")]


@model(catalogue=False)
class Requester(Component):
    """Sends its script of MemRequests (each at its cycle at the soonest, while the network takes
    them) and logs (cycle, message) of what it sent and received."""

    req = Out("MemRequests")
    rsp = In("MemResponses", required=False)

    def setup(self) -> None:
        self.script: deque = deque()  # (cycle, request)
        self.sent: list = []
        self.received: list = []

    def tick(self) -> None:
        if self.rsp.valid:
            self.received.append((self.cycle, self.rsp.recv()))
        if self.script and self.script[0][0] <= self.cycle and self.req.try_send(self.script[0][1]):
            self.sent.append((self.cycle, self.script.popleft()[1]))
        if not self.script and not len(self.rsp):
            self.sleep()


def random_system(seed: int, engine: str):
    """A Noc of random shape and timing with two or three requesters and two memories on random
    terminals, each requester with a random script of reads and writes."""
    rng = random.Random(seed)
    topology, routing = rng.choice(TOPOLOGIES)
    params = dict(topology=topology, routing=routing, vcs=rng.choice([1, 2, 3]) if routing == "dor" else rng.choice([2, 4]),
                  buffer_depth=rng.randint(1, 4), flit_bits=rng.choice([32, 64, 128, 512]),
                  link_latency=rng.randint(1, 3), credit_delay=rng.randint(0, 2),
                  wait_for_tail_credit=rng.random() < 0.3, alloc_iterations=rng.randint(1, 2),
                  routing_delay=rng.randint(0, 1), vc_alloc_delay=rng.randint(0, 1), st_delay=rng.randint(1, 2),
                  injection_latency=rng.randint(1, 2), ejection_latency=rng.randint(1, 2))
    top = Component("top")
    terminals = Noc("probe", **params).port_map.terminals
    places = rng.sample(range(terminals), 4 + (terminals > 4))
    memory_at, requester_at = places[:2], places[2:]
    ranges = [(m * MIB, (m + 1) * MIB, t) for m, t in enumerate(memory_at)]
    noc = Noc("net", top, address_map=ranges, engine=engine, **params)
    memories = []
    for m, t in enumerate(memory_at):
        memory = FixedLatencyMemory(f"mem{m}", top, base_address=m * MIB, size_bytes=MIB,
                                    latency_cycles=rng.randint(1, 30), bytes_per_cycle=rng.choice([8, 64]))
        connect(noc.memory_port("to_memory", t), memory.req, latency=rng.randint(1, 2))
        connect(memory.rsp, noc.memory_port("from_memory", t), latency=rng.randint(1, 2))
        memories.append(memory)
    requesters = []
    for k, t in enumerate(requester_at):
        cpu = Requester(f"cpu{k}", top)
        connect(cpu.req, noc.memory_port("mem_req", t), latency=rng.randint(1, 2))
        connect(noc.memory_port("mem_rsp", t), cpu.rsp, latency=rng.randint(1, 2))
        cycle = 0
        for tag in range(rng.randint(20, 60)):
            cycle += rng.choice([0, 0, 1, 5, 40])
            size = rng.choice([8, 16, 64, 256])
            address = rng.randrange(2) * MIB + size * rng.randrange(64)
            write = rng.random() < 0.4
            data = bytes(rng.randrange(256) for _ in range(size)) if write else None
            cpu.script.append((cycle, MemRequest(address, size, write, data, source=f"cpu{k}", tag=tag)))
        requesters.append(cpu)
    return top, noc, requesters, memories


def run_system(seed: int, engine: str):
    top, noc, requesters, memories = random_system(seed, engine)
    sim = Simulator(top, seed=seed)
    sim.run(cycles=30_000)
    return (sim.now, [(cpu.sent, cpu.received) for cpu in requesters],
            [memory.backdoor_read(m * MIB, 64 * 256) for m, memory in enumerate(memories)],
            stats_dict(sim.all_stats())), noc


@pytest.mark.parametrize("seed", range(8))
def test_the_compiled_engine_matches_the_fast_engine_on_random_memory_systems(seed):
    (fast, fast_noc), (compiled, noc) = (run_system(seed, engine) for engine in ("fast", "compiled"))
    assert (fast_noc.stepping, noc.stepping) == ("fast", "compiled")
    assert compiled == fast
    assert all(len(received) == len(sent) and sent for sent, received in fast[1])  # every request answered


@pytest.mark.parametrize("seed", range(8, 11))
def test_the_packet_slots_and_source_queues_grow_as_they_fill(seed, monkeypatch):
    """With room for one packet and one queued per interface at first, the arrays grow as
    packets come (the slots of the packets in flight and every queue keep their order)."""
    fast, _ = run_system(seed, "fast")
    monkeypatch.setattr(compiled_memory_engine, "_SLOTS", 1)
    monkeypatch.setattr(compiled_memory_engine, "_QUEUED", 1)
    compiled, noc = run_system(seed, "compiled")
    assert compiled == fast
    assert len(noc.monitor.slots) >= 8 and noc.monitor.arrays.queue.shape[1] >= 4


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_engine_answers_the_lookahead_as_the_fast_engine_at_every_edge(seed):
    """The same bounds at every edge, the same packets' tails, and each interface sending the
    same packet as the lookahead reads it."""
    systems = [random_system(seed, engine) for engine in ("fast", "compiled")]
    sims = [Simulator(top, seed=seed) for top, *_ in systems]
    ports = [[port for name in Noc.MEMORY_PORTS for port in noc.exposed[name] if port.connected]
             for _, noc, _, _ in systems]
    for _ in range(600):
        answers = []
        for sim, (_, noc, _, _), own in zip(sims, systems, ports):
            sim.run(until_ps=sim.now + noc.domain.period_ps)  # (cycles= counts from time 0)
            engine = noc.monitor
            engine.forget_bounds()
            answers.append(([engine.earliest_send_ps(port) for port in own],
                            sorted((packet.id, at) for packet, at in engine.network_tails(sim.now)),
                            # (the compiled engine learns of a tail sent as the lookahead reads)
                            [None if ni.sending is None else ni.sending.id for ni in noc.interfaces]))
        assert answers[0] == answers[1]


def _requester_and_memory(memory_at: int, engine: str = "compiled", **network) -> tuple:
    """(top, noc, requester): a Noc on a 2x2 mesh (``network``: its other parameters) with a
    Requester at terminal 0 and a FixedLatencyMemory of 5 cycles holding the first MiB at
    terminal ``memory_at``."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=[(0, MIB, memory_at)], engine=engine, **network)
    cpu = Requester("cpu", top)
    connect(cpu.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), cpu.rsp)
    memory = FixedLatencyMemory("mem", top, base_address=0, size_bytes=MIB, latency_cycles=5)
    connect(noc.memory_port("to_memory", memory_at), memory.req)
    connect(memory.rsp, noc.memory_port("from_memory", memory_at))
    return top, noc, cpu


def _long_responses(engine: str):
    """One requester reading 128 B four times, two at once and two 100 cycles on, from a
    memory two hops away over 32-bit flits and buffers of one: each response is a 33-flit
    packet whose interface sends a flit per credit round trip, the second of each pair
    queued behind the first."""
    top, noc, cpu = _requester_and_memory(3, engine, flit_bits=32, buffer_depth=1, link_latency=3)
    cpu.script.extend((100 * (k // 2), MemRequest(128 * k, 128, tag=k)) for k in range(4))
    return top, noc, cpu


def test_tails_sent_and_responses_started_in_edges_simulated_later_are_seen_as_the_lookahead_reads():
    """The compiled engine wakes for no packet started nor tail sent: a response starts, and
    its tail goes out, in edges simulated later, when the lookahead reads the network, and
    every interface shows the packet it sends, and when it was injected, as the fast engine's
    does at that edge (and the same bounds)."""
    systems = [_long_responses(engine) for engine in ("fast", "compiled")]
    sims = [Simulator(top) for top, _, _ in systems]
    sent_seen = 0
    for _ in range(300):
        seen = []
        for sim, (_, noc, _) in zip(sims, systems):
            sim.run(until_ps=sim.now + 5 * noc.domain.period_ps)  # (the edges between are not read)
            engine = noc.monitor
            engine.forget_bounds()
            seen.append(([engine.earliest_send_ps(port) for name in ("mem_rsp", "to_memory")
                          for port in noc.exposed[name] if port.connected],
                         [None if ni.sending is None else (ni.sending.id, ni.sending.injected_ps)
                          for ni in noc.interfaces]))
        assert seen[0] == seen[1]
        sent_seen += seen[0][1][3] is not None
    assert [response.tag for _, response in systems[1][2].received] == [0, 1, 2, 3]
    assert sent_seen > 100  # (the memory's interface sends at many of the edges read)


def test_auto_takes_the_compiled_edge_for_memory_traffic_where_the_configuration_allows():
    ranges = [(0, MIB, 1)]
    assert Noc("net", topology="mesh(2, 2)", address_map=ranges, engine="auto").stepping == (
        "compiled" if refusal(Noc("probe", topology="mesh(2, 2)", address_map=ranges)) is None else "fast")
    assert Noc("net", topology="mesh(2, 2)", routing="west_first", address_map=ranges, engine="auto").stepping == "fast"
    with pytest.raises(ParameterError) as caught:
        Noc("net", topology="mesh(2, 2)", routing="west_first", vcs=2, address_map=ranges, engine="compiled")
    assert caught.value.message.startswith("net: engine='compiled' does not support routing 'west_first'")


@pytest.mark.parametrize("wait_for_tail_credit", [False, True])
@pytest.mark.parametrize("cycles", [8, 30, 61])
def test_a_stalled_network_is_reported_as_the_fast_engine_reports_it(cycles, wait_for_tail_credit):
    """Every credit taken away at the same edge of the same system on both engines (no router
    nor interface may send on): the same report, the flits buffered and who waits on whom
    read from the arrays as from the routers' objects (with ``wait_for_tail_credit`` a head
    waits also on the VC whose tail left an output VC it may take, until its credits are back)."""
    reports = []
    for engine in ("fast", "compiled"):
        top, noc, cpu = _requester_and_memory(3, engine, watchdog=50, buffer_depth=2,
                                              wait_for_tail_credit=wait_for_tail_credit)
        cpu.script.extend((2 * tag, MemRequest(64 * tag, 64 * (1 + tag % 3), tag=tag)) for tag in range(12))
        sim = Simulator(top)
        sim.run(cycles=cycles)
        if engine == "fast":
            for router in noc.routers:
                router.ovc_credits[:] = [0] * len(router.ovc_credits)
            for ni in noc.interfaces:
                ni.credits[:] = [0] * len(ni.credits)
        else:
            noc.monitor.buffered_flits()  # (a look at the arrays simulates the edges ticked without a call)
            noc.monitor.arrays.ovc_credits[:] = 0
            noc.monitor.arrays.ni_credits[:] = 0
        with pytest.raises(DeadlockError) as caught:
            sim.run(cycles=500)
        reports.append(str(caught.value))
    assert reports[0] == reports[1]
    assert reports[1].startswith("deadlock at ")
    assert "flits buffered in top.net and none moved for 50 cycles" in reports[1]
    assert "waiting VCs" in reports[1] or "wait cycle" in reports[1]


def _interface_sending(held: int, wheel: list, flits: int, depth: int = 4):
    """The arrays of one interface (terminal 0) sending the first of ``flits`` flits on VC 0,
    holding ``held`` credits, with credits for it on the wheel at the cycles of ``wheel``
    (the last edge being cycle 99), and the cycles a credit takes: switch allocation 1 and an
    ejection link of 8 back, an injection of 9 in."""
    W = 32
    ev_kind, ev_a, ev_b = (np.zeros((W, 4), np.int64) for _ in range(3))
    ev_n = np.zeros(W, np.int64)
    for cycle in wheel:
        x = cycle % W
        ev_kind[x, ev_n[x]] = CREDIT_TO_TERMINAL
        ev_n[x] += 1
    credit = np.array([depth, 0, 1 + 8, 9], np.int64)
    sent = np.zeros(depth, np.int64)
    ni_send, ni_send_vc, ni_send_slot = np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64)
    ni_credits = np.array([[held]], np.int64)
    pk_size = np.array([flits], np.int64)
    return (0, 100, 99, credit, sent, ni_send, ni_send_vc, ni_send_slot, ni_credits, pk_size, ev_kind, ev_a, ev_b,
            ev_n)


def test_an_interface_sends_its_tail_no_sooner_than_its_credits_come_back():
    """quiet_until's bound on a sending interface's tail counts credits: with all 4 held, 16
    flits go 4 a round trip of 18 cycles (100-103, 118-121, 136-139, 154-157); with 1 held, 1
    on the wheel at 102 and 2 flits in or on the way to the router (back at 109 at the
    soonest), the flits after them wait for their own credits."""
    assert interface_tail(*_interface_sending(held=4, wheel=[], flits=16)) == 157
    assert interface_tail(*_interface_sending(held=4, wheel=[], flits=3)) == 102
    # 100, 102, 109, 110, then 100+18, 102+18, 109+18, 110+18
    assert interface_tail(*_interface_sending(held=1, wheel=[102], flits=8)) == 128
    assert interface_tail(*_interface_sending(held=1, wheel=[102], flits=6)) == 120
