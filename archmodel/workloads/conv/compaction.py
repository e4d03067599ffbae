"""The CPO and CPS lowering as Snitch assembly: the compute cores compact a band's dense
input, as the DMA brought it into the TCDM, into the arrays :func:`~.lowering.cpo_map` defines.

Activations change with every input, so their lowering is part of every inference (unlike the
kernel's packing, done once per layer): the run counts it. Before each SpMV step the cores
turn the band's padded input rows (``rin x Iw x Cc``, channels innermost) into the tile
:func:`~.tiling.sparse_tile` builds on the host, byte for byte: the FP64 values, then the
int32 relative indices (CPO) or (first index, length) run pairs (CPS), the pointers
(``ceil(Kw/S)`` partitions of ``Ow + 1`` per present channel) and the present channels' ids.
Its layout depends on the counts, so it takes two passes with a barrier between:

1. **Count.** Core ``k`` takes channels ``k, k + cores, ...`` and counts, over the columns
   some window covers, the non-zeros of each (and for CPS the runs: a non-zero whose row
   above is zero starts one), into a pair of words per channel.
2. **Write.** Every core sums the counts (where each array begins) and walks the channels
   in order, keeping the offsets of the present ones; at each of its own present channels it
   writes the channel's partitions: per partition the columns it owns in order (their first
   windows ascend with them), each column's non-zeros top to bottom, value and index (or
   run), and a pointer wherever a first window begins. A barrier, and the SpMV reads them.

A value is zero when its bits are, but for the sign (``-0.0`` is zero, as numpy's
``nonzero`` has it): two integer loads, a shift and an or; the cores copy a non-zero's two
words with integer stores. The columns of each partition, and their first windows, are a
property of the layer's shape, so the program carries them as arithmetic runs of columns
(a few per partition) rather than computing them per element.

Where the time goes: 8 integer instructions per dense element to count (11 for CPS) and 8
to scan again, plus 5 per non-zero to copy it (CPS about as many), over the cores' channels: a cost that
follows the dense size, not the non-zeros, so it weighs most where the SpMV's work is least
(low density, 1x1 kernels). Channels are the unit of work: a chunk of fewer channels than
cores leaves cores idle.
"""

from __future__ import annotations

import itertools

from archmodel.workloads.snitch import BARRIER

from .layers import Layer
from .tiling import INT, WORD


