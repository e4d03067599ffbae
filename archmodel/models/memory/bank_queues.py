"""Per-bank command queues for :class:`~.controller.DramController` (``queue = "per_bank"``), a
mixin of the controller, which holds the state: the organisation DRAMSim3 uses.

Requests wait in the controller's read and write queues (transactions) as with the shared
queue, and the write drain between the watermarks decides which of the two feeds the banks.
Each DRAM cycle, after the command of that cycle, the oldest burst of the queue being served
whose bank's command queue has room (``command_queue`` entries, 8 as DRAMSim3's default) moves
into it, one burst per cycle, and leaves the read or write queue. Commands are chosen round robin
over the banks, starting at the bank after the one that last issued: in each bank's queue, the
first burst in queue order whose next command can issue this cycle goes. Within a bank:

- a closed bank activates the row of the first burst in its queue;
- a burst to the open row reads or writes, a write only if no earlier read of the same burst
  waits in the queue (DRAMSim3's write-after-read check);
- a precharge is for the first burst in the queue only, and only if no burst in the queue hits
  the open row or the bank has served ``row_hit_cap`` column commands since its activation
  (DRAMSim3 caps at 4, the default).

Reads and writes already in a bank's queue go on whatever the mode, so a drain does not strand
them. An all-bank refresh, when due, precharges the rank and refreshes it before any other
command (DRAMSim3's "as soon as possible"). Leaves out: DRAMSim3's per-rank queue structure,
its own drain rule (a full write buffer, drained to empty), and its stopping a drain at a write
whose address a pending read has (reads of pending writes are answered from the write queue
here); open page and all-bank refresh (or none) only.
"""

from __future__ import annotations

from .commands import ACT, PRE, PREA, RD, REF, WR
from .splitting import NEVER

_NEVER = NEVER


class PerBankQueues:
    """The per-bank command queues' arbitration and feeding (see the module docstring). The
    controller provides ``_cq`` (a list per bank), ``_cq_count``, ``command_queue``, the read
    and write queues, ``_dequeue``, ``_rows``, ``_hits_run``, ``_cap``, ``_nxt``,
    ``_bases``, ``_refresh_pending``, ``_refresh_candidate``, ``_drain_flips`` and
    ``_write_mode``."""

    def _bank_options(self, b: int) -> tuple:
        """The commands bank b may issue, as (command, burst) in the order of its queue (the
        first of them that can issue goes). They change only when the bank's queue or state
        does, so they are kept until then in ``_options``."""
        options = self._options.get(b)
        if options is not None:
            return options
        queue = self._cq[b]
        row = self._rows[b]
        if not queue:
            options = ()
        elif row < 0:
            options = ((ACT, queue[0]),)  # every burst needs it; the first in the queue goes
        else:
            found = []
            read = write = None
            hits = False
            for i, e in enumerate(queue):
                if e.row != row:
                    continue
                hits = True
                if e.write:
                    if write is None and not any(not x.write and x.address == e.address for x in queue[:i]):
                        write = e
                        found.append((WR, e))
                elif read is None:
                    read = e
                    found.append((RD, e))
            if queue[0].row != row and (not hits or self._hits_run[b] >= self._cap):
                found.insert(0, (PRE, queue[0]))  # the head is first in queue order
            options = tuple(found)
        self._options[b] = options
        return options

    def _choose_per_bank(self, c: int) -> None:
        """The command the round robin issues first from cycle c on: the earliest cycle any
        bank has a command ready, then the first such bank after the last that issued, then
        the first such command in that bank's queue."""
        self._dirty = False
        if self._refresh_pending:
            self._best = self._refresh_candidate(c)
            return
        nxt = self._nxt
        bases = self._bases
        n = self._bank_count
        best = None
        best_t = _NEVER
        start = self._rr + 1
        for i in range(n):
            b = (start + i) % n
            if not self._cq[b]:
                continue
            bb, gb, rb = bases[b][:3]
            for k, entry in self._bank_options(b):
                t = max(nxt[bb + k], nxt[gb + k], nxt[rb + k], c)
                if t < best_t:
                    best_t = t
                    best = (t, entry.seq, b, k, entry)
                    if t == c:
                        break
            if best_t == c:
                break  # no later bank in the round, nor a later command of this one, comes first
        self._best = best

    def _move_to_bank(self, c: int) -> None:
        """Move the oldest burst of the queue being served whose bank's command queue has room
        into it (one per cycle), after the mode is decided."""
        if self._drain_flips():
            self._write_mode = not self._write_mode
        write = self._write_mode
        queues = self._wq if write else self._rq
        depth = self.command_queue
        oldest = None
        for b in (self._wq_active if write else self._rq_active):
            if len(self._cq[b]) < depth:
                e = queues[b][0]
                if oldest is None or e.seq < oldest.seq:
                    oldest = e
        if oldest is None:
            self._move_due = _NEVER
            return
        b = oldest.bank
        self._dequeue(oldest, c)
        self._cq[b].append(oldest)
        self._cq_count += 1
        self.command_queue_depth.set(self._cq_count, at_ps=self._phase + c * self._period)
        self._options.pop(b, None)
        self._dirty = True
        self._move_due = c + 1  # perhaps another next cycle (decided then, with the mode)

    def _leave_bank_queue(self, b: int, entry, c: int) -> None:
        """A burst's column command issued: it leaves its bank's command queue."""
        self._cq[b].remove(entry)
        self._cq_count -= 1
        self.command_queue_depth.set(self._cq_count, at_ps=self._phase + c * self._period)

    def _per_bank_issued(self, k: int, b: int) -> None:
        """Bookkeeping after command k on bank b: the bank's (or the rank's) options are stale;
        a command from a queue moves the round robin on."""
        if k == PREA or k == REF:
            self._options.clear()
        else:
            self._options.pop(b, None)
            self._rr = b
