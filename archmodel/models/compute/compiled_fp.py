"""The compiled Snitch cluster loop's FP subsystems: the issue of an offloaded FP
instruction with its SSR operands, the streamers' jobs, the LSU queue, the FREP sequencer,
and the check that a cycle needs Python (the mirror of :mod:`.fp_subsystem` and :mod:`.ssr`).
Compiled with the loop by :func:`.compiled_cluster._compiled_cluster_cycles`."""

from __future__ import annotations

from .compiled_layout import (C_HALTED, C_LDEPTH, C_L_COUNT, C_L_HEAD, C_N_FLOPS, C_N_FPU, C_PENDING, C_Q_COUNT, C_Q_HEAD,
                              C_SEQ_GEN, C_SEQ_INNER, C_SEQ_IT, C_SEQ_MASK, C_SEQ_N, C_SEQ_ON, C_SEQ_POS, C_SEQ_REC,
                              C_SEQ_REPS, C_SEQ_SMAX, C_SSR_ON, C_S_FDEP, C_S_LSU, C_S_STREAM, I_CSR_OP, I_FKIND,
                              I_FLOPS, I_FP32, I_FP_QUIET, I_IMM, I_INNER, I_KIND, I_LAT, I_NSRC, I_OP, I_RD,
                              I_RS1, I_RS2, I_SIZE, I_SMASK, I_SMAX, I_STREAMS_READ, S_ACTIVE, S_ADDR, S_ADJ,
                              S_BOUNDS, S_COUNT, S_DEPTH, S_DIMS,
                              S_HEAD, S_IDX, S_JB, S_JBASE, S_JDIMS, S_JN, S_JOB_WRITES, S_JREPEAT, S_JS, S_JWRITES,
                              S_LEFT, S_RUN, S_RUN_LEN, S_USES, S_WRITES, _CSR_SET, _CSR_WRITE, _FDIV,
                              S_IBASE, S_ICOUNT, S_IND, S_INEXT, S_IOFF, S_IQ_COUNT, S_IQ_DEPTH, S_IQ_HEAD,
                              S_IQ_READY, S_IQ_WORD, S_ISERVE, S_ISHIFT, S_ISIZE, S_IWORDS, S_ILAST, S_JICFG,
                              S_JIBASE, S_JIND)
from .compiled_ops import _fields, _fp, _from_int, _mod, _to_int
from .fp_subsystem import NEVER
from .isa import F_COMP, F_FROMINT, F_LOAD, F_STORE, F_TOINT, K_FREP, LSU_FP_LOAD, LSU_FP_STORE


def _fp_would_exit(c, cycle, cs, code, f, f_ready, body, oq, ss, fq_ready):
    """Whether the FP subsystem of core ``c`` would fault at ``cycle`` or compute something
    the loop does not: the checks ``SnitchCore._issue`` makes, in its order (a stall before
    a check means no fault this cycle)."""
    k = 0
    mask = 0
    if cs[c, C_SEQ_ON] and cs[c, C_SEQ_IT]:
        i = body[c, cs[c, C_SEQ_POS]]
        mask = cs[c, C_SEQ_MASK]
        if mask:  # (without a stagger mask the copy is not asked: spare the division)
            k = cs[c, C_SEQ_IT] % (cs[c, C_SEQ_SMAX] + 1)
    elif cs[c, C_Q_COUNT]:
        i = oq[c, cs[c, C_Q_HEAD], 0]
        if code[i, I_KIND] == K_FREP:
            return False
    else:
        return False
    if mask == 0 and code[i, I_FP_QUIET] and (cs[c, C_SSR_ON] == 0 or cs[c, C_HALTED] == 0 and not (
            code[i, I_STREAMS_READ] & 1 and ss[3 * c, S_WRITES] or code[i, I_STREAMS_READ] & 2 and
            ss[3 * c + 1, S_WRITES] or code[i, I_STREAMS_READ] & 4 and ss[3 * c + 2, S_WRITES])):
        # (most cycles: the checks below could only answer False, see compiled_layout._quiet;
        # their loads of the streams' state feed branches the issue takes again)
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
                    # no data and no job: a stall while the integer core may start one
                    # (SnitchCore.stream_exhausted), a fault once it has halted
                    return ss[s, S_COUNT] == 0 and ss[s, S_ACTIVE] == 0 and cs[c, C_HALTED] != 0
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
    ss[s, S_IND] = ss[s, S_JIND]
    if ss[s, S_IND]:
        cfg = ss[s, S_JICFG]
        ss[s, S_IBASE] = ss[s, S_JIBASE]
        ss[s, S_ISIZE] = 1 << (cfg & 0xFF)
        ss[s, S_ISHIFT] = 3 + ((cfg >> 8) & 0xFF)
        ss[s, S_INEXT] = ss[s, S_JBASE] & ~7
        ss[s, S_IOFF] = ss[s, S_JBASE] & 7
        ss[s, S_IWORDS] = (ss[s, S_IOFF] + (ss[s, S_JB] + 1) * ss[s, S_ISIZE] + 7) >> 3
        ss[s, S_IQ_HEAD] = 0
        ss[s, S_IQ_COUNT] = 0
        ss[s, S_ILAST] = 0
        ss[s, S_ICOUNT] = 0
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


