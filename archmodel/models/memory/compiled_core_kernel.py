"""The numba functions of :mod:`.compiled_core` (compiled on the first call of :func:`run`,
see :mod:`archmodel.kernel.compiled`). Each mirrors the DramController method named in its
docstring; the state layout (indices into the ``st`` and ``cf`` arrays) is
:mod:`.compiled_core_layout`."""

from archmodel.kernel.compiled import jit

from .commands import ACT, COMMAND_COUNT, PRE, PREA, RD, REF, REFPB, WR
from .compiled_core_refresh import start_refresh
from .compiled_core_layout import (C_REFPB_SETS, C_TREFIPB, REFPB_RANKS, REFPB_SET, REFPBS, C_BA, C_BA_MASK, C_BURST, C_BG, C_BG_MASK, C_CO, C_CO_MASK, C_GROUPS,
                                   C_PER_GROUP, C_RA, C_RA_MASK, C_RO, C_RO_MASK, ENTERING, FEED_CYCLE, FEED_N,
                                   FEED_OFFSET, FEED_SIZE, FEED_SLOT, FEED_WRITE,
                                   ACTIVE_CYCLES, ACTIVE_SINCE, ACTS, BEST_B, BEST_E, BEST_K, BEST_SEQ, BEST_T,
                                   BUF_LEN, BYTES_READ, BYTES_WRITTEN, C_BANKS, C_BANKS_PER_RANK, C_CAP,
                                   C_CL, C_CWL, C_FAW, C_FCFS, C_FORWARD, C_HIGH, C_LOW, C_PERIOD, C_PHASE, C_RANKS,
                                   C_PORTS, C_RQ_CAP, C_TBL, C_TREFI, C_WATCH_DONE, C_WQ_CAP, CONFLICTS, DIRTY,
                                   DONE, EXHAUSTED, FORWARDED, FREE_TOP, HAS_BEST, HEAD, HELD_GO, HELD_STOP, HITS, JOB_DONE,
                                   MISSES, N_CMD, N_DONE,
                                   N_RSAMPLE, N_WSAMPLE, OPEN_BANKS, OUT_C, OUT_PHASE, OUT_WAKE, POS, PREAS, PRES,
                                   RDS, READS, REF_DUE, REF_PENDING, REFS, RL_VALUE, RQC, SEQ, STOP_NOW, UNDERRUN,
                                   WL_VALUE, WMODE, WQC, WRITES, WRS, _CONFLICT_KIND, _HIT_KIND, _MISS_KIND, _NEVER)


@jit
def level_set(st, base, value, at):
    """Level.set(value, at_ps=at) on the level whose (value, maximum, area, since) start at st[base]."""
    st[base + 2] += st[base] * (at - st[base + 3])
    st[base + 3] = at
    st[base] = value
    if value > st[base + 1]:
        st[base + 1] = value


@jit
def complete(st, job_left, done_log, j, at):
    """SplitsRequests' ResponseOrder.piece_done, kept in the arrays: a burst of the request
    in job slot j finishes at cycle ``at`` (job_left[j]: its bursts still to finish and the
    cycle the last finished one did); once its last burst has, the request is recorded
    (slot, that cycle) and JOB_DONE is set. One record per request, not per burst: its
    bursts are the controller's to count only through the arrays (see
    SchedulesAhead._job_progress)."""
    job_left[j, 0] -= 1
    if at > job_left[j, 1]:
        job_left[j, 1] = at
    if job_left[j, 0] == 0:
        n = st[N_DONE]
        done_log[n, 0] = j
        done_log[n, 1] = job_left[j, 1]
        st[N_DONE] = n + 1
        st[JOB_DONE] = 1


