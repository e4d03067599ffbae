"""Fronthaul topologies: parallel radio stripes between the star and the bus, laid on a square.

``radio_stripes(m, l)`` (registered with the shared topology registry, so ``.arch`` files and
:func:`~archmodel.models.topologies.build_topology` know it) returns a directed networkx graph
of the uplink: node 0 is the central processor (CP), nodes 1 .. m*l the access points (APs),
and every edge one fronthaul link, pointing toward the CP. Stripe s is the chain of APs
``1 + s*l .. (s+1)*l``; the last of them is wired to the CP. ``m = N_AP, l = 1`` is the star
(every AP its own link to the CP), ``m = 1, l = N_AP`` the bus (one chain).

Node attributes: ``role`` ("cp" or "ap"), for APs ``stripe`` and ``hops`` (links to the CP:
l for the far end, 1 for the AP beside the CP); edge attribute ``kind = "fronthaul"``.

:func:`stripe_layout` checks that a graph really is parallel stripes (each AP one link toward
the CP, at most one AP feeding it, every AP reaching the CP: no gap) and returns the stripes
far end first; an undirected graph (an ``edge_list`` file) is first pointed toward the CP.
:func:`place` puts the APs on a square: a grid of ``ceil(sqrt(N_AP))`` columns walked row by
row, alternately left to right and right to left (a serpentine), so consecutive APs of a stripe
are grid neighbours and a stripe of one row's length lies along a row; the CP sits at the
middle of the left edge and every stripe runs toward it. Link lengths are the straight
distances between the ends (a cable laid along the stripe).
"""

from __future__ import annotations

import math

import attrs
import networkx as nx
import numpy as np

from archmodel.kernel import ArchError

from ..topologies import register_topology


