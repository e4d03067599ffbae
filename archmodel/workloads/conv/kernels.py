"""The five lowerings as Snitch assembly on a :class:`~archmodel.models.compute.SnitchCluster`.

:func:`setup_conv` places a layer's input, packed kernel and output in the memory at the
cluster's DMA port, writes the programs of the tiled loop nest of :mod:`.tiling` (the DMA
core's double-buffered schedule and the compute cores' tile code) and registers a check of
the output in the modelled memory against numpy. Every lowering finds the padded input
there. For the dense ones the DMA builds each band's im2col or MEC tile from it with 2D
transfers (the gather the lowering is); for CPO and CPS it brings the band's padded input
rows and the compute cores compact them into the CPO/CPS tile (:mod:`.compaction`) before
the SpMV: every lowering's cost is in the run.

* **im2col, MEC and direct are GEMMs** with SSR+FREP: output position m = (h, w) of the band
  is dealt to core ``m mod cores``; for each 8-filter group of the block, SSR 0 streams m's
  row of the lowered input (each element used 8 times), SSR 1 the 8 kernel columns, and FREP
  replays 8 ``fmadd`` over the chunk's ``Kh*Kw*Cc`` entries into 8 accumulators. The row is
  a run of the im2col tile, a column slice of the MEC tile (output row h starts ``h*S*Kw*Cc``
  into it), or for direct the ``Kh`` runs of ``Kw*Cc`` elements the receptive field covers
  in the padded input (a 2-dimensional stream: the im2col row, gathered by the SSR).
* **CPO and CPS are SpMV** over the non-zeros the cores stored. The Snitch SSRs here are
  affine only (no indirection, unlike the ISSR of the Snitch RTL), so the kernel reads the pointers,
  indices and run lengths with integer loads and computes every address on the integer
  core. Each core owns ``filters / cores`` filters of the block (cores never write the same
  output). For every stored non-zero x (row i, relative index q0) of every present channel,
  partition p and first window w0, and for every window ``w0 + d`` (d <= p) and kernel row
  r that reaches an output row h of the band, FREP runs one ``fmadd`` per owned filter:
  SSR 0 streams ``W[r, q0 - d*S, c, filters]``, SSR 1 reads the output row ``out[h, w0+d,
  filters]`` and SSR 2 writes it back. A ``fence`` between non-zeros keeps the read of an
  output from overtaking the write of the non-zero before (neighbouring non-zeros reach the
  same outputs). CPS decodes a (first index, length) run once and steps its rows, where CPO
  loads and divides every index.

Where the time goes: the GEMMs are FPU-bound (a few integer instructions per 8 x ``Kh*Kw*Cc``
FMAs); CPO/CPS do only the non-zeros' FMAs but spend about ten integer instructions per
(non-zero, window, kernel row) on addresses and stream starts for ``filters / cores`` FMAs,
and a fence per non-zero: they are index-bound unless each core's share of filters is long.
Before that the cores compact the band, 16 integer instructions per dense element and 5 per
non-zero shared among them (CPS 19 and about 5): at low densities and on 1x1 kernels it is most of
CPO's and CPS's time.
"""

from __future__ import annotations

from typing import Callable

import attrs
import numpy as np

from archmodel.models.compute import SnitchCluster
from archmodel.workloads.snitch import (BARRIER, Layout, assemble_lines, check_result, dma_schedule, get_array,
                                        outside_memory, put_array, ssr_job)

from .layers import Layer
from .lowering import SPARSE, check_method, convolve, padded
from .compaction import compact_routine, profiled, profiled_start
from .indirect import filter_major_kernel, gather_routine
from .tiling import INT, WORD, Tiling, counts_bytes, dense_store, packed_kernel, plan, scratch_bytes


