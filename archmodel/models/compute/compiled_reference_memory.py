"""The ideal memory below a compiled core + cache pair, played inside the pair's loop
(:mod:`.compiled_reference_loop`): a :class:`~.memory.FixedLatencyMemory` wired straight to
the cache's ``mem_req``/``mem_resp``, in the same clock domain, on channels without a width.

A miss then never leaves the loop, so the pair computes on across fills instead of ending a
batch at each one (the kernel's round trip per miss is what bounds the pair on a memory
outside it). The steps are the Python models' at each edge, in their two-phase order, with
the two channels as rings of (arrival cycle, payload) and their credits:

* the cache sends its head line at cycle c while fewer than the request channel's capacity
  are unreceived (the memory takes each at its arrival cycle: it is woken by the arrival and
  takes one a tick, and at most one arrives a cycle, so a credit returns at arrival + 1);
* the memory takes the request arriving at c: its service starts at max(c, free), lasts
  ceil(line / bytes_per_cycle) cycles, and its response is due ``latency_cycles`` after; a
  write's bytes enter the memory and a read's are copied at that cycle, as the Python
  memory does;
* the memory sends the oldest unsent response at the first cycle at or after its due cycle
  at which fewer than the response channel's capacity are unreceived, one a cycle (it stays
  awake while one is overdue, and sleeps until the due cycle otherwise);
* the cache takes the response arriving at c at its tick at c (an arrival wakes it, and at
  most one arrives a cycle), before its accesses of that cycle.

The memory's counters and free cycle are handed back with
:meth:`~.memory.FixedLatencyMemory.resume_service` when the run settles; its bytes are
written in place (the loop works on a view of ``FixedLatencyMemory.data``).
"""

from __future__ import annotations

import numpy as np

from archmodel.kernel.compiled import jit

# memory scalars (ms)
M_FREE, M_READ, M_WRITTEN, M_BUSY, Q_HEAD, Q_LEN, R_HEAD, R_LEN, R_SENT, N_SAMPLES, OUTSIDE = range(11)
MEM_SCALARS = 11
# memory geometry (mg): on, latency, service cycles a line, the request channel's latency and
# capacity, the response channel's, the memory's first address and its end
MG_ON, MG_LATENCY, MG_SERVICE, MG_Q_LAT, MG_Q_CAP, MG_R_LAT, MG_R_CAP, MG_BASE, MG_END = range(9)
MEM_GEO = 9
# the columns of a request (q) and of a response (r) in their rings
Q_ARR, Q_KIND, Q_LINE, Q_LEAVE = range(4)
R_DUE, R_ARR, R_KIND, R_LINE, R_LEAVE = range(5)
SAMPLES = 4096
"""Miss latencies a batch may gather before the driver hands them to the cache's statistic."""


def off() -> tuple:
    """The arguments of a loop with no memory inside (every ring empty and unused)."""
    return (np.zeros(MEM_SCALARS, dtype=np.int64), np.zeros(MEM_GEO, dtype=np.int64),
            np.zeros(1, dtype=np.uint8), np.zeros((1, 4), dtype=np.int64), np.zeros((1, 1), dtype=np.uint8),
            np.zeros((1, 5), dtype=np.int64), np.zeros((1, 1), dtype=np.uint8), np.zeros(1, dtype=np.int64))


def rings(line_bytes: int, request_capacity: int, responses: int) -> tuple:
    """(q, q_data, r, r_data, samples): the request ring (one slot per credit of the channel
    to memory), the responses taken and not yet received by the cache (at most the lines the
    cache can have out: its MSHRs and write buffer), and the miss-latency samples."""
    return (np.zeros((request_capacity, 4), dtype=np.int64), np.zeros((request_capacity, line_bytes), dtype=np.uint8),
            np.zeros((responses, 5), dtype=np.int64), np.zeros((responses, line_bytes), dtype=np.uint8),
            np.zeros(SAMPLES, dtype=np.int64))


