"""Port maps and routing functions over topology graphs.

:class:`PortMap` numbers every router's ports the way the language's ``topology`` statement
does: first its terminals (local ports), then one port per neighbour in increasing neighbour
order. A routing function answers, for a router, an input port, an input VC and a packet, the
set of allowed ``(output port, first VC, end VC)`` choices (BookSim's output set); the router's
VC allocator picks one. Routing is a function of the packet's destination and where it came
from, so computing it one hop upstream (lookahead) or on arrival gives the same answer; the
router's ``routing_delay`` models which.

Routing functions, by name (:func:`.routing_functions.make_routing`):

* ``dor`` dimension order on a mesh (x first), all VCs; on a torus it is minimal and cyclic, so
  it can deadlock (kept as the deliberately unsafe example).
* ``dateline`` dimension order on a torus or ring, minimal direction, two VC classes chosen
  per dimension by whether the packet's way crosses the wrap-around link (Dally and Seitz
  1987), as BookSim's ``dim_order_torus``; injection on any VC. A tie (distance k/2 either
  way) is broken where the reference breaks it, at the router where the packet turns into the
  dimension, by a fair coin: BookSim draws ``RandomInt(1)`` from its global generator; here
  the coin is :func:`tie_coin` of the router's key and the packet's id, a counter-based hash,
  so every engine (components, fast, compiled) draws the same coin for the same packet
  whatever order it routes heads in.
* ``shortest`` every shortest-path next hop (networkx), all VCs; deadlocks on cyclic graphs.
* ``updown`` up*/down* (Autonet, Schroeder et al. 1991): a spanning BFS order; a legal path
  goes up (towards the root) zero or more times, then down; shortest legal paths.
* ``escape`` minimal adaptive on VCs 1.., up*/down* on VC 0 as the escape (Duato 1993).
* ``west_first`` minimal adaptive on a mesh (Glass and Ni 1992): west hops first, then any
  productive direction.
* ``odd_even`` minimal adaptive on a mesh without VCs (Chiu 2000): east-north/east-south turns
  are forbidden in even columns, north-west/south-west turns in odd columns.
* ``dragonfly_min``, ``valiant``, ``ugal`` for a dragonfly (Kim et al. 2008; in
  :mod:`.routing_dragonfly`): minimal local-global-local; Valiant through a random
  intermediate group; UGAL-L choosing between them at the source router by output queue
  length times hop count. VC class = global hops taken, so minimal needs 2 VC classes and
  Valiant/UGAL 3.

The registry of these names is :data:`.routing_functions.ROUTINGS`.
"""

from __future__ import annotations

from collections import deque

import networkx as nx

from archmodel.kernel import ArchError

from .flit import NetPacket


class PortMap:
    """Routers, terminals and port numbering of one topology graph.

    Terminal ids run over routers in node order; ``terminal_router[t]`` and
    ``terminal_port[t]`` say where terminal t attaches. ``neighbour[r][p]`` is the router behind
    port p of router r (``None`` for a local port), ``port_to[r][n]`` the port of r leading to n.
    """

    def __init__(self, graph: nx.Graph, default_latency: int = 1):
        self.graph = graph
        self.routers = sorted(graph.nodes)
        if self.routers != list(range(len(self.routers))):
            raise ArchError("topology nodes must be the integers 0 .. n-1")
        directed = graph.is_directed()
        self.terminal_router: list[int] = []
        self.terminal_port: list[int] = []
        self.local_ports: list[int] = []
        self.neighbour: list[list] = []
        self.port_to: list[dict] = []
        self.in_port_from: list[dict] = []
        for r in self.routers:
            local = graph.nodes[r].get("terminals", 1)
            self.local_ports.append(local)
            for i in range(local):
                self.terminal_router.append(r)
                self.terminal_port.append(i)
            succ = sorted(graph.successors(r) if directed else graph.neighbors(r))
            pred = sorted(graph.predecessors(r) if directed else graph.neighbors(r))
            self.neighbour.append([None] * local + succ)
            self.port_to.append({n: local + i for i, n in enumerate(succ)})
            self.in_port_from.append({n: local + i for i, n in enumerate(pred)})
        self.terminals = len(self.terminal_router)
        self.default_latency = default_latency

    def ports(self, r: int) -> int:
        """Output ports of router r (local plus neighbours)."""
        return len(self.neighbour[r])

    def in_ports(self, r: int) -> int:
        """Input ports of router r."""
        return self.local_ports[r] + len(self.in_port_from[r])

    def latency(self, u: int, v: int) -> int:
        """Link latency from router u to router v in cycles."""
        return self.graph.edges[u, v].get("latency", self.default_latency)

    def edge(self, u: int, v: int) -> dict:
        return self.graph.edges[u, v]


