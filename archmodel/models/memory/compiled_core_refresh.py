"""The start of a refresh in the compiled DRAM scheduling core (:mod:`.compiled_core_kernel`
calls it when one falls due): all-bank refresh marks every rank, per-bank refresh names the
bank set whose banks take their REFpb, in turn or idle first. Each function mirrors the
DramController method named in its docstring; the layout is :mod:`.compiled_core_layout`."""

from archmodel.kernel.compiled import jit

from .compiled_core_layout import (C_BANKS, C_RANKS, C_REFPB, C_REFPB_IDLE_FIRST, C_REFPB_SETS, DIRTY,
                                   REF_PENDING, REFPB_DONE, REFPB_NEXT, REFPB_RANKS, REFPB_SET)


@jit
def next_refresh_set(st, cf, rq_len, wq_len, rows):
    """CommandScheduler._next_refresh_set: the bank set a per-bank refresh falling due now
    takes (in turn, or, of those not yet refreshed in the round, the one with the fewest
    queued bursts, then the fewest open rows)."""
    sets = cf[C_REFPB_SETS]
    s = st[REFPB_NEXT]
    if not cf[C_REFPB_IDLE_FIRST]:
        return s
    done = st[REFPB_DONE]
    if done == (1 << sets) - 1:
        done = 0
    best = -1
    fewest = -1
    fewest_open = -1
    for i in range(sets):
        x = (s + i) % sets
        if (done >> x) & 1:
            continue
        queued = 0
        open_rows = 0
        for b in range(x, cf[C_BANKS], sets):
            queued += rq_len[b] + wq_len[b]
            if rows[b] >= 0:
                open_rows += 1
        if best < 0 or queued < fewest or (queued == fewest and open_rows < fewest_open):
            best = x
            fewest = queued
            fewest_open = open_rows
            if queued == 0 and open_rows == 0:
                break
    st[REFPB_DONE] = done | (1 << best)
    return best


@jit
def start_refresh(st, cf, rank_of, needs, rq_len, wq_len, rows):
    """CommandScheduler._start_refresh: a refresh falls due now."""
    st[DIRTY] = 1
    if cf[C_REFPB]:
        s = next_refresh_set(st, cf, rq_len, wq_len, rows)
        st[REFPB_SET] = s
        st[REFPB_NEXT] = (s + 1) % cf[C_REFPB_SETS]
        mask = 0
        for b in range(s, cf[C_BANKS], cf[C_REFPB_SETS]):
            mask |= 1 << rank_of[b]
        st[REFPB_RANKS] = mask
    else:
        st[REF_PENDING] = 1
        for r in range(cf[C_RANKS]):
            needs[r] = 1
