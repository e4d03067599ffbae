"""When a DRAM channel can answer a read whose bursts wait in its read queue, or a client's
first read not yet here, from the banks those bursts need (a mixin of
:class:`~.controller.DramController`, which holds the state).

The lookahead asks a memory when it can next answer a client (see
:meth:`~.splitting.SplitsRequests.earliest_send_ps`). Counting the client's queued bursts
as if they were alone on the data bus (each RD at the first undecided cycle, one burst per
tBL) is sound but far too early once the queue is busy: a burst whose bank holds another
row needs a PRE and an ACT before its RD, and the bank serves the bursts queued before it
to the same row first. This module counts both, from the bank state the scheduler has
decided so far, on the Python path and in the compiled core alike; for a read on its way
(a newcomer), every burst queued now to its row comes first.

It counts what else holds a read back where the scheduler says so for sure: FR-FCFS
serves a bank's queued reads of its open row before it precharges it (unless a drain or a
refresh closes it first, no sooner than they can); a write drain reads nothing but the
bursts the rows were activated for until the write queue is down to its low watermark; a
read-queue slot frees only at an RD, so a newcomer waits for the slots of the reads in line
ahead of it and its own; and a newcomer read is answered from the write queue only if a
write of one of its bursts is pending, entering or ahead of it.
"""

from __future__ import annotations

import numpy as np

# (the compiled terms are called through their module: its first call puts the numba
# dispatchers in its namespace, so later calls skip the Loop wrappers a name imported here
# would keep: see archmodel.kernel.compiled.Loop)
from . import compiled_answer_bounds
from .commands import ACT, PRE, RD, REF, REFPB, WR
from .compiled_answer_bounds import (D_BA, D_BA_MASK, D_BG, D_BG_MASK, D_BURST, D_GROUPS, D_PER_GROUP, D_RA, D_RA_MASK,
                                     D_RO, D_RO_MASK, DECODE_SIZE)
from .compiled_core_layout import (C_BA, C_BA_MASK, C_BG, C_BG_MASK, C_BURST, C_GROUPS, C_HIGH, C_LOW, C_PER_GROUP,
                                   C_RA, C_RA_MASK, C_RO, C_RO_MASK, REF_DUE, REF_PENDING, REFPB_SET, WMODE)
from .response_order import split


