"""The numba loop of a :class:`~.reference_core.ReferenceCore` and the private cache it
reaches alone, cycle by cycle, for :mod:`.compiled_reference` (which drives it).

The loop computes, per cycle and in the order the Python models do, the cache's step
(take a request, one access, one answer, one line out to memory) and the core's step (one
answer, one entry, one issue), with the two channels between them as rings of (arrival
cycle, payload) and the credit rule of :mod:`archmodel.kernel.channel` (a credit freed by a
``recv`` at an edge is usable from the next). Results never depend on that order because
every channel is registered. The randomized tests in
``tests/models/compute/test_compiled_reference.py`` hold it to the Python models cycle for
cycle and counter for counter; the Python models are the reference.

The Python cache counts a stalled access once per tick it retries (``mshr_stalls``), and it
ticks only when awake, so the loop follows when it would be (``WAKE``: woken by a request
arriving, a fill, a credit it waited for, or the time it asked for) to count the same.

Only the first cycle of a batch may take a fill that arrived or finish: the loop stops
before any later cycle that would, so the driver does those at the kernel's time of that
cycle (unless the memory below is played inside the loop, :mod:`.compiled_reference_memory`:
then its fills are taken at their own cycles inside the batch, and nothing below leaves it). Lines to memory leave inside the batch, each at its own cycle, while the credits held
at the batch's start last: credits only return, so the channel is ready then for the Python
cache too (with none left, the loop stops before the cycle, and the driver sends when the
channel says it may). The driver hands them to the channel after the loop, timestamped
(``OutPort.send_ahead``), and the batch stops before the first cycle an answer to any of
them can arrive: its send plus the least round trip through the memory below
(``geo[G_ROUND_TRIP]``, from the kernel's wiring bounds). A line leaves at the end of the Python cache's tick, but
which line leaves at cycle c is known at its start (a line queued at c leaves at c + 1 at
the earliest), so the loop sends it before computing c.
"""

from __future__ import annotations

import numpy as np

from archmodel.kernel.compiled import jit

from .compiled_reference_memory import (MG_ON, N_SAMPLES, R_KIND, R_LEAVE, R_LINE, next_event, response_arrived,
                                        response_taken, send_line)
from .compiled_reference_memory import step as memory_step

RRPV_MAX = 3
"""SRRIP's distant re-reference value with 2-bit RRPVs, as the cache's tag store has it."""
RRPV_INSERT = 2
"""The RRPV a fill gets (a long interval)."""

# core scalars (cs)
ENTERED, RETIRED, MORE, EARLIEST, NWAIT, WIN_SINCE, DEP_SINCE, DONE, REFS, READS, WRITES, COMPUTE, \
    WIN_STALLS, DEP_STALLS, BARRIER_CYCLES, BAD, ANSWERED, LAST_ENTRY, QUIET_UNTIL, SCAN = range(20)
CORE_SCALARS = 20
# SCAN: whether the core's issue must look through its waiting references again. A look that
# found every one waiting for a value or behind an older one to its word finds the same until
# an answer comes or a reference enters, so the loop skips it until then (with a window of 64
# references waiting on DRAM, the look is most of a cycle's work).
# cache scalars (ks)
CUR, JN, NM, UNACKED, NEXT_TAG, ACCESSES, HITS, DELAYED, MISSES, WRITEBACKS, BYTES_READ, BYTES_WRITTEN, \
    MSHR_STALLS, OCC_AREA, OCC_SINCE, OCC_MAX, LRU_CLOCK, O_HEAD, O_LEN, WAKE, RS_BLOCKED, MEM_WAITING, \
    BUDGET, CAP, O_OUT = range(25)
CACHE_SCALARS = 25
# BUDGET: lines the batch may still send (the credits held at its start); CAP: the first cycle
# an answer to a line sent in the batch can arrive (the batch stops before it); O_OUT: lines
# sent in the batch that the driver has not handed to the channel yet (the O_OUT entries
# before O_HEAD, each sent at its cycle in o_at).
NEVER = 1 << 62
# channel scalars (qs): the request ring (core -> cache) and the answer ring (cache -> core)
RQ_HEAD, RQ_LEN, RQ_TAKEN, RS_HEAD, RS_LEN, RS_TAKEN = range(6)
# what a batch ended on
EXIT_END, EXIT_SEND, EXIT_FINISH, EXIT_DONE, EXIT_BAD, EXIT_PHASE, EXIT_QUIET, EXIT_ANSWER, EXIT_SAMPLES, \
    EXIT_OUTSIDE = range(10)
