"""The whole Snitch cluster as one compiled loop over arrays, for batches of cycles.

The Python model (SnitchCore, SsrStreamer, SnitchTcdm, SnitchICache, SnitchDma, the
cluster's barrier) is the reference: readable, traced, and the place where faults are
raised with their messages. :func:`_cluster_cycles` (numba, over int64/float64 arrays laid
out by the ``I_``/``C_``/``S_``/``G_``/``D_`` column constants below) steps the same cycle:
the DMA engine's lanes, then every running core in order (FP subsystem with the FREP
sequencer and SSR operands, then the integer pipeline with its scoreboard, L0 buffer and
shared I$, offload queue, LSU, CSRs, SSR jobs, barrier, halt), then the TCDM's round-robin
arbitration of all requests. :mod:`compiled_state` copies the model's state in and out
and runs the batches.

A cycle the loop cannot reproduce is left to Python: the batch ends *before* it when some
core would fault there (the Python model then raises the fault with its message), would
execute an instruction the loop leaves out (FP square roots, a division by zero, a
multiply-high of operands wider than 32 bits, a stream read twice by one instruction,
...), or when the DMA engine must use its outside port (send a burst, start a queued
transfer; responses end a batch from outside, see compiled_state). A ``dmcpy`` the loop
queues in its own table; Python makes it a SnitchDma transfer when the engine takes it. The
cross-checks in tests/models/compute/test_compiled_kernels.py and
test_compiled_cluster.py run kernels and random programs with the loop on and off and
compare cycles, every counter, registers, queues, FIFOs, stream state, the I$ and every
byte of memory.
"""

from __future__ import annotations

import numpy as np

from .fp_subsystem import NEVER
from .isa import OPS, define_dispatch
from .isa import code as code_of
from .isa import div, fmax, fmin, rem, u32  # noqa: F401  (the Python model's own definitions, compiled with the loop)
from .isa import s32 as _s32
from .assembler import (F_COMP, F_FROMINT, F_LOAD, F_SSR_ENABLE, F_STORE, F_TOINT, K_ALU, K_BARRIER, K_BRANCH,
                        K_CSR, K_DMA, K_FENCE, K_FP, K_FREP, K_HALT, K_JAL, K_JALR, K_LOAD, K_MUL, K_STORE)


# -- instruction table: one int64 row per instruction of every loaded program -----------------
(I_KIND, I_OP, I_FKIND, I_RD, I_RS1, I_RS2, I_RS3, I_XS1, I_XS2, I_IMM, I_USES_IMM, I_TARGET, I_LAT, I_FLOPS,
 I_SIZE, I_SIGNED, I_NSRC, I_FP32, I_CSR, I_CSR_OP, I_SSR_N, I_SSR_FIELD, I_SSR_DIM, I_INNER, I_SMAX, I_SMASK,
 I_WIDTH) = range(27)

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
_REPEAT, _BOUND, _STRIDE, _RPTR, _WPTR = range(5)  # _RPTR and above start a job
_SSR_FIELDS = {"repeat": _REPEAT, "bound": _BOUND, "stride": _STRIDE, "rptr": _RPTR, "wptr": _WPTR}
UNSUPPORTED = -1
_JAL, _AUIPC = 0, 1  # the two K_JAL instructions
# opcodes the loop tests by name (isa numbers them)
_FDIV = code_of("fdiv.d")  # with streams the divisor is not known ahead: such a cycle goes to Python
_MULH, _MULHSU, _DIV, _REM = code_of("mulh"), code_of("mulhsu"), code_of("div"), code_of("rem")


def _encode(ins) -> list:
    """The int64 row of one instruction (``I_OP`` is UNSUPPORTED where the loop leaves the
    instruction to Python)."""
    row = [0] * I_WIDTH
    row[I_KIND], row[I_FKIND] = ins.kind, ins.fkind
    row[I_RD], row[I_RS1], row[I_RS2], row[I_RS3] = ins.rd, ins.rs1, ins.rs2, ins.rs3
    row[I_XS1], row[I_XS2], row[I_IMM], row[I_USES_IMM] = ins.xs1, ins.xs2, ins.imm, int(ins.uses_imm)
    row[I_TARGET], row[I_LAT], row[I_FLOPS] = ins.target, ins.latency, ins.flops
    row[I_SIZE], row[I_SIGNED], row[I_NSRC], row[I_FP32] = ins.size, int(ins.signed), len(ins.fsrc), int(ins.fp32)
    row[I_INNER], row[I_SMAX], row[I_SMASK] = int(ins.frep_inner), ins.stagger_max, ins.stagger_mask
    op, kind = ins.op, ins.kind
    code = 0
    if op in OPS:  # the ALU, multiply, branch and FP computations and conversions: the table's opcode
        code = OPS[op].code  # UNSUPPORTED for the rows the table leaves to Python
    elif kind == K_JAL:
        code = _AUIPC if op == "auipc" else _JAL
    elif kind == K_DMA:
        code = _DMA_OPS[op]
    elif kind in (K_CSR, K_BARRIER) or (kind == K_FP and ins.fkind == F_SSR_ENABLE):
        row[I_CSR_OP] = _CSR_OPS[op]
        name = ins.csr
        if name in _CSR_NAMES:
            row[I_CSR] = _CSR_NAMES[name]
        elif name.startswith("ssr") and "_" in name:
            row[I_CSR] = _SSR_CONFIG
            field = name[5:]
            row[I_SSR_N] = int(name[3])
            row[I_SSR_FIELD] = _SSR_FIELDS[field.rstrip("0123")]
            row[I_SSR_DIM] = int(field[-1]) if field[-1].isdigit() else 0
    row[I_OP] = code
    return row


def encode_programs(cores) -> tuple:
    """(table, instruction objects, first row of each core) for ``cores``' programs; each
    distinct instruction list is encoded once."""
    rows, objects, bases, seen = [], [], [], {}
    for core in cores:
        key = id(core.instrs)
        if key not in seen:
            seen[key] = len(objects)
            objects.extend(core.instrs)
            rows.extend(_encode(ins) for ins in core.instrs)
        bases.append(seen[key])
    table = np.array(rows, np.int64).reshape(len(rows), I_WIDTH)
    return table, objects, bases


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
S_WIDTH = 48

# -- cluster-wide values -------------------------------------------------------------------------------
(G_N_HALTED, G_N_WAITING, G_N_TOTAL, G_IC_N, G_IC_CLOCK, G_IC_HITS, G_IC_MISSES, G_IC_CAP, G_IC_HIT, G_IC_MISS,
 G_IC_LINE_WORDS, G_GRANTS, G_CONFLICTS, G_DMA_COMPLETED, G_DMA_NEXT_ID, G_DMA_SRC, G_DMA_DST, G_DMA_SSTR,
 G_DMA_DSTR, G_DMA_REPS, G_TCDM_BASE, G_TCDM_END, G_BANKS, G_LATENCY, G_REQUESTERS, G_FINISHED, G_EXIT,
 G_WIDTH) = range(28)