def covered_columns(layer: Layer) -> list[tuple[int, int, int]]:
    """(partition, column j, first window) of every padded input column some window reads,
    in the order CPO stores them: by partition, then column (first windows ascend with it)."""
    s, kw, ow = layer.stride, layer.kernel_w, layer.out_w
    columns = []
    for j in range(layer.padded_w):
        first, last = max(-(-(j - kw + 1) // s), 0), min(j // s, ow - 1)
        if last >= first:
            columns.append((last - first, j, first))
    return sorted(columns)


def column_runs(layer: Layer) -> list[tuple[int, int, int, int, int, int]]:
    """The covered columns as arithmetic runs (partition, first column, first window, column
    step, window step, count): consecutive columns of one partition whose column and first
    window advance by the same steps."""
    runs: list[list[int]] = []
    for p, j, f in covered_columns(layer):
        if runs and runs[-1][0] == p:
            run = runs[-1]
            _, j0, f0, dj, df, n = run
            if n == 1:
                run[3], run[4], run[5] = j - j0, f - f0, 2
                continue
            if j == j0 + n * dj and f == f0 + n * df:
                run[5] += 1
                continue
        runs.append([p, j, f, 0, 0, 1])
    return [tuple(run) for run in runs]  # type: ignore[misc]


class _Labels:
    """Labels unique within one program."""

    def __init__(self):
        self.numbers = itertools.count()

    def __call__(self, stem: str) -> str:
        return f"cz_{stem}{next(self.numbers)}"


def compact_routine(layer: Layer, method: str, channels: int, cores: int, counts: int, scratch: int) -> list[str]:
    """The subroutine ``compact``: called by every compute core with a0 the band's dense input
    in the TCDM, a1 its bytes (``rin`` rows), a2 where the tile goes; returns a0 the values,
    a1 the indices (CPO) or run pairs (CPS), a2 the pointers, a3 the channel ids and a4 the
    number of present channels, as the SpMV takes them. ``counts`` is the TCDM of
    :func:`~.tiling.counts_bytes`, ``scratch`` a word per core (its return address). Every register
    but sp's role is the routine's (the SpMV sets its own when it starts); it meets the other
    cores (and the DMA core) at two barriers."""
    cps = method == "cps"
    kw, s, ow, cc = layer.kernel_w, layer.stride, layer.out_w, channels
    parts = -(-kw // s)
    row = WORD * layer.padded_w * cc  # one padded input row of the chunk
    block = INT * parts * (ow + 1)  # one channel's pointers
    runs = column_runs(layer)
    label = _Labels()
    save = ["csrr t0, mhartid", "slli t0, t0, 3", f"li t1, {scratch}", "add t0, t0, t1"]
    lines = ["compact:"] + save + ["sw ra, 0(t0)", f"li a3, {counts}", f"li a4, {row}"]

    # -- pass 1: count this core's channels --------------------------------------------------
    top, done = label("count"), label("counted")
    lines += ["csrr gp, mhartid", f"{top}:", f"li t0, {cc}", f"bge gp, t0, {done}",
              "slli t0, gp, 3", "add s9, t0, a0",  # s9: channel gp's first element
              "li s0, 0", "li s4, 0"]
    for _, j0, _, dj, _, n in runs:
        column, rows = label("ccol"), label("crow")
        lines += [f"li t0, {WORD * cc * j0}", "add s10, t0, s9", f"li ra, {n}",
                  f"{column}:", "mv t0, s10", "add t1, t0, a1", "li t6, 0",
                  f"{rows}:", "lw t3, 4(t0)", "lw t4, 0(t0)", "slli t3, t3, 1", "or t3, t3, t4", "snez t3, t3",
                  "add s0, s0, t3"]
        if cps:  # a non-zero under a zero starts a run
            lines += ["sltu t4, t6, t3", "add s4, s4, t4", "mv t6, t3"]
        lines += ["add t0, t0, a4", f"bne t0, t1, {rows}",
                  f"li t0, {WORD * cc * dj}", "add s10, s10, t0", "addi ra, ra, -1", f"bnez ra, {column}"]
    lines += ["slli t0, gp, 3", "add t0, t0, a3", "sw s0, 0(t0)", "sw s4, 4(t0)",
              f"addi gp, gp, {cores}", f"j {top}", f"{done}:"] + BARRIER

    # -- where each array begins: the sums of the counts ----------------------------------------
    total = label("total")
    lines += ["mv t0, a3", f"li t1, {INT * 2 * cc}", "add t1, t1, a3", "li s0, 0", "li s4, 0", "li sp, 0",
              f"{total}:", "lw t2, 0(t0)", "lw t3, 4(t0)", "add s0, s0, t2", "add s4, s4, t3", "snez t2, t2",
              "add sp, sp, t2", "addi t0, t0, 8", f"bne t0, t1, {total}",
              "slli a5, s0, 3", "add a5, a5, a2"]  # a5: the indices (or runs)
    lines += ["slli a6, s4, 3"] if cps else ["slli a6, s0, 2"]
    lines += ["add a6, a6, a5", f"li t0, {block}", "mul t0, t0, sp", "add a7, t0, a6"]  # a6 pointers, a7 ids

    # -- pass 2: every present channel's place; this core's channels written -------------------
    top, skip, absent, mine, done = label("chan"), label("notmine"), label("absent"), label("mine"), label("written")
    lines += ["li gp, 0", "csrr tp, mhartid", "li s0, 0", "li s4, 0", "mv s8, a6", "mv s11, a7",
              f"{top}:", f"li t0, {cc}", f"bge gp, t0, {done}",
              "slli t0, gp, 3", "add t0, t0, a3", "lw t1, 0(t0)", f"beqz t1, {absent}", f"bne gp, tp, {skip}",
              "sw gp, 0(s11)", "slli s1, s0, 3", "add s1, s1, a2"]  # s1: where the values go
    lines += ["slli s2, s4, 3"] if cps else ["slli s2, s0, 2"]
    lines += ["add s2, s2, a5", "slli s9, gp, 3", "add s9, s9, a0"]  # s2: indices or runs; s9: first element
    for p in range(parts):
        lines += [f"li t0, {INT * p * (ow + 1)}", "add s3, s8, t0", "li s5, 0"]  # s3: the partition's pointers
        for part, j0, f0, dj, df, n in runs:
            if part == p:
                lines += _write_run(label, cps, cc, kw, s, j0, f0, dj, df, n)
        lines += _pointers_up_to(label, ow)
    lines += [f"{skip}:", "slli t0, gp, 3", "add t0, t0, a3", "lw t1, 0(t0)", "lw t2, 4(t0)", "add s0, s0, t1",
              "add s4, s4, t2", f"li t0, {block}", "add s8, s8, t0", "addi s11, s11, 4",
              f"{absent}:", f"bne gp, tp, {mine}", f"addi tp, tp, {cores}", f"{mine}:",
              "addi gp, gp, 1", f"j {top}", f"{done}:", "fence"] + BARRIER
    lines += ["mv a0, a2", "mv a1, a5", "mv a2, a6", "mv a3, a7", "mv a4, sp"] + save + ["lw ra, 0(t0)", "ret"]
    return lines


def _profile_word(profile: int) -> list[str]:
    return ["csrr t0, mhartid", "slli t0, t0, 3", f"li t1, {profile}", "add t0, t0, t1"]


def profiled_start(profile: int) -> list[str]:
    """Zero this core's cycle count at ``profile`` (a word per core: the start of the current
    call, then the cycles counted)."""
    return _profile_word(profile) + ["sw zero, 4(t0)"]


def profiled(profile: int, routine: str) -> list[str]:
    """Call ``routine`` (a0-a2 its arguments, kept) and add the cycles it took to this core's
    count at ``profile``, as a profiling build reads ``mcycle``."""
    return _profile_word(profile) + ["csrr t1, mcycle", "sw t1, 0(t0)", f"call {routine}"] + \
        _profile_word(profile) + ["csrr t1, mcycle", "lw t2, 0(t0)", "sub t1, t1, t2", "lw t2, 4(t0)",
                                  "add t2, t2, t1", "sw t2, 4(t0)"]


def _write_run(label, cps: bool, cc: int, kw: int, s: int, j0: int, f0: int, dj: int, df: int, n: int) -> list[str]:
    """Write the non-zeros of ``n`` columns j0, j0 + dj, ... (first windows f0, f0 + df, ...)
    of the channel at s9: the pointers up to each column's first window, then its elements
    top to bottom (s1 the next value, s2 the next index or run, s5 the next pointer's window)."""
    column, rows, zero, step = label("col"), label("row"), label("zero"), label("step")
    lines = [f"li t0, {WORD * cc * j0}", "add s10, t0, s9", f"li s6, {j0 - f0 * s}", f"li s7, {f0}", f"li ra, {n}",
             f"{column}:"]
    lines += _pointers_up_to(label, None)
    lines += ["mv t0, s10", "add t1, t0, a1", "mv t2, s6", "li t6, 0",
              f"{rows}:", "lw t3, 4(t0)", "lw t4, 0(t0)", "slli t5, t3, 1", "or t5, t5, t4", f"beqz t5, {zero}",
              "sw t4, 0(s1)", "sw t3, 4(s1)", "addi s1, s1, 8"]
    if cps:  # extend the run of the row above, or start one
        head = label("head")
        lines += [f"beqz t6, {head}", "addi t6, t6, 1", "sw t6, -4(s2)", f"j {step}",
                  f"{head}:", "li t6, 1", "sw t2, 0(s2)", "sw t6, 4(s2)", "addi s2, s2, 8", f"j {step}",
                  f"{zero}:", "li t6, 0"]
    else:
        lines += ["sw t2, 0(s2)", "addi s2, s2, 4", f"{zero}:"]
    lines += [f"{step}:", f"addi t2, t2, {kw}", "add t0, t0, a4", f"bne t0, t1, {rows}",
              f"li t0, {WORD * cc * dj}", "add s10, s10, t0", f"addi s6, s6, {dj - df * s}", f"addi s7, s7, {df}",
              "addi ra, ra, -1", f"bnez ra, {column}"]
    return lines


def _pointers_up_to(label, last: int | None) -> list[str]:
    """Pointers (the values written so far) for the windows from s5 up to ``last`` (None:
    the column's first window, s7) of the partition at s3."""
    loop, done = label("ptr"), label("ptrs")
    bound = ["mv t3, s7"] if last is None else [f"li t3, {last}"]
    return bound + ["sub t5, s1, a2", "srli t5, t5, 3",
                    f"{loop}:", f"blt t3, s5, {done}", "slli t4, s5, 2", "add t4, t4, s3", "sw t5, 0(t4)",
                    "addi s5, s5, 1", f"j {loop}", f"{done}:"]
