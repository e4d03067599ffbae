"""MemoryTreeNode: routing by address down or up, exact latencies, responses in request order
per requester across targets, link bytes and utilisation, the functional path, the lookahead
bounds, and the errors of requests it cannot route."""

import random

import attrs
import pytest

from archmodel.kernel import Component, ModelAssertion, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.messages import MemRequest, MemResponse, restored, retagged
from archmodel.models.network import MemoryTreeNode
from archmodel.models.network.memory_tree import MemoryTreeNode as Node

from .test_memory_traffic import ScriptedRequester

MIB = 1 << 20


def build(latency=1, mem_latency=(10, 2), up_width=None, radix=1, **node_params):
    """Requesters cpu0.. -> node; node.out_req[0] -> memory ``low`` (0 .. 1 MiB, by the map),
    node.up_req -> memory ``high`` (1 .. 2 MiB, the uplink)."""
    top = Component("top")
    node = MemoryTreeNode("node", top, radix=radix, outputs=1, address_map=[(0, MIB, 0)], latency_cycles=latency,
                          **node_params)
    cpus = []
    for i in range(radix):
        cpu = ScriptedRequester(f"cpu{i}", top)
        connect(cpu.req, node.down_req[i])
        connect(node.down_rsp[i], cpu.rsp)
        cpus.append(cpu)
    low = FixedLatencyMemory("low", top, base_address=0, size_bytes=MIB, latency_cycles=mem_latency[0])
    high = FixedLatencyMemory("high", top, base_address=MIB, size_bytes=MIB, latency_cycles=mem_latency[1])
    connect(node.out_req[0], low.req)
    connect(low.rsp, node.out_rsp[0])
    connect(node.up_req, high.req, width_bits=up_width)
    connect(high.rsp, node.up_rsp, width_bits=up_width)
    return top, node, cpus, low, high


def lone_round_trip(memory_latency: int) -> int:
    """Cycles from send to response of one 64-byte read straight at a FixedLatencyMemory."""
    top = Component("top")
    cpu = ScriptedRequester("cpu", top)
    memory = FixedLatencyMemory("m", top, base_address=0, size_bytes=MIB, latency_cycles=memory_latency)
    connect(cpu.req, memory.req)
    connect(memory.rsp, cpu.rsp)
    cpu.script.append(MemRequest(0, 64, source="dma", tag=1))
    Simulator(top).run(cycles=1000)
    return cpu.received[0][0] - cpu.sent[0][0]


@pytest.mark.parametrize("latency", [0, 1, 3])
def test_a_read_goes_down_or_up_by_address_with_two_links_and_the_node_latency_both_ways(latency):
    for address, memory_latency in ((0x40, 10), (MIB + 0x40, 2)):
        top, node, (cpu,), low, high = build(latency=latency)
        (low if address < MIB else high).backdoor_write(address, bytes(range(64)))
        cpu.script.append(MemRequest(address, 64, source="dma", tag=7))
        Simulator(top).run(cycles=1000)
        (sent, _), = cpu.sent
        (got, response), = cpu.received
        assert response.data == bytes(range(64)) and response.tag == 7 and response.source == "dma"
        # one more link each way, and the node's latency each way
        assert got - sent == lone_round_trip(memory_latency) + 2 + 2 * latency


def test_responses_return_in_request_order_across_targets():
    top, node, (cpu,), low, high = build()
    low.backdoor_write(0x0, b"L" * 64)
    high.backdoor_write(MIB, b"H" * 64)
    # the slow memory first: the fast one's answer overtakes it inside the node and waits
    cpu.script.extend([MemRequest(0x0, 64, source="dma", tag=1), MemRequest(MIB, 64, source="dma", tag=2)])
    Simulator(top).run(cycles=1000)
    (c1, r1), (c2, r2) = cpu.received
    assert [r1.tag, r2.tag] == [1, 2] and r1.data == b"L" * 64 and r2.data == b"H" * 64
    assert c2 == c1 + 1  # released together, one per edge on the requester's port
    assert node.holding() is None


def test_a_different_source_is_not_held_behind_another():
    top, node, (cpu,), low, high = build()
    cpu.script.extend([MemRequest(0x0, 64, source="a", tag=1), MemRequest(MIB, 64, source="b", tag=2)])
    Simulator(top).run(cycles=1000)
    assert [r.tag for _, r in cpu.received] == [2, 1]


def test_random_traffic_from_many_requesters_keeps_each_ones_order_and_data():
    rng = random.Random(4)
    top, node, cpus, low, high = build(radix=3, mem_latency=(7, 3), queue_depth=2)
    for memory, base in ((low, 0), (high, MIB)):
        memory.backdoor_write(base, bytes(rng.randrange(256) for _ in range(4096)))
    expected = {}
    for cpu in cpus:
        for tag in range(40):
            address = rng.choice((0, MIB)) + 64 * rng.randrange(64)
            cpu.script.append(MemRequest(address, 64, source="dma", tag=tag))
            expected.setdefault(cpu.name, []).append((tag, (low if address < MIB else high).backdoor_read(address, 64)))
    Simulator(top).run(cycles=20_000)
    for cpu in cpus:
        assert [(r.tag, r.data) for _, r in cpu.received] == expected[cpu.name]
    assert node.requests.value == 120 and node.holding() is None


