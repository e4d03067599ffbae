"""How the compiled Snitch cluster loop (:mod:`.compiled_cluster`) lays out its state: the
columns of the instruction table and of the per-core, per-streamer, cluster-wide and DMA
arrays, the codes it gives instructions, and the encoding of loaded programs. Plain Python:
:mod:`.compiled_state` reads and writes the arrays by these names."""

from __future__ import annotations

import functools
import struct
from collections import OrderedDict
from itertools import starmap
from operator import attrgetter

import numpy as np

from .isa import (F_COMP, F_LOAD, F_SSR_ENABLE, F_STORE, K_ALU, K_BARRIER, K_BRANCH, K_CSR, K_DMA, K_FENCE, K_FP,
                  K_FREP, K_HALT, K_JAL, K_NOP, OPS, SSR_BOUND, SSR_CSRS, SSR_IDX_BASE,
                  SSR_IDX_CFG, SSR_IRPTR, SSR_IWPTR, SSR_REPEAT, SSR_RPTR, SSR_STRIDE, SSR_WPTR)
from .isa import code as code_of


# -- instruction table: one int64 row per instruction of every loaded program -----------------
(I_KIND, I_OP, I_FKIND, I_RD, I_RS1, I_RS2, I_RS3, I_XS1, I_XS2, I_IMM, I_USES_IMM, I_TARGET, I_LAT, I_FLOPS,
 I_SIZE, I_SIGNED, I_NSRC, I_FP32, I_CSR, I_CSR_OP, I_SSR_N, I_SSR_FIELD, I_SSR_DIM, I_INNER, I_SMAX, I_SMASK,
 I_INT_QUIET, I_FP_QUIET, I_STREAMS_READ, I_WIDTH) = range(30)
# (I_INT_QUIET, I_FP_QUIET, I_STREAMS_READ: what the loop's exit checks know of an instruction
# before any state, so that most cycles' checks answer from one column; see _quiet)

# I_OP of the DMA instructions, I_CSR_OP of the CSR instructions, I_CSR the CSR (an SSR's
# configuration: I_SSR_FIELD, I_SSR_N, I_SSR_DIM say which)
_DMSRC, _DMDST, _DMSTR, _DMREP, _DMCPY, _DMSTAT = range(6)
_DMA_OPS = {"dmsrc": _DMSRC, "dmdst": _DMDST, "dmstr": _DMSTR, "dmrep": _DMREP, "dmcpyi": _DMCPY, "dmcpy": _DMCPY,
            "dmstati": _DMSTAT, "dmstat": _DMSTAT}
_CSR_WRITE, _CSR_SET, _CSR_CLEAR = range(3)
_CSR_OPS = {"csrrw": _CSR_WRITE, "csrrwi": _CSR_WRITE, "csrrs": _CSR_SET, "csrrsi": _CSR_SET, "csrrc": _CSR_CLEAR,
            "csrrci": _CSR_CLEAR}
_MHARTID, _MCYCLE, _MINSTRET, _SSR_CONFIG = range(4)
_CSR_NAMES = {"mhartid": _MHARTID, "mcycle": _MCYCLE, "minstret": _MINSTRET}
# the SSR registers by the ISA table's codes (_RPTR and above start a job, _IRPTR and above an indirect one)
_REPEAT, _BOUND, _STRIDE, _IDX_CFG, _IDX_BASE = SSR_REPEAT, SSR_BOUND, SSR_STRIDE, SSR_IDX_CFG, SSR_IDX_BASE
_RPTR, _WPTR, _IRPTR, _IWPTR = SSR_RPTR, SSR_WPTR, SSR_IRPTR, SSR_IWPTR
UNSUPPORTED = -1
_JAL, _AUIPC = 0, 1  # the two K_JAL instructions
# opcodes the loop tests by name (isa numbers them)
_FDIV = code_of("fdiv.d")  # with streams the divisor is not known ahead: such a cycle goes to Python
_MULH, _MULHSU, _DIV, _REM = code_of("mulh"), code_of("mulhsu"), code_of("div"), code_of("rem")


_FIELDS = attrgetter("kind", "fkind", "rd", "rs1", "rs2", "rs3", "xs1", "xs2", "imm", "uses_imm", "target", "latency",
                     "flops", "size", "signed", "fp32", "frep_inner", "stagger_max", "stagger_mask")
