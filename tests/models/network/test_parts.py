"""Allocators, the die-to-die link and the router as a .arch topology node."""

from archmodel.models.network import DieToDieLink, islip, separable_input_first
from archmodel.models.network.flit import NetPacket
from archmodel.testing import Harness


def test_islip_finds_a_maximal_matching_with_enough_iterations():
    requests = {0: [0, 1], 1: [0, 1]}
    one = islip(requests, [0] * 2, [0] * 2, 2, 2, iterations=1)
    two = islip(requests, [0] * 2, [0] * 2, 2, 2, iterations=2)
    assert one == {0: 0}  # both outputs grant input 0 first; it accepts only one
    assert two == {0: 0, 1: 1}  # the second round matches what the first left


def test_separable_round_robin_rotates_priority():
    in_ptr, out_ptr = [0, 0], [0]
    winners = [next(iter(separable_input_first({0: [0], 1: [0]}, in_ptr, out_ptr, 2, 1))) for _ in range(4)]
    assert winners == [0, 1, 0, 1]


def test_die_to_die_link_serialises_adds_serdes_latency_and_keeps_order_under_retries():
    flits = [NetPacket(i, 0, 1, 1).flits()[0] for i in range(6)]
    words = [(f, -1) for f in flits]
    link = DieToDieLink("d2d", lanes=8, lane_bits=4, flit_bits=64, serdes_cycles=3)  # 2 cycles per flit
    h = Harness(link, inputs={"inp": words}, outputs={"out": words})
    h.run(max_cycles=100)
    cycles = [c for c, _ in h.sinks["out"].log]
    # word i reaches the link at 1 + i; the link serialises one flit per 2 cycles (last beat
    # at 2 + 2i), 3 cycles of SerDes, then one cycle to the sink
    assert cycles == [2 + 2 * i + 3 + 1 for i in range(6)]
    noisy = DieToDieLink("d2d", lanes=8, lane_bits=4, flit_bits=64, serdes_cycles=3, error_rate=0.01)
    h = Harness(noisy, inputs={"inp": words}, outputs={"out": words})
    h.run(max_cycles=1000)  # the sink checks every word arrives once and in order
    assert noisy.retries.value > 0
    assert noisy.busy_cycles.value == 2 * 6 + noisy.retries.value * (2 + 8)
