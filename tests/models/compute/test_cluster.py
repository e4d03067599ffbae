import numpy as np
import pytest

from archmodel.kernel import Component, DeadlockError, ModelAssertion, Simulator, connect
from archmodel.models.basic import Sink
from archmodel.models.compute import TCDM_BASE, FixedLatencyMemory, SnitchCluster, assemble
from archmodel.workloads.snitch import build_system, run_kernel
from tests.kernel.components import Producer


def run_programs(sources, cores=1, **params):
    cluster = SnitchCluster("cl", cores=cores, **params)
    cluster.load_programs([assemble(s, f"p{i}.S") if s is not None else None for i, s in enumerate(sources)])
    Simulator(cluster).run()
    return cluster


CONVERSIONS = [  # (value, fcvt.w.d, fcvt.wu.d as the register reads it): RISC-V saturates, NaN is the top
    (2.5, 2, 2), (-2.5, -2, 0), (3.5, 4, 4), (-5.0, -5, 0), (-0.5, 0, 0), (4e12, 2**31 - 1, -1),
    (-4e12, -2**31, 0), (float("inf"), 2**31 - 1, -1), (float("-inf"), -2**31, 0), (float("nan"), 2**31 - 1, -1),
    (4294967295.0, 2**31 - 1, -1), (2147483648.0, 2**31 - 1, -2**31)]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_fp_to_integer_conversions_round_to_even_and_saturate_as_risc_v(compiled):
    lines = [f"li a0, {TCDM_BASE}"]
    for k in range(len(CONVERSIONS)):
        lines += [f"fld fa0, {8 * k}(a0)", "fcvt.w.d t0, fa0", "fcvt.wu.d t1, fa0", f"sw t0, {512 + 8 * k}(a0)",
                  f"sw t1, {516 + 8 * k}(a0)"]
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0, engine="compiled" if compiled else "python")
    cluster.tcdm_array(TCDM_BASE, (len(CONVERSIONS),))[:] = [v for v, _, _ in CONVERSIONS]
    cluster.load_programs([assemble("\n".join(lines + ["fence", "ecall"]) + "\n", "cvt.S")])
    Simulator(cluster).run()
    got = cluster.tcdm_array(TCDM_BASE + 512, (len(CONVERSIONS), 2), np.int32).tolist()
    assert got == [[w, wu] for _, w, wu in CONVERSIONS]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_fmin_and_fmax_let_a_nan_operand_give_way_and_order_signed_zeros(compiled):
    nan = float("nan")
    pairs = [(1.0, 2.0), (nan, 2.0), (2.0, nan), (nan, nan), (0.0, -0.0), (-0.0, 0.0)]
    lines = [f"li a0, {TCDM_BASE}"]
    for k in range(len(pairs)):
        lines += [f"fld fa0, {16 * k}(a0)", f"fld fa1, {16 * k + 8}(a0)", "fmin.d fa2, fa0, fa1", "fmax.d fa3, fa0, fa1",
                  f"fsd fa2, {512 + 16 * k}(a0)", f"fsd fa3, {520 + 16 * k}(a0)"]
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0, engine="compiled" if compiled else "python")
    cluster.tcdm_array(TCDM_BASE, (len(pairs), 2))[:] = pairs
    cluster.load_programs([assemble("\n".join(lines + ["fence", "ecall"]) + "\n", "minmax.S")])
    Simulator(cluster).run()
    got = [[repr(v) for v in row] for row in cluster.tcdm_array(TCDM_BASE + 512, (len(pairs), 2)).tolist()]
    assert got == [["1.0", "2.0"], ["2.0", "2.0"], ["2.0", "2.0"], ["nan", "nan"], ["-0.0", "0.0"], ["-0.0", "0.0"]]


STREAM_READ_TWICE = f"""li t1, 15
csrw ssr0_bound0, t1
li t1, 8
csrw ssr0_stride0, t1
li a0, {TCDM_BASE}
csrw ssr0_rptr0, a0
csrwi ssr, 1
fmadd.d fa0, ft0, ft0, ft0
fsd fa0, 256(a0)
csrwi ssr, 0
fence
ecall
"""