def _issr_address(s, ss):
    """``SsrStreamer.element_address``: the address the next index names (-1: an index too
    large to compute with, which the Python model will find outside the TCDM)."""
    word = ss[s, S_IQ_WORD + ss[s, S_IQ_HEAD]]
    size = ss[s, S_ISIZE]
    if size == 8:
        index = word
    else:
        index = (word >> (8 * ss[s, S_IOFF])) & ((1 << (8 * size)) - 1)
    if index < 0 or index > (1 << 40):
        return -1
    return ss[s, S_IBASE] + (index << ss[s, S_ISHIFT])


def _issr_present(s, cycle, ss, fq_ready):
    """``SsrStreamer.present``: the address the indirect job of streamer ``s`` presents this
    cycle (an index word or its next element, taking turns), or -1 for none."""
    count = ss[s, S_IQ_COUNT]
    fetch = ss[s, S_IWORDS] > 0 and count < S_IQ_DEPTH
    data = count > 0 and ss[s, S_IQ_READY + ss[s, S_IQ_HEAD]] <= cycle
    if data:
        if ss[s, S_JOB_WRITES]:
            data = ss[s, S_COUNT] > 0 and fq_ready[s, ss[s, S_HEAD]] <= cycle
        else:
            data = ss[s, S_COUNT] < ss[s, S_DEPTH]
    if fetch and (not data or not ss[s, S_ILAST]):
        ss[s, S_ISERVE] = 1
        ss[s, S_ADDR] = ss[s, S_INEXT]
        return ss[s, S_ADDR]
    if data:
        ss[s, S_ISERVE] = 0
        ss[s, S_ADDR] = _issr_address(s, ss)
        return ss[s, S_ADDR]
    return -1


def _issr_would_exit(c, cycle, ss, fq_ready, low, high):
    """Whether an indirect job of core ``c`` could present an element outside the TCDM
    (``low`` .. ``high``) this cycle: the Python model faults when it does (SSRs 0 and 1,
    the ones with indirection; the loop asks only when one of them ran an indirect job)."""
    for k in range(2):
        s = 3 * c + k
        if ss[s, S_ACTIVE] and ss[s, S_IND] and ss[s, S_IQ_COUNT] > 0 \
                and ss[s, S_IQ_READY + ss[s, S_IQ_HEAD]] <= cycle:
            address = _issr_address(s, ss)
            if address < low or address >= high:
                return True
    return False


