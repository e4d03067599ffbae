"""Data-parallel kernels for a Snitch cluster, generated as assembly programs.

Each ``setup_*`` function takes a :class:`~archmodel.models.compute.SnitchCluster` (and the
outside memory at its DMA port when data comes from outside), writes the inputs, assembles
and loads one program per core, and registers a check that compares the result in the
modelled memory with numpy when the cluster finishes (a mismatch stops the run). Kernels with
outside data stream it by DMA with double buffering: the DMA core fetches tile t+1 and writes
back tile t-1 while the compute cores work on tile t; a hardware barrier separates steps.

:func:`run_kernel` builds a cluster with a :class:`FixedLatencyMemory`, runs one kernel and
returns a :class:`KernelReport` (cycles, FPU utilisation per core, GFLOP/s, TCDM bank
conflicts, DMA bytes and bandwidth). ``SETUPS`` maps the kernels' names to their setups;
:mod:`.binding` binds them to the language's ``run NAME(args) on cluster`` statement, and
:mod:`.multicluster` holds the kernels that run across several clusters.

Kernels (all FP64):

* ``gemm(m, n, k)`` C = A B, rows of C dealt round robin to the 8 cores, 8 columns at a time:
  an SSR streams A's row (each element used 8 times), another streams an 8-column block of B,
  one ``fmul`` per column then FREP replays 8 ``fmadd`` k-1 times, then 8 ``fsd``. Resident
  (operands placed in the TCDM) or ``streamed`` (B fetched once, A in blocks of 8 rows and C
  written back, by DMA).
* ``axpy(n, alpha)`` y = alpha x + y: two read SSRs and a write SSR, one ``fmadd`` under FREP.
* ``dot(n)`` and ``reduction(n)``: FREP over one staggered ``fmadd``/``fadd`` rotating four
  accumulators; partial sums meet in the TCDM and core 0 adds them.
* ``jacobi(rows, cols, sweeps, band)`` the 2D 5-point stencil out = (N + S + W + E) / 4 on the
  interior: a 4-dimensional SSR streams the north/south pairs, another the west/east pairs, a
  third writes the result; a 16-instruction FREP body handles 4 points. With ``band`` (or
  when two copies of the grid do not fit in the TCDM) bands of rows with their halo rows
  stream by DMA with double buffering, each sweep from one outside copy of the grid to the
  other; otherwise the grid is fetched once, swept in the TCDM and written back.
* ``dot_ladder(n, variant)`` on core 0 only: ``plain`` (fld, fld, fmadd, unrolled 16x),
  ``ssr_unrolled`` (SSRs, 8 fmadd + 6 integer instructions per iteration), ``ssr_frep``.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster

# The programs' building blocks; the kernels of other modules import them from here too.
from .snitch_programs import (BARRIER, WAIT_DMA, Layout, assemble_lines, check_result, dma_schedule, dma_transfer,
                              get_array, outside_memory, put_array, ssr_job)

@attrs.frozen
class KernelReport:
    """What one kernel run measured."""

    kernel: str
    cycles: int
    fpu_utilisation: float  # % over the compute cores
    core_utilisation: tuple  # % per compute core, over the cluster's cycles
    gflops: float
    flops: int
    tcdm_conflicts: int
    tcdm_accesses: int
    dma_bytes: int
    dma_gbps: float

    def table(self) -> str:
        """The report as aligned lines."""
        rows = [("kernel", self.kernel), ("cycles", self.cycles), ("FPU utilisation %", f"{self.fpu_utilisation:.1f}"),
                ("per core %", " ".join(f"{u:.0f}" for u in self.core_utilisation)),
                ("GFLOP/s", f"{self.gflops:.2f}"), ("TCDM conflicts", self.tcdm_conflicts),
                ("DMA bytes", self.dma_bytes), ("DMA GB/s", f"{self.dma_gbps:.2f}")]
        return "\n".join(f"{k:<18} {v}" for k, v in rows)


# -- GEMM ---------------------------------------------------------------------------------------
def gemm_row_code(k: int, n: int, a_row_reg: str, c_row_reg: str, b_base: int, ldb: int,
                  accumulate: bool = False) -> list[str]:
    """Code computing one row of C (8 columns per group, groups rotated by hartid); with
    ``accumulate`` C += A B (the row's values loaded first, ``s4`` = k - 1 replays)."""
    groups = n // 8
    lines = [f"li s7, {groups}", "csrr t2, mhartid", f"li t3, {groups}", "rem t2, t2, t3", "slli s8, t2, 6",
             f"li s10, {n * 8}"]
    lines += ["2:", f"csrw ssr0_rptr0, {a_row_reg}", f"li t3, {b_base}", "add t3, t3, s8", "csrw ssr1_rptr1, t3"]
    if accumulate:
        lines += [f"add t4, {c_row_reg}, s8"] + [f"fld f{8 + u}, {8 * u}(t4)" for u in range(8)] + ["frep.o s4, 8"]
    else:
        lines += [f"fmul.d f{8 + u}, ft0, ft1" for u in range(8)] + ["frep.o s5, 8"]
    lines += [f"fmadd.d f{8 + u}, ft0, ft1, f{8 + u}" for u in range(8)]
    lines += [f"add t4, {c_row_reg}, s8"] + [f"fsd f{8 + u}, {8 * u}(t4)" for u in range(8)]
    lines += ["addi s8, s8, 64", "blt s8, s10, 3f", "li s8, 0", "3:", "addi s7, s7, -1", "bnez s7, 2b"]
    return lines


def gemm_streams(k: int, ldb: int) -> list[str]:
    """The SSR setup of :func:`gemm_row_code` (A's row, each element 8 times; B's 8-column block)."""
    return (ssr_job(0, [k], [8], "zero", repeat=7)[:-1] + ssr_job(1, [8, k], [8, ldb * 8], "zero", repeat=0)[:-1]
            + [f"li s5, {k - 2}", "csrwi ssr, 1"])


def setup_gemm(cluster: SnitchCluster, memory=None, *, m: int = 32, n: int = 32, k: int = 32,
               streamed: bool = False, seed: int = 0, pad: int = 0, region: tuple | None = None) -> Callable:
    """C = A B (m x k times k x n) on the cluster's compute cores; ``pad`` extra words per
    row of A and B (a layout knob). Resident unless ``streamed``; then A, B and C live
    outside, in ``region`` (first address, bytes) of the memory if given."""
    cores = cluster.cores
    if n % 8 or k < 2 or (streamed and m % cores):
        raise ValueError(f"gemm needs n a multiple of 8, k >= 2{f' and m a multiple of {cores}' if streamed else ''}")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    lda, ldb = k + pad, n + pad
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    b_addr = tcdm.take(8 * k * ldb)
    if not streamed:
        a_addr, c_addr = tcdm.take(8 * m * lda), tcdm.take(8 * m * n)
        cluster.tcdm_array(a_addr, (m, lda))[:, :k] = a
        cluster.tcdm_array(b_addr, (k, ldb))[:, :n] = b
        lines = ["csrr s3, mhartid"] + gemm_streams(k, ldb)
        lines += ["9:", f"li t0, {m}", "bge s3, t0, 8f", f"li t0, {8 * lda}", "mul t1, s3, t0",
                  f"li s6, {a_addr}", "add s6, s6, t1", f"li t0, {8 * n}", "mul t1, s3, t0", f"li s9, {c_addr}",
                  "add s9, s9, t1"]
        lines += gemm_row_code(k, n, "s6", "s9", b_addr, ldb)
        lines += [f"addi s3, s3, {cores}", "j 9b", "8:", "csrwi ssr, 0", "fence", "ecall"]
        program = assemble_lines("gemm.S", lines)
        cluster.load_programs([program] * cores)
        cluster.on_finish(lambda cl: check_result(cl, "gemm", cl.tcdm_array(c_addr, (m, n)), a @ b))
        return lambda: a @ b
    if pad:
        raise ValueError("streamed gemm keeps the outside layout: pad must be 0")
    memory, outside = outside_memory(cluster, memory, region)
    ext_a, ext_b, ext_c = outside.take(8 * m * k), outside.take(8 * k * n), outside.take(8 * m * n)
    put_array(memory, ext_a, a)
    put_array(memory, ext_b, b)
    gemm_streamed_programs(cluster, memory, tcdm, b_addr, (ext_a, ext_b, ext_c), 0, m, k, n, a @ b)
    return lambda: a @ b


def gemm_streamed_programs(cluster: SnitchCluster, memory, tcdm: Layout, b_addr: int, operands: tuple, first_row: int,
                   rows: int, k: int, n: int, want: np.ndarray) -> None:
    """Load the programs computing rows ``first_row`` .. ``first_row + rows`` of C = A B with
    A, B and C outside at ``operands``: B is fetched once, A in blocks of one row per core and
    C written back block by block, double-buffered."""
    cores = cluster.cores
    ext_a, ext_b, ext_c = operands
    ext_a += 8 * first_row * k
    ext_c += 8 * first_row * n
    a_buf = [tcdm.take(8 * cores * k) for _ in range(2)]
    c_buf = [tcdm.take(8 * cores * n) for _ in range(2)]
    blocks = rows // cores
    tiles_in = [[(ext_a + 8 * t * cores * k, a_buf[t % 2], 8 * cores * k)] for t in range(blocks)]
    tiles_out = [[(c_buf[t % 2], ext_c + 8 * t * cores * n, 8 * cores * n)] for t in range(blocks)]
    dma = assemble_lines("gemm_dma.S", dma_schedule([(ext_b, b_addr, 8 * k * n)], tiles_in, tiles_out))
    lines = ["csrr s3, mhartid"] + gemm_streams(k, n) + BARRIER
    for t in range(blocks):
        lines += [f"li t0, {8 * k}", "mul t1, s3, t0", f"li s6, {a_buf[t % 2]}", "add s6, s6, t1",
                  f"li t0, {8 * n}", "mul t1, s3, t0", f"li s9, {c_buf[t % 2]}", "add s9, s9, t1"]
        lines += gemm_row_code(k, n, "s6", "s9", b_addr, n) + ["fence"] + BARRIER
    lines += ["csrwi ssr, 0", "ecall"]
    compute = assemble_lines("gemm_streamed.S", lines)
    cluster.load_programs([compute] * cores + [dma])
    mine = want[first_row:first_row + rows]
    cluster.on_finish(lambda cl: check_result(cl, "gemm", get_array(memory, ext_c, (rows, n)), mine))


# -- AXPY, dot, reduction -------------------------------------------------------------------------------
def tile_count(n: int, cores: int, tile: int) -> int:
    """The tiles of ``tile`` elements in ``n`` (each core takes tile / cores of a tile)."""
    if n % tile or tile % cores:
        raise ValueError(f"n = {n} must be a multiple of the tile ({tile}), itself a multiple of {cores}")
    return n // tile


def setup_axpy(cluster: SnitchCluster, memory=None, *, n: int = 4096, alpha: float = 2.0, tile: int = 512,
               seed: int = 0, region: tuple | None = None) -> Callable:
    """y = alpha x + y with x, y outside (in ``region``, first address and bytes, if given),
    streamed by DMA in double-buffered tiles."""
    memory, outside = outside_memory(cluster, memory, region)
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    ext_x, ext_y = outside.take(8 * n), outside.take(8 * n)
    put_array(memory, ext_x, x)
    put_array(memory, ext_y, y)
    axpy_programs(cluster, ext_x, ext_y, n, tile, alpha)
    want = alpha * x + y
    cluster.on_finish(lambda cl: check_result(cl, "axpy", get_array(memory, ext_y, (n,)), want))
    return lambda: want


def axpy_programs(cluster: SnitchCluster, ext_x: int, ext_y: int, n: int, tile: int, alpha: float) -> None:
    """Load the programs of y = alpha x + y over ``n`` elements at ``ext_x``/``ext_y`` outside."""
    cores = cluster.cores
    steps = tile_count(n, cores, tile)
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    xb = [tcdm.take(8 * tile) for _ in range(2)]
    yb = [tcdm.take(8 * tile) for _ in range(2)]
    tiles_in = [[(ext_x + 8 * t * tile, xb[t % 2], 8 * tile), (ext_y + 8 * t * tile, yb[t % 2], 8 * tile)]
                for t in range(steps)]
    tiles_out = [[(yb[t % 2], ext_y + 8 * t * tile, 8 * tile)] for t in range(steps)]
    dma = assemble_lines("axpy_dma.S", dma_schedule([], tiles_in, tiles_out))
    chunk = tile // cores
    ratio = float(alpha).as_integer_ratio()
    lines = ["csrr s3, mhartid", f"li t0, {8 * chunk}", "mul s4, s3, t0", f"li t0, {ratio[0]}", "fcvt.d.w fa0, t0",
             f"li t0, {ratio[1]}", "fcvt.d.w fa1, t0", "fdiv.d fa0, fa0, fa1", f"li s5, {chunk - 1}"] + BARRIER
    for t in range(steps):
        lines += [f"li s6, {xb[t % 2]}", "add s6, s6, s4", f"li s7, {yb[t % 2]}", "add s7, s7, s4"]
        lines += ssr_job(0, [chunk], [8], "s6") + ssr_job(1, [chunk], [8], "s7") + ssr_job(2, [chunk], [8], "s7", write=True)
        lines += ["csrwi ssr, 1", "frep.o s5, 1", "fmadd.d ft2, fa0, ft0, ft1", "csrwi ssr, 0", "fence"] + BARRIER
    lines += ["ecall"]
    cluster.load_programs([assemble_lines("axpy.S", lines)] * cores + [dma])


def _setup_sum(cluster: SnitchCluster, memory, n: int, tile: int, seed: int, dot: bool,
               region: tuple | None) -> Callable:
    memory, outside = outside_memory(cluster, memory, region)
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    ext_x, ext_y = outside.take(8 * n), outside.take(8 * n)
    put_array(memory, ext_x, x)
    put_array(memory, ext_y, y)
    result = sum_programs(cluster, ext_x, ext_y, n, tile, dot)
    want = float(x @ y) if dot else float(x.sum())
    cluster.on_finish(lambda cl: check_result(cl, "dot" if dot else "reduction", cl.tcdm_array(result, (1,)),
                                              np.array([want])))
    return lambda: want


def sum_programs(cluster: SnitchCluster, ext_x: int, ext_y: int, n: int, tile: int, dot: bool,
                 dma_tail: Callable | None = None) -> int:
    """Load the programs of x . y (``dot``) or sum(x) over ``n`` elements outside; the result's
    TCDM address. ``dma_tail(result, tcdm)`` gives lines the DMA core runs once the result is
    there (a barrier after core 0 wrote it), ``tcdm`` the Layout for what they need."""
    cores = cluster.cores
    steps = tile_count(n, cores, tile)
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    xb = [tcdm.take(8 * tile) for _ in range(2)]
    yb = [tcdm.take(8 * tile) for _ in range(2)] if dot else None
    partial = tcdm.take(8 * cores)
    result = tcdm.take(8)
    tiles_in = [[(ext_x + 8 * t * tile, xb[t % 2], 8 * tile)] +
                ([(ext_y + 8 * t * tile, yb[t % 2], 8 * tile)] if dot else []) for t in range(steps)]
    dma_lines = dma_schedule([], tiles_in, [[] for _ in range(steps)], extra_barriers=1 + (dma_tail is not None))
    if dma_tail is not None:
        dma_lines = dma_lines[:-1] + dma_tail(result, tcdm) + ["ecall"]
    chunk = tile // cores
    body = "fmadd.d fa0, ft0, ft1, fa0" if dot else "fadd.d fa0, ft0, fa0"
    mask = 0b1001 if dot else 0b0101
    lines = ["csrr s3, mhartid", f"li t0, {8 * chunk}", "mul s4, s3, t0", f"li s5, {chunk - 1}"]
    lines += [f"fcvt.d.w fa{i}, zero" for i in range(4)] + BARRIER
    for t in range(steps):
        lines += [f"li s6, {xb[t % 2]}", "add s6, s6, s4"] + ssr_job(0, [chunk], [8], "s6")
        if dot:
            lines += [f"li s7, {yb[t % 2]}", "add s7, s7, s4"] + ssr_job(1, [chunk], [8], "s7")
        lines += ["csrwi ssr, 1", f"frep.o s5, 1, 3, {mask}", body, "csrwi ssr, 0", "fence"] + BARRIER
    lines += ["fadd.d fa0, fa0, fa1", "fadd.d fa2, fa2, fa3", "fadd.d fa0, fa0, fa2", "slli t0, s3, 3",
              f"li t1, {partial}", "add t1, t1, t0", "fsd fa0, 0(t1)", "fence"] + BARRIER
    lines += ["bnez s3, 7f", f"li t1, {partial}", "fld fa0, 0(t1)"]
    for i in range(1, cores):
        lines += [f"fld fa1, {8 * i}(t1)", "fadd.d fa0, fa0, fa1"]
    lines += [f"li t1, {result}", "fsd fa0, 0(t1)", "fence", "7:"] + BARRIER * (dma_tail is not None) + ["ecall"]
    compute = assemble_lines("dot.S" if dot else "reduction.S", lines)
    cluster.load_programs([compute] * cores + [assemble_lines("sum_dma.S", dma_lines)])
    return result


def setup_dot(cluster: SnitchCluster, memory=None, *, n: int = 4096, tile: int = 512, seed: int = 0,
              region: tuple | None = None) -> Callable:
    """x . y with x, y outside (in ``region`` if given), streamed by DMA in double-buffered tiles."""
    return _setup_sum(cluster, memory, n, tile, seed, dot=True, region=region)


def setup_reduction(cluster: SnitchCluster, memory=None, *, n: int = 4096, tile: int = 512, seed: int = 0,
                    region: tuple | None = None) -> Callable:
    """sum(x) with x outside (in ``region`` if given), streamed by DMA in double-buffered tiles."""
    return _setup_sum(cluster, memory, n, tile, seed, dot=False, region=region)


# -- Jacobi -----------------------------------------------------------------------------------------------
def jacobi_band_code(src: int, dst: int, first: int, count: int, cores: int, row_bytes: int, width: int,
                      dst_row_bytes: int) -> list[str]:
    """One core's rows of one band: ``count`` interior rows, ``first`` of them at ``src`` row
    ``first + 1`` (``src`` row 0 is the halo above), written to ``dst`` rows ``first``.. every
    ``cores`` rows (``dst`` rows start at the first interior column)."""
    groups = width // 4
    lines = [f"li s6, {src + first * row_bytes + 8}"]
    lines += ssr_job(0, [4, 2, groups, count], [8, 2 * row_bytes, 32, cores * row_bytes], "s6")
    lines += [f"li s7, {src + (first + 1) * row_bytes}"]
    lines += ssr_job(1, [4, 2, groups, count], [8, 16, 32, cores * row_bytes], "s7")
    lines += [f"li s8, {dst + first * dst_row_bytes}"]
    lines += ssr_job(2, [width, count], [8, cores * dst_row_bytes], "s8", write=True)
    lines += [f"li s5, {groups * count - 1}", "csrwi ssr, 1", "frep.o s5, 16"]
    lines += [f"fmul.d f{8 + p}, ft3, ft0" for p in range(4)]
    lines += [f"fmadd.d f{8 + p}, ft3, ft0, f{8 + p}" for p in range(4)]
    lines += [f"fmadd.d f{8 + p}, ft3, ft1, f{8 + p}" for p in range(4)]
    lines += [f"fmadd.d ft2, ft3, ft1, f{8 + p}" for p in range(4)]
    return lines + ["csrwi ssr, 0", "fence"]


QUARTER = [  # ft3 = 1/4
    "li t0, 1", "fcvt.d.w ft3, t0", "li t0, 4", "fcvt.d.w ft4, t0", "fdiv.d ft3, ft3, ft4"]


def _jacobi_band(rows: int, cols: int, sweeps: int, tcdm_bytes: int) -> int:
    """The tallest band of interior rows whose double buffers fit in the TCDM; with several
    sweeps at least 3 bands per sweep, so the next sweep's first band is fetched only after
    the rows it reads were written back (see setup_jacobi)."""
    interior = rows - 2
    for band in range(interior, 0, -1):
        if interior % band or (sweeps > 1 and interior // band < 3):
            continue
        if 16 * ((band + 2) * cols + band * (cols - 2)) <= tcdm_bytes:
            return band
    raise ValueError(f"no band of a {rows} x {cols} grid fits the TCDM twice over")


def setup_jacobi(cluster: SnitchCluster, memory=None, *, rows: int = 18, cols: int = 34, sweeps: int = 2,
                 band: int | None = None, seed: int = 0, region: tuple | None = None) -> Callable:
    """``sweeps`` Jacobi sweeps of the 5-point stencil on a rows x cols grid from outside
    (boundary fixed). With ``band`` (interior rows per tile) the grid streams by DMA with
    double buffering: each sweep reads one outside copy of the grid and writes the other,
    band by band (the band with a halo row above and below in, the band's interior out
    by a 2D transfer) while the cores work on the band before. Without ``band`` a grid whose
    two copies fit in the TCDM is fetched once, swept there and written back; a larger grid
    streams in the tallest band that fits. The grid's outside copies go in ``region`` (first
    address, bytes) if given."""
    memory, outside = outside_memory(cluster, memory, region)
    width = cols - 2
    if width % 4 or rows < 3:
        raise ValueError("jacobi needs cols - 2 a multiple of 4 and rows >= 3")
    if band is not None and (band < 1 or (rows - 2) % band):
        raise ValueError(f"band = {band} must divide the {rows - 2} interior rows")
    if band is not None and sweeps > 1 and (rows - 2) // band < 3:
        raise ValueError("a streamed jacobi with several sweeps needs at least 3 bands per sweep")
    grid = np.random.default_rng(seed).standard_normal((rows, cols))
    want = jacobi_reference(grid, sweeps)
    if band is None and 16 * rows * cols > cluster.tcdm_bytes:
        band = _jacobi_band(rows, cols, sweeps, cluster.tcdm_bytes)
    if band is None:
        ext = outside.take(8 * rows * cols)
        put_array(memory, ext, grid)
        _setup_jacobi_resident(cluster, ext, rows, cols, sweeps)
    else:
        # two outside copies; the boundary is in both and never written
        ext_grids = [outside.take(8 * rows * cols) for _ in range(2)]
        for address in ext_grids:
            put_array(memory, address, grid)
        ext = ext_grids[sweeps % 2]
        _setup_jacobi_streamed(cluster, ext_grids, rows, cols, sweeps, band)
    cluster.on_finish(lambda cl: check_result(cl, "jacobi", get_array(memory, ext, (rows, cols)), want))
    return lambda: want


def jacobi_reference(grid: np.ndarray, sweeps: int) -> np.ndarray:
    """numpy's answer: ``sweeps`` Jacobi sweeps of the 5-point stencil, boundary fixed."""
    want = grid.copy()
    for _ in range(sweeps):
        nxt = want.copy()
        nxt[1:-1, 1:-1] = (0.25 * want[:-2, 1:-1] + 0.25 * want[2:, 1:-1] + 0.25 * want[1:-1, :-2]
                           + 0.25 * want[1:-1, 2:])
        want = nxt
    return want


def _setup_jacobi_resident(cluster: SnitchCluster, ext: int, rows: int, cols: int, sweeps: int) -> None:
    cores = cluster.cores
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    bufs = [tcdm.take(8 * rows * cols) for _ in range(2)]
    size = 8 * rows * cols
    dma_lines = dma_transfer(ext, bufs[0], size) + dma_transfer(ext, bufs[1], size) + WAIT_DMA + BARRIER
    dma_lines += BARRIER * sweeps + dma_transfer(bufs[sweeps % 2], ext, size) + WAIT_DMA + ["ecall"]
    dma = assemble_lines("jacobi_dma.S", dma_lines)
    programs = []
    row_bytes = 8 * cols
    for c in range(cores):
        mine = list(range(1 + c, rows - 1, cores))
        lines = QUARTER + BARRIER
        for s in range(sweeps):
            src, dst = bufs[s % 2], bufs[(s + 1) % 2]
            if mine:
                first = mine[0] - 1
                lines += jacobi_band_code(src, dst + row_bytes + 8, first, len(mine), cores, row_bytes, cols - 2,
                                           row_bytes)
            lines += BARRIER
        lines += ["ecall"]
        programs.append(assemble_lines(f"jacobi{c}.S", lines))
    cluster.load_programs(programs + [dma])


def _setup_jacobi_streamed(cluster: SnitchCluster, ext_grids: list, rows: int, cols: int, sweeps: int,
                           band: int) -> None:
    # Step t = (sweep, b) computes band b of a sweep. The DMA fetches step t+1's band while
    # the cores compute step t, after writing back step t-1: with 3 or more bands per sweep
    # the rows the next sweep's first band reads were written back steps earlier, and a
    # transfer starts only after the one before it completed (writes acknowledged).
    cores = cluster.cores
    width = cols - 2
    row_bytes, out_row_bytes = 8 * cols, 8 * width
    per_sweep = (rows - 2) // band
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    in_buf = [tcdm.take((band + 2) * row_bytes) for _ in range(2)]
    out_buf = [tcdm.take(band * out_row_bytes) for _ in range(2)]
    tiles_in, tiles_out = [], []
    for sweep in range(sweeps):
        src, dst = ext_grids[sweep % 2], ext_grids[(sweep + 1) % 2]
        for b in range(per_sweep):
            t = len(tiles_in)
            top = b * band  # the halo row above the band's first interior row 1 + b * band
            tiles_in.append([(src + top * row_bytes, in_buf[t % 2], (band + 2) * row_bytes)])
            tiles_out.append([(out_buf[t % 2], dst + (top + 1) * row_bytes + 8, out_row_bytes,
                               out_row_bytes, row_bytes, band)])
    dma = assemble_lines("jacobi_dma.S", dma_schedule([], tiles_in, tiles_out))
    programs = []
    for c in range(cores):
        count = len(range(c, band, cores))
        lines = QUARTER + BARRIER
        for t in range(len(tiles_in)):
            if count:
                lines += jacobi_band_code(in_buf[t % 2], out_buf[t % 2], c, count, cores, row_bytes, width,
                                           out_row_bytes)
            lines += BARRIER
        lines += ["ecall"]
        programs.append(assemble_lines(f"jacobi{c}.S", lines))
    cluster.load_programs(programs + [dma])


# -- the single-core utilisation ladder -------------------------------------------------------------------
def setup_dot_ladder(cluster: SnitchCluster, memory=None, *, n: int = 2048, variant: str = "ssr_frep",
                     seed: int = 0) -> Callable:
    """A dot product of n resident elements on core 0 alone, as ``plain``, ``ssr_unrolled``
    or ``ssr_frep`` code (the FPU-utilisation ladder of the SSR and Snitch papers)."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    xa, ya, out = tcdm.take(8 * n), tcdm.take(8 * n), tcdm.take(8)
    cluster.tcdm_array(xa, (n,))[:] = x
    cluster.tcdm_array(ya, (n,))[:] = y
    lines = [f"li a0, {xa}", f"li a1, {ya}"] + [f"fcvt.d.w f{8 + u}, zero" for u in range(8)]
    if variant == "plain":
        if n % 16:
            raise ValueError("the plain ladder kernel needs n a multiple of 16")
        lines += [f"li a2, {xa + 8 * n}", "1:"]
        for half in range(2):
            for u in range(8):
                lines += [f"fld f{16 + u}, {64 * half + 8 * u}(a0)", f"fld f{24 + u}, {64 * half + 8 * u}(a1)"]
            lines += [f"fmadd.d f{8 + u}, f{16 + u}, f{24 + u}, f{8 + u}" for u in range(8)]
        lines += ["addi a0, a0, 128", "addi a1, a1, 128", "bne a0, a2, 1b"]
    elif variant == "ssr_unrolled":
        if n % 8:
            raise ValueError("the unrolled ladder kernel needs n a multiple of 8")
        lines += ssr_job(0, [n], [8], "a0") + ssr_job(1, [n], [8], "a1") + [f"li t0, {n}", "li t2, 0", "csrwi ssr, 1", "1:"]
        lines += [f"fmadd.d f{8 + u}, ft0, ft1, f{8 + u}" for u in range(8)]
        # the bookkeeping a compiler keeps: count, both offsets (for a scalar remainder), index, test, branch
        lines += ["addi t0, t0, -8", "addi a0, a0, 64", "addi a1, a1, 64", "addi t2, t2, 1", "slt t3, zero, t0",
                  "bnez t3, 1b", "csrwi ssr, 0"]
    elif variant == "ssr_frep":
        lines += ssr_job(0, [n], [8], "a0") + ssr_job(1, [n], [8], "a1")
        lines += [f"li t0, {n - 1}", "csrwi ssr, 1", "frep.o t0, 1, 7, 0b1001", "fmadd.d f8, ft0, ft1, f8",
                  "csrwi ssr, 0"]
    else:
        raise ValueError(f"unknown ladder variant '{variant}': plain, ssr_unrolled or ssr_frep")
    for width in (4, 2, 1):
        lines += [f"fadd.d f{8 + u}, f{8 + u}, f{8 + u + width}" for u in range(width)]
    lines += [f"li a3, {out}", "fsd f8, 0(a3)", "ecall"]
    cluster.load_programs([assemble_lines(f"dot_{variant}.S", lines)])
    want = float(x @ y)
    cluster.on_finish(lambda cl: check_result(cl, "dot", cl.tcdm_array(out, (1,)), np.array([want])))
    return lambda: want


SETUPS = {"gemm": setup_gemm, "axpy": setup_axpy, "dot": setup_dot, "reduction": setup_reduction,
          "jacobi": setup_jacobi, "dot_ladder": setup_dot_ladder}


def build_system(*, cores: int = 8, memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 50,
                 memory_bytes: int = 16 * 1024 * 1024, **cluster_params) -> Component:
    """A cluster whose DMA port reaches a FixedLatencyMemory over a 512-bit link."""
    top = Component("system")
    cluster = SnitchCluster("cluster", top, cores=cores, **cluster_params)
    memory = FixedLatencyMemory("memory", top, bytes_per_cycle=memory_bytes_per_cycle,
                                latency_cycles=memory_latency_cycles, size_bytes=memory_bytes)
    connect(cluster.ext_req, memory.req, latency=1, width_bits=512)
    connect(memory.rsp, cluster.ext_rsp, latency=1, width_bits=512)
    return top


def report(cluster: SnitchCluster, kernel: str) -> KernelReport:
    """The figures of a finished run."""
    cycles = cluster.run_cycles()
    per_core = tuple(100.0 * c.n_fpu / cycles for c in cluster.compute_cores)
    dma_bytes = cluster.dma.n_in + cluster.dma.n_out
    return KernelReport(kernel=kernel, cycles=cycles, fpu_utilisation=sum(per_core) / len(per_core),
                        core_utilisation=per_core, gflops=cluster.gflops.value, flops=cluster.flops.value,
                        tcdm_conflicts=cluster.tcdm.n_conflicts, tcdm_accesses=cluster.tcdm.n_grants,
                        dma_bytes=dma_bytes, dma_gbps=dma_bytes * 1000 / (cycles * cluster.domain.period_ps))


def run_kernel(kernel: str, *, cores: int = 8, memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 50,
               cluster_params: dict | None = None, **kernel_params) -> tuple[KernelReport, SnitchCluster]:
    """Build a cluster and memory, run ``kernel`` to the end, check it, and report."""
    top = build_system(cores=cores, memory_bytes_per_cycle=memory_bytes_per_cycle,
                       memory_latency_cycles=memory_latency_cycles, **(cluster_params or {}))
    cluster = top.child("cluster")
    SETUPS[kernel](cluster, top.child("memory"), **kernel_params)
    sim = Simulator(top)
    sim.run()
    if not getattr(cluster, "result_ok", False):
        raise AssertionError(f"{kernel}: the cluster did not finish")
    return report(cluster, kernel), cluster
