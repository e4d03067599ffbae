"""The network-level engine gives the per-component network's results cycle for cycle: the same
packets, created, injected and delivered at the same times, on random configurations; it
reports a deadlock with the cycle of waiting VCs named like the component model does."""

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

from archmodel.kernel import DeadlockError, Simulator
from archmodel.models.network import Noc

TOPOLOGIES = [("mesh(4, 4)", "dor"), ("mesh(3, 4)", "odd_even"), ("torus(4, 2)", "dateline"),
              ("fat_tree(2, 3)", "updown"), ("dragonfly(1)", "ugal"), ("ring(6)", "escape")]


def delivered_packets(engine: str, seed: int, **params) -> tuple:
    """Every delivered packet as (id, source, dest, created, injected, arrived), the end time,
    and the measured figures."""
    noc = Noc("net", engine=engine, occupancy_registers=False, **params)
    log = []
    for ni in noc.interfaces:
        ni.log = log
    sim = Simulator(noc, seed=seed, watchdog_cycles=10 ** 9)
    sim.run()
    packets = sorted((p.id, p.source, p.dest, p.created_ps, p.injected_ps, arrived) for p, arrived in log)
    return packets, sim.now, noc.monitor.unstable, sorted(noc.packet_latency.samples), noc.accepted.value


@settings(max_examples=14, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(config=st.sampled_from(TOPOLOGIES), vcs=st.integers(2, 4), depth=st.integers(1, 5),
       packet_size=st.integers(1, 4), rate=st.sampled_from([0.05, 0.2, 0.4, 0.7]),
       allocator=st.sampled_from(["islip", "round_robin"]), iterations=st.integers(1, 2),
       delays=st.tuples(st.integers(0, 1), st.integers(0, 2), st.integers(0, 1), st.integers(0, 2),
                        st.integers(0, 2)),
       tail_credit=st.booleans(), traffic=st.sampled_from(["uniform", "bitcomp", "neighbor"]),
       seed=st.integers(0, 1000))
def test_fast_engine_matches_the_component_network_cycle_for_cycle(config, vcs, depth, packet_size, rate, allocator,
                                                                    iterations, delays, tail_credit, traffic, seed):
    topology, routing = config
    routing_delay, vc_alloc_delay, sw_alloc_delay, st_delay, credit_delay = delays
    if routing == "ugal":
        vcs = max(vcs, 3)
    params = dict(topology=topology, routing=routing, vcs=vcs, buffer_depth=depth, packet_size=packet_size,
                  rate=rate, allocator=allocator, alloc_iterations=iterations, routing_delay=routing_delay,
                  vc_alloc_delay=vc_alloc_delay, sw_alloc_delay=sw_alloc_delay, st_delay=st_delay,
                  credit_delay=credit_delay, wait_for_tail_credit=tail_credit,
                  traffic=traffic if topology in ("mesh(4, 4)", "torus(4, 2)") else "uniform",
                  warmup_periods=1, sample_period=150, drain_limit=600, watchdog=400)
    components = delivered_packets("components", seed, **params)
    fast = delivered_packets("fast", seed, **params)
    assert len(components[0]) > 0
    assert fast == components


def test_fast_engine_matches_on_the_reference_mesh_near_saturation():
    params = dict(topology="mesh(8, 8)", routing="dor", vcs=2, buffer_depth=4, credit_delay=2, traffic="transpose",
                  rate=0.15, warmup_periods=1, sample_period=200, drain_limit=1000)
    assert delivered_packets("fast", 1, **params) == delivered_packets("components", 1, **params)


def test_fast_engine_trace_packets_arrive_with_the_zero_load_latency(tmp_path):
    path = tmp_path / "spaced.trace"
    path.write_text("".join(f"{100 * i} {i % 16} {(7 * i) % 16} {1 + i % 3}\n" for i in range(12)))
    noc = Noc("net", topology="mesh(4, 4)", trace_file=str(path), engine="fast")
    Simulator(noc).run()
    assert list(noc.packet_latency.samples) == [noc.zero_load_latency(i % 16, (7 * i) % 16, 1 + i % 3)
                                                for i in range(12)]


@pytest.mark.parametrize("topology", ["ring(8)", "torus(4, 2)"])
def test_fast_engine_reports_a_deadlock_with_the_cycle_of_waiting_vcs(topology):
    noc = Noc("net", topology=topology, routing="dor", vcs=1, buffer_depth=2, traffic="uniform", rate=1.0,
              packet_size=8, watchdog=200, engine="fast")
    with pytest.raises(DeadlockError) as caught:
        Simulator(noc, seed=0).run()
    message = str(caught.value)
    assert "none moved for 200 cycles" in message
    cycle = re.search(r"wait cycle: (.*)", message).group(1).split(" -> ")
    assert cycle[0] == cycle[-1] and len(cycle) >= 3
    assert all(re.fullmatch(r"net\.router\[\d+\]\.inp\[\d\]\.vc0", name) for name in cycle)
