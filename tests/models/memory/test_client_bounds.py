"""A controller's bound on its next response to one client, against its bound to anyone."""

import random

import pytest

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import PRESETS, DramController
from archmodel.models.memory.timing import dram_clock

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
