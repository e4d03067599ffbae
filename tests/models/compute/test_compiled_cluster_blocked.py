"""A compiled cluster whose DMA often finds ``ext_req`` without a credit while its cores work: a
throttle in front of the memory passes a request only every few cycles, over a channel of one
or two credits, so a batch often ends at the first cycle the port can take the burst waiting
(``compiled_batches._send_stop``). Such a batch of one cycle asks the lookahead nothing, the
cores' check before a cycle is a separate call of the loop only when the port's part of the
cycle moves something (``Resident.port_step``), and a cluster whose next tick is the next cycle
stays awake. Random programs (the compute cores sometimes need Python, the DMA core polls and
sleeps waiting), throttles, links, memories, watchdog windows and runs in slices that end
mid-batch: every run must end in the cycle, state, statistics and bytes of the Python cluster
model."""

import random

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, In, Out, Param, Simulator, at_least, connect, model
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster, assemble, compiled_batches, compiled_state
from archmodel.models.memory import DramController

from .test_compiled_cluster import _Writer
from .test_compiled_cluster_dram import outcome
from .test_compiled_cluster_memory import EXT_BASE, LOCAL, ends_alike, run_in_slices
from .test_compiled_cluster_memory import core_program as loads_and_stores
from .test_compiled_cluster_waiting import dma_program
from .test_compiled_kernels import use_engine

EXT_BYTES = 0x2_0000


@model(catalogue=False)
class Throttle(Component):
    """Passes the requests on ``inp`` to ``out``, at most one every ``gap`` cycles: its input
    channel fills, and the sender finds no credit until the next passes."""

    gap = Param(int, 8, "cycles from one request passed to the next", check=at_least(1))
    inp = In("requests")
    out = Out("the requests passed")

    def setup(self) -> None:
        self.next_ok = 0

    def tick(self) -> None:
        cycle = self.cycle
        if cycle < self.next_ok:
            self.sleep()
            self.wake_at(self.domain.phase_ps + self.next_ok * self.domain.period_ps)
        elif self.inp.valid and self.out.ready:
            self.out.send(self.inp.recv())
            self.next_ok = cycle + self.gap
        else:
            self.sleep()  # (a request arriving, or the credit it waits for, wakes it)


def core_program(rng: random.Random) -> str:
    """A compute core loading from and storing into the DMA's area, often with an operation the
    loop leaves to Python (a square root), so that cycles the cores cannot
    run come while the DMA waits for its port, and while a burst goes or a response comes."""
    w = _Writer(rng)
    w.emit(f"li s0, {LOCAL}", f"li s1, {rng.randint(20, 200)}")
    top = w.label()
    w.emit(f"{top}:", f"lw t0, {8 * rng.randrange(0x100)}(s0)", f"sw t0, {8 * rng.randrange(0x100)}(s0)")
    if rng.random() < 0.7:
        w.emit("fsqrt.d fs1, fs2")
    w.emit("addi s1, s1, -1", f"bnez s1, {top}", "ecall")
    return w.text()


def random_cluster_and_memory(rng: random.Random, top: Component, fixed_share: float, fixed_latencies: tuple,
                              bandwidths: list | None = None):
    """A cluster of 1-3 cores (random DMA lanes and banks) and the memory it will read, drawn
    from ``rng``: with probability ``fixed_share`` a FixedLatencyMemory (latency in
    ``fixed_latencies``, bytes per cycle one of ``bandwidths`` when given), else an HBM2E
    channel with random queues. Returns (cores, cluster, memory, the memory's answer port)."""
    cores = rng.randint(1, 3)
    cluster = SnitchCluster("cluster", top, cores=cores, dma_lanes=rng.randint(1, 8), banks=rng.choice([4, 32]))
    if rng.random() < fixed_share:
        latency = rng.randint(*fixed_latencies)  # (drawn before the bandwidth: the seeds' systems stay as they were)
        extra = {} if bandwidths is None else {"bytes_per_cycle": rng.choice(bandwidths)}
        memory = FixedLatencyMemory("memory", top, latency_cycles=latency, size_bytes=EXT_BYTES, **extra)
        return cores, cluster, memory, memory.rsp
    memory = DramController("memory", top, standard="HBM2E", base_address=EXT_BASE,
                            read_queue=rng.choice([1, 4, 32]), write_queue=rng.choice([2, 32]))
    return cores, cluster, memory, memory.resp


