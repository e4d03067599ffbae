"""The network-level engine gives the per-component network's results cycle for cycle: the same
packets, created, injected and delivered at the same times, and the same statistics table (every
statistic of every router and interface, by name and value), on random configurations; it
reports a deadlock with the component network's message, naming the cycle of waiting VCs, and
ends a run past its drain limit at the same check."""

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
    whether the run was unstable, the measured figures, and the statistics table as (name,
    summary) rows in report order (last)."""
    noc = Noc("net", engine=engine, occupancy_registers=False, **params)
    log = []
    for ni in noc.interfaces:
        ni.log = log
    sim = Simulator(noc, seed=seed, watchdog_cycles=10 ** 9)
    sim.run()
    packets = sorted((p.id, p.source, p.dest, p.created_ps, p.injected_ps, arrived) for p, arrived in log)
    table = [(stat.path, stat.summary()) for stat in sim.all_stats()]
    return (packets, sim.now, noc.monitor.unstable, sorted(noc.packet_latency.samples),
            sorted(noc.network_latency.samples), noc.accepted.value, noc.offered.value, table)


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
    fast = delivered_packets("fast", 1, **params)
    assert fast == delivered_packets("components", 1, **params)
    table = dict(fast[-1])
    # every router's and interface's statistics are reported, and the comparison saw real values
    for name, size in (("router", 64), ("ni", 64)):
        parts = {path.rsplit(".", 1)[0] for path in table if path.startswith(f"net.{name}[")}
        assert parts == {f"net.{name}[{i}]" for i in range(size)}
    assert sum(table[f"net.router[{r}].va_stalls"]["value"] for r in range(64)) > 0
    assert sum(table[f"net.ni[{t}].delivered"]["value"] for t in range(64)) == len(fast[0])


def test_fast_engine_trace_packets_arrive_with_the_zero_load_latency(tmp_path):
    path = tmp_path / "spaced.trace"
    path.write_text("".join(f"{100 * i} {i % 16} {(7 * i) % 16} {1 + i % 3}\n" for i in range(12)))
    noc = Noc("net", topology="mesh(4, 4)", trace_file=str(path), engine="fast")
    Simulator(noc).run()
    assert list(noc.packet_latency.samples) == [noc.zero_load_latency(i % 16, (7 * i) % 16, 1 + i % 3)
                                                for i in range(12)]


def deadlock_message(engine: str, topology: str, trace_file: str = "") -> str:
    """The DeadlockError message of a cyclic routing (DOR on a ring or torus, one VC) under
    saturating synthetic traffic, or under a trace that stops creating packets."""
    traffic = dict(trace_file=trace_file) if trace_file else dict(traffic="uniform", rate=1.0, packet_size=8)
    noc = Noc("net", topology=topology, routing="dor", vcs=1, buffer_depth=2, watchdog=200, engine=engine, **traffic)
    with pytest.raises(DeadlockError) as caught:
        Simulator(noc, seed=3).run()  # seed 0 and 4 happen to drain to the limit on the torus
    return str(caught.value)


@pytest.mark.parametrize("topology,traced", [("ring(8)", False), ("torus(4, 2)", False), ("ring(8)", True)])
def test_fast_engine_reports_the_deadlock_of_the_component_network(topology, traced, tmp_path):
    # With the trace nothing is created after the deadlock, so the engine sleeps between its
    # checks: it must still wake for them rather than leave the kernel to find everyone asleep.
    trace = ""
    if traced:
        trace = tmp_path / "burst.trace"
        trace.write_text("".join(f"{i // 4} {i % 8} {(5 * i + 3) % 8} 8\n" for i in range(200)))
    message = deadlock_message("fast", topology, str(trace))
    assert message == deadlock_message("components", topology, str(trace))
    assert "none moved for 200 cycles" in message
    cycle = re.search(r"wait cycle: (.*)", message).group(1).split(" -> ")
    assert cycle[0] == cycle[-1] and len(cycle) >= 3
    assert all(re.fullmatch(r"net\.router\[\d+\]\.inp\[\d\]\.vc0", name) for name in cycle)


def run_end(engine: str, seed: int, **params) -> tuple:
    """How a run ended: the stop reason, the time, whether unstable, and measured packets delivered."""
    noc = Noc("net", engine=engine, occupancy_registers=False, **params)
    sim = Simulator(noc, seed=seed, watchdog_cycles=10 ** 9)
    sim.run()
    return sim.stopped, sim.now, noc.monitor.unstable, noc.packet_latency.count


@pytest.mark.parametrize("engine", ["components", "fast"])
def test_a_measured_flit_on_a_link_keeps_the_drain_checks_on_schedule(engine, tmp_path):
    # One packet at cycle 0 over a 30-cycle link: the window closes at cycle 1 and the checks
    # come every 4 cycles from there. At cycle 5 the flit is on the link, with nothing buffered
    # or queued, and the drain limit (cycle 6) not reached; the check at cycle 9 is past it, so
    # the run is unstable there, long before the packet arrives (cycle 38).
    trace = tmp_path / "one.trace"
    trace.write_text("0 0 1 1\n")
    assert run_end(engine, 0, topology="mesh(2, 1)", link_latency=30, trace_file=str(trace), drain_limit=5,
                   watchdog=4) == ("unstable", 9000, True, 0)


@pytest.mark.parametrize("rate,drain_limit,watchdog,seed", [(0.02, 20, 11, 34), (0.02, 3, 50, 0), (0.1, 20, 7, 2),
                                                            (0.3, 60, 7, 0), (0.6, 20, 50, 1), (0.6, 60, 7, 2)])
def test_both_engines_end_a_run_near_the_drain_limit_alike(rate, drain_limit, watchdog, seed):
    params = dict(topology="mesh(4, 4)", routing="dor", traffic="uniform", rate=rate, packet_size=2, vcs=2,
                  buffer_depth=2, warmup_periods=1, sample_period=100, drain_limit=drain_limit, watchdog=watchdog)
    fast = run_end("fast", seed, **params)
    assert fast == run_end("components", seed, **params)
    if (rate, drain_limit, watchdog, seed) == (0.02, 20, 11, 34):
        # the last measured packet arrives at the check that passes the drain limit (cycle 222,
        # checks at 211 and 222 from the window's end at 200, the limit at 220): measured
        assert fast == ("measured", 222000, False, 20)



def packets_sent_between_runs(engine: str) -> tuple:
    """Send packets from Python before the first run and between runs: twice while packets are
    in flight (two at once from one interface the second time), once after the network went
    idle. Returns the packets as (source, dest, created, injected, arrived), each run's end
    time, and the idle network's time when the last packet was sent."""
    noc = Noc("net", engine=engine, topology="mesh(3, 3)", routing="dor", occupancy_registers=False)
    log = []
    for ni in noc.interfaces:
        ni.log = log
    sim = Simulator(noc, seed=1)
    noc.interfaces[0].send_packet(8, 3)
    ends = []
    for until, sends in ((10_500, [(2, 6, 2)]), (20_000, [(4, 0, 1), (4, 7, 2)]), (200_000, [(8, 1, 4)])):
        ends.append(sim.run(until_ps=until).time_ps)
        for source, dest, size in sends:
            noc.interfaces[source].send_packet(dest, size)
    idle_at = sim.now
    sim.run(until_ps=400_000)
    packets = sorted(((p.source, p.dest, p.created_ps, p.injected_ps, arrived) for p, arrived in log),
                     key=lambda packet: packet[2])
    return packets, ends[:2], idle_at