def test_a_request_waiting_for_room_is_routed_once():
    # queue_depth 1 and a memory that answers after 10 cycles: the requests of three
    # requesters wait at the head of their ports for many edges, and each is routed once
    top, node, cpus, low, high = build(radix=3, mem_latency=(10, 2), queue_depth=1)
    routed = []
    route = node.target_of
    node.target_of = lambda i, request: routed.append((i, request.tag)) or route(i, request)
    for cpu in cpus:
        cpu.script.extend(MemRequest(64 * tag, 64, source="dma", tag=tag) for tag in range(4))
    Simulator(top).run(cycles=2000)
    assert sorted(routed) == [(i, tag) for i in range(3) for tag in range(4)]
    assert all([r.tag for _, r in cpu.received] == [0, 1, 2, 3] for cpu in cpus)


def test_forwarded_and_returned_messages_are_those_attrs_evolve_makes():
    request = MemRequest(0x40, 8, is_write=True, data=bytes(8), source="dma", tag=3, created_ps=7)
    assert retagged(request, 9, (1, "dma")) == attrs.evolve(request, tag=9, source=(1, "dma"))
    response = MemResponse(9, data=b"x" * 8, source=(1, "dma"), created_ps=7)
    assert restored(response, 3, "dma") == attrs.evolve(response, tag=3, source="dma")

    @attrs.frozen
    class Marked(MemRequest):
        mark: int = 5

    marked = retagged(Marked(0x40, 8, mark=6), 2, (0, None))
    assert type(marked) is Marked and marked.mark == 6 and (marked.tag, marked.source) == (2, (0, None))


def test_uplink_bytes_and_utilisation_follow_the_link_width():
    top, node, (cpu,), low, high = build(up_width=128)
    cpu.script.extend([MemRequest(MIB + 64 * i, 64, source="dma", tag=i) for i in range(4)]
                      + [MemRequest(MIB, 64, True, bytes(64), source="dma", tag=9)])
    Simulator(top).run(cycles=1000)
    # 5 requests of a control word (8 bytes), one with 64 bytes of data; 4 reads of 64 bytes
    # back and one acknowledgement (a control word)
    assert node.up_bytes_out.value == 5 * 8 + 64 and node.up_bytes_in.value == 4 * 64 + 8
    assert node.up_beats_out.value == 4 * 1 + 5 and node.up_beats_in.value == 4 * 4 + 1
    assert node.up_utilisation_in.value == pytest.approx(100.0 * 17 / node.elapsed_cycles)


def test_functional_access_reaches_both_sides_and_home_is_the_uplinks_memory():
    top, node, _, low, high = build()
    node.backdoor_write(MIB - 8, bytes(range(16)))  # 8 bytes in each memory
    assert low.backdoor_read(MIB - 8, 8) == bytes(range(8)) and high.backdoor_read(MIB, 8) == bytes(range(8, 16))
    assert node.backdoor_read(MIB - 8, 16) == bytes(range(16))
    assert (node.base_address, node.size_bytes) == (MIB, MIB)


def test_home_address_names_an_interleave_block_clipped_to_its_memory():
    top = Component("top")
    node = Node("node", top, outputs=2, address_map=[(0, 4 * MIB, [0, 1])], interleave_bytes=2 * MIB,
                home_address=3 * MIB)
    memory = FixedLatencyMemory("m", top, base_address=2 * MIB, size_bytes=MIB)
    connect(node.out_req[1], memory.req)
    connect(memory.rsp, node.out_rsp[1])
    # the block of 2 MiB from 2 MiB holds a memory of 1 MiB: workloads get that
    assert (node.base_address, node.size_bytes) == (2 * MIB, MIB)


def test_lookahead_bounds_count_each_requesters_own_requests_only():
    top, node, cpus, low, high = build(latency=3, radix=2)
    cpus[0].script.append(MemRequest(MIB, 64, source="dma", tag=1))
    sim = Simulator(top)
    period = node.domain.period_ps
    sim.run(cycles=2)  # sent at edge 0, taken at edge 1: leaves at edge 4
    assert node.earliest_send_ps(node.up_req) == 4 * period
    # its answer: the link up, the memory's least reaction (1 + latency 2), the link back and
    # 3 cycles in the node; the other requester has nothing here, so nothing comes to it
    assert node.earliest_send_ps(node.down_rsp[0]) == (4 + 1 + 3 + 1 + 3) * period
    assert node.earliest_send_ps(node.down_rsp[1]) is None
    assert node.reaction_ps(node.down_req[0], node.up_req) == 3 * period
    # a new request: the node both ways and the quicker target (the uplink's memory)
    assert node.reaction_ps(node.down_req[0], node.down_rsp[0]) == (3 + 1 + 3 + 1 + 3) * period
    sim.run()
    assert cpus[0].received[0][0] == 4 + 1 + 3 + 1 + 3 + 1  # the bound was the truth: one link later
    assert node.reaction_ps(node.down_req[0], node.down_rsp[1]) is None
    assert node.reaction_ps(node.up_rsp, node.down_rsp[0]) is None  # counted by the bound
    assert node.reaction_ps(node.up_rsp, node.up_req) is None


