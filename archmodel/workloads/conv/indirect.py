"""The CPO SpMV with indirect streams (Snitch's ISSRs): each core gathers its filters' kernel
entries by the stored indices.

The integer-load SpMV of :mod:`.kernels` pushes every stored non-zero into the outputs it
reaches, each a run of the core's ``filters / cores`` filters: affine streams, with the
address of every (non-zero, window, kernel row) worked out on the integer core. An ISSR
emits one element per index, so with indirection the natural order is the other one: pull.
For output column ``w`` of a 1-row band, every channel ``c``, partition ``p`` and window
offset ``d <= p``, the group of first window ``w0 = w - d`` holds the non-zeros ``j`` that
window ``w`` sees, and CPO's relative index ``i*Kw + q0`` of each is, less ``d*S``, the
position of its kernel entry in the window (row ``i``, column ``q0 - d*S``): with the kernel
tile packed filter-major (``[c][f][r*Kw + q]``, done once per layer like the other packing),
SSR 1 gathers ``W[c, f, index_j - d*S]`` straight from the index array, one indirect job per
filter (``idx_base`` moves by a filter's ``Kh*Kw`` words; 32-bit indices, shift 0), while SSR
0 streams the group's values once per filter (a 2D job, the outer stride 0), and ``frep.i``
runs ``fmadd`` into one accumulator per filter, two filters at a time (an SSR holds two
jobs; a stream whose job starts later stalls the FP instructions that read it, as on the RTL,
so the jobs are started before the FREP that reads them). The accumulators hold the outputs of ``w``
over every channel, partition and offset, and are loaded and stored once per column.

It needs every stored non-zero of a group to meet the output row, which a 1-row band
guarantees (its ``Kh`` padded input rows are exactly one window's rows); the caller uses it
only then. CPS stores run pairs, not indices: it has nothing for an ISSR to walk (its runs
are affine), and keeps the integer-load SpMV.

Where the time goes: per (column, channel, partition, offset) with a non-empty group, about
``4 * filters / cores + 12`` integer instructions (per pair of filters three CSR writes a
filter and three for the values and the FREP) for
``len(group) * filters / cores`` FMAs, and the SSR port of each gather spends one cycle in
two on index words (32-bit indices). A group of a 1-row band holds at most ``Kh`` non-zeros
per input column, so the FMAs per setup are few.
"""

from __future__ import annotations

import numpy as np

from .layers import Layer

INDEX_CFG = 2
"""``idx_cfg``: 32-bit indices (CPO's int32), shift 0 (the kernel entries are consecutive words)."""


def filter_major_kernel(layer: Layer, w: np.ndarray, channels: int, filters: int, blocks: int, chunks: int) -> dict:
    """The kernel tiles {(chunk, block): (channels, filters, Kh*Kw) array} the gather reads:
    each filter's kernel window contiguous, so a stored index picks its entry."""
    kk = layer.kernel_h * layer.kernel_w
    return {(ci, fi): np.ascontiguousarray(
        w[:, :, ci * channels:(ci + 1) * channels, fi * filters:(fi + 1) * filters].transpose(2, 3, 0, 1)
    ).reshape(channels, filters, kk)
        for ci in range(chunks) for fi in range(blocks)}


def gather_routine(layer: Layer, filters: int, cores: int, save: list) -> list[str]:
    """The ``spmv_gather`` routine (arguments as ``spmv``'s: a0 values, a1 indices, a2
    pointers, a3 channel ids, a4 present channels, a5 kernel tile (filter-major), a6 output
    tile, s11 = 1 on a block's first chunk); ``save`` computes the core's slot for ``ra``."""
    s, kw, ow = layer.stride, layer.kernel_w, layer.out_w
    kk = layer.kernel_h * kw
    share = filters // cores
    parts = -(-kw // s)
    acc = [f"f{8 + k}" for k in range(share)]
    lines = ["spmv_gather:"] + save + ["sw ra, 0(t0)",
             "csrr t0, mhartid", f"li t1, {8 * share}", "mul s1, t0, t1",  # the core's filters in an output row
             f"li t1, {8 * share * kk}", "mul s2, t0, t1",  # and in a channel of the kernel tile
             f"li s3, {8 * filters * kk}", f"li s4, {4 * (ow + 1)}", f"li s5, {ow}", f"li s9, {8 * kk}",
             f"li s10, {4 * parts * (ow + 1)}",
             f"li t0, {INDEX_CFG}", "csrw ssr1_idx_cfg, t0", "li t0, 8", "csrw ssr0_stride0, t0",
             "csrw ssr0_stride1, zero", "csrw ssr0_repeat, zero",
             "li s6, 0",
             "g_column:", "bge s6, s5, g_done",
             f"li t1, {8 * filters}", "mul t0, s6, t1", "add t0, t0, a6", "add s7, t0, s1",
             "beqz s11, g_load"] + [f"fcvt.d.w {f}, zero" for f in acc] + ["j g_planes", "g_load:"]
    lines += [f"fld {f}, {8 * k}(s7)" for k, f in enumerate(acc)]
    lines += ["g_planes:", "li gp, 0",
              "g_plane:", "bge gp, a4, g_store",
              "slli t0, gp, 2", "add t0, t0, a3", "lw t0, 0(t0)", "mul t0, t0, s3", "add tp, t0, a5",
              "add tp, tp, s2", "mul t0, gp, s10", "add s8, t0, a2", "li sp, 0",
              "g_part:", "li ra, 0",
              "g_offset:", "bgt ra, sp, g_next_part", "sub t0, s6, ra", "bltz t0, g_next_part",
              "slli t0, t0, 2", "add t0, t0, s8", "lw t3, 0(t0)", "lw t4, 4(t0)", "sub t5, t4, t3",
              "beqz t5, g_next_offset", "addi t5, t5, -1",
              "csrw ssr0_bound0, t5", "csrw ssr1_bound0, t5",
              "slli t0, t3, 3", "add t0, t0, a0",
              "slli t6, t3, 2", "add t6, t6, a1",
              f"li t1, {8 * s}", "mul t1, t1, ra", "sub t1, tp, t1"]
    # Two filters at a time: an FP instruction may only read a stream whose job was started
    # before it in program order, and an SSR holds two jobs (the running one and its shadow).
    # So per pair: SSR 0's values twice (a 2D job), SSR 1's two gathers, then the FREP.
    for first in range(0, share, 2):
        pair = acc[first:first + 2]
        lines += [f"li t2, {len(pair) - 1}", "csrw ssr0_bound1, t2", "csrw ssr0_rptr1, t0"]
        for k in range(len(pair)):
            lines += ["csrw ssr1_idx_base, t1", "csrw ssr1_irptr, t6", "add t1, t1, s9"]
        lines += [f"frep.i t5, {len(pair)}"] + [f"fmadd.d {f}, ft0, ft1, {f}" for f in pair]
    lines += ["g_next_offset:", "addi ra, ra, 1", "j g_offset",
              "g_next_part:", "add s8, s8, s4", "addi sp, sp, 1", f"li t0, {parts}", "blt sp, t0, g_part",
              "addi gp, gp, 1", "j g_plane",
              "g_store:"] + [f"fsd {f}, {8 * k}(s7)" for k, f in enumerate(acc)]
    lines += ["addi s6, s6, 1", "j g_column",
              "g_done:", "fence"] + save + ["lw ra, 0(t0)", "ret"]
    return lines
