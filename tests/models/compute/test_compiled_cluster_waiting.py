"""A compiled cluster that can do nothing until a response arrives, or its port takes the
burst waiting to go, sleeps until then (``compiled_batches.waits_only_for_the_port``): its
compute cores at the barrier or finished, its DMA core spinning on the DMA's busy status (or
waiting for room in a full queue) while the DMA waits for DRAM responses or for a credit.
On waking it runs the cycles it slept through in one batch. Random transfers, queues, links and core counts, watchdog windows
that wake it for progress reports, and runs in slices that end while it sleeps: every run
must end in the cycle, state, statistics and bytes of the Python cluster model, and some
must take the sleeping path."""

import random
import sys

import numpy as np
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import assemble, SnitchCluster
from archmodel.models.memory import DramController

from .test_compiled_cluster import _Writer, first_difference
from .test_compiled_cluster_dram import outcome
from .test_compiled_cluster_memory import EXT_BASE, LOCAL, SCRATCH, emit_transfer, ends_alike, run_in_slices
from .test_compiled_kernels import use_engine

EXT_BYTES = 0x2_0000


def dma_program(rng: random.Random, steps: int) -> str:
    """``steps`` groups of transfers in and out, each waited for by polling the busy status,
    then the barrier (the compute cores wait there meanwhile)."""
    w = _Writer(rng)
    w.emit(f"li tp, {SCRATCH}")
    for step in range(steps):
        for _ in range(rng.randint(1, 4)):
            emit_transfer(w, rng, two_d=0.3, most_rows=4)
        top = w.label()
        w.emit(f"{top}:", "dmstati t6, 2", f"bnez t6, {top}", "dmstati t5, 0", f"sw t5, {4 * step}(tp)",
               "csrr zero, barrier")
    w.emit("ecall")
    return w.text()


def core_program(rng: random.Random, steps: int) -> str:
    """A little work between barriers (it reads what the DMA brought), ``steps`` of them;
    some cores stop early (a finished core never holds the barrier up)."""
    w = _Writer(rng)
    w.emit(f"li s0, {LOCAL}")
    for _ in range(rng.randint(0, steps) if rng.random() < 0.3 else steps):
        top = w.label()
        w.emit(f"li s1, {rng.randint(1, 30)}", f"{top}:", f"lw t0, {8 * rng.randrange(0x100)}(s0)",
               "addi s1, s1, -1", f"bnez s1, {top}", "csrr zero, barrier")
    w.emit("ecall")
    return w.text()


