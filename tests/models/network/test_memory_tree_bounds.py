"""MemoryTreeNode's bounds for computing ahead. ``earliest_take_ps``: when a node can next
take a requester's head request (its credit then returns to the requester, so a compiled
cluster blocked on the link computes ahead to there: ``OutPort.unblocks_from_ps``).
``answer_bound_for`` (and ``earliest_send_ps`` on an answer port, built on it): when a node
can next answer one source of a requester, no sooner than the answer to that source's oldest
request, asked of the targets up the tree by its forwarded source. No bound may be later than
the event: checked at every edge of random traffic through random trees, and by compiled Snitch
clusters held to the Python model on small trees with contention (a bound too late wakes a
cluster inside a batch, or ends the run in another cycle or state)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster, assemble
from archmodel.models.memory import DramController, InterleavedMemory
from archmodel.models.messages import MemRequest
from archmodel.models.network import MemoryTreeNode

from ..compute.test_compiled_cluster import _comparable
from ..compute.test_compiled_cluster_memory import EXT_BASE, core_program, dma_program, ends_alike, how_it_ended
from ..compute.test_compiled_kernels import snapshot, use_engine
from .test_memory_traffic import ScriptedRequester

MIB = 1 << 20
EXT_BYTES = 0x2_0000  # what the clusters' programs touch from EXT_BASE


def _link(rng: random.Random, src, dst) -> None:
    latency = rng.randint(1, 3)
    connect(src, dst, latency=latency, capacity=rng.randint(1, latency + 2), width_bits=rng.choice([None, 64, 512]))


def tree(rng: random.Random, top: Component, leaves: int, memory_req, memory_rsp) -> list:
    """Random nodes over ``leaves`` requester slots (one or two levels, random radix, queue
    depth, latency and links), the root's uplink to the memory; returns the (node, index)
    slots in leaf order."""
    params = dict(queue_depth=rng.choice([1, 2, 4]), latency_cycles=rng.choice([0, 1, 2]))
    if leaves <= 2 or rng.random() < 0.4:
        root = MemoryTreeNode("root", top, radix=leaves, **params)
        slots = [(root, i) for i in range(leaves)]
    else:
        lower = [leaves // 2, leaves - leaves // 2]
        root = MemoryTreeNode("root", top, radix=2, **params)
        slots = []
        for k, radix in enumerate(lower):
            node = MemoryTreeNode(f"l1_{k}", top, radix=radix, queue_depth=rng.choice([1, 2, 4]),
                                  latency_cycles=rng.choice([0, 1, 2]))
            _link(rng, node.up_req, root.down_req[k])
            _link(rng, root.down_rsp[k], node.up_rsp)
            slots += [(node, i) for i in range(radix)]
    _link(rng, root.up_req, memory_req)
    _link(rng, memory_rsp, root.up_rsp)
    return slots


def scripted_requesters(rng: random.Random, top, slots, write_share: float, sources) -> list:
    """A requester on each of ``slots`` (node, port index) with 5-30 random reads and writes
    (``write_share`` of them writes), each from one of ``sources`` (None: all "dma")."""
    cpus = []
    for k, (node, i) in enumerate(slots):
        cpu = ScriptedRequester(f"cpu{k}", top)
        _link(rng, cpu.req, node.down_req[i])
        _link(rng, node.down_rsp[i], cpu.rsp)
        for n in range(rng.randint(5, 30)):
            write = rng.random() < write_share
            size = rng.choice([8, 64, 256])
            address = size * rng.randrange(MIB // size)
            source = "dma" if sources is None else rng.choice(sources)
            cpu.script.append(MemRequest(address, size, is_write=write, data=bytes(size) if write else None,
                                         source=source, tag=n))
        cpus.append(cpu)
    return cpus


def _take_checked_memory(rng: random.Random, top: Component, interleaved: bool):
    """The memory at the top of a tree whose take bounds are checked: a FixedLatencyMemory, or
    a small interleaved stack with few pending pieces (its intake then waits for its channels'
    links, and their credits for the channels' queues)."""
    if not interleaved:
        memory = FixedLatencyMemory("memory", top, base_address=0, size_bytes=MIB, latency_cycles=rng.randint(1, 20),
                                    bytes_per_cycle=rng.choice([8, 32]))
        return memory, memory.rsp
    memory = InterleavedMemory("memory", top, standard="HBM2E", channels=rng.choice([2, 4]), base_address=0,
                               interleave_bytes=rng.choice([64, 256]), pending_pieces=rng.choice([1, 2, 4, 8]),
                               read_queue=rng.choice([2, 8]), write_queue=rng.choice([2, 8]),
                               link_latency_cycles=rng.choice([1, 2]))
    return memory, memory.resp


@pytest.mark.parametrize("interleaved", [False, True])
def test_the_take_bound_is_never_later_than_the_take_in_random_traffic_through_random_trees(interleaved):
    # The nodes' bounds follow the tree up to the memory's own (an interleaved memory's
    # earliest_take_ps on req), checked with them at every edge.
    ahead = 0  # questions whose bound was two edges or more away
    memories_ahead = 0  # of them, the memory's (on req)
    for seed in range(12):
        rng = random.Random(seed + 1000 * interleaved)
        top = Component("top")
        memory, rsp = _take_checked_memory(rng, top, interleaved)
        slots = tree(rng, top, rng.randint(2, 6), memory.req, rsp)
        cpus = scripted_requesters(rng, top, slots, write_share=0.5, sources=None)
        sim = Simulator(top)
        ports = [port for part in top.walk() if isinstance(part, MemoryTreeNode) for port in part.down_req]
        if interleaved:
            ports.append(memory.req)
        bounds: dict = {}  # port -> (its head message, the bound asked with it at the head)
        received: dict = {}  # port -> the messages its receiver had taken at the last look
        checked = tight = 0
        memory_checked = memory_tight = memory_ahead = 0
        for cycle in range(1, 3000):
            sim.run(cycles=cycle)
            for port in ports:
                channel = port.channel
                kept = bounds.get(port)
                taken = channel.received - received.get(port, 0)
                received[port] = channel.received
                if kept is not None and taken:
                    # The head asked about was taken at the receiver's last take if that was
                    # the only one since (the memory's edges fall between the nodes' ones).
                    if taken == 1:
                        assert kept[1] <= channel.taken_at, (seed, port.path, kept[1], channel.taken_at)
                        checked += 1
                        tight += kept[1] == channel.taken_at
                        memory_checked += port is memory.req
                        memory_tight += port is memory.req and kept[1] == channel.taken_at
                    del bounds[port]
                if channel.flight:
                    bound = port.owner.earliest_take_ps(port)
                    period = port.owner.domain.period_ps
                    ahead += bound >= sim.now + 2 * period
                    memory_ahead += port is memory.req and bound >= sim.now + 2 * period
                    if kept is None or kept[0] is not channel.flight[0][1]:
                        kept = (channel.flight[0][1], bound)
                    bounds[port] = (kept[0], max(kept[1], bound))  # (a later question knows more)
            if all(not cpu.script for cpu in cpus) and not any(p.channel.flight for p in ports):
                break
        assert checked > 20 and tight > 0, (seed, checked, tight)
        assert not interleaved or (memory_checked > 20 and memory_tight > 0), (seed, memory_checked, memory_tight)
        memories_ahead += memory_ahead
    assert ahead > 5000, ahead
    assert not interleaved or memories_ahead > 1000, memories_ahead


def test_no_answer_to_a_source_comes_before_its_bound_in_random_traffic_through_random_trees():
    # Asked at every edge for every source with a request in a node, the bound on the node's
    # next answer to it holds until that answer leaves (new requests cannot bring it sooner:
    # a source is answered in request order); the port's bound is no later than any of them.
    ahead = checked = 0
    for seed in range(12):
        rng = random.Random(100 + seed)
        top = Component("top")
        kind = seed % 3
        if kind == 0:
            memory = FixedLatencyMemory("memory", top, base_address=0, size_bytes=MIB,
                                        latency_cycles=rng.randint(1, 20), bytes_per_cycle=rng.choice([8, 32]))
            rsp = memory.rsp
        elif kind == 1:
            memory = DramController("memory", top, standard="HBM2E", base_address=0, read_queue=rng.choice([2, 8]),
                                    write_queue=rng.choice([2, 8]))
            rsp = memory.resp
        else:
            memory = InterleavedMemory("memory", top, standard="HBM2E", channels=2, base_address=0,
                                       pending_pieces=rng.choice([2, 32]))
            rsp = memory.resp
        slots = tree(rng, top, rng.randint(2, 6), memory.req, rsp)
        cpus = scripted_requesters(rng, top, slots, write_share=0.4, sources=["dma", "core"])
        nodes = [part for part in top.walk() if isinstance(part, MemoryTreeNode)]
        ports = [(node, port) for node in nodes for port in node.down_rsp]
        sent = {port: 0 for _, port in ports}
        kept: dict = {}  # (port, source) -> the latest bound asked since its last answer
        sim = Simulator(top)
        for cycle in range(1, 4000):
            sim.run(cycles=cycle)
            for node, port in ports:
                channel = port.channel
                if channel.sent != sent[port]:  # one answer left at this edge: the last in flight
                    sent[port] = channel.sent
                    bound = kept.pop((port, channel.flight[-1][1].source), None)
                    if bound is not None:
                        assert bound <= sim.now, (seed, port.path, bound, sim.now)
                        checked += 1
                i = node.answer_ports.index(port)
                whole = node.earliest_send_ps(port)
                for source in node.sources[i]:
                    bound = node.answer_bound_for(port, source)
                    assert bound is not None and whole is not None and whole <= bound
                    ahead += bound >= sim.now + 2 * node.period
                    kept[(port, source)] = max(kept.get((port, source), bound), bound)
            if sim.stopped or (all(not cpu.script for cpu in cpus) and not any(n.outstanding for n in nodes)
                               and not any(q for n in nodes for q in n.answers)):
                break
    assert checked > 500 and ahead > 5000, (checked, ahead)


def clusters_on_a_tree(seed: int):
    """Two to five one-core Snitch clusters with random DMA programs (transfers in and out,
    1D and 2D, several queued at a time) on a random tree to one memory: a slow
    FixedLatencyMemory, an HBM2E pseudo-channel or a small interleaved stack, with few
    credits and small queues, so the DMA engines wait on their links most of the time."""
    rng = random.Random(seed)
    top = Component("system")
    kind = rng.choice(["fixed", "dram", "interleaved"])
    if kind == "fixed":
        memory = FixedLatencyMemory("memory", top, base_address=EXT_BASE, size_bytes=EXT_BYTES,
                                    latency_cycles=rng.randint(1, 40), bytes_per_cycle=rng.choice([8, 16, 64]))
        rsp = memory.rsp
    elif kind == "dram":
        memory = DramController("memory", top, standard="HBM2E", base_address=EXT_BASE,
                                read_queue=rng.choice([1, 2, 4]), write_queue=rng.choice([2, 4]))
        rsp = memory.resp
    else:
        memory = InterleavedMemory("memory", top, standard="HBM2E", channels=2, interleave_bytes=rng.choice([64, 256]),
                                   base_address=EXT_BASE, pending_pieces=rng.choice([1, 4, 32]))
        rsp = memory.resp
    slots = tree(rng, top, rng.randint(2, 5), memory.req, rsp)
    clusters = []
    for k, (node, i) in enumerate(slots):
        cluster = SnitchCluster(f"cluster{k}", top, cores=1, dma_lanes=rng.randint(1, 8), banks=rng.choice([4, 32]))
        _link(rng, cluster.ext_req, node.down_req[i])
        _link(rng, node.down_rsp[i], cluster.ext_rsp)
        cluster.dma.outstanding = rng.randint(1, 8)
        cluster.dma.burst_bytes = rng.choice([64, 256, 1024])
        cluster.load_programs([assemble(core_program(rng), "core.S"), assemble(dma_program(rng), "dma.S")])
        clusters.append(cluster)
    memory.backdoor_write(EXT_BASE, np.random.default_rng(seed).standard_normal(EXT_BYTES // 8).tobytes())
    finished = []

    def done(part):
        finished.append(part)
        if len(finished) == len(clusters):
            part.sim.stop("done")  # (a DRAM refreshes for ever: the clusters end the run)
    for cluster in clusters:
        cluster.on_finish(done)
    return top, clusters, memory


def run_clusters(seed: int, on: bool) -> dict:
    top, clusters, memory = clusters_on_a_tree(seed)
    sim = Simulator(top, watchdog_cycles=100_000)
    use_engine(top, on)
    end = how_it_ended(sim, sim.run)
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return {"end": end, "clusters": [_comparable(snapshot(c)) for c in clusters], "stats": _comparable(stats),
            "bytes": memory.backdoor_read(EXT_BASE, EXT_BYTES),
            "batches": sum(c.n_compiled_batches for c in clusters)}


@settings(max_examples=25, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_compiled_clusters_blocked_on_a_tree_end_alike_with_the_python_model(seed):
    assert ends_alike(run_clusters, seed, "batches") > 0
