"""The ideal outside memory played inside the compiled Snitch cluster loop: a
:class:`~.memory.FixedLatencyMemory` wired straight to the cluster's ``ext_req``/``ext_rsp``.

Played outside, every burst the DMA sends and every answer it gets ends a batch (the answer
reaches the cluster at a time the kernel's lookahead only bounds), so a layer streaming its
operands runs batches of a few tens of cycles. Played inside, the loop computes the memory's
edges and the two channels with the cluster's, and a batch runs until a transfer ends (the
next one is started in Python), a core needs Python, or the run's limit, a progress report or
the watchdog's deadline. Each cycle, in the models' two-phase order (results never depend on
it because both channels are registered):

* the memory sends its oldest response not yet sent once it is due, the response channel
  holds a credit (one per response sent and not yet received) and its link is free
  (``FixedLatencyMemory.tick`` stays awake while one is overdue);
* the DMA engine takes the response arriving now (``SnitchDma.step``: a read's words queue
  for the lanes, a write's acknowledgement closes it) and sends its next burst when the
  request channel holds a credit (one per request sent and not yet taken) and its link is
  free;
* the memory takes the request arriving now (it is woken by each arrival, and arrivals are
  at least a cycle apart): served from ``max(now, free)`` for ``ceil(bytes /
  bytes_per_cycle)`` cycles, answered ``latency_cycles`` after; a write's bytes enter the
  memory and a read's are copied then, as the Python memory does.

A message of ``b`` bits sent at cycle ``t`` on a channel of width ``w`` holds the link for
``ceil(b / w)`` cycles (one without a width) and arrives ``beats - 1 + latency`` cycles after
``t`` (:mod:`archmodel.kernel.channel`). The memory is taken in at the start of a batch only
when nothing is under way between it and the cluster (no message on either channel, no
response waiting in it), and handed back at the batch's end, with what is under way then:
requests on their way go onto ``ext_req`` as sent at their cycles, responses on their way onto
the memory's ``rsp`` and those not yet sent into its queue
(:meth:`~.memory.FixedLatencyMemory.resume_service`). Its bytes are written in place (the loop
works on a view of ``FixedLatencyMemory.data``). The channels' counters (messages, beats) do
not count the messages that stayed inside a batch.
"""

from __future__ import annotations

import numpy as np

from archmodel.models.messages import CONTROL_BITS, MemRequest, MemResponse

from .compiled_layout import D_P_HEAD, D_PENDING, D_WIF, D_WW_COUNT, D_WW_HEAD
from .compiled_ops import _mod
from .memory import FixedLatencyMemory

PLAY_IDEAL_MEMORY = True
"""Whether the loop plays an ideal memory wired straight to the cluster (see above); the
randomized tests hold both forms to the Python models."""

# geometry (mg): on, the memory's latency and bytes per cycle, the request channel's latency,
# credits and width (0: none), the response channel's, the memory's first address and its end
(MG_ON, MG_LATENCY, MG_BPC, MG_Q_LAT, MG_Q_CAP, MG_Q_WIDTH, MG_R_LAT, MG_R_CAP, MG_R_WIDTH, MG_BASE, MG_END,
 MG_WIDTH) = range(12)
# state (mm): the memory's free cycle and counters; the requests on their way (ring head, count,
# the cycle the link is free from); the responses of requests taken and not yet received (ring
# head, count, how many of them were sent, the cycle the link is free from)
(M_FREE, M_READ, M_WRITTEN, M_BUSY, M_QH, M_QN, M_QBUSY, M_RH, M_RN, M_RS, M_RBUSY, M_WIDTH) = range(12)
# a request (mq row): the cycle it was sent, its arrival, outside address, bytes, write, TCDM address
Q_SENT, Q_ARR, Q_ADDR, Q_SIZE, Q_WRITE, Q_LOCAL, Q_COLUMNS = range(7)
# a response (mr row): due, the cycle it was sent, its arrival, write, bytes, the request's TCDM
# address and the cycle the request was sent
R_DUE, R_SENT, R_ARR, R_WRITE, R_SIZE, R_LOCAL, R_ASKED, R_COLUMNS = range(8)
RESPONSES = 64
"""Responses the memory may hold taken and not yet received; a batch ends before one more."""
MAX_CREDITS = 64
"""The request channel's credits above which the memory stays outside (a ring slot each)."""