def build(seed: int):
    rng = random.Random(seed)
    top = Component("system")
    cores, cluster, memory, rsp = random_cluster_and_memory(rng, top, fixed_share=0.5, fixed_latencies=(1, 40))
    throttle = Throttle("throttle", top, gap=rng.randint(1, 24))
    latency = rng.randint(1, 3)
    connect(cluster.ext_req, throttle.inp, latency=latency, capacity=rng.randint(1, 2),
            width_bits=rng.choice([None, 512]))
    connect(throttle.out, memory.req, latency=1)
    connect(rsp, cluster.ext_rsp, latency=rng.randint(1, 4), width_bits=rng.choice([None, 64, 512]))
    cluster.dma.outstanding = rng.randint(1, 8)
    cluster.dma.burst_bytes = rng.choice([64, 256])
    cluster.dma.queue_depth = rng.randint(1, 4)
    memory.backdoor_write(EXT_BASE, np.random.default_rng(seed).standard_normal(EXT_BYTES // 8).tobytes())
    steps = rng.randint(1, 3)
    cluster.load_programs([assemble(core_program(rng), f"core{i}.S") for i in range(cores)]
                          + [assemble(dma_program(rng, steps), "dma.S")])

    def finished(part):
        part.sim.stop("done")  # (a DRAM refreshes for ever: the cluster ends the run)
    cluster.on_finish(finished)
    return top, cluster, memory, rng.choice([2000, 100_000]), rng.choice([None, 23, 300])


def run(seed: int, on: bool) -> dict:
    top, cluster, memory, watchdog, slice_cycles = build(seed)
    sim = Simulator(top, watchdog_cycles=watchdog)
    use_engine(top, on)
    seen = []

    def to_the_end():
        # slices that end mid-batch: the state at each slice's end is the Python model's too
        return run_in_slices(sim, slice_cycles,
                             lambda result: seen.append(outcome(sim, cluster, memory, lambda: result,
                                                                EXT_BYTES)["cluster"]))
    return {**outcome(sim, cluster, memory, to_the_end, EXT_BYTES), "slices": seen,
            "batches": cluster.n_compiled_batches}


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_cluster_blocked_on_its_port_while_it_computes_ends_alike_with_the_compiled_loop_and_the_python_model(seed):
    assert ends_alike(run, seed, "batches") > 0


def throttled_transfer(engine: str, inbound: bool):
    """(top, cluster, memory): two compute cores working while 4 KiB go out of the TCDM (or
    come in, ``inbound``) in bursts of 64 bytes, through a throttle passing one every 16
    cycles over a link of one credit, to a memory answering 20 cycles later: the port
    refuses most bursts for a while."""
    top = Component("system")
    cluster = SnitchCluster("cluster", top, cores=2, engine=engine)
    memory = FixedLatencyMemory("memory", top, latency_cycles=20, size_bytes=EXT_BYTES)
    throttle = Throttle("throttle", top, gap=16)
    connect(cluster.ext_req, throttle.inp, latency=1, capacity=1)
    connect(throttle.out, memory.req, latency=1)
    connect(memory.rsp, cluster.ext_rsp, latency=1, width_bits=512)
    cluster.dma.burst_bytes = 64
    rng = random.Random(7)
    source, destination = (EXT_BASE, LOCAL) if inbound else (LOCAL, EXT_BASE)
    program = (f"li a0, {source}\nli a1, {destination}\ndmsrc a0\ndmdst a1\nli a2, 4096\n"
               "dmcpyi t0, a2, 0\n1: dmstati t6, 2\nbnez t6, 1b\necall")
    cluster.load_programs([assemble(loads_and_stores(rng), "core0.S"), assemble(loads_and_stores(rng), "core1.S"),
                           assemble(program, "dma.S")])
    return top, cluster, memory


def test_a_batch_held_up_by_the_port_asks_nothing_checks_once_and_stays_awake_when_it_is_one_cycle(monkeypatch):
    asked, checks, sleeps = [], [], []
    undisturbed_end, run_batch = compiled_batches._undisturbed_end, compiled_state.Resident.run

    def asking(cluster, cycle, end, hard_end):
        asked.append((cycle, end))
        return undisturbed_end(cluster, cycle, end, hard_end)

    def counted(self, start, end, check_only=False, port_done=False):
        checks.append(check_only)
        return run_batch(self, start, end, check_only, port_done)
    monkeypatch.setattr(compiled_batches, "_undisturbed_end", asking)
    monkeypatch.setattr(compiled_state.Resident, "run", counted)
    # (a write burst, whose data the lanes read from the TCDM, waits for the port so; a read
    # burst waits differently: test_compiled_cluster_lagging)
    top, cluster, memory = throttled_transfer("auto", inbound=False)
    sim = Simulator(top)

    def sleeping(cycles):
        sleeps.append((cycles, cluster.resident is not None))
        Component.sleep_for(cluster, cycles)
    cluster.sleep_for = sleeping
    sim.run()
    assert cluster.dma.n_out == 4096 and memory.n_written == 4096
    # every question was about more than the next cycle; a batch ending where the port can
    # first take the burst waiting asked none (6 questions in 520 batches)
    assert asked and all(end > cycle + 1 for cycle, end in asked), asked
    assert len(asked) <= 8 and cluster.n_compiled_batches > 500, (asked, cluster.n_compiled_batches)
    # 64 bursts, each found the port without a credit for a while: many one-cycle batches, a
    # separate check of the cores only where a burst went or a response came in
    assert cluster.compiled_exits.get("dma", 0) >= 64
    assert checks.count(True) < cluster.n_compiled_batches / 2, (checks.count(True), cluster.n_compiled_batches)
    # a batch whose next tick is the next cycle leaves the cluster awake (no sleep of one cycle)
    assert (1, True) not in sleeps, sleeps
