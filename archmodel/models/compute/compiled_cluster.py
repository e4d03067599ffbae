"""The whole Snitch cluster as one compiled loop over arrays, for batches of cycles.

The Python model (SnitchCore, SsrStreamer, SnitchTcdm, SnitchICache, SnitchDma, the
cluster's barrier) is the reference: readable, traced, and the place where faults are
raised with their messages. :func:`_cluster_cycles` (numba, over int64/float64 arrays laid
out by the column constants of :mod:`.compiled_layout`) steps the same cycle: the DMA
engine's lanes, then every running core in order (FP subsystem with the FREP sequencer and
SSR operands, then the integer pipeline with its scoreboard, L0 buffer and shared I$,
offload queue, LSU, CSRs, SSR jobs, barrier, halt), then the TCDM's round-robin arbitration
of all requests. The primitives and the instruction dispatch are in :mod:`.compiled_ops`,
the FP subsystems in :mod:`.compiled_fp`, the DMA engine in :mod:`.compiled_dma`; the
integer pipelines, the LSU grants and the batch are here. :mod:`compiled_state` copies the
model's state in and out and runs the batches.

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

import sys

import numpy as np

from archmodel.kernel.compiled import compile_parts, dispatcher, sources_digest

from .fp_subsystem import NEVER
from .isa import LSU_FP_LOAD, LSU_FP_STORE, LSU_LOAD, LSU_STORE
from .isa import SSR_INDIRECT, SSR_SHIFT_MAX, s32 as _s32
from .isa import (F_FROMINT, F_LOAD, F_SSR_ENABLE, F_STORE, F_TOINT, K_ALU, K_BARRIER, K_BRANCH, K_CSR, K_DMA,
                  K_FENCE, K_FP, K_FREP, K_HALT, K_JAL, K_JALR, K_LOAD, K_MUL, K_STORE)
from .compiled_cluster_memory import MG_ON, _memory_send, _memory_take
from .compiled_dma import (_cores_wait_on_the_dma, _dma_step, _dma_would_exit, _dmcpy_illegal, _dmcpy_operands,
                           _lane_grant, _take_staged)
from .compiled_fp import (_advance, _move_element, _fp_idle, _fp_step, _fp_would_exit, _issr_grant, _issr_present,
                          _issr_would_exit, _lsu_push, _next_job)
from .compiled_layout import (C_AT_BAR, C_BAR_SINCE, C_CBASE, C_CUR_LINE, C_DONE, C_DONE_CYCLE, C_HALTED, C_HART,
                              C_IBASE, C_IP, C_IS_DMA, C_L0MAX, C_L0N, C_LDEPTH, C_LSHIFT, C_L_COUNT, C_L_HEAD,
                              C_NINS, C_N_INSTR, C_ODEPTH, C_Q_COUNT, C_Q_HEAD, C_RID, C_STALL, C_S_ICACHE, C_S_LSU,
                              C_S_OFFLOAD, C_S_RAW, C_S_SYNC, D_CUR, D_ID, D_QDEPTH, D_QLEN, D_RSP_WORDS, D_SUBMITTED, G_BANKS,
                              G_CONFLICTS, G_DMA_COMPLETED, G_DMA_DST, G_DMA_DSTR, G_DMA_NEXT_ID, G_DMA_REPS,
                              G_DMA_SRC, G_DMA_SSTR, G_EXIT, G_FINISHED, G_GRANTS, G_IC_LINE_WORDS, G_LATENCY,
                              G_N_HALTED, G_N_TOTAL, G_N_WAITING, G_REQUESTERS, G_TCDM_BASE, G_TCDM_END, G_WAIT_ON_DMA,
                              G_CHECKED, G_CHECKED_EXIT, I_CSR,
                              I_CSR_OP, I_FKIND, I_IMM, I_INT_QUIET, I_KIND, I_LAT, I_OP, I_RD, I_RS1, I_RS2,
                              I_SIGNED, I_SIZE, I_SSR_DIM, I_SSR_FIELD, I_SSR_N, I_TARGET, I_USES_IMM, I_XS1, I_XS2,
                              Q_DST, Q_DSTR,
                              Q_ID, Q_INS, Q_REPS, Q_SIZE, Q_SRC, Q_SSTR, S_ACTIVE, S_ADDR, S_CFGB, S_CFGS, S_COUNT,
                              S_DEPTH, S_HEAD, S_JB, S_JBASE, S_JDIMS, S_JN, S_JOB_WRITES, S_JREPEAT, S_JS,
                              S_JWRITES, S_LAUNCHED, S_REPEAT, S_RID, S_WRITES, _AUIPC, _BOUND, _CSR_SET,
                              _CSR_WRITE, _DMCPY, _DMDST, _DMREP, _DMSRC, _DMSTR, _MCYCLE, _MHARTID, _MINSTRET,
                              _REPEAT, _RPTR, _SSR_CONFIG, _WPTR, _IDX_CFG, _IRPTR, _IWPTR,
                              S_ICFG, S_IBASE_CFG, S_IND, S_JICFG, S_JIBASE, S_JIND, _STRIDE)
from .compiled_ops import _access_fault, _alu, _branch, _icache_fetch, _mod, _mul, _mul_supported


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
    # the instructions that never need Python (most cycles' instructions) answer before the
    # operands' readiness is looked at, which could only make the answer False as well
    if code[i, I_INT_QUIET]:
        return False
    kind = code[i, I_KIND]
    op = code[i, I_OP]
    if x_ready[c, code[i, I_XS1]] > cycle or x_ready[c, code[i, I_XS2]] > cycle:
        return False
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
        if field >= _IRPTR and code[i, I_SSR_N] not in SSR_INDIRECT:
            return True
        if ss[s, S_JN] >= 1 and ss[s, S_ACTIVE]:
            return False
        new = code[i, I_IMM] if code[i, I_USES_IMM] else x[c, code[i, I_RS1]]
        base = new & 0xFFFFFFFF
        if field >= _IRPTR:  # SsrConfiguration._check_indirect
            cfg = ss[s, S_ICFG]
            size = cfg & 0xFF
            if size > 3 or ((cfg >> 8) & 0xFF) > SSR_SHIFT_MAX or cfg >> 16 or cfg < 0:
                return True
            if base % (1 << size) != 0 or ss[s, S_IBASE_CFG] % 8 != 0:
                return True
            return base < g[G_TCDM_BASE] or base + (ss[s, S_CFGB] + 1) * (1 << size) > g[G_TCDM_END]
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
    slot = _mod(cs[c, C_Q_HEAD] + cs[c, C_Q_COUNT], oq.shape[1])
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
            _lsu_push(c, cs, lq, lq_fval, addr, LSU_LOAD, rd, 0, 0.0, code[i, I_SIZE], code[i, I_SIGNED])
            if rd:
                x_ready[c, rd] = NEVER
        else:
            _lsu_push(c, cs, lq, lq_fval, addr, LSU_STORE, 0, x[c, code[i, I_RS2]], 0.0, code[i, I_SIZE], 0)
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
                ss[s, S_JWRITES] = 1 if field == _WPTR or field == _IWPTR else 0
                ss[s, S_JIND] = 1 if field >= _IRPTR else 0
                ss[s, S_JICFG] = ss[s, S_ICFG]
                ss[s, S_JIBASE] = ss[s, S_IBASE_CFG]
                ss[s, S_JN] = 1
                ss[s, S_WRITES] = ss[s, S_JWRITES]
                ss[s, S_LAUNCHED] = 1
                if not ss[s, S_ACTIVE]:
                    _next_job(s, ss)
                old = 0
            else:
                if field == _REPEAT:
                    column = S_REPEAT
                elif field == _BOUND:
                    column = S_CFGB + dim
                elif field == _STRIDE:
                    column = S_CFGS + dim
                elif field == _IDX_CFG:
                    column = S_ICFG
                else:
                    column = S_IBASE_CFG
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
    cs[c, C_L_HEAD] = _mod(head + 1, lq.shape[1])
    cs[c, C_L_COUNT] -= 1
    offset = addr - g[G_TCDM_BASE]
    ready = cycle + g[G_LATENCY]
    if kind == LSU_FP_LOAD:
        if size == 8:
            f[c, reg] = words[offset >> 3]
        else:
            f[c, reg] = np.float64(singles[offset >> 2])
        f_ready[c, reg] = ready
    elif kind == LSU_FP_STORE:
        if size == 8:
            words[offset >> 3] = lq_fval[c, head]
        else:
            singles[offset >> 2] = np.float32(lq_fval[c, head])
    elif kind == LSU_LOAD:
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


def _cores_would_exit(cycle, g, cs, code, x, x_ready, f, f_ready, body, oq, ss, fq_ready, dm, base):
    """Why the cores cannot run ``cycle`` in the loop: 2 when an FP subsystem (or an indirect
    stream) needs Python there, 3 when an integer pipeline does, the first core's reason in
    the cores' order; 0 when they can run it."""
    for c in range(cs.shape[0]):
        if cs[c, C_DONE]:
            continue
        if _fp_would_exit(c, cycle, cs, code, f, f_ready, body, oq, ss, fq_ready):
            return 2
        if _int_would_exit(c, cycle, g, cs, code, x, x_ready, ss, dm):
            return 3
        if (ss[3 * c, S_IND] or ss[3 * c + 1, S_IND]) and \
                _issr_would_exit(c, cycle, ss, fq_ready, base, g[G_TCDM_END]):
            return 2
    return 0


