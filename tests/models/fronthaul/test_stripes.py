"""Stripe topologies: the star and the bus as the extremes, geometry, and malformed layouts."""

import networkx as nx
import numpy as np
import pytest

from archmodel.kernel import ArchError
from archmodel.lang import topology_generators
from archmodel.models.fronthaul import radio_stripes, stripe_layout
from archmodel.models.fronthaul.stripes import link_lengths, place
from archmodel.models.topologies import build_topology


@pytest.mark.parametrize("m, l, ports, hops, kind", [(16, 1, 16, 1, "star"), (4, 4, 4, 4, "radio_stripes"),
                                                     (1, 16, 1, 16, "bus")])
def test_sixteen_aps_as_star_stripes_and_bus(m, l, ports, hops, kind):
    graph = build_topology(f"radio_stripes({m}, {l})")
    assert graph.graph["kind"] == kind and graph.number_of_nodes() == 17
    layout = stripe_layout(graph)
    assert layout.cp_ports == ports and graph.in_degree(0) == ports
    assert layout.worst_hops == hops
    assert max(nx.shortest_path_length(graph, ap, 0) for ap in layout.aps) == hops
    assert sorted(layout.aps) == list(range(1, 17))
    for stripe in layout.stripes:  # far end first, each AP one hop nearer the CP than the last
        assert [graph.nodes[ap]["hops"] for ap in stripe] == list(range(l, 0, -1))


def test_the_language_knows_the_generator():
    assert "radio_stripes" in topology_generators()
    assert radio_stripes.node_count(4, 4) == 17


def test_bad_counts_name_the_parameter():
    with pytest.raises(ArchError, match="radio_stripes: l must be a positive integer, got 0"):
        radio_stripes(4, 0)


def test_positions_lie_on_the_square_and_stripes_run_toward_the_cp():
    layout = stripe_layout(radio_stripes(4, 4))
    positions, cp = place(layout, 400.0)
    assert positions.min() > 0 and positions.max() < 400 and cp.tolist() == [0.0, 200.0]
    assert len({tuple(p) for p in positions}) == 16
    lengths = link_lengths(layout, positions, cp)
    for s, stripe in enumerate(layout.stripes):
        rows = positions[4 * s:4 * s + 4]
        assert len(set(rows[:, 1])) == 1  # a stripe of one row's length lies along a row
        assert lengths[4 * s:4 * s + 3] == [100.0] * 3  # neighbours on the 100 m grid
        assert np.linalg.norm(rows[-1] - cp) < np.linalg.norm(rows[0] - cp)
    star = stripe_layout(radio_stripes(16, 1))
    star_cable = sum(link_lengths(star, *place(star, 400.0)))
    bus = stripe_layout(radio_stripes(1, 16))
    bus_cable = sum(link_lengths(bus, *place(bus, 400.0)))
    # the star's dedicated runs to the CP take far more cable than a chain through neighbours
    assert star_cable > 2 * sum(lengths) and star_cable > 2 * bus_cable
    assert bus_cable == pytest.approx(15 * 100 + np.hypot(50, 150))


def test_a_stripe_with_a_gap_is_an_error_naming_the_ap(tmp_path):
    graph = radio_stripes(2, 3)
    graph.remove_edge(2, 3)  # stripe 0 is 1 -> 2 -x- 3 -> 0
    with pytest.raises(ArchError, match=r"stripe with a gap: AP 1 does not reach the CP \(2 APs cut off\)"):
        stripe_layout(graph)
    edges = tmp_path / "gap.txt"
    edges.write_text("1 0\n2 1\n3 4\n")  # APs 3 and 4 are wired to each other only
    with pytest.raises(ArchError, match="stripe with a gap: AP 3 does not reach the CP"):
        stripe_layout(build_topology(f'edge_list("{edges}")'))


def test_an_undirected_edge_list_is_pointed_toward_the_cp(tmp_path):
    edges = tmp_path / "stripes.txt"
    edges.write_text("0 1\n1 2\n2 3\n0 4\n4 5\n")
    layout = stripe_layout(build_topology(f'edge_list("{edges}")'))
    assert layout.stripes == ((3, 2, 1), (5, 4))


def test_a_branch_is_not_a_stripe():
    graph = radio_stripes(1, 3)
    graph.add_edge(4, 2)
    with pytest.raises(ArchError, match="AP 2 has 2 links in and 1 out"):
        stripe_layout(graph)


def test_the_topology_statement_wires_radio_stripes(tmp_path):
    from archmodel.lang import load

    source = tmp_path / "stripes.arch"
    source.write_text('system T {\n'
                      '    net : topology radio_stripes(m = 2, l = 3, local_ports = 1) of Crossbar(dest_field = "d")\n'
                      '    src[7] : Source(count = 0)\n    sink[7] : Sink()\n'
                      '    for n in 0 .. 7 {\n        src[n].out -> net.node[n].inp[0]\n'
                      '        net.node[n].out[0] -> sink[n].inp\n    }\n}\n')
    net = load(source).top.child("net")
    cp = net.child("node[0]")
    assert len(cp.inp) == 1 + 2 and len(cp.out) == 1  # one link in per stripe, none out
    far, middle = net.child("node[1]"), net.child("node[2]")
    assert len(far.inp) == 1 and len(far.out) == 2 and len(middle.inp) == 2
    assert far.out[1].channel.dst is middle.inp[1]