def test_an_answer_on_its_way_back_bounds_its_requester_without_asking_the_target():
    top, node, (cpu,), low, high = build(latency=3, mem_latency=(10, 2))
    cpu.script.append(MemRequest(0x40, 64, source="dma", tag=1))
    sim = Simulator(top)
    period = node.domain.period_ps
    back = node.out_rsp[0].channel
    cycles = 1
    while not back.flight:
        cycles += 1
        sim.run(cycles=cycles)
    asked = []
    bound = low.earliest_send_ps
    low.earliest_send_ps = lambda port: asked.append(port) or bound(port)
    # the memory's own sends come a link later at the soonest: the answer on its way is sooner
    expected = max(back.flight[0][0], sim.now) + 3 * period
    assert node.earliest_send_ps(node.down_rsp[0]) == expected
    assert asked == []
    sim.run()
    assert cpu.received[0][0] * period == expected + period  # the bound was the truth: one link later


def test_the_least_reactions_bound_the_reactions_and_are_none_exactly_where_those_always_are():
    # The lookahead prunes by least_reaction_ps (a pair it says None for is never followed),
    # so it must hold for every pair of ports at every time of a random run.
    rng = random.Random(7)
    top, node, cpus, low, high = build(latency=2, radix=3, mem_latency=(5, 2))
    for cpu in cpus:
        for tag in range(20):
            cpu.script.append(MemRequest(rng.choice((0, MIB)) + 64 * rng.randrange(64), 64, source="dma", tag=tag))
    sim = Simulator(top)
    inputs = node.requesters + node.from_targets
    outputs = node.answer_ports + node.target_ports
    least = {(i, o): node.least_reaction_ps(i, o) for i in inputs for o in outputs}
    assert sum(v is not None for v in least.values()) == 3 * 2 + 3  # a request: to each target, to its own answer
    for _ in range(60):
        sim.run(cycles=sim.now // node.domain.period_ps + 1 + rng.randrange(5))
        for (i, o), bound in least.items():
            reaction = node.reaction_ps(i, o)
            assert (reaction is None) == (bound is None) and (bound is None or bound <= reaction)


def test_a_request_crossing_into_a_range_stops_the_run_naming_it():
    top, node, (cpu,), low, high = build()
    cpu.script.append(MemRequest(MIB - 32, 64, source="dma", tag=1))
    with pytest.raises(ModelAssertion, match=r"MemRequest of 64 bytes at 0xf_ffe0 crosses the end of address range "
                                             r"0x0 \.\. 0x10_0000 -> terminal 0"):
        Simulator(top).run(cycles=100)


def test_a_refused_request_stops_the_run_at_the_edge_it_arrives_even_behind_a_full_queue():
    # A tick looks at a requester's new head at the edge it arrives, whether or not any
    # target has room: the run stops then, not once the uplink's queue has drained.
    top = Component("top")
    node = Node("node", top, peers=1, queue_depth=1)  # no ranges: all up, and a peer's request refused
    cpu, peer = ScriptedRequester("cpu", top), ScriptedRequester("peer", top)
    connect(cpu.req, node.down_req[0])
    connect(node.down_rsp[0], cpu.rsp)
    late = connect(peer.req, node.peer_req[0], latency=20)
    connect(node.peer_rsp[0], peer.rsp)
    memory = FixedLatencyMemory("m", top, base_address=MIB, size_bytes=MIB)
    connect(node.up_req, memory.req, width_bits=8)  # a read holds it for 8 cycles: the queue stays full
    connect(memory.rsp, node.up_rsp)
    cpu.script.extend(MemRequest(MIB + 64 * tag, 64, source="dma", tag=tag) for tag in range(8))
    peer.script.append(MemRequest(MIB, 64, source="dma", tag=1))
    sim = Simulator(top)
    with pytest.raises(ModelAssertion, match="arrived on peer_req\\[0\\], but no range of this node holds it"):
        sim.run(cycles=1000)
    (arrival, _), = late.flight
    assert sim.now == arrival and len(node.to_send[node.up]) == node.queue_depth


def test_a_request_from_a_peer_outside_the_subtree_is_refused():
    top = Component("top")
    node = Node("node", top, peers=1, outputs=1, address_map=[(0, MIB, 0)])
    cpu = ScriptedRequester("cpu", top)
    connect(cpu.req, node.peer_req[0])
    connect(node.peer_rsp[0], cpu.rsp)
    memory = FixedLatencyMemory("m", top, base_address=0, size_bytes=MIB)
    connect(node.out_req[0], memory.req)
    connect(memory.rsp, node.out_rsp[0])
    cpu.script.append(MemRequest(2 * MIB, 64, source="dma", tag=1))
    with pytest.raises(ModelAssertion, match=r"a MemRequest for 0x20_0000 arrived on .*peer_req\[0\], but no range "
                                             r"of this node holds it"):
        Simulator(top).run(cycles=100)
