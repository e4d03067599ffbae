"""The cluster's TCDM slave port: requests from outside at global addresses, served by the banks.

Exact cycles on an idle cluster, data at any size and alignment, errors, and random traffic
into a cluster running GEMM: the compiled cluster loop (which leaves the port to Python and
ends its batches before a request can arrive) must answer every request at the cycle the
Python model does, with the same data and the same statistics."""

import random

import numpy as np
import pytest

from archmodel.kernel import Component, In, ModelAssertion, Out, Simulator, connect, model
from archmodel.models.compute import SnitchCluster
from archmodel.models.messages import MemRequest, MemResponse
from archmodel.testing import StreamSink, StreamSource
from archmodel.workloads.snitch import setup_gemm

GLOBAL = 0x4000_0000


@model(catalogue=False)
class _Driver(Component):
    """Sends its scripted (cycle, request) list, each at its cycle or when the link takes it,
    sleeping in between, and logs (cycle, response) of every answer."""

    req = Out("requests")
    rsp = In("responses")

    def setup(self) -> None:
        self.script: list = []
        self.log: list = []

    def tick(self) -> None:
        cycle = self.cycle
        while self.rsp.valid:
            self.log.append((cycle, self.rsp.recv()))
        if self.script and self.script[0][0] <= cycle and self.req.try_send(self.script[0][1]):
            self.script.pop(0)
        if not self.script:
            self.sleep()
        elif self.script[0][0] > cycle:
            self.sleep_for(self.script[0][0] - cycle)


def _system(latency: int = 1, width_bits: int | None = 512, **cluster_params):
    top = Component("top")
    cluster = SnitchCluster("cluster", top, tcdm_global_base=GLOBAL, **cluster_params)
    driver = _Driver("driver", top)
    connect(driver.req, cluster.tcdm_req, latency=latency, width_bits=width_bits)
    connect(cluster.tcdm_rsp, driver.rsp, latency=latency, width_bits=width_bits)
    return top, cluster, driver


def test_an_aligned_read_of_one_line_is_answered_after_the_tcdm_latency():
    top = Component("top")
    cluster = SnitchCluster("cluster", top, tcdm_global_base=GLOBAL, tcdm_latency_cycles=2)
    source, sink = StreamSource("source", top), StreamSink("sink", top)
    connect(source.out, cluster.tcdm_req, latency=1)
    connect(cluster.tcdm_rsp, sink.inp, latency=1)
    cluster.tcdm_array(cluster.tcdm_base + 64, (8,))[:] = np.arange(8.0)
    read = MemRequest(address=GLOBAL + 64, size_bytes=64, source="x", tag=5)
    write = MemRequest(address=GLOBAL + 200, size_bytes=16, is_write=True, data=bytes(range(16)), source="x", tag=6)
    source.load([read, write])
    # sent at 0 and 1, taken at 1 and 2, every word granted at once, answered 2 cycles later
    sink.expect([MemResponse(tag=5, data=np.arange(8.0).tobytes(), source="x"), MemResponse(tag=6, source="x")],
                cycles=[4, 5])
    Simulator(top).run()
    assert sink.error is None and sink.done
    assert cluster.backdoor_read(GLOBAL + 200, 16) == bytes(range(16))
    assert (cluster.tcdm_port.n_read, cluster.tcdm_port.n_written, cluster.tcdm_port.n_requests) == (64, 16, 2)


def test_a_long_request_takes_one_cycle_per_eight_words_and_the_next_waits_for_its_last_grant():
    top, cluster, driver = _system(width_bits=None)  # the port's timing alone, not the link's
    driver.script = [(0, MemRequest(address=GLOBAL, size_bytes=1024, source="d", tag=1)),
                     (0, MemRequest(address=GLOBAL + 8, size_bytes=8, source="d", tag=2))]
    Simulator(top).run()
    # taken at 1, 128 words over 8 lanes: granted 1 .. 16, answered at 17, seen at 18;
    # the second is taken at 17, granted at 17, answered at 18, seen at 19
    assert [(cycle, r.tag) for cycle, r in driver.log] == [(18, 1), (19, 2)]