def _beats(bits, width):
    """Cycles a message of ``bits`` holds a link of ``width`` bits (0: no width)."""
    if width == 0:
        return 1
    beats = (bits + width - 1) // width
    return beats if beats > 1 else 1


def _memory_send(c, mm, mg, mr):
    """The memory's send at cycle ``c``: its oldest response not yet sent, if due and the
    response channel is ready."""
    if mm[M_RN] > mm[M_RS] and mm[M_RS] < mg[MG_R_CAP] and mm[M_RBUSY] <= c:
        k = _mod(mm[M_RH] + mm[M_RS], mr.shape[0])
        if mr[k, R_DUE] <= c:
            bits = CONTROL_BITS if mr[k, R_WRITE] else 8 * mr[k, R_SIZE]
            beats = _beats(bits, mg[MG_R_WIDTH])
            mr[k, R_SENT] = c
            mr[k, R_ARR] = c + beats - 1 + mg[MG_R_LAT]
            mm[M_RBUSY] = c + beats
            mm[M_RS] += 1


def _memory_take(c, mm, mg, mq, mqd, mr, mrd, mem):
    """The memory's take at cycle ``c``: the request arriving now, served and answered (the
    batch ended before a request it cannot take, see :func:`_memory_would_exit`)."""
    if mm[M_QN] == 0:
        return
    h = mm[M_QH]
    if mq[h, Q_ARR] > c:
        return
    size = mq[h, Q_SIZE]
    words = size >> 3
    offset = (mq[h, Q_ADDR] - mg[MG_BASE]) >> 3
    service = (size + mg[MG_BPC] - 1) // mg[MG_BPC]
    start = c if c > mm[M_FREE] else mm[M_FREE]
    mm[M_FREE] = start + service
    mm[M_BUSY] += service
    k = _mod(mm[M_RH] + mm[M_RN], mr.shape[0])
    if mq[h, Q_WRITE]:
        for j in range(words):
            mem[offset + j] = mqd[h, j]
        mm[M_WRITTEN] += size
    else:
        for j in range(words):
            mrd[k, j] = mem[offset + j]
        mm[M_READ] += size
    mr[k, R_DUE] = mm[M_FREE] + mg[MG_LATENCY]
    mr[k, R_WRITE] = mq[h, Q_WRITE]
    mr[k, R_SIZE] = size
    mr[k, R_LOCAL] = mq[h, Q_LOCAL]
    mr[k, R_ASKED] = mq[h, Q_SENT]
    mm[M_RN] += 1
    mm[M_QH] = _mod(h + 1, mq.shape[0])
    mm[M_QN] -= 1


def _memory_would_exit(c, dm, ww, mm, mg, mq, mr):
    """Whether the memory inside needs Python at cycle ``c``: a read's words arrive for which
    the lanes' queue has no room (Python grows it), or a request arrives that lies outside
    the memory (its tick fails, naming it) or finds the response ring full."""
    if mm[M_RS] and mr[mm[M_RH], R_ARR] <= c and not mr[mm[M_RH], R_WRITE] and \
            dm[D_WW_COUNT] + (mr[mm[M_RH], R_SIZE] >> 3) > ww.shape[0]:
        return True
    if mm[M_QN] and mq[mm[M_QH], Q_ARR] <= c:
        h = mm[M_QH]
        if mq[h, Q_ADDR] < mg[MG_BASE] or mq[h, Q_ADDR] + mq[h, Q_SIZE] > mg[MG_END]:
            return True
        return mm[M_RN] >= mr.shape[0]
    return False