_FIELD_COLUMNS = [I_KIND, I_FKIND, I_RD, I_RS1, I_RS2, I_RS3, I_XS1, I_XS2, I_IMM, I_USES_IMM, I_TARGET, I_LAT,
                  I_FLOPS, I_SIZE, I_SIGNED, I_FP32, I_INNER, I_SMAX, I_SMASK]
"""The instruction's attributes the table holds as they are (booleans as 0/1), and their columns."""
_FIELD_ROW = struct.Struct(f"{len(_FIELD_COLUMNS)}q")
_OPERATION = attrgetter("op", "kind", "fkind", "csr", "fsrc")
_OPERATION_COLUMNS = [I_OP, I_CSR_OP, I_CSR, I_SSR_N, I_SSR_FIELD, I_SSR_DIM, I_NSRC]
_OPERATION_ROW = struct.Struct(f"{len(_OPERATION_COLUMNS)}q")


@functools.cache  # (a program repeats a few operations: the cache turns each into one look-up)
def _operation(op: str, kind: int, fkind: int, csr: str, fsrc: tuple) -> bytes:
    """The :data:`_OPERATION_COLUMNS` of an instruction, packed as int64s (``I_OP`` is
    UNSUPPORTED where the loop leaves the instruction to Python)."""
    code = csr_op = which = ssr_n = ssr_field = ssr_dim = 0
    if op in OPS:  # the ALU, multiply, branch and FP computations and conversions: the table's opcode
        code = OPS[op].code  # UNSUPPORTED for the rows the table leaves to Python
    elif kind == K_JAL:
        code = _AUIPC if op == "auipc" else _JAL
    elif kind == K_DMA:
        code = _DMA_OPS[op]
    elif kind in (K_CSR, K_BARRIER) or (kind == K_FP and fkind == F_SSR_ENABLE):
        csr_op = _CSR_OPS[op]
        if csr in _CSR_NAMES:
            which = _CSR_NAMES[csr]
        elif csr in SSR_CSRS:
            which = _SSR_CONFIG
            ssr_n, reg, ssr_dim = SSR_CSRS[csr]
            ssr_field = reg.code
    return _OPERATION_ROW.pack(code, csr_op, which, ssr_n, ssr_field, ssr_dim, len(fsrc))


def _packed(rows, count: int, width: int) -> np.ndarray:
    """``count`` rows of ``width`` int64s, each packed as bytes (``rows``), as an array."""
    return np.frombuffer(b"".join(rows), np.int64, count * width).reshape(count, width)


def _encode(instructions: list) -> np.ndarray:
    """The table rows of ``instructions``, the :func:`_quiet` columns left at 0. (Column by
    column, each instruction's fields packed by ``struct``: a cluster's programs are encoded at
    its first batch, inside the run, a thousand instructions and more; a row at a time costs
    four times as much, and numpy reading the fields one by one twice as much.)"""
    n = len(instructions)
    table = np.zeros((n, I_WIDTH), np.int64)
    table[:, _FIELD_COLUMNS] = _packed(starmap(_FIELD_ROW.pack, map(_FIELDS, instructions)), n, len(_FIELD_COLUMNS))
    table[:, _OPERATION_COLUMNS] = _packed(starmap(_operation, map(_OPERATION, instructions)), n,
                                           len(_OPERATION_COLUMNS))
    return table


_INT_NEVER_EXITS = (K_BRANCH, K_FREP, K_JAL, K_BARRIER, K_HALT, K_FENCE, K_NOP)


def _quiet(table: np.ndarray) -> None:
    """Fill the columns that say what the exit checks of the loop (compiled_cluster.
    _int_would_exit, compiled_fp._fp_would_exit) can tell from an encoded instruction alone:
    I_INT_QUIET, the integer pipeline never leaves it to Python (a supported ALU operation, a
    branch, a jump, an FP instruction other than a load or store, ...); I_FP_QUIET, the FP
    subsystem never does when it issues it unstaggered while no stream it reads is a write
    stream and its core has not halted (not an FP computation, or a supported one that is no
    division, writes no stream register and reads each stream register once); and
    I_STREAMS_READ, the stream registers (ft0-ft2, as bits) it reads. (Whole columns at once:
    a cluster's programs are encoded at its first batch, inside the run.)"""
    kind, fkind, op = table[:, I_KIND], table[:, I_FKIND], table[:, I_OP]
    table[:, I_INT_QUIET] = np.isin(kind, _INT_NEVER_EXITS) | (kind == K_ALU) & (op >= 0) | \
        (kind == K_FP) & (fkind != F_LOAD) & (fkind != F_STORE)
    reads = np.zeros(len(table), np.int64)
    twice = np.zeros(len(table), bool)
    for position, column in enumerate((I_RS1, I_RS2, I_RS3)):
        reg = table[:, column]
        bit = np.where((position < table[:, I_NSRC]) & (reg < 3), np.left_shift(1, reg.clip(0, 2)), 0)
        twice |= (reads & bit) != 0
        reads |= bit
    table[:, I_STREAMS_READ] = reads
    table[:, I_FP_QUIET] = (kind != K_FP) | (fkind != F_COMP) | \
        (op >= 0) & (op != _FDIV) & (table[:, I_RD] >= 3) & ~twice


