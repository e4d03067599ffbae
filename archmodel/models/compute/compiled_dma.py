"""The compiled Snitch cluster loop's DMA engine: ``dmcpy`` operands and checks, the
engine's lanes and read bursts, and the check that a cycle needs Python (the mirror of
:mod:`.dma`). Compiled with the loop by :func:`.compiled_cluster._compiled_cluster_cycles`."""

from __future__ import annotations

from .compiled_cluster_memory import MG_ON, _memory_would_exit, _port_ready, _port_send, _port_take
from .compiled_layout import (_DMCPY, _DMSTAT, C_AT_BAR, C_CBASE, C_DONE, C_IP, C_NINS, D_BHEAD, D_CUR, D_EXT,
                              D_INBOUND, D_NB, D_N_BUSY, D_N_DONE, D_N_IN, D_N_OUT, D_OUTSTANDING, D_P_HEAD, D_PENDING,
                              D_QDEPTH, D_QLEN, D_RB_COUNT, D_RB_HEAD, D_RID, D_RSP_LOCAL, D_RSP_WORDS, D_SEND_FROM, D_WIF,
                              D_WW_COUNT, D_WW_HEAD,
                              G_DMA_DST, G_DMA_DSTR, G_DMA_REPS, G_DMA_SRC, G_DMA_SSTR, G_TCDM_BASE, G_TCDM_END,
                              I_IMM, I_KIND, I_OP, I_RD, I_RS1, I_RS2, I_TARGET, I_USES_IMM, L_ADDR, L_AT, L_BITS,
                              L_BUSY, R_ISSUED, R_LEFT, R_LOCAL, R_OUTSIDE, R_SIZE)
from .compiled_ops import _mod
from .isa import K_BRANCH, K_DMA
from .isa import code as code_of

_BNE = code_of("bne")


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


def _dma_would_exit(c, dm, rb, ww, mg, mm, mq, mr):
    """Whether the DMA engine needs Python at cycle ``c``: to start the next queued transfer
    (its bursts are Python objects), to send a burst to the outside port, or for the memory
    played inside (:func:`.compiled_cluster_memory._memory_would_exit`)."""
    if not dm[D_CUR]:
        return dm[D_QLEN] > 0
    if mg[MG_ON]:
        return _memory_would_exit(c, dm, ww, mm, mg, mq, mr)
    # A burst waiting to go out needs Python to send it, but not before the port can be
    # ready again (D_SEND_FROM, set by Python when it found the port not ready).
    if dm[D_INBOUND]:
        return dm[D_NB] > 0 and dm[D_PENDING] < dm[D_OUTSTANDING] and c >= dm[D_SEND_FROM]
    return dm[D_RB_COUNT] > 0 and rb[dm[D_RB_HEAD], R_LEFT] == 0 and c >= dm[D_SEND_FROM]


def _take_staged(dm, ww, staged):
    """Queue for the lanes the words of the read response Python took at the batch's start
    (``D_RSP_WORDS`` of them in ``staged``, for the TCDM from ``D_RSP_LOCAL``: ``SnitchDma.step``'s
    ``write_words``) at the ring's tail; Python made the room."""
    cap = ww.shape[0]
    tail = _mod(dm[D_WW_HEAD] + dm[D_WW_COUNT], cap)
    local = dm[D_RSP_LOCAL]
    words = dm[D_RSP_WORDS]
    for j in range(words):
        ww[tail, 0] = local + 8 * j
        ww[tail, 1] = staged[j]
        tail += 1
        if tail == cap:
            tail = 0
    dm[D_WW_COUNT] += words
    dm[D_RSP_WORDS] = 0


