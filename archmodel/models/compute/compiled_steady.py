"""The cluster's steady state, stepped by one compiled function.

When every running core of a cluster is a parked core replaying an FREP through its fused
replay steps (see ``SnitchCore._install_replay_step``) and the DMA is idle, each cycle is
the same few things: every core replays one body instruction (or counts why it cannot),
its streamers ask for TCDM words, and the TCDM grants one request per bank round robin.
:func:`run_steady` hands that state to :func:`_steady_cycles` (numba, over int64/float64
arrays), which runs those cycles until a core's FREP ends, a stream job ends, a stream
register would fault, or the cluster must report progress to the watchdog; then it writes
every touched value back, so the Python model continues exactly as if it had stepped the
cycles itself (the cross-check in tests/models/compute/test_compiled_steady.py compares
cycles, counters, registers, FIFOs and memory with the path on and off).

Leaves to Python: everything else (a core outside fused replay, the DMA, faults, tracing).
A batch ends before the cluster's next progress report and at the current run's time limit
(``Simulator.limit_ps``), so a run in slices sees the state of its last edge.
"""

from __future__ import annotations

import numpy as np

from .assembler import F_COMP

_OPS = {"fmadd.d": 0, "fmsub.d": 1, "fnmadd.d": 2, "fnmsub.d": 3, "fadd.d": 4, "fsub.d": 5, "fmul.d": 6}

# per core: int64 state row
C_POS, C_IT, C_REPS, C_N, C_COPIES, C_PENDING, C_FPU, C_FLOPS, C_STREAM, C_FDEP, C_OFFLOAD, C_DONE = range(12)
C_WIDTH = 12
# per body instruction: int64 fields
B_OP, B_NSRC, B_S0, B_S1, B_S2, B_R0, B_R1, B_R2, B_TGT, B_RD, B_LAT, B_FLOPS = range(12)
B_WIDTH = 12
# per streamer (global index core * 3 + i): int64 state row
(S_WRITES, S_DEPTH, S_RID, S_ADDR, S_RUN, S_RUNLEN, S_LEFT, S_USES, S_HEAD, S_COUNT, S_ENDED,
 S_IDX, S_BOUNDS, S_ADJ) = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 15, 19)
S_WIDTH = 23


