"""MemoryTreeNode's bounds for computing ahead. ``earliest_take_ps``: when a node can next
take a requester's head request (its credit then returns to the requester, so a compiled
cluster blocked on the link computes ahead to there: ``OutPort.unblocks_from_ps``).
``answer_bound_for`` (and ``earliest_send_ps`` on an answer port, built on it): when a node
can next answer one source of a requester, no sooner than the answer to that source's oldest
request, asked of the targets up the tree by its forwarded source. ``take_ps``/``send_ps``: a
node's take of the k-th message on a requester's link, and its queue's m-th send (the credits a
node blocked on its uplink waits for follow the takes above it). No bound may be later than
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


def _deep_tree(rng: random.Random, top: Component, leaves: int, interleaved: bool) -> tuple[list, list]:
    """Random nodes over ``leaves`` requester slots, one to three levels deep (random radix,
    queue depth, latency and links), the root reaching one memory through its uplink or two
    through an address map (two ranges, or blocks interleaved over both), so a requester's
    messages may go to different targets. Returns the (node, index) slots in leaf order
    and the memories."""
    def node(name: str, radix: int, **params) -> MemoryTreeNode:
        return MemoryTreeNode(name, top, radix=radix, queue_depth=rng.choice([1, 2, 4]),
                              latency_cycles=rng.choice([0, 1, 2]), **params)

    def memory(name: str):
        if interleaved:
            part = InterleavedMemory(name, top, standard="HBM2E", channels=rng.choice([2, 4]), base_address=0,
                                     interleave_bytes=256, pending_pieces=rng.choice([1, 2, 8]),
                                     read_queue=rng.choice([2, 8]), write_queue=rng.choice([2, 8]))
            return part, part.resp
        part = FixedLatencyMemory(name, top, base_address=0, size_bytes=MIB, latency_cycles=rng.randint(1, 20),
                                  bytes_per_cycle=rng.choice([8, 32]))
        return part, part.rsp

    mapped = rng.random() < 0.5
    if mapped:
        block = rng.choice([None, 256, 4096])
        entries = [(0, MIB, [0, 1])] if block else [(0, MIB // 2, 0), (MIB // 2, MIB, 1)]
        root = node("root", rng.randint(1, 3), outputs=2, address_map=entries, interleave_bytes=block or 4096)
        memories = []
        for t in range(2):
            part, rsp = memory(f"memory{t}")
            _link(rng, root.out_req[t], part.req)
            _link(rng, rsp, root.out_rsp[t])
            memories.append(part)
    else:
        root = node("root", rng.randint(1, 3))
        part, rsp = memory("memory")
        _link(rng, root.up_req, part.req)
        _link(rng, rsp, root.up_rsp)
        memories = [part]
    slots = [(root, i) for i in range(root.radix)]
    while len(slots) < leaves:  # grow: a random slot becomes a node with 2-3 requesters
        k = rng.randrange(len(slots))
        parent, i = slots.pop(k)
        child = node(f"n{len(slots)}_{k}", rng.randint(2, 3))
        _link(rng, child.up_req, parent.down_req[i])
        _link(rng, parent.down_rsp[i], child.up_rsp)
        slots[k:k] = [(child, j) for j in range(child.radix)]
    return slots, memories


class Asking(Component):
    """Calls ``ask`` at each of its edges (in shuffled tick order: before or after the nodes'
    own ticks at that edge, as a compiled cluster asks)."""

    def setup(self) -> None:
        self.ask = lambda: None

    def tick(self) -> None:
        self.ask()


def hold_takes_and_sends_to_their_bounds(sim: Simulator, nodes: list, cpus: list, seed, cycles: int,
                                         asking: Asking | None = None) -> tuple:
    """Run ``sim`` edge by edge, asking every node's ``take_ps(i, k)`` and ``send_ps(t, m)``
    for every k and m up to a few beyond what is queued (after each edge, or at each tick of
    ``asking``), and hold each bound to the take (send) with that number. Returns (bounds
    checked, of them exact, bounds two edges or more ahead, take bounds of a later message
    eight edges or more ahead)."""
    counts = dict(checked=0, tight=0, ahead=0, far=0)
    takes, sends = [], []  # (node, requester index, channel), (node, target index, channel)
    for node in nodes:
        takes += [(node, i, port.channel) for i, port in enumerate(node.requesters) if port.connected]
        sends += [(node, t, port.channel) for t, port in enumerate(node.target_ports) if port.connected]
    kept: dict = {}  # ("take" or "send", channel, number of the event) -> the latest bound asked

    def ask() -> None:
        now = sim.now
        for node, i, channel in takes:
            sender = channel.src_owner
            queued = len(sender.to_send[sender._target_index[channel.src]]) if sender in nodes else 0
            for k in range(1, len(channel.flight) + queued + 3):
                bound = node.take_ps(i, k)
                key = ("take", channel, channel.received + k)
                kept[key] = max(kept.get(key, bound), bound)
                counts["ahead"] += bound >= now + 2 * node.period
                counts["far"] += k > 1 and bound >= now + 8 * node.period
        for node, t, channel in sends:
            for m in range(1, len(node.to_send[t]) + 4):
                bound = node.send_ps(t, m)
                key = ("send", channel, channel.sent + m)
                kept[key] = max(kept.get(key, bound), bound)

    def held(bound, at: int, channel) -> None:
        if bound is not None:
            assert bound <= at, (seed, channel.name, bound, at)
            counts["checked"] += 1
            counts["tight"] += bound == at

    if asking is not None:
        asking.ask = ask
    seen = {channel: (channel.received, channel.sent) for _, _, channel in takes + sends}
    for cycle in range(1, cycles):
        sim.run(cycles=cycle)
        for node, _, channel in takes:
            if channel.received != seen[channel][0]:
                assert channel.received == seen[channel][0] + 1  # (one take per edge)
                held(kept.pop(("take", channel, channel.received), None), channel.taken_at, channel)
        for node, _, channel in sends:
            if channel.sent != seen[channel][1]:
                assert channel.sent == seen[channel][1] + 1  # (one send per edge)
                held(kept.pop(("send", channel, channel.sent), None), sim.now, channel)
        seen = {channel: (channel.received, channel.sent) for _, _, channel in takes + sends}
        if asking is None:
            ask()
        if all(not cpu.script for cpu in cpus) and not any(n.outstanding for n in nodes) \
                and not any(q for n in nodes for q in n.answers):
            break
    return counts["checked"], counts["tight"], counts["ahead"], counts["far"]


@pytest.mark.parametrize("interleaved", [False, True])
def test_no_take_nor_send_comes_before_its_bound_however_far_down_the_link(interleaved):
    # take_ps(i, k): a node's take of the k-th message from now on requester i's link (on
    # the link, or still in the sending node's queue); send_ps(t, m): the m-th send from now
    # of its queue for target t. Asked at every edge for every k and m up to a few beyond
    # what is queued, each bound is held to the take (send) with that number.
    checked = tight = ahead = far = 0
    for seed in range(10):
        rng = random.Random(7000 + seed + 100 * interleaved)
        top = Component("top")
        slots, memories = _deep_tree(rng, top, rng.randint(3, 9), interleaved)
        cpus = scripted_requesters(rng, top, slots, write_share=0.3, sources=None)
        sim = Simulator(top)
        nodes = [part for part in top.walk() if isinstance(part, MemoryTreeNode)]
        counts = hold_takes_and_sends_to_their_bounds(sim, nodes, cpus, seed, 2500)
        checked, tight, ahead, far = (a + b for a, b in zip((checked, tight, ahead, far), counts))
    assert checked > 3000 and tight > 500 and ahead > 50000 and far > 20000, (checked, tight, ahead, far)


def test_take_bounds_asked_in_the_middle_of_an_edge_are_never_later_than_the_take_in_saturated_trees():
    # Trees whose root grants a request at every edge (a memory serving one small request
    # per cycle) while each child node keeps its link to the root full and its queue for it
    # fed. The bounds are asked in the middle of the edges (the asking part ticks in shuffled
    # order among the nodes, as a compiled cluster asks: after an edge a bound has an edge
    # of slack, the node having ticked), and are the take itself almost always.
    checked = tight = far = 0
    for seed in range(150):
        rng = random.Random(8300 + seed)
        top = Component("top")
        memory = FixedLatencyMemory("memory", top, base_address=0, size_bytes=MIB, latency_cycles=rng.randint(1, 6),
                                    bytes_per_cycle=64)
        depth = rng.choice([1, 2, 4])
        root = MemoryTreeNode("root", top, radix=rng.randint(2, 3), queue_depth=8)
        connect(root.up_req, memory.req, latency=1, capacity=4)
        connect(memory.rsp, root.up_rsp, latency=1, capacity=4)
        cpus = []
        for k in range(root.radix):
            latency = rng.randint(1, 2)
            child = MemoryTreeNode(f"child{k}", top, radix=rng.randint(1, 2), queue_depth=depth,
                                   latency_cycles=rng.choice([0, 1]))
            connect(child.up_req, root.down_req[k], latency=latency, capacity=latency + rng.choice([0, 1, 1, 2]),
                    width_bits=rng.choice([None, 512]))
            connect(root.down_rsp[k], child.up_rsp, latency=1)
            for i in range(child.radix):
                cpu = ScriptedRequester(f"cpu{k}_{i}", top)
                connect(cpu.req, child.down_req[i], latency=1)
                connect(child.down_rsp[i], cpu.rsp, latency=1)
                for n in range(rng.randint(2, 14)):
                    size = rng.choice([8, 64])
                    write = rng.random() < 0.3  # (64 bytes and a control word: two beats of 512 bits)
                    cpu.script.append(MemRequest(size * rng.randrange(MIB // size), size, is_write=write,
                                                 data=bytes(size) if write else None, source="dma", tag=n))
                cpus.append(cpu)
        asking = Asking("asking", top)
        sim = Simulator(top, shuffle=True, seed=seed)
        nodes = [part for part in top.walk() if isinstance(part, MemoryTreeNode)]
        counts = hold_takes_and_sends_to_their_bounds(sim, nodes, cpus, seed, 1000, asking)
        checked, tight, far = checked + counts[0], tight + counts[1], far + counts[3]
    assert checked > 15000 and tight > 0.9 * checked and far > 9000, (checked, tight, far)


def _walked_source_bound(node: MemoryTreeNode, i: int, source):
    """``node.answer_bound_for(node.answer_ports[i], source)`` by its definition, node by node
    up the tree and nothing kept: a response queued for ``source``; the answer to its oldest
    request here; its first request on its way; else None."""
    now = node.sim.now
    for ready, response in node.answers[i]:
        if response.source == source:
            return max(now, ready)
    if source in node.sources[i]:
        return _walked_oldest_answer(node, i, source)
    for n, (_, message) in enumerate(node.requesters[i].channel.flight):
        if message.source == source:
            trip = node._least_trip_ps(None)
            return None if trip is None else node.take_ps(i, n + 1) + 2 * node.delay + trip
    return None


def _walked_oldest_answer(node: MemoryTreeNode, i: int, source):
    """The answer to the oldest request of ``source`` from requester ``i`` leaving ``node``, by
    its definition (see :func:`_walked_source_bound`): queued for its target; on its way back;
    else the target's bound on its next answer to the forwarded source, plus the way back."""
    now = node.sim.now
    tag = node.in_order[(i, source)][0]
    t = node.outstanding[tag][3]
    queue = node.to_send[t]
    back = node.from_targets[t].channel
    if queue and queue[0][1].tag <= tag:  # still queued: taken there behind those ahead of it, or the least trip
        ahead = [request.tag for _, request, _ in queue].index(tag)
        target = back.src_owner
        if isinstance(target, MemoryTreeNode):
            forward = node.target_ports[t].channel
            reaction = target.reaction_ps(forward.dst, back.src)
            if reaction is None:
                return None
            take = target.take_ps(target.requesters.index(forward.dst), len(forward.flight) + ahead + 1)
            return take + reaction + (back.delay if back.same_domain else back.tail_delay + 1) + node.delay
        trip = node._least_trip_ps(t)
        return None if trip is None else node.send_ps(t, ahead + 1) + trip + node.delay
    for arrival, message in back.flight:
        if message.tag == tag:
            return max(arrival, now) + node.delay
    target = back.src_owner
    if isinstance(target, MemoryTreeNode):
        sent = _walked_source_bound(target, target.answer_ports.index(back.src), (i, source))
    else:  # (a memory without answers per client may answer at once)
        per_client = getattr(target, "earliest_answer_ps", None)
        sent = now if per_client is None else per_client((i, source))
    transit = back.delay if back.same_domain else back.tail_delay + 1
    return None if sent is None else max(sent, now) + transit + node.delay


