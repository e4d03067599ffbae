"""Indirect SSR streams (Snitch's ISSRs): gathers and scatters against numpy, the compiled
loop held to the Python model on random programs, the index fetches' TCDM traffic, and the
faults of a malformed job."""

import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from archmodel.kernel import SimulationError, Simulator
from archmodel.models.compute import TCDM_BASE, assemble
from archmodel.models.compute.isa import SSR_CSRS, SSR_INDEX_CREDITS, SSR_REGS
from archmodel.workloads.snitch import build_system

from .test_compiled_cluster import first_difference, full_snapshot
from .test_compiled_kernels import use_engine

TABLE = 256  # words of the table the indices point into (per core)
REGION = 0x4000
SIZES = {0: np.uint8, 1: np.uint16, 2: np.uint32, 3: np.uint64}


def _block(rng: random.Random, tp: int, k: int, table: np.ndarray, memory: dict, expect: dict) -> list:
    """One ISSR block of a core working at ``tp``: a gather (SSR 0 or 1, or both added), or a
    scatter through SSR 1; its index array goes in ``memory`` and what the block leaves in
    its output region in ``expect`` (both keyed by address)."""
    n = rng.randint(1, 40)
    size = rng.randrange(4)
    shift = rng.randrange(3)
    limit = TABLE >> shift
    kind = rng.choice(["gather", "gather", "both", "scatter"])
    lines = []
    index_at = tp + 0x800 + 0x800 * k + (1 << size) * rng.randrange(8)
    out = tp + 0x2000 + 0x800 * k
    table_at = tp
    if kind == "scatter":
        n = min(n, limit)
        idx = rng.sample(range(limit), n)  # distinct: no element written twice
    else:
        idx = [rng.randrange(min(limit, 1 << (8 << size) if size < 3 else limit)) for _ in range(n)]
    memory[index_at] = np.array(idx, SIZES[size])
    cfg = size | shift << 8
    streams = [0, 1] if kind == "both" else [1] if kind == "scatter" else [rng.randrange(2)]
    second = None
    if kind == "both":
        second = [rng.randrange(limit) for _ in range(n)]
        memory[index_at + 0x400] = np.array(second, SIZES[size])
    repeat = rng.randrange(3) if kind == "gather" else 0
    for j, s in enumerate(streams):
        lines += [f"li t1, {table_at}", f"csrw ssr{s}_idx_base, t1", f"li t1, {cfg}", f"csrw ssr{s}_idx_cfg, t1",
                  f"li t1, {n - 1}", f"csrw ssr{s}_bound0, t1", f"li t1, {repeat}", f"csrw ssr{s}_repeat, t1"]
    if kind == "scatter":
        # SSR 0 streams a run of the table, SSR 1 writes it to the output region's indexed words
        lines += [f"li t1, {out}", "csrw ssr1_idx_base, t1", f"li t1, {n - 1}", "csrw ssr0_bound0, t1",
                  "li t1, 8", "csrw ssr0_stride0, t1", "csrwi ssr0_repeat, 0", f"li t1, {table_at + 8}",
                  "csrw ssr0_rptr0, t1", f"li t1, {index_at}", "csrw ssr1_iwptr, t1", "csrwi ssr, 1",
                  f"li t0, {n - 1}", "frep.o t0, 1", "fmv.d ft1, ft0", "csrwi ssr, 0", "fence"]
        got = expect.setdefault("scatter", {})
        for e, i in enumerate(idx):
            got[out + 8 * (i << shift)] = table[1 + e]
        return lines
    total = n * (repeat + 1)
    lines += [f"li t1, {total - 1}", "csrw ssr2_bound0, t1", "li t1, 8", "csrw ssr2_stride0, t1",
              f"li t1, {out}", "csrw ssr2_wptr0, t1"]
    for j, s in enumerate(streams):
        lines += [f"li t1, {index_at + 0x400 * j}", f"csrw ssr{s}_irptr, t1"]
    body = "fadd.d ft2, ft0, ft1" if kind == "both" else f"fmv.d ft2, ft{streams[0]}"
    lines += ["csrwi ssr, 1", f"li t0, {total - 1}", "frep.o t0, 1", body, "csrwi ssr, 0", "fence"]
    values = np.repeat(table[np.array(idx) << shift], repeat + 1)
    if kind == "both":
        values = table[np.array(idx) << shift] + table[np.array(second) << shift]
    for e, v in enumerate(values):
        expect.setdefault("gather", {})[out + 8 * e] = v
    return lines


