"""The ideal outside memory played inside the compiled cluster loop
(compiled_cluster_memory): DMA transfers of random sizes, shapes and directions against
memories and channels of random latencies, bandwidths, widths and credits end in the same
cycle, with the same state of the cluster, the memory and its bytes, as the Python models;
and the path is taken."""

import random

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, SimulationError, Simulator, connect
from archmodel.models.compute import TCDM_BASE, FixedLatencyMemory, SnitchCluster, assemble

from .test_compiled_cluster import _Writer, first_difference, full_snapshot
from .test_compiled_kernels import use_engine

EXT_BASE = 0x8000_0000
EXT_BYTES = 0x2_0000
LOCAL = TCDM_BASE + 0x8000  # what the DMA fills and drains (the compute core reads it too)
SCRATCH = TCDM_BASE + 0x7000  # where the DMA core stores the ids it sees


def emit_transfer(w: _Writer, rng: random.Random, *, two_d: float, most_rows: int) -> None:
    """One random ``dmcpyi`` (its id in t0) in or out between EXT_BASE and LOCAL: 2D with
    chance ``two_d`` (2 to ``most_rows`` rows, strides a little over the row), 1 to 300 words."""
    inbound = rng.random() < 0.6
    rows = rng.randint(2, most_rows) if rng.random() < two_d else 1
    size = 8 * rng.choice([1, rng.randint(2, 16), rng.randint(17, 300)])
    sstr, dstr = size + 8 * rng.randint(0, 4), size + 8 * rng.randint(0, 4)
    outside = EXT_BASE + 8 * rng.randrange(0x2000)
    local = LOCAL + 8 * rng.randrange(0x200)
    src, dst = (outside, local) if inbound else (local, outside)
    w.emit(f"li a0, {src}", f"li a1, {dst}", "dmsrc a0", "dmdst a1", f"li a2, {size}")
    if rows > 1:
        w.emit(f"li a3, {sstr}", f"li a4, {dstr}", "dmstr a3, a4", f"li a5, {rows}", "dmrep a5")
    w.emit(f"dmcpyi t0, a2, {2 if rows > 1 else 0}")


def dma_program(rng: random.Random) -> str:
    """Transfers in and out, 1D and 2D, queued several at a time, each group waited for by
    polling; the ids seen are stored."""
    w = _Writer(rng)
    w.emit(f"li tp, {SCRATCH}")
    for group in range(rng.randint(1, 4)):
        for _ in range(rng.randint(1, 5)):
            emit_transfer(w, rng, two_d=0.4, most_rows=5)
            w.emit(f"sw t0, {4 * rng.randrange(64)}(tp)")
        top = w.label()
        w.emit(f"{top}:", "dmstati t6, 2", f"bnez t6, {top}", "dmstati t5, 0", f"sw t5, {256 + 4 * group}(tp)")
    return w.text()


def core_program(rng: random.Random) -> str:
    """A compute core loading from and storing into the DMA's area (bank conflicts with the
    lanes), now and then with an instruction the loop leaves to Python (a batch then ends
    with transfers under way)."""
    w = _Writer(rng)
    w.emit(f"li s0, {LOCAL}", f"li s1, {rng.randint(20, 200)}")
    top = w.label()
    w.emit(f"{top}:", f"lw t0, {8 * rng.randrange(0x100)}(s0)", f"sw t0, {8 * rng.randrange(0x100)}(s0)")
    if rng.random() < 0.5:
        w.emit("li t1, 7", "li t2, 3", "mulh t3, t1, t2")
    w.emit("addi s1, s1, -1", f"bnez s1, {top}", "ecall")
    return w.text()