EXIT_REASONS = ("end", "send", "finish", "done", "bad read", "phase", "quiet", "answer", "samples", "outside")
# (samples: the miss-latency buffer of a memory played inside the loop is full; outside: a
# line to that memory lies outside it)
# geo entries the driver fills in at the first tick, from the wiring: the least round trip
# through the memory below (cycles from a line's send to the first cycle an answer can
# arrive), and whether lines may leave ahead (no width on the channel to memory)
G_ROUND_TRIP, G_AHEAD = 18, 19
GEO = 20
# what a line to memory is
KIND_FILL, KIND_WB = 0, 1


@jit
def _find(tags, s, line, ways):  # pragma: no cover - compiled
    for w in range(ways):
        if tags[s, w] == line:
            return w
    return -1


@jit
def _victim(tags, age, s, ways, srrip):  # pragma: no cover - compiled
    """The way a fill of set s would evict (-1 while a way is free); SRRIP ages the set."""
    for w in range(ways):
        if tags[s, w] == -1:
            return -1
    if srrip:
        while True:
            for w in range(ways):
                if age[s, w] == RRPV_MAX:
                    return w
            for w in range(ways):
                age[s, w] += 1
    best = 0
    for w in range(1, ways):
        if age[s, w] < age[s, best]:
            best = w
    return best


@jit
def _touch(age, ks, s, w, srrip):  # pragma: no cover - compiled
    if srrip:
        age[s, w] = 0
    else:
        ks[LRU_CLOCK] += 1
        age[s, w] = ks[LRU_CLOCK]


@jit
def _read_bytes(data, s, w, inside, size):  # pragma: no cover - compiled
    v = np.uint64(0)
    for b in range(size):
        v |= np.uint64(data[s, w, inside + b]) << np.uint64(8 * b)
    return v


@jit
def _write_bytes(data, s, w, inside, size, value):  # pragma: no cover - compiled
    for b in range(size):
        data[s, w, inside + b] = np.uint8((value >> np.uint64(8 * b)) & np.uint64(0xFF))


@jit
def _occupancy(ks, c, nm):  # pragma: no cover - compiled
    ks[OCC_AREA] += ks[NM] * (c - ks[OCC_SINCE])
    ks[OCC_SINCE] = c
    ks[NM] = nm
    if nm > ks[OCC_MAX]:
        ks[OCC_MAX] = nm


@jit
def _push_out(ks, o_leave, o_kind, o_line, o_tag, leave, kind, line):  # pragma: no cover - compiled
    cap = len(o_leave)
    k = (ks[O_HEAD] + ks[O_LEN]) % cap
    o_leave[k] = leave
    o_kind[k] = kind
    o_line[k] = line
    o_tag[k] = ks[NEXT_TAG]
    ks[NEXT_TAG] += 1
    ks[O_LEN] += 1
    return k


@jit
def _rest(c, ks, qs, rq_arr, job_left, job_done, jq, o_leave, queue, in_order):  # pragma: no cover - compiled
    """The cycle the Python cache, having found nothing to do by itself at c, ticks next:
    at once while an answer from below or a request it could take waits (Cache._rest), else
    at the first answer or line falling due, or when a request arrives; a request still
    waiting behind one it took at c looks at c + 1 (the kernel's rule for a sleeper)."""
    if ks[MEM_WAITING]:
        return c + 1  # another answer from below already waits (the memory's clock is faster)
    arrived = qs[RQ_LEN] > 0 and rq_arr[qs[RQ_HEAD]] <= c
    if ks[CUR] < 0 and arrived and ks[JN] < queue:
        return c + 1
    due = NEVER
    for k in range(ks[JN]):
        slot = jq[k]
        if job_left[slot] == 0 and job_done[slot] < due:
            due = job_done[slot]
        if in_order:
            break
    if ks[O_LEN] > 0 and o_leave[ks[O_HEAD]] < due:
        due = o_leave[ks[O_HEAD]]
    wake = NEVER if due == NEVER else max(due, c + 1)
    if arrived and qs[RQ_TAKEN] == c:
        return c + 1
    cap = len(rq_arr)
    for k in range(qs[RQ_LEN]):
        at = rq_arr[(qs[RQ_HEAD] + k) % cap]
        if at > c:
            return min(wake, at)
    return wake