def tie_coin(key: int, packet_id: int) -> int:
    """A fair coin (0 or 1) for packet ``packet_id`` at the router whose routing key is ``key``
    (32 bits, drawn from the router's stream): a counter-based hash, so the coin depends on
    nothing but the two numbers, not on how many coins were drawn before.

    The 32-bit integer hash of T. Mueller (two multiply-xorshift rounds, full avalanche) over
    the key and then each 32-bit half of the id; every intermediate stays below 2**63, so the
    compiled network loop compiles this same function with int64 arithmetic."""
    h = key & 0xFFFFFFFF
    for half in range(2):
        word = (packet_id >> 32) if half == 0 else packet_id
        h ^= word & 0xFFFFFFFF
        h = (((h >> 16) ^ h) * 0x45D9F3B) & 0xFFFFFFFF
        h = (((h >> 16) ^ h) * 0x45D9F3B) & 0xFFFFFFFF
        h = (h >> 16) ^ h
    return h >> 31


def vc_class_range(cls: int, classes: int, vcs: int) -> tuple[int, int]:
    """The VCs ``[first, end)`` of class ``cls`` when ``vcs`` VCs are split into ``classes``."""
    return cls * vcs // classes, (cls + 1) * vcs // classes


class Routing:
    """Base of routing functions. ``classes`` is the number of VC classes needed; the network
    checks ``vcs >= classes``. ``for_router(router)`` returns the router's function
    ``route(in_port, in_vc, packet) -> tuple of (out_port, vc_first, vc_end)``."""

    name = "routing"
    classes = 1
    table_form = False
    """Whether the output set depends on nothing but the router, the input port, the class of
    the input VC (:func:`vc_class_range`), the destination terminal and the router's coin for
    the packet (``route_coin``): then :meth:`table` gives it whole, and an engine may look it
    up instead of calling the route (the compiled network loop does)."""
    reads_input = True
    """Whether the output set depends on the input port or VC at all (when not, :meth:`table`
    routes for one input and shares the answer)."""

    def __init__(self, ports: PortMap, vcs: int):
        if vcs < self.classes:
            raise ArchError(f"routing '{self.name}' needs at least {self.classes} VCs per port, got {vcs}")
        self.ports = ports
        self.vcs = vcs
        self.terminal_router = ports.terminal_router
        self.terminal_port = ports.terminal_port
        self._tables: dict = {}  # router -> its table (the routing does not change)
        self._destinations: dict = {}  # router -> its output sets by destination (_table_routing)

    def injection_vcs(self, packet) -> tuple[int, int]:
        """VCs ``[first, end)`` an interface may use to inject ``packet``."""
        return vc_class_range(0, self.classes, self.vcs)

    def for_router(self, router):
        raise NotImplementedError

    def next_hops(self, r: int, in_port: int, in_vc: int, packet) -> list[tuple[int, int, int]]:
        """The output set at router r (for tests and tools: no router state is consulted)."""
        return list(self.for_router(_Idle(r, self.ports))(in_port, in_vc, packet))

    def table(self, r: int) -> dict:
        """Router r's output sets for a routing with :attr:`table_form`: ``(in port, input VC
        class) -> [(output set at coin 0, output set at coin 1) per destination terminal]``,
        the second None where the route does not toss the coin. Where the routing does not
        read its input (:attr:`reads_input` False) every key holds the same list."""
        if not self.table_form:
            raise ValueError(f"routing '{self.name}' has no table form")
        if r in self._tables:
            return self._tables[r]
        idle = _Idle(r, self.ports, 0)
        heads_route = self.for_router(idle)
        tails_route = None  # the route at coin 1, made once a route tosses
        firsts = [vc_class_range(c, self.classes, self.vcs)[0] for c in range(self.classes)]
        packets = [NetPacket(0, 0, t, 1) for t in range(self.ports.terminals)]
        out: dict = {}
        for in_port in range(self.ports.in_ports(r)):
            for cls, in_vc in enumerate(firsts):
                if not self.reads_input and out:
                    out[in_port, cls] = out[0, 0]
                    continue
                sets = out[in_port, cls] = []
                for packet in packets:
                    idle.tossed = False
                    heads = tuple(heads_route(in_port, in_vc, packet))
                    tails = None
                    if idle.tossed:
                        if tails_route is None:
                            tails_route = self.for_router(_Idle(r, self.ports, 1))
                        tails = tuple(tails_route(in_port, in_vc, packet))
                    sets.append((heads, tails))
        self._tables[r] = out
        return out


