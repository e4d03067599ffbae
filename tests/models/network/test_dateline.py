"""Dateline routing on a torus as BookSim 2's ``dim_order_torus``: the VC class a packet takes at
each hop (chosen when it turns into a dimension, kept through it), a tie at distance k/2 broken
by the router's coin for the packet at the turn, and injection on every VC; the coin itself."""

import pytest

from archmodel.kernel import Simulator
from archmodel.models.network import Noc
from archmodel.models.network.flit import NetPacket
from archmodel.models.network.routing import tie_coin


def hops(noc, source, dest):
    """(router, next router or None for the ejection, VC range) at each hop of the route the
    routing function gives a packet injected on VC 0 (ties taken the positive way, as the
    stand-in router's random draw is 0)."""
    pm, route = noc.port_map, noc.route
    r, in_port, in_vc = pm.terminal_router[source], pm.terminal_port[source], 0
    packet = NetPacket(0, source, dest, 1)
    path = []
    while True:
        port, first, end = route.next_hops(r, in_port, in_vc, packet)[0]
        nxt = pm.neighbour[r][port]
        path.append((r, nxt, (first, end)))
        if nxt is None:
            return path
        in_port, in_vc, r = pm.in_port_from[nxt][r], first, nxt


LOW, HIGH, ALL = (0, 2), (2, 4), (0, 4)  # the two classes of 4 VCs, and every VC (ejection)


@pytest.mark.parametrize("source,dest,expected", [
    # x from 3 to 1 the positive way crosses the dateline (3 -> 0): class 1 from the first hop
    # to the last, also after the crossing
    (3, 1, [(3, 0, HIGH), (0, 1, HIGH), (1, None, ALL)]),
    # x from 0 to 1: no crossing, class 0
    (0, 1, [(0, 1, LOW), (1, None, ALL)]),
    # the negative way: BookSim's class is 1 when the destination's coordinate is below the
    # current one, so 1 -> 0 (no crossing) is class 1 and 0 -> 3 (crossing 0 -> 3) class 0
    (1, 0, [(1, 0, HIGH), (0, None, ALL)]),
    (0, 3, [(0, 3, LOW), (3, None, ALL)]),
    # x then y: (3, 1) -> (0, 2) crosses in x (class 1), turns into y from 1 to 2 (class 0)
    (7, 8, [(7, 4, HIGH), (4, 8, LOW), (8, None, ALL)]),
    # (1, 3) -> (2, 0): class 0 in x, then y from 3 to 0 across the dateline, class 1
    (13, 2, [(13, 14, LOW), (14, 2, HIGH), (2, None, ALL)]),
    # a tie (distance 2 of 4) taken the positive way from 2 to 0: crosses, class 1
    (2, 0, [(2, 3, HIGH), (3, 0, HIGH), (0, None, ALL)]),
])
def test_the_dateline_class_of_a_packet_at_each_hop(source, dest, expected):
    noc = Noc("probe", topology="torus(4, 2)", routing="dateline", vcs=4)
    assert hops(noc, source, dest) == expected


@pytest.mark.parametrize("engine", ["components", "fast"])
def test_a_tie_at_half_the_ring_goes_either_way_at_random(engine):
    # 200 packets from (0, 0) to (2, 0), distance 2 both ways round the 4-ring: each head
    # tosses router 0's coin at its turn, so router 1 (positive, coin 0) and router 3
    # (negative, coin 1) carry about half each, exactly as the coins fall; both engines toss
    # the same coins.
    noc = Noc("net", topology="torus(4, 2)", routing="dateline", engine=engine, occupancy_registers=False)
    log = []
    for ni in noc.interfaces:
        ni.attach(None, noc.route, None, log)
    sim = Simulator(noc, seed=4)
    for _ in range(200):
        noc.interfaces[0].send_packet(2, 1)
    sim.run(until_ps=2_000_000)
    assert len(log) == 200
    positive, negative = noc.routers[1].flits.value, noc.routers[3].flits.value
    assert positive + negative == 200
    negative_coins = sum(tie_coin(noc.routers[0].route_key, packet.id) for packet, _ in log)
    assert (positive, negative) == (200 - negative_coins, negative_coins) == (106, 94)


def test_injection_may_use_either_class():
    # One-flit buffers: with injection on class 0 only (VC 0) the second packet would wait
    # for VC 0's credit to come back; on every VC it goes the next cycle, on VC 1.
    noc = Noc("net", topology="torus(4, 2)", routing="dateline", vcs=2, buffer_depth=1)
    log = []
    for ni in noc.interfaces:
        ni.attach(None, noc.route, None, log)
    sim = Simulator(noc)
    first, second = (noc.interfaces[0].send_packet(1, 1) for _ in range(2))
    sim.run(until_ps=100_000)
    assert len(log) == 2
    assert (first.injected_ps, second.injected_ps) == (0, 1000)


def test_the_tie_coin_is_a_fair_hash_of_the_key_and_the_packet_id():
    # a function of its two numbers only (the same however often asked), each 32-bit half of
    # the id counts, and over 10,000 ids of one source the coin falls about evenly
    assert tie_coin(12345, 7) == tie_coin(12345, 7)
    assert {tie_coin(12345, k) for k in range(8)} == {0, 1}
    assert {tie_coin(12345, k << 32) for k in range(8)} == {0, 1}
    assert {tie_coin(key, 99) for key in range(8)} == {0, 1}
    assert sum(tie_coin(2024, (3 << 32) | k) for k in range(10_000)) == 5046
