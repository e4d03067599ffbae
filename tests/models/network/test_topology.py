"""Topology generators build the graphs their definitions describe."""

import networkx as nx
import pytest

from archmodel.kernel import ArchError
from archmodel.lang import topology_generators
from archmodel.models.network import PortMap, build_topology, terminal_count


def test_mesh_and_torus_degrees_and_wraps():
    mesh = build_topology("mesh(3, 4)")
    assert sorted(d for _, d in mesh.degree) == [2] * 4 + [3] * 6 + [4] * 2
    assert mesh.nodes[5]["coord"] == (1, 1)
    torus = build_topology("torus(4, 3)")
    assert torus.number_of_nodes() == 64 and all(d == 6 for _, d in torus.degree)
    assert sum(1 for *_, w in torus.edges(data="wrap") if w is not None) == 3 * 16


def test_fat_tree_is_a_k_ary_n_tree():
    k, n = 4, 3
    tree = build_topology(f"fat_tree({k}, {n})")
    assert tree.number_of_nodes() == n * k ** (n - 1)
    assert terminal_count(tree) == k ** n
    for node, data in tree.nodes(data=True):
        degree = tree.degree(node) + data["terminals"]
        assert degree == (k if data["level"] == n - 1 else 2 * k)
    # every leaf reaches every top switch going up only
    assert nx.diameter(tree) == 2 * (n - 1)


def test_dragonfly_groups_are_complete_and_pairwise_linked_once():
    graph = build_topology("dragonfly(2)")  # a = 4, h = 2, g = 9
    assert graph.graph["groups"] == 9 and graph.number_of_nodes() == 36
    kinds = nx.get_edge_attributes(graph, "kind")
    for node in graph.nodes:
        assert sum(1 for v in graph.neighbors(node) if kinds[tuple(sorted((node, v)))] == "global") == 2
    pairs = {tuple(sorted((graph.nodes[u]["group"], graph.nodes[v]["group"])))
             for u, v in graph.edges if kinds[(u, v)] == "global"}
    assert len(pairs) == 9 * 8 // 2


def test_clusters_tree_star_crossbar_and_ring():
    graph = build_topology("clusters(4, 8, inner='star')")
    assert graph.number_of_nodes() == 32 and nx.is_connected(graph)
    assert terminal_count(graph) == 4 * 7  # star hubs carry no terminals
    assert terminal_count(build_topology("tree(2, 3)")) == 8
    assert terminal_count(build_topology("crossbar(6)")) == 6
    assert build_topology("ring(5)").edges[4, 0]["wrap"] == 0


def test_edge_list_file(tmp_path):
    path = tmp_path / "net.txt"
    path.write_text("# a triangle and a tail\n10 20\n20 30 3\n30 10\n30 40\n")
    graph = build_topology(f"edge_list({str(path)!r})")
    assert sorted(graph.edges) == [(0, 1), (0, 2), (1, 2), (2, 3)]
    assert graph.edges[1, 2]["latency"] == 3
    path.write_text("1 x\n")
    with pytest.raises(ArchError, match="expected 'u v' or 'u v latency'"):
        build_topology(f"edge_list({str(path)!r})")


def test_port_map_numbers_ports_as_the_language_does():
    ports = PortMap(build_topology("mesh(2, 2)"))
    assert ports.neighbour[0] == [None, 1, 2]
    assert ports.port_to[3] == {1: 1, 2: 2}
    assert ports.terminal_router == [0, 1, 2, 3]


def test_the_language_sees_the_network_generators():
    names = set(topology_generators())
    assert {"mesh", "torus", "ring", "star", "crossbar", "tree", "fat_tree", "dragonfly", "full_mesh",
            "clusters", "edge_list"} <= names
    with pytest.raises(ArchError, match="unknown topology 'meshh'"):
        build_topology("meshh(2, 2)")


def test_odd_even_routes_are_minimal_adaptive_and_take_no_forbidden_turn():
    from archmodel.models.network.flit import NetPacket
    from archmodel.models.network.routing import PortMap
    from archmodel.models.network.routing_functions import make_routing
    from archmodel.models.network.topology import build_topology

    ports = PortMap(build_topology("mesh(6, 5)"))
    routing = make_routing("odd_even", ports, 1)
    coord = routing.coord
    adaptive = 0

    def walk(r, in_port, packet, path):
        nonlocal adaptive
        hops = routing.next_hops(r, in_port, 0, packet)
        if ports.neighbour[r][hops[0][0]] is None:
            yield path
            return
        adaptive += len(hops) > 1
        for port, _, _ in hops:
            n = ports.neighbour[r][port]
            yield from walk(n, ports.in_port_from[n][r], packet, path + [n])

    for source in ports.routers:
        for dest in ports.routers:
            if source == dest:
                continue
            packet = NetPacket(0, source, dest, 1)
            distance = sum(abs(a - b) for a, b in zip(coord[source], coord[dest]))
            for path in walk(source, 0, packet, [source]):
                assert path[-1] == dest and len(path) - 1 == distance
                for a, b, c in zip(path, path[1:], path[2:]):
                    (xa, ya), (xb, yb), (xc, yc) = coord[a], coord[b], coord[c]
                    east_then_vertical = xb > xa and yc != yb
                    vertical_then_west = yb != ya and xc < xb
                    assert not (east_then_vertical and xb % 2 == 0), (path, "EN/ES turn in an even column")
                    assert not (vertical_then_west and xb % 2 == 1), (path, "NW/SW turn in an odd column")
    assert adaptive > 0


def test_a_concentrated_mesh_puts_several_terminals_on_each_router():
    from archmodel.kernel import Simulator
    from archmodel.models.network import Noc
    graph = build_topology("mesh(2, 3, 2)")
    assert [graph.nodes[n]["terminals"] for n in sorted(graph)] == [2] * 6
    delivered = []
    for engine in ("components", "fast"):
        noc = Noc("net", topology="mesh(2, 3, 2)", routing="dor", traffic="uniform", rate=0.2,
                  warmup_periods=1, sample_period=200, engine=engine)
        sim = Simulator(noc, seed=3)
        sim.run()
        assert len(noc.interfaces) == 12
        delivered.append((sim.now, noc.accepted.value, sorted(noc.packet_latency.samples)))
    assert delivered[0] == delivered[1] and delivered[0][1] > 0.15