def build(seed: int):
    """A cluster of 1-3 cores each running a few ISSR blocks on its own table, with the
    index arrays placed and the expected outputs worked out with numpy."""
    rng = random.Random(seed)
    cores = rng.randint(1, 3)
    params = dict(ssr_fifo_depth=rng.randint(1, 4), tcdm_latency_cycles=rng.randint(1, 3),
                  banks=rng.choice([4, 8, 32]), offload_depth=rng.randint(1, 8))
    top = build_system(cores=cores, **params)
    cluster = top.child("cluster")
    numbers = np.random.default_rng(seed)
    programs, memory, expects = [], {}, []
    for hart in range(cores):
        tp = TCDM_BASE + REGION * hart
        table = numbers.standard_normal(TABLE)
        memory[tp] = table
        expect: dict = {}
        lines = []
        for k in range(rng.randint(1, 3)):
            # each block reads the table and writes its own output region (scatters: a copy of it)
            lines += _block(rng, tp, k, table, memory, expect)
        expects.append(expect)
        programs.append(assemble("\n".join(lines + ["ecall"]) + "\n", f"hart{hart}.S"))
    for at, array in memory.items():
        cluster.tcdm_array(at, array.shape, array.dtype)[:] = array
    cluster.load_programs(programs + [assemble("ecall\n")])
    return top, cluster, expects


def _issr_state(cluster) -> list:
    return [(s.indirect, s.idx_cfg, s.idx_base, s.i_next, s.i_words, s.i_off, [list(e) for e in s.iq], s.i_count,
             s.i_last) for c in cluster.core_list for s in c.ssrs]


def run(seed: int, compiled: bool) -> dict:
    top, cluster, expects = build(seed)
    use_engine(top, compiled)
    error = None
    try:
        Simulator(top, watchdog_cycles=2000).run()
    except SimulationError as err:
        error = str(err)
    return {"error": error, "state": full_snapshot(cluster, top.child("memory")), "issr": _issr_state(cluster),
            "expects": expects, "cluster": cluster}


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_issr_programs_gather_and_scatter_as_numpy_on_both_engines(seed):
    on, off = run(seed, True), run(seed, False)
    assert off["error"] is None, off["error"]
    assert on["error"] == off["error"]
    for result in (on, off):
        tcdm = result["cluster"].tcdm
        for expect in result["expects"]:
            for part in expect.values():
                for address, value in part.items():
                    assert tcdm.array(address, (1,))[0] == value, f"0x{address:08x}"
    assert on["issr"] == off["issr"]
    assert on["state"] == off["state"], first_difference(on["state"], off["state"])
    assert on["cluster"].n_compiled_cycles > 0