class _Idle:
    """A stand-in router with empty queues, for evaluating routing outside a simulation: every
    random draw is 0 and every tie coin ``coin``; ``tossed`` records whether a route asked
    for the coin (so a caller can tell a route that depends on it)."""

    def __init__(self, node: int, ports: PortMap, coin: int = 0):
        self.node = node
        self.coin = coin
        self.tossed = False

    def output_load(self, port: int) -> int:
        return 0

    def route_random(self, n: int) -> int:
        return 0

    def route_coin(self, packet) -> int:
        self.tossed = True
        return self.coin


def _destination_table(routing: Routing, r: int, choose) -> list[tuple]:
    """Router r's output sets indexed by destination terminal: the terminal's own port at its
    router, else every port ``choose(r, dest)`` allows, on all VCs."""
    table = []
    for t in range(routing.ports.terminals):
        dest = routing.terminal_router[t]
        if dest == r:
            table.append(((routing.terminal_port[t], 0, routing.vcs),))
        else:
            table.append(tuple((p, 0, routing.vcs) for p in choose(r, dest)))
    return table


def _table_routing(routing: Routing, router, choose) -> callable:
    """A per-router table indexed by destination terminal (routing independent of the input),
    made once per router node (a routing class passes one ``choose``)."""
    table = routing._destinations.get(router.node)
    if table is None:
        table = routing._destinations[router.node] = _destination_table(routing, router.node, choose)

    def route(in_port, in_vc, packet, table=table):
        return table[packet.dest]
    return route


class DimensionOrder(Routing):
    """Dimension-order routing on a mesh, torus or ring: correct dimension 0 first; in a
    torus the shorter way round (ties go the positive way). All VCs."""

    name = "dor"
    table_form = True
    reads_input = False

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        graph = ports.graph
        if "dims" not in graph.graph:
            raise ArchError(f"routing '{self.name}' needs a mesh, torus or ring (nodes with coordinates)")
        self.dims = graph.graph["dims"]
        self.wraps = graph.graph["kind"] in ("torus", "ring")
        self.coord = [graph.nodes[r]["coord"] for r in ports.routers]
        self.by_coord = {c: r for r, c in enumerate(self.coord)}

    def step(self, r: int, dest: int) -> tuple[int, int]:
        """The next router from r towards dest and the dimension it moves in."""
        here, there = self.coord[r], self.coord[dest]
        for d, (a, b) in enumerate(zip(here, there)):
            if a == b:
                continue
            k = self.dims[d]
            if self.wraps:
                forward = (b - a) % k
                delta = 1 if forward <= k - forward else -1
            else:
                delta = 1 if b > a else -1
            nxt = list(here)
            nxt[d] = (a + delta) % k
            return self.by_coord[tuple(nxt)], d
        raise ValueError("already there")

    def for_router(self, router):
        return _table_routing(self, router, lambda r, dest: (self.ports.port_to[r][self.step(r, dest)[0]],))