def _port_take(c, dm, mm, mr, mrd, pend, ww):
    """The DMA engine takes the response arriving at cycle ``c`` (``SnitchDma.step``)."""
    if mm[M_RS] == 0:
        return
    h = mm[M_RH]
    if mr[h, R_ARR] > c:
        return
    if mr[h, R_WRITE]:
        dm[D_WIF] -= 1
    else:
        p = dm[D_P_HEAD]
        local = pend[p, 0]
        words = pend[p, 1] >> 3
        dm[D_P_HEAD] = _mod(p + 1, pend.shape[0])
        dm[D_PENDING] -= 1
        cap = ww.shape[0]
        count = dm[D_WW_COUNT]
        for j in range(words):
            slot = _mod(dm[D_WW_HEAD] + count + j, cap)
            ww[slot, 0] = local + 8 * j
            ww[slot, 1] = mrd[h, j]
        dm[D_WW_COUNT] = count + words
    mm[M_RH] = _mod(h + 1, mr.shape[0])
    mm[M_RN] -= 1
    mm[M_RS] -= 1


def _port_ready(c, mm, mg):
    """``ext_req.ready`` at cycle ``c``: a credit is held and the link is free."""
    return mm[M_QN] < mg[MG_Q_CAP] and mm[M_QBUSY] <= c


def _port_send(c, mm, mg, mq, mqd, address, size, write, local, rbuf, slot):
    """The DMA engine sends a burst at cycle ``c`` (a write carries ``rbuf[slot]``)."""
    k = _mod(mm[M_QH] + mm[M_QN], mq.shape[0])
    bits = CONTROL_BITS + (8 * size if write else 0)
    beats = _beats(bits, mg[MG_Q_WIDTH])
    mq[k, Q_SENT] = c
    mq[k, Q_ARR] = c + beats - 1 + mg[MG_Q_LAT]
    mq[k, Q_ADDR] = address
    mq[k, Q_SIZE] = size
    mq[k, Q_WRITE] = write
    mq[k, Q_LOCAL] = local
    if write:
        for j in range(size >> 3):
            mqd[k, j] = rbuf[slot, j]
    mm[M_QBUSY] = c + beats
    mm[M_QN] += 1


COMPILED = ("_beats", "_memory_send", "_memory_take", "_memory_would_exit", "_port_take", "_port_ready",
            "_port_send")
"""The functions of this module numba compiles with the loop (see compiled_cluster)."""


def off() -> tuple:
    """The loop's memory arguments when the memory stays outside (every ring empty, unused)."""
    return (np.zeros(MG_WIDTH, np.int64), np.zeros(M_WIDTH, np.int64), np.zeros((1, Q_COLUMNS), np.int64),
            np.zeros((1, 1), np.int64), np.zeros((1, R_COLUMNS), np.int64), np.zeros((1, 1), np.int64),
            np.zeros(1, np.int64))


OFF = off()