def _steady_cycles(start, end, latency, nbanks, base, nrequesters, cs, body, f, f_ready, ss, active, fq_ready,
                   fq_val, fq_uses, req, nreq, words, rr, per_bank, totals, reqbuf, bankbuf, owner):
    """Run cycles start .. end-1 (fewer if something needs Python); returns the count run."""
    ncores = cs.shape[0]
    depth_cap = fq_ready.shape[1]
    cycle = start
    while cycle < end:
        # A stream register read with no data and no job faults: Python runs that cycle.
        for c in range(ncores):
            b = body[c, cs[c, C_IT] % cs[c, C_COPIES], cs[c, C_POS]]
            for j in range(b[B_NSRC]):
                s = b[B_S0 + j]
                if s >= 0:
                    g = c * 3 + s
                    if ss[g, S_COUNT] == 0 and active[g] == 0:
                        return cycle - start
        stop = False
        nr = 0
        for c in range(ncores):
            b = body[c, cs[c, C_IT] % cs[c, C_COPIES], cs[c, C_POS]]
            stalled = False
            for j in range(b[B_NSRC]):
                s = b[B_S0 + j]
                if s >= 0:
                    g = c * 3 + s
                    if ss[g, S_COUNT] == 0 or fq_ready[g, ss[g, S_HEAD]] > cycle:
                        cs[c, C_STREAM] += 1
                        stalled = True
                        break
                elif f_ready[c, b[B_R0 + j]] > cycle:
                    cs[c, C_FDEP] += 1
                    stalled = True
                    break
            if not stalled:
                t = b[B_TGT]
                if t >= 0:
                    g = c * 3 + t
                    if ss[g, S_COUNT] >= ss[g, S_DEPTH]:
                        cs[c, C_STREAM] += 1
                        stalled = True
                elif f_ready[c, b[B_RD]] > cycle:
                    cs[c, C_FDEP] += 1
                    stalled = True
            if not stalled:
                v0 = 0.0
                v1 = 0.0
                v2 = 0.0
                for j in range(b[B_NSRC]):
                    s = b[B_S0 + j]
                    if s >= 0:
                        g = c * 3 + s
                        h = ss[g, S_HEAD]
                        v = fq_val[g, h]
                        if fq_uses[g, h] == 1:
                            ss[g, S_HEAD] = (h + 1) % depth_cap
                            ss[g, S_COUNT] -= 1
                        else:
                            fq_uses[g, h] -= 1
                    else:
                        v = f[c, b[B_R0 + j]]
                    if j == 0:
                        v0 = v
                    elif j == 1:
                        v1 = v
                    else:
                        v2 = v
                op = b[B_OP]
                if op == 0:
                    result = v0 * v1 + v2
                elif op == 1:
                    result = v0 * v1 - v2
                elif op == 2:
                    result = -(v0 * v1) - v2
                elif op == 3:
                    result = -(v0 * v1) + v2
                elif op == 4:
                    result = v0 + v1
                elif op == 5:
                    result = v0 - v1
                else:
                    result = v0 * v1
                done = cycle + b[B_LAT]
                t = b[B_TGT]
                if t >= 0:
                    g = c * 3 + t
                    k = (ss[g, S_HEAD] + ss[g, S_COUNT]) % depth_cap
                    fq_ready[g, k] = done
                    fq_val[g, k] = result
                    fq_uses[g, k] = -1  # an FP result: [done, value]
                    ss[g, S_COUNT] += 1
                else:
                    f[c, b[B_RD]] = result
                    f_ready[c, b[B_RD]] = done
                if done > cs[c, C_PENDING]:
                    cs[c, C_PENDING] = done
                cs[c, C_FPU] += 1
                cs[c, C_FLOPS] += b[B_FLOPS]
                if cs[c, C_POS] == cs[c, C_N] - 1:
                    cs[c, C_POS] = 0
                    cs[c, C_IT] += 1
                    if cs[c, C_IT] == cs[c, C_REPS]:
                        cs[c, C_DONE] = 1
                        stop = True
                else:
                    cs[c, C_POS] += 1
            cs[c, C_OFFLOAD] += 1
            for q in range(nreq[c]):
                g = req[c, q]
                if ss[g, S_WRITES] != 0:
                    if ss[g, S_COUNT] > 0 and fq_ready[g, ss[g, S_HEAD]] <= cycle:
                        reqbuf[nr] = g
                        nr += 1
                elif ss[g, S_COUNT] < ss[g, S_DEPTH]:
                    reqbuf[nr] = g
                    nr += 1
        # TCDM arbitration: per bank, the requester nearest after the bank's last grant.
        for i in range(nr):
            bankbuf[i] = ((ss[reqbuf[i], S_ADDR] - base) >> 3) % nbanks
        for i in range(nr):
            bank = bankbuf[i]
            g = reqbuf[i]
            holder = owner[bank]
            if holder < 0:
                owner[bank] = g
            else:
                last = rr[bank]
                mine = ((ss[g, S_RID] - last - 1) % nrequesters + nrequesters) % nrequesters
                theirs = ((ss[holder, S_RID] - last - 1) % nrequesters + nrequesters) % nrequesters
                if mine < theirs:
                    owner[bank] = g
                totals[1] += 1
                per_bank[bank] += 1
        ready = cycle + latency
        for i in range(nr):
            bank = bankbuf[i]
            g = owner[bank]
            if g < 0:
                continue  # this bank's grant is already done
            owner[bank] = -1
            totals[0] += 1
            rr[bank] = ss[g, S_RID]
            word = (ss[g, S_ADDR] - base) >> 3
            if ss[g, S_WRITES] != 0:
                h = ss[g, S_HEAD]
                words[word] = fq_val[g, h]
                ss[g, S_HEAD] = (h + 1) % depth_cap
                ss[g, S_COUNT] -= 1
            else:
                k = (ss[g, S_HEAD] + ss[g, S_COUNT]) % depth_cap
                fq_ready[g, k] = ready
                fq_val[g, k] = words[word]
                fq_uses[g, k] = ss[g, S_USES]
                ss[g, S_COUNT] += 1
            if ss[g, S_RUN] > 0:
                ss[g, S_RUN] -= 1
                ss[g, S_ADDR] += ss[g, S_ADJ]
            else:
                # SsrStreamer._advance; the job's end is left to Python (_next_job)
                run_len = ss[g, S_RUNLEN]
                ss[g, S_IDX] += run_len
                left = ss[g, S_LEFT] - run_len - 1
                ss[g, S_LEFT] = left
                if left == 0:
                    ss[g, S_ENDED] = 1
                    stop = True
                    continue
                if ss[g, S_IDX] < ss[g, S_BOUNDS]:
                    ss[g, S_IDX] += 1
                    ss[g, S_ADDR] += ss[g, S_ADJ]
                else:
                    k = 1
                    while True:
                        ss[g, S_IDX + k - 1] = 0
                        if ss[g, S_IDX + k] < ss[g, S_BOUNDS + k]:
                            ss[g, S_IDX + k] += 1
                            ss[g, S_ADDR] += ss[g, S_ADJ + k]
                            break
                        k += 1
                run = ss[g, S_BOUNDS] - ss[g, S_IDX]
                if run >= left:
                    run = left - 1
                ss[g, S_RUN] = run
                ss[g, S_RUNLEN] = run
        cycle += 1
        if stop:
            break
    return cycle - start


