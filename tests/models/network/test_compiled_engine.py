"""The compiled network loop (``Noc(engine="compiled")``) gives the Python engine's results
exactly in BookSim's reference configuration: the same packets (id, source, destination)
created, injected and delivered at the same times, the same end of run (measured or unstable,
at the same edge) and the same statistics table (every statistic of the Noc, its routers and
interfaces), on the 8x8 mesh with both reference VC configurations, three patterns and rates
from low load to past saturation, with one- and two-iteration iSLIP, the VC held for the tail's
credit or not, and either stability rule; likewise dateline routing on tori and rings of several
sizes and VC counts, whose ties at k/2 both engines break with the router's coin for the packet.
Configurations it does not model are refused by name."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from archmodel.kernel import ParameterError, Simulator
from archmodel.models.network import Noc

from .test_engine import delivered_packets

REFERENCE = dict(topology="mesh(8, 8)", routing="dor", routing_delay=0, vc_alloc_delay=1, sw_alloc_delay=1,
                 st_delay=1, credit_delay=2, allocator="islip", injection_latency=1, ejection_latency=1,
                 link_latency=1, packet_size=1)
VCS = {"16x8": dict(vcs=16, buffer_depth=8), "2x4": dict(vcs=2, buffer_depth=4)}


@pytest.mark.parametrize("vcs, traffic, rate, seed", [
    ("16x8", "uniform", 0.01, 1), ("2x4", "uniform", 0.1, 2), ("16x8", "uniform", 0.3, 3),
    ("2x4", "uniform", 0.45, 4), ("16x8", "uniform", 0.8, 5),
    ("2x4", "transpose", 0.05, 6), ("16x8", "transpose", 0.3, 7),
    ("16x8", "bitcomp", 0.15, 8), ("2x4", "bitcomp", 0.5, 9),
])
def test_compiled_engine_matches_the_python_engine_packet_for_packet(vcs, traffic, rate, seed):
    params = dict(REFERENCE, **VCS[vcs], traffic=traffic, rate=rate, warmup_periods=1, sample_period=150,
                  drain_limit=300, watchdog=100)
    fast = delivered_packets("fast", seed, **params)
    compiled = delivered_packets("compiled", seed, **params)
    assert len(fast[0]) > 0
    assert compiled == fast


def test_past_saturation_both_engines_give_up_at_the_same_check():
    params = dict(REFERENCE, **VCS["2x4"], traffic="uniform", rate=0.9, warmup_periods=1, sample_period=100,
                  drain_limit=150, watchdog=50)
    fast = delivered_packets("fast", 11, **params)
    assert fast[2] is True
    assert delivered_packets("compiled", 11, **params) == fast


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(vcs=st.sampled_from(sorted(VCS)), traffic=st.sampled_from(["uniform", "transpose", "bitcomp"]),
       rate=st.sampled_from([0.05, 0.15, 0.3, 0.6]), iterations=st.integers(1, 2), tail_credit=st.booleans(),
       stability=st.sampled_from(["latency", "drain"]), seed=st.integers(0, 1000))
def test_two_iteration_islip_and_the_tail_credit_rule_match_the_python_engine(vcs, traffic, rate, iterations,
                                                                               tail_credit, stability, seed):
    params = dict(REFERENCE, **VCS[vcs], traffic=traffic, rate=rate, alloc_iterations=iterations,
                  wait_for_tail_credit=tail_credit, stability=stability, latency_threshold=60, warmup_periods=1,
                  sample_period=100, drain_limit=250, watchdog=100)
    fast = delivered_packets("fast", seed, **params)
    assert len(fast[0]) > 0
    assert delivered_packets("compiled", seed, **params) == fast


# Tori and rings of several sizes with the patterns each takes: ties at k/2 where k is even
# (the router's coin), none where it is odd, three dimensions in torus(4, 3).
TORI = [("torus(4, 2)", "uniform"), ("torus(4, 2)", "transpose"), ("torus(4, 2)", "bitcomp"),
        ("torus(4, 2)", "tornado"), ("torus(3, 2)", "uniform"), ("torus(5, 2)", "neighbor"),
        ("torus(6, 2)", "uniform"), ("ring(8)", "uniform"), ("torus(4, 3)", "uniform"), ("torus(4, 3)", "transpose")]


@settings(max_examples=14, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(config=st.sampled_from(TORI), vcs=st.sampled_from([2, 3, 4, 16]), depth=st.sampled_from([1, 2, 4, 8]),
       rate=st.sampled_from([0.05, 0.2, 0.4, 0.7]), iterations=st.integers(1, 2), tail_credit=st.booleans(),
       link=st.integers(1, 2), stability=st.sampled_from(["latency", "drain"]), seed=st.integers(0, 1000))
def test_dateline_routing_on_tori_matches_the_python_engine(config, vcs, depth, rate, iterations, tail_credit,
                                                             link, stability, seed):
    topology, traffic = config
    params = dict(REFERENCE, topology=topology, routing="dateline", vcs=vcs, buffer_depth=depth, link_latency=link,
                  traffic=traffic, rate=rate, alloc_iterations=iterations, wait_for_tail_credit=tail_credit,
                  stability=stability, latency_threshold=80, warmup_periods=1, sample_period=100, drain_limit=250,
                  watchdog=100)
    fast = delivered_packets("fast", seed, **params)
    assert len(fast[0]) > 0
    assert delivered_packets("compiled", seed, **params) == fast


@pytest.mark.parametrize("vcs, depth", [(2, 8), (16, 8), (2, 4)])
def test_the_reference_torus_runs_compiled_with_ties_both_ways(vcs, depth):
    # BookSim's 4x4 torus configurations (VALIDATION.md) under uniform traffic near their
    # knee: the same packets, and the ties at distance 2 went both ways (the coin is tossed).
    params = dict(REFERENCE, topology="torus(4, 2)", routing="dateline", vcs=vcs, buffer_depth=depth,
                  link_latency=2, traffic="uniform", rate=0.5, warmup_periods=1, sample_period=200,
                  drain_limit=500, watchdog=100)
    fast = delivered_packets("fast", 5, **params)
    assert delivered_packets("compiled", 5, **params) == fast
    noc = Noc("probe", **params)
    ties = [(r, d) for r in range(16) for d in range(16) if noc.route.table(r)[0, 0][d][1] is not None]
    # injected at each router: the 4 destinations at x distance 2 tie there, and the one in
    # the same column at y distance 2 (the others at y distance 2 tie where they turn into y)
    assert len(ties) == 16 * 5
    assert noc.route.table(0)[0, 0][2] == (((noc.port_map.port_to[0][1], 0, vcs // 2),),
                                           ((noc.port_map.port_to[0][3], 0, vcs // 2),))


def test_the_compiled_coin_is_the_python_coin():
    from archmodel.models.network import compiled_loop
    from archmodel.models.network.routing import tie_coin
    import random

    jitted = compiled_loop.tie_coin  # the coin as the loops call it
    rng = random.Random(18)
    for _ in range(2000):
        key, pid = rng.getrandbits(32), (rng.getrandbits(20) << 32) | rng.getrandbits(32)
        assert jitted(key, pid) == tie_coin(key, pid)


# Multi-flit packets (wormhole: a packet holds its output VC from head to tail, its body flits
# follow it through the switch, a VC of one flit's depth stalls every flit on its credit), on
# the reference mesh and on tori with dateline routing, where heads wait behind tails.
MULTI_FLIT = [("mesh(8, 8)", "dor", "uniform"), ("mesh(8, 8)", "dor", "transpose"), ("mesh(4, 4)", "dor", "bitcomp"),
              ("torus(4, 2)", "dateline", "uniform"), ("ring(6)", "dateline", "tornado")]


@settings(max_examples=14, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(config=st.sampled_from(MULTI_FLIT), packet_size=st.integers(2, 6), vcs=st.sampled_from([2, 3, 16]),
       depth=st.sampled_from([1, 2, 4, 8]), rate=st.sampled_from([0.05, 0.2, 0.4, 0.7]),
       iterations=st.integers(1, 2), tail_credit=st.booleans(), link=st.integers(1, 2), seed=st.integers(0, 1000))
def test_multi_flit_packets_match_the_python_engine_packet_for_packet(config, packet_size, vcs, depth, rate,
                                                                      iterations, tail_credit, link, seed):
    topology, routing, traffic = config
    params = dict(REFERENCE, topology=topology, routing=routing, vcs=vcs, buffer_depth=depth, link_latency=link,
                  packet_size=packet_size, traffic=traffic, rate=rate, alloc_iterations=iterations,
                  wait_for_tail_credit=tail_credit, warmup_periods=1, sample_period=120, drain_limit=300,
                  watchdog=100)
    fast = delivered_packets("fast", seed, **params)
    assert len(fast[0]) > 0
    assert delivered_packets("compiled", seed, **params) == fast


@pytest.mark.parametrize("change, reason", [
    (dict(packet_size=1 << 14), "packet_size 16384 \\(only below 16384 flits\\)"),
    (dict(allocator="round_robin"), "islip"),
    (dict(routing="west_first"), "one output port per hop"),
    (dict(topology="mesh(4, 4)", routing="odd_even"), "one output port per hop"),
    (dict(injection="onoff"), "bernoulli"),
])
def test_unsupported_configurations_are_refused_by_name(change, reason):
    params = dict(REFERENCE, **VCS["2x4"], traffic="uniform", rate=0.1, warmup_periods=1, sample_period=50)
    params.update(change)
    with pytest.raises(ParameterError, match=reason):
        Simulator(Noc("net", engine="compiled", **params), seed=1).run()


@pytest.mark.parametrize("rule", ["latency", "drain"])
def test_both_engines_cross_the_latency_threshold_at_the_same_boundary(rule):
    params = dict(REFERENCE, **VCS["2x4"], traffic="uniform", rate=0.6, warmup_periods=2, sample_period=60,
                  drain_limit=200, watchdog=100, stability=rule, latency_threshold=40)
    ends = {}
    for engine in ("fast", "compiled"):
        noc = Noc("net", engine=engine, occupancy_registers=False, **params)
        sim = Simulator(noc, seed=3, watchdog_cycles=10 ** 9)
        sim.run()
        ends[engine] = (sim.stopped, sim.now, noc.measurement.exceeded_ps, noc.packet_latency.count)
    assert ends["compiled"] == ends["fast"]
    stopped, now, exceeded, _ = ends["fast"]
    assert exceeded is not None and exceeded % 60_000 == 0
    assert (stopped, now == exceeded) == (("unstable", True) if rule == "latency" else (stopped, False))