class DatelineDimensionOrder(DimensionOrder):
    """Dimension-order routing on a torus or ring with two VC classes, as BookSim 2's
    ``dim_order_torus`` (its non-balanced ``dor_next_torus``; Dally and Towles, ch. 14).

    Turning into a dimension (from injection or another dimension) a packet takes the shorter
    way round, at a tie (distance k/2) either way by the router's coin for the packet
    (``router.route_coin``, :func:`tie_coin`: as BookSim, a fair random choice made once, at
    the turn; the negative way when the coin shows 1), and chooses its
    class for the whole dimension: class 1 (the upper half of the VCs) when the destination's
    coordinate there is below the current one, else class 0. Going the positive way class 1
    holds exactly the packets that will cross the dateline (the link k-1 -> 0); going the
    negative way the crossers get class 0 (BookSim's labelling). Either way crossers and the
    rest of a ring are apart, and with minimal routing neither class closes a cycle. Through
    the dimension the packet keeps class and direction. Injection and ejection use every VC.
    """

    name = "dateline"
    classes = 2
    reads_input = True  # the class it keeps through a dimension is its input VC's

    def injection_vcs(self, packet) -> tuple[int, int]:
        """Every VC: the class is chosen at the first router, not by the interface."""
        return 0, self.vcs

    def for_router(self, router):
        r = router.node
        ports = self.ports
        here = self.coord[r]
        classes = (vc_class_range(0, 2, self.vcs), vc_class_range(1, 2, self.vcs))
        split = classes[1][0]
        # dimension of each input port's link (None for local ports)
        in_dim = {}
        for n, p in ports.in_port_from[r].items():
            in_dim[p] = next(d for d, (a, b) in enumerate(zip(here, self.coord[n])) if a != b)
        table = []
        for t in range(ports.terminals):
            dest = self.terminal_router[t]
            if dest == r:
                table.append(None)
                continue
            nxt, d = self.step(r, dest)
            k = self.dims[d]
            a, b = here[d], self.coord[dest][d]
            cls = 1 if b < a else 0
            tie = None
            if (b - a) % k * 2 == k:
                # the other way round is as short: a tie to break at the turn
                other = list(here)
                other[d] = (a - 1) % k
                other_port = ports.port_to[r][self.by_coord[tuple(other)]]
                if other_port != ports.port_to[r][nxt]:
                    tie = ((other_port,) + classes[cls],)
            port = ports.port_to[r][nxt]
            table.append((d, ((port,) + classes[0],), ((port,) + classes[1],), ((port,) + classes[cls],), tie))
        local = [((self.terminal_port[t], 0, self.vcs),) for t in range(ports.terminals)]

        def route(in_port, in_vc, packet):
            entry = table[packet.dest]
            if entry is None:
                return local[packet.dest]
            d, class0, class1, turn, tie = entry
            if in_dim.get(in_port) == d:
                # on through the dimension: same class (the direction is the shorter one now)
                return class1 if in_vc >= split else class0
            if tie is not None and router.route_coin(packet):
                return tie
            return turn
        return route


class ShortestPath(Routing):
    """Every next hop on a shortest path (networkx), all VCs: minimal, adaptive among equal
    choices, and deadlock-prone on graphs with cycles."""

    name = "shortest"

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        self.distance = dict(nx.all_pairs_shortest_path_length(ports.graph))

    def choices(self, r: int, dest: int) -> list[int]:
        dist = self.distance
        return [self.ports.port_to[r][n] for n in self.ports.neighbour[r]
                if n is not None and dist[n][dest] == dist[r][dest] - 1]

    def for_router(self, router):
        return _table_routing(self, router, self.choices)