def test_an_instruction_reads_one_stream_three_times_from_consecutive_elements():
    cluster = SnitchCluster("cl", cores=1, ssr_fifo_depth=4, icache_miss_cycles=0)
    cluster.tcdm_array(TCDM_BASE, (16,))[:] = np.arange(1.0, 17.0)
    cluster.load_programs([assemble(STREAM_READ_TWICE, "dup.S")])
    Simulator(cluster).run()
    assert cluster.tcdm_array(TCDM_BASE + 256, (1,))[0] == 1.0 * 2.0 + 3.0


def test_a_stream_read_more_times_at_once_than_its_fifo_holds_is_a_fault_not_a_hang():
    cluster = SnitchCluster("cl", cores=1, ssr_fifo_depth=2, icache_miss_cycles=0)
    cluster.load_programs([assemble(STREAM_READ_TWICE, "dup.S")])
    with pytest.raises(ModelAssertion, match=r"dup.S:8: fmadd.d fa0, ft0, ft0, ft0\): reads ft0 3 times, but SSR 0's "
                                             r"FIFO of 2 element\(s\) serves 2 read\(s\) when full"):
        Simulator(cluster, watchdog_cycles=1000).run()


def test_integer_instructions_issue_one_per_cycle_after_the_first_fetch_misses():
    cluster = run_programs(["li t0, 5\naddi t0, t0, 1\necall\n"])
    core = cluster.core_list[0]
    # the first fetch misses the I$ (20 cycles), then three instructions in cycles 20, 21, 22
    assert (core.done_cycle, core.x[5], core.n_instr, cluster.icache.n_misses) == (22, 6, 3, 1)


def test_load_result_is_usable_one_cycle_after_its_grant():
    cluster = run_programs([f"li a0, {TCDM_BASE}\nli t0, 7\nsw t0, 0(a0)\nlw t1, 0(a0)\naddi t1, t1, 1\necall\n"],
                           icache_miss_cycles=0)
    core = cluster.core_list[0]
    assert (core.done_cycle, core.x[6], core.s_raw) == (5, 8, 0)


def test_fp_results_wait_for_their_latency_through_the_offload_queue():
    cluster = run_programs(["li t0, 1\nfcvt.d.w fa0, t0\nfadd.d fa1, fa0, fa0\nfadd.d fa2, fa1, fa1\necall\n"],
                           icache_miss_cycles=0)
    core = cluster.core_list[0]
    # fcvt offloaded at 1, issues at 2; fadd issues at 3 (ready 6); the dependent fadd waits to 6, ready at 9
    assert (core.done_cycle, core.f[12], core.s_fdep) == (9, 4.0, 2)