def _one_gather(n: int, size: int, offset: int, engine: str = "python"):
    """One core gathering ``n`` words through SSR 0 with ``2**size``-byte indices starting
    ``offset`` bytes into an index word; the cluster after the run."""
    top = build_system(cores=1)
    cluster = top.child("cluster")
    cluster.engine = engine
    table, index_at, out = TCDM_BASE, TCDM_BASE + 0x1000 + offset, TCDM_BASE + 0x2000
    program = [f"li t1, {table}", "csrw ssr0_idx_base, t1", f"li t1, {size}", "csrw ssr0_idx_cfg, t1",
               f"li t1, {n - 1}", "csrw ssr0_bound0, t1", "csrw ssr2_bound0, t1", "li t1, 8", "csrw ssr2_stride0, t1",
               f"li t1, {out}", "csrw ssr2_wptr0, t1", f"li t1, {index_at}", "csrw ssr0_irptr, t1", "csrwi ssr, 1",
               f"li t0, {n - 1}", "frep.o t0, 1", "fmv.d ft2, ft0", "csrwi ssr, 0", "fence", "ecall"]
    cluster.load_programs([assemble("\n".join(program) + "\n"), assemble("ecall\n")])
    values = np.arange(1.0, 65.0)
    cluster.tcdm_array(table, (64,))[:] = values
    idx = (np.arange(n) * 7) % 64
    cluster.tcdm_array(index_at, (n,), SIZES[size])[:] = idx
    Simulator(top).run()
    assert np.array_equal(cluster.tcdm_array(out, (n,)), values[idx])
    return cluster


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_index_words_are_fetched_through_the_streamers_port_and_counted(size):
    # n data reads, n writes, and the index words: ceil((offset in its word + n * 2**size) / 8)
    n, offset = 21, 1 << size
    cluster = _one_gather(n, size, offset)
    words = -(-(offset % 8 + n * (1 << size)) // 8)
    assert cluster.tcdm.n_grants == 2 * n + words


@pytest.mark.parametrize("size", [0, 1, 2, 3])
def test_index_fetches_share_the_streamers_port(size):
    # One SSR port serves the index words and the elements: 48 more elements cost 48 element
    # requests and 48 * 2**size / 8 index words, one request a cycle (8-bit indices 54
    # cycles, 64-bit 96); the write stream's requests may cost a bank conflict or two.
    more = _one_gather(96, size, 0).run_cycles() - _one_gather(48, size, 0).run_cycles()
    port = 48 + 48 * (1 << size) // 8
    assert port <= more <= port + 2


def test_the_compiled_loop_gathers_the_same():
    for size in range(4):
        a, b = _one_gather(30, size, 0, "python"), _one_gather(30, size, 0, "compiled")
        assert a.run_cycles() == b.run_cycles() and a.tcdm.n_grants == b.tcdm.n_grants
        assert b.n_compiled_cycles > 0


def _faulting(lines: list, engine: str) -> str:
    top = build_system(cores=1)
    cluster = top.child("cluster")
    cluster.engine = engine
    cluster.load_programs([assemble("\n".join(lines + ["ecall"]) + "\n"), assemble("ecall\n")])
    cluster.tcdm_array(TCDM_BASE + 0x1000, (4,), np.uint32)[:] = [0, 1, 100000, 2]
    with pytest.raises(SimulationError) as err:
        Simulator(top).run()
    return str(err.value)


SETUP = [f"li t1, {TCDM_BASE}", "csrw ssr0_idx_base, t1", "li t1, 2", "csrw ssr0_idx_cfg, t1", "li t1, 3",
         "csrw ssr0_bound0, t1"]


@pytest.mark.parametrize("engine", ["python", "compiled"])
@pytest.mark.parametrize("lines, message", [
    (SETUP + [f"li t1, {TCDM_BASE + 0x1000}", "csrw ssr0_irptr, t1", "csrwi ssr, 1", "li t0, 3", "frep.o t0, 1",
              "fmv.d fa0, ft0"], "SSR 0 indirect element 2 at 0x100c3500 is outside the TCDM"),
    (SETUP + [f"li t1, {TCDM_BASE + 0x1002}", "csrw ssr0_irptr, t1"], "must be aligned to their 4 bytes"),
    (SETUP + ["li t1, 0x802", "csrw ssr0_idx_cfg, t1", f"li t1, {TCDM_BASE}", "csrw ssr0_irptr, t1"],
     "shift 8"),
    (SETUP + [f"li t1, {TCDM_BASE + 0x1000}", "csrw ssr2_irptr, t1"], "SSR 2 has no indirection"),
    (SETUP + [f"li t1, {TCDM_BASE + 0x20000 - 8}", "csrw ssr0_irptr, t1"], "are outside the TCDM"),
])
def test_a_malformed_indirect_job_stops_the_run_naming_it(lines, message, engine):
    assert message in _faulting(lines, engine)


def test_the_ssr_registers_are_the_isa_table_rows():
    # every engine reads SSR_REGS: the CSR names are its rows, per streamer, in order
    names = [name for name, (n, _, _) in SSR_CSRS.items() if n == 0]
    assert names[-4:] == ["ssr0_idx_cfg", "ssr0_idx_base", "ssr0_irptr", "ssr0_iwptr"]
    assert len(names) == sum(reg.dims for reg in SSR_REGS) <= 32
    assert SSR_INDEX_CREDITS == 3
