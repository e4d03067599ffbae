"""Topology generators: named functions that return the graph of a network.

``net : topology mesh(4, 4) of Crossbar() with link(latency = 2)`` calls the generator
registered as ``mesh`` and builds one instance of the node model per graph node, connected
along the graph's edges. Generators return a :class:`networkx.Graph` (every edge carries
traffic both ways) or :class:`networkx.DiGraph` whose nodes are the integers ``0 .. n-1``.
More generators (torus, fat tree, dragonfly) register themselves with
:func:`register_topology` from wherever they are defined.
"""

from __future__ import annotations

from typing import Callable

import networkx as nx

from ..kernel import ArchError

_GENERATORS: dict[str, Callable[..., nx.Graph]] = {}


def register_topology(name: str, size: Callable[..., int] | None = None):
    """Decorator: make a generator ``fn(*args, **kwargs) -> networkx graph`` usable by name.

    ``size(*args, **kwargs)`` (same arguments) returns the node count without building the
    graph, so the instance limit is enforced before a huge graph is made.
    """
    def wrap(fn):
        fn.node_count = size
        _GENERATORS[name] = fn
        return fn
    return wrap


def topology_generators() -> dict[str, Callable[..., nx.Graph]]:
    """All registered generators by name, sorted."""
    return dict(sorted(_GENERATORS.items()))


def _positive(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ArchError(f"{name} must be a positive integer, got {value!r}")
    return value


@register_topology("mesh", size=lambda rows, cols: rows * cols)
def mesh(rows: int, cols: int) -> nx.Graph:
    """A ``rows`` x ``cols`` 2-D mesh; node ``r * cols + c`` sits at row r, column c."""
    rows, cols = _positive("rows", rows), _positive("cols", cols)
    grid = nx.grid_2d_graph(rows, cols)
    return nx.relabel_nodes(grid, {(r, c): r * cols + c for r, c in grid.nodes})


@register_topology("ring", size=lambda n, bidirectional=True: n)
def ring(n: int, bidirectional: bool = True) -> nx.Graph:
    """``n`` nodes in a ring, each linked to the next (and, if bidirectional, back)."""
    n = _positive("n", n)
    return nx.cycle_graph(n) if bidirectional else nx.cycle_graph(n, create_using=nx.DiGraph)


@register_topology("star", size=lambda n: n)
def star(n: int) -> nx.Graph:
    """``n`` nodes: node 0 is the hub, linked to each of the ``n - 1`` leaves."""
    n = _positive("n", n)
    return nx.star_graph(n - 1)


@register_topology("full_mesh", size=lambda n: n * n)
def full_mesh(n: int) -> nx.Graph:
    """``n`` nodes, every pair linked directly."""
    return nx.complete_graph(_positive("n", n))