def test_requests_of_any_size_and_alignment_touch_only_their_bytes():
    top, cluster, driver = _system()
    rng = random.Random(3)
    shadow = bytearray(rng.randbytes(4096))
    cluster.backdoor_write(GLOBAL, bytes(shadow))
    script, want = [], []
    for tag in range(60):
        at, size = rng.randrange(0, 4000), rng.randrange(1, 90)
        if rng.random() < 0.5:
            data = rng.randbytes(size)
            script.append((2 * tag, MemRequest(address=GLOBAL + at, size_bytes=size, is_write=True, data=data,
                                               source="d", tag=tag)))
            shadow[at:at + size] = data
            want.append(None)
        else:
            script.append((2 * tag, MemRequest(address=GLOBAL + at, size_bytes=size, source="d", tag=tag)))
            want.append(bytes(shadow[at:at + size]))
    driver.script = script
    Simulator(top).run()
    assert [r.tag for _, r in driver.log] == list(range(60))
    assert [r.data for _, r in driver.log] == want
    assert cluster.backdoor_read(GLOBAL, 4096) == bytes(shadow)


def _random_traffic(engine: str, seed: int):
    """GEMM resident in the TCDM's first 24 KiB; random requests into the rest, contending for
    its banks."""
    top, cluster, driver = _system(latency=3, engine=engine)
    setup_gemm(cluster, m=32, n=32, k=32, seed=seed)
    rng = random.Random(seed)
    cycle = 0
    script = []
    for tag in range(120):
        cycle += rng.choice([0, 1, 5, 30, 200])
        at, size = 0x8000 + rng.randrange(0, 0x4000), rng.choice([8, 64, 64, 200, 1024]) - rng.randrange(0, 2)
        write = rng.random() < 0.5
        script.append((cycle, MemRequest(address=GLOBAL + at, size_bytes=size, is_write=write,
                                         data=rng.randbytes(size) if write else None, source="d", tag=tag)))
    driver.script = script
    sim = Simulator(top)
    result = sim.run()
    assert cluster.result_ok
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return (result.time_ps, driver.log, stats, bytes(cluster.tcdm.data)), cluster.n_compiled_cycles


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_traffic_into_a_busy_cluster_is_answered_alike_by_the_compiled_loop_and_the_python_model(seed):
    compiled, compiled_cycles = _random_traffic("compiled", seed)
    python, python_cycles = _random_traffic("python", seed)
    assert compiled == python
    assert len(python[1]) == 120
    assert compiled_cycles > 0 and python_cycles == 0


def test_a_request_outside_the_global_range_stops_the_run():
    top, cluster, driver = _system()
    driver.script = [(0, MemRequest(address=GLOBAL + 128 * 1024 - 8, size_bytes=16, source="d"))]
    with pytest.raises(ModelAssertion, match=r"top\.cluster\.tcdm_port at 1000 ps: request of 16 bytes at "
                                             r"0x4001fff8 from 'd' is outside this TCDM \(0x40000000 \.\. 0x4001ffff\)"):
        Simulator(top).run()


@pytest.mark.parametrize("base, message", [
    (0, "tcdm_req is connected but tcdm_global_base is 0"),
    (0x1000_0000 + 0x1000, "tcdm_global_base 0x10001000 puts the global range 0x10001000 .. 0x10020fff over the "
                           "local TCDM window 0x10000000 .. 0x1001ffff"),
])
def test_a_slave_port_needs_a_global_range_of_its_own(base, message):
    top = Component("top")
    cluster = SnitchCluster("cluster", top, tcdm_global_base=base)
    driver = _Driver("driver", top)
    connect(driver.req, cluster.tcdm_req)
    connect(cluster.tcdm_rsp, driver.rsp)
    with pytest.raises(ModelAssertion, match=message):
        Simulator(top).run()


def test_the_backdoor_reaches_the_global_range_only():
    top = Component("top")
    cluster = SnitchCluster("cluster", top, tcdm_global_base=GLOBAL)
    cluster.backdoor_write(GLOBAL + 8, b"abcdefgh")
    assert bytes(cluster.tcdm.data[8:16]) == b"abcdefgh"
    assert cluster.backdoor_read(GLOBAL + 8, 8) == b"abcdefgh"
    with pytest.raises(ValueError, match=r"top\.cluster: 16 bytes at 0x4001fff8 are not in the TCDM: it has its "
                                         r"global range 0x40000000 \.\. 0x4001ffff"):
        cluster.backdoor_read(GLOBAL + 128 * 1024 - 8, 16)
    plain = SnitchCluster("plain", top)
    with pytest.raises(ValueError, match=r"no global range \(tcdm_global_base is 0\)"):
        plain.backdoor_read(0x1000_0000, 8)
