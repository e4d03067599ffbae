"""A controller's bound on its next response to one client, against its bound to anyone."""

import random

import pytest

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import PRESETS, DramController
from archmodel.models.memory.timing import dram_clock
from archmodel.models.messages import MemRequest

from .test_splitting import _random_requests


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize("seed", range(3))
def test_a_controllers_bound_to_anyone_is_the_least_of_its_bounds_to_each_client(seed, engine):
    # The bound to anyone (earliest_send_ps on resp) counts each client's oldest request
    # here and each client's first request on its way, as the bound to one client
    # (earliest_answer_ps) counts that client's: so it is the least of those, exactly. A
    # client asked about with a request here has none of its first on the way (the walk
    # over the requests on their way is skipped then): the questions with a request of the
    # client both here and on its way must still agree.
    standard = "HBM2E"
    requests = _random_requests(seed, 60, 1 << 13, 0)
    cycles = sorted(random.Random(seed + 1).randrange(0, 300) for _ in requests)
    top = Component("top", clock=dram_clock(PRESETS[standard]))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, read_queue=4, write_queue=4, engine=engine)
    sink = Sink("sink", top, stop_after=len(requests))
    connect(src.out, dram.req, latency=3)
    connect(dram.resp, sink.inp, latency=1)
    sim = Simulator(top, seed=seed)
    period = dram.domain.period_ps
    both = 0  # questions about a client with a request here and another on its way
    t = period // 3
    while sim.run(until_ps=t).reason == "limit":
        bounds = [dram.earliest_answer_ps(client) for client in "abc"]
        known = [bound for bound in bounds if bound is not None]
        assert dram.earliest_send_ps(dram.resp) == min(known, default=None), t
        on_the_way = [message.source for _, message in dram.req.channel.flight]
        arrived = [message.source for message in requests[:dram.req.channel.sent]]
        answered = [message.source for message in sink.messages] + \
            [message.source for _, message in dram.resp.channel.flight]
        for client in "abc":
            here = arrived.count(client) - on_the_way.count(client) - answered.count(client)
            both += here > 0 and client in on_the_way
        t += period // 2
    assert len(sink.messages) == len(requests)
    assert both > 20, both


def test_a_bound_to_one_client_walks_the_requests_on_their_way_only_up_to_its_first(monkeypatch):
    # A client with nothing here is bounded by its first request on its way alone: the
    # walk over the requests on their way (each looked at for the writes ahead of it)
    # stops there, and is spared for a client that sends none.
    standard = "HBM2E"
    requests = [MemRequest(address=64 * tag, size_bytes=64, source="a" if tag else "b", tag=tag) for tag in range(9)]
    top = Component("top", clock=dram_clock(PRESETS[standard]))
    src = Source("src", top, pattern="list", messages=requests, cycles=list(range(9)), wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, engine="python")
    sink = Sink("sink", top, stop_after=len(requests))
    connect(src.out, dram.req, latency=40)
    connect(dram.resp, sink.inp, latency=1)
    sim = Simulator(top, seed=0)
    sim.run(until_ps=20 * dram.domain.period_ps)
    assert len(dram.req.channel.flight) == 9
    looked_at = []
    may_forward = dram._may_forward
    monkeypatch.setattr(dram, "_may_forward", lambda message, writes: looked_at.append(message) or may_forward(
        message, writes))
    bounds = {}
    for client in "zba":
        dram.forget_bounds()
        looked_at.clear()
        bounds[client] = dram.earliest_answer_ps(client), list(looked_at)
    assert bounds["z"] == (None, [])
    assert bounds["b"][0] is not None and {message.source for message in bounds["b"][1]} == {"b"}
    assert bounds["a"][0] is not None and all(message.tag <= 1 for message in bounds["a"][1])