class InnerMemory:
    """The memory a cluster's loop may play (see the module docstring): its arrays, taken in
    at a batch's start (:meth:`take_in`) and handed back at its end (:meth:`hand_back`)."""

    def __init__(self, cluster, memory: FixedLatencyMemory):
        self.cluster, self.memory = cluster, memory
        ask, answer = cluster.ext_req.channel, memory.rsp.channel
        self.mg = mg = np.zeros(MG_WIDTH, np.int64)
        mg[[MG_LATENCY, MG_BPC, MG_Q_LAT, MG_Q_CAP, MG_Q_WIDTH, MG_R_LAT, MG_R_CAP, MG_R_WIDTH, MG_BASE, MG_END]] = (
            memory.latency_cycles, memory.bytes_per_cycle, ask.latency, ask.capacity, ask.width_bits or 0,
            answer.latency, answer.capacity, answer.width_bits or 0, memory.base_address,
            memory.base_address + memory.size_bytes)
        words = cluster.dma.burst_bytes // 8
        self.mm = np.zeros(M_WIDTH, np.int64)
        self.mq = np.zeros((ask.capacity, Q_COLUMNS), np.int64)
        self.mqd = np.zeros((ask.capacity, words), np.int64)
        self.mr = np.zeros((RESPONSES, R_COLUMNS), np.int64)
        self.mrd = np.zeros((RESPONSES, words), np.int64)
        self.mem = np.frombuffer(memory.data, np.int64)
        self.arrays = (mg, self.mm, self.mq, self.mqd, self.mr, self.mrd, self.mem)

    @staticmethod
    def wired(cluster) -> "InnerMemory | None":
        """The memory ``cluster``'s loop may play, from the wiring (None: it stays outside):
        a FixedLatencyMemory answering the cluster alone, in its clock domain, on channels
        in it, whose words the loop can address; and no TCDM slave port (a request coming in
        would end the batch anyway)."""
        memory = cluster.outside_memory()
        if not PLAY_IDEAL_MEMORY or type(memory) is not FixedLatencyMemory or cluster.tcdm_req.channel is not None:
            return None
        ask, answer = cluster.ext_req.channel, memory.rsp.channel
        if answer is None or answer.dst_owner is not cluster or memory.domain is not cluster.domain:
            return None
        if not (ask.same_domain and answer.same_domain) or ask.capacity > MAX_CREDITS:
            return None
        if memory.base_address % 8 or memory.size_bytes % 8:
            return None
        return InnerMemory(cluster, memory)

    def take_in(self) -> bool:
        """Take the memory into the loop if nothing is under way between it and the cluster."""
        memory = self.memory
        ask, answer = self.cluster.ext_req.channel, memory.rsp.channel
        if not memory.idle or ask.flight or answer.flight or ask.credits != ask.capacity or \
                answer.credits != answer.capacity:
            return False
        mm = self.mm
        mm[:] = 0
        mm[[M_FREE, M_READ, M_WRITTEN, M_BUSY]] = memory.service_state()
        self.mg[MG_ON] = 1
        return True

    def hand_back(self, end: int) -> None:
        """Give the memory back at cycle ``end`` (the first cycle the batch did not compute),
        with the messages under way then (see the module docstring)."""
        self.mg[MG_ON] = 0
        mm, mq, mr = self.mm, self.mq, self.mr
        domain = self.cluster.domain
        phase, period = domain.phase_ps, domain.period_ps
        port = self.cluster.ext_req
        cap = len(mq)
        for j in range(int(mm[M_QN])):
            k = (int(mm[M_QH]) + j) % cap
            sent, _, address, size, write, local = mq[k].tolist()
            at = phase + sent * period
            if write:
                request = MemRequest(address=address, size_bytes=size, is_write=True,
                                     data=self.mqd[k, :size // 8].tobytes(), source="dma", created_ps=at)
            else:
                request = MemRequest(address=address, size_bytes=size, source="dma", tag=local, created_ps=at)
            port.send_ahead(request, at)
        sent_responses, waiting = [], []
        cap = len(mr)
        for j in range(int(mm[M_RN])):
            k = (int(mm[M_RH]) + j) % cap
            due, sent, _, write, size, local, asked = mr[k].tolist()
            created = phase + asked * period
            if write:
                response = MemResponse(tag=0, source="dma", created_ps=created)
            else:
                response = MemResponse(tag=local, data=self.mrd[k, :size // 8].tobytes(), source="dma",
                                       created_ps=created)
            if j < mm[M_RS]:
                sent_responses.append((sent, response))
            else:
                waiting.append((due, response))
        self.memory.resume_service(int(mm[M_FREE]), int(mm[M_READ]), int(mm[M_WRITTEN]), int(mm[M_BUSY]),
                                   sent_responses, waiting, end)