def build(seed: int):
    rng = random.Random(seed)
    top = Component("system")
    cores = rng.randint(1, 3)
    cluster = SnitchCluster("cluster", top, cores=cores, dma_lanes=rng.randint(1, 8), banks=rng.choice([4, 32]))
    memory = DramController("memory", top, standard="HBM2E", base_address=EXT_BASE,
                            read_queue=rng.choice([1, 4, 32]), write_queue=rng.choice([2, 32]))
    for src, dst in ((cluster.ext_req, memory.req), (memory.resp, cluster.ext_rsp)):
        latency = rng.randint(1, 20)
        connect(src, dst, latency=latency, capacity=rng.randint(1, latency + 2),
                width_bits=rng.choice([None, 64, 512]))
    cluster.dma.outstanding = rng.randint(1, 8)
    cluster.dma.burst_bytes = rng.choice([64, 256, 1024])
    cluster.dma.queue_depth = rng.randint(1, 4)  # a dmcpy may wait for room, too
    memory.backdoor_write(EXT_BASE, np.random.default_rng(seed).standard_normal(EXT_BYTES // 8).tobytes())
    steps = rng.randint(1, 4)
    cluster.load_programs([assemble(core_program(rng, steps), f"core{i}.S") for i in range(cores)]
                          + [assemble(dma_program(rng, steps), "dma.S")])

    def finished(part):
        part.sim.stop("done")  # (a DRAM refreshes for ever: the cluster ends the run)
    cluster.on_finish(finished)
    return top, cluster, memory, rng.choice([2000, 100_000]), rng.choice([None, 37, 500])


def run(seed: int, on: bool) -> dict:
    top, cluster, memory, watchdog, slice_cycles = build(seed)
    sim = Simulator(top, watchdog_cycles=watchdog)
    use_engine(top, on)

    # runs that end while the cluster sleeps waiting: the cycles slept are run at the end
    return {**outcome(sim, cluster, memory, lambda: run_in_slices(sim, slice_cycles), EXT_BYTES),
            "parked": cluster.n_parked_batches}


PARKED: list = []


@settings(max_examples=30, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_a_cluster_sleeping_until_a_response_ends_alike_with_the_compiled_loop_and_the_python_model(seed):
    PARKED.append(ends_alike(run, seed, "parked"))


def test_the_sleeping_path_is_taken():
    if not PARKED:  # (run alone)
        PARKED.extend(run(seed, True)["parked"] for seed in range(6))
    assert sum(1 for parked in PARKED if parked) >= len(PARKED) // 3, PARKED


def test_batches_call_the_loops_compiled_entry_and_the_dispatcher_once_per_layout_of_arrays(monkeypatch):
    from archmodel.kernel.compiled import argument_layout
    from archmodel.models.compute import compiled_state

    loop = compiled_state._compiled_cluster_cycles()
    counts = {"dispatcher": 0, "arrays": 0, "first": 0, "batches": 0}
    dispatched: list = []  # the layouts of the arrays of each call through the dispatcher

    class Counting:
        """The loop's dispatcher, counting the calls that go through it."""

        def __getattr__(self, name):
            return getattr(loop, name)

        def __call__(self, *args):
            counts["dispatcher"] += 1
            dispatched.append(tuple(map(argument_layout, args[4:])))
            return loop(*args)

    counting = Counting()
    monkeypatch.setattr(compiled_state, "_compiled_cluster_cycles", lambda: counting)
    arrays, run_batch = compiled_state.Resident._arrays, compiled_state.Resident.run

    def counted_arrays(self):
        counts["arrays"] += 1
        counts["first"] += id(self.memory) not in self._operands  # a cluster's first set with this memory
        return arrays(self)

    def counted_run(self, *args, **kwargs):
        counts["batches"] += 1
        return run_batch(self, *args, **kwargs)
    monkeypatch.setattr(compiled_state.Resident, "_arrays", counted_arrays)
    monkeypatch.setattr(compiled_state.Resident, "run", counted_run)
    for seed in range(3):
        on, off = run(seed, True), run(seed, False)
        on.pop("parked"), off.pop("parked")
        assert on == off, first_difference(on, off)
    # a set of arrays goes through the dispatcher only while no entry for its layouts is known
    # (once per layout and process); every other new set (a cluster's state loaded again, a
    # transfer's bursts past their buffer, the ring growing) and the batches after them use the
    # entry found before
    assert len(dispatched) == len(set(dispatched)), counts
    assert counts["dispatcher"] < counts["first"] <= counts["arrays"] < counts["batches"], counts


def test_python_reads_the_loops_arrays_between_batches_through_views_of_them(monkeypatch):
    """The port's step, the batch's end and the looks at a waiting cluster read the loop's
    state through memoryviews (``Resident.dm_ints``, ``cs_ints``, ``g_ints``, and
    ``table_ints`` of the instruction table): each must be a view of the array the loop writes,
    so after every batch it reads what the loop left there (fails if one is of a copy)."""
    from archmodel.models.compute import compiled_state

    run_batch = compiled_state.Resident.run
    checked: list = []

    def checked_run(self, *args, **kwargs):
        ran = run_batch(self, *args, **kwargs)
        for view, array in ((self.dm_ints, self.dm), (self.cs_ints, self.cs), (self.g_ints, self.g),
                            (self.table_ints, self.programs.table)):
            assert view.obj is array and view.tolist() == array.tolist()
        checked.append(ran)
        return ran
    monkeypatch.setattr(compiled_state.Resident, "run", checked_run)
    for seed in range(2):
        run(seed, True)
    assert sum(checked) > 100, checked


def test_the_loop_says_at_a_batchs_end_whether_every_running_core_waits_on_the_dma():
    """``G_WAIT_ON_DMA`` (compiled_dma._cores_wait_on_the_dma): every core still running is at
    the barrier or spins on the DMA's busy status (the status read, or the branch back while
    the value read says busy), or waits with a dmcpy for room in a full queue; and one of them
    spins."""
    from archmodel.models.compute import compiled_dma
    from archmodel.models.compute.compiled_layout import (C_AT_BAR, C_DONE, C_IP, C_NINS, C_WIDTH, D_QDEPTH, D_QLEN,
                                                          D_WIDTH, encode_programs)

    lines = ["1: dmstati t0, 2", "bnez t0, 1b", "addi a0, a0, 1", "dmcpyi a0, a1, 0", "dmstati t0, 0",
             "bnez t0, 1b"]
    code = encode_programs([type("Core", (), {"instrs": assemble("\n".join(lines), "t.S").instructions})])[0]
    t0 = 5

    def waits(ips, x_t0=(1, 1), queue_full=False) -> int:
        cs = np.zeros((2, C_WIDTH), np.int64)
        cs[:, C_NINS] = len(lines)
        x = np.zeros((2, 32), np.int64)
        for c, ip in enumerate(ips):
            if ip == "barrier":
                cs[c, C_AT_BAR] = 1
            elif ip == "done":
                cs[c, C_DONE] = 1
            else:
                cs[c, C_IP] = ip
            x[c, t0] = x_t0[c]
        dm = np.zeros(D_WIDTH, np.int64)
        dm[D_QDEPTH], dm[D_QLEN] = 1, int(queue_full)
        return compiled_dma._cores_wait_on_the_dma(cs, code, x, dm)

    assert waits([0, "barrier"]) == 1  # reads the status
    assert waits([1, "barrier"]) == 1 and waits([1, "done"], x_t0=(0, 0)) == 0  # branches back while busy only
    assert waits(["done", 1]) == 1 and waits([1, 0]) == 1
    assert waits([2, "barrier"]) == 0 and waits([0, 2]) == 0  # a computing core
    assert waits(["barrier", "barrier"]) == 0 and waits(["done", "barrier"]) == 0  # none spins
    assert waits([3, 0], queue_full=True) == 1 and waits([3, 0]) == 0  # a dmcpy waiting for room
    assert waits([4, "barrier"]) == 0 and waits([5, "barrier"]) == 0  # a status other than busy


def test_the_loops_check_at_a_batchs_end_answers_as_a_call_that_only_checks(monkeypatch):
    """Before the DMA port's part of a cycle moves anything, Python asks whether the cores can
    run it in the loop (``Resident.can_run``); the loop answered at the end of the batch that
    stopped there (``G_CHECKED``, ``G_CHECKED_EXIT``), and its answer, and the reason it gives
    when they cannot, must be those of a call of the loop that only checks (fails if the
    answer at the batch's end is of another cycle or state). The cores' loops hold
    instructions the loop leaves to Python (a square root, a division by zero), so that some
    answers from a batch's end are no."""
    from archmodel.models.compute import compiled_state
    from archmodel.models.compute.compiled_layout import G_CHECKED, G_EXIT

    plain = core_program
    monkeypatch.setattr(sys.modules[__name__], "core_program", lambda rng, steps: plain(rng, steps).replace(
        "addi s1, s1, -1", "addi s1, s1, -1\nfsqrt.d f1, f2\ndiv t1, s1, zero"))
    can_run = compiled_state.Resident.can_run
    answers = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}  # (kept, can run)

    def checked(self, cycle):
        kept = self.g[G_CHECKED] == cycle
        answer, reason = can_run(self, cycle), int(self.g[G_EXIT])
        self.g[G_EXIT] = -1
        assert (self.run(cycle, cycle + 1, check_only=True) == 1) == answer
        assert answer or self.g[G_EXIT] == reason
        self.g[G_EXIT] = reason
        answers[(bool(kept), answer)] += 1
        return answer
    monkeypatch.setattr(compiled_state.Resident, "can_run", checked)
    for seed in range(4):
        run(seed, True)
    assert answers[(True, True)] > 10 and answers[(True, False)] > 0, answers