@pytest.mark.parametrize("source, message", [
    (f"li a0, {TCDM_BASE + 4}\nfld fa0, 0(a0)\necall\n",
     "core 0 at pc 0x00001008 (p0.S:2: fld fa0, 0(a0)): misaligned 8-byte access to 0x10000004"),
    ("li a0, 0x20000000\nlw t0, 0(a0)\necall\n",
     "core 0 at pc 0x00001004 (p0.S:2: lw t0, 0(a0)): access to 0x20000000 is outside the TCDM "
     "(0x10000000 .. 0x1001ffff)"),
    ("li t0, 64\ndmcpyi zero, t0, 0\necall\n",
     "core 0 at pc 0x00001004 (p0.S:2: dmcpyi zero, t0, 0): illegal instruction 'dmcpyi': only the DMA core "
     "(mhartid 1) drives the DMA"),
    # the stagger walks rs2 from ft0 onto ft1, a stream register no job was started on
    (f"li a0, {TCDM_BASE}\nli t0, 7\ncsrw ssr0_bound0, t0\nli t1, 8\ncsrw ssr0_stride0, t1\ncsrw ssr0_rptr0, a0\n"
     "csrwi ssr, 1\nli t0, 3\nfrep.o t0, 1, 1, 0b0100\nfadd.d fa0, fa0, ft0\ncsrwi ssr, 0\necall\n",
     "core 0 at pc 0x00001024 (p0.S:10: fadd.d fa0, fa0, ft0): reads ft1 but SSR 1 has no data and no job left "
     "(it was never started, the FREP stagger turned ft1 into a stream register)"),
    # the stagger walks rd from ft0, a write stream, onto ft1, on which no job was started
    (f"li a0, {TCDM_BASE}\nli t0, 7\ncsrw ssr0_bound0, t0\nli t1, 8\ncsrw ssr0_stride0, t1\ncsrw ssr0_wptr0, a0\n"
     "csrwi ssr, 1\nli t0, 3\nfrep.o t0, 1, 1, 0b0001\nfadd.d ft0, fa0, fa0\ncsrwi ssr, 0\necall\n",
     "core 0 at pc 0x00001024 (p0.S:10: fadd.d ft0, fa0, fa0): writes ft1 but SSR 1 has no write job "
     "(it was never started, the FREP stagger turned ft1 into a stream register)"),
    # four elements streamed, five read
    (f"li a0, {TCDM_BASE}\nli t0, 3\ncsrw ssr0_bound0, t0\nli t1, 8\ncsrw ssr0_stride0, t1\ncsrw ssr0_rptr0, a0\n"
     "csrwi ssr, 1\nli t0, 4\nfrep.o t0, 1\nfadd.d fa0, fa0, ft0\ncsrwi ssr, 0\necall\n",
     "core 0 at pc 0x00001024 (p0.S:10: fadd.d fa0, fa0, ft0): reads ft0 but SSR 0 has no data and no job left "
     "(its jobs are used up)"),
])
def test_runtime_faults_name_the_core_pc_and_source_line(source, message):
    with pytest.raises(ModelAssertion) as info:
        run_programs([source])
    assert str(info.value).endswith(message)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_an_fp_instruction_waits_for_a_stream_whose_job_starts_later(compiled):
    # fadd reads ft0 before the integer core has started SSR 0's job: the FP subsystem
    # stalls on the empty stream (the RTL's lane holds valid low) until the job's element
    # arrives, then adds it; it faults only once no job can come (the runtime-fault cases
    # above, whose cores have halted).
    delay = 30
    source = (f"li a0, {TCDM_BASE}\ncsrwi ssr, 1\nfadd.d fa0, fa0, ft0\nli t0, {delay}\n"
              "1: addi t0, t0, -1\nbnez t0, 1b\nli t2, 0\ncsrw ssr0_bound0, t2\nli t1, 8\ncsrw ssr0_stride0, t1\n"
              "csrw ssr0_rptr0, a0\ncsrwi ssr, 0\nfsd fa0, 8(a0)\nfence\necall\n")
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0, engine="compiled" if compiled else "python")
    cluster.tcdm_array(TCDM_BASE, (2,))[:] = [2.5, 0.0]
    cluster.load_programs([assemble(source, "late.S")])
    Simulator(cluster).run()
    core = cluster.core_list[0]
    assert cluster.tcdm_array(TCDM_BASE + 8, (1,)).tolist() == [2.5]
    assert core.s_stream >= 2 * delay  # it waited while the integer core ran its loop (two instructions a turn)
    # the job starts at cycle 68 (4 + 2 * 30 instructions, then the configuration); fadd, at
    # the queue's head from cycle 3, stalls until its element is in the FIFO (66 cycles)
    assert (core.done_cycle, core.s_stream, core.n_fpu) == (74, 66, 1)
    assert (cluster.n_compiled_cycles > 0) == compiled


def test_barrier_waits_for_every_core_and_finished_cores_do_not_hold_it():
    slow = "li t0, 50\n1: addi t0, t0, -1\nbnez t0, 1b\ncsrr zero, barrier\ncsrr t1, mcycle\necall\n"
    fast = "csrr zero, barrier\ncsrr t1, mcycle\necall\n"
    cluster = run_programs([slow, fast, "ecall\n"], cores=3, icache_miss_cycles=0)
    t_slow, t_fast = cluster.core_list[0].x[6], cluster.core_list[1].x[6]
    assert t_slow == t_fast > 100
    assert cluster.core_list[1].s_sync >= 100


def ladder(variant):
    report, cluster = run_kernel("dot_ladder", variant=variant, n=4096)
    core = cluster.core_list[0]
    return 100.0 * core.n_fpu / core.run_cycles(), core