def _move_element(s, ready, ss, words, fq_ready, fq_val, fq_uses, base, depth_cap):
    """The TCDM serves streamer ``s``'s element at ``S_ADDR``: a write job's oldest value goes
    to memory, a read job's word joins its FIFO, usable from cycle ``ready`` (affine and
    indirect jobs alike; inlined into the loop)."""
    word = (ss[s, S_ADDR] - base) >> 3
    if ss[s, S_JOB_WRITES]:
        h = ss[s, S_HEAD]
        words[word] = fq_val[s, h]
        ss[s, S_HEAD] = _mod(h + 1, depth_cap)
        ss[s, S_COUNT] -= 1
    else:
        slot = _mod(ss[s, S_HEAD] + ss[s, S_COUNT], depth_cap)
        fq_ready[s, slot] = ready
        fq_val[s, slot] = words[word]
        fq_uses[s, slot] = ss[s, S_USES]
        ss[s, S_COUNT] += 1


def _issr_grant(s, ready, ss, words, words_i64, fq_ready, fq_val, fq_uses, base, depth_cap):
    """``SsrStreamer._grant_indirect``: the TCDM serves streamer ``s``'s indirect request."""
    if ss[s, S_ISERVE]:
        slot = (ss[s, S_IQ_HEAD] + ss[s, S_IQ_COUNT]) % S_IQ_DEPTH
        ss[s, S_IQ_READY + slot] = ready
        ss[s, S_IQ_WORD + slot] = words_i64[(ss[s, S_INEXT] - base) >> 3]
        ss[s, S_IQ_COUNT] += 1
        ss[s, S_INEXT] += 8
        ss[s, S_IWORDS] -= 1
        ss[s, S_ILAST] = 1
        return
    ss[s, S_ILAST] = 0
    _move_element(s, ready, ss, words, fq_ready, fq_val, fq_uses, base, depth_cap)
    ss[s, S_ICOUNT] += 1
    left = ss[s, S_LEFT] - 1
    ss[s, S_LEFT] = left
    off = ss[s, S_IOFF] + ss[s, S_ISIZE]
    if off == 8 or left == 0:
        ss[s, S_IQ_HEAD] = (ss[s, S_IQ_HEAD] + 1) % S_IQ_DEPTH
        ss[s, S_IQ_COUNT] -= 1
        off = 0
    ss[s, S_IOFF] = off
    if left == 0:
        _next_job(s, ss)


def _advance(s, ss):
    """``SsrStreamer.grant``'s address step (with ``step_address`` when the run is used up)."""
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
    k = _mod(cs[c, C_L_HEAD] + cs[c, C_L_COUNT], depth)
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
                    ss[s, S_HEAD] = _mod(h + 1, depth_cap)
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
            slot = _mod(ss[s, S_HEAD] + ss[s, S_COUNT], depth_cap)
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
            _lsu_push(c, cs, lq, lq_fval, operand, LSU_FP_LOAD, r, 0, 0.0, code[i, I_SIZE], 0)
            f_ready[c, r] = NEVER
        else:
            _lsu_push(c, cs, lq, lq_fval, operand, LSU_FP_STORE, 0, 0, f[c, r], code[i, I_SIZE], 0)
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
        mask = cs[c, C_SEQ_MASK]
        k = cs[c, C_SEQ_IT] % (cs[c, C_SEQ_SMAX] + 1) if mask else 0  # (see _fp_would_exit)
        i = body[c, cs[c, C_SEQ_POS]]
        if _fp_issue(c, i, k, mask, 0, cycle, cs, code, x, x_ready, f, f_ready, lq, lq_fval, ss,
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
    cs[c, C_Q_HEAD] = _mod(head + 1, oq.shape[1])
    cs[c, C_Q_COUNT] -= 1


COMPILED = ("_fp_would_exit", "_fp_idle", "_next_job", "_advance", "_move_element", "_issr_address", "_issr_present",
            "_issr_would_exit", "_issr_grant", "_lsu_push", "_fp_issue", "_seq_advance", "_fp_step")
"""The functions of this module numba compiles with the loop (see compiled_cluster)."""