@jit
def expand(st, cf, s_cycle, s_bank, s_row, s_col, s_burst, s_write, s_size, s_job, job_left):
    """response_order.split and DramController._local_decode: the bursts of the request taken from
    req (st[FEED_*]) into the buffer, each with its bank, row, column, burst address and
    bytes, to enter the queues from its cycle on as SplitsRequests._enter puts them."""
    burst = cf[C_BURST]
    address = st[FEED_OFFSET]
    end = address + st[FEED_SIZE]
    i = 0
    while address < end:
        stop = (address | (burst - 1)) + 1
        if stop > end:
            stop = end
        s_cycle[i] = st[FEED_CYCLE]
        s_bank[i] = ((((address >> cf[C_RA]) & cf[C_RA_MASK]) * cf[C_GROUPS] + ((address >> cf[C_BG]) & cf[C_BG_MASK]))
                     * cf[C_PER_GROUP] + ((address >> cf[C_BA]) & cf[C_BA_MASK]))
        s_row[i] = (address >> cf[C_RO]) & cf[C_RO_MASK]
        s_col[i] = (address >> cf[C_CO]) & cf[C_CO_MASK]
        s_burst[i] = address - (address & (burst - 1))
        s_write[i] = st[FEED_WRITE]
        s_size[i] = stop - address
        s_job[i] = st[FEED_SLOT]
        address = stop
        i += 1
    job_left[st[FEED_SLOT], 0] = i
    job_left[st[FEED_SLOT], 1] = 0
    st[POS] = 0
    st[BUF_LEN] = i
    st[FEED_N] = 0


@jit
def candidate(st, cf, b, rows, hits_run, qids, qlen, e_row, opened):
    """DramController._refresh_bank: bank b's next command (k, entry), the RD or WR of the
    burst its row was activated for if any, else from its queue of the active mode; k = -1
    if there is none."""
    if opened[b, 0] >= 0:
        return opened[b, 1], opened[b, 0]
    ln = qlen[b]
    if ln == 0:
        return -1, -1
    write = st[WMODE] != 0
    row = rows[b]
    e = qids[b, 0]
    if row < 0:
        if refreshing(st, cf, b):
            return -1, -1  # (a closed bank of the due set waits for its REFpb)
        return ACT, e
    if e_row[e] == row:
        return (WR if write else RD), e
    if cf[C_FCFS]:
        return PRE, e
    for i in range(1, ln):
        x = qids[b, i]
        if e_row[x] == row:
            if hits_run[b] < cf[C_CAP]:
                return (WR if write else RD), x
            break
    return PRE, e


@jit
def set_best(st, t, seq, b, k, e):
    """The best command so far: command k on bank b for entry e (-1: none), ready at cycle t,
    of priority seq (the lowest goes first among equals)."""
    st[HAS_BEST] = 1
    st[BEST_T] = t
    st[BEST_SEQ] = seq
    st[BEST_B] = b
    st[BEST_K] = k
    st[BEST_E] = e


