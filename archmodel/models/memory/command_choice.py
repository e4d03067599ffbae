"""How a DRAM controller chooses its next command (a mixin of both controllers, which hold
the state): one candidate command per bank, kept in buckets by the rank-level next-allowed cycle
(:mod:`.next_allowed`) so a choice scans few, and the earliest-ready candidate chosen, the one
of highest priority among equals; refresh candidates.

A controller computes its banks' candidates (``_refresh_bank``) and gives each a priority:
:class:`~.command_scheduler.CommandScheduler` its age (FR-FCFS: the bank's oldest request to
its open row, else its oldest request), :class:`~.indram_cache.InDramCacheController` its age
with column commands first (``scheduler`` ``frfcfs_column_first``). How a refresh closes the
banks is the controller's too (``refresh_precharge``, see :meth:`CommandChoice._setup_choice`).
A change to how commands are chosen is made here, once, for both.
"""

from __future__ import annotations

from bisect import bisect_left, insort

from .commands import ACT, COMMAND_COUNT, PRE, PREA, RD, REF, REFPB, WR
from .next_allowed import NextAllowedCycles
from .splitting import NEVER

_NEVER = NEVER

REFRESH_PRECHARGES = ("rank", "bank")
"""How an all-bank refresh closes the open banks (see :meth:`CommandChoice._setup_choice`)."""