def test_utilisation_ladder_plain_loop_is_bound_by_two_loads_per_fmadd():
    utilisation, core = ladder("plain")
    assert 30.0 <= utilisation <= 33.4
    assert core.s_fdep < 10  # the loop is issue-bound, not latency-bound


def test_utilisation_ladder_ssr_unrolled_is_8_of_14_issue_slots():
    utilisation, _ = ladder("ssr_unrolled")
    assert abs(utilisation - 100 * 8 / 14) <= 3


def test_utilisation_ladder_ssr_frep_keeps_the_fpu_busy():
    utilisation, core = ladder("ssr_frep")
    assert utilisation > 94
    assert core.s_stream == 0


def stream_pair(offset_bytes):
    # two SSRs walk 512 words each with a 256-byte stride: every access of a stream hits one bank
    n = 128
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0)
    data = cluster.tcdm_array(TCDM_BASE, (2 * 32 * n + 4,))
    data[:] = 1.0
    source = f"""
        li a0, {TCDM_BASE}
        li a1, {TCDM_BASE + 8 + offset_bytes}
        li t0, {n - 1}
        csrw ssr0_bound0, t0
        csrw ssr1_bound0, t0
        li t1, 256
        csrw ssr0_stride0, t1
        csrw ssr1_stride0, t1
        csrw ssr0_rptr0, a0
        csrw ssr1_rptr0, a1
        csrwi ssr, 1
        frep.o t0, 1, 3, 0b1001
        fmadd.d fa0, ft0, ft1, fa0
        ecall
    """
    cluster.load_programs([assemble(source, "strides.S")])
    Simulator(cluster).run()
    return cluster


def test_bank_conflicts_appear_when_ssr_strides_collide_and_vanish_when_they_do_not():
    colliding = stream_pair(-8)  # both streams in bank 0
    apart = stream_pair(0)  # streams in banks 0 and 1
    assert colliding.tcdm.n_conflicts >= 120
    assert colliding.tcdm.conflicts_per_bank[0] == colliding.tcdm.n_conflicts
    assert apart.tcdm.n_conflicts == 0
    assert colliding.core_list[0].done_cycle > apart.core_list[0].done_cycle + 100


def test_dma_copies_1d_and_2d_at_up_to_64_bytes_per_cycle():
    top = build_system(cores=1, memory_latency_cycles=10, icache_miss_cycles=0)
    cluster, memory = top.child("cluster"), top.child("memory")
    block = np.arange(256, dtype=np.float64)
    memory.backdoor_write(memory.base_address, block.tobytes())
    dma = f"""
        li t0, {memory.base_address}
        dmsrc t0, zero
        li t0, {TCDM_BASE}
        dmdst t0, zero
        li t0, 2048
        dmcpyi a0, t0, 0
        li t0, {memory.base_address}
        dmsrc t0, zero
        li t0, {TCDM_BASE + 4096}
        dmdst t0, zero
        li t0, 256
        li t1, 64
        dmstr t0, t1
        li t0, 4
        dmrep t0
        li t0, 32
        dmcpyi a1, t0, 2
    1:  dmstati t2, 2
        bnez t2, 1b
        dmstati a2, 0
        ecall
    """
    cluster.load_programs([None, assemble(dma, "dma.S")])
    Simulator(top).run()
    assert np.array_equal(cluster.tcdm_array(TCDM_BASE, (256,)), block)
    rows = cluster.tcdm_array(TCDM_BASE + 4096, (4, 8))
    assert np.array_equal(rows[:, :4], block.reshape(-1, 32)[:4, :4])
    core = cluster.dma_core
    assert (core.x[10], core.x[11], core.x[12]) == (0, 1, 1)
    assert cluster.dma.n_in == 2048 + 128
    # 2048 bytes through 8 lanes need at least 32 cycles
    assert cluster.dma.n_busy >= 32 + 10