_ENCODED: OrderedDict = OrderedDict()
"""The encoded instruction lists (:func:`encoded`), the most recently used last: id -> (list, table)."""
ENCODED_KEPT = 32
"""How many instruction lists :func:`encoded` keeps encoded, with their instructions (a
system's clusters load a few distinct programs each, most of them the same ones, and a list
every cluster loads stays among the most recently used)."""


def encoded(instructions: list) -> np.ndarray:
    """The table rows of the instruction list ``instructions`` (a loaded program's, ``core.
    instrs``), encoded once for every cluster that loads that list: the clusters of a system
    running one workload load the same Program (the workloads assemble identical text once),
    and each would otherwise encode it inside the run. The list is kept with its rows, so its
    id names it while they are kept; a loaded program's instructions do not change (as the
    cluster's own cache of its encoded programs, compiled_state._programs, also takes for
    granted). The rows are shared: the loop only reads the table."""
    key = id(instructions)
    kept = _ENCODED.get(key)
    if kept is not None:
        _ENCODED.move_to_end(key)
        return kept[1]
    table = _encode(instructions)
    _quiet(table)
    _ENCODED[key] = (instructions, table)
    if len(_ENCODED) > ENCODED_KEPT:
        _ENCODED.popitem(last=False)
    return table


def encode_programs(cores) -> tuple:
    """(table, instruction objects, first row of each core) for ``cores``' programs; each
    distinct instruction list is encoded once (:func:`encoded`)."""
    objects: list = []
    bases: list[int] = []
    seen: dict[int, int] = {}
    tables = []
    for core in cores:
        key = id(core.instrs)
        if key not in seen:
            seen[key] = len(objects)
            objects.extend(core.instrs)
            tables.append(encoded(core.instrs))
        bases.append(seen[key])
    if len(tables) == 1:
        return tables[0], objects, bases
    return np.concatenate(tables) if tables else np.zeros((0, I_WIDTH), np.int64), objects, bases


# -- per-core state ----------------------------------------------------------------------------------
(C_IP, C_STALL, C_HALTED, C_DONE, C_DONE_CYCLE, C_AT_BAR, C_BAR_SINCE, C_CUR_LINE, C_L0N, C_N_INSTR, C_N_FPU,
 C_N_FLOPS, C_S_RAW, C_S_OFFLOAD, C_S_LSU, C_S_ICACHE, C_S_SYNC, C_S_STREAM, C_S_FDEP, C_PENDING, C_SSR_ON,
 C_SEQ_ON, C_SEQ_INNER, C_SEQ_N, C_SEQ_REPS, C_SEQ_IT, C_SEQ_POS, C_SEQ_SMAX, C_SEQ_MASK, C_SEQ_REC, C_Q_HEAD,
 C_Q_COUNT, C_L_HEAD, C_L_COUNT, C_CBASE, C_NINS, C_HART, C_IBASE, C_ODEPTH, C_LDEPTH, C_LSHIFT, C_L0MAX,
 C_IS_DMA, C_RID, C_SEQ_GEN, C_WIDTH) = range(46)

# -- per-streamer state (streamer g = 3 * core + index) --------------------------------------------------
(S_WRITES, S_ACTIVE, S_JOB_WRITES, S_ADDR, S_LEFT, S_IDX, S_BOUNDS, S_ADJ, S_DIMS, S_USES, S_REPEAT, S_CFGB,
 S_CFGS, S_RUN, S_RUN_LEN, S_LAUNCHED, S_RID, S_DEPTH, S_HEAD, S_COUNT, S_JN, S_JBASE, S_JDIMS, S_JB, S_JS,
 S_JREPEAT, S_JWRITES) = (0, 1, 2, 3, 4, 5, 9, 13, 17, 18, 19, 20, 24, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37,
                          38, 42, 46, 47)
