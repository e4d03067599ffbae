"""The compiled cluster loop changes speed, never behaviour: kernels and random FREP/SSR
programs run with the compiled loop on and off (``engine``) must agree on cycles, every counter,
the integer and FP registers and their readiness, SSR FIFO entries and stream positions, the
TCDM's round-robin pointers, conflicts per bank and every byte of memory."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Component, Param, SimulationError, Simulator, connect, model
from archmodel.models.compute import TCDM_BASE, FixedLatencyMemory, SnitchCluster, assemble
from archmodel.workloads.snitch import SETUPS, build_system, run_kernel

from .test_fast_paths import run_random

STEADY_OPS = ["fmadd.d {d}, {a}, {b}, {c}", "fmul.d {d}, {a}, {b}", "fadd.d {d}, {a}, {b}", "fsub.d {d}, {a}, {b}",
              "fnmsub.d {d}, {a}, {b}, {c}", "fmsub.d {d}, {a}, {b}, {c}", "fnmadd.d {d}, {a}, {b}, {c}"]


FREP_SOURCES = ["ft0", "ft1", "fa1", "fa2", "fa3"]


def random_frep_body(rng: random.Random, size: int, ops: list, targets: list) -> list:
    """``size`` FREP body instructions as (template, register names d/a/b/c): operand a a
    stream (ft0/ft1), b anything, c a register, never one stream read twice."""
    body = []
    for _ in range(size):
        names = dict(d=rng.choice(targets), a=rng.choice(FREP_SOURCES[:2]), b=rng.choice(FREP_SOURCES),
                     c=rng.choice(FREP_SOURCES[2:] + targets[:2]))
        if names["b"] == names["a"]:
            names["b"] = "fa2"
        body.append((rng.choice(ops), names))
    return body


def steady_program(rng: random.Random, core: int) -> str:
    """Long FREPs behind a full offload queue on every core at once (the steady state), with
    stream strides that collide in the banks and jobs sized to the replay (now and then one
    element short: a fault both runs must raise alike)."""
    base = TCDM_BASE + 2048 * core + 8 * rng.randrange(32)
    writes = rng.random() < 0.4
    lines = []
    for block in range(rng.randint(1, 2)):
        size = rng.randint(1, 4)
        targets = ["fa0", "fa1", "fa4", "fa5"] + (["ft2"] * 3 if writes else [])
        body = [(op.format(**names), [names[k] for k in "ab" + ("c" if "{c}" in op else "")], names["d"])
                for op, names in random_frep_body(rng, size, STEADY_OPS, targets)]
        reps = rng.randint(10, 60)
        for stream in (0, 1, 2) if writes else (0, 1):
            name = f"ft{stream}"
            per_iteration = sum(srcs.count(name) for _, srcs, _ in body) if stream < 2 else \
                sum(d == name for _, _, d in body)
            if per_iteration == 0:
                continue
            total = per_iteration * reps - (rng.random() < 0.1)
            if stream == 2:
                dims, bounds, repeat = 1, [total - 1], 0
            else:
                repeat = rng.randint(0, 2)
                elements = -(-total // (repeat + 1))
                inner = rng.randint(1, 8)
                dims, bounds = 2, [inner - 1, -(-elements // inner) - 1]
            for dim in range(dims):
                lines += [f"li t1, {bounds[dim]}", f"csrw ssr{stream}_bound{dim}, t1",
                          f"li t1, {8 * rng.choice([-1, 0, 1, 2, 4, 8, 32])}", f"csrw ssr{stream}_stride{dim}, t1"]
            lines += [f"li t1, {repeat}", f"csrw ssr{stream}_repeat, t1",
                      f"li a{stream}, {base + 4096 * stream + 1024}",
                      f"csrw ssr{stream}_{'w' if stream == 2 else 'r'}ptr{dims - 1}, a{stream}"]
        lines += [f"li t2, {base + 4096 * 3}", "csrwi ssr, 1", f"li t0, {reps - 1}"]
        lines.append(f"frep.o t0, {size}, {rng.choice([0, 0, 1])}, 1")
        lines += [text for text, _, _ in body]
        for u in range(rng.randint(8, 12)):  # fills the offload queue: the integer core parks
            lines.append(f"fsd fa{u % 6}, {8 * u}(t2)")
        lines += ["csrwi ssr, 0", "fence"]
    lines += ["ecall"]
    return "\n".join(lines) + "\n"


def steady_cluster(seed: int) -> SnitchCluster:
    """A cluster of 2-4 cores loaded with random steady-state programs."""
    rng = random.Random(seed)
    params = dict(cores=rng.randint(2, 4), offload_depth=rng.randint(1, 8), ssr_fifo_depth=rng.randint(1, 4),
                  tcdm_latency_cycles=rng.randint(1, 3), banks=rng.choice([4, 8, 32]), icache_miss_cycles=0)
    programs = [assemble(steady_program(rng, c), f"steady{c}.S") for c in range(params["cores"])]
    cluster = SnitchCluster("cl", **params)
    cluster.tcdm_array(TCDM_BASE, (16384,))[:] = np.random.default_rng(seed).standard_normal(16384)
    cluster.load_programs(programs)
    return cluster


def run_to_end(top, on: bool, watchdog_cycles: int = 1000) -> str | None:
    """Run ``top`` with the compiled loop on or off; the error that stopped it, or None."""
    use_engine(top, on)
    try:
        Simulator(top, watchdog_cycles=watchdog_cycles).run()
    except SimulationError as err:
        return str(err)
    return None


def run_steady_random(seed: int, on: bool) -> dict:
    cluster = steady_cluster(seed)
    error = run_to_end(cluster, on)
    return {"error": error, "state": snapshot(cluster), "compiled": cluster.n_compiled_cycles if on else 0}


def use_engine(top, on: bool) -> None:
    """Run every Snitch cluster in ``top`` with the compiled loop on (engine 'compiled') or
    off (engine 'python', the reference)."""
    for part in top.walk():
        if isinstance(part, SnitchCluster):
            part.engine = engine(on)


def engine(on: bool) -> str:
    """The cluster engine that has the compiled loop on or off."""
    return "compiled" if on else "python"


def snapshot(cluster) -> dict:
    """Everything the compiled path touches or could touch, in comparable form."""
    cores = []
    for c in cluster.core_list:
        cores.append((c.done_cycle, c.n_instr, c.n_fpu, c.n_flops, c.s_raw, c.s_offload, c.s_lsu, c.s_icache,
                      c.s_sync, c.s_stream, c.s_fdep, c.fp_pending_until, c.ip, list(c.x), list(c.x_ready),
                      [repr(v) for v in c.f], list(c.f_ready), c.seq_on, c.seq_pos, c.seq_it,
                      [([e[:] for e in s.fifo], s.addr, s.left, list(s.idx), s.run, s.active, list(s.jobs))
                       for s in c.ssrs],
                      c.halted, c.at_barrier, c.stall_until, c.cur_line, list(c.l0), c.ssr_on,
                      [(ins.index, operand) for ins, operand in c.queue], list(c.lsu.queue),
                      [[ins.index for ins in copies] for copies in c.seq_body], c.state_reg.value))
    tcdm, dma = cluster.tcdm, cluster.dma
    return {"cycles": cluster.run_cycles(), "cores": cores, "grants": tcdm.n_grants,
            "conflicts": tcdm.n_conflicts, "per_bank": list(tcdm.conflicts_per_bank), "rr": list(tcdm.rr),
            "memory": bytes(tcdm.data), "icache": (list(cluster.icache.lines.items()), cluster.icache.n_hits),
            "barrier": ([c.hartid for c in cluster.waiting], cluster.n_halted, [c.hartid for c in cluster.running]),
            "dma": (dma.n_in, dma.n_out, dma.n_done, dma.n_busy, dma.completed, dma.next_id, dict(dma.cfg),
                    dma.current.id if dma.current else None, len(dma.queue), list(dma.pending_reads),
                    [(w[1], w[2]) for w in dma.write_words], dma.writes_in_flight,
                    [b[:3] + [bytes(b[3])] + b[4:] for b in dma.read_bursts],
                    [None if lane.entry is None else (lane.addr, lane.entry[1]) for lane in dma.lane_objs])}


KERNELS = [
    ("gemm", {"m": 32, "n": 32, "k": 32}, None),
    ("gemm", {"m": 16, "n": 16, "k": 8, "streamed": True}, None),
    ("gemm", {"m": 16, "n": 24, "k": 16}, {"ssr_fifo_depth": 2, "tcdm_latency_cycles": 2}),
    ("axpy", {"n": 1024, "tile": 256}, None),
    ("jacobi", {"rows": 10, "cols": 18, "sweeps": 2}, None),
    ("dot_ladder", {"n": 512, "variant": "ssr_frep"}, {"tcdm_latency_cycles": 2}),
    ("dot_ladder", {"n": 512, "variant": "ssr_frep"}, None),
]


@pytest.mark.parametrize("kernel, params, cluster_params", KERNELS, ids=[k[0] + str(i) for i, k in enumerate(KERNELS)])
def test_kernels_end_in_the_same_state_with_the_compiled_loop_on_and_off(kernel, params, cluster_params):
    report_on, on = run_kernel(kernel, cluster_params={**(cluster_params or {}), "engine": "compiled"}, **params)
    report_off, off = run_kernel(kernel, cluster_params={**(cluster_params or {}), "engine": "python"}, **params)
    assert snapshot(on) == snapshot(off)
    assert report_on == report_off
    assert off.n_compiled_cycles == 0


def test_resident_gemm_runs_nearly_all_cycles_in_the_compiled_loop():
    report, cluster = run_kernel("gemm", m=32, n=32, k=32, cluster_params={"engine": "compiled"})
    assert cluster.n_compiled_cycles > report.cycles * 0.99


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_frep_programs_behave_the_same_with_the_compiled_loop(seed):
    on = run_random(seed, fast=True, long_replays=True, compiled=True)
    off = run_random(seed, fast=True, long_replays=True, compiled=False)
    on.pop("fused")  # the loop does not need the Python model's fused replay steps
    off.pop("fused")
    assert on == off


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_steady_programs_behave_the_same_with_the_compiled_loop(seed):
    on, off = run_steady_random(seed, True), run_steady_random(seed, False)
    on.pop("compiled")
    off.pop("compiled")
    assert on == off


def test_the_random_steady_programs_reach_the_compiled_loop():
    # the comparison above means something only if the compiled path runs, and runs end
    # both ways: finished, and faulted or stopped
    outcomes = [run_steady_random(seed, True) for seed in range(40)]
    assert sum(o["compiled"] > 0 for o in outcomes) >= 20
    assert sum(o["error"] is None and o["compiled"] > 0 for o in outcomes) >= 5
    assert sum(o["error"] is not None and o["compiled"] > 0 for o in outcomes) >= 1


def test_a_run_in_slices_sees_the_state_of_each_slices_last_edge():
    # A batch stops at the run's limit (Simulator.limit_ps), so running in slices of a few
    # cycles gives, after every slice, exactly the state the plain path has there.
    compared = steady = 0
    for seed in range(8):
        states = {}
        for on in (True, False):
            cluster = steady_cluster(seed)
            sim = Simulator(cluster, watchdog_cycles=1000)
            seen = []
            use_engine(cluster, on)
            try:
                for end in range(13, 5000, 13):
                    result = sim.run(cycles=end)
                    seen.append((result.time_ps, snapshot(cluster)))
                    if result.reason != "limit":
                        break
            except SimulationError as err:
                seen.append(str(err))
            states[on] = seen
            if on:
                steady += cluster.n_compiled_cycles
        assert states[True] == states[False]
        compared += len(states[True])
    assert steady > 0 and compared > 50


STREAMED = [("gemm", {"m": 16, "n": 16, "k": 8, "streamed": True}, {}),
            ("axpy", {"n": 512, "tile": 128}, {"memory_latency_cycles": 7, "memory_bytes_per_cycle": 16}),
            ("jacobi", {"rows": 10, "cols": 18, "sweeps": 2}, {"memory_latency_cycles": 3})]


@pytest.mark.parametrize("kernel, params, system", STREAMED, ids=[k[0] for k in STREAMED])
def test_kernels_with_dma_traffic_run_in_slices_see_the_state_of_each_slices_last_edge(kernel, params, system):
    # Between DMA events the state stays in the loop's arrays; every slice's end (the run's
    # limit) must still show exactly the plain model's state, bursts and lanes included.
    states = {}
    for on in (True, False):
        top = build_system(**system)
        cluster = top.child("cluster")
        SETUPS[kernel](cluster, top.child("memory"), **params)
        sim = Simulator(top)
        seen = []
        use_engine(top, on)
        for end in range(17, 20000, 17):
            result = sim.run(cycles=end)
            seen.append((result.time_ps, snapshot(cluster)))
            if result.reason != "limit":
                break
        assert result.reason == "quiescent" and cluster.result_ok
        states[on] = (seen, cluster.n_compiled_cycles)
    assert states[True][0] == states[False][0]
    assert states[True][1] > 0


def test_between_dma_events_the_state_stays_in_the_loop():
    report, cluster = run_kernel("gemm", m=64, n=32, k=32, streamed=True, cluster_params={"engine": "compiled"})
    exits = cluster.compiled_exits
    assert exits["dma"] > 0 and exits["end"] > 0  # bursts sent and responses taken on the arrays
    assert cluster.n_compiled_loads < cluster.n_compiled_batches / 4
    assert cluster.n_compiled_cycles > report.cycles * 0.97


@model(catalogue=False)
class StopAt(Component):
    """Stops the run at cycle ``at`` (another model ending a run while the cluster is in a batch)."""

    at = Param(int, 1, "cycle to stop at")

    def tick(self):
        if self.cycle >= self.at:
            self.sim.stop("stopped from outside")
            self.sleep()
        else:
            self.sleep_for(self.at - self.cycle)


@pytest.mark.parametrize("params", [{"m": 32, "n": 32, "k": 32}, {"m": 16, "n": 16, "k": 8, "streamed": True}],
                         ids=["resident", "streamed"])
def test_a_run_stopped_from_outside_settles_the_cluster_and_resumes_to_the_same_end(params):
    ends = []
    for stop_at in (None, 300):
        top = build_system()
        cluster = top.child("cluster")
        SETUPS["gemm"](cluster, top.child("memory"), **params)
        if stop_at is not None:
            StopAt("stopper", top, at=stop_at)
        sim = Simulator(top)
        use_engine(top, True)
        if stop_at is not None:
            assert sim.run().reason == "stopped"
            assert cluster.resident is None  # settled: the objects hold the loop's state
        sim.run()
        assert cluster.result_ok
        ends.append(snapshot(cluster))
    assert ends[0] == ends[1]


def test_two_clusters_with_dma_traffic_in_one_run_behave_as_the_python_model():
    # Each cluster's batches also end at the other's ticks (undisturbed_until_ps), and the
    # two keep their own state in the loop's arrays.
    def run(on: bool):
        top = Component("system")
        clusters = []
        for i, (kernel, params) in enumerate([("gemm", dict(m=16, n=16, k=8, streamed=True)),
                                              ("axpy", dict(n=512, tile=128))]):
            cluster = SnitchCluster(f"cluster{i}", top)
            memory = FixedLatencyMemory(f"memory{i}", top, latency_cycles=7 + 13 * i)
            connect(cluster.ext_req, memory.req, latency=1, width_bits=512)
            connect(memory.rsp, cluster.ext_rsp, latency=1, width_bits=512)
            SETUPS[kernel](cluster, memory, **params)
            clusters.append(cluster)
        use_engine(top, on)
        Simulator(top).run()
        assert all(c.result_ok for c in clusters)
        return [snapshot(c) for c in clusters], [c.n_compiled_cycles for c in clusters]
    (on, compiled), (off, _) = run(True), run(False)
    assert on == off
    assert min(compiled) > 0


def _dma_only(program: str, on: bool, **system) -> dict:
    """Run ``program`` on the DMA core of a 2-core cluster next to an outside memory."""
    top = build_system(cores=2, **system)
    cluster = top.child("cluster")
    cluster.tcdm_array(TCDM_BASE, (4096,))[:] = np.arange(4096.0)
    cluster.load_programs([None, None, assemble(program, "dma.S")])
    error = run_to_end(top, on, watchdog_cycles=2000)
    memory = top.child("memory")
    return {"error": error, "state": snapshot(cluster), "outside": bytes(memory.data[:65536]),
            "compiled": cluster.n_compiled_cycles}


def _copies(count: int, two_d: bool) -> str:
    lines = [f"li t0, {TCDM_BASE}", "dmsrc t0, zero", "li t0, 0x80000000", "dmdst t0, zero",
             "li t0, 64", "li t1, 128", "dmstr t0, t1", "li t0, 3", "dmrep t0"]
    lines += [f"li t0, {64 * (k + 1)}\ndmcpyi a{k % 8}, t0, {2 if two_d else 0}" for k in range(count)]
    return "\n".join(lines + ["1: dmstati t6, 2", "bnez t6, 1b", "ecall"]) + "\n"


@pytest.mark.parametrize("two_d", [False, True], ids=["1d", "2d"])
def test_the_dma_core_waits_on_a_full_transfer_queue_alike_in_the_loop(two_d):
    # six transfers behind a queue of four: the DMA core stalls on dmcpyi, and every id
    # it reads back, each burst and every byte written outside come out the same
    on, off = _dma_only(_copies(6, two_d), True), _dma_only(_copies(6, two_d), False)
    assert on.pop("compiled") > 0 and off.pop("compiled") == 0
    assert on == off and on["error"] is None
    assert on["state"]["cores"][2][8] > 0  # stall_sync: the queue was full


ILLEGAL = [  # (the transfer's configuration lines, the fault both must raise)
    ("li t0, 0\ndmcpyi zero, t0, 0", "transfer of 0 bytes x 1 rows is empty"),
    ("li t0, 12\ndmcpyi zero, t0, 0", "multiples of 8 bytes"),
    ("li t0, 12\nli t1, 64\ndmstr t0, t1\nli t0, 2\ndmrep t0\nli t0, 64\ndmcpyi zero, t0, 2", "multiples of 8 bytes"),
    (f"li t0, {TCDM_BASE + 64}\ndmdst t0, zero\nli t0, 64\ndmcpyi zero, t0, 0", "stays inside the TCDM"),
]


@pytest.mark.parametrize("transfer, fault", ILLEGAL, ids=["empty", "size", "stride", "inside"])
def test_an_illegal_transfer_faults_alike_in_the_loop(transfer, fault):
    program = (f"li t0, {TCDM_BASE}\ndmsrc t0, zero\nli t0, 0x80000000\ndmdst t0, zero\nli t0, 64\n"
               f"dmcpyi zero, t0, 0\n{transfer}\necall\n")
    on, off = _dma_only(program, True), _dma_only(program, False)
    assert fault in on["error"]
    assert on.pop("compiled") > 0 and off.pop("compiled") == 0
    assert on == off


def test_a_transfer_to_an_unconnected_outside_port_faults_alike_in_the_loop():
    program = (f"li t0, {TCDM_BASE}\ndmsrc t0, zero\nli t0, 0x80000000\ndmdst t0, zero\nli t0, 64\n"
               "li t1, 100\n1: addi t1, t1, -1\nbnez t1, 1b\ndmcpyi zero, t0, 0\necall\n")
    errors = []
    for on in (True, False):
        cluster = SnitchCluster("cl", cores=1)
        cluster.load_programs([None, assemble(program, "dma.S")])
        use_engine(cluster, on)
        with pytest.raises(SimulationError) as raised:
            Simulator(cluster).run()
        errors.append((str(raised.value), snapshot(cluster), cluster.n_compiled_cycles > 0))
    assert "ext_req is not connected" in errors[0][0]
    assert errors[0][:2] == errors[1][:2] and errors[0][2] and not errors[1][2]


@pytest.mark.parametrize("kernel, params, system", STREAMED, ids=[k[0] for k in STREAMED])
def test_progress_reports_read_the_loops_arrays_and_see_what_the_python_model_sees(kernel, params, system):
    # Every quarter of the watchdog's window (here 50 cycles) the cluster reports progress: the
    # compiled cluster runs that cycle in the loop and reads its signature from the arrays,
    # without copying its state back and loading it again; the reports are the Python model's.
    reports, loads = {}, {}
    for on in (True, False, "quiet"):
        top = build_system(**system)
        cluster = top.child("cluster")
        SETUPS[kernel](cluster, top.child("memory"), **params)
        seen = reports[on] = []
        report = cluster.report_progress

        def logged(cycle, signature, report=report, seen=seen, cluster=cluster):
            seen.append((cycle, cluster.sim.now, repr(signature)))
            report(cycle, signature)
        cluster.report_progress = logged
        use_engine(top, bool(on))
        watchdog = 100_000 if on == "quiet" else 200  # (quiet: no report after cycle 0's)
        assert Simulator(top, watchdog_cycles=watchdog).run().reason == "quiescent" and cluster.result_ok
        loads[on] = cluster.n_compiled_loads
    assert reports[True] == reports[False] and len(reports[True]) >= 10
    # (main loaded the state again after every report; a load now follows only the per-part
    # watchdog asking a part that showed no change for a while what it holds)
    assert loads[True] - loads["quiet"] < len(reports[True]) / 2, (loads, len(reports[True]))


def _stuck_beside_a_busy_cluster(engine: str) -> tuple:
    """One cluster whose first core finishes early and whose second spins for ever changing
    nothing, beside a cluster counting for long: the per-part watchdog names the spinning core
    while the rest of the system moves."""
    top = Component("system")
    stuck = SnitchCluster("stuck", top, cores=2, engine=engine)
    busy = SnitchCluster("busy", top, cores=1, engine=engine)
    stuck.load_programs([assemble("li t0, 50\n1: addi t0, t0, -1\nbnez t0, 1b\necall", "done.S"),
                         assemble("li t0, 3\n1: bnez t0, 1b\necall", "spin.S"), assemble("ecall", "dma.S")])
    busy.load_programs([assemble("li t0, 20000\n1: addi t0, t0, -1\nbnez t0, 1b\necall", "count.S"),
                        assemble("ecall", "dma.S")])
    sim = Simulator(top, watchdog_cycles=400)
    with pytest.raises(SimulationError) as raised:
        sim.run()
    return str(raised.value), sim.now


def test_a_part_stuck_while_the_rest_moves_is_reported_from_the_state_the_loop_holds():
    # Progress reports keep the state in the loop's arrays, so the objects are behind when the
    # per-part watchdog asks a core or DMA what it holds: they catch up first (the finished
    # core was named as holding its program, at its state of the last load).
    compiled, python = _stuck_beside_a_busy_cluster("compiled"), _stuck_beside_a_busy_cluster("python")
    assert compiled == python
    assert "system.stuck.core1 holds an unfinished program" in compiled[0].splitlines()[0]