def test_answer_bounds_asked_twice_in_an_edge_are_those_walked_afresh_up_the_tree():
    # A node's answer bound asks the nodes above, each keeping its bounds for the rest of the
    # time point while nothing moves (_fresh_bounds). Asked by two parts ticking in shuffled
    # order among the nodes (as compiled clusters ask, before and after nodes took and sent
    # at that edge), every bound, of a source and of a port, is the one its definition gives
    # walked node by node with nothing kept: a bound kept past a take or send that changes it
    # would differ.
    compared = differs_in_edge = 0
    for seed in range(8):
        rng = random.Random(9100 + seed)
        top = Component("top")
        slots, _ = _deep_tree(rng, top, rng.randint(3, 9), interleaved=seed % 2 == 1)
        cpus = scripted_requesters(rng, top, slots, write_share=0.3, sources=["dma", "core"])
        askers = [Asking(f"asking{k}", top) for k in range(2)]
        sim = Simulator(top, shuffle=True, seed=seed)
        nodes = [part for part in top.walk() if isinstance(part, MemoryTreeNode)]
        first: dict = {}  # (port, source) -> the bound asked first at this edge

        def ask(asked: dict) -> None:
            nonlocal compared, differs_in_edge
            for node in rng.sample(nodes, len(nodes)):
                for i, port in enumerate(node.answer_ports):
                    if not port.connected:
                        continue
                    for source in list(node.sources[i]):
                        bound = node.answer_bound_for(port, source)
                        assert bound == _walked_source_bound(node, i, source), (seed, port.path, source, sim.now)
                        compared += 1
                        earlier = asked.get((port, source), bound)
                        differs_in_edge += earlier != bound
                        asked[port, source] = bound
                    whole = node.earliest_send_ps(port)
                    walked = [_walked_source_bound(node, i, source) for source in node.sources[i]]
                    if node.answers[i]:
                        assert whole == max(sim.now, node.answers[i][0][0])
                    elif walked and None not in walked and not node.requesters[i].channel.flight:
                        assert whole == min(walked), (seed, port.path, sim.now)

        askers[0].ask = lambda: (first.clear(), ask(first))
        askers[1].ask = lambda: ask(dict(first))
        for cycle in range(1, 1500):
            sim.run(cycles=cycle)
            if all(not cpu.script for cpu in cpus) and not any(n.outstanding for n in nodes) \
                    and not any(q for n in nodes for q in n.answers):
                break
    assert compared > 200_000 and differs_in_edge > 30_000, (compared, differs_in_edge)
