"""A lone packet's latency equals the analytic per-hop pipeline formula, on every topology and
routing, for several pipeline depths, link latencies and packet sizes."""

import random

import networkx as nx
import pytest

from archmodel.kernel import Simulator
from archmodel.models.network import Noc

CONFIGS = [
    ("mesh(4, 4)", "dor", {}),
    ("mesh(4, 4)", "west_first", {}),
    ("mesh(5, 4)", "odd_even", {"vcs": 1}),
    ("mesh(3, 4)", "escape", {}),
    ("torus(4, 2)", "dateline", {"link_latency": 2}),
    ("ring(6)", "dateline", {}),
    ("ring(5)", "updown", {}),
    ("fat_tree(2, 3)", "updown", {}),
    ("tree(2, 3)", "updown", {}),
    ("star(5)", "updown", {}),
    ("crossbar(4)", "shortest", {}),
    ("full_mesh(5)", "shortest", {}),
    ("clusters(3, 3, inner='star')", "updown", {}),
    ("dragonfly(1)", "dragonfly_min", {}),
    ("dragonfly(1)", "ugal", {"vcs": 3}),
    ("mesh(4, 4)", "dor", {"router": "SimpleRouter"}),
    ("mesh(4, 4)", "dor", {"routing_delay": 1, "vc_alloc_delay": 2, "sw_alloc_delay": 0, "st_delay": 2,
                           "injection_latency": 3, "ejection_latency": 2}),
]


def lone_packet_latencies(topology, routing, params, pairs, size, engine="components"):
    """Send each (source, dest) packet alone (after the previous one has left) and return
    the measured and analytic latencies in cycles."""
    noc = Noc("net", topology=topology, routing=routing, engine=engine, **params)
    log = []
    for ni in noc.interfaces:
        ni.attach(None, noc.route, None, log)
    sim = Simulator(noc)
    measured, analytic = [], []
    for source, dest in pairs:
        sim.run(until_ps=sim.now + 1000)
        noc.interfaces[source].send_packet(dest, size)
        sim.run(until_ps=sim.now + 200_000)
        packet, arrived = log[-1]
        assert packet.source == source and packet.dest == dest
        measured.append((arrived - packet.created_ps) // 1000)
        analytic.append(noc.zero_load_latency(source, dest, size))
    return measured, analytic


@pytest.mark.parametrize("topology,routing,params", CONFIGS, ids=[f"{t}-{r}-{len(p)}" for t, r, p in CONFIGS])
def test_zero_load_latency_matches_the_pipeline_formula(topology, routing, params):
    terminals = len(Noc("probe", topology=topology, routing=routing, **params).interfaces)
    rng = random.Random(7)
    pairs = [(rng.randrange(terminals), rng.randrange(terminals)) for _ in range(12)]
    for size in (1, 4):
        measured, analytic = lone_packet_latencies(topology, routing, params, pairs, size)
        assert measured == analytic


def test_formula_on_a_mesh_corner_to_corner():
    # 8x8 mesh corner to corner: 2 injection (link and the interface's output register),
    # 15 routers of 3 pipeline cycles (VA, SA, ST), 14 links of 1, 1 ejection, 3 more flits.
    measured, analytic = lone_packet_latencies("mesh(8, 8)", "dor", {}, [(0, 63)], 4)
    assert measured == analytic == [2 + 15 * 3 + 14 * 1 + 1 + 3]


REFERENCE_ROUTER = dict(routing_delay=0, vc_alloc_delay=1, sw_alloc_delay=1, st_delay=1, credit_delay=2,
                        allocator="islip", injection_latency=1, ejection_latency=1)
# BookSim 2's reference router: 6 cycles for a 0-hop packet, 4 more per mesh hop, 5 per torus
# hop over 2-cycle links (VALIDATION.md; issue 18).
MESH_BY_HOPS = [6, 10, 14, 18, 22, 26, 30]
TORUS_BY_HOPS = [6, 11, 16, 21, 26]
MESH_PAIRS = [(0, 0), (0, 1), (0, 2), (0, 3), (0, 11), (0, 12), (0, 20)]  # 0..6 hops on mesh(8, 8)
TORUS_PAIRS = [(0, 0), (0, 1), (0, 5), (0, 6), (0, 10)]  # 0..4 hops on torus(4, 2)


@pytest.mark.parametrize("engine", ["components", "fast"])
def test_zero_load_latency_per_hop_count_is_the_reference_routers(engine):
    mesh = Noc("probe", topology="mesh(8, 8)")
    assert [nx.shortest_path_length(mesh.graph, s, d) for s, d in MESH_PAIRS] == list(range(7))
    torus = Noc("probe", topology="torus(4, 2)")
    assert [nx.shortest_path_length(torus.graph, s, d) for s, d in TORUS_PAIRS] == list(range(5))
    params = dict(REFERENCE_ROUTER, vcs=2, buffer_depth=4)
    measured, analytic = lone_packet_latencies("mesh(8, 8)", "dor", params, MESH_PAIRS, 1, engine)
    assert measured == analytic == MESH_BY_HOPS
    params = dict(REFERENCE_ROUTER, vcs=2, buffer_depth=8, link_latency=2)
    measured, analytic = lone_packet_latencies("torus(4, 2)", "dateline", params, TORUS_PAIRS, 1, engine)
    assert measured == analytic == TORUS_BY_HOPS


def test_the_compiled_loop_gives_the_reference_zero_load_latency_per_hop_count():
    # The compiled loop takes synthetic traffic only: at a very low rate every packet takes at
    # least the zero-load latency of its hop count, and for each hop count 0..6 some packet
    # (one that met no other) takes exactly that.
    noc = Noc("net", topology="mesh(8, 8)", routing="dor", vcs=2, buffer_depth=4, traffic="uniform", rate=0.004,
              warmup_periods=0, sample_period=3000, engine="compiled", **REFERENCE_ROUTER)
    log = []
    for ni in noc.interfaces:
        ni.log = log
    Simulator(noc, seed=5).run()
    least: dict = {}
    for packet, arrived in log:
        hops = nx.shortest_path_length(noc.graph, packet.source, packet.dest)
        latency = (arrived - packet.created_ps) // 1000
        assert latency >= MESH_BY_HOPS[hops] if hops < 7 else latency >= 6 + 4 * hops
        least[hops] = min(latency, least.get(hops, latency))
    assert [least[h] for h in range(7)] == MESH_BY_HOPS
