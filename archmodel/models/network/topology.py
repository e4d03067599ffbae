"""Topology generators: named functions that return the graph of a network.

A generator returns a :class:`networkx.Graph` (every edge carries traffic both ways) or a
:class:`networkx.DiGraph` whose nodes are the integers ``0 .. n-1``. The graph describes the
routers and their links; node attributes say where terminals (network interfaces) attach and
where a node sits, so routing functions never do index arithmetic of their own:

* ``terminals`` (node): how many terminals attach to this router (default 1 when absent);
* ``coord`` (node): the node's coordinates in a mesh, torus or ring (a tuple);
* ``level``/``group`` (node): the level in a tree, the group in a dragonfly or cluster;
* ``latency`` (edge): the link latency in cycles where it differs from the network default;
* ``wrap`` (edge): the dimension whose wrap-around link this is (torus, ring);
* ``kind`` (edge): ``"local"``/``"global"`` in a dragonfly, ``"up"`` in trees (child to parent).

``net : topology mesh(4, 4) of Model()`` in a ``.arch`` file calls the generator registered as
``mesh``; :class:`~archmodel.models.network.Noc` builds routers and interfaces from the same
registry, which lives in :mod:`archmodel.models.topologies` so that every family can add to it.
Register more with :func:`register_topology`.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import networkx as nx

from archmodel.kernel import ArchError, read_lines

from ..topologies import build_topology, register_topology, topology_generators

__all__ = ["build_topology", "register_topology", "terminal_count", "topology_generators"]


def _positive(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ArchError(f"{name} must be a positive integer, got {value!r}")
    return value


def _at_least(name: str, value, low: int) -> int:
    _positive(name, value)
    if value < low:
        raise ArchError(f"{name} must be at least {low}, got {value!r}")
    return value


@register_topology("mesh", size=lambda rows, cols, terminals=1: rows * cols)
def mesh(rows: int, cols: int, terminals: int = 1) -> nx.Graph:
    """A ``rows`` x ``cols`` 2-D mesh; node ``r * cols + c`` sits at row r, column c
    (``coord`` = (column, row), i.e. (x, y)). ``terminals`` per router makes it a
    concentrated mesh (a cluster and a memory controller on one router, say): terminal
    ``t`` is local port ``t % terminals`` of router ``t // terminals``."""
    rows, cols = _positive("rows", rows), _positive("cols", cols)
    terminals = _positive("terminals", terminals)
    grid = nx.grid_2d_graph(rows, cols)
    graph = nx.relabel_nodes(grid, {(r, c): r * cols + c for r, c in grid.nodes})
    for r, c in itertools.product(range(rows), range(cols)):
        graph.nodes[r * cols + c]["coord"] = (c, r)
        if terminals > 1:
            graph.nodes[r * cols + c]["terminals"] = terminals
    graph.graph.update(kind="mesh", dims=(cols, rows))
    return graph


def _cube_size(k, n=2):
    return k ** n