def _dma_step(c, dm, bursts, ww, lanes, rb, rbuf, reqs, nr, port_done, pend, mg, mm, mq, mqd, mr, mrd):
    """``SnitchDma.step`` at cycle ``c``, its outside port's part only with the memory played
    inside (see _dma_would_exit; ``port_done``: the port's part of this cycle, read bursts
    taken in included, was done in Python): hand words to idle lanes and present the busy
    lanes to the TCDM; returns the request count."""
    dm[D_N_BUSY] += 1
    nlanes = lanes.shape[0]
    inside = mg[MG_ON] != 0
    if inside:
        _port_take(c, dm, mm, mr, mrd, pend, ww)
    if dm[D_INBOUND]:
        if inside and dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING] and _port_ready(c, mm, mg):
            b = dm[D_BHEAD]
            _port_send(c, mm, mg, mq, mqd, bursts[b, 0], bursts[b, 2], 0, bursts[b, 1], rbuf, 0)
            p = _mod(dm[D_P_HEAD] + dm[D_PENDING], pend.shape[0])
            pend[p, 0] = bursts[b, 1]
            pend[p, 1] = bursts[b, 2]
            dm[D_PENDING] += 1
            dm[D_BHEAD] = b + 1
            dm[D_NB] -= 1
        cap = ww.shape[0]
        for k in range(nlanes):
            if not lanes[k, L_BUSY] and dm[D_WW_COUNT]:
                head = dm[D_WW_HEAD]
                lanes[k, L_BUSY] = 1
                lanes[k, L_ADDR] = ww[head, 0]
                lanes[k, L_BITS] = ww[head, 1]
                dm[D_WW_HEAD] = _mod(head + 1, cap)
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
        head = dm[D_RB_HEAD]
        if inside and dm[D_RB_COUNT] and rb[head, R_LEFT] == 0 and _port_ready(c, mm, mg):
            _port_send(c, mm, mg, mq, mqd, rb[head, R_OUTSIDE], rb[head, R_SIZE], 1, 0, rbuf, head)
            dm[D_WIF] += 1
            dm[D_N_OUT] += rb[head, R_SIZE]
            dm[D_RB_HEAD] = (head + 1) % 2
            dm[D_RB_COUNT] -= 1
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


def _polls_busy(c, cs, code, x, dm):
    """Whether core ``c`` spins on the DMA's busy status, ``1: dmstati rd, 2; bnez rd, 1b``,
    and keeps spinning while the running transfer is not done, or waits with a ``dmcpy`` for
    room in a full transfer queue."""
    ip, base = cs[c, C_IP], cs[c, C_CBASE]
    if ip >= cs[c, C_NINS]:
        return False
    at = base + ip
    kind = code[at, I_KIND]
    if kind == K_DMA and code[at, I_OP] == _DMCPY:
        return dm[D_QLEN] >= dm[D_QDEPTH]
    if kind != K_BRANCH and kind != K_DMA:
        return False  # (neither the status read nor the branch after it: a computing core, mostly)
    at_branch = kind == K_BRANCH
    stat = ip - 1 if at_branch else ip
    if stat < 0 or stat + 1 >= cs[c, C_NINS]:
        return False
    first, branch = base + stat, base + stat + 1
    rd = code[first, I_RD]
    if not (code[first, I_KIND] == K_DMA and code[first, I_OP] == _DMSTAT and code[first, I_USES_IMM]
            and code[first, I_IMM] & 3 == 2 and rd != 0):
        return False
    if not (code[branch, I_KIND] == K_BRANCH and code[branch, I_OP] == _BNE and code[branch, I_RS1] == rd
            and code[branch, I_RS2] == 0 and code[branch, I_TARGET] == stat):
        return False
    return not at_branch or x[c, rd] != 0


def _cores_wait_on_the_dma(cs, code, x, dm):
    """1 when every core still running is at the barrier or spins on the DMA
    (:func:`_polls_busy`), and one spins, so the barrier cannot open; else 0 (``G_WAIT_ON_DMA``,
    which :func:`.compiled_batches.waits_only_for_the_port` reads at a batch's end)."""
    spinning = 0
    for c in range(cs.shape[0]):
        if cs[c, C_DONE] or cs[c, C_AT_BAR]:
            continue
        if not _polls_busy(c, cs, code, x, dm):
            return 0
        spinning = 1
    return spinning


COMPILED = ("_dmcpy_operands", "_in_tcdm", "_dmcpy_illegal", "_dma_would_exit", "_take_staged", "_dma_step", "_lane_grant",
            "_polls_busy", "_cores_wait_on_the_dma")
"""The functions of this module numba compiles with the loop (see compiled_cluster)."""
