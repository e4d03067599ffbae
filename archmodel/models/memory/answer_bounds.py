"""When a DRAM channel can answer a read whose bursts wait in its read queue, from the banks
those bursts need (a mixin of :class:`~.controller.DramController`, which holds the state).

The lookahead asks a memory when it can next answer a client (see
:meth:`~.splitting.SplitsRequests.earliest_send_ps`). Counting the client's queued bursts
as if they were alone on the data bus (each RD at the first undecided cycle, one burst per
tBL) is sound but far too early once the queue is busy: a burst whose bank holds another
row needs a PRE and an ACT before its RD, and the bank serves the bursts queued before it
to the same row first. This module counts both, from the bank state the scheduler has
decided so far, on the Python path and in the compiled core alike.
"""

from __future__ import annotations

import numpy as np

from .commands import ACT, PRE, RD
from .compiled_answer_bounds import queued_read_terms


class BoundsQueuedReads:
    """A read's answer bound from the banks of its queued bursts (see the module docstring).

    The controller provides ``timing``, ``_updates`` (its next-allowed updates per command:
    :mod:`.next_allowed`), ``_local_decode``, ``_per_bank``, and the bank state: on the
    Python path ``_rq`` (each bank's queued read bursts, oldest first), ``_rows`` and
    ``_ready(b, k)``; with the compiled core ``_core`` (its arrays) and ``_slot_jobs`` (the
    request in each job slot)."""

    _bank_gaps = None  # (ACT->RD, PRE->ACT, RD->RD on one bank), found at the first question
    _bank_terms = None  # the compiled call's (a, b), an array made at its first question

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
        gaps = self._bank_gaps
        if gaps is None:
            gaps = self._bank_gaps = self._same_bank_gaps()
        act_rd, pre_act, rd_rd = gaps
        core = self._core
        if core is not None:  # (the same terms from the core's arrays, in one compiled call)
            rq_ids, rq_len = core.queues[0], core.queues[1]
            terms = self._bank_terms
            if terms is None:
                terms = self._bank_terms = np.zeros(2, dtype=np.int64)
            if not queued_read_terms(rq_ids, rq_len, core.entries[2], core.entries[7], self._slot_jobs.index(job),
                                     core.nxt, core.gbase, core.rbase, core.rows, issue0, act_rd, pre_act, rd_rd,
                                     queued, self.timing.CL, self.timing.tBL, terms):
                return None
            return int(terms[0]), int(terms[1])
        bursts = self._python_queued_reads(job)
        if len(bursts) != queued:  # (every queued burst is found: else count none of them)
            return None
        ready = self._ready
        open_rows = self._rows
        late, lead = [], []
        for b, row, before in bursts:
            spacing = before * rd_rd
            e = max(issue0, ready(b, RD))
            held = open_rows[b]
            if held == row:
                d = spacing
            elif held < 0:
                d = act_rd + spacing
                e = max(e, max(issue0, ready(b, ACT)) + act_rd)
            else:
                d = pre_act + act_rd + spacing
                e = max(e, max(max(issue0, ready(b, PRE)) + pre_act, ready(b, ACT)) + act_rd)
            late.append(d)
            lead.append(e + spacing)
        late.sort()
        lead.sort()
        burst = self.timing.tBL
        tail = self.timing.CL + burst
        a = max(d + (queued - 1 - k) * burst for k, d in enumerate(late))
        b = max(e + (queued - 1 - k) * burst for k, e in enumerate(lead))
        return a + tail, b + tail

    def _same_bank_gaps(self) -> tuple[int, int, int]:
        """The cycles from an ACT to an RD, a PRE to an ACT, and an RD to the next RD, all on
        one bank, under the constraints the scheduler obeys (a constraint left out counts 0)."""
        def gap(first: int, then: int, levels: tuple) -> int:
            return max((cycles for level, k, cycles in self._updates[first] if k == then and level in levels),
                       default=0)
        return gap(ACT, RD, (0,)), gap(PRE, ACT, (0,)), gap(RD, RD, (0, 1, 2))

    def _python_queued_reads(self, job) -> list:
        """``(bank, row, bursts to that row queued before it)`` of each read burst of ``job``
        in the read queue (the Python path's queues)."""
        found = []
        for b in self._job_banks(job):
            rows: dict = {}
            for entry in self._rq[b]:
                row = entry.row
                if entry.job is job:
                    found.append((b, row, rows.get(row, 0)))
                rows[row] = rows.get(row, 0) + 1
        return found

    def _job_banks(self, job) -> set:
        """The banks the bursts of ``job`` go to."""
        decode = self._local_decode
        return {decode(offset)[0] for offset, _ in job.pieces}