def _cluster_cycles(start, end, check_only, port_done, cluster, dma):
    """Run cycles start .. end-1 of the cluster (fewer when a cycle needs Python, see the
    module docstring); returns how many ran. ``g[G_FINISHED]`` is set when the last running
    core finished in the last cycle run. ``port_done``: Python already did the DMA port's
    part of cycle ``start``; ``check_only``: only say whether the cores can run cycle
    ``start`` here (1) or not (0), changing nothing. The arrays come in two tuples, the cores'
    and the TCDM's (``cluster``) and the DMA engine's and the memory's (``dma``): a call of more
    than 30 arguments is a call with ``*args`` in CPython's bytecode, which numba does not
    inline (see :func:`_keyed_entry`)."""
    g, cs, code, x, x_ready, f, f_ready, body, l0, oq, lq, lq_fval, ss, fq_ready, fq_val, fq_uses, ic, ic_line, \
        words, singles, mbytes, words_i64, rr, per_bank, reqs, owner = cluster
    dm, bursts, ww, lanes, rb, rbuf, submitted, pend, mg, mm, mq, mqd, mr, mrd, mem = dma
    ncores = cs.shape[0]
    depth_cap = fq_ready.shape[1]
    base = g[G_TCDM_BASE]
    nbanks = g[G_BANKS]
    nrequesters = g[G_REQUESTERS]
    latency = g[G_LATENCY]
    # a power-of-two bank count (the usual one) takes a word's bank with a mask: for every
    # integer, v % 2**k == v & (2**k - 1)
    bank_mask = nbanks - 1 if nbanks > 0 and nbanks & (nbanks - 1) == 0 else -1
    g[G_EXIT] = 0
    g[G_FINISHED] = 0
    cycle = start
    while cycle < end:
        if not check_only and not (port_done and cycle == start) and \
                _dma_would_exit(cycle, dm, rb, ww, mg, mm, mq, mr):
            g[G_EXIT] = 1
            return cycle - start
        exit_reason = _cores_would_exit(cycle, g, cs, code, x, x_ready, f, f_ready, body, oq, ss, fq_ready, dm, base)
        if exit_reason:
            g[G_EXIT] = exit_reason
            return cycle - start
        if check_only:
            return 1
        nr = 0
        running = 0
        dma_active = dm[D_CUR] != 0
        if dma_active:
            inside = mg[MG_ON] != 0
            if inside:
                _memory_send(cycle, mm, mg, mr)
            nr = _dma_step(cycle, dm, bursts, ww, lanes, rb, rbuf, reqs, nr, port_done and cycle == start, pend, mg,
                           mm, mq, mqd, mr, mrd)
            if inside:
                _memory_take(cycle, mm, mg, mq, mqd, mr, mrd, mem)
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
                if ss[s, S_IND]:
                    address = _issr_present(s, cycle, ss, fq_ready)
                    if address >= 0:
                        reqs[nr, 0] = s
                        reqs[nr, 1] = ss[s, S_RID]
                        reqs[nr, 2] = address
                        nr += 1
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
            word = (reqs[q, 2] - base) >> 3
            bank = word & bank_mask if bank_mask >= 0 else word % nbanks
            reqs[q, 3] = bank
            holder = owner[bank]
            if holder < 0:
                owner[bank] = q
            else:
                last = rr[bank]
                mine = _mod(reqs[q, 1] - last - 1, nrequesters)
                theirs = _mod(reqs[holder, 1] - last - 1, nrequesters)
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
            if ss[s, S_IND]:
                _issr_grant(s, ready, ss, words, words_i64, fq_ready, fq_val, fq_uses, base, depth_cap)
                continue
            _move_element(s, ready, ss, words, fq_ready, fq_val, fq_uses, base, depth_cap)
            _advance(s, ss)
        cycle += 1
        if running == 0 and not dma_active:
            g[G_FINISHED] = 1
            break
    return cycle - start