@attrs.frozen
class ConvSetup:
    """What :func:`setup_conv` placed: the tiling, the bands, filter blocks and channel
    chunks the programs compute (all, or a slice), the steps, the TCDM bytes holding lowered
    input (CPO, CPS: the dense band's two buffers and the compacted tile, at ``compact_at``),
    the bytes of input placed outside, ``fraction``, the slice's share of the layer's
    work (of the output rows x blocks x chunks for the GEMMs, of the stored non-zeros x
    blocks for CPO and CPS, whose work follows them; the padded edge rows hold fewer),
    ``check(cluster)``, which compares the output in the memory with numpy, and for CPO and
    CPS ``profile_at``, the cores' counts of cycles in the compaction; ``indirect``: the
    SpMV gathers through indirect streams (:mod:`.indirect`)."""

    layer: Layer
    method: str
    tiling: Tiling
    bands: tuple
    blocks: int
    chunks: int
    steps: int
    tcdm_input_bytes: int
    outside_input_bytes: int
    fraction: float
    check: Callable = attrs.field(repr=False)
    compact_at: int | None = None
    profile_at: int | None = None
    indirect: bool = False

    def compact_cycles(self, cluster: SnitchCluster) -> int:
        """The cycles the run spent compacting (CPO, CPS; 0 for the others): core 0's count
        of its cycles in ``compact``, which every core leaves at the same barrier."""
        if self.profile_at is None:
            return 0
        return int(cluster.tcdm.array(self.profile_at, (2,), np.uint32)[1])


