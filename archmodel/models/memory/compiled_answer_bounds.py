"""The bank terms of a read's answer bound (:mod:`.answer_bounds`) worked out from the
compiled core's arrays in one numba call: the lookahead asks them thousands of times per
simulated cycle of a busy HBM, and walking the queue arrays from Python (a list of bursts,
a dict of rows per bank, closures for the next-allowed cycles) cost more than the batches
the tighter bound saves."""

from archmodel.kernel.compiled import jit

from .commands import ACT, COMMAND_COUNT, PRE, RD

# The fields of ``decode`` in newcomer_read_terms (made from the core's configuration by
# answer_bounds, once a core: passed, not read from compiled_core_layout here, so a cached
# compilation never holds another layout's indices).
(D_RA, D_RA_MASK, D_BG, D_BG_MASK, D_BA, D_BA_MASK, D_RO, D_RO_MASK, D_GROUPS, D_PER_GROUP, D_BURST,
 DECODE_SIZE) = range(12)


@jit
def bank_path(b, row, nxt, gbase, rbase, rows, undecided, act_rd, pre_act):
    """``(d, e)``: bank b reads row ``row`` no sooner than d cycles after c0 and than cycle e,
    from its open row (``rows``) and its bank's, group's and rank's next-allowed cycles
    (``nxt``), every command to come at an undecided cycle (from ``undecided``, and c0)."""
    base = b * COMMAND_COUNT
    e = max(undecided, nxt[base + RD], nxt[gbase[b] + RD], nxt[rbase[b] + RD])
    held = rows[b]
    if held == row:
        return 0, e
    act_ready = max(nxt[base + ACT], nxt[gbase[b] + ACT], nxt[rbase[b] + ACT])
    if held < 0:
        return act_rd, max(e, max(undecided, act_ready) + act_rd)
    pre_ready = max(nxt[base + PRE], nxt[gbase[b] + PRE], nxt[rbase[b] + PRE])
    return pre_act + act_rd, max(e, max(max(undecided, pre_ready) + pre_act, act_ready) + act_rd)


@jit
def hits_first(d, e, b, row, rq_ids, rq_len, e_row, rows, nxt, gbase, rbase, undecided, act_rd, pre_act, rd_rd,
               rd_pre, other_d, other_e):
    """``(d, e)`` of a read of row ``row`` in bank b, from its bank's path (d, e), no sooner
    than its bank's queued reads of the row open now, each tCCD_L after the last, then tRTP
    to its PRE, tRP to the ACT and tRCD to the RD, unless a write drain or a refresh closes
    the bank first (no sooner than ``other_d`` cycles after c0 and cycle ``other_e``):
    FR-FCFS precharges a bank only once no queued read hits its open row (``rd_pre`` -1:
    the scheduler, the mode or a refresh under way may close it sooner; counted then as the
    bank's path alone)."""
    held = rows[b]
    if rd_pre < 0 or held < 0 or held == row:
        return d, e
    hits = 0
    for j in range(rq_len[b]):
        if e_row[rq_ids[b, j]] == held:
            hits += 1
    if hits == 0:
        return d, e
    base = b * COMMAND_COUNT
    ready = max(undecided, nxt[base + RD], nxt[gbase[b] + RD], nxt[rbase[b] + RD])
    path = (hits - 1) * rd_rd + rd_pre + pre_act + act_rd
    return max(d, min(path, other_d)), max(e, min(ready + path, other_e))


@jit
def write_pending(first, last, wq_ids, wq_len, e_burst):
    """Whether a write queued in the core's write queues (``wq_ids``/``wq_len``, each entry's
    burst address in ``e_burst``) is of a burst from ``first`` to ``last`` (burst addresses)."""
    for b in range(wq_len.shape[0]):
        for j in range(wq_len[b]):
            key = e_burst[wq_ids[b, j]]
            if first <= key <= last:
                return True
    return False


@jit
def drained(d, e, b, x, before, floor, undecided, rd_rd, opened):
    """``(d, e)`` of entry x's RD (-1: a burst not yet queued), ``before`` bursts queued before
    it to its row in bank b, from its bank's path (d, e), no sooner than ``floor`` cycles
    after c0 and the first undecided cycle while the channel drains its writes (-1: it does
    not): none of those RDs but that of the burst its bank's row was activated for
    (``opened``) comes sooner."""
    if floor < 0 or (x >= 0 and opened[b, 0] == x):
        return d, e
    if opened[b, 0] >= 0 and opened[b, 1] == RD and before > 0:
        before -= 1  # (that burst may be read first, before the drain ends)
    spacing = before * rd_rd
    return max(d, floor + spacing), max(e, undecided + floor + spacing)


