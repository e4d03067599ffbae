"""Routing on a dragonfly (Kim, Dally, Scott, Abts, ISCA 2008): ``dragonfly_min``, ``valiant``
and ``ugal``, on the :class:`~.routing.Routing` protocol. VC class = global hops taken, so
minimal routing needs 2 VC classes and Valiant/UGAL 3 (see :mod:`.routing` for the others)."""

from __future__ import annotations

from archmodel.kernel import ArchError

from .routing import PortMap, Routing, vc_class_range


class DragonflyMinimal(Routing):
    """Minimal dragonfly routing: local hop to the router of the group holding the global
    link to the destination group, the global hop, a local hop to the destination router.
    VC class = global hops taken so far."""

    name = "dragonfly_min"
    classes = 2

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        graph = ports.graph
        if graph.graph.get("kind") != "dragonfly":
            raise ArchError(f"routing '{self.name}' needs a dragonfly topology")
        self.group = [graph.nodes[r]["group"] for r in ports.routers]
        self.groups = graph.graph["groups"]
        self.gateway = {}  # (group, other group) -> (router in group, router in other group)
        for u, v, data in graph.edges(data=True):
            if data.get("kind") == "global":
                self.gateway[(self.group[u], self.group[v])] = (u, v)
                self.gateway[(self.group[v], self.group[u])] = (v, u)
        self.class_ranges = [vc_class_range(c, self.classes, vcs) for c in range(self.classes)]

    def toward_group(self, r: int, group: int) -> int:
        """The next router from r towards any router of ``group`` (r is not in it)."""
        gate, _ = self.gateway[(self.group[r], group)]
        return gate if gate != r else self.gateway[(self.group[r], group)][1]

    def min_next(self, r: int, dest_router: int) -> int:
        if self.group[r] == self.group[dest_router]:
            return dest_router
        return self.toward_group(r, self.group[dest_router])

    def min_hops(self, r: int, dest_router: int) -> int:
        hops = 0
        while r != dest_router:
            r = self.min_next(r, dest_router)
            hops += 1
        return hops

    def _groups(self, r: int, packet) -> tuple[int, int]:
        """(global hops taken before reaching r, the group the packet heads for)."""
        here = self.group[r]
        source = self.group[self.terminal_router[packet.source]]
        dest = self.group[self.terminal_router[packet.dest]]
        via = packet.intermediate if packet.intermediate is not None and packet.intermediate >= 0 else -1
        if here == source:
            return 0, via if via >= 0 else dest
        if here == via:
            return 1, dest
        return (2 if via >= 0 else 1), dest

    def decide(self, router, r: int, packet) -> None:
        """Set the packet's intermediate group at its source router (minimal: -1)."""
        packet.intermediate = -1

    def for_router(self, router):
        r = router.node
        ports = self.ports
        ranges = self.class_ranges
        local = [((self.terminal_port[t], 0, self.vcs),) for t in range(ports.terminals)]
        group = self.group

        def route(in_port, in_vc, packet):
            dest = self.terminal_router[packet.dest]
            if dest == r:
                return local[packet.dest]
            if packet.intermediate is None:
                self.decide(router, r, packet)
            taken, target = self._groups(r, packet)
            nxt = dest if target == group[r] else self.toward_group(r, target)
            if group[nxt] != group[r]:
                taken += 1
            return ((ports.port_to[r][nxt],) + ranges[taken],)
        return route


class Valiant(DragonflyMinimal):
    """Valiant routing on a dragonfly: minimal to a random intermediate group (chosen by the
    source router, uniformly among the groups other than source and destination), then
    minimal to the destination. Three VC classes."""

    name = "valiant"
    classes = 3

    def random_group(self, router, r: int, packet) -> int:
        src_group = self.group[r]
        dst_group = self.group[self.terminal_router[packet.dest]]
        if src_group == dst_group or self.groups < 3:
            return -1
        pick = router.route_random(self.groups - 2)
        for skip in sorted((src_group, dst_group)):
            if pick >= skip:
                pick += 1
        return pick

    def decide(self, router, r: int, packet) -> None:
        packet.intermediate = self.random_group(router, r, packet)


class Ugal(Valiant):
    """UGAL-L on a dragonfly (Singh 2005; Kim et al. 2008): the source router compares the
    minimal route with one Valiant route and takes the smaller of queue length x hops, where
    the queue length is the flits buffered downstream of the output port (credits in use)."""

    name = "ugal"

    def decide(self, router, r: int, packet) -> None:
        via = self.random_group(router, r, packet)
        packet.intermediate = -1
        if via < 0:
            return
        dest = self.terminal_router[packet.dest]
        min_next = self.min_next(r, dest)
        val_next = self.toward_group(r, via)
        min_hops = self.min_hops(r, dest)
        entry = self.gateway[(via, self.group[r])][0]
        val_hops = self.min_hops(r, entry) + self.min_hops(entry, dest)
        port_to = self.ports.port_to[r]
        if router.output_load(port_to[val_next]) * val_hops < router.output_load(port_to[min_next]) * min_hops:
            packet.intermediate = via