class CommandChoice(NextAllowedCycles):
    """The choice of a controller's next command (see the module docstring). The controller
    provides ``_refresh_bank(b)`` (bank b's candidate, set with :meth:`_set_candidate` or
    dropped with :meth:`_drop_candidate`), the queues of :mod:`.scheduling_core`, ``_rows``
    (each bank's open row, -1 if closed), the refresh state (``_refresh_pending``,
    ``_rank_needs_refresh``, ``_refpb_banks``), ``_to_close`` (banks a page policy closes)
    and ``_fcfs``; it calls :meth:`_setup_choice` in its setup."""

    def _setup_choice(self, refresh_precharge: str = "rank") -> None:
        """No candidates yet. ``refresh_precharge``: how an all-bank refresh closes the open
        banks: ``rank`` (DramController's) with one PREA once no bank waits for the burst its
        row was activated for; ``bank`` (the in-DRAM cache's) with a PRE per bank as each
        bank may close, the other banks serving the bursts their rows were activated for
        meanwhile, and never a bank a relocation holds (:meth:`_bank_held`): a fast cache row
        precharges by its own, shorter tRP, where PREA would hold every bank to one."""
        t = self.timing
        n = self._bank_count
        g_count = t.ranks * t.bankgroups
        self._precharge_each = refresh_precharge == "bank"
        self._best = None
        self._dirty = True
        self._cands: dict[int, tuple] = {}
        self._cands_mode = False
        # The same candidates by the index of their rank-level next-allowed cycle, each
        # bucket a list of (priority, bank, candidate) kept highest first: a scan stops at the
        # first candidate ready at the bucket's floor, since no later one can beat it.
        self._buckets: dict[int, list] = {}
        for rank in range(t.ranks):
            for k in (PRE, RD, WR, ACT):
                self._buckets[(n + g_count + rank) * COMMAND_COUNT + k] = []
        # The buckets a choice reads (a read whose row was activated for it may go in a drain).
        self._scans = list(self._buckets.items())

    def _set_candidate(self, b: int, k: int, entry, priority: int) -> None:
        """Bank b's candidate becomes command k for ``entry`` (a queued burst), as (bank-level
        ready cycle, priority, command, bank-group index, rank index, entry); the lower
        ``priority`` goes first among candidates ready at the same cycle."""
        cands = self._cands
        old = cands.get(b)
        if old is not None:
            bucket = self._buckets[old[4]]
            del bucket[bisect_left(bucket, (old[1],))]
        bb, gb, rb = self._bases[b][:3]
        cand = (self._nxt[bb + k], priority, k, gb + k, rb + k, entry)
        cands[b] = cand
        insort(self._buckets[rb + k], (priority, b, cand))

    def _drop_candidate(self, b: int) -> None:
        """Bank b has no candidate."""
        old = self._cands.pop(b, None)
        if old is not None:
            bucket = self._buckets[old[4]]
            del bucket[bisect_left(bucket, (old[1],))]

    def _bank_held(self, b: int) -> bool:
        """Whether bank b is busy with work of its own that a refresh waits for (the in-DRAM
        cache's relocations); no bank is, by default."""
        return False

    def _rebuild(self) -> None:
        """Every bank's candidate afresh, for the queue being served."""
        active = self._wq_active if self._write_mode else self._rq_active
        self._cands = {}
        for bucket in self._buckets.values():
            bucket.clear()
        for b in active:
            self._refresh_bank(b)
        for b in self._opened:
            if b not in active:
                self._refresh_bank(b)
        self._cands_mode = self._write_mode

    def _consider(self, b: int, c: int) -> None:
        """A request arrived for bank b: compare its bank's candidate with the best so far."""
        self._refresh_bank(b)
        cand = self._cands.get(b)
        best = self._best
        if cand is None:
            return
        nxt = self._nxt
        t = cand[0]
        v = nxt[cand[3]]
        if v > t:
            t = v
        v = nxt[cand[4]]
        if v > t:
            t = v
        if t < c:
            t = c
        bt = best[0] if best[0] > c else c
        if t < bt or (t == bt and cand[1] < best[1]):
            self._best = (t, cand[1], b, cand[2], cand[5])

    def _choose(self, c: int) -> None:
        """Find the next command: the earliest-ready one, of highest priority (lowest
        ``priority``) among equals; while a refresh is pending, the refresh's."""
        self._dirty = False
        changes = self._queue_changes
        if changes != self._drain_seen or self._drain_recheck:  # (a choice comes several times a cycle)
            self._drain_seen = changes
            if self._drain_flips():
                self._write_mode = not self._write_mode
        if self._write_mode != self._cands_mode:
            self._rebuild()
        if self._refresh_pending and self._precharge_each:
            self._best = self._bank_refresh_candidate(c)
            return
        if self._refresh_pending:
            # The bursts whose rows were activated for them go before the rank is precharged.
            self._best = self._opened_candidate(c) if self._opened else None
            if self._best is None:
                self._best = self._refresh_candidate(c)
            return
        cands = self._cands
        best = None
        best_t = best_seq = _NEVER
        nxt = self._nxt
        if self._fcfs:
            if cands:
                b = min(cands, key=lambda x: cands[x][1])
                t, seq, k, gi, ri, entry = cands[b]
                best_t = max(t, nxt[gi], nxt[ri], c)
                best_seq = seq
                best = (best_t, seq, b, k, entry)
        else:
            # Candidates are bucketed by (rank, command): a bucket whose rank-level floor is
            # already later than the best found cannot win, so it is skipped unread. Column
            # commands and PRE come first, ACT (most often held by tFAW/tRRD) last.
            for ri, bucket in self._scans:
                if not bucket:
                    continue
                floor = nxt[ri]
                if floor < c:
                    floor = c
                if floor > best_t:
                    continue
                for seq, b, (t, _, k, gi, _, entry) in bucket:
                    v = nxt[gi]
                    if v > t:
                        t = v
                    if t <= floor:
                        if floor < best_t or (floor == best_t and seq < best_seq):
                            best_t = floor
                            best_seq = seq
                            best = (floor, seq, b, k, entry)
                        break
                    if t < best_t or (t == best_t and seq < best_seq):
                        best_t = t
                        best_seq = seq
                        best = (t, seq, b, k, entry)
        if self._to_close:
            active = self._cands
            for b, earliest in self._to_close.items():
                if b in active:
                    continue
                t = self._ready(b, PRE)
                if earliest > t:
                    t = earliest
                if t < c:
                    t = c
                if t < best_t:
                    best_t = t
                    best = (t, _NEVER, b, PRE, None)
        if self._refpb_banks:
            cand = self._refpb_candidate(c)
            if cand is not None and cand[0] <= best_t:
                best = cand
        self._best = best

    def _opened_candidate(self, c: int):
        """The best of the candidates of bursts whose rows were activated for them (None if none)."""
        best = None
        nxt = self._nxt
        for b in self._opened:
            t, seq, k, gi, ri, entry = self._cands[b]
            t = max(t, nxt[gi], nxt[ri], c)
            if best is None or (t, seq) < best[:2]:
                best = (t, seq, b, k, entry)
        return best

    def _refresh_candidate(self, c: int):
        """All-bank refresh: PREA while any bank of the rank is open, then REF."""
        t = self.timing
        for rank in range(t.ranks):
            banks = range(rank * t.banks, (rank + 1) * t.banks)
            first = rank * t.banks
            if any(self._rows[b] >= 0 for b in banks):
                ready = max([self._ready(first, PREA)] + [self._ready(b, PRE) for b in banks if self._rows[b] >= 0])
                return (max(ready, c), -1, first, PREA, None)
            if self._rank_needs_refresh[rank]:
                return (max(self._ready(first, REF), c), -1, first, REF, None)
        return None

    def _bank_refresh_candidate(self, c: int):
        """All-bank refresh with a PRE per bank (``refresh_precharge`` bank): the earliest of
        the bursts whose rows were activated for them and the PREs of the other open banks
        no relocation holds (those bursts first, then the lowest bank, among equals), then
        REF once the rank is closed."""
        t = self.timing
        rows, opened = self._rows, self._opened
        for rank in range(t.ranks):
            if not self._rank_needs_refresh[rank]:
                continue
            banks = range(rank * t.banks, (rank + 1) * t.banks)
            if all(rows[b] < 0 for b in banks):
                first = rank * t.banks
                return (max(self._ready(first, REF), c), -1, first, REF, None)
            best = self._opened_candidate(c) if opened else None
            for b in banks:
                if rows[b] >= 0 and b not in opened and not self._bank_held(b):
                    ready = max(self._ready(b, PRE), c)
                    if best is None or ready < best[0]:
                        best = (ready, _NEVER, b, PRE, None)
            return best
        return None

    def _refpb_candidate(self, c: int):
        """Per-bank refresh of the due bank set, rank by rank (each rank's banks of the set
        take one REFpb of their own): in the lowest rank still due, PRE its open banks of the
        set, then REFpb; None while a bank of the set there waits for the burst its row was
        activated for."""
        rank_of = self._rank_of
        banks = self._refpb_banks
        rank = rank_of[banks[0]]
        due = [b for b in banks if rank_of[b] == rank]
        for b in due:
            if self._rows[b] >= 0 and b not in self._opened:
                return (max(self._ready(b, PRE), c), -1, b, PRE, None)
        if any(b in self._opened for b in due):
            return None
        ready = max(self._ready(b, REFPB) for b in due)
        return (max(ready, c), -1, due[0], REFPB, None)

