"""Under random load no flit is lost, duplicated or reordered within its packet; the same seed
gives the same statistics whatever the tick order."""

from hypothesis import given, settings, strategies as st

from archmodel.kernel import Simulator
from archmodel.models.network import Noc

NETWORKS = [("mesh(3, 3)", "dor", 2), ("mesh(3, 3)", "west_first", 2), ("mesh(4, 3)", "odd_even", 1),
            ("torus(3, 2)", "dateline", 2),
            ("fat_tree(2, 2)", "updown", 1), ("dragonfly(1)", "valiant", 3), ("ring(5)", "escape", 2)]


def drive(noc, cycles, seed, shuffle=False):
    """Run traffic for ``cycles``, stop the generators, drain, and return the delivery log."""
    log = []
    for ni in noc.interfaces:
        ni.attach(None, noc.route, ni.dims, log)
    sim = Simulator(noc, seed=seed, shuffle=shuffle)
    sim.run(cycles=cycles)
    for ni in noc.interfaces:
        ni.next_packet_ps = None
    result = sim.run(until_ps=sim.now + 100_000_000)
    assert result.reason == "quiescent"
    return log


@settings(max_examples=10, deadline=None, derandomize=True)
@given(network=st.sampled_from(NETWORKS), rate=st.floats(0.05, 0.6), size=st.integers(1, 5),
       depth=st.integers(1, 4), extra_vcs=st.integers(0, 2), allocator=st.sampled_from(["islip", "round_robin"]),
       wait_tail=st.booleans(), seed=st.integers(0, 1000))
def test_every_packet_arrives_once_whole_and_in_order(network, rate, size, depth, extra_vcs, allocator, wait_tail, seed):
    topology, routing, vcs = network
    noc = Noc("net", topology=topology, routing=routing, vcs=vcs + extra_vcs, buffer_depth=depth,
              traffic="uniform", rate=rate, packet_size=size, allocator=allocator, wait_for_tail_credit=wait_tail,
              credit_delay=seed % 3, stop_when_measured=False)
    log = drive(noc, 300, seed)  # the interfaces fail the run on a flit out of order in its packet
    created = sum(ni.created.value for ni in noc.interfaces)
    ids = [packet.id for packet, _ in log]
    assert len(ids) == len(set(ids)) == created > 0
    injected = sum(ni.injected_flits.value for ni in noc.interfaces)
    assert injected == sum(ni.ejected_flits.value for ni in noc.interfaces) == created * size
    assert sum(r.buffered for r in noc.routers) == 0
    for router in noc.routers:  # every credit came home
        assert router.ovc_credits == [depth] * len(router.ovc_credits)


def test_same_seed_same_statistics_in_any_tick_order():
    def figures(shuffle):
        noc = Noc("net", topology="mesh(3, 3)", vcs=2, traffic="uniform", rate=0.4, packet_size=3,
                  warmup_periods=1, sample_period=200)
        sim = Simulator(noc, seed=5, shuffle=shuffle, shuffle_seed=11)
        sim.run()
        return sorted(noc.packet_latency.samples), noc.accepted.value, sim.now
    assert figures(False) == figures(True)
