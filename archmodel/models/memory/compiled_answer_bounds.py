"""The bank terms of a queued read's answer bound (:mod:`.answer_bounds`) worked out from the
compiled core's arrays in one numba call: the lookahead asks them thousands of times per
simulated cycle of a busy HBM, and walking the queue arrays from Python (a list of bursts,
a dict of rows per bank, closures for the next-allowed cycles) cost more than the batches
the tighter bound saves."""

from archmodel.kernel.compiled import jit

from .commands import ACT, COMMAND_COUNT, PRE, RD


@jit(allocates=True)
def queued_read_terms(rq_ids, rq_len, e_row, e_job, slot, nxt, gbase, rbase, rows, issue0, act_rd, pre_act,
                      rd_rd, queued, cl, burst, terms):
    """As :meth:`~.answer_bounds.BoundsQueuedReads._queued_read_terms`, over the core's read
    queues (``rq_ids``/``rq_len``, each bank's bursts oldest first), its entries' rows and
    job slots, its next-allowed cycles (``nxt`` with the group and rank bases) and open
    rows: writes ``(a, b)`` into ``terms`` and returns True when exactly ``queued`` bursts
    of job ``slot`` are found, else False (then nothing is counted)."""
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
                return False
            row = e_row[x]
            before = 0  # the bursts to the same row queued before it in its bank
            for j in range(i):
                if e_row[rq_ids[b, j]] == row:
                    before += 1
            spacing = before * rd_rd
            base = b * COMMAND_COUNT
            e = max(issue0, nxt[base + RD], nxt[gbase[b] + RD], nxt[rbase[b] + RD])
            held = rows[b]
            if held == row:
                d = spacing
            elif held < 0:
                d = act_rd + spacing
                act_ready = max(nxt[base + ACT], nxt[gbase[b] + ACT], nxt[rbase[b] + ACT])
                e = max(e, max(issue0, act_ready) + act_rd)
            else:
                d = pre_act + act_rd + spacing
                act_ready = max(nxt[base + ACT], nxt[gbase[b] + ACT], nxt[rbase[b] + ACT])
                pre_ready = max(nxt[base + PRE], nxt[gbase[b] + PRE], nxt[rbase[b] + PRE])
                e = max(e, max(max(issue0, pre_ready) + pre_act, act_ready) + act_rd)
            late[found] = d
            lead[found] = e + spacing
            found += 1
    if found != queued:
        return False
    late.sort()
    lead.sort()
    a = 0
    b_term = 0
    for k in range(queued):
        a = max(a, late[k] + (queued - 1 - k) * burst)
        b_term = max(b_term, lead[k] + (queued - 1 - k) * burst)
    terms[0] = a + cl + burst
    terms[1] = b_term + cl + burst
    return True