def _count(name: str, value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ArchError(f"radio_stripes: {name} must be a positive integer, got {value!r}",
                        hint=f"{name} is the number of {'stripes' if name == 'm' else 'APs per stripe'}")
    return value


@register_topology("radio_stripes", size=lambda m, l: m * l + 1)
def radio_stripes(m: int, l: int) -> nx.DiGraph:
    """``m`` parallel radio stripes of ``l`` APs each, ending at the CP (node 0); see the module
    docstring for the numbering and attributes."""
    m, l = _count("m", m), _count("l", l)
    graph = nx.DiGraph()
    graph.add_node(0, role="cp", terminals=0)
    for stripe in range(m):
        for position in range(l):
            node = 1 + stripe * l + position
            graph.add_node(node, role="ap", stripe=stripe, hops=l - position)
            downstream = node + 1 if position < l - 1 else 0
            graph.add_edge(node, downstream, kind="fronthaul")
    kind = "star" if l == 1 and m > 1 else "bus" if m == 1 and l > 1 else "radio_stripes"
    graph.graph.update(kind=kind, m=m, l=l)
    return graph


@attrs.frozen
class StripeLayout:
    """The stripes of a fronthaul graph: ``stripes[s]`` lists stripe s's AP nodes from the far
    end to the AP beside the CP; ``cp`` is the CP's node."""

    cp: int
    stripes: tuple

    @property
    def aps(self) -> list:
        """Every AP node, stripe by stripe, far end first."""
        return [ap for stripe in self.stripes for ap in stripe]

    @property
    def cp_ports(self) -> int:
        """Links that end at the CP: one per stripe."""
        return len(self.stripes)

    @property
    def worst_hops(self) -> int:
        """Links crossed by the farthest AP's data: the longest stripe."""
        return max(len(stripe) for stripe in self.stripes)


def _toward(graph: nx.Graph, cp) -> nx.DiGraph:
    """An undirected graph (an ``edge_list`` file) with every link pointed toward the CP:
    along the shortest path to it. APs that cannot reach the CP keep their links both ways, so
    the checks below find them."""
    distance = nx.single_source_shortest_path_length(graph, cp)
    directed = nx.DiGraph()
    directed.add_nodes_from(graph.nodes(data=True))
    for u, v in graph.edges:
        if u in distance and v in distance:
            directed.add_edge(*((u, v) if distance[u] > distance[v] else (v, u)), kind="fronthaul")
        else:
            directed.add_edge(u, v, kind="fronthaul")
            directed.add_edge(v, u, kind="fronthaul")
    return directed


def stripe_layout(graph: nx.Graph) -> StripeLayout:
    """The stripes of ``graph`` (directed toward the CP, or undirected and then pointed toward
    it), the CP being the node with ``role = "cp"`` or node 0; or an ArchError naming the AP
    that breaks the shape: one without a link toward the CP or cut off from it (a gap), or one
    fed by two APs (a branch)."""
    cps = [n for n, role in graph.nodes(data="role") if role == "cp"] or [0]
    if len(cps) != 1 or cps[0] not in graph:
        raise ArchError("a fronthaul topology needs exactly one CP node", hint="radio_stripes numbers the CP 0")
    cp = cps[0]
    if not graph.is_directed():
        graph = _toward(graph, cp)
    if graph.out_degree(cp):
        raise ArchError(f"the CP (node {cp}) must not send on a fronthaul link")
    stranded = sorted(set(graph.nodes) - nx.ancestors(graph, cp) - {cp})
    if stranded:
        raise ArchError(f"stripe with a gap: AP {stranded[0]} does not reach the CP "
                        f"({len(stranded)} AP{'s' if len(stranded) != 1 else ''} cut off)",
                        hint="every AP must be wired, link by link, to the CP")
    for node in sorted(graph.nodes):
        if node != cp and (graph.in_degree(node) > 1 or graph.out_degree(node) > 1):
            raise ArchError(f"AP {node} has {graph.in_degree(node)} links in and {graph.out_degree(node)} out; "
                            "a stripe is a chain (one link in at most, one out)",
                            hint="split the branches into stripes of their own")
    stripes = []
    for head in sorted(graph.predecessors(cp)):
        chain = [head]
        while graph.in_degree(chain[-1]):
            chain.append(next(iter(graph.predecessors(chain[-1]))))
        stripes.append(tuple(reversed(chain)))
    return StripeLayout(cp, tuple(stripes))


def place(layout: StripeLayout, side_m: float) -> tuple[np.ndarray, np.ndarray]:
    """AP positions (N_AP x 2, metres, in ``layout.aps`` order) on a ``side_m`` square, and the
    CP's position (see the module docstring). Each stripe takes the next run of grid cells
    along the serpentine and is turned so that its CP-side end is the end nearer the CP."""
    count = len(layout.aps)
    cols = math.ceil(math.sqrt(count))
    rows = math.ceil(count / cols)
    cells = np.empty((count, 2))
    for index in range(count):
        row, col = divmod(index, cols)
        if row % 2:
            col = cols - 1 - col
        cells[index] = ((col + 0.5) * side_m / cols, (row + 0.5) * side_m / rows)
    cp = np.array([0.0, side_m / 2])
    positions = np.empty_like(cells)
    start = 0
    for stripe in layout.stripes:
        run = cells[start:start + len(stripe)]
        if np.linalg.norm(run[0] - cp) < np.linalg.norm(run[-1] - cp):
            run = run[::-1]
        positions[start:start + len(stripe)] = run
        start += len(stripe)
    return positions, cp


def link_lengths(layout: StripeLayout, positions: np.ndarray, cp_position: np.ndarray) -> list[float]:
    """The length in metres of each AP's link toward the CP, in ``layout.aps`` order."""
    index = {ap: i for i, ap in enumerate(layout.aps)}
    lengths = []
    for stripe in layout.stripes:
        for k, ap in enumerate(stripe):
            there = positions[index[stripe[k + 1]]] if k + 1 < len(stripe) else cp_position
            lengths.append(float(np.linalg.norm(positions[index[ap]] - there)))
    return lengths