def _magic(divisor: int, largest: int) -> int:
    """M with mulhu(n, M) == n // divisor for 0 <= n <= largest (what a compiler emits)."""
    magic = -(-(1 << 32) // divisor)
    if (largest * (magic * divisor - (1 << 32))) >> 32 >= 1 or magic >= 1 << 32:
        raise ValueError(f"no 32-bit reciprocal of {divisor} is exact up to {largest}")
    return magic


def setup_conv(cluster: SnitchCluster, memory, layer: Layer, method: str, x: np.ndarray, w: np.ndarray, *,
               bands=None, blocks: int | None = None, chunks: int | None = None,
               tiling: Tiling | None = None, register_check: bool = True, indirect: bool = False) -> ConvSetup:
    """Load the programs computing ``layer`` (batch 1) through ``method`` on ``cluster`` with
    activations ``x`` and weights ``w``; the data goes in ``memory`` (the one at the DMA
    port by default). ``bands`` (indices into the tiling's bands), ``blocks`` (the first
    filter blocks) and ``chunks`` (the first channel chunks) restrict the run to a slice of
    the layer; the check compares that slice (with fewer chunks: the convolution of those
    channels). It runs when the cluster finishes, or with ``register_check=False`` when the
    caller calls ``ConvSetup.check(cluster)`` (a sequence of runs on one cluster).
    ``indirect``: CPO's SpMV gathers the kernel through indirect streams where it can
    (:func:`gathers`); otherwise, and for CPS, it loads indices with integer loads."""
    check_method(method)
    if layer.batch != 1:
        raise ValueError(f"layer '{layer.name}': the cluster kernels take batch 1, got {layer.batch}")
    cores = cluster.cores
    if tiling is None:
        tiling = plan(layer, method, cluster.tcdm_bytes, cores, one_row=indirect and method == "cpo")
    chosen = tuple(range(len(tiling.bands)) if bands is None else bands)
    blocks = tiling.blocks if blocks is None else min(blocks, tiling.blocks)
    chunks = tiling.chunks if chunks is None else min(chunks, tiling.chunks)
    memory, outside = outside_memory(cluster, memory)
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    in_buf = [tcdm.take(tiling.input_bytes) for _ in range(2)]
    k_buf = [tcdm.take(tiling.kernel_bytes) for _ in range(2)]
    c_buf = [tcdm.take(tiling.output_bytes) for _ in range(2)]
    scratch = tcdm.take(scratch_bytes(cores))
    sparse = method in SPARSE
    books = counts_bytes(tiling.channels, cores)
    compact_at = tcdm.take(tiling.compact_bytes - books) if sparse else None
    counts = tcdm.take(books) if sparse else None
    profile = counts + 2 * INT * tiling.channels if counts is not None else None  # see counts_bytes
    gather = indirect and gathers(method, tiling, cores)
    kernel_tiles = (filter_major_kernel if gather else packed_kernel)(layer, w, tiling.channels, tiling.filters,
                                                                      blocks, chunks)
    k_at = {key: outside.take(tile.nbytes) for key, tile in kernel_tiles.items()}
    for key, tile in kernel_tiles.items():
        put_array(memory, k_at[key], tile)
    rows_out = sum(tiling.bands[b][1] for b in chosen)
    out_at = outside.take(WORD * rows_out * layer.out_w * layer.filters)
    fetch, params, outside_bytes = _inputs(layer, method, x, tiling, chosen, chunks, memory, outside)
    tiles_in, tiles_out, steps = [], [], []
    done_rows = 0
    u = 0  # the output tile's buffer alternates per (band, block)
    # one chunk and one block: every step uses the same kernel tile, fetched once
    constant = chunks * blocks == 1
    for b in chosen:
        h0, rows = tiling.bands[b]
        for fi in range(blocks):
            for ci in range(chunks):
                t = len(tiles_in)
                k_tile = k_buf[0 if constant else t % 2]
                transfers = [(k_at[ci, fi], k_tile, tiling.kernel_bytes)] if t == 0 or not constant else []
                transfers += fetch(b, ci, in_buf[t % 2])
                tiles_in.append([tr for tr in transfers if tr[2]])
                last = ci == chunks - 1
                dst = out_at + WORD * (done_rows * layer.out_w * layer.filters + fi * tiling.filters)
                tiles_out.append([(c_buf[u % 2], dst, WORD * tiling.filters, WORD * tiling.filters,
                                   WORD * layer.filters, rows * layer.out_w)] if last else [])
                steps.append((params(b, ci, in_buf[t % 2]), k_tile, c_buf[u % 2], rows, ci == 0))
            u += 1
        done_rows += rows
    # the compaction's two barriers within each CPO/CPS step: the DMA core passes them while it fetches
    dma = assemble_lines(f"{method}_dma.S", dma_schedule([], tiles_in, tiles_out, inner_barriers=2 if sparse else 0))
    if sparse:
        compute = _spmv_program(layer, method, tiling, cores, steps, scratch, compact_at, counts, profile, gather)
    else:
        compute = _gemm_program(layer, method, tiling, cores, steps)
    cluster.load_programs([compute] * cores + [dma])
    first_rows = [r for b in chosen for r in range(tiling.bands[b][0], sum(tiling.bands[b]))]
    filters = blocks * tiling.filters

    def check(cl):
        channels = chunks * tiling.channels
        want = convolve("direct", attrs.evolve(layer, channels=channels), x[..., :channels],
                        w[:, :, :channels])[0][first_rows][:, :, :filters]
        got = get_array(memory, out_at, (rows_out, layer.out_w, layer.filters))[:, :, :filters]
        check_result(cl, f"{layer.name} {method}", got, want)

    if register_check:
        cluster.on_finish(check)
    return ConvSetup(layer, method, tiling, chosen, blocks, chunks, len(steps),
                     2 * tiling.input_bytes + tiling.compact_bytes, outside_bytes,
                     _fraction(layer, method, x, tiling, chosen, blocks, chunks), check, compact_at,
                     profile, gather)


def gathers(method: str, tiling: Tiling, cores: int) -> bool:
    """Whether the SpMV of ``method`` under ``tiling`` can gather through indirect streams:
    CPO (CPS has no indices), 1-row bands (every stored element of a group meets the output
    row) and at most 16 filters per core (one accumulator each, an FREP body of 16)."""
    return method == "cpo" and tiling.rows == 1 and tiling.filters // cores <= 16


def _fraction(layer: Layer, method: str, x: np.ndarray, tiling: Tiling, chosen: tuple, blocks: int,
              chunks: int) -> float:
    """The share of the layer's work in the bands ``chosen``, the first ``blocks`` and ``chunks``."""
    share = blocks / tiling.blocks
    rows = sum(tiling.bands[b][1] for b in chosen) / layer.out_h * chunks / tiling.chunks
    if method not in SPARSE:
        return share * rows
    xp = padded(layer, x)[0] != 0
    s = layer.stride

    def stored(bands, channels):
        return sum(int(xp[h0 * s:h0 * s + tiling.input_rows(r), :, :channels].sum())
                   for h0, r in (tiling.bands[b] for b in bands))

    total = stored(range(len(tiling.bands)), layer.channels)
    return share * (stored(chosen, chunks * tiling.channels) / total if total else rows)


def _inputs(layer: Layer, method: str, x: np.ndarray, tiling: Tiling, chosen: tuple, chunks: int, memory, outside):
    """Place the input outside; return fetch(band, chunk, buffer) -> DMA transfers,
    params(band, chunk, buffer) -> what the compute code needs, and the bytes placed.

    Every lowering finds the padded input outside, stored by chunk (``Ih x Iw x Cc``, as a
    framework lays out the previous layer's output with its halo and in channel blocks).
    The DMA builds the band's im2col or MEC tile from it with 2D transfers, a gather no host
    does for it; direct, CPO and CPS fetch the band's run of rows (CPO and CPS compact it in
    the TCDM)."""
    stores = dense_store(layer, "direct", x, tiling.channels)[:chunks]
    at = [outside.take(store.nbytes) for store in stores]
    for address, store in zip(at, stores):
        put_array(memory, address, store)
    placed = sum(st.nbytes for st in stores)
    cc, kh, kw, s = tiling.channels, layer.kernel_h, layer.kernel_w, layer.stride
    ow, iw = layer.out_w, layer.padded_w
    line = WORD * iw * cc  # one padded input row of the chunk
    strip = WORD * kw * cc  # one input row of one window: contiguous in the padded input
    if method == "im2col":
        row = WORD * kh * kw * cc  # one output position's im2col row
        return (lambda b, c, buf: _im2col_gather(at[c], buf, tiling.bands[b], line, strip, row, kh, ow, s, cc),
                lambda b, c, buf: (buf, row * ow, row), placed)
    if method == "mec":
        return (lambda b, c, buf: _mec_gather(at[c], buf, tiling.bands[b], tiling, line, strip, ow, s, cc),
                lambda b, c, buf: (buf, strip * s, strip * tiling.input_rows(tiling.bands[b][1])), placed)
    def rows(b, c, buf):
        return [(at[c] + line * tiling.bands[b][0] * s, buf, line * tiling.input_rows(tiling.bands[b][1]))]

    if method in SPARSE:
        return rows, lambda b, c, buf: (buf, line * tiling.input_rows(tiling.bands[b][1])), placed
    return rows, lambda b, c, buf: (buf, line * s, WORD * s * cc), placed


def _im2col_gather(src: int, buf: int, band: tuple, line: int, strip: int, row: int, kh: int, ow: int, s: int,
                   cc: int) -> list:
    """The DMA transfers building a band's im2col tile (output position m's row of ``Kh``
    strips at ``m * row``) from the padded input at ``src``: per output row h and kernel row
    r, one 2D transfer of ``Ow`` strips, ``S`` pixels apart in the input."""
    h0, rows = band
    return [(src + line * (h * s + r), buf + row * ow * (h - h0) + strip * r, strip, WORD * s * cc, row, ow)
            for h in range(h0, h0 + rows) for r in range(kh)]


def _mec_gather(src: int, buf: int, band: tuple, tiling: Tiling, line: int, strip: int, ow: int, s: int,
                cc: int) -> list:
    """The DMA transfers building a band's MEC tile (``Ow`` rows of the band's input rows'
    strips, ``rin`` strips each) from the padded input at ``src``: per input row, one 2D
    transfer of ``Ow`` strips, or per output column one of ``rin`` rows, whichever is fewer."""
    h0, rows = band
    rin = tiling.input_rows(rows)
    first = src + line * h0 * s
    if rin <= ow:
        return [(first + line * i, buf + strip * i, strip, WORD * s * cc, strip * rin, ow) for i in range(rin)]
    return [(first + WORD * s * cc * q, buf + strip * rin * q, strip, line, strip, rin) for q in range(ow)]


# -- dense lowerings: GEMM tiles --------------------------------------------------------------------
def _gemm_program(layer: Layer, method: str, tiling: Tiling, cores: int, steps: list):
    """Every core runs ``tile`` once per step with a0 the input tile, a1/a2 the bytes from one
    output row / column to the next in it, a3 the kernel tile, a4 the output tile, a5 the
    band's output positions and a6 = 1 on a block's first chunk (accumulators from zero)."""
    kh, kw, cc, nb, ow = layer.kernel_h, layer.kernel_w, tiling.channels, tiling.filters, layer.out_w
    k = kh * kw * cc
    # the receptive field's Kh runs of Kw*Cc elements: back to back in the im2col and MEC
    # tiles, a padded input row apart for direct
    run_stride = WORD * layer.padded_w * cc if method == "direct" else WORD * kw * cc
    lines = ["csrr s0, mhartid", f"li s1, {cores}", f"li s2, {ow}", f"li s3, {WORD * nb}", f"li s4, {nb // 8}",
             f"li s5, {k - 1}"]
    lines += ssr_job(0, [kw * cc, kh], [WORD, run_stride], "zero", repeat=7)[:-1]
    lines += ssr_job(1, [8, k], [WORD, WORD * nb], "zero", repeat=0)[:-1]
    lines += ["csrwi ssr, 1"] + BARRIER
    for (inp, a_h, a_w), k_tile, c_tile, rows, first in steps:
        lines += [f"li a0, {inp}", f"li a1, {a_h}", f"li a2, {a_w}", f"li a3, {k_tile}", f"li a4, {c_tile}",
                  f"li a5, {rows * ow}", f"li a6, {int(first)}", "call tile", "fence"] + BARRIER
    lines += ["csrwi ssr, 0", "ecall"]
    # t0 = m (output position of the band), t1/t2 = its row and column
    lines += ["tile:", "mv t0, s0", "li t1, 0", "mv t2, s0",
              "1:", "blt t2, s2, 2f", "sub t2, t2, s2", "addi t1, t1, 1", "j 1b",
              "2:", "bge t0, a5, 9f",
              "mul t3, t1, a1", "mul t4, t2, a2", "add t3, t3, t4", "add t3, t3, a0",
              "mul t4, t0, s3", "add t4, t4, a4", "mv t5, a3", "mv t6, s4",
              "3:", "csrw ssr0_rptr1, t3", "csrw ssr1_rptr1, t5", "beqz a6, 4f"]
    lines += [f"fcvt.d.w f{8 + u}, zero" for u in range(8)] + ["j 5f", "4:"]
    lines += [f"fld f{8 + u}, {8 * u}(t4)" for u in range(8)] + ["5:", "frep.o s5, 8"]
    lines += [f"fmadd.d f{8 + u}, ft0, ft1, f{8 + u}" for u in range(8)]
    lines += [f"fsd f{8 + u}, {8 * u}(t4)" for u in range(8)]
    lines += ["addi t4, t4, 64", "addi t5, t5, 64", "addi t6, t6, -1", "bnez t6, 3b",
              "add t0, t0, s1", "add t2, t2, s1", "j 1b", "9:", "ret"]
    return assemble_lines(f"{method}.S", lines)


# -- sparse lowerings: SpMV over the CPO/CPS tiles ---------------------------------------------------
def _spmv_program(layer: Layer, method: str, tiling: Tiling, cores: int, steps: list, scratch: int, compact_at: int,
                  counts: int, profile: int, gather: bool = False):
    """Every core runs ``compact`` (:mod:`.compaction`) and then ``spmv`` once per step:
    ``spmv`` with a0 the tile's values, a1 its indices (CPO) or run pairs (CPS), a2 its
    pointers, a3 its channel ids, a4 the present channels (all from ``compact``), a5 the
    kernel tile, a6 the output tile, a7 the band's rows and s11 = 1 on a block's first chunk
    (the core zeroes its filters of the output tile first); with ``gather``, ``spmv_gather``
    (:mod:`.indirect`) instead."""
    kh, kw, s, cc, nb, ow = layer.kernel_h, layer.kernel_w, layer.stride, tiling.channels, tiling.filters, layer.out_w
    share = nb // cores
    parts = -(-kw // s)
    q_step = WORD * cc * nb  # kernel tile bytes from one (r, q) to the next
    rin = tiling.input_rows(tiling.rows)
    pointwise = kh == kw == 1
    # the SpMV's constants, set as it starts (the compaction before it takes every register)
    constants = ["csrr t0, mhartid", f"li t1, {WORD * share}", "mul s1, t0, t1", f"li s2, {ow}",
                 f"li s3, {WORD * nb}", f"li s5, {share - 1}", f"li s9, {q_step}", f"li s10, {WORD * ow * nb}"]
    if kw > 1:
        constants.append(f"li s6, {_magic(kw, rin * kw)}")
    lines = ["fcvt.d.w fa1, zero"]
    for stream in range(3):
        lines += ssr_job(stream, [share], [WORD], "zero", write=stream == 2)[:-1]
    lines += [f"li t1, {WORD * nb}", "csrw ssr2_stride1, t1", "csrwi ssr, 1"] + BARRIER
    for (buf, band_bytes), k_tile, c_tile, rows, first in steps:
        lines += [f"li a0, {buf}", f"li a1, {band_bytes}", f"li a2, {compact_at}"] + profiled(profile, "compact")
        lines += [f"li a5, {k_tile}", f"li a6, {c_tile}", f"li a7, {rows}", f"li s11, {int(first)}",
                  "call spmv_gather" if gather else "call spmv", "fence"] + BARRIER
    lines += ["csrwi ssr, 0", "ecall"]
    lines += compact_routine(layer, method, cc, cores, counts, scratch)
    # the cycles in the compaction, core by core (the cores leave it together, at a barrier)
    lines[:0] = profiled_start(profile)
    save = ["csrr t0, mhartid", "slli t0, t0, 3", f"li t1, {scratch}", "add t0, t0, t1"]
    lines += ["spmv:"] + save + ["sw ra, 0(t0)"] + constants + ["beqz s11, zeroed",
                                 # zero this core's filters of every output position of the band
                                 "mul t0, a7, s2", "addi t1, t0, -1", "csrw ssr2_bound1, t1", f"li t1, {share}",
                                 "mul t0, t0, t1", "addi t0, t0, -1", "add t2, a6, s1", "csrw ssr2_wptr1, t2",
                                 "frep.o t0, 1", "fmv.d ft2, fa1", "fence", "zeroed:"]
    lines += ["li gp, 0", "mv s0, a2",
              "plane:", "bge gp, a4, done"] + (["fence"] if pointwise else []) + [
              "slli t0, gp, 2", "add t0, t0, a3", "lw t0, 0(t0)", "mul t0, t0, s3", "add tp, t0, a5",
              "add tp, tp, s1", "li sp, 0",
              "part:", "li t2, 0",
              "group:", "lw t3, 0(s0)", "lw t4, 4(s0)",
              "entry:", "bge t3, t4, next_group"]
    if method == "cpo":
        lines += ["slli t0, t3, 2", "add t0, t0, a1", "lw t5, 0(t0)"] + _decode(kw, s, rin) + _value(pointwise)
        lines += _windows(kh, kw, s, q_step) + ["addi t3, t3, 1", "j entry"]
    else:
        lines += ["lw t5, 0(a1)", "lw s11, 4(a1)", "addi a1, a1, 8", "add s11, s11, t3"] + _decode(kw, s, rin)
        lines += ["run:"] + _value(pointwise) + _windows(kh, kw, s, q_step) + ["addi t3, t3, 1"]
        # the next element of a run is the next input row
        lines += ["addi t5, t5, 1"] if s == 1 else \
            ["addi s4, s4, 1", f"li t0, {s}", "blt s4, t0, same_row", "li s4, 0", "addi t5, t5, 1", "same_row:"]
        lines += ["blt t3, s11, run", "j entry"]
    lines += ["next_group:", "addi s0, s0, 4", "addi t2, t2, 1", "blt t2, s2, group",
              "addi s0, s0, 4", "addi sp, sp, 1", f"li t0, {parts}", "blt sp, t0, part",
              "addi gp, gp, 1", "j plane",
              "done:", "fence"] + save + ["lw ra, 0(t0)", "ret"]
    if gather:
        lines += gather_routine(layer, tiling.filters, cores, save)
    return assemble_lines(f"{method}.S", lines)


def _decode(kw: int, s: int, rin: int) -> list[str]:
    """t5 = the index -> t5 = its input row i (with a stride: i // S, and s4 = i mod S),
    t6 = its column relative to the first window (q0)."""
    lines = ["mulhu t1, t5, s6", f"li t0, {kw}", "mul t0, t1, t0", "sub t6, t5, t0", "mv t5, t1"] if kw > 1 \
        else ["li t6, 0"]
    if s > 1:
        lines += [f"li t0, {_magic(s, rin)}", "mulhu t1, t5, t0", f"li t0, {s}", "mul t0, t1, t0", "sub s4, t5, t0",
                  "mv t5, t1"]
    return lines


def _value(pointwise: bool) -> list[str]:
    """fa0 = the value of stored element t3, then wait until the element before has written
    its outputs; a 1x1 kernel maps the elements of one channel to distinct outputs, so it
    waits once per channel instead."""
    return ["slli t0, t3, 3", "add t0, t0, a0", "fld fa0, 0(t0)"] + ([] if pointwise else ["fence"])


def _windows(kh: int, kw: int, s: int, q_step: int) -> list[str]:
    """The contributions of one stored element (t5 = i, or i // S with s4 = i mod S; t6 = q0)
    to the windows w0 .. w0 + p (t2 = w0, sp = p) and the kernel rows that reach the band
    (once per program: its labels are fixed)."""
    n = 0
    lines = ["mul s7, t6, s9", "add s7, s7, tp", "mul s8, t2, s3", "add s8, s8, a6", "add s8, s8, s1", "li ra, 0",
             f"w{n}:"]
    residues = [[r for r in range(rho, kh, s)] for rho in range(s)]
    for rho, rows in enumerate(residues):
        if not rows:
            continue
        if s > 1:
            lines += [f"li t0, {rho}", f"bne s4, t0, rho{n}_{rho}"]
        for k, r in enumerate(rows):
            skip = f"r{n}_{rho}_{k}"
            lines += [f"addi t0, t5, {-k if s > 1 else -r}", f"bgeu t0, a7, {skip}", "mul t0, t0, s10",
                      "add t0, t0, s8"]
            lines += ["mv t1, s7"] if r == 0 else [f"li t1, {r * kw * q_step}", "add t1, t1, s7"]
            lines += ["csrw ssr0_rptr0, t1", "csrw ssr1_rptr0, t0", "csrw ssr2_wptr0, t0", "frep.o s5, 1",
                      "fmadd.d ft2, fa0, ft0, ft1", f"{skip}:"]
        if s > 1:
            lines += [f"j end{n}", f"rho{n}_{rho}:"]
    lines += [f"end{n}:", f"beq ra, sp, last{n}", "addi ra, ra, 1", f"li t0, {s * q_step}", "sub s7, s7, t0",
              "add s8, s8, s3", f"j w{n}", f"last{n}:"]
    return lines