COMPILED = ("_int_would_exit", "_release_if_all_arrived", "_offload", "_int_step", "_lsu_grant", "_cores_would_exit",
            "_cluster_cycles")
"""The functions of this module numba compiles with the loop (``_cluster_cycles`` the one the
cached entry calls)."""
_INLINED = ("_fp", "_advance", "_move_element", "_fp_step", "_fp_issue", "_int_step", "_fp_would_exit",
            "_int_would_exit", "_cores_would_exit", "_lsu_grant", "_dma_step", "_cluster_cycles")
_COMPILED = None


def _loop_modules() -> tuple:
    """The modules whose functions the loop compiles in, this one last."""
    from . import compiled_cluster_memory, compiled_dma, compiled_fp, compiled_ops
    return compiled_ops, compiled_fp, compiled_cluster_memory, compiled_dma, sys.modules[__name__]


def _compiled_cluster_cycles():
    """``_cluster_cycles`` compiled by numba (imported on first use; cached on disk): the loop's
    parts are compiled in place (:func:`~archmodel.kernel.compiled.compile_parts`), and only
    the entry is cached, keyed by the sources they come from (:func:`_keyed_entry`)."""
    global _COMPILED
    if _COMPILED is None:
        compile_parts(_loop_modules(), inline=_INLINED)
        _COMPILED = dispatcher(_keyed_entry(_sources_digest()))
    return _COMPILED