EXIT_REASONS = ("end", "dma", "fp", "integer")
"""Why a batch ended (``G_EXIT``): at the end it was given (the run's limit, a progress
report, the watchdog, something outside the cluster), or before a cycle the DMA engine, an
FP subsystem or an integer pipeline needs Python for."""

# -- the DMA engine (SnitchDma): the running transfer, its lanes and buffers ------------------------------
(D_CUR, D_INBOUND, D_ID, D_BHEAD, D_NB, D_PENDING, D_WIF, D_OUTSTANDING, D_QLEN, D_QDEPTH, D_N_IN, D_N_OUT,
 D_N_DONE, D_N_BUSY, D_RID, D_WW_HEAD, D_WW_COUNT, D_RB_HEAD, D_RB_COUNT, D_P_HEAD, D_SUBMITTED, D_EXT,
 D_WIDTH) = range(23)
# transfers the DMA core queued in a batch (Python makes them SnitchDma transfers): the
# configuration registers and size read by dmcpy, the instruction and the id it returned
(Q_SRC, Q_DST, Q_SIZE, Q_REPS, Q_SSTR, Q_DSTR, Q_INS, Q_ID, Q_WIDTH) = range(9)
# lane rows: busy, TCDM address, 8 data bytes as int64 (inbound) or read-burst slot (outbound), byte offset
L_BUSY, L_ADDR, L_BITS, L_AT = range(4)
# read-burst rows (outbound): outside address, TCDM address, bytes, words not yet read, words issued
R_OUTSIDE, R_LOCAL, R_SIZE, R_LEFT, R_ISSUED = range(5)


def _in32(v):
    return -0x80000000 <= v <= 0x7FFFFFFF


def _mul_supported(op, a, b):
    """Whether ``_mul`` reproduces the Python result exactly (products that fit 64 bits)."""
    if op == _MULH or op == _DIV or op == _REM:
        return _in32(a) and _in32(b)
    if op == _MULHSU:
        return _in32(a)
    return True


# The primitives the ISA table's semantics call, as the loop computes them (isa.py has the
# Python model's; fmin and fmax are the same functions, compiled).
def round32(v):
    return np.float64(np.float32(v))  # IEEE: beyond FP32's range is an infinity, as isa.round32


def copysign(a, b):
    return np.copysign(abs(a), b)


def fdiv(a, b):
    return a / b  # a zero divisor never gets here: _fp_would_exit hands those cycles to Python


def mulhu(a, b):
    return np.int64((np.uint64(a & 0xFFFFFFFF) * np.uint64(b & 0xFFFFFFFF)) >> np.uint64(32))


def fcvt_w(a):
    if a != a or a >= 2147483647.5:
        return 2147483647
    if a <= -2147483648.5:
        return -2147483648
    return np.int64(np.rint(a))


def fcvt_wu(a):
    if a != a or a >= 4294967295.5:
        return -1
    if a <= -0.5:
        return 0
    return _s32(np.int64(np.rint(a)))


# The results of the table's instructions, one branch per opcode of each group, written from
# the ISA table (an opcode without semantics cannot be numbered): _alu(op, a, b) before
# the 32-bit wrap, _mul(op, a, b) likewise, _branch(op, a, b) taken or not, _fp(op, a, b,
# c, fp32), _to_int(op, a, b) and _from_int(op, a).
_alu = define_dispatch("_alu", globals(), "alu")
_mul = define_dispatch("_mul", globals(), "mul")
_branch = define_dispatch("_branch", globals(), "branch")
_fp = define_dispatch("_fp", globals(), "fp")
_to_int = define_dispatch("_to_int", globals(), "toint")
_from_int = define_dispatch("_from_int", globals(), "fromint")


def _stagger(reg, k, mask, bit):
    return (reg + k) % 32 if (mask >> bit) & 1 else reg


def _fields(code, i, k, mask):
    """rd, rs1, rs2, rs3 of instruction ``i`` in stagger copy ``k``."""
    if k == 0 or mask == 0:
        return code[i, I_RD], code[i, I_RS1], code[i, I_RS2], code[i, I_RS3]
    return (_stagger(code[i, I_RD], k, mask, 0), _stagger(code[i, I_RS1], k, mask, 1),
            _stagger(code[i, I_RS2], k, mask, 2), _stagger(code[i, I_RS3], k, mask, 3))



def _icache_fetch(g, ic_line, ic_ready, ic_stamp, line, cycle):
    """``SnitchICache.fetch``: extra cycles for ``line``; least recently used by stamps."""
    n = g[G_IC_N]
    for e in range(n):
        if ic_line[e] == line:
            g[G_IC_CLOCK] += 1
            ic_stamp[e] = g[G_IC_CLOCK]
            g[G_IC_HITS] += 1
            wait = ic_ready[e] - cycle
            return g[G_IC_HIT] if g[G_IC_HIT] > wait else wait
    g[G_IC_MISSES] += 1
    g[G_IC_CLOCK] += 1
    if n < g[G_IC_CAP]:
        e = n
        g[G_IC_N] = n + 1
    else:
        e = 0
        for k in range(1, n):
            if ic_stamp[k] < ic_stamp[e]:
                e = k
    ic_line[e] = line
    ic_ready[e] = cycle + g[G_IC_MISS]
    ic_stamp[e] = g[G_IC_CLOCK]
    return g[G_IC_MISS]


def _access_fault(g, addr, size):
    return addr % size != 0 or not (g[G_TCDM_BASE] <= addr <= g[G_TCDM_END] - size)


def _fp_would_exit(c, cycle, cs, code, f, f_ready, body, oq, ss, fq_ready):
    """Whether the FP subsystem of core ``c`` would fault at ``cycle`` or compute something
    the loop does not: the checks ``SnitchCore._issue`` makes, in its order (a stall before
    a check means no fault this cycle)."""
    k = 0
    mask = 0
    if cs[c, C_SEQ_ON] and cs[c, C_SEQ_IT]:
        i = body[c, cs[c, C_SEQ_POS]]
        k = cs[c, C_SEQ_IT] % (cs[c, C_SEQ_SMAX] + 1)
        mask = cs[c, C_SEQ_MASK]
    elif cs[c, C_Q_COUNT]:
        i = oq[c, cs[c, C_Q_HEAD], 0]
        if code[i, I_KIND] == K_FREP:
            return False
    else:
        return False
    if code[i, I_FKIND] != F_COMP:
        return False  # loads, stores, moves and conversions cannot fault when they issue
    rd, r1, r2, r3 = _fields(code, i, k, mask)
    nsrc = code[i, I_NSRC]
    op = code[i, I_OP]
    if op < 0:
        return True
    if cs[c, C_SSR_ON] and (r1 < 3 or r2 < 3 or r3 < 3 or rd < 3):
        if op == _FDIV:
            return True  # a division with streams: the divisor may be zero
        seen = 0
        for j in range(nsrc):
            r = r1 if j == 0 else (r2 if j == 1 else r3)
            if r < 3:
                if (seen >> r) & 1:
                    return True  # one stream read twice: the general operand path
                seen |= 1 << r
        for j in range(nsrc):
            r = r1 if j == 0 else (r2 if j == 1 else r3)
            if r < 3:
                s = 3 * c + r
                if ss[s, S_WRITES]:
                    return True
                if ss[s, S_COUNT] == 0 or fq_ready[s, ss[s, S_HEAD]] > cycle:
                    return ss[s, S_COUNT] == 0 and ss[s, S_ACTIVE] == 0
            elif f_ready[c, r] > cycle:
                return False
        if rd < 3:
            return ss[3 * c + rd, S_WRITES] == 0
        return False
    if op == _FDIV:
        if f_ready[c, r1] > cycle or f_ready[c, r2] > cycle or f_ready[c, rd] > cycle:
            return False
        return f[c, r2] == 0.0
    return False