@jit
def refreshing(st, cf, b):
    """Bank b is in the bank set whose per-bank refresh is due, in a rank that has not had
    its REFpb yet (CommandScheduler._refpb_banks)."""
    return (st[REFPB_SET] >= 0 and b % cf[C_REFPB_SETS] == st[REFPB_SET]
            and (st[REFPB_RANKS] >> (b // cf[C_BANKS_PER_RANK])) & 1 != 0)


@jit
def refpb_candidate(st, cf, c, nxt, gbase, rbase, rows, opened):
    """DramController._refpb_candidate into st[BEST_*] if it is ready no later than the best
    so far (it wins ties): in the lowest rank still due, PRE the set's open banks, lowest
    first, then REFpb on the set's first bank there once all are closed; nothing while a
    bank of the set there waits for the burst its row was activated for."""
    sets = cf[C_REFPB_SETS]
    per_rank = cf[C_BANKS_PER_RANK]
    mask = st[REFPB_RANKS]
    rank = 0
    while not (mask >> rank) & 1:
        rank += 1
    first = -1
    k = REFPB
    b = st[REFPB_SET]
    while b < cf[C_BANKS]:
        if b // per_rank == rank:
            if first < 0:
                first = b
            if rows[b] >= 0 and opened[b, 0] < 0:
                k = PRE
                break
        b += sets
    if k == PRE:
        t = ready_at(nxt, gbase, rbase, b, PRE)
    else:
        t = 0
        b = first
        while b < cf[C_BANKS]:
            if b // per_rank == rank:
                if opened[b, 0] >= 0:
                    return
                v = ready_at(nxt, gbase, rbase, b, REFPB)
                if v > t:
                    t = v
            b += sets
        b = first
    if t < c:
        t = c
    if st[HAS_BEST] and t > st[BEST_T]:
        return
    set_best(st, t, -1, b, k, -1)


@jit
def ready_at(nxt, gbase, rbase, b, k):
    """DramController._ready: the cycle command k may issue on bank b."""
    t = nxt[b * COMMAND_COUNT + k]
    v = nxt[gbase[b] + k]
    if v > t:
        t = v
    v = nxt[rbase[b] + k]
    if v > t:
        t = v
    return t


@jit
def choose(st, cf, c, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len, e_row, e_seq,
           needs, opened):
    """DramController._choose, with _opened_candidate, _refresh_candidate and
    _refpb_candidate: the next command into st[BEST_*]."""
    st[DIRTY] = 0
    wq = st[WQC]
    rq = st[RQC]
    if st[WMODE]:
        if wq == 0 or (wq <= cf[C_LOW] and rq > 0):
            st[WMODE] = 0
    elif wq >= cf[C_HIGH] or (rq == 0 and wq > 0):
        st[WMODE] = 1
    st[HAS_BEST] = 0
    if st[WMODE]:
        qids, qlen = wq_ids, wq_len
    else:
        qids, qlen = rq_ids, rq_len
    if st[REF_PENDING]:
        # The bursts whose rows were activated for them go before the rank is precharged.
        scan(st, cf, c, nxt, gbase, rbase, rows, hits_run, qids, qlen, e_row, e_seq, opened, True)
        if st[HAS_BEST]:
            return
        per_rank = cf[C_BANKS_PER_RANK]
        for rank in range(cf[C_RANKS]):
            first = rank * per_rank
            any_open = False
            ready = ready_at(nxt, gbase, rbase, first, PREA)
            for b in range(first, first + per_rank):
                if rows[b] >= 0:
                    any_open = True
                    v = ready_at(nxt, gbase, rbase, b, PRE)
                    if v > ready:
                        ready = v
            if any_open:
                set_best(st, ready if ready > c else c, -1, first, PREA, -1)
                return
            if needs[rank]:
                ready = ready_at(nxt, gbase, rbase, first, REF)
                set_best(st, ready if ready > c else c, -1, first, REF, -1)
                return
        return
    if cf[C_FCFS]:
        best_seq = _NEVER
        best_b = -1
        for b in range(cf[C_BANKS]):
            if opened[b, 0] >= 0:
                key = e_seq[opened[b, 0]]
            elif qlen[b] and (rows[b] >= 0 or not refreshing(st, cf, b)):
                key = e_seq[qids[b, 0]]
            else:
                continue
            if key < best_seq:
                best_seq = key
                best_b = b
        if best_b >= 0:
            k, e = candidate(st, cf, best_b, rows, hits_run, qids, qlen, e_row, opened)
            t = ready_at(nxt, gbase, rbase, best_b, k)
            set_best(st, t if t > c else c, best_seq, best_b, k, e)
    else:
        scan(st, cf, c, nxt, gbase, rbase, rows, hits_run, qids, qlen, e_row, e_seq, opened, False)
    if st[REFPB_SET] >= 0:
        refpb_candidate(st, cf, c, nxt, gbase, rbase, rows, opened)


@jit
def scan(st, cf, c, nxt, gbase, rbase, rows, hits_run, qids, qlen, e_row, e_seq, opened, only_opened):
    """The FR-FCFS scan of DramController._choose (and _opened_candidate if only_opened): the
    earliest-ready bank candidate, oldest first among equals, into st[BEST_*]."""
    best_t = _NEVER
    best_seq = _NEVER
    for b in range(cf[C_BANKS]):
        if opened[b, 0] < 0 and (only_opened or qlen[b] == 0):
            continue
        k, e = candidate(st, cf, b, rows, hits_run, qids, qlen, e_row, opened)
        if k < 0:
            continue
        t = ready_at(nxt, gbase, rbase, b, k)
        if t < c:
            t = c
        seq = e_seq[e]
        if t < best_t or (t == best_t and seq < best_seq):
            best_t = t
            best_seq = seq
            set_best(st, t, seq, b, k, e)


@jit
def close(st, rows, b, c):
    """DramController._close."""
    rows[b] = -1
    st[OPEN_BANKS] -= 1
    if st[OPEN_BANKS] == 0:
        st[ACTIVE_CYCLES] += c - st[ACTIVE_SINCE]


@jit
def remove(qids, qlen, b, e):
    """Remove entry e from bank b's queue, keeping the order of the others."""
    ln = qlen[b]
    i = 0
    while qids[b, i] != e:
        i += 1
    while i < ln - 1:
        qids[b, i] = qids[b, i + 1]
        i += 1
    qlen[b] = ln - 1


@jit
def issue(st, cf, c, nxt, upd_ptr, upd_idx, upd_cyc, gbase, rbase, rank_of, rows, hits_run, faw, needs,
          rq_ids, rq_len, wq_ids, wq_len, e_seq, e_arr, e_row, e_col, e_kind, e_size, e_job, free, cmd_log,
          rsamples, wsamples, opened, job_left, done_log):
    """DramController._issue with _column: issue the best command at cycle c and record it
    (a read burst of a client request completes CL + tBL later)."""
    b = st[BEST_B]
    k = st[BEST_K]
    e = st[BEST_E]
    st[HAS_BEST] = 0
    st[DIRTY] = 1
    u = k * cf[C_BANKS] + b
    for j in range(upd_ptr[u], upd_ptr[u + 1]):
        v = c + upd_cyc[j]
        i = upd_idx[j]
        if nxt[i] < v:
            nxt[i] = v
    if k == RD or k == WR:
        kind = e_kind[e]
        if kind == 0:
            kind = _HIT_KIND
            e_kind[e] = kind
        if kind == _HIT_KIND:
            st[HITS] += 1
        elif kind == _MISS_KIND:
            st[MISSES] += 1
        else:
            st[CONFLICTS] += 1
        hits_run[b] += 1
        opened[b, 0] = -1
        at = cf[C_PHASE] + c * cf[C_PERIOD]
        if k == RD:
            remove(rq_ids, rq_len, b, e)
            st[RQC] -= 1
            level_set(st, RL_VALUE, st[RQC], at)
            st[RDS] += 1
            st[READS] += 1
            st[BYTES_READ] += e_size[e]
            rsamples[st[N_RSAMPLE]] = c + cf[C_CL] + cf[C_TBL] - e_arr[e]
            st[N_RSAMPLE] += 1
            if e_job[e] >= 0:
                complete(st, job_left, done_log, e_job[e], c + cf[C_CL] + cf[C_TBL])
        else:
            remove(wq_ids, wq_len, b, e)
            st[WQC] -= 1
            level_set(st, WL_VALUE, st[WQC], at)
            st[WRS] += 1
            st[WRITES] += 1
            st[BYTES_WRITTEN] += e_size[e]
            wsamples[st[N_WSAMPLE]] = c + cf[C_CWL] + cf[C_TBL] - e_arr[e]
            st[N_WSAMPLE] += 1
    elif k == ACT:
        st[ACTS] += 1
        if st[OPEN_BANKS] == 0:
            st[ACTIVE_SINCE] = c
        st[OPEN_BANKS] += 1
        rows[b] = e_row[e]
        hits_run[b] = 0
        # (an ACT is always for a burst of the queue being served)
        opened[b, 0] = e
        opened[b, 1] = WR if st[WMODE] else RD
        rank = rank_of[b]
        faw[rank, 0] = faw[rank, 1]
        faw[rank, 1] = faw[rank, 2]
        faw[rank, 2] = faw[rank, 3]
        faw[rank, 3] = c
        if cf[C_FAW]:
            i = rbase[b] + ACT
            v = faw[rank, 0] + cf[C_FAW]
            if nxt[i] < v:
                nxt[i] = v
        if e_kind[e] == 0:
            e_kind[e] = _MISS_KIND
    elif k == PRE:
        st[PRES] += 1
        close(st, rows, b, c)
        if e >= 0 and e_kind[e] == 0:
            e_kind[e] = _CONFLICT_KIND
    elif k == PREA:
        st[PREAS] += 1
        first = rank_of[b] * cf[C_BANKS_PER_RANK]
        for x in range(first, first + cf[C_BANKS_PER_RANK]):
            if rows[x] >= 0:
                close(st, rows, x, c)
    elif k == REF:
        st[REFS] += 1
        needs[rank_of[b]] = 0
        pending = False
        for r in range(cf[C_RANKS]):
            if needs[r]:
                pending = True
        if not pending:
            st[REF_PENDING] = 0
            st[REF_DUE] += cf[C_TREFI]
    elif k == REFPB:
        st[REFPBS] += 1
        # (the set's banks of the other ranks are still due: each rank takes its own REFpb)
        st[REFPB_RANKS] &= ~(1 << rank_of[b])
        if st[REFPB_RANKS] == 0:
            st[REFPB_SET] = -1
            st[REF_DUE] += cf[C_TREFIPB]
    n = st[N_CMD]
    cmd_log[n, 0] = c
    cmd_log[n, 1] = k
    cmd_log[n, 2] = b
    if e >= 0 and (k == ACT or k == RD or k == WR):
        cmd_log[n, 3] = e_row[e]
    else:
        cmd_log[n, 3] = -1
    cmd_log[n, 4] = e_col[e] if e >= 0 and (k == RD or k == WR) else -1
    st[N_CMD] = n + 1
    if k == RD or k == WR:
        free[st[FREE_TOP]] = e
        st[FREE_TOP] += 1


@jit
def room(st, cf, s_write, i):
    """Room in the queue stream request i goes to."""
    if s_write[i]:
        return st[WQC] < cf[C_WQ_CAP]
    return st[RQC] < cf[C_RQ_CAP]


@jit
def pull(st, cf, c, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len, e_seq, e_arr, e_row,
         e_col, e_burst, e_kind, e_size, e_job, free, s_cycle, s_bank, s_row, s_col, s_burst, s_write, s_size,
         s_job, rsamples, opened, job_left, done_log):
    """DramController._pull_stream (or SplitsRequests._enter) with _enqueue and _consider:
    take the buffered requests due by cycle c while there is room (a forwarded read burst of
    a client request completes ``forward_cycles`` later, a posted write's as it is queued);
    False when the buffer ran dry before the stream did (the caller refills it and calls
    again)."""
    while st[POS] < st[BUF_LEN]:
        i = st[POS]
        if s_cycle[i] > c:
            break
        write = s_write[i] != 0
        if write:
            if st[WQC] >= cf[C_WQ_CAP]:
                break
        elif st[RQC] >= cf[C_RQ_CAP]:
            break
        st[POS] = i + 1
        st[SEQ] += 1
        bank = s_bank[i]
        at = cf[C_PHASE] + c * cf[C_PERIOD]
        forwarded = False
        if not write:
            for j in range(wq_len[bank]):
                if e_burst[wq_ids[bank, j]] == s_burst[i]:
                    forwarded = True
                    break
        j = s_job[i]
        if forwarded:
            st[FORWARDED] += 1
            st[READS] += 1
            st[BYTES_READ] += s_size[i]
            rsamples[st[N_RSAMPLE]] = cf[C_FORWARD]
            st[N_RSAMPLE] += 1
            if j >= 0:
                complete(st, job_left, done_log, j, c + cf[C_FORWARD])
        else:
            if write and j >= 0:
                complete(st, job_left, done_log, j, c)  # posted: done once queued
                j = -1
            st[FREE_TOP] -= 1
            e = free[st[FREE_TOP]]
            e_seq[e] = st[SEQ]
            e_arr[e] = c
            e_row[e] = s_row[i]
            e_col[e] = s_col[i]
            e_burst[e] = s_burst[i]
            e_kind[e] = 0
            e_size[e] = s_size[i]
            e_job[e] = j
            if write:
                wq_ids[bank, wq_len[bank]] = e
                wq_len[bank] += 1
                st[WQC] += 1
                level_set(st, WL_VALUE, st[WQC], at)
            else:
                rq_ids[bank, rq_len[bank]] = e
                rq_len[bank] += 1
                st[RQC] += 1
                level_set(st, RL_VALUE, st[RQC], at)
            if write != (st[WMODE] != 0):
                wq = st[WQC]
                rq = st[RQC]
                if st[WMODE]:
                    flips = wq == 0 or (wq <= cf[C_LOW] and rq > 0)
                else:
                    flips = wq >= cf[C_HIGH] or (rq == 0 and wq > 0)
                if flips:
                    st[DIRTY] = 1
            elif st[DIRTY] or not st[HAS_BEST] or st[BEST_B] == bank or cf[C_FCFS] or st[REF_PENDING]:
                st[DIRTY] = 1
            else:
                # A request for another bank: compare its bank's candidate with the best.
                if write:
                    k, x = candidate(st, cf, bank, rows, hits_run, wq_ids, wq_len, e_row, opened)
                else:
                    k, x = candidate(st, cf, bank, rows, hits_run, rq_ids, rq_len, e_row, opened)
                if k >= 0:  # (a closed bank of the due refresh set has none)
                    t = ready_at(nxt, gbase, rbase, bank, k)
                    if t < c:
                        t = c
                    bt = st[BEST_T] if st[BEST_T] > c else c
                    if t < bt or (t == bt and e_seq[x] < st[BEST_SEQ]):
                        set_best(st, t, e_seq[x], bank, k, x)
        if st[POS] == st[BUF_LEN] and not st[EXHAUSTED]:
            return False
    return True


@jit
def run(st, cf, c, first, horizon, phase, nxt, upd_ptr, upd_idx, upd_cyc, gbase, rbase, rank_of, rows,
        hits_run, faw, needs, rq_ids, rq_len, wq_ids, wq_len, e_seq, e_arr, e_row, e_col, e_burst, e_kind,
        e_size, e_job, free, s_cycle, s_bank, s_row, s_col, s_burst, s_write, s_size, s_job, cmd_log, rsamples,
        wsamples, opened, job_left, done_log):
    """The cycles of one tick (DramController.tick's run-ahead loop over _cycle); fed
    through the ports (C_PORTS), the cycles with work from c to ``horizon`` as
    SchedulesAhead._schedule_ahead runs them, ending after a cycle in which a client
    request's last burst completed (its response may bound the horizon; not while HEAD is
    CATCHING_UP), or, with a request waiting on req (HEAD), after the cycle that leaves room
    for it (it enters at the next cycle the controller works at), or, with HEAD ENTERING,
    after the cycle the last burst of the request being fed enters in."""
    # (the counters add up over calls until the caller takes them: see CompiledCore.hand_over)
    st[N_CMD] = st[N_DONE] = st[JOB_DONE] = 0
    if not cf[C_PORTS]:  # (fed through the ports, the samples add up over calls: see CompiledCore.schedule)
        st[N_RSAMPLE] = st[N_WSAMPLE] = 0
    if st[FEED_N]:
        expand(st, cf, s_cycle, s_bank, s_row, s_col, s_burst, s_write, s_size, s_job, job_left)
    while True:
        # -- _cycle(c), resumable after a refill at either intake
        issued = phase == 2
        if phase == 0:
            i = st[POS]
            if i < st[BUF_LEN] and s_cycle[i] <= c and room(st, cf, s_write, i):
                phase = 1
        if phase == 1:
            if not pull(st, cf, c, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len, e_seq,
                        e_arr, e_row, e_col, e_burst, e_kind, e_size, e_job, free, s_cycle, s_bank, s_row, s_col,
                        s_burst, s_write, s_size, s_job, rsamples, opened, job_left, done_log):
                st[OUT_C] = c
                st[OUT_PHASE] = 1
                return UNDERRUN
        if not issued:
            if c >= st[REF_DUE] and not st[REF_PENDING] and st[REFPB_SET] < 0:
                start_refresh(st, cf, rank_of, needs, rq_len, wq_len, rows)
            if st[DIRTY] or not st[HAS_BEST]:
                choose(st, cf, c, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len, e_row,
                       e_seq, needs, opened)
            if st[HAS_BEST] and st[BEST_T] <= c:
                issue(st, cf, c, nxt, upd_ptr, upd_idx, upd_cyc, gbase, rbase, rank_of, rows, hits_run, faw,
                      needs, rq_ids, rq_len, wq_ids, wq_len, e_seq, e_arr, e_row, e_col, e_kind, e_size, e_job,
                      free, cmd_log, rsamples, wsamples, opened, job_left, done_log)
                issued = True
                i = st[POS]
                if not (i < st[BUF_LEN] and s_cycle[i] <= c + 1 and room(st, cf, s_write, i)):
                    phase = 3
        if issued:
            if phase != 3:
                if not pull(st, cf, c + 1, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len,
                            e_seq, e_arr, e_row, e_col, e_burst, e_kind, e_size, e_job, free, s_cycle, s_bank,
                            s_row, s_col, s_burst, s_write, s_size, s_job, rsamples, opened, job_left, done_log):
                    st[OUT_C] = c
                    st[OUT_PHASE] = 2
                    return UNDERRUN
            choose(st, cf, c + 1, nxt, gbase, rbase, rows, hits_run, rq_ids, rq_len, wq_ids, wq_len, e_row,
                   e_seq, needs, opened)
        phase = 0
        wake = st[BEST_T] if st[HAS_BEST] else _NEVER
        if st[REF_DUE] < wake and not st[REF_PENDING] and st[REFPB_SET] < 0:
            wake = st[REF_DUE]
        i = st[POS]
        if i < st[BUF_LEN] and room(st, cf, s_write, i) and s_cycle[i] < wake:
            wake = s_cycle[i]
        if cf[C_PORTS]:
            # -- the loop of SchedulesAhead._schedule_ahead
            if wake <= c:
                wake = c + 1
            head = st[HEAD]
            if head == -1:
                stop = st[JOB_DONE] != 0
            elif head == ENTERING:  # (until the last burst of the request being fed has entered)
                stop = st[POS] >= st[BUF_LEN]
            elif head < 0:  # (CATCHING_UP: the cycles up to the horizon are decided whatever completes)
                stop = False
            elif st[POS] < st[BUF_LEN]:
                stop = False
            elif head:
                stop = st[WQC] < cf[C_WQ_CAP]
            else:
                stop = st[RQC] < cf[C_RQ_CAP]
            if stop or wake > horizon:
                st[OUT_C] = c
                st[OUT_WAKE] = wake
                return DONE
            c = wake
            continue
        # -- the run-ahead loop of tick()
        stream_done = st[POS] >= st[BUF_LEN] and st[EXHAUSTED]
        if cf[C_WATCH_DONE] and stream_done and st[RQC] == 0 and st[WQC] == 0:
            st[OUT_C] = c
            if c == first:
                st[OUT_WAKE] = wake
                return STOP_NOW
            st[OUT_WAKE] = c
            return HELD_STOP
        if wake >= _NEVER:
            st[OUT_C] = c
            if c > first:
                st[OUT_WAKE] = c
                return HELD_GO
            st[OUT_WAKE] = wake
            return DONE
        if wake <= c:
            wake = c + 1
        if wake > horizon:
            st[OUT_C] = c
            st[OUT_WAKE] = wake
            return DONE
        c = wake
