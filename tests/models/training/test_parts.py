"""GPUs, host memory and NICs: exact hop times, routes from the wiring, memory accounting."""

import pytest

from archmodel.kernel import ClockDomain, Component, ModelAssertion, Simulator, connect
from archmodel.models.training import (Gpu, HostMemory, Nic, RankProgram, Send, Task, install_routes, link_class)


def pair(a, b, width, latency):
    """Link a's next free port pair to b's (one channel each way); returns the channels."""
    ia = next(i for i, port in enumerate(a.out) if port.channel is None)
    ib = next(i for i, port in enumerate(b.out) if port.channel is None)
    return (connect(a.out[ia], b.inp[ib], latency=latency, width_bits=width),
            connect(b.out[ib], a.inp[ia], latency=latency, width_bits=width))


def test_a_host_write_and_read_take_their_hops_to_the_cycle():
    top = Component("top", clock=ClockDomain("clk", 1000))
    gpu = Gpu("gpu", top, links=1)
    host = HostMemory("host", top, links=1)
    pair(gpu, host, 256, 50)
    install_routes([gpu, host], {gpu: 0, host: 1})
    write = RankProgram((Send(1, 32_000, "w"),), ("w",))
    read = RankProgram((Send(1, 32_000, "r", request=True),), ("r",))
    gpu.load([Task("cache", "host", "comm", program=write), Task("fetch", "host", "comm", program=read)])
    Simulator(top).run()
    cache, fetch = gpu.tasks
    beats = 32_000 * 8 // 256
    # Data one way (beats + latency), the acknowledgement (one beat + latency) back.
    assert cache.done_ps - cache.started_ps == (beats + 50 + 1 + 50) * 1000
    # The request (one beat) there, the data back.
    assert fetch.done_ps - fetch.started_ps == (1 + 50 + beats + 50) * 1000
    assert host.written.value == 32_000 and host.cached.maximum == 32_000
    assert host.sent_bytes.value == 32_000 and gpu.sent_bytes.value == 32_000


def test_routes_take_the_faster_path_and_never_cross_a_host_memory():
    top = Component("top", clock=ClockDomain("clk", 1000))
    a, b, c = (Gpu(n, top, links=3) for n in "abc")
    host = HostMemory("host", top, links=2)
    nic = Nic("nic", top, links=2)
    pair(a, host, 512, 1)
    pair(host, c, 512, 1)        # a and c meet only through the host: not a route
    pair(a, nic, 8, 10)
    pair(nic, b, 8, 10)          # a slow path to b through the NIC
    pair(a, b, 512, 10)          # and a fast direct one
    reach = install_routes([a, b, c, host, nic], {a: 0, b: 1, c: 2, host: 3})
    assert reach[a] == {0, 1, 3}
    assert 2 not in reach[b]
    assert a.routes[1] == 2  # the direct link (a's third port pair)
    assert nic.routes[1] == 1 and nic.routes[0] == 0
    assert [link_class(ch) for ch in (a.out[0].channel, a.out[1].channel, a.out[2].channel,
                                      nic.out[1].channel)] == ["host PCIe", "NIC PCIe", "intra-node", "NIC PCIe"]


def test_compute_tasks_last_their_time_and_account_memory():
    top = Component("top", clock=ClockDomain("clk", 1000))
    gpu = Gpu("gpu", top, links=1)
    install_routes([gpu], {gpu: 0})
    first = Task("fwd L0", "compute", "compute", duration_ps=5500, alloc_bytes=100, free_bytes=40)
    second = Task("bwd L0", "compute", "compute", duration_ps=2000, after=(first,), alloc_bytes=10, free_bytes=70)
    gpu.load([first, second], static_bytes=1000)
    Simulator(top).run()
    assert first.started_ps == 0 and first.done_ps == 6000  # 5.5 ns ends at the next 1 ns edge
    assert second.started_ps == 6000 and second.done_ps == 8000
    assert gpu.memory.maximum == 1100 and gpu.memory.value == 1000
    assert gpu.compute_ps() == 8000 and gpu.exposed_ps() == 0 and gpu.phase.value == "idle"


def test_a_message_without_a_route_stops_the_run():
    top = Component("top", clock=ClockDomain("clk", 1000))
    gpu = Gpu("gpu", top, links=1)
    install_routes([gpu], {gpu: 0})
    gpu.load([Task("AG", "gather", "comm", program=RankProgram((Send(7, 10, "x"),), ()))])
    with pytest.raises(ModelAssertion, match=r"top.gpu at 0 ps: no route to endpoint 7"):
        Simulator(top).run()