def test_a_packet_sent_between_runs_is_created_and_delivered_alike_under_both_engines():
    components, fast = packets_sent_between_runs("components"), packets_sent_between_runs("fast")
    for packets, ends, idle_at in (components, fast):
        # A run ends at its limit; a packet is created at the next edge, when the interface sees it.
        assert ends == [10_500, 20_000]
        assert [created for _, _, created, _, _ in packets] == [0, 11_000, 21_000, 21_000, idle_at + 1000]
    # Both engines create and deliver the same packets at the same times, including the one
    # sent when the network was idle (created at the edge after the run's limit).
    assert components == fast
    assert fast[2] == 200_000
    (*_, created, injected, arrived) = fast[0][4]
    assert injected == created
    noc = Noc("probe", topology="mesh(3, 3)", routing="dor")
    assert (arrived - created) // 1000 == noc.zero_load_latency(8, 1, 4)


@pytest.mark.parametrize("engine", ["components", "fast"])
def test_a_busy_network_outlasts_a_kernel_watchdog_window_shorter_than_its_run(engine):
    # flits move inside the fast engine on no kernel channel; it tells the watchdog so
    noc = Noc("net", topology="mesh(8, 8)", routing="dor", traffic="uniform", rate=0.1, warmup_periods=1,
              sample_period=300,
              engine=engine)
    sim = Simulator(noc, watchdog_cycles=200)
    sim.run()  # no DeadlockError
    assert sim.now > 400_000


def test_engine_auto_takes_the_compiled_loop_where_it_applies_and_python_is_the_reference():
    reference = dict(topology="mesh(4, 4)", routing="dor", traffic="uniform", rate=0.1, warmup_periods=1,
                     sample_period=200)
    runs = {}
    for engine, params in [("auto", reference), ("compiled", reference), ("python", reference),
                           ("auto", dict(reference, routing="odd_even")), ("fast", dict(reference, routing="odd_even"))]:
        noc = Noc("net", engine=engine, **params)
        sim = Simulator(noc, seed=2)
        sim.run()
        runs[engine, params["routing"]] = (noc.stepping, sim.now, sorted(noc.packet_latency.samples))
    assert runs["auto", "dor"][0] == "compiled" and runs["python", "dor"][0] == "components"
    assert runs["auto", "odd_even"][0] == "fast"  # the loop routes dor only
    assert runs["auto", "dor"][1:] == runs["compiled", "dor"][1:] == runs["python", "dor"][1:]
    assert runs["auto", "odd_even"][1:] == runs["fast", "odd_even"][1:]