def build(seed: int):
    rng = random.Random(seed)
    top = Component("system")
    cluster = SnitchCluster("cluster", top, cores=1, dma_lanes=rng.randint(1, 8), banks=rng.choice([4, 32]))
    memory = FixedLatencyMemory("memory", top, bytes_per_cycle=rng.choice([8, 32, 64, 100, 256]),
                                latency_cycles=rng.randint(1, 80), size_bytes=EXT_BYTES)
    for src, dst in ((cluster.ext_req, memory.req), (memory.rsp, cluster.ext_rsp)):
        latency = rng.randint(1, 4)
        connect(src, dst, latency=latency, capacity=rng.randint(1, latency + 2),
                width_bits=rng.choice([None, 64, 256, 512, 2048]))
    cluster.dma.outstanding = rng.randint(1, 8)
    cluster.dma.burst_bytes = rng.choice([64, 256, 1024])
    memory.backdoor_write(EXT_BASE, np.random.default_rng(seed).standard_normal(EXT_BYTES // 8).tobytes())
    cluster.load_programs([assemble(core_program(rng), "core.S"), assemble(dma_program(rng), "dma.S")])
    return top, cluster, memory, rng.choice([200, 1000, 100_000])


def how_it_ended(sim: Simulator, to_the_end) -> tuple:
    """How a run ended, for comparing two engines: ``to_the_end()`` returns the run's result
    (its reason and time), or a simulation error ends it (its time and message)."""
    try:
        result = to_the_end()
        return (result.reason, result.time_ps, None)
    except SimulationError as err:
        return ("error", sim.now, f"{type(err).__name__}: {err}")


def ends_alike(run, seed: int, counter: str) -> int:
    """Run ``seed`` with the compiled loop and with the Python model (``run(seed, on)`` gives a
    run's outcome, with how often the compiled path was taken under ``counter``), assert that
    both ended alike and not in an error and that the Python run never took the compiled path;
    returns the compiled run's count."""
    on, off = run(seed, True), run(seed, False)
    assert off.pop(counter) == 0
    counted = on.pop(counter)
    assert on == off, first_difference(on, off)
    assert on["end"][0] != "error", on["end"]
    return counted


def run_in_slices(sim: Simulator, slice_cycles: int | None, at_each_end=None):
    """Run ``sim`` to its end, in runs of ``slice_cycles`` (None: one run) that may end
    mid-batch or while a cluster sleeps, calling ``at_each_end(result)`` after each slice but
    the last; returns the last run's result."""
    if slice_cycles is None:
        return sim.run()
    limit = slice_cycles
    while (result := sim.run(cycles=limit)).reason == "limit":
        if at_each_end is not None:
            at_each_end(result)
        limit += slice_cycles
    return result


def run(seed: int, on: bool) -> dict:
    top, cluster, memory, watchdog = build(seed)
    sim = Simulator(top, watchdog_cycles=watchdog)
    use_engine(top, on)
    end = how_it_ended(sim, sim.run)
    return {"end": end, "state": full_snapshot(cluster, memory), "inside": cluster.n_memory_inside_batches}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_dma_against_an_ideal_memory_played_inside_the_loop_behaves_as_the_python_models(seed):
    on, off = run(seed, True), run(seed, False)
    assert off.pop("inside") == 0
    inside = on.pop("inside")
    assert on == off, first_difference(on, off)
    assert on["end"][0] != "error", on["end"]
    assert inside > 0


def test_a_batch_with_the_memory_inside_spans_many_bursts():
    # A 64 KiB transfer in 1 KiB bursts through 64 B/cycle takes about a thousand cycles:
    # played inside, its bursts and answers end no batch (outside, each answer does).
    top = Component("system")
    cluster = SnitchCluster("cluster", top, cores=1)
    memory = FixedLatencyMemory("memory", top, size_bytes=EXT_BYTES)
    connect(cluster.ext_req, memory.req, latency=1, width_bits=512)
    connect(memory.rsp, cluster.ext_rsp, latency=1, width_bits=512)
    program = (f"li a0, {EXT_BASE}\nli a1, {TCDM_BASE}\ndmsrc a0\ndmdst a1\nli a2, 65536\ndmcpyi t0, a2, 0\n"
               "1: dmstati t6, 2\nbnez t6, 1b\necall")
    cluster.load_programs([None, assemble(program, "dma.S")])
    Simulator(top).run()
    assert cluster.dma.n_in == 65536 and memory.n_read == 65536
    assert cluster.n_compiled_cycles > 1000 and cluster.n_compiled_batches <= 4