def _steady_table(core):
    """The current fused step table of ``core`` and its key, or None."""
    key = (tuple((ins.index, ins.rd, ins.rs1, ins.rs2, ins.rs3) for copies in core.seq_body for ins in copies),
           core.seq_smax, core.ssr_on, tuple((s.index, s.job_writes) for s in core.streaming),
           tuple(s.writes for s in core.ssrs))
    table = core.replay_steps.get(key)
    return (key, table) if table else None


def _body_array(core, key):
    """The FREP body of ``core`` as int64 fields (cached per fused step table); None when an
    instruction's operation is not one the compiled function computes."""
    cache = core.__dict__.setdefault("_steady_bodies", {})
    if key in cache:
        return cache[key]
    copies = core.seq_smax + 1
    n = core.seq_n
    arr = np.zeros((copies, n, B_WIDTH), np.int64)
    for k in range(copies):
        for pos in range(n):
            ins = core.seq_body[pos][k]
            op = _OPS.get(ins.op)
            if op is None or ins.fkind != F_COMP or len(ins.fsrc) > 3:
                cache[key] = None
                return None
            streams = core.ssr_on and ins.ssr_path
            row = arr[k, pos]
            row[B_OP] = op
            row[B_NSRC] = len(ins.fsrc)
            for j, r in enumerate(ins.fsrc):
                row[B_S0 + j] = r if streams and r < 3 else -1
                row[B_R0 + j] = r
            row[B_TGT] = ins.rd if streams and ins.rd < 3 else -1
            row[B_RD] = ins.rd
            row[B_LAT] = ins.latency
            row[B_FLOPS] = ins.flops
    cache[key] = arr
    return arr


def _fused_entry(core):
    """(step table, body array, FP registers the body writes) of the fused step ``core`` is
    on, or None when the compiled function cannot run its body; cached per step function."""
    step = core.__dict__["step"]
    cache = core.__dict__.setdefault("_steady_of", {})
    if step in cache:
        return cache[step]
    if len(cache) > 4096:  # tables of bodies long gone (replay_steps was cleared)
        cache.clear()
    found = _steady_table(core)
    if found is None:
        return None
    key, table = found
    arr = _body_array(core, key)
    entry = None
    if arr is not None:
        written = sorted({int(r) for r in arr[..., B_RD][arr[..., B_TGT] < 0].ravel()})
        entry = (table, arr, written)
    for row in table:
        for fn in row:
            cache[fn] = entry
    return entry


_COMPILED = None


def _compiled_steady_cycles():
    """``_steady_cycles`` compiled by numba (imported on first use; cached on disk)."""
    global _COMPILED
    if _COMPILED is None:
        from numba import njit
        _COMPILED = njit(cache=True, nogil=True, _nrt=False)(_steady_cycles)
    return _COMPILED