def test_a_stuck_cluster_is_a_kernel_deadlock_naming_each_core_and_who_waits_on_whom():
    # core 0 writes 10 results into a write stream that stores 4: its FIFO fills, nothing
    # drains it, and core 1 waits at the barrier for core 0 forever
    overflow = (f"li a0, {TCDM_BASE}\nli t0, 3\ncsrw ssr2_bound0, t0\nli t1, 8\ncsrw ssr2_stride0, t1\n"
                "csrw ssr2_wptr0, a0\ncsrwi ssr, 1\nli t0, 9\nfrep.o t0, 1\nfadd.d ft2, fa0, fa0\ncsrwi ssr, 0\n"
                "csrr zero, barrier\necall\n")
    cluster = SnitchCluster("cl", cores=2, icache_miss_cycles=0)
    cluster.load_programs([assemble(overflow, "over.S"), assemble("csrr zero, barrier\necall\n", "wait.S")])
    with pytest.raises(DeadlockError) as info:
        Simulator(cluster, watchdog_cycles=2000).run()
    report = str(info.value).splitlines()
    assert report[0].endswith("no transfer for 2.001 us while messages are pending")
    assert report[1:] == [
        "  cl.core0 holds an unfinished program: core 0: pc 0x0000102c (over.S:12: csrr zero, barrier); "
        "offload queue 1, frep on, SSR FIFOs [0, 0, 4], SSR jobs [0, 0, 0]",
        "  cl.core1 holds an unfinished program: core 1: pc 0x00001100 (wait.S:1: csrr zero, barrier) waiting at "
        "the barrier; offload queue 0, frep off, SSR FIFOs [0, 0, 0], SSR jobs [0, 0, 0]",
        "  cl.core1 waits on cl.core0 (it holds work)",
    ]


def test_a_long_busy_run_is_not_mistaken_for_a_deadlock_by_a_short_watchdog():
    # 3000 cycles of integer work without a single message: the cluster reports progress
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0)
    cluster.load_programs([assemble("li t0, 1500\n1: addi t0, t0, -1\nbnez t0, 1b\necall\n", "loop.S")])
    Simulator(cluster, watchdog_cycles=100).run()
    assert cluster.core_list[0].done_cycle > 3000


def test_a_dma_transfer_the_memory_never_answers_is_a_deadlock_on_that_memory():
    top = Component("top")
    cluster = SnitchCluster("cl", top, cores=1, icache_miss_cycles=0)
    memory = Sink("mem", top)  # takes the read burst and never answers
    connect(cluster.ext_req, memory.inp)
    connect(Producer("silent", top, count=0).out, cluster.ext_rsp)  # the answers' way back, never used
    source = (f"li t0, 0x80000000\ndmsrc t0, zero\nli t0, {TCDM_BASE}\ndmdst t0, zero\nli t0, 256\n"
              "dmcpyi zero, t0, 0\necall\n")
    cluster.load_programs([None, assemble(source, "lost.S")])
    with pytest.raises(DeadlockError) as info:
        Simulator(top, watchdog_cycles=1000).run()
    assert str(info.value).splitlines()[1:] == [
        "  top.cl.dma holds transfer 0 (lost.S:6: dmcpyi zero, t0, 0) with 0 burst(s) not yet sent, 1 read(s) and "
        "0 write(s) unanswered, 0 transfer(s) queued behind",
        "  top.cl.dma waits on top.mem (it holds work)",
    ]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_memory_slowly_answering_a_transfers_writes_is_progress_not_a_deadlock(compiled):
    # 4 KiB out in 16 bursts of 256 B, all sent at once; the memory takes 8 B a cycle, so
    # their answers come 32 cycles apart, about 500 cycles in all: longer than the watchdog's
    # 200-cycle window, during which no byte of the TCDM moves, yet each answer is progress
    top = Component("top")
    cluster = SnitchCluster("cl", top, cores=1, icache_miss_cycles=0, engine="compiled" if compiled else "python")
    memory = FixedLatencyMemory("mem", top, bytes_per_cycle=8, latency_cycles=13, size_bytes=0x2_0000)
    connect(cluster.ext_req, memory.req, latency=1, capacity=16)
    connect(memory.rsp, cluster.ext_rsp, latency=1)
    cluster.dma.burst_bytes = 256
    source = (f"li t0, {TCDM_BASE}\ndmsrc t0, zero\nli t0, 0x80000000\ndmdst t0, zero\nli t0, 4096\n"
              "dmcpyi zero, t0, 0\n1: dmstati t6, 2\nbnez t6, 1b\necall\n")
    cluster.load_programs([None, assemble(source, "drain.S")])
    result = Simulator(top, watchdog_cycles=200).run()
    assert result.reason == "quiescent"
    assert cluster.dma.n_out == 4096 and cluster.dma.n_done == 1 and cluster.dma.writes_in_flight == 0
    assert cluster.core_list[1].done_cycle >= 4096 // 8  # the memory's 512 cycles of writes: 2.5 windows


