"""A lone packet's latency equals the analytic per-hop pipeline formula, on every topology and
routing, for several pipeline depths, link latencies and packet sizes."""

import random

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


def lone_packet_latencies(topology, routing, params, pairs, size):
    """Send each (source, dest) packet alone (after the previous one has left) and return
    the measured and analytic latencies in cycles."""
    noc = Noc("net", topology=topology, routing=routing, **params)
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
    # 8x8 mesh corner to corner: 15 routers of 3 pipeline cycles (VA, SA, ST), 14 links of 1,
    # 1 injection, 1 ejection, 3 more flits.
    measured, analytic = lone_packet_latencies("mesh(8, 8)", "dor", {}, [(0, 63)], 4)
    assert measured == analytic == [1 + 15 * 3 + 14 * 1 + 1 + 3]
