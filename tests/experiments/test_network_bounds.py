"""The ideal saturation rate a latency-throughput curve is read against: the inverse of the
heaviest channel load under the routing function, which on the 8x8 mesh with dimension-order
routing is the published bound (VALIDATION.md: uniform 0.5, transpose 1/7, bit-complement 0.25),
and on the 4x4 torus counts a tie at distance 2 half each way round."""

import pytest

from archmodel.experiments.network import ideal_saturation

MESH = dict(topology="mesh(8, 8)", routing="dor", vcs=2)
TORUS = dict(topology="torus(4, 2)", routing="dateline", vcs=2)


@pytest.mark.parametrize("traffic, bound", [("uniform", 0.5), ("transpose", 1 / 7), ("bitcomp", 0.25)])
def test_the_mesh_bounds_are_the_published_ones(traffic, bound):
    assert ideal_saturation(traffic, **MESH) == pytest.approx(bound, rel=1e-12)


@pytest.mark.parametrize("traffic, bound", [
    # a ring channel carries k/8 = 0.5 per unit rate: the terminals' channels bound it at 1
    ("uniform", 1.0),
    # every coordinate moves one hop, each link carries one source's packets
    ("bitcomp", 1.0),
    # in row 0, 1 -> 0 carries node 1's packets and half of node 2's (its tie): 1.5
    ("transpose", 2 / 3),
])
def test_the_torus_bounds_split_ties_between_the_two_ways(traffic, bound):
    assert ideal_saturation(traffic, **TORUS) == pytest.approx(bound, rel=1e-12)


def test_no_bound_without_a_routing_table_or_for_a_random_pattern():
    assert ideal_saturation("uniform", topology="mesh(4, 4)", routing="odd_even") is None
    assert ideal_saturation("hotspot", **MESH) is None