# the indirection extension (SsrStreamer's ``indirect`` ... ``i_count``): the running job is
# indirect, the idx_cfg and idx_base registers, the waiting job's three, the running job's base,
# index bytes, shift (3 + idx shift), next index word address, words left to fetch, byte offset
# in the head word, the index word queue (head, count, ready cycles, 64-bit words), whether the
# request presented fetches an index word, whether the last grant did, elements served
(S_IND, S_ICFG, S_IBASE_CFG, S_JIND, S_JICFG, S_JIBASE, S_IBASE, S_ISIZE, S_ISHIFT, S_INEXT, S_IWORDS, S_IOFF,
 S_IQ_HEAD, S_IQ_COUNT, S_IQ_READY, S_IQ_WORD, S_ISERVE, S_ILAST, S_ICOUNT) = \
    (48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 65, 68, 69, 70)
S_IQ_DEPTH = 3  # = isa.SSR_INDEX_CREDITS (checked by compiled_state)
S_WIDTH = 71

# -- cluster-wide values -------------------------------------------------------------------------------
(G_N_HALTED, G_N_WAITING, G_N_TOTAL, G_IC_N, G_IC_CLOCK, G_IC_HITS, G_IC_MISSES, G_IC_CAP, G_IC_HIT, G_IC_MISS,
 G_IC_LINE_WORDS, G_GRANTS, G_CONFLICTS, G_DMA_COMPLETED, G_DMA_NEXT_ID, G_DMA_SRC, G_DMA_DST, G_DMA_SSTR,
 G_DMA_DSTR, G_DMA_REPS, G_TCDM_BASE, G_TCDM_END, G_BANKS, G_LATENCY, G_REQUESTERS, G_FINISHED, G_EXIT,
 G_WAIT_ON_DMA, G_CHECKED, G_CHECKED_EXIT, G_WIDTH) = range(31)
# (set at the end of every batch: G_WAIT_ON_DMA, every core still running is at the barrier or
# waits on the DMA engine, and one spins on its status, see compiled_dma._cores_wait_on_the_dma;
# G_CHECKED, the cycle the batch stopped before, and G_CHECKED_EXIT, why the cores cannot run it
# in the loop (a G_EXIT) or 0 when they can, see compiled_cluster._cores_would_exit)
EXIT_REASONS = ("end", "dma", "fp", "integer")
"""Why a batch ended (``G_EXIT``): at the end it was given (the run's limit, a progress
report, the watchdog, something outside the cluster), or before a cycle the DMA engine, an
FP subsystem or an integer pipeline needs Python for."""

# -- the DMA engine (SnitchDma): the running transfer, its lanes and buffers ------------------------------
(D_CUR, D_INBOUND, D_ID, D_BHEAD, D_NB, D_PENDING, D_WIF, D_OUTSTANDING, D_QLEN, D_QDEPTH, D_N_IN, D_N_OUT,
 D_N_DONE, D_N_BUSY, D_RID, D_WW_HEAD, D_WW_COUNT, D_RB_HEAD, D_RB_COUNT, D_P_HEAD, D_SUBMITTED, D_EXT,
 D_SEND_FROM, D_RSP_LOCAL, D_RSP_WORDS, D_WIDTH) = range(26)
# (D_SEND_FROM: the first cycle at which the outside port can take the burst the DMA waits to
# send, when it found the port not ready at the batch's start; 0 otherwise. D_RSP_WORDS: the
# words of a read response Python took at the batch's start, in the loop's ``staged`` array,
# which the loop queues for the lanes from TCDM address D_RSP_LOCAL before its first cycle)
# transfers the DMA core queued in a batch (Python makes them SnitchDma transfers): the
# configuration registers and size read by dmcpy, the instruction and the id it returned
(Q_SRC, Q_DST, Q_SIZE, Q_REPS, Q_SSTR, Q_DSTR, Q_INS, Q_ID, Q_WIDTH) = range(9)
# lane rows: busy, TCDM address, 8 data bytes as int64 (inbound) or read-burst slot (outbound), byte offset
L_BUSY, L_ADDR, L_BITS, L_AT = range(4)
# read-burst rows (outbound): outside address, TCDM address, bytes, words not yet read, words issued
R_OUTSIDE, R_LOCAL, R_SIZE, R_LEFT, R_ISSUED, R_WIDTH = range(6)