@jit
def fill(c, kind, line, fill_data, geo, ks, tags, valid, data, mline, mcount, mtarg, job_ref, job_left, job_done,
         job_val, addr, size, write, value):  # pragma: no cover - compiled
    """A fill (or a write-back's acknowledgement) taken at cycle c: the waiting accesses are
    served at c + 1, in order."""
    if kind == KIND_WB:
        ks[UNACKED] -= 1
        return
    sets, ways, shift = geo[0], geo[1], geo[2]
    s = line % sets
    w = _find(tags, s, line, ways)
    for b in range(len(fill_data)):
        data[s, w, b] = fill_data[b]
    valid[s, w] = True
    m = 0
    while mline[m] != line:
        m += 1
    mask = (1 << shift) - 1
    for t in range(mcount[m]):
        slot = mtarg[m, t]
        i = job_ref[slot]
        inside = addr[i] & mask
        if write[i]:
            _write_bytes(data, s, w, inside, size[i], value[i])
        else:
            job_val[slot] = _read_bytes(data, s, w, inside, size[i])
        job_left[slot] -= 1
        if c + 1 > job_done[slot]:
            job_done[slot] = c + 1
    mline[m] = -1
    mcount[m] = 0
    _occupancy(ks, c, ks[NM] - 1)


@jit
def run(now, start, end, geo, cs, ks, qs, addr, size, write, gap, dep, value, check, answered,
        waiting, older, tags, age, dirty, valid, data, mline, mcount, mtarg, job_ref, job_left, job_done,
        job_val, job_free, jq, o_leave, o_kind, o_line, o_tag, o_data, o_at, rq_arr, rq_ref,
        rs_arr, rs_ref, rs_val, ms, mg, mem, req_ring, q_data, resp_ring, r_data, samples):  # pragma: no cover - compiled
    """Cycles start .. end - 1 (at most) of the phase in ``addr`` ..., the kernel being at
    cycle ``now``; returns (cycles run, exit reason). At the end of a phase that another
    follows (``cs[MORE]``) the core meets its barrier alone and the loop returns, for the
    driver to load the next phase. With ``mg[MG_ON]`` the ideal memory below is played here
    too (:mod:`.compiled_reference_memory`): lines go to it and fills come from it inside
    the loop, and nothing leaves the pair."""
    sets, ways, shift, hit_latency, mshrs, targets, write_buffer, queue = geo[0], geo[1], geo[2], geo[3], geo[4], \
        geo[5], geo[6], geo[7]
    srrip, touch_writes, in_order, window, rq_lat, rq_cap, rs_lat, rs_cap = geo[8] == 1, geo[9] == 1, geo[10] == 1, \
        geo[11], geo[12], geo[13], geo[14], geo[15]
    check_reads, barrier_latency = geo[16] == 1, geo[17]
    round_trip, ahead = geo[G_ROUND_TRIP], geo[G_AHEAD] == 1
    n = len(addr)
    line_bytes = 1 << shift
    mask = line_bytes - 1
    out_cap = len(o_leave)
    own_memory = mg[MG_ON] == 1
    cs[SCAN] = 1  # (the driver may have changed anything between calls)
    c = start
    while c < end:
        if c >= ks[CAP]:
            return c - start, EXIT_ANSWER  # an answer to a line sent in this batch may arrive now
        if own_memory:
            if ms[N_SAMPLES] == len(samples):
                return c - start, EXIT_SAMPLES
        elif ks[O_LEN] > 0 and o_leave[ks[O_HEAD]] <= c:
            # the line at the head leaves now, if the channel is ready for it (see above)
            if ks[BUDGET] > 0 and (ahead or c == now):
                h = ks[O_HEAD]
                o_at[h] = c
                ks[O_HEAD] = (h + 1) % out_cap
                ks[O_LEN] -= 1
                ks[O_OUT] += 1
                ks[BUDGET] -= 1
                if c + round_trip < ks[CAP]:
                    ks[CAP] = c + round_trip
            elif c > now:
                return c - start, EXIT_SEND
        if c > now:
            # cycles after the first must not touch the outside: stop before one that would
            if not cs[MORE] and cs[ANSWERED] == n - 1 and qs[RS_LEN] > 0 and rs_arr[qs[RS_HEAD]] <= c:
                return c - start, EXIT_FINISH
            if n == 0 and not cs[MORE] and c >= cs[EARLIEST]:
                return c - start, EXIT_FINISH  # an empty last phase ends at the release
        if own_memory:
            # the memory inside: the cache's line out, the memory's edge, the fill the cache
            # takes first at its tick (the arrival woke it)
            h = ks[O_HEAD]
            if ks[O_LEN] > 0 and o_leave[h] <= c and send_line(c, ms, mg, o_kind[h], o_line[h], o_leave[h],
                                                                o_data[h], req_ring, q_data):
                ks[O_HEAD] = (h + 1) % out_cap
                ks[O_LEN] -= 1
            if not memory_step(c, shift, ms, mg, mem, req_ring, q_data, resp_ring, r_data):
                return c - start, EXIT_OUTSIDE
            k = response_arrived(c, ms, resp_ring)
            if k >= 0:
                if resp_ring[k, R_KIND] == KIND_FILL:
                    samples[ms[N_SAMPLES]] = c - resp_ring[k, R_LEAVE]
                    ms[N_SAMPLES] += 1
                fill(c, resp_ring[k, R_KIND], resp_ring[k, R_LINE], r_data[k], geo, ks, tags, valid, data, mline,
                     mcount, mtarg, job_ref, job_left, job_done, job_val, addr, size, write, value)
                response_taken(ms, resp_ring)
                if ks[WAKE] > c:
                    ks[WAKE] = c
        # ---- the cache: take a request, access it
        ticking = ks[WAKE] <= c
        again = False
        if ks[CUR] < 0 and qs[RQ_LEN] > 0 and rq_arr[qs[RQ_HEAD]] <= c and ks[JN] < queue:
            i = rq_ref[qs[RQ_HEAD]]
            qs[RQ_HEAD] = (qs[RQ_HEAD] + 1) % rq_cap
            qs[RQ_LEN] -= 1
            qs[RQ_TAKEN] = c
            slot = job_free[queue - 1 - ks[JN]]
            job_ref[slot] = i
            job_left[slot] = 1
            job_done[slot] = 0
            jq[ks[JN]] = slot
            ks[JN] += 1
            ks[CUR] = slot
        slot = ks[CUR]
        if slot >= 0:
            i = job_ref[slot]
            line = addr[i] >> shift
            s = line % sets
            wr = write[i]
            inside = addr[i] & mask
            m = -1
            for k in range(mshrs):
                if mline[k] == line:
                    m = k
                    break
            w = _find(tags, s, line, ways)
            if m >= 0:
                if mcount[m] >= targets:
                    ks[MSHR_STALLS] += ticking
                else:
                    ks[ACCESSES] += 1
                    ks[DELAYED] += 1
                    if touch_writes or not wr:
                        _touch(age, ks, s, w, srrip)
                    if wr:
                        dirty[s, w] = True
                    mtarg[m, mcount[m]] = slot
                    mcount[m] += 1
                    ks[CUR] = -1
                    again = True
            elif w >= 0:
                ks[ACCESSES] += 1
                ks[HITS] += 1
                if touch_writes or not wr:
                    _touch(age, ks, s, w, srrip)
                if wr:
                    _write_bytes(data, s, w, inside, size[i], value[i])
                    dirty[s, w] = True
                else:
                    job_val[slot] = _read_bytes(data, s, w, inside, size[i])
                job_left[slot] = 0
                job_done[slot] = c + hit_latency
                ks[CUR] = -1
                again = True
            else:
                room = ks[NM] < mshrs
                v = -1
                if room:
                    v = _victim(tags, age, s, ways, srrip)
                    if v >= 0:
                        vline = tags[s, v]
                        for k in range(mshrs):
                            if mline[k] == vline:
                                room = False
                        if dirty[s, v] and ks[UNACKED] >= write_buffer:
                            room = False
                if not room:
                    ks[MSHR_STALLS] += ticking
                else:
                    if v >= 0:
                        if dirty[s, v]:
                            k = _push_out(ks, o_leave, o_kind, o_line, o_tag, c + hit_latency, KIND_WB, tags[s, v])
                            for b in range(line_bytes):
                                o_data[k, b] = data[s, v, b]
                            ks[UNACKED] += 1
                            ks[WRITEBACKS] += 1
                            ks[BYTES_WRITTEN] += line_bytes
                        w = v
                    else:
                        w = 0
                        while tags[s, w] != -1:
                            w += 1
                    tags[s, w] = line
                    dirty[s, w] = wr
                    valid[s, w] = False
                    if srrip:
                        age[s, w] = RRPV_INSERT
                    else:
                        ks[LRU_CLOCK] += 1
                        age[s, w] = ks[LRU_CLOCK]
                    ks[ACCESSES] += 1
                    ks[MISSES] += 1
                    m = 0
                    while mline[m] != -1:
                        m += 1
                    mline[m] = line
                    mtarg[m, 0] = slot
                    mcount[m] = 1
                    _push_out(ks, o_leave, o_kind, o_line, o_tag, c + hit_latency, KIND_FILL, line)
                    ks[BYTES_READ] += line_bytes
                    _occupancy(ks, c, ks[NM] + 1)
                    ks[CUR] = -1
                    again = True
        # ---- the cache: one answer
        for k in range(ks[JN]):
            slot = jq[k]
            if job_left[slot] == 0 and job_done[slot] <= c:
                taken = 1 if qs[RS_TAKEN] == c else 0
                if rs_cap - qs[RS_LEN] - taken > 0:
                    r = (qs[RS_HEAD] + qs[RS_LEN]) % rs_cap
                    rs_arr[r] = c + rs_lat
                    rs_ref[r] = job_ref[slot]
                    rs_val[r] = job_val[slot]
                    qs[RS_LEN] += 1
                    ks[RS_BLOCKED] = 0
                    for j in range(k, ks[JN] - 1):
                        jq[j] = jq[j + 1]
                    ks[JN] -= 1
                    job_free[queue - 1 - ks[JN]] = slot
                else:
                    ks[RS_BLOCKED] = 1
                break
            if in_order:
                break
        # (the line leaving at this cycle, if any, left at its start: see above)
        if ticking:
            ks[WAKE] = c + 1 if again else _rest(c, ks, qs, rq_arr, job_left, job_done, jq, o_leave, queue,
                                                 in_order)
        ks[MEM_WAITING] = 0  # (only the first cycle can see one: a batch ends before any arrival)
        # ---- the core: one answer
        if qs[RS_LEN] > 0 and rs_arr[qs[RS_HEAD]] <= c:
            h = qs[RS_HEAD]
            i = rs_ref[h]
            got = rs_val[h]
            qs[RS_HEAD] = (h + 1) % rs_cap
            qs[RS_LEN] -= 1
            qs[RS_TAKEN] = c
            if ks[RS_BLOCKED] and ks[WAKE] > c + 1:
                ks[WAKE] = c + 1  # the credit the cache waited for wakes it
            if check_reads and not write[i] and check[i]:
                want = value[i]
                if size[i] < 8:
                    want &= (np.uint64(1) << np.uint64(8 * size[i])) - np.uint64(1)
                if got != want:
                    cs[BAD] = i
                    return c - start + 1, EXIT_BAD
            answered[i] = 1
            cs[ANSWERED] += 1
            cs[SCAN] = 1
            while cs[RETIRED] < n and answered[cs[RETIRED]]:
                cs[RETIRED] += 1
            if cs[RETIRED] == n and not cs[MORE]:
                cs[DONE] = c
                return c - start + 1, EXIT_DONE
        # ---- the core: one entry (or the barrier at a phase's end)
        if n == 0 and c >= cs[EARLIEST]:
            # an empty phase: the core, asleep since the release, ticks then
            if not cs[MORE]:
                cs[DONE] = c
                return c - start + 1, EXIT_DONE
        i = cs[ENTERED]
        if cs[MORE] and i == n and (n > 0 or c >= cs[EARLIEST]):
            if cs[RETIRED] == i:
                # one core alone at its barrier: released barrier_latency cycles later, into
                # the next phase (nothing else happens in the core this cycle)
                cs[BARRIER_CYCLES] += barrier_latency
                if c + barrier_latency > cs[EARLIEST]:
                    cs[EARLIEST] = c + barrier_latency
                return c - start + 1, EXIT_PHASE
        elif i < n and c >= cs[EARLIEST]:
            if i - cs[RETIRED] >= window:
                if cs[WIN_SINCE] < 0:
                    cs[WIN_SINCE] = c
            else:
                if cs[WIN_SINCE] >= 0:
                    cs[WIN_STALLS] += c - cs[WIN_SINCE]
                    cs[WIN_SINCE] = -1
                waiting[cs[NWAIT]] = i
                cs[NWAIT] += 1
                cs[SCAN] = 1
                cs[ENTERED] = i + 1
                cs[LAST_ENTRY] = c
                if i + 1 < n:
                    cs[COMPUTE] += gap[i + 1]
                    cs[EARLIEST] = c + 1 + gap[i + 1]
        # ---- the core: issue the oldest reference whose address is known
        issued = False
        nold = 0
        for k in range(cs[NWAIT] if cs[SCAN] else 0):
            i = waiting[k]
            first = addr[i] >> 3
            last = (addr[i] + size[i] - 1) >> 3
            clash = False
            for j in range(nold):
                if older[j] == first or older[j] == last:
                    clash = True
                    break
            if clash or (dep[i] > 0 and not answered[i - dep[i]]):
                older[nold] = first
                older[nold + 1] = last
                nold += 2
                continue
            taken = 1 if qs[RQ_TAKEN] == c else 0
            if rq_cap - qs[RQ_LEN] - taken <= 0:
                break
            r = (qs[RQ_HEAD] + qs[RQ_LEN]) % rq_cap
            rq_arr[r] = c + rq_lat
            rq_ref[r] = i
            qs[RQ_LEN] += 1
            if c + rq_lat < ks[WAKE]:
                ks[WAKE] = c + rq_lat  # the request's arrival wakes the cache
            for j in range(k, cs[NWAIT] - 1):
                waiting[j] = waiting[j + 1]
            cs[NWAIT] -= 1
            if cs[DEP_SINCE] >= 0:
                cs[DEP_STALLS] += c - cs[DEP_SINCE]
                cs[DEP_SINCE] = -1
            cs[REFS] += 1
            if write[i]:
                cs[WRITES] += 1
            else:
                cs[READS] += 1
            issued = True
            break
        else:
            cs[SCAN] = 0  # every waiting reference waits for an answer or an entry (see SCAN)
        if not issued and cs[NWAIT] > 0 and cs[DEP_SINCE] < 0:
            if not (qs[RS_LEN] > 0 and rs_arr[qs[RS_HEAD]] <= c):
                cs[DEP_SINCE] = c
        after = _quiet_until(c, n, window, cs, ks, qs, job_left, jq)
        if own_memory and after > c + 1:
            soonest = next_event(c, ms, req_ring, resp_ring)
            if soonest < after:
                after = soonest
        if after > c + 1:
            # nothing inside can change before ``after`` (NEVER: before a fill arrives): skip
            if after >= end or after >= ks[CAP]:
                cs[QUIET_UNTIL] = after
                return c - start + 1, EXIT_QUIET
            c = after
        else:
            c += 1
    return c - start, EXIT_END


@jit
def _quiet_until(c, n, window, cs, ks, qs, job_left, jq):  # pragma: no cover - compiled
    """After cycle c: the next cycle at which anything can happen inside the pair without a
    fill or acknowledgement from below (c + 1 when something may happen at once; NEVER when
    only the memory below can start it). Quiet means no request or answer between the two,
    no answer due, no line to send, a stalled access (if any) that the cache will not retry
    at c + 1, and a core that issued nothing and can only enter its next reference, or
    begin to stall for it, at a known cycle."""
    if qs[RQ_LEN] or qs[RS_LEN] or ks[O_LEN] or qs[RQ_TAKEN] == c or ks[MEM_WAITING]:
        return c + 1
    if ks[CUR] >= 0 and ks[WAKE] <= c + 1:
        return c + 1
    for k in range(ks[JN]):
        if job_left[jq[k]] == 0:
            return c + 1
    e = cs[ENTERED]
    if n == 0 or (e < n and (e - cs[RETIRED] < window or cs[WIN_SINCE] < 0)):
        return max(cs[EARLIEST], c + 1)
    return NEVER
