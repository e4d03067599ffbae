"""When a MemoryTreeNode ticks: after an edge that moved something it looks at the next; after
one that moved nothing it sleeps until a message arrives, a credit returns to a port it was
refused on, or a queued message may go (its ready time, or its link's free time: a message
whose link is busy is not offered, so credits returning meanwhile wake nothing); a node whose
requesters all send up lets their arrivals not wake it while the uplink's queue is full.
Checked on a narrow uplink edge by edge, and by random traffic through random trees (and
through a root routing by address to two memories) against nodes that never sleep: every
message moves at the same edge."""

import random

import pytest

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.messages import MemRequest
from archmodel.models.network import MemoryTreeNode

from .test_memory_traffic import ScriptedRequester
from .test_memory_tree_bounds import _link, _take_checked_memory, scripted_requesters, tree

MIB = 1 << 20


def counted_ticks(node: MemoryTreeNode, sim: Simulator) -> list:
    """Have ``node`` log (cycle, whether it moved a message) at each of its ticks."""
    ticks = []
    tick = node.tick

    def counted():
        before = sim.transfers
        tick()
        ticks.append((node.cycle, sim.transfers != before))

    node.tick = counted  # type: ignore[method-assign]
    return ticks


@pytest.mark.parametrize("queue_depth", [1, 2])
def test_nodes_on_narrow_uplinks_tick_only_at_edges_that_move_and_the_edge_after(queue_depth):
    # Two nodes of four requesters each below a root; their uplinks carry 32 bits a cycle, so
    # each 64-byte write holds one for 17 cycles, while the credits of the writes before come
    # back (the root takes from the two in turn, into a queue of one) and requests keep
    # arriving. Neither wakes a node: each ticks where a message moves and at the edge after
    # (the first edge aside).
    top = Component("top")
    root = MemoryTreeNode("root", top, radix=2, queue_depth=1)
    memory = FixedLatencyMemory("m", top, base_address=0, size_bytes=MIB, latency_cycles=5)
    connect(root.up_req, memory.req)
    connect(memory.rsp, root.up_rsp)
    nodes, cpus = [], []
    for k in range(2):
        node = MemoryTreeNode(f"node{k}", top, radix=4, queue_depth=queue_depth)
        connect(node.up_req, root.down_req[k], width_bits=32)
        connect(root.down_rsp[k], node.up_rsp)
        for i in range(4):
            cpu = ScriptedRequester(f"cpu{k}{i}", top)
            connect(cpu.req, node.down_req[i])
            connect(node.down_rsp[i], cpu.rsp)
            cpu.script.extend(MemRequest(64 * (32 * k + 8 * i + n), 64, is_write=True, data=bytes(64), source="dma",
                                         tag=n) for n in range(6))
            cpus.append(cpu)
        nodes.append(node)
    sim = Simulator(top)
    ticks = [counted_ticks(node, sim) for node in nodes]
    sim.run()
    assert all(len(cpu.received) == 6 for cpu in cpus)
    for logged in ticks:
        moved = {cycle for cycle, moving in logged if moving}
        idle = [cycle for cycle, moving in logged if not moving and cycle - 1 not in moved and cycle > 0]
        assert not idle, idle


def _run_to_end(top, cpus, seed: int, monkeypatch, until_ps: int | None) -> tuple:
    """Run ``top`` to the end, or with nodes that never sleep to ``until_ps``, every requester
    having sent its script and had every answer: the time it ended, what each requester sent
    and received when, and every statistic."""
    with monkeypatch.context() as patch:
        if until_ps is not None:
            patch.setattr(MemoryTreeNode, "sleep", lambda node: None)
        sim = Simulator(top, seed=seed)
        sim.run(until_ps=until_ps)
    assert all(not cpu.script for cpu in cpus) and all(len(cpu.received) == len(cpu.sent) for cpu in cpus)
    return sim.now, [(cpu.sent, cpu.received) for cpu in cpus], [(s.path, s.summary()) for s in sim.all_stats()]


def _run(seed: int, interleaved: bool, monkeypatch, until_ps: int | None = None) -> tuple:
    """Random traffic through a random tree to the end, or with nodes that never sleep to
    ``until_ps``: the time it ended, and what every requester sent and received when, and
    every statistic."""
    rng = random.Random(seed)
    top = Component("top")
    memory, rsp = _take_checked_memory(rng, top, interleaved)
    slots = tree(rng, top, rng.randint(2, 6), memory.req, rsp)
    cpus = scripted_requesters(rng, top, slots, write_share=0.4, sources=rng.choice([None, ["a", "b"]]))
    return _run_to_end(top, cpus, seed, monkeypatch, until_ps)


@pytest.mark.parametrize("interleaved", [False, True])
def test_sleeping_nodes_move_every_message_at_the_edge_of_nodes_ticking_at_every_edge(interleaved, monkeypatch):
    for seed in range(12):
        end, moved, stats = _run(seed, interleaved, monkeypatch)
        assert _run(seed, interleaved, monkeypatch, until_ps=end) == (end, moved, stats), seed


def _run_mapped(seed: int, monkeypatch, until_ps: int | None = None) -> tuple:
    """As :func:`_run`, through a root that routes by address to two memories (it sends
    nothing up, so it grants its requesters whatever its other queue holds), below it
    random lower nodes or requesters directly."""
    rng = random.Random(seed)
    top = Component("top")
    root = MemoryTreeNode("root", top, radix=rng.randint(2, 4), outputs=2, queue_depth=rng.choice([1, 2, 4]),
                          latency_cycles=rng.choice([0, 1, 2]),
                          address_map=[(0, MIB, [0, 1])] if rng.random() < 0.5 else
                          [(0, MIB // 2, 0), (MIB // 2, MIB, 1)], interleave_bytes=256)
    for k in range(2):
        memory = FixedLatencyMemory(f"memory{k}", top, base_address=0, size_bytes=MIB,
                                    latency_cycles=rng.randint(1, 20), bytes_per_cycle=rng.choice([8, 32]))
        _link(rng, root.out_req[k], memory.req)
        _link(rng, memory.rsp, root.out_rsp[k])
    slots = []
    for i in range(root.radix):
        if rng.random() < 0.5:
            slots.append((root, i))
            continue
        node = MemoryTreeNode(f"l1_{i}", top, radix=rng.randint(1, 3), queue_depth=rng.choice([1, 2, 4]),
                              latency_cycles=rng.choice([0, 1, 2]))
        _link(rng, node.up_req, root.down_req[i])
        _link(rng, root.down_rsp[i], node.up_rsp)
        slots += [(node, j) for j in range(node.radix)]
    cpus = scripted_requesters(rng, top, slots, write_share=0.4, sources=rng.choice([None, ["a", "b"]]))
    return _run_to_end(top, cpus, seed, monkeypatch, until_ps)


def test_sleeping_nodes_routing_by_address_move_every_message_at_the_edge_of_nodes_ticking_at_every_edge(monkeypatch):
    for seed in range(16):
        end, moved, stats = _run_mapped(seed, monkeypatch)
        assert _run_mapped(seed, monkeypatch, until_ps=end) == (end, moved, stats), seed