def updown_rank(graph: nx.Graph) -> dict[int, tuple[int, int]]:
    """The up*/down* order: (BFS distance from the root set, node); a link u -> v goes up when
    v ranks lower. Roots: the top level of a fat tree, node 0 of a tree, else the graph centre
    of lowest id."""
    kind = graph.graph.get("kind")
    if kind == "fat_tree":
        top = max(graph.nodes[n]["level"] for n in graph.nodes)
        roots = [n for n in graph.nodes if graph.nodes[n]["level"] == top]
    elif kind == "tree":
        roots = [0]
    else:
        roots = [min(nx.center(graph))] if nx.is_connected(graph) else [0]
    depth = {n: 0 for n in roots}
    queue = deque(roots)
    while queue:
        u = queue.popleft()
        for v in sorted(graph.neighbors(u)):
            if v not in depth:
                depth[v] = depth[u] + 1
                queue.append(v)
    if len(depth) != graph.number_of_nodes():
        raise ArchError("up*/down* routing needs a connected topology")
    return {n: (depth[n], n) for n in graph.nodes}


class UpDown(Routing):
    """Up*/down* routing on any connected graph: shortest legal paths (up links, then down
    links), adaptive among equal choices. The phase is known from the input port: a packet
    that arrived over a down link may only go down."""

    name = "updown"

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        graph = ports.graph
        self.rank = updown_rank(graph)
        self.distance = {}
        nodes = ports.routers
        # distance[(node, phase)][dest], by BFS backwards over (node, phase) states.
        for dest in nodes:
            dist = {(dest, 0): 0, (dest, 1): 0}
            queue = deque([(dest, 0), (dest, 1)])
            while queue:
                v, phase_v = queue.popleft()
                for u in graph.neighbors(v):
                    up = self.rank[v] < self.rank[u]
                    # u -> v: legal from phase 0 always (up keeps phase 0, down makes it 1);
                    # from phase 1 only if down.
                    for phase_u in (0, 1):
                        if phase_u == 1 and up:
                            continue
                        if (0 if up else 1) != phase_v:
                            continue
                        state = (u, phase_u)
                        if state not in dist:
                            dist[state] = dist[(v, phase_v)] + 1
                            queue.append(state)
            self.distance[dest] = dist

    def choices(self, r: int, dest: int, phase: int) -> list[int]:
        dist = self.distance[dest]
        here = dist.get((r, phase))
        out = []
        if here is None:
            return out  # no legal path from this state; a packet never reaches it
        for n in self.ports.neighbour[r]:
            if n is None:
                continue
            up = self.rank[n] < self.rank[r]
            if phase == 1 and up:
                continue
            if dist.get((n, 0 if up else 1), 1 << 30) == here - 1:
                out.append(self.ports.port_to[r][n])
        return out

    def arrived_down(self, r: int) -> set[int]:
        """Input ports of r whose link goes down into r."""
        return {p for n, p in self.ports.in_port_from[r].items() if self.rank[r] > self.rank[n]}

    def for_router(self, router):
        r = router.node
        down_ports = self.arrived_down(r)
        up_table, down_table = (_destination_table(self, r, lambda r, d, phase=phase: self.choices(r, d, phase))
                                for phase in (0, 1))

        def route(in_port, in_vc, packet):
            return (down_table if in_port in down_ports else up_table)[packet.dest]
        return route


