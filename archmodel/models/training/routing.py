"""Routes over the elaborated parts: a pass over the connection graph, after elaboration.

Every :class:`~.forwarding.Forwarder` is a vertex; every channel between two of them an arc
weighted by the time a 1 MiB chunk takes on it (serialisation plus latency), so a route
prefers fast links and few hops. Routes may pass through transit parts (GPUs, NICs) but not
through a host memory. Each part gets, per reachable endpoint, the output port of its first
hop (ties broken by port order, so routes are deterministic).
"""

from __future__ import annotations

import math

import networkx as nx

from .forwarding import Forwarder, Nic
from .gpu import Gpu
from .host import HostMemory

REFERENCE_BITS = 8 * 2**20
LINK_CLASSES = ("inter-node", "intra-node", "host PCIe", "NIC PCIe")


def link_class(channel) -> str | None:
    """The class of link a channel between two training parts is: NIC to NIC
    ``inter-node``, GPU to GPU ``intra-node``, GPU and host memory ``host PCIe``, GPU and NIC
    ``NIC PCIe``; None for anything else."""
    kinds = {type(channel.src_owner), type(channel.dst_owner)}
    if kinds == {Nic}:
        return "inter-node"
    if kinds == {Gpu}:
        return "intra-node"
    if kinds == {Gpu, HostMemory}:
        return "host PCIe"
    if kinds == {Gpu, Nic}:
        return "NIC PCIe"
    return None


def _weight(channel) -> int:
    period = channel.src_owner.domain.period_ps if channel.src_owner.domain else 1000
    beats = math.ceil(REFERENCE_BITS / channel.width_bits) if channel.width_bits else 1
    return (beats + channel.latency) * period


def connection_graph(parts: list) -> nx.DiGraph:
    """The forwarding parts and the channels between them (arc data: ``port`` index at the
    sender, ``weight``)."""
    graph = nx.DiGraph()
    members = set(map(id, parts))
    for part in parts:
        graph.add_node(part)
    for part in parts:
        for index, port in enumerate(part.out):
            channel = port.channel
            if channel is None or id(channel.dst_owner) not in members:
                continue
            dst = channel.dst_owner
            old = graph.get_edge_data(part, dst)
            if old is None or (_weight(channel), index) < (old["weight"], old["port"]):
                graph.add_edge(part, dst, port=index, weight=_weight(channel))
    return graph


def install_routes(parts: list, endpoints: dict) -> dict:
    """Give every part of ``parts`` its endpoint (``endpoints[part]``, None for a pure
    transit) and a routing table toward every endpoint it can reach. Returns, per part, the
    set of endpoints it can reach."""
    for part in parts:
        if not isinstance(part, Forwarder):
            raise TypeError(f"{part!r} does not forward messages")
    graph = connection_graph(parts)
    tables: dict = {part: {} for part in parts}
    for target, address in endpoints.items():
        if address is None:
            continue
        carriers = [p for p in parts if p.transit or p is target]
        reverse = graph.subgraph(carriers).reverse(copy=False)
        distance = nx.single_source_dijkstra_path_length(reverse, target, weight="weight")
        for part in parts:
            if part is target:
                continue
            best = None
            for _, hop, data in graph.out_edges(part, data=True):
                if hop in distance:
                    key = (data["weight"] + distance[hop], data["port"])
                    if best is None or key < best:
                        best = key
            if best is not None:
                tables[part][address] = best[1]
    for part in parts:
        part.install_routes(endpoints.get(part), tables[part])
    return {part: set(tables[part]) | ({endpoints[part]} if endpoints.get(part) is not None else set())
            for part in parts}