def run_steady(cluster, cycle: int) -> bool:
    """Run the cluster's steady cycles from ``cycle`` compiled when it is in that state; True
    when at least one cycle ran (the cluster then sleeps until the next one)."""
    running = cluster.running
    end = cluster.check_at
    limit = cluster.sim.limit_ps
    if limit is not None:
        end = min(end, cluster.domain.cycle_of(limit) + 1)  # the run's last edge is cycle_of(limit)
    if not running or cycle >= end:
        return False
    for core in running:
        if "step" not in core.__dict__:
            return False
    entries = []
    for core in running:
        entry = _fused_entry(core)
        if entry is None:
            return False
        entries.append(entry)
    ncores = len(running)
    arrays = [e[1] for e in entries]
    shape = arrays[0].shape
    if all(a.shape == shape for a in arrays):
        body = np.stack(arrays)
    else:
        body = np.zeros((ncores, max(a.shape[0] for a in arrays), max(a.shape[1] for a in arrays), B_WIDTH),
                        np.int64)
        for c, arr in enumerate(arrays):
            body[c, :arr.shape[0], :arr.shape[1]] = arr
    cs = np.array([[core.seq_pos, core.seq_it, core.seq_reps, core.seq_n, core.seq_smax + 1, core.fp_pending_until,
                    core.n_fpu, core.n_flops, core.s_stream, core.s_fdep, core.s_offload, 0] for core in running],
                  np.int64)
    f = np.array([core.f for core in running], np.float64)
    f_ready = np.array([core.f_ready for core in running], np.int64)
    depth = max(s.depth for core in running for s in core.ssrs)
    ssrs = [s for core in running for s in core.ssrs]
    ss = np.array([[s.job_writes, s.depth, s.rid, s.addr, s.run, s.run_len, s.left, s.uses, 0, len(s.fifo), 0]
                   + s.idx + s.bounds + s.adj for s in ssrs], np.int64)
    active = np.array([s.active for s in ssrs], np.int64)
    pad = [0] * depth
    fq_ready = np.array([([e[0] for e in s.fifo] + pad)[:depth] for s in ssrs], np.int64)
    fq_val = np.array([([e[1] for e in s.fifo] + pad)[:depth] for s in ssrs], np.float64)
    fq_uses = np.array([([e[2] if len(e) > 2 else -1 for e in s.fifo] + pad)[:depth] for s in ssrs], np.int64)
    req = np.array([[3 * c + st.index for st in core.streaming] + [0] * (3 - len(core.streaming))
                    for c, core in enumerate(running)], np.int64)
    nreq = np.array([len(core.streaming) for core in running], np.int64)
    tcdm = cluster.tcdm
    work = cluster.__dict__.get("_steady_work")
    if work is None or work[0].shape[0] < 3 * ncores:
        ns = 3 * len(cluster.core_list)
        work = cluster._steady_work = (np.frombuffer(tcdm.data, np.float64), np.zeros(ns, np.int64),
                                       np.zeros(ns, np.int64), np.full(tcdm.banks, -1, np.int64))
    words, reqbuf, bankbuf, owner = work
    rr = np.array(tcdm.rr, np.int64)
    per_bank = np.array(tcdm.conflicts_per_bank, np.int64)
    totals = np.array([tcdm.n_grants, tcdm.n_conflicts], np.int64)
    steady_cycles = _compiled_steady_cycles()
    ran = steady_cycles(cycle, end, tcdm.latency_cycles, tcdm.banks, tcdm.base_address, tcdm.requesters, cs, body,
                         f, f_ready, ss, active, fq_ready, fq_val, fq_uses, req, nreq, words, rr, per_bank, totals,
                         reqbuf, bankbuf, owner)
    if ran == 0:
        return False
    tcdm.rr[:] = rr.tolist()
    tcdm.conflicts_per_bank[:] = per_bank.tolist()
    tcdm.n_grants, tcdm.n_conflicts = int(totals[0]), int(totals[1])
    ended = []
    rows, values, readiness = cs.tolist(), f.tolist(), f_ready.tolist()
    states, ready_at, data, uses_left = ss.tolist(), fq_ready.tolist(), fq_val.tolist(), fq_uses.tolist()
    for c, core in enumerate(running):
        row = rows[c]
        core.seq_pos, core.seq_it = row[C_POS], row[C_IT]
        core.fp_pending_until = row[C_PENDING]
        core.n_fpu, core.n_flops = row[C_FPU], row[C_FLOPS]
        core.s_stream, core.s_fdep, core.s_offload = row[C_STREAM], row[C_FDEP], row[C_OFFLOAD]
        table, _, written = entries[c]
        fc, rc = values[c], readiness[c]
        for r in written:  # only the body's register results (others keep their Python type)
            core.f[r] = fc[r]
            core.f_ready[r] = rc[r]
        if row[C_DONE]:
            core.seq_on = False
            core.leave_replay_step()
        else:
            core.step = table[core.seq_it % (core.seq_smax + 1)][core.seq_pos]
        for i, s in enumerate(core.ssrs):
            g = 3 * c + i
            st = states[g]
            s.addr, s.run, s.run_len, s.left = st[S_ADDR], st[S_RUN], st[S_RUNLEN], st[S_LEFT]
            s.idx[:] = st[S_IDX:S_IDX + 4]
            head, count = st[S_HEAD], st[S_COUNT]
            fifo = s.fifo
            fifo.clear()
            at_g, val_g, uses_g = ready_at[g], data[g], uses_left[g]
            for k in range(count):
                at = (head + k) % depth
                uses = uses_g[at]
                if uses < 0:
                    fifo.append([at_g[at], val_g[at]])
                else:
                    fifo.append([at_g[at], val_g[at], uses])
            if st[S_ENDED]:
                ended.append(s)
    for s in ended:
        s._next_job()
    cluster.n_steady_cycles = getattr(cluster, "n_steady_cycles", 0) + ran  # tests check the path is taken
    cluster.n_steady_batches = getattr(cluster, "n_steady_batches", 0) + 1
    cluster.sleep_for(ran)
    return True