def _int_would_exit(c, cycle, g, cs, code, x, x_ready, ss, dm):
    """Whether the integer pipeline of core ``c`` would fault at ``cycle`` or execute an
    instruction the loop leaves to Python (``SnitchCore.int_step``'s checks in order; an
    instruction fetch that would stall is not foreseen, which only costs a batch end)."""
    if cs[c, C_HALTED] or cs[c, C_STALL] > cycle:
        return False
    ip = cs[c, C_IP]
    if ip >= cs[c, C_NINS]:
        return True
    i = cs[c, C_CBASE] + ip
    if x_ready[c, code[i, I_XS1]] > cycle or x_ready[c, code[i, I_XS2]] > cycle:
        return False
    kind = code[i, I_KIND]
    op = code[i, I_OP]
    if kind == K_ALU:
        return op < 0
    if kind == K_MUL:
        return not _mul_supported(op, x[c, code[i, I_RS1]], x[c, code[i, I_RS2]])
    if kind == K_FP:
        # (the FP subsystem steps first and may make room in a full offload queue)
        fkind = code[i, I_FKIND]
        if fkind == F_LOAD or fkind == F_STORE:
            return _access_fault(g, _s32(x[c, code[i, I_RS1]] + code[i, I_IMM]) & 0xFFFFFFFF, code[i, I_SIZE])
        return False
    if kind == K_LOAD or kind == K_STORE:
        if cs[c, C_L_COUNT] >= cs[c, C_LDEPTH]:
            return False
        return _access_fault(g, _s32(x[c, code[i, I_RS1]] + code[i, I_IMM]) & 0xFFFFFFFF, code[i, I_SIZE])
    if kind == K_JALR:
        offset = ((x[c, code[i, I_RS1]] + code[i, I_IMM]) & ~1) - cs[c, C_IBASE]
        return offset % 4 != 0 or not (0 <= offset // 4 < cs[c, C_NINS])
    if kind == K_CSR:
        which = code[i, I_CSR]
        csr_op = code[i, I_CSR_OP]
        if which != _SSR_CONFIG:
            if code[i, I_USES_IMM]:
                writes = code[i, I_IMM] != 0
            else:
                writes = code[i, I_RS1] != 0
            return csr_op != _CSR_SET or writes
        field = code[i, I_SSR_FIELD]
        if field < _RPTR:
            return False
        if csr_op != _CSR_WRITE:
            return True
        s = 3 * c + code[i, I_SSR_N]
        if ss[s, S_JN] >= 1 and ss[s, S_ACTIVE]:
            return False
        new = code[i, I_IMM] if code[i, I_USES_IMM] else x[c, code[i, I_RS1]]
        base = new & 0xFFFFFFFF
        low = base
        high = base
        bad = base % 8 != 0
        for d in range(code[i, I_SSR_DIM] + 1):
            span = ss[s, S_CFGB + d] * ss[s, S_CFGS + d]
            if span < 0:
                low += span
            else:
                high += span
            if ss[s, S_CFGS + d] % 8 != 0:
                bad = True
        return bad or low < g[G_TCDM_BASE] or high + 8 > g[G_TCDM_END]
    if kind == K_DMA:
        if cs[c, C_IS_DMA] == 0:
            return True
        if op != _DMCPY or dm[D_QLEN] >= dm[D_QDEPTH]:
            return False  # a full queue holds dmcpy back before anything is checked
        src, dst, size, reps, sstr, dstr = _dmcpy_operands(i, code, g, x[c, code[i, I_RS1]], x[c, code[i, I_RS2]])
        return _dmcpy_illegal(g, dm, src, dst, size, reps, sstr, dstr)
    return False


def _dmcpy_operands(i, code, g, rs1, rs2):
    """The transfer ``dmcpy``/``dmcpyi`` instruction ``i`` starts: source, destination,
    bytes per row, rows and strides (``SnitchDma.submit``)."""
    config = code[i, I_IMM] if code[i, I_USES_IMM] else rs2
    if config & 2:
        return g[G_DMA_SRC], g[G_DMA_DST], rs1, g[G_DMA_REPS], g[G_DMA_SSTR], g[G_DMA_DSTR]
    return g[G_DMA_SRC], g[G_DMA_DST], rs1, 1, 0, 0


def _in_tcdm(g, addr, size):
    return g[G_TCDM_BASE] <= addr and addr + size <= g[G_TCDM_END]


def _dmcpy_illegal(g, dm, src, dst, size, reps, sstr, dstr):
    """Whether the DMA faults on this transfer (SnitchCluster.dma_instruction and
    SnitchDma.queue_transfer's checks)."""
    if (src >= g[G_TCDM_END] or dst >= g[G_TCDM_END]) and not dm[D_EXT]:
        return True
    if size <= 0 or reps <= 0 or size % 8 or src % 8 or dst % 8 or sstr % 8 or dstr % 8:
        return True
    src_local = _in_tcdm(g, src, size) and _in_tcdm(g, src + (reps - 1) * sstr, size)
    dst_local = _in_tcdm(g, dst, size) and _in_tcdm(g, dst + (reps - 1) * dstr, size)
    return src_local == dst_local


def _fp_idle(c, cycle, cs, ss):
    if cs[c, C_Q_COUNT] or cs[c, C_SEQ_ON] or cs[c, C_L_COUNT] or cs[c, C_PENDING] > cycle:
        return False
    for k in range(3):
        s = 3 * c + k
        if ss[s, S_WRITES] and (ss[s, S_ACTIVE] or ss[s, S_COUNT]):
            return False
    return True


def _next_job(s, ss):
    """``SsrStreamer._next_job``: start the waiting job, or go idle."""
    if ss[s, S_JN] == 0:
        ss[s, S_ACTIVE] = 0
        return
    ss[s, S_JN] = 0
    ss[s, S_ACTIVE] = 1
    ss[s, S_ADDR] = ss[s, S_JBASE]
    dims = ss[s, S_JDIMS]
    ss[s, S_DIMS] = dims
    below = 0
    left = 1
    for k in range(4):
        ss[s, S_IDX + k] = 0
        if k < dims:
            bound = ss[s, S_JB + k]
            stride = ss[s, S_JS + k]
            ss[s, S_BOUNDS + k] = bound
            ss[s, S_ADJ + k] = stride - below
            below += bound * stride
            left *= bound + 1
        else:
            ss[s, S_BOUNDS + k] = 0
            ss[s, S_ADJ + k] = 0
    ss[s, S_LEFT] = left
    ss[s, S_USES] = ss[s, S_JREPEAT] + 1
    ss[s, S_JOB_WRITES] = ss[s, S_JWRITES]
    run = ss[s, S_BOUNDS]
    if left - 1 < run:
        run = left - 1
    if run < 0:
        run = 0
    ss[s, S_RUN] = run
    ss[s, S_RUN_LEN] = run


def _advance(s, ss):
    """``SsrStreamer.grant``'s address step (with ``_advance`` when the run is used up)."""
    if ss[s, S_RUN] > 0:
        ss[s, S_RUN] -= 1
        ss[s, S_ADDR] += ss[s, S_ADJ]
        return
    run_len = ss[s, S_RUN_LEN]
    ss[s, S_IDX] += run_len
    left = ss[s, S_LEFT] - run_len - 1
    ss[s, S_LEFT] = left
    if left == 0:
        _next_job(s, ss)
        return
    if ss[s, S_IDX] < ss[s, S_BOUNDS]:
        ss[s, S_IDX] += 1
        ss[s, S_ADDR] += ss[s, S_ADJ]
    else:
        k = 1
        while True:
            ss[s, S_IDX + k - 1] = 0
            if ss[s, S_IDX + k] < ss[s, S_BOUNDS + k]:
                ss[s, S_IDX + k] += 1
                ss[s, S_ADDR] += ss[s, S_ADJ + k]
                break
            k += 1
    run = ss[s, S_BOUNDS] - ss[s, S_IDX]
    if run >= left:
        run = left - 1
    ss[s, S_RUN] = run
    ss[s, S_RUN_LEN] = run


def _lsu_push(c, cs, lq, lq_fval, addr, kind, reg, ival, fval, size, signed):
    depth = lq.shape[1]
    k = (cs[c, C_L_HEAD] + cs[c, C_L_COUNT]) % depth
    lq[c, k, 0] = addr
    lq[c, k, 1] = kind
    lq[c, k, 2] = reg
    lq[c, k, 3] = ival
    lq[c, k, 4] = size
    lq[c, k, 5] = signed
    lq_fval[c, k] = fval
    cs[c, C_L_COUNT] += 1


def _fp_issue(c, i, k, mask, operand, cycle, cs, code, x, x_ready, f, f_ready, lq, lq_fval, ss, fq_ready, fq_val,
              fq_uses):
    """``SnitchCore._issue`` of instruction ``i`` (stagger copy ``k``): 1 computed, 0 issued
    without a computation, -1 a stall (counted)."""
    fkind = code[i, I_FKIND]
    depth_cap = fq_ready.shape[1]
    if fkind == F_COMP:
        rd, r1, r2, r3 = _fields(code, i, k, mask)
        nsrc = code[i, I_NSRC]
        streams = cs[c, C_SSR_ON] != 0 and (r1 < 3 or r2 < 3 or r3 < 3 or rd < 3)
        if streams:
            for j in range(nsrc):
                r = r1 if j == 0 else (r2 if j == 1 else r3)
                if r < 3:
                    s = 3 * c + r
                    if ss[s, S_COUNT] == 0 or fq_ready[s, ss[s, S_HEAD]] > cycle:
                        cs[c, C_S_STREAM] += 1
                        return -1
                elif f_ready[c, r] > cycle:
                    cs[c, C_S_FDEP] += 1
                    return -1
            if rd < 3:
                if ss[3 * c + rd, S_COUNT] >= ss[3 * c + rd, S_DEPTH]:
                    cs[c, C_S_STREAM] += 1
                    return -1
            elif f_ready[c, rd] > cycle:
                cs[c, C_S_FDEP] += 1
                return -1
        else:
            for j in range(nsrc + 1):
                r = rd if j == nsrc else (r1 if j == 0 else (r2 if j == 1 else r3))
                if f_ready[c, r] > cycle:
                    cs[c, C_S_FDEP] += 1
                    return -1
        v0 = 0.0
        v1 = 0.0
        v2 = 0.0
        for j in range(nsrc):
            r = r1 if j == 0 else (r2 if j == 1 else r3)
            if streams and r < 3:
                s = 3 * c + r
                h = ss[s, S_HEAD]
                v = fq_val[s, h]
                if fq_uses[s, h] == 1:
                    ss[s, S_HEAD] = (h + 1) % depth_cap
                    ss[s, S_COUNT] -= 1
                else:
                    fq_uses[s, h] -= 1
            else:
                v = f[c, r]
            if j == 0:
                v0 = v
            elif j == 1:
                v1 = v
            else:
                v2 = v
        result = _fp(code[i, I_OP], v0, v1, v2, code[i, I_FP32] != 0)
        done = cycle + code[i, I_LAT]
        if streams and rd < 3:
            s = 3 * c + rd
            slot = (ss[s, S_HEAD] + ss[s, S_COUNT]) % depth_cap
            fq_ready[s, slot] = done
            fq_val[s, slot] = result
            fq_uses[s, slot] = -1  # an FP result: [done, value]
            ss[s, S_COUNT] += 1
        else:
            f[c, rd] = result
            f_ready[c, rd] = done
        if done > cs[c, C_PENDING]:
            cs[c, C_PENDING] = done
        cs[c, C_N_FPU] += 1
        cs[c, C_N_FLOPS] += code[i, I_FLOPS]
        return 1
    if fkind == F_LOAD or fkind == F_STORE:
        # the register loaded, or stored from, must be ready, and the LSU have room
        r = code[i, I_RD] if fkind == F_LOAD else code[i, I_RS2]
        if f_ready[c, r] > cycle:
            cs[c, C_S_FDEP] += 1
            return -1
        if cs[c, C_L_COUNT] >= cs[c, C_LDEPTH]:
            cs[c, C_S_LSU] += 1
            return -1
        if fkind == F_LOAD:
            _lsu_push(c, cs, lq, lq_fval, operand, 2, r, 0, 0.0, code[i, I_SIZE], 0)
            f_ready[c, r] = NEVER
        else:
            _lsu_push(c, cs, lq, lq_fval, operand, 3, 0, 0, f[c, r], code[i, I_SIZE], 0)
        return 0
    if fkind == F_TOINT:
        rd = code[i, I_RD]
        r1 = code[i, I_RS1]
        r2 = code[i, I_RS2]
        for j in range(code[i, I_NSRC]):
            if f_ready[c, r1 if j == 0 else r2] > cycle:
                cs[c, C_S_FDEP] += 1
                return -1
        if rd:
            x[c, rd] = _to_int(code[i, I_OP], f[c, r1], f[c, r2])
            x_ready[c, rd] = cycle + 1
        cs[c, C_N_FPU] += 1
        return 1
    if fkind == F_FROMINT:
        rd = code[i, I_RD]
        if f_ready[c, rd] > cycle:
            cs[c, C_S_FDEP] += 1
            return -1
        f[c, rd] = _from_int(code[i, I_OP], operand)
        f_ready[c, rd] = cycle + 1
        if cycle + 1 > cs[c, C_PENDING]:
            cs[c, C_PENDING] = cycle + 1
        cs[c, C_N_FPU] += 1
        return 1
    csr_op = code[i, I_CSR_OP]  # F_SSR_ENABLE
    if csr_op == _CSR_WRITE:
        cs[c, C_SSR_ON] = operand & 1
    elif csr_op == _CSR_SET:
        if operand & 1:
            cs[c, C_SSR_ON] = 1
    elif operand & 1:
        cs[c, C_SSR_ON] = 0
    return 0


def _seq_advance(c, cs):
    """The FREP sequencer moves on after an issue (``SnitchCore._seq_advance``): frep.o
    steps through the body and then counts a repetition, frep.i the other way round."""
    if cs[c, C_SEQ_INNER]:
        fast, fast_end, slow, slow_end = C_SEQ_IT, C_SEQ_REPS, C_SEQ_POS, C_SEQ_N
    else:
        fast, fast_end, slow, slow_end = C_SEQ_POS, C_SEQ_N, C_SEQ_IT, C_SEQ_REPS
    step = cs[c, fast] + 1
    if step == cs[c, fast_end]:
        cs[c, fast] = 0
        cs[c, slow] += 1
        if cs[c, slow] == cs[c, slow_end]:
            cs[c, C_SEQ_ON] = 0
    else:
        cs[c, fast] = step


def _fp_step(c, cycle, cs, code, x, x_ready, f, f_ready, body, oq, lq, lq_fval, ss, fq_ready, fq_val, fq_uses):
    """``SnitchCore.fp_step``: issue at most one FP instruction; the FREP sequencer replays
    its body, and records it from the offload queue during the first repetition."""
    if cs[c, C_SEQ_ON] and cs[c, C_SEQ_IT]:
        k = cs[c, C_SEQ_IT] % (cs[c, C_SEQ_SMAX] + 1)
        i = body[c, cs[c, C_SEQ_POS]]
        if _fp_issue(c, i, k, cs[c, C_SEQ_MASK], 0, cycle, cs, code, x, x_ready, f, f_ready, lq, lq_fval, ss,
                     fq_ready, fq_val, fq_uses) >= 0:
            _seq_advance(c, cs)
        return
    if cs[c, C_Q_COUNT] == 0:
        return
    head = cs[c, C_Q_HEAD]
    i = oq[c, head, 0]
    operand = oq[c, head, 1]
    if not cs[c, C_SEQ_ON] and code[i, I_KIND] == K_FREP:
        cs[c, C_SEQ_ON] = 1
        cs[c, C_SEQ_INNER] = code[i, I_INNER]
        cs[c, C_SEQ_N] = code[i, I_IMM]
        cs[c, C_SEQ_REPS] = (operand & 0xFFFFFFFF) + 1
        cs[c, C_SEQ_IT] = 0
        cs[c, C_SEQ_POS] = 0
        cs[c, C_SEQ_SMAX] = code[i, I_SMAX]
        cs[c, C_SEQ_MASK] = code[i, I_SMASK]
        cs[c, C_SEQ_REC] = 0
        cs[c, C_SEQ_GEN] += 1
    elif _fp_issue(c, i, 0, 0, operand, cycle, cs, code, x, x_ready, f, f_ready, lq, lq_fval, ss, fq_ready, fq_val,
                   fq_uses) < 0:
        return
    elif cs[c, C_SEQ_ON]:
        body[c, cs[c, C_SEQ_REC]] = i
        cs[c, C_SEQ_REC] += 1
        _seq_advance(c, cs)
    cs[c, C_Q_HEAD] = (head + 1) % oq.shape[1]
    cs[c, C_Q_COUNT] -= 1


def _release_if_all_arrived(cycle, g, cs):
    """``SnitchCluster._maybe_release``."""
    if g[G_N_WAITING] and g[G_N_WAITING] + g[G_N_HALTED] == g[G_N_TOTAL]:
        for c in range(cs.shape[0]):
            if cs[c, C_AT_BAR]:
                cs[c, C_S_SYNC] += cycle - cs[c, C_BAR_SINCE]
                cs[c, C_AT_BAR] = 0
                cs[c, C_IP] += 1
                cs[c, C_N_INSTR] += 1
                cs[c, C_STALL] = cycle + 1
        g[G_N_WAITING] = 0


def _offload(c, i, operand, cs, oq):
    slot = (cs[c, C_Q_HEAD] + cs[c, C_Q_COUNT]) % oq.shape[1]
    oq[c, slot, 0] = i
    oq[c, slot, 1] = operand
    cs[c, C_Q_COUNT] += 1


def _int_step(c, cycle, g, cs, code, x, x_ready, l0, oq, lq, lq_fval, ss, ic, ic_line, dm, submitted):
    """``SnitchCore.int_step``: issue at most one integer-pipeline instruction."""
    ip = cs[c, C_IP]
    line = ip >> cs[c, C_LSHIFT]
    if line != cs[c, C_CUR_LINE]:
        cs[c, C_CUR_LINE] = line
        n = cs[c, C_L0N]
        found = False
        for e in range(n):
            if l0[c, e] == line:
                found = True
                break
        if not found:
            if n == cs[c, C_L0MAX]:
                for e in range(1, n):
                    l0[c, e - 1] = l0[c, e]
                l0[c, n - 1] = line
            else:
                l0[c, n] = line
                cs[c, C_L0N] = n + 1
            word = (cs[c, C_IBASE] >> 2) + (line << cs[c, C_LSHIFT])
            wait = _icache_fetch(g, ic_line, ic[0], ic[1], word // g[G_IC_LINE_WORDS], cycle)
            if wait:
                cs[c, C_STALL] = cycle + wait
                cs[c, C_S_ICACHE] += wait
                return
    i = cs[c, C_CBASE] + ip
    if x_ready[c, code[i, I_XS1]] > cycle or x_ready[c, code[i, I_XS2]] > cycle:
        cs[c, C_S_RAW] += 1
        return
    kind = code[i, I_KIND]
    rd = code[i, I_RD]
    a = x[c, code[i, I_RS1]]
    if kind == K_ALU:
        if rd:
            x[c, rd] = _s32(_alu(code[i, I_OP], a, code[i, I_IMM] if code[i, I_USES_IMM] else x[c, code[i, I_RS2]]))
        cs[c, C_IP] = ip + 1
    elif kind == K_BRANCH:
        cs[c, C_IP] = code[i, I_TARGET] if _branch(code[i, I_OP], a, x[c, code[i, I_RS2]]) else ip + 1
    elif kind == K_FP:
        if cs[c, C_Q_COUNT] >= cs[c, C_ODEPTH]:
            cs[c, C_S_OFFLOAD] += 1
            return
        fkind = code[i, I_FKIND]
        operand = 0
        if fkind == F_LOAD or fkind == F_STORE:
            operand = _s32(a + code[i, I_IMM]) & 0xFFFFFFFF
        elif fkind == F_FROMINT:
            operand = a
        elif fkind == F_SSR_ENABLE:
            operand = code[i, I_IMM] if code[i, I_USES_IMM] else a
        elif fkind == F_TOINT and rd:
            x_ready[c, rd] = NEVER
        _offload(c, i, operand, cs, oq)
        cs[c, C_IP] = ip + 1
    elif kind == K_FREP:
        if cs[c, C_Q_COUNT] >= cs[c, C_ODEPTH]:
            cs[c, C_S_OFFLOAD] += 1
            return
        _offload(c, i, a, cs, oq)
        cs[c, C_IP] = ip + 1
    elif kind == K_LOAD or kind == K_STORE:
        if cs[c, C_L_COUNT] >= cs[c, C_LDEPTH]:
            cs[c, C_S_LSU] += 1
            return
        addr = _s32(a + code[i, I_IMM]) & 0xFFFFFFFF
        if kind == K_LOAD:
            _lsu_push(c, cs, lq, lq_fval, addr, 0, rd, 0, 0.0, code[i, I_SIZE], code[i, I_SIGNED])
            if rd:
                x_ready[c, rd] = NEVER
        else:
            _lsu_push(c, cs, lq, lq_fval, addr, 1, 0, x[c, code[i, I_RS2]], 0.0, code[i, I_SIZE], 0)
        cs[c, C_IP] = ip + 1
    elif kind == K_MUL:
        if rd:
            x[c, rd] = _s32(_mul(code[i, I_OP], a, x[c, code[i, I_RS2]]))
            x_ready[c, rd] = cycle + code[i, I_LAT]
        cs[c, C_IP] = ip + 1
    elif kind == K_JAL:
        if code[i, I_OP] == _AUIPC:
            if rd:
                x[c, rd] = _s32(cs[c, C_IBASE] + 4 * ip + code[i, I_IMM])
            cs[c, C_IP] = ip + 1
        else:
            if rd:
                x[c, rd] = cs[c, C_IBASE] + 4 * (ip + 1)
            cs[c, C_IP] = code[i, I_TARGET]
    elif kind == K_JALR:
        target = (a + code[i, I_IMM]) & ~1
        if rd:
            x[c, rd] = cs[c, C_IBASE] + 4 * (ip + 1)
        cs[c, C_IP] = (target - cs[c, C_IBASE]) // 4
    elif kind == K_CSR:
        which = code[i, I_CSR]
        csr_op = code[i, I_CSR_OP]
        new = code[i, I_IMM] if code[i, I_USES_IMM] else a
        if which == _MHARTID:
            old = cs[c, C_HART]
        elif which == _MCYCLE:
            old = cycle & 0xFFFFFFFF
        elif which == _MINSTRET:
            old = cs[c, C_N_INSTR] & 0xFFFFFFFF
        else:
            s = 3 * c + code[i, I_SSR_N]
            field = code[i, I_SSR_FIELD]
            dim = code[i, I_SSR_DIM]
            if field >= _RPTR:
                if ss[s, S_JN] >= 1 and ss[s, S_ACTIVE]:
                    cs[c, C_S_SYNC] += 1
                    return  # the shadow job slot is taken: wait for the stream
                dims = dim + 1
                for d in range(dims):
                    ss[s, S_JB + d] = ss[s, S_CFGB + d]
                    ss[s, S_JS + d] = ss[s, S_CFGS + d]
                ss[s, S_JBASE] = new & 0xFFFFFFFF
                ss[s, S_JDIMS] = dims
                ss[s, S_JREPEAT] = ss[s, S_REPEAT]
                ss[s, S_JWRITES] = 1 if field == _WPTR else 0
                ss[s, S_JN] = 1
                ss[s, S_WRITES] = ss[s, S_JWRITES]
                ss[s, S_LAUNCHED] = 1
                if not ss[s, S_ACTIVE]:
                    _next_job(s, ss)
                old = 0
            else:
                column = S_REPEAT if field == _REPEAT else (S_CFGB + dim if field == _BOUND else S_CFGS + dim)
                old = ss[s, column]
                if csr_op == _CSR_WRITE:
                    ss[s, column] = new
                elif csr_op == _CSR_SET:
                    ss[s, column] = old | new
                else:
                    ss[s, column] = old & ~new
        if rd:
            x[c, rd] = old
        cs[c, C_IP] = ip + 1
    elif kind == K_BARRIER:
        if not cs[c, C_AT_BAR]:
            if not _fp_idle(c, cycle, cs, ss):
                cs[c, C_S_SYNC] += 1
                return
            cs[c, C_AT_BAR] = 1
            cs[c, C_STALL] = NEVER
            cs[c, C_BAR_SINCE] = cycle
            g[G_N_WAITING] += 1
            _release_if_all_arrived(cycle, g, cs)
        cs[c, C_S_SYNC] += 1
        return
    elif kind == K_DMA:
        op = code[i, I_OP]
        if op == _DMSRC:
            g[G_DMA_SRC] = a & 0xFFFFFFFF
        elif op == _DMDST:
            g[G_DMA_DST] = a & 0xFFFFFFFF
        elif op == _DMSTR:
            g[G_DMA_SSTR] = a
            g[G_DMA_DSTR] = x[c, code[i, I_RS2]]
        elif op == _DMREP:
            g[G_DMA_REPS] = a
        elif op == _DMCPY:  # dmcpy: queued here, made a SnitchDma transfer by Python (compiled_state)
            if dm[D_QLEN] >= dm[D_QDEPTH]:
                cs[c, C_S_SYNC] += 1
                return
            src, dst, size, reps, sstr, dstr = _dmcpy_operands(i, code, g, a, x[c, code[i, I_RS2]])
            n = dm[D_SUBMITTED]
            submitted[n, Q_SRC], submitted[n, Q_DST], submitted[n, Q_SIZE] = src, dst, size
            submitted[n, Q_REPS], submitted[n, Q_SSTR], submitted[n, Q_DSTR] = reps, sstr, dstr
            submitted[n, Q_INS], submitted[n, Q_ID] = i, g[G_DMA_NEXT_ID]
            dm[D_SUBMITTED] = n + 1
            dm[D_QLEN] += 1
            if rd:
                x[c, rd] = g[G_DMA_NEXT_ID]
            g[G_DMA_NEXT_ID] += 1
        else:  # dmstat
            which = (code[i, I_IMM] if code[i, I_USES_IMM] else a) & 3
            if which == 0:
                value = g[G_DMA_COMPLETED]
            elif which == 1:
                value = g[G_DMA_NEXT_ID]
            elif which == 2:
                value = 1 if dm[D_CUR] or dm[D_QLEN] else 0
            else:
                value = 1 if dm[D_QLEN] >= dm[D_QDEPTH] else 0
            if rd:
                x[c, rd] = value
        cs[c, C_IP] = ip + 1
    elif kind == K_HALT:
        cs[c, C_HALTED] = 1
        cs[c, C_IP] = ip + 1
        cs[c, C_N_INSTR] += 1
        g[G_N_HALTED] += 1
        _release_if_all_arrived(cycle, g, cs)
        return
    elif kind == K_FENCE:
        if not _fp_idle(c, cycle, cs, ss):
            cs[c, C_S_SYNC] += 1
            return
        cs[c, C_IP] = ip + 1
    else:  # K_NOP
        cs[c, C_IP] = ip + 1
    cs[c, C_N_INSTR] += 1


def _lsu_grant(c, cycle, g, cs, x, x_ready, f, f_ready, lq, lq_fval, words, singles, mbytes):
    """``_Lsu.grant``: the head request of core ``c``'s load/store queue is served."""
    head = cs[c, C_L_HEAD]
    addr = lq[c, head, 0]
    kind = lq[c, head, 1]
    reg = lq[c, head, 2]
    size = lq[c, head, 4]
    cs[c, C_L_HEAD] = (head + 1) % lq.shape[1]
    cs[c, C_L_COUNT] -= 1
    offset = addr - g[G_TCDM_BASE]
    ready = cycle + g[G_LATENCY]
    if kind == 2:
        if size == 8:
            f[c, reg] = words[offset >> 3]
        else:
            f[c, reg] = np.float64(singles[offset >> 2])
        f_ready[c, reg] = ready
    elif kind == 3:
        if size == 8:
            words[offset >> 3] = lq_fval[c, head]
        else:
            singles[offset >> 2] = np.float32(lq_fval[c, head])
    elif kind == 0:
        value = 0
        for b in range(size):
            value |= np.int64(mbytes[offset + b]) << (8 * b)
        if lq[c, head, 5] and value >> (8 * size - 1):
            value -= np.int64(1) << (8 * size)
        if reg:
            x[c, reg] = value
            x_ready[c, reg] = ready
    else:
        value = lq[c, head, 3]
        for b in range(size):
            mbytes[offset + b] = (value >> (8 * b)) & 0xFF


def _dma_would_exit(dm, rb):
    """Whether the DMA engine needs Python at this cycle: to start the next queued transfer
    (its bursts are Python objects) or to send a burst to the outside port."""
    if not dm[D_CUR]:
        return dm[D_QLEN] > 0
    if dm[D_INBOUND]:
        return dm[D_NB] > 0 and dm[D_PENDING] < dm[D_OUTSTANDING]
    return dm[D_RB_COUNT] > 0 and rb[dm[D_RB_HEAD], R_LEFT] == 0


def _dma_step(dm, bursts, ww, lanes, rb, rbuf, reqs, nr, port_done):
    """``SnitchDma.step`` without the outside port (see _dma_would_exit; ``port_done``: the
    port's part of this cycle, read bursts taken in included, was done in Python): hand
    words to idle lanes and present the busy lanes to the TCDM; returns the request count."""
    dm[D_N_BUSY] += 1
    nlanes = lanes.shape[0]
    if dm[D_INBOUND]:
        cap = ww.shape[0]
        for k in range(nlanes):
            if not lanes[k, L_BUSY] and dm[D_WW_COUNT]:
                head = dm[D_WW_HEAD]
                lanes[k, L_BUSY] = 1
                lanes[k, L_ADDR] = ww[head, 0]
                lanes[k, L_BITS] = ww[head, 1]
                dm[D_WW_HEAD] = (head + 1) % cap
                dm[D_WW_COUNT] -= 1
                dm[D_N_IN] += 8
        idle = dm[D_NB] == 0 and dm[D_PENDING] == 0 and dm[D_WW_COUNT] == 0
    else:
        while dm[D_NB] and dm[D_RB_COUNT] < 2 and not port_done:
            slot = (dm[D_RB_HEAD] + dm[D_RB_COUNT]) % 2
            b = dm[D_BHEAD]
            rb[slot, R_OUTSIDE] = bursts[b, 0]
            rb[slot, R_LOCAL] = bursts[b, 1]
            rb[slot, R_SIZE] = bursts[b, 2]
            rb[slot, R_LEFT] = bursts[b, 2] // 8
            rb[slot, R_ISSUED] = 0
            rbuf[slot, :] = 0
            dm[D_BHEAD] = b + 1
            dm[D_NB] -= 1
            dm[D_RB_COUNT] += 1
        for k in range(nlanes):
            if lanes[k, L_BUSY]:
                continue
            for j in range(dm[D_RB_COUNT]):
                slot = (dm[D_RB_HEAD] + j) % 2
                if rb[slot, R_ISSUED] * 8 < rb[slot, R_SIZE]:
                    at = rb[slot, R_ISSUED] * 8
                    rb[slot, R_ISSUED] += 1
                    lanes[k, L_BUSY] = 1
                    lanes[k, L_ADDR] = rb[slot, R_LOCAL] + at
                    lanes[k, L_BITS] = slot
                    lanes[k, L_AT] = at
                    break
        idle = dm[D_NB] == 0 and dm[D_RB_COUNT] == 0 and dm[D_WIF] == 0
    for k in range(nlanes):
        if lanes[k, L_BUSY]:
            idle = False
            reqs[nr, 0] = -1000 - k
            reqs[nr, 1] = dm[D_RID] + k
            reqs[nr, 2] = lanes[k, L_ADDR]
            nr += 1
    if idle:
        dm[D_CUR] = 0
        dm[D_N_DONE] += 1
    return nr


def _lane_grant(k, g, dm, lanes, rb, rbuf, words_i64):
    """``_Lane.grant``: lane ``k`` writes its word into the TCDM or reads one for a burst."""
    lanes[k, L_BUSY] = 0
    word = (lanes[k, L_ADDR] - g[G_TCDM_BASE]) >> 3
    if dm[D_INBOUND]:
        words_i64[word] = lanes[k, L_BITS]
    else:
        slot = lanes[k, L_BITS]
        rbuf[slot, lanes[k, L_AT] >> 3] = words_i64[word]
        rb[slot, R_LEFT] -= 1


def _cluster_cycles(start, end, check_only, port_done, g, cs, code, x, x_ready, f, f_ready, body, l0, oq, lq, lq_fval, ss, fq_ready,
                    fq_val, fq_uses, ic, ic_line, words, singles, mbytes, words_i64, rr, per_bank, reqs, owner, dm,
                    bursts, ww, lanes, rb, rbuf, submitted):
    """Run cycles start .. end-1 of the cluster (fewer when a cycle needs Python, see the
    module docstring); returns how many ran. ``g[G_FINISHED]`` is set when the last running
    core finished in the last cycle run. ``port_done``: Python already did the DMA port's
    part of cycle ``start``; ``check_only``: only say whether the cores can run cycle
    ``start`` here (1) or not (0), changing nothing."""
    ncores = cs.shape[0]
    depth_cap = fq_ready.shape[1]
    base = g[G_TCDM_BASE]
    nbanks = g[G_BANKS]
    nrequesters = g[G_REQUESTERS]
    latency = g[G_LATENCY]
    g[G_EXIT] = 0
    g[G_FINISHED] = 0
    cycle = start
    while cycle < end:
        if not check_only and not (port_done and cycle == start) and _dma_would_exit(dm, rb):
            g[G_EXIT] = 1
            return cycle - start
        for c in range(ncores):
            if cs[c, C_DONE]:
                continue
            if _fp_would_exit(c, cycle, cs, code, f, f_ready, body, oq, ss, fq_ready):
                g[G_EXIT] = 2
                return cycle - start
            if _int_would_exit(c, cycle, g, cs, code, x, x_ready, ss, dm):
                g[G_EXIT] = 3
                return cycle - start
        if check_only:
            return 1
        nr = 0
        running = 0
        dma_active = dm[D_CUR] != 0
        if dma_active:
            nr = _dma_step(dm, bursts, ww, lanes, rb, rbuf, reqs, nr, port_done and cycle == start)
            if not dm[D_CUR]:
                g[G_DMA_COMPLETED] = dm[D_ID]
        for c in range(ncores):
            if cs[c, C_DONE]:
                continue
            _fp_step(c, cycle, cs, code, x, x_ready, f, f_ready, body, oq, lq, lq_fval, ss, fq_ready, fq_val,
                     fq_uses)
            if not cs[c, C_HALTED] and cs[c, C_STALL] <= cycle:
                _int_step(c, cycle, g, cs, code, x, x_ready, l0, oq, lq, lq_fval, ss, ic, ic_line, dm, submitted)
            # the requests of this core: its LSU head, then its running streamers in order
            if cs[c, C_L_COUNT]:
                reqs[nr, 0] = -1 - c
                reqs[nr, 1] = cs[c, C_RID]
                reqs[nr, 2] = lq[c, cs[c, C_L_HEAD], 0]
                nr += 1
            for k in range(3):
                s = 3 * c + k
                if not ss[s, S_ACTIVE]:
                    continue
                if ss[s, S_JOB_WRITES]:
                    if ss[s, S_COUNT] == 0 or fq_ready[s, ss[s, S_HEAD]] > cycle:
                        continue
                elif ss[s, S_COUNT] >= ss[s, S_DEPTH]:
                    continue
                reqs[nr, 0] = s
                reqs[nr, 1] = ss[s, S_RID]
                reqs[nr, 2] = ss[s, S_ADDR]
                nr += 1
            if cs[c, C_HALTED] and _fp_idle(c, cycle, cs, ss):
                cs[c, C_DONE] = 1
                cs[c, C_DONE_CYCLE] = cycle
            else:
                running += 1
        # TCDM arbitration: per bank, the requester nearest after the bank's last grant.
        for q in range(nr):
            reqs[q, 3] = ((reqs[q, 2] - base) >> 3) % nbanks
        for q in range(nr):
            bank = reqs[q, 3]
            holder = owner[bank]
            if holder < 0:
                owner[bank] = q
            else:
                last = rr[bank]
                mine = (reqs[q, 1] - last - 1) % nrequesters
                theirs = (reqs[holder, 1] - last - 1) % nrequesters
                if mine < theirs:
                    owner[bank] = q
                g[G_CONFLICTS] += 1
                per_bank[bank] += 1
        ready = cycle + latency
        for q in range(nr):
            bank = reqs[q, 3]
            w = owner[bank]
            if w < 0:
                continue  # this bank's grant is already done
            owner[bank] = -1
            g[G_GRANTS] += 1
            rr[bank] = reqs[w, 1]
            who = reqs[w, 0]
            if who <= -1000:
                _lane_grant(-1000 - who, g, dm, lanes, rb, rbuf, words_i64)
                continue
            if who < 0:
                _lsu_grant(-1 - who, cycle, g, cs, x, x_ready, f, f_ready, lq, lq_fval, words, singles, mbytes)
                continue
            s = who
            word = (ss[s, S_ADDR] - base) >> 3
            if ss[s, S_JOB_WRITES]:
                h = ss[s, S_HEAD]
                words[word] = fq_val[s, h]
                ss[s, S_HEAD] = (h + 1) % depth_cap
                ss[s, S_COUNT] -= 1
            else:
                slot = (ss[s, S_HEAD] + ss[s, S_COUNT]) % depth_cap
                fq_ready[s, slot] = ready
                fq_val[s, slot] = words[word]
                fq_uses[s, slot] = ss[s, S_USES]
                ss[s, S_COUNT] += 1
            _advance(s, ss)
        cycle += 1
        if running == 0 and not dma_active:
            g[G_FINISHED] = 1
            break
    return cycle - start


_HELPERS = ("_s32", "u32", "div", "rem", "mulhu", "round32", "copysign", "fdiv", "fmin", "fmax", "fcvt_w",
            "fcvt_wu", "_alu", "_in32", "_mul_supported", "_mul", "_branch", "_to_int", "_from_int", "_fp", "_stagger",
            "_fields", "_icache_fetch", "_access_fault", "_fp_would_exit", "_int_would_exit", "_fp_idle", "_next_job",
            "_advance", "_lsu_push", "_fp_issue", "_seq_advance", "_fp_step", "_release_if_all_arrived", "_offload",
            "_int_step", "_lsu_grant", "_dma_would_exit", "_dma_step", "_lane_grant", "_dmcpy_operands", "_in_tcdm",
            "_dmcpy_illegal")
_INLINED = ("_fp_step", "_fp_issue", "_int_step", "_fp_would_exit", "_int_would_exit", "_lsu_grant", "_dma_step")
_COMPILED = None


def _compiled_cluster_cycles():
    """``_cluster_cycles`` compiled by numba (imported on first use; cached on disk). The
    helpers it calls are compiled first and take the place of the Python functions in this
    module's namespace, where numba resolves them; only the entry is cached, keyed by the
    modules the loop compiles in (see :func:`_keyed_entry`)."""
    global _COMPILED
    if _COMPILED is None:
        from numba import njit
        jit = njit(nogil=True, _nrt=False)
        inline = njit(nogil=True, _nrt=False, inline="always")
        for name in _HELPERS:
            globals()[name] = (inline if name in _INLINED else jit)(globals()[name])
        globals()["_cluster_cycles"] = jit(_cluster_cycles)
        _COMPILED = njit(cache=True, nogil=True, _nrt=False)(_keyed_entry(_sources_digest()))
    return _COMPILED


def _sources_digest() -> str:
    """A hash of the other modules whose definitions the loop compiles in: the ISA table
    (semantics, primitives, opcodes) and the assembler's instruction kinds."""
    import hashlib
    from . import assembler, isa
    digest = hashlib.sha256()
    for module in (isa, assembler):
        with open(module.__file__, "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


def _keyed_entry(digest: str):
    """``_cluster_cycles`` behind a closure over ``digest``. numba keys a cached function by
    its own source file and the values of its closure, never by the modules it calls into:
    the digest in the closure makes a changed ISA table compile the loop anew instead of
    loading the old one (whose dispatch would not know the new opcode)."""
    def cluster_cycles(*args):
        if digest == "":
            return 0
        return _cluster_cycles(*args)
    return cluster_cycles