def _sources_digest() -> str:
    """A hash of the other modules whose definitions the loop compiles in: the ISA table
    (semantics, primitives, opcodes), the assembler's instruction kinds, the layout and the
    loop's other parts, and the messages (a request's control bits)."""
    from archmodel.models import messages

    from . import assembler, compiled_layout, isa
    return sources_digest((isa, assembler, compiled_layout, messages) + _loop_modules()[:-1])


def _keyed_entry(digest: str):
    """``_cluster_cycles`` behind a closure over ``digest``. numba keys a cached function by
    its own source file and the values of its closure, never by the modules it calls into:
    the digest in the closure makes a changed ISA table compile the loop anew instead of
    loading the old one (whose dispatch would not know the new opcode). The entry names its
    arguments and hands the arrays on in two tuples (see :func:`_cluster_cycles`), so numba
    inlines the loop into it, which it refuses for a call through ``*args``: a batch's call
    costs about 0.1 us less (of 1.2)."""
    def cluster_cycles(start, end, check_only, port_done, g, cs, code, x, x_ready, f, f_ready, body, l0, oq, lq,
                       lq_fval, ss, fq_ready, fq_val, fq_uses, ic, ic_line, words, singles, mbytes, words_i64, rr,
                       per_bank, reqs, owner, dm, bursts, ww, lanes, rb, rbuf, submitted, pend, staged, mg, mm, mq,
                       mqd, mr, mrd, mem):
        if digest == "":
            return 0
        if dm[D_RSP_WORDS] and not check_only:
            # (here, not in the loop: the loop's code stays as it was, and its cost per cycle)
            _take_staged(dm, ww, staged)
        ran = _cluster_cycles(start, end, check_only, port_done,
                              (g, cs, code, x, x_ready, f, f_ready, body, l0, oq, lq, lq_fval, ss, fq_ready, fq_val,
                               fq_uses, ic, ic_line, words, singles, mbytes, words_i64, rr, per_bank, reqs, owner),
                              (dm, bursts, ww, lanes, rb, rbuf, submitted, pend, mg, mm, mq, mqd, mr, mrd, mem))
        if not check_only:
            # (what Python asks at the batch's end, and before it moves anything at the next:
            # answered here, with no call of the loop that only checks)
            g[G_WAIT_ON_DMA] = _cores_wait_on_the_dma(cs, code, x, dm)
            g[G_CHECKED] = start + ran
            g[G_CHECKED_EXIT] = _cores_would_exit(start + ran, g, cs, code, x, x_ready, f, f_ready, body, oq, ss,
                                                  fq_ready, dm, g[G_TCDM_BASE])
        return ran
    return cluster_cycles
