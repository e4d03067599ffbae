"""The compiled network loop (``Noc(engine="compiled")``) gives the Python engine's results
exactly in BookSim's reference configuration: the same packets (id, source, destination)
created, injected and delivered at the same times, the same end of run (measured or unstable,
at the same edge) and the same statistics table (every statistic of the Noc, its routers and
interfaces), on the 8x8 mesh with both reference VC configurations, three patterns and rates
from low load to past saturation, with one- and two-iteration iSLIP, the VC held for the tail's
credit or not, and either stability rule. Configurations it does not model are refused by name."""

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


@pytest.mark.parametrize("change, reason", [
    (dict(packet_size=2), "single-flit"),
    (dict(allocator="round_robin"), "islip"),
    (dict(topology="torus(4, 2)", routing="dateline"), "one output port and every VC"),
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