@register_topology("torus", size=_cube_size)
def torus(k: int, n: int = 2) -> nx.Graph:
    """A k-ary n-cube: ``k**n`` nodes, each linked to its two neighbours in every dimension
    with wrap-around. Node ``sum(coord[d] * k**d)``; wrap-around edges carry ``wrap = d``."""
    k, n = _at_least("k", k, 2), _positive("n", n)
    graph = nx.Graph()
    for index in range(k ** n):
        graph.add_node(index, coord=tuple((index // k ** d) % k for d in range(n)))
    for index in range(k ** n):
        for d in range(n):
            digit = (index // k ** d) % k
            neighbour = index - digit * k ** d + ((digit + 1) % k) * k ** d
            if neighbour != index and not graph.has_edge(index, neighbour):
                graph.add_edge(index, neighbour, wrap=d if digit == k - 1 else None)
    graph.graph.update(kind="torus", dims=(k,) * n)
    return graph


@register_topology("ring", size=lambda n, bidirectional=True: n)
def ring(n: int, bidirectional: bool = True) -> nx.Graph:
    """``n`` nodes in a ring, each linked to the next (and, if bidirectional, back); the link
    from ``n - 1`` to 0 carries ``wrap = 0`` (the dateline)."""
    n = _positive("n", n)
    graph = nx.cycle_graph(n) if bidirectional else nx.cycle_graph(n, create_using=nx.DiGraph)
    for node in graph.nodes:
        graph.nodes[node]["coord"] = (node,)
    if n > 1:
        graph.edges[n - 1, 0]["wrap"] = 0
    graph.graph.update(kind="ring", dims=(n,))
    return graph


@register_topology("star", size=lambda n: n)
def star(n: int) -> nx.Graph:
    """``n`` nodes: node 0 is the hub (no terminals), linked to each of the ``n - 1`` leaves."""
    n = _positive("n", n)
    graph = nx.star_graph(n - 1)
    graph.nodes[0]["terminals"] = 0 if n > 1 else 1
    graph.graph.update(kind="star")
    return graph


@register_topology("crossbar", size=lambda n: 1)
def crossbar(n: int) -> nx.Graph:
    """One router with ``n`` terminals: an ``n`` x ``n`` crossbar."""
    graph = nx.Graph()
    graph.add_node(0, terminals=_positive("n", n))
    graph.graph.update(kind="crossbar")
    return graph


@register_topology("full_mesh", size=lambda n: n * n)
def full_mesh(n: int) -> nx.Graph:
    """``n`` nodes, every pair linked directly."""
    graph = nx.complete_graph(_positive("n", n))
    graph.graph.update(kind="full_mesh")
    return graph


def _tree_size(fanout, levels):
    return sum(fanout ** level for level in range(levels))


@register_topology("tree", size=_tree_size)
def tree(fanout: int, levels: int) -> nx.Graph:
    """A balanced tree of routers: root 0, ``levels`` levels, ``fanout`` children per router.
    Terminals attach to the leaves only (``fanout`` each)."""
    fanout, levels = _positive("fanout", fanout), _positive("levels", levels)
    graph = nx.balanced_tree(fanout, levels - 1) if levels > 1 else nx.empty_graph(1)
    depth = nx.shortest_path_length(graph, 0)
    for node in graph.nodes:
        graph.nodes[node]["level"] = depth[node]
        graph.nodes[node]["terminals"] = fanout if depth[node] == levels - 1 else 0
    graph.graph.update(kind="tree")
    return graph


@register_topology("fat_tree", size=lambda k, n: n * k ** (n - 1))
def fat_tree(k: int, n: int) -> nx.Graph:
    """A k-ary n-tree (Petrini and Vanneschi 1997): ``n`` levels of ``k**(n-1)`` switches with
    ``2k`` ports, ``k**n`` terminals on the leaf level (``level`` 0, ``k`` terminals each).

    Switch ``(l, w)`` (w a word of n-1 base-k digits) links to ``(l+1, w')`` where w' equals w in
    every digit except digit l. Node id ``l * k**(n-1) + w``.
    """
    k, n = _at_least("k", k, 2), _positive("n", n)
    width = k ** (n - 1)
    graph = nx.Graph()
    for level in range(n):
        for word in range(width):
            graph.add_node(level * width + word, level=level, terminals=k if level == 0 else 0)
    for level in range(n - 1):
        for word in range(width):
            digit = (word // k ** level) % k
            base = word - digit * k ** level
            for choice in range(k):
                graph.add_edge(level * width + word, (level + 1) * width + base + choice * k ** level, kind="up")
    graph.graph.update(kind="fat_tree", k=k, n=n)
    return graph


@register_topology("dragonfly", size=lambda p, a=None, h=None: ((a or 2 * p) * (h or p) + 1) * (a or 2 * p))
def dragonfly(p: int, a: int | None = None, h: int | None = None) -> nx.Graph:
    """A dragonfly (Kim et al., ISCA 2008): groups of ``a`` routers (default 2p), all-to-all
    inside a group, ``h`` global links per router (default p), ``g = a*h + 1`` groups with one
    global link between every pair of groups, ``p`` terminals per router (balanced: a = 2p = 2h).

    Router ``group * a + i``; global link j of router i of group G goes to group
    ``(G + 1 + i*h + j) mod g`` (the "absolute" arrangement: every pair of groups once).
    """
    p = _positive("p", p)
    a = _positive("a", a if a is not None else 2 * p)
    h = _positive("h", h if h is not None else p)
    groups = a * h + 1
    graph = nx.Graph()
    for group in range(groups):
        for i in range(a):
            graph.add_node(group * a + i, group=group, terminals=p)
    for group in range(groups):
        for i, j in itertools.combinations(range(a), 2):
            graph.add_edge(group * a + i, group * a + j, kind="local")
    for group in range(groups):
        for i in range(a):
            for j in range(h):
                offset = i * h + j  # 0 .. a*h - 1: reaches each other group once
                other = (group + 1 + offset) % groups
                if other < group:
                    continue
                back = (group - other - 1) % groups  # the offset the other group uses for us
                graph.add_edge(group * a + i, other * a + back // h, kind="global")
    graph.graph.update(kind="dragonfly", p=p, a=a, h=h, groups=groups)
    return graph


def _clusters_size(clusters, size, inner="full_mesh", outer="full_mesh"):
    # nodes and links: a full mesh of n has n * n of them, a ring or star about 2 n
    def shape(n, kind):
        return n * n if kind == "full_mesh" else 2 * n
    return clusters * size + clusters * shape(size, inner) + shape(clusters, outer)


@register_topology("clusters", size=_clusters_size)
def clusters(clusters: int, size: int, inner: str = "full_mesh", outer: str = "full_mesh") -> nx.Graph:
    """Clusters of clusters: ``clusters`` groups of ``size`` routers, wired inside a group as
    ``inner`` (``full_mesh``, ``ring`` or ``star``, whose hub is router 0 of the group) and
    between groups as ``outer`` (the same choices) through router 0 of each group, the gateway.
    Nests: a Manticore-style quadrant tree is ``clusters(4, 8, inner="star", outer="full_mesh")``."""
    clusters, size = _positive("clusters", clusters), _positive("size", size)
    shapes = {"full_mesh": full_mesh, "ring": ring, "star": star}
    for name, shape in (("inner", inner), ("outer", outer)):
        if shape not in shapes:
            raise ArchError(f"{name} must be one of {', '.join(shapes)}, got {shape!r}")
    graph = nx.Graph()
    inner_graph = shapes[inner](size)
    for c in range(clusters):
        for node in inner_graph.nodes:
            terminals = inner_graph.nodes[node].get("terminals", 1)
            graph.add_node(c * size + node, group=c, terminals=terminals)
        graph.add_edges_from(((c * size + u, c * size + v) for u, v in inner_graph.edges), kind="local")
    graph.add_edges_from(((u * size, v * size) for u, v in shapes[outer](clusters).edges), kind="global")
    graph.graph.update(kind="clusters")
    return graph


@register_topology("edge_list")
def edge_list(path: str, terminals: int = 1) -> nx.Graph:
    """A graph read from a text file of ``u v`` lines (``u v latency`` gives a link latency);
    ``#`` starts a comment. Nodes are renumbered ``0 .. n-1`` in sorted order."""
    file = Path(path)
    if not file.is_file():
        raise ArchError(f"edge list '{path}' not found")
    graph = nx.Graph()
    for number, line in read_lines(file, "edge list"):
        words = line.split("#")[0].split()
        if not words:
            continue
        if len(words) not in (2, 3) or not all(w.lstrip("-").isdigit() for w in words):
            raise ArchError(f"{path}:{number}: expected 'u v' or 'u v latency', got {line.strip()!r}")
        u, v = int(words[0]), int(words[1])
        graph.add_edge(u, v, **({"latency": int(words[2])} if len(words) == 3 else {}))
    graph = nx.convert_node_labels_to_integers(graph, ordering="sorted")
    for node in graph.nodes:
        graph.nodes[node]["terminals"] = terminals
    graph.graph.update(kind="edge_list")
    return graph


def terminal_count(graph: nx.Graph) -> int:
    """The number of terminals (network interfaces) the graph's routers carry."""
    return sum(graph.nodes[n].get("terminals", 1) for n in graph.nodes)
