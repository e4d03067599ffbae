"""Routers and interfaces tell the kernel's lookahead truthful bounds (earliest sends per
output port, reactions per input and output), on both Python network engines."""

import pytest

from archmodel.kernel import Component, ModelAssertion, Simulator
from archmodel.models.network import Noc
from archmodel.models.network.flit import NO_CREDIT, NetPacket


def test_a_router_the_fast_engine_steps_fails_with_its_path_and_time():
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", engine="fast")
    sim = Simulator(top)
    sim.run(cycles=3)
    body = NetPacket(7, 0, 3, 2).flits()[1]  # a body flit with no packet in progress
    with pytest.raises(ModelAssertion, match=r"top\.net\.router\[0\] at \d+ ps: inp\[0\] vc0: .* arrived with no "
                                             r"packet in progress"):
        noc.routers[0].take(0, body, NO_CREDIT, sim.now)