class EscapeVC(UpDown):
    """Minimal adaptive routing on VCs 1.. with up*/down* on VC 0 as the escape channel: a
    packet may take any shortest-path hop on an adaptive VC or the up*/down* hop on VC 0
    (Duato's condition: the escape sub-network is connected and deadlock-free)."""

    name = "escape"
    classes = 2

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        self.shortest = dict(nx.all_pairs_shortest_path_length(ports.graph))

    def injection_vcs(self, packet) -> tuple[int, int]:
        return 0, self.vcs

    def for_router(self, router):
        r = router.node
        ports = self.ports
        down_ports = self.arrived_down(r)
        dist = self.shortest
        tables = []
        for phase in (0, 1):
            table = []
            for t in range(ports.terminals):
                dest = self.terminal_router[t]
                if dest == r:
                    table.append(((self.terminal_port[t], 0, self.vcs),))
                    continue
                adaptive = tuple((ports.port_to[r][n], 1, self.vcs) for n in ports.neighbour[r]
                                 if n is not None and dist[n][dest] == dist[r][dest] - 1)
                escape = tuple((p, 0, 1) for p in self.choices(r, dest, phase))
                table.append(adaptive + escape)
            tables.append(table)
        up_table, down_table = tables

        def route(in_port, in_vc, packet):
            return (down_table if in_vc == 0 and in_port in down_ports else up_table)[packet.dest]
        return route


class WestFirst(DimensionOrder):
    """West-first minimal adaptive routing on a mesh: a packet whose destination lies west
    goes west first; otherwise any productive direction (east, north, south). All VCs."""

    name = "west_first"

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        if self.wraps or len(self.dims) != 2:
            raise ArchError("west_first routing needs a 2-D mesh")

    def choices(self, r: int, dest: int) -> list[int]:
        (x, y), (dx, dy) = self.coord[r], self.coord[dest]
        if dx < x:
            return [self.ports.port_to[r][self.by_coord[(x - 1, y)]]]
        out = []
        if dx > x:
            out.append(self.by_coord[(x + 1, y)])
        if dy != y:
            out.append(self.by_coord[(x, y + (1 if dy > y else -1))])
        return [self.ports.port_to[r][n] for n in out]

    def for_router(self, router):
        return _table_routing(self, router, self.choices)


class OddEven(DimensionOrder):
    """Odd-even minimal adaptive routing on a 2-D mesh (Chiu, IEEE TPDS 2000, the ROUTE
    function): a packet may not turn from east to north or south in an even column, nor from
    north or south to west in an odd column, which leaves every cycle of turns broken without
    VCs. The allowed productive directions depend on the current column, the source column and
    the destination column; the router's selection picks among them. All VCs."""

    name = "odd_even"
    table_form = False  # the route depends on the packet's source column

    def __init__(self, ports: PortMap, vcs: int):
        super().__init__(ports, vcs)
        if self.wraps or len(self.dims) != 2:
            raise ArchError("odd_even routing needs a 2-D mesh")

    def choices(self, r: int, dest: int, in_source_column: bool) -> list[int]:
        (x, y), (dx, dy) = self.coord[r], self.coord[dest]
        vertical = [] if dy == y else [self.by_coord[(x, y + (1 if dy > y else -1))]]
        if dx == x:
            out = vertical
        elif dx > x:
            if dy == y:
                out = [self.by_coord[(x + 1, y)]]
            else:
                out = list(vertical) if x % 2 == 1 or in_source_column else []
                if dx % 2 == 1 or dx - x != 1:
                    out.append(self.by_coord[(x + 1, y)])
        else:
            out = [self.by_coord[(x - 1, y)]]
            if x % 2 == 0:
                out += vertical
        return [self.ports.port_to[r][n] for n in out]

    def for_router(self, router):
        r = router.node
        ports = self.ports
        tables = [_destination_table(self, r, lambda r, d, col=col: self.choices(r, d, col))
                  for col in (False, True)]
        x = self.coord[r][0]
        source_x = [self.coord[self.terminal_router[t]][0] for t in range(ports.terminals)]

        def route(in_port, in_vc, packet):
            return tables[source_x[packet.source] == x][packet.dest]
        return route
