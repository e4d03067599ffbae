"""When a MemoryTreeNode ticks: it sleeps as soon as the next edge can move nothing the kernel
would not wake it for (a message arriving, a credit returning, a blocked link freeing), waking
itself for a queue's ready time or a link freed by its own send, so that every message moves
at the edge it would if every node ticked at every edge. Checked exactly on one read, and by
random traffic through random trees against nodes that never sleep."""

import random

import pytest

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.messages import MemRequest
from archmodel.models.network import MemoryTreeNode
from archmodel.trace import VcdTracer

from .test_memory_traffic import ScriptedRequester
from .test_memory_tree_bounds import _take_checked_memory, scripted_requesters, tree

MIB = 1 << 20


def one_read(latency_cycles: int = 1):
    """A requester -> a node -> a FixedLatencyMemory (10 cycles), one 64-byte read; the
    node's ticks are counted."""
    top = Component("top")
    node = MemoryTreeNode("node", top, radix=1, latency_cycles=latency_cycles)
    cpu = ScriptedRequester("cpu", top)
    memory = FixedLatencyMemory("memory", top, base_address=0, size_bytes=MIB, latency_cycles=10)
    connect(cpu.req, node.down_req[0])
    connect(node.down_rsp[0], cpu.rsp)
    connect(node.up_req, memory.req)
    connect(memory.rsp, node.up_rsp)
    cpu.script.append(MemRequest(0x40, 64, source="dma", tag=1))
    ticks = []
    tick = node.tick
    node.tick = lambda: (ticks.append(node.cycle), tick())  # type: ignore[method-assign]
    return top, cpu, ticks


@pytest.mark.parametrize("latency_cycles", [1, 3])
def test_a_lone_read_ticks_the_node_only_at_the_edges_it_moves_it(latency_cycles):
    top, cpu, ticks = one_read(latency_cycles)
    Simulator(top).run(cycles=100)
    (sent, _), (received, _) = cpu.sent[0], cpu.received[0]
    # every part ticks at the first edge; the read is taken at the edge it arrives and sent
    # latency_cycles later, its response taken at the edge it arrives and answered
    # latency_cycles later: no edge in between, none after
    assert ticks == [0, sent + 1, sent + 1 + latency_cycles, received - 1 - latency_cycles, received - 1]


def test_a_traced_node_ticks_on_after_a_move_so_its_waveform_keeps_each_edges_offers(tmp_path):
    top, cpu, ticks = one_read()
    sim = Simulator(top)
    with VcdTracer(tmp_path / "one_read.vcd", gtkw=False) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=100)
    sent, received = cpu.sent[0][0], cpu.received[0][0]
    assert ticks == [0, sent + 1, sent + 2, sent + 3, received - 2, received - 1, received]


def _run(seed: int, interleaved: bool, monkeypatch, until_ps: int | None = None) -> tuple:
    """Random traffic through a random tree to the end, or with nodes that never sleep to
    ``until_ps``: the time it ended, and what every requester sent and received when, and
    every statistic."""
    rng = random.Random(seed)
    top = Component("top")
    memory, rsp = _take_checked_memory(rng, top, interleaved)
    slots = tree(rng, top, rng.randint(2, 6), memory.req, rsp)
    cpus = scripted_requesters(rng, top, slots, write_share=0.4, sources=rng.choice([None, ["a", "b"]]))
    with monkeypatch.context() as patch:
        if until_ps is not None:
            patch.setattr(MemoryTreeNode, "sleep", lambda node: None)
        sim = Simulator(top, seed=seed)
        sim.run(until_ps=until_ps)
    assert all(not cpu.script for cpu in cpus) and all(len(cpu.received) == len(cpu.sent) for cpu in cpus)
    return sim.now, [(cpu.sent, cpu.received) for cpu in cpus], [(s.path, s.summary()) for s in sim.all_stats()]


@pytest.mark.parametrize("interleaved", [False, True])
def test_sleeping_nodes_move_every_message_at_the_edge_of_nodes_ticking_at_every_edge(interleaved, monkeypatch):
    for seed in range(10):
        end, moved, stats = _run(seed, interleaved, monkeypatch)
        assert _run(seed, interleaved, monkeypatch, until_ps=end) == (end, moved, stats), seed
