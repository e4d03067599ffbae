"""The compiled cluster loop against DRAM: DMA transfers of random sizes, shapes and directions
streamed from an HBM2E pseudo-channel (``DramController``) or a small interleaved stack, with
small queues, narrow links and few credits, so the DMA engine often waits on a request port
that is not ready and responses often come later than the memory's bound on them. The
compiled loop runs ahead while it waits (up to the first cycle the port can change,
``OutPort.unblocks_from_ps``) and to the lookahead horizon otherwise; every run must end in the
cycle, state, statistics and bytes of the Python cluster model. A bound that is too late
shows up here as a different end, a different statistic, or the cluster woken inside a batch."""

import random

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import assemble, SnitchCluster
from archmodel.models.memory import DramController, InterleavedMemory

from .test_compiled_cluster import _comparable
from .test_compiled_cluster_memory import EXT_BASE, core_program, dma_program, ends_alike, how_it_ended
from .test_compiled_kernels import snapshot, use_engine

EXT_BYTES = 0x2_0000  # what the programs touch from EXT_BASE


def build(seed: int):
    rng = random.Random(seed)
    top = Component("system")
    cluster = SnitchCluster("cluster", top, cores=1, dma_lanes=rng.randint(1, 8), banks=rng.choice([4, 32]))
    queues = dict(read_queue=rng.choice([1, 2, 4, 32]), write_queue=rng.choice([2, 4, 32]))
    if rng.random() < 0.6:
        memory = DramController("memory", top, standard="HBM2E", base_address=EXT_BASE, **queues)
        rsp = memory.resp
    else:
        memory = InterleavedMemory("memory", top, standard="HBM2E", channels=rng.choice([2, 4]),
                                   interleave_bytes=rng.choice([64, 256]), base_address=EXT_BASE)
        rsp = memory.resp
    for src, dst in ((cluster.ext_req, memory.req), (rsp, cluster.ext_rsp)):
        latency = rng.randint(1, 4)
        connect(src, dst, latency=latency, capacity=rng.randint(1, latency + 2),
                width_bits=rng.choice([None, 64, 256, 512]))
    cluster.dma.outstanding = rng.randint(1, 8)
    cluster.dma.burst_bytes = rng.choice([64, 256, 1024])
    memory.backdoor_write(EXT_BASE, np.random.default_rng(seed).standard_normal(EXT_BYTES // 8).tobytes())
    cluster.load_programs([assemble(core_program(rng), "core.S"), assemble(dma_program(rng), "dma.S")])

    def finished(part):
        part.sim.stop("done")  # (a DRAM refreshes for ever: the cluster ends the run)
    cluster.on_finish(finished)
    return top, cluster, memory, rng.choice([2000, 100_000])


def run(seed: int, on: bool) -> dict:
    top, cluster, memory, watchdog = build(seed)
    sim = Simulator(top, watchdog_cycles=watchdog)
    use_engine(top, on)
    return {**outcome(sim, cluster, memory, sim.run, EXT_BYTES), "batches": cluster.n_compiled_batches}


def outcome(sim: Simulator, cluster, memory, to_the_end, touched_bytes: int) -> dict:
    """What a run must end alike on both engines: how it ended (``to_the_end()`` returns the
    run's result; an error ends it too), the cluster's state, every statistic but the
    compiled path's own counters, and the ``touched_bytes`` from EXT_BASE in memory."""
    end = how_it_ended(sim, to_the_end)
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return {"end": end, "cluster": _comparable(snapshot(cluster)), "stats": _comparable(stats),
            "bytes": memory.backdoor_read(EXT_BASE, touched_bytes)}


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dma_streaming_from_dram_ends_alike_with_the_compiled_loop_and_the_python_model(seed):
    assert ends_alike(run, seed, "batches") > 0