def test_a_core_spinning_on_a_flag_nobody_writes_is_a_deadlock_not_progress():
    spin = f"li a0, {TCDM_BASE}\n1: lw t0, 0(a0)\nbeqz t0, 1b\necall\n"
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0)
    cluster.load_programs([assemble(spin, "spin.S")])
    with pytest.raises(DeadlockError) as info:
        Simulator(cluster, watchdog_cycles=1000).run()
    report = str(info.value).splitlines()
    assert report[1].startswith("  cl.core0 holds an unfinished program: core 0: pc ")
    assert "(spin.S:" in report[1]


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "python"])
def test_a_stuck_cluster_is_named_while_the_rest_of_the_system_still_moves(compiled):
    from tests.kernel.components import Consumer
    top = Component("top")
    cluster = SnitchCluster("cl", top, cores=1, icache_miss_cycles=0, engine="compiled" if compiled else "python")
    memory = Sink("mem", top)  # takes the read burst and never answers
    connect(cluster.ext_req, memory.inp)
    connect(Producer("silent", top, count=0).out, cluster.ext_rsp)  # the answers' way back, never used
    producer, consumer = Producer("busy", top, count=1_000_000), Consumer("also_busy", top)
    connect(producer.out, consumer.inp)  # a message every cycle, for a million cycles
    source = (f"li t0, 0x80000000\ndmsrc t0, zero\nli t0, {TCDM_BASE}\ndmdst t0, zero\nli t0, 256\n"
              "dmcpyi zero, t0, 0\n1: dmstati t6, 2\nbnez t6, 1b\necall\n")
    cluster.load_programs([None, assemble(source, "poll.S")])
    sim = Simulator(top, watchdog_cycles=1000)
    with pytest.raises(DeadlockError) as info:
        sim.run()
    report = str(info.value).splitlines()
    assert sim.now < 3000 * 1000  # within three windows, long before the busy pair is done
    assert report[0].startswith("deadlock at ")
    assert report[0].endswith("and has made no progress for 1.25 us while the rest of the system moves")
    assert report[0].startswith("deadlock at 1.5 us: top.cl.dma holds transfer 0 (poll.S:6: dmcpyi zero, t0, 0)")
    assert any(line.startswith("  top.cl.core1 holds an unfinished program: core 1: pc ") and "(poll.S:" in line
               for line in report)
    assert "  top.cl.dma waits on top.mem (it holds work)" in report


class _Watcher:
    """An observer that watches nothing: enough to make a run traced."""

    def begin(self, sim):
        pass

    def registers(self, t, dirty):
        pass

    def channels(self, t, touched):
        pass

    def flush(self, sim):
        pass


def test_engine_auto_traces_with_the_python_model_and_compiled_refuses_a_traced_run():
    program = assemble("li t0, 100\n1: addi t0, t0, -1\nbnez t0, 1b\necall\n", "loop.S")
    cycles = {}
    for engine in ("auto", "python", "compiled"):
        for traced in (False, True):
            cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0, engine=engine)
            cluster.load_programs([program])
            sim = Simulator(cluster)
            if traced:
                sim.add_observer(_Watcher())
            if traced and engine == "compiled":
                with pytest.raises(ModelAssertion, match="engine 'compiled' cannot run a traced run"):
                    sim.run()
                continue
            sim.run()
            cycles[engine, traced] = (cluster.run_cycles(), cluster.n_compiled_cycles > 0)
    assert len(set(c for c, _ in cycles.values())) == 1
    assert {key: on for key, (_, on) in cycles.items()} == {
        ("auto", False): True, ("auto", True): False, ("python", False): False, ("python", True): False,
        ("compiled", False): True}
