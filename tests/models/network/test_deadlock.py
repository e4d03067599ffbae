"""Deadlock-free routing stays live under saturating load; a cyclic routing is caught with the
cycle of waiting VCs named."""

import re

import pytest

from archmodel.kernel import DeadlockError, Simulator
from archmodel.models.network import Noc


@pytest.mark.parametrize("topology,routing", [("torus(4, 2)", "dateline"), ("ring(8)", "dateline"),
                                               ("torus(4, 2)", "updown"), ("ring(8)", "updown"),
                                               ("full_mesh(5)", "updown"), ("torus(3, 2)", "escape")])
def test_deadlock_free_routing_keeps_moving_under_saturating_load(topology, routing):
    noc = Noc("net", topology=topology, routing=routing, vcs=2, buffer_depth=2, traffic="uniform", rate=1.0,
              packet_size=8, watchdog=200, warmup_periods=2, sample_period=500, drain_limit=1500)
    sim = Simulator(noc, seed=3)
    sim.run()  # a deadlock would raise within 200 cycles
    assert noc.accepted.value > 0.05
    assert sum(r.flits.value for r in noc.routers) > 1000


def test_odd_even_routing_needs_no_vcs_to_stay_live_under_saturating_load():
    noc = Noc("net", topology="mesh(4, 4)", routing="odd_even", vcs=1, buffer_depth=2, traffic="uniform", rate=1.0,
              packet_size=8, watchdog=200, warmup_periods=2, sample_period=500, drain_limit=1500)
    Simulator(noc, seed=3).run()
    assert noc.accepted.value > 0.05


@pytest.mark.parametrize("topology", ["ring(8)", "torus(4, 2)"])
def test_cyclic_routing_deadlocks_and_the_watchdog_names_the_cycle(topology):
    noc = Noc("net", topology=topology, routing="dor", vcs=1, buffer_depth=2, traffic="uniform", rate=1.0,
              packet_size=8, watchdog=200)
    with pytest.raises(DeadlockError) as caught:
        Simulator(noc, seed=3).run()  # a deadlock is likely, not certain: seeds 0 and 4 reach the drain limit
    message = str(caught.value)
    assert "none moved for 200 cycles" in message
    cycle = re.search(r"wait cycle: (.*)", message).group(1).split(" -> ")
    assert cycle[0] == cycle[-1] and len(cycle) >= 3
    assert all(re.fullmatch(r"net\.router\[\d+\]\.inp\[\d\]\.vc0", name) for name in cycle)
    # consecutive VCs of the cycle are on neighbouring routers or the same router
    routers = [int(re.search(r"router\[(\d+)\]", name).group(1)) for name in cycle]
    graph = noc.graph
    assert all(a == b or graph.has_edge(a, b) for a, b in zip(routers, routers[1:]))


RING_ARCH = """
module RingOfRouters(nodes: int = 6) {
    clock noc = 1 GHz
    net : topology ring(nodes, local_ports = 1)
          of NocRouter(topology = "ring(6)", routing = "dor", vcs = 1, buffer_depth = 2)
    ni[nodes] : NetworkInterface(terminals = nodes, vcs = 1, buffer_depth = 2, traffic = "uniform",
                                 rate = 1.0, packet_size = 8)
    for n in 0 .. nodes {
        ni[n].to_router -> net.node[n].inp[0]
        net.node[n].out[0] -> ni[n].from_router
    }
}
"""


def test_routers_of_a_topology_statement_report_a_deadlock_to_the_kernel_watchdog(tmp_path):
    # No Noc and no monitor here: the routers tell the kernel what they hold and whom they wait
    # on, and its watchdog names the cycle of routers.
    from archmodel.lang import load

    path = tmp_path / "ring.arch"
    path.write_text(RING_ARCH)
    top = load(path, top="RingOfRouters").top
    with pytest.raises(DeadlockError) as caught:
        Simulator(top, seed=0, watchdog_cycles=300).run(cycles=100_000)
    message = str(caught.value)
    held = re.findall(r"RingOfRouters\.net\.node\[\d\] holds (\d+) flits", message)
    assert held and all(int(n) > 0 for n in held)
    cycle = re.search(r"wait cycle: (.*)", message).group(1).split(" -> ")
    assert cycle[0] == cycle[-1] and len(cycle) >= 3
    nodes = [int(re.fullmatch(r"RingOfRouters\.net\.node\[(\d)\]", name).group(1)) for name in cycle]
    # each router waits on a neighbour, all the way round the ring in one direction
    steps = {(b - a) % 6 for a, b in zip(nodes, nodes[1:])}
    assert steps in ({1}, {5}) and len(set(nodes)) == 6