@jit(allocates=True)
def answer_terms(late, lead, count, cl, burst):
    """``(a, b)`` of the last of ``count`` RDs, the k-th released no sooner than ``c0 +
    late[k]`` and ``lead[k]``, one data burst (``burst`` cycles) apart, answered ``cl +
    burst`` after its RD (the release lists are sorted here)."""
    late.sort()
    lead.sort()
    a = 0
    b = 0
    for k in range(count):
        a = max(a, late[k] + (count - 1 - k) * burst)
        b = max(b, lead[k] + (count - 1 - k) * burst)
    return a + cl + burst, b + cl + burst


@jit(allocates=True)
def queued_read_terms(rq_ids, rq_len, e_row, e_job, slot, nxt, gbase, rbase, rows, issue0, act_rd, pre_act,
                      rd_rd, queued, cl, burst, floor, opened, rd_pre, other_d, other_e):
    """As :meth:`~.answer_bounds.BoundsQueuedReads._queued_read_terms`, over the core's read
    queues (``rq_ids``/``rq_len``, each bank's bursts oldest first), its entries' rows and
    job slots, its next-allowed cycles (``nxt`` with the group and rank bases) and open
    rows: ``(a, b)`` when exactly ``queued`` bursts of job ``slot`` are found, else ``(-1,
    -1)`` (then nothing is counted; a term is never negative). A tuple returned, not an
    array written: the lookahead calls this at about every question of a busy HBM, and
    reading an array's items back costs more from Python."""
    late = [0] * queued
    lead = [0] * queued
    found = 0
    for b in range(rq_len.shape[0]):
        n = rq_len[b]
        for i in range(n):
            x = rq_ids[b, i]
            if e_job[x] != slot:
                continue
            if found == queued:
                return -1, -1
            row = e_row[x]
            before = 0  # the bursts to the same row queued before it in its bank
            for j in range(i):
                if e_row[rq_ids[b, j]] == row:
                    before += 1
            spacing = before * rd_rd
            d, e = bank_path(b, row, nxt, gbase, rbase, rows, issue0, act_rd, pre_act)
            d, e = hits_first(d, e, b, row, rq_ids, rq_len, e_row, rows, nxt, gbase, rbase, issue0, act_rd, pre_act,
                              rd_rd, rd_pre, other_d, other_e)
            late[found], lead[found] = drained(d + spacing, e + spacing, b, x, before, floor, issue0, rd_rd, opened)
            found += 1
    if found != queued:
        return -1, -1
    return answer_terms(late, lead, queued, cl, burst)


@jit(allocates=True)
def newcomer_read_terms(offset, size, decode, rq_ids, rq_len, e_row, nxt, gbase, rbase, rows, undecided, entry,
                        shift, act_rd, pre_act, rd_rd, cl, burst, floor, opened, rd_pre, other_d, other_e):
    """As :meth:`~.answer_bounds.BoundsQueuedReads._newcomer_read_terms`, for the read of
    ``size`` bytes at ``offset`` in the store, cut into bursts and decoded as the core's
    ``expand`` does (``decode``: the fields named D_*), over the core's read queues, its
    next-allowed cycles and open rows: ``(a, b)``."""
    burst_bytes = decode[D_BURST]
    count = (offset + size - 1) // burst_bytes - offset // burst_bytes + 1
    late = [0] * count
    lead = [0] * count
    banks = [0] * count
    burst_rows = [0] * count
    at = offset
    for k in range(count):
        b = ((((at >> decode[D_RA]) & decode[D_RA_MASK]) * decode[D_GROUPS] + ((at >> decode[D_BG]) & decode[D_BG_MASK]))
             * decode[D_PER_GROUP] + ((at >> decode[D_BA]) & decode[D_BA_MASK]))
        row = (at >> decode[D_RO]) & decode[D_RO_MASK]
        own = 0  # its own bursts to its row before it: read first, once entered
        for j in range(k):
            if banks[j] == b and burst_rows[j] == row:
                own += 1
        before = own  # and its bank reads every burst queued now to its row first
        for j in range(rq_len[b]):
            if e_row[rq_ids[b, j]] == row:
                before += 1
        banks[k] = b
        burst_rows[k] = row
        spacing = before * rd_rd
        d, e = bank_path(b, row, nxt, gbase, rbase, rows, undecided, act_rd, pre_act)
        d, e = hits_first(d, e, b, row, rq_ids, rq_len, e_row, rows, nxt, gbase, rbase, undecided, act_rd, pre_act,
                          rd_rd, rd_pre, other_d, other_e)
        d, e = drained(d + spacing, e + spacing, b, -1, before, floor, undecided, rd_rd, opened)
        late[k] = max(d, shift + own * rd_rd)
        lead[k] = max(e, entry + own * rd_rd)
        at = (at | (burst_bytes - 1)) + 1
    return answer_terms(late, lead, count, cl, burst)