@jit
def send_line(c, ms, mg, kind, line, leave, line_data, q, q_data):  # pragma: no cover - compiled
    """The cache sends a line at cycle c if the request channel has a credit; whether it did."""
    if ms[Q_LEN] >= mg[MG_Q_CAP]:
        return False
    cap = len(q)
    k = (ms[Q_HEAD] + ms[Q_LEN]) % cap
    q[k, Q_ARR] = c + mg[MG_Q_LAT]
    q[k, Q_KIND] = kind
    q[k, Q_LINE] = line
    q[k, Q_LEAVE] = leave
    if kind == 1:
        for b in range(len(line_data)):
            q_data[k, b] = line_data[b]
    ms[Q_LEN] += 1
    return True


@jit
def step(c, shift, ms, mg, mem, q, q_data, r, r_data):  # pragma: no cover - compiled
    """The memory's edge at cycle c: take the request arriving now, send the oldest due
    response a credit allows. False when the request lies outside the memory (``OUTSIDE``
    holds its address)."""
    line_bytes = 1 << shift
    if ms[Q_LEN] > 0 and q[ms[Q_HEAD], Q_ARR] <= c:
        h = ms[Q_HEAD]
        address = q[h, Q_LINE] << shift
        if address < mg[MG_BASE] or address + line_bytes > mg[MG_END]:
            ms[OUTSIDE] = address
            return False
        offset = address - mg[MG_BASE]
        ms[Q_HEAD] = (h + 1) % len(q)
        ms[Q_LEN] -= 1
        start = c if c > ms[M_FREE] else ms[M_FREE]
        ms[M_FREE] = start + mg[MG_SERVICE]
        ms[M_BUSY] += mg[MG_SERVICE]
        k = (ms[R_HEAD] + ms[R_LEN]) % len(r)
        if q[h, Q_KIND] == 1:
            for b in range(line_bytes):
                mem[offset + b] = q_data[h, b]
            ms[M_WRITTEN] += line_bytes
        else:
            for b in range(line_bytes):
                r_data[k, b] = mem[offset + b]
            ms[M_READ] += line_bytes
        r[k, R_DUE] = ms[M_FREE] + mg[MG_LATENCY]
        r[k, R_KIND] = q[h, Q_KIND]
        r[k, R_LINE] = q[h, Q_LINE]
        r[k, R_LEAVE] = q[h, Q_LEAVE]
        ms[R_LEN] += 1
    if ms[R_LEN] > ms[R_SENT] and ms[R_SENT] < mg[MG_R_CAP]:
        # (the sent ones not yet popped are those arriving at c or later: the cache takes
        # each at its arrival, after this step)
        k = (ms[R_HEAD] + ms[R_SENT]) % len(r)
        if r[k, R_DUE] <= c:
            r[k, R_ARR] = c + mg[MG_R_LAT]
            ms[R_SENT] += 1
    return True


@jit
def response_arrived(c, ms, r):  # pragma: no cover - compiled
    """The ring slot of the response the cache takes at cycle c, or -1."""
    if ms[R_SENT] > 0 and r[ms[R_HEAD], R_ARR] <= c:
        return ms[R_HEAD]
    return -1


@jit
def response_taken(ms, r):  # pragma: no cover - compiled
    """The cache took the head response."""
    ms[R_HEAD] = (ms[R_HEAD] + 1) % len(r)
    ms[R_LEN] -= 1
    ms[R_SENT] -= 1


@jit
def next_event(c, ms, q, r):  # pragma: no cover - compiled
    """The next cycle after c at which the memory or a channel to or from it acts (a request
    taken, a response sent or taken); 1 << 62 if none."""
    soonest = 1 << 62
    if ms[Q_LEN] > 0:
        soonest = q[ms[Q_HEAD], Q_ARR]
    if ms[R_SENT] > 0 and r[ms[R_HEAD], R_ARR] < soonest:
        soonest = r[ms[R_HEAD], R_ARR]
    if ms[R_LEN] > ms[R_SENT]:
        due = r[(ms[R_HEAD] + ms[R_SENT]) % len(r), R_DUE]
        if due < soonest:
            soonest = due
    return soonest if soonest > c else c + 1