class BoundsQueuedReads:
    """A read's answer bound from the banks of its bursts (see the module docstring).

    The controller provides ``timing``, ``burst_bytes``, ``store_offset``, ``_updates`` (its
    next-allowed updates per command: :mod:`.next_allowed`), ``_local_decode``,
    ``_per_bank``, ``_deferring`` and ``_catch_up_before`` (edges deferred:
    :class:`~.schedule_ahead.SchedulesAhead`), and the bank state: on the Python path
    ``_rq`` (each bank's queued read bursts, oldest first), ``_rows`` and ``_ready(b, k)``;
    with the compiled core ``_core`` (its arrays and configuration; a job's ``slot`` names
    its request there). For the drain, the refresh, the line and the writes pending:
    ``scheduler``, ``page_policy``, ``read_queue``, the queue counts, ``_job`` (the request
    entering), ``_processed``, and on the Python path ``_write_mode``, ``_high``, ``_low``,
    ``_blocked_writes``, ``_opened`` (each bank's burst its row was activated for),
    ``_pending_writes``, ``_refresh_pending``, ``_refpb_banks`` and ``_refresh_due`` (the
    compiled core holds the same in its state and configuration arrays)."""

    _bank_gaps = None  # (ACT->RD, PRE->ACT, RD->RD on one bank), found at the first question
    _write_gaps = None  # (WR->WR, WR->RD on any two banks), found at the first question
    _hits_gaps = None  # (ACT->RD, RD->PRE on a bank, a refresh to its banks' ACT), found at the first question
    _core_decode: tuple = (None, None)  # (core, its decode fields) for _decode_fields
    _hit_terms: tuple | None = None  # _fixed_hit_terms, found at the first question
    _drain_terms: tuple | None = None  # (the low watermark, WR->WR, WR->RD gaps) for _drain_floor, found at the first

    def _queued_read_terms(self, job, queued: int, issue0: int) -> tuple[int, int] | None:
        """``(a, b)``: the last of the ``queued`` read bursts of ``job`` still in the read
        queue is answered no sooner than ``max(c0 + a, b)``, from cycle c0 (the first edge
        at or after now) with the cycles before ``issue0`` decided for good (None: not
        counted here; per-bank command queues order bursts otherwise).

        Each queued burst x's RD comes at an undecided cycle (no sooner than c0 and
        ``issue0``) and no sooner than its bank, bank group and rank allow an RD now
        (next-allowed cycles only grow). A bank open at another row must be precharged
        (no sooner than its PRE is allowed now) and activated tRP later; a closed one
        activated (no sooner than its ACT is allowed now); the RD then follows the ACT by
        tRCD. Before x, its bank reads every burst queued before it to the same row, each
        RD on one bank at least tCCD_L after the last: FR-FCFS, FCFS and capped FR-FCFS
        all take a bank's oldest burst to its open row, or activate the row of its oldest
        burst, whatever the write mode or a refresh closes in between, and a queued read
        leaves only by its RD. Then, the RDs one data burst (tBL) apart, the last of
        releases r_1 <= ... <= r_q is no sooner than r_k + (q - k) tBL for every k, and its
        data ends CL + tBL after it. Each release is ``max(c0 + d, e)``; the bound takes
        the d's and the e's each in their own order, which is never later than the
        releases' (the k-th least of ``max(c0 + d, e)`` is at least the k-th least d plus
        c0 and the k-th least e)."""
        if self._per_bank:
            return None
        act_rd, pre_act, rd_rd = self._gaps()
        core = self._core
        if core is not None:  # (the same terms from the core's arrays, in one compiled call)
            rq_ids, rq_len = core.queues[0], core.queues[1]
            timing = self.timing
            terms = compiled_answer_bounds.queued_read_terms(
                rq_ids, rq_len, core.entries[2], core.entries[7], job.slot, core.nxt, core.gbase,
                core.rbase, core.rows, issue0, act_rd, pre_act, rd_rd, queued, timing.CL, timing.tBL,
                self._drain_floor(), core.opened, *self._hits_first(issue0))
            return None if terms[0] < 0 else terms
        bursts = self._python_queued_reads(job)
        if len(bursts) != queued:  # (every queued burst is found: else count none of them)
            return None
        return self._python_read_terms(bursts, issue0, 0, 0)

    def _bring_bounds_up_to(self, now: int) -> None:
        """Decide the deferred cycles before the first edge at or after ``now`` first (see
        :class:`~.schedule_ahead.SchedulesAhead`), as a question through ``_kept_bound``
        does: the bank terms count every command still to come at c0 or later."""
        if self._deferring:
            self._catch_up_before(now)

    def _newcomer_read_terms(self, message, enters: int, arrives: int, undecided: int) -> tuple[int, int] | None:
        """``(a, b)``: the read ``message``, a client's first request here, is answered no
        sooner than ``max(c0 + a, b)`` from cycle c0, the first edge at or after now, if no
        write pending when its bursts enter can answer it; its bursts enter ``enters`` cycles
        after c0 and at its arrival cycle ``arrives`` at the soonest, the cycles before
        ``undecided`` decided for good (None: not counted here).

        As :meth:`_queued_read_terms`, burst by burst, but it comes behind every burst queued
        now (it arrives later, and a queued read leaves only by its RD): each bank reads all
        those to the burst's row before it, and the burst's own earlier ones to that row,
        tCCD_L apart, the first no sooner than the bank's path to the row from its state
        now (its bank may open the row before the read arrives, for a burst ahead of it:
        so the path counts from c0 and the undecided cycles, not from the arrival). Each RD
        comes once its burst has entered, no sooner than ``c0 + enters`` nor than
        ``max(arrives, undecided)``, and so do the RDs of the read's own earlier bursts to
        its row: it comes tCCD_L after each of those too."""
        if self._per_bank:
            return None
        size = message.size_bytes
        offset = self.store_offset(message.address, size)
        if offset is None or size < 1:
            return None
        act_rd, pre_act, rd_rd = self._gaps()
        entry = max(arrives, undecided)
        core = self._core
        if core is not None:  # (the same terms from the core's arrays, in one compiled call)
            return compiled_answer_bounds.newcomer_read_terms(
                offset, size, self._decode_fields(core), core.queues[0], core.queues[1], core.entries[2], core.nxt,
                core.gbase, core.rbase, core.rows, undecided, entry, enters, act_rd, pre_act, rd_rd, self.timing.CL,
                self.timing.tBL, self._drain_floor(), core.opened, *self._hits_first(undecided))
        decode = self._local_decode
        counts: dict = {}  # (bank, row) -> (bursts queued to it, the read's own before the next)
        bursts = []
        for at, _ in split(offset, size, self.burst_bytes):
            b, row, _ = decode(at)
            queued, own = counts.get((b, row)) or (sum(burst.row == row for burst in self._rq[b]), 0)
            bursts.append((b, row, queued + own, own, None))
            counts[(b, row)] = (queued, own + 1)
        return self._python_read_terms(bursts, undecided, entry, enters)

    def _may_forward(self, message, writes_before) -> bool:
        """Whether a burst of the read ``message``, a client's first request here, might be
        answered from the write queue (see :meth:`~.splitting.SplitsRequests._newcomer_terms`):
        only if one of the writes pending now, the bursts of a write still entering, or the
        writes on their way before it (``writes_before``; True: unknown ones may come first)
        covers one of its bursts (a burst is forwarded only from a write of that very burst)."""
        if writes_before is True:
            return True
        size = message.size_bytes
        offset = self.store_offset(message.address, size)
        if offset is None or size < 1:
            return True  # (a request outside the memory stops the run when taken)
        burst = self.burst_bytes
        first, last = offset & -burst, (offset + size - 1) & -burst  # its bursts' keys, in order
        for write in writes_before:
            at = self.store_offset(write.address, write.size_bytes)
            if at is None or (at & -burst <= last and (at + write.size_bytes - 1) & -burst >= first):
                return True
        entering = self._job
        if entering is not None and entering.message.is_write:
            pieces = entering.pieces
            start, end = pieces[entering.entered][0], pieces[-1][0] + pieces[-1][1]
            if start & -burst <= last and (end - 1) & -burst >= first:
                return True
        core = self._core
        if core is None:  # (the pending writes, those moved on to a bank's command queue too)
            return any(first <= key <= last for key in self._pending_writes)
        if not self._wq_count:
            return False
        return compiled_answer_bounds.write_pending(first, last, core.queues[2], core.queues[3], core.entries[4])

    def _read_line_terms(self, before: int, reads: int) -> tuple[int, int] | None:
        """``(a, b)``: with ``before`` read bursts ahead in line and ``reads`` of a request's
        own, each needing a read-queue slot, the last burst ahead has entered (``reads`` 0),
        or the request is answered (else), no sooner than ``max(c0 + a, b)`` from cycle c0.

        A queued read leaves the read queue only by its RD (None with per-bank command
        queues, which take bursts from it), one RD per tBL on the data bus at the most,
        each at an undecided cycle: so the k-th RD from c0 on comes no sooner than ``(k -
        1) tBL`` after c0 and after the first undecided cycle. Of the bursts that need a
        slot, all but the free slots' wait for as many RDs: the last burst ahead enters no
        sooner than the last of those RDs, and the request's own last burst is read at an
        RD after it (one command a cycle), answered CL + tBL later."""
        if self._per_bank:
            return None
        departures = self._rq_count + before + reads - self.read_queue
        if departures < (0 if reads else 1):
            return None
        burst = self.timing.tBL
        rds = departures + 1 if reads else departures  # (the RD the bound is about, counted from c0 on)
        x = (rds - 1) * burst
        floor = self._drain_floor()
        if floor >= 0:  # (while the writes drain, only the bursts the rows were activated for are read)
            later = rds - self._opened_reads()
            if reads and later < 1:
                later = 1  # (the request's own bursts have no row activated for them yet)
            if later > 0:
                x = max(x, floor + (later - 1) * burst)
        if reads:
            x += self.timing.CL + burst
        return x, self._processed + 1 + x

    def _opened_reads(self) -> int:
        """How many banks hold a row activated for a queued read not yet read."""
        core = self._core
        if core is None:
            return sum(not entry.write for entry in self._opened.values())
        opened = core.opened
        return int(np.count_nonzero((opened[:, 0] >= 0) & (opened[:, 1] == RD)))

    def _hits_first(self, undecided: int) -> tuple[int, int, int]:
        """``(rd_pre, other_d, other_e)`` for :func:`~.compiled_answer_bounds.hits_first`: the
        least RD-to-PRE gap of a bank, and the soonest cycle a bank open at another row can
        be closed other than after its queued hits (``other_d`` cycles after c0 and cycle
        ``other_e``, each with a path to the read's row after it), where FR-FCFS keeps a
        row open while a queued read hits it; ``rd_pre`` -1 where it may close sooner: per-bank
        command queues, another scheduler or page policy, a drain or a refresh under way.

        Otherwise a bank is closed before its hits only by a drain, which starts once the
        write queue holds the high watermark's entries (a read waits: the hits) and ends
        once it holds the low one's, so its RDs come after that many WRs and the WR-to-RD
        gap, or by a refresh, from its due cycle on, whose ACTs wait tRFC (tRFCpb) and an
        RD tRCD more."""
        terms = self._hit_terms
        if terms is None:
            terms = self._hit_terms = self._fixed_hit_terms()
        rd_pre, drain, refresh = terms
        if rd_pre < 0:
            return -1, 0, 0
        core = self._core
        if core is None:
            if self._write_mode or self._refresh_pending or self._refpb_banks:
                return -1, 0, 0
            due = self._refresh_due
        else:
            st = core.st
            if st[WMODE] or st[REF_PENDING] or st[REFPB_SET] >= 0:
                return -1, 0, 0
            due = int(st[REF_DUE])
        return rd_pre, drain if drain < refresh else refresh, min(undecided + drain, max(undecided, due) + refresh)

    def _fixed_hit_terms(self) -> tuple[int, int, int]:
        """``(rd_pre, drain, refresh)`` for :meth:`_hits_first`, which hold for the whole run:
        the least RD-to-PRE gap of a bank (-1: never counted, for the scheduler, the page
        policy or per-bank command queues), the cycles a drain takes from its start to its
        first RD, and from a refresh's command to an RD of a bank it refreshes."""
        if self._per_bank or self.scheduler != "frfcfs" or self.page_policy != "open":
            return -1, 0, 0
        core = self._core  # (the core's watermarks are the controller's)
        high, low = (int(core.cf[C_HIGH]), int(core.cf[C_LOW])) if core is not None else (self._high, self._low)
        act_rd, rd_pre, refresh_act = self._hit_gaps()
        wr_wr, wr_rd = self._drain_gaps()
        drain = (high - low - 1) * wr_wr + max(1, wr_rd) if high > low else 0
        return rd_pre, drain, refresh_act + act_rd

    def _hit_gaps(self) -> tuple[int, int, int]:
        """ACT->RD on a bank, RD->PRE on a bank, and a refresh's command to the next ACT of a
        bank it refreshes (the least such gap), found at the first question."""
        gaps = self._hits_gaps
        if gaps is None:
            def gap(first: int, then: int) -> int:
                return max((cycles for level, k, cycles in self._updates[first] if k == then and level in (0, 1, 2)),
                           default=0)
            gaps = self._hits_gaps = (self._gaps()[0], gap(RD, PRE), max(gap(REF, ACT), gap(REFPB, ACT)))
        return gaps

    def _drain_floor(self) -> int:
        """While the channel drains its writes, the cycles after c0 and after the first
        undecided cycle before which no RD issues but those of the bursts their banks' rows
        were activated for (-1: it does not drain). A drain ends only once the write queue
        holds no more than the low watermark's entries (a write leaves it only by its WR,
        the WRs at least the least WR-to-WR gap of any two banks apart), and the first RD
        after it comes the least WR-to-RD gap after the last WR; while it lasts, each bank
        reads only the burst its row was activated for, and no bank activates a row for a
        read (:meth:`~.command_scheduler.CommandScheduler._refresh_bank`)."""
        core = self._core
        if core is None:
            if not self._write_mode or self._blocked_writes:  # (a blocked write may end a drain)
                return -1
        elif not core.st[WMODE]:
            return -1
        terms = self._drain_terms
        if terms is None:  # (the core's low watermark is the controller's)
            terms = self._drain_terms = (int(core.cf[C_LOW]) if core is not None else self._low, *self._drain_gaps())
        low, wr_wr, wr_rd = terms
        writes = self._wq_count - low
        if writes <= 0:
            return -1  # (it may end at the next choice)
        return (writes - 1) * wr_wr + (wr_rd if wr_rd > 1 else 1)

    def _drain_gaps(self) -> tuple[int, int]:
        """The least cycles from a WR to the next WR, and to the next RD, on any two banks of
        the channel (a bank group's and a bank's own are no shorter than the rank's; with
        more ranks, the least of its own rank's and another's), found at the first question."""
        gaps = self._write_gaps
        if gaps is None:
            levels = (2, 3) if self.timing.ranks > 1 else (2,)

            def gap(then: int) -> int:
                return min(max((cycles for level, k, cycles in self._updates[WR] if k == then and level == at),
                               default=0) for at in levels)
            gaps = self._write_gaps = (gap(WR), gap(RD))
        return gaps

    def _python_read_terms(self, bursts: list, undecided: int, first: int, shift: int) -> tuple[int, int]:
        """``(a, b)`` for read ``bursts`` on the Python path, each ``(bank, row, bursts to that
        row its bank reads first, how many of those enter with it, its queued entry or
        None)``: each RD no sooner than its bank's path to the row (every command after the
        decided cycles, from ``undecided``, and from c0) and the reads before it, nor than
        cycle ``first`` and ``shift`` cycles after c0 plus the reads before it that enter
        with it, nor than the end of a write drain (:meth:`_drain_floor`) but for the burst
        its bank's row was activated for; then the data bus (see :meth:`_queued_read_terms`)."""
        act_rd, pre_act, rd_rd = self._gaps()
        ready = self._ready
        open_rows = self._rows
        floor = self._drain_floor()
        rd_pre, other_d, other_e = self._hits_first(undecided)
        late, lead = [], []
        for b, row, before, own, queued in bursts:
            spacing = before * rd_rd
            e = max(undecided, ready(b, RD))
            held = open_rows[b]
            if held == row:
                d = spacing
            elif held < 0:
                d = act_rd + spacing
                e = max(e, max(undecided, ready(b, ACT)) + act_rd)
            else:
                d = pre_act + act_rd
                e = max(e, max(max(undecided, ready(b, PRE)) + pre_act, ready(b, ACT)) + act_rd)
                hits = sum(burst.row == held for burst in self._rq[b]) if rd_pre >= 0 else 0
                if hits:  # (as compiled_answer_bounds.hits_first)
                    path = (hits - 1) * rd_rd + rd_pre + pre_act + act_rd
                    d = max(d, min(path, other_d))
                    e = max(e, min(max(undecided, ready(b, RD)) + path, other_e))
                d += spacing
            e += spacing
            opened = self._opened.get(b)
            if floor >= 0 and (opened is None or opened is not queued):
                # (as compiled_answer_bounds.drained: that burst may be read before the drain ends)
                drained = before - 1 if opened is not None and not opened.write and before else before
                d = max(d, floor + drained * rd_rd)
                e = max(e, undecided + floor + drained * rd_rd)
            late.append(max(d, shift + own * rd_rd))
            lead.append(max(e, first + own * rd_rd))
        late.sort()
        lead.sort()
        burst = self.timing.tBL
        tail = self.timing.CL + burst
        count = len(bursts)
        a = max(d + (count - 1 - k) * burst for k, d in enumerate(late))
        b = max(e + (count - 1 - k) * burst for k, e in enumerate(lead))
        return a + tail, b + tail

    def _gaps(self) -> tuple[int, int, int]:
        """:meth:`_same_bank_gaps`, found at the first question."""
        gaps = self._bank_gaps
        if gaps is None:
            gaps = self._bank_gaps = self._same_bank_gaps()
        return gaps

    def _decode_fields(self, core):
        """How the compiled core decodes an offset in the store (its configuration's fields,
        as :func:`~.compiled_answer_bounds.newcomer_read_terms` reads them), made once a core."""
        known, fields = self._core_decode
        if known is not core:
            cf = core.cf
            fields = np.zeros(DECODE_SIZE, dtype=np.int64)
            for at, index in ((D_RA, C_RA), (D_RA_MASK, C_RA_MASK), (D_BG, C_BG), (D_BG_MASK, C_BG_MASK),
                              (D_BA, C_BA), (D_BA_MASK, C_BA_MASK), (D_RO, C_RO), (D_RO_MASK, C_RO_MASK),
                              (D_GROUPS, C_GROUPS), (D_PER_GROUP, C_PER_GROUP), (D_BURST, C_BURST)):
                fields[at] = cf[index]
            self._core_decode = (core, fields)
        return fields

    def _same_bank_gaps(self) -> tuple[int, int, int]:
        """The cycles from an ACT to an RD, a PRE to an ACT, and an RD to the next RD, all on
        one bank, under the constraints the scheduler obeys (a constraint left out counts 0)."""
        def gap(first: int, then: int, levels: tuple) -> int:
            return max((cycles for level, k, cycles in self._updates[first] if k == then and level in levels),
                       default=0)
        return gap(ACT, RD, (0,)), gap(PRE, ACT, (0,)), gap(RD, RD, (0, 1, 2))

    def _python_queued_reads(self, job) -> list:
        """``(bank, row, bursts to that row queued before it, 0)`` of each read burst of
        ``job`` in the read queue (the Python path's queues; as :meth:`_python_read_terms`
        takes them, no burst entering)."""
        found = []
        for b in self._job_banks(job):
            rows: dict = {}
            for entry in self._rq[b]:
                row = entry.row
                if entry.job is job:
                    found.append((b, row, rows.get(row, 0), 0, entry))
                rows[row] = rows.get(row, 0) + 1
        return found

    def _job_banks(self, job) -> set:
        """The banks the bursts of ``job`` go to."""
        decode = self._local_decode
        return {decode(offset)[0] for offset, _ in job.pieces}
