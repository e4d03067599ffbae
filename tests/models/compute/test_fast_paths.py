"""The cluster's fast paths change speed, never behaviour.

Two kinds of check: random FREP/SSR programs run with ``SnitchCore.fast_paths`` on and off
(compiled replay functions, parking of the integer core and the fused steps of a parked
replay against the plain code) must agree on every counter, register, FIFO entry and
memory word; and kernels pin the exact figures the model produced before the fast paths
existed (TCDM grants inlined, SSR address runs).
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodel.kernel import Simulator, SimulationError
from archmodel.models.compute import TCDM_BASE, SnitchCluster, SnitchCore, assemble
from archmodel.workloads.snitch import run_kernel

BODY_OPS = ["fmadd.d {d}, {a}, {b}, {c}", "fmul.d {d}, {a}, {b}", "fadd.d {d}, {a}, {b}", "fsub.d {d}, {a}, {b}",
            "fnmsub.d {d}, {a}, {b}, {c}", "fmadd.s {d}, {a}, {b}, {c}", "fmax.d {d}, {a}, {b}"]


def random_program(rng: random.Random, core: int, long_replays: bool = False) -> str:
    """An FREP over streamed and register operands, with stores, loads and integer work
    around it; it may fault or hang, which both runs must then do the same way. With
    ``long_replays`` an outer FREP of many iterations with the offload queue filled behind
    it (the parked replays that fused steps take over, stream jobs ending midway)."""
    base = TCDM_BASE + 4096 * core + 8 * rng.randrange(64)
    lines = []
    writes = rng.random() < 0.3
    for stream in (0, 1, 2) if writes else (0, 1):
        dims = rng.randint(1, 2)
        for dim in range(dims):
            lines += [f"li t1, {rng.randint(1, 12)}", f"csrw ssr{stream}_bound{dim}, t1",
                      f"li t1, {8 * rng.randint(-2, 5)}", f"csrw ssr{stream}_stride{dim}, t1"]
        lines += [f"li t1, {rng.randint(0, 3)}", f"csrw ssr{stream}_repeat, t1",
                  f"li a{stream}, {base + 1024 * stream + 256}",
                  f"csrw ssr{stream}_{'w' if stream == 2 else 'r'}ptr{dims - 1}, a{stream}"]
    if rng.random() < 0.5:  # a pending integer load the parked core's next instruction reads
        lines += [f"li t3, {base + 2048}", "sw t3, 0(a0)", "lw t2, 0(a0)"]
    else:
        lines += [f"li t2, {base + 2048}"]
    lines += ["csrwi ssr, 1", f"li t0, {rng.randint(0, 40) if long_replays else rng.randint(0, 9)}"]
    size = rng.randint(1, 4)
    kind = "frep.o" if long_replays else rng.choice(["frep.o", "frep.i"])
    lines.append(f"{kind} t0, {size}, {rng.randint(0, 3)}, {rng.randint(0, 15)}")
    sources = ["ft0", "ft1", "fa1", "fa2", "fa3"]
    targets = ["fa0", "fa1", "fa4", "fa5"] + (["ft2"] if writes else [])
    for _ in range(size):
        lines.append(rng.choice(BODY_OPS).format(d=rng.choice(targets), a=rng.choice(sources),
                                                 b=rng.choice(sources), c=rng.choice(sources[2:] + targets[:2])))
    for u in range(rng.randint(8, 12) if long_replays else rng.randint(0, 10)):  # fills the offload queue
        lines.append(f"fsd fa{u % 6}, {8 * u}(t2)")
    lines += ["addi t4, t2, 8", "csrwi ssr, 0", "fence", "ecall"]
    return "\n".join(lines) + "\n"


def run_random(seed: int, fast: bool, long_replays: bool = False, compiled: bool = False) -> dict:
    """Run the random program of ``seed``; ``fast``: the Python model's fast paths,
    ``compiled``: the compiled cluster loop (off by default: it would take the cycles the
    fast paths are tested on)."""
    rng = random.Random(seed)
    params = dict(cores=rng.randint(1, 3), offload_depth=rng.randint(1, 8), ssr_fifo_depth=rng.randint(1, 4),
                  tcdm_latency_cycles=rng.randint(1, 3), banks=rng.choice([4, 8, 32]), icache_miss_cycles=0)
    programs = [assemble(random_program(rng, c, long_replays), f"random{c}.S") for c in range(params["cores"])]
    cluster = SnitchCluster("cl", engine="compiled" if compiled else "python", **params)
    cluster.tcdm_array(TCDM_BASE, (16384,))[:] = np.random.default_rng(seed).standard_normal(16384)
    cluster.load_programs(programs)
    old = SnitchCore.fast_paths
    SnitchCore.fast_paths = fast
    try:
        Simulator(cluster, watchdog_cycles=1000).run()
        error = None
    except SimulationError as err:
        error = str(err)
    finally:
        SnitchCore.fast_paths = old
    cores = [(c.done_cycle, c.n_instr, c.n_fpu, c.n_flops, c.s_raw, c.s_offload, c.s_lsu, c.s_sync, c.s_stream,
              c.s_fdep, c.x, [repr(v) for v in c.f], [[e[:] for e in s.fifo] for s in c.ssrs])
             for c in cluster.core_list]
    tcdm = cluster.tcdm
    return {"error": error, "cores": cores, "grants": tcdm.n_grants, "conflicts": list(tcdm.conflicts_per_bank),
            "rr": list(tcdm.rr), "memory": bytes(tcdm.data),
            "fused": sum(c.n_replay_steps for c in cluster.core_list) if fast else 0}


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fast_paths_behave_exactly_as_the_plain_code_on_random_frep_programs(seed):
    fast, plain = run_random(seed, fast=True), run_random(seed, fast=False)
    fast.pop("fused")
    plain.pop("fused")
    assert fast == plain


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fused_replay_steps_behave_exactly_as_the_plain_code(seed):
    fast, plain = run_random(seed, fast=True, long_replays=True), run_random(seed, fast=False, long_replays=True)
    fast.pop("fused")
    plain.pop("fused")
    assert fast == plain


def test_the_random_programs_reach_the_fast_paths():
    # the comparison above means something only if programs finish, stall and fault
    outcomes = [run_random(seed, fast=True) for seed in range(40)]
    finished = sum(o["error"] is None for o in outcomes)
    assert finished >= 10 and sum(o["error"] is not None for o in outcomes) >= 1
    assert any(core[5] > 0 for o in outcomes for core in o["cores"])  # offload stalls: parking
    assert any(core[8] > 0 for o in outcomes for core in o["cores"])  # stream stalls in replays
    replays = [run_random(seed, fast=True, long_replays=True) for seed in range(40)]
    assert sum(o["fused"] > 0 for o in replays) >= 20  # parked replays stepped by fused steps
    assert sum(o["error"] is None and o["fused"] > 0 for o in replays) >= 5


# Figures the model computed before any fast path was written: cycles, TCDM grants and
# conflicts, FPU operations per compute core, and the stalls of all compute cores summed
# (raw, offload, lsu, sync, stream, fp dependency).
PINNED = [
    (("gemm", {"m": 32, "n": 32, "k": 32}, None),
     (4485, 37888, 2410, (4096,) * 8, (480, 28583, 0, 56, 320, 0))),
    (("gemm", {"m": 16, "n": 16, "k": 8, "streamed": True}, None),
     (929, 3072, 290, (256,) * 8, (240, 97, 0, 1971, 18, 0))),
    (("axpy", {"n": 1024, "tile": 256}, None),
     (1650, 6144, 3186, (131,) * 8, (0, 0, 0, 8728, 1094, 0))),
    (("jacobi", {"rows": 10, "cols": 18, "sweeps": 2}, None),
     (963, 1820, 20, (131,) * 8, (0, 0, 0, 2568, 0, 0))),
    (("dot_ladder", {"n": 512, "variant": "ssr_frep"}, {"tcdm_latency_cycles": 2}),
     (611, 1025, 1, (527,) + (0,) * 7, (0, 463, 0, 0, 0, 5))),
    (("dot_ladder", {"n": 512, "variant": "ssr_unrolled"}, None),
     (1055, 1025, 65, (527,) + (0,) * 7, (0, 0, 0, 0, 0, 5))),
]


@pytest.mark.parametrize("case, want", PINNED, ids=[f"{c[0]}-{i}" for i, (c, _) in enumerate(PINNED)])
def test_kernels_keep_the_exact_figures_of_the_plain_model(case, want):
    kernel, params, cluster_params = case
    report, cluster = run_kernel(kernel, cluster_params=cluster_params, **params)
    cores = cluster.compute_cores
    stalls = tuple(sum(getattr(c, name) for c in cores)
                   for name in ("s_raw", "s_offload", "s_lsu", "s_sync", "s_stream", "s_fdep"))
    got = (report.cycles, report.tcdm_accesses, report.tcdm_conflicts, tuple(c.n_fpu for c in cores), stalls)
    assert got == want
