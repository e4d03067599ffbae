"""The DRAM scheduling core both controllers are built on (a mixin of
:class:`~.controller.DramController` and :class:`~.indram_cache.InDramCacheController`, which
hold the state): the per-bank read and write queues and their counts, reads answered from a
pending write, the write drain between two watermarks, the order of a write behind an older
read of its burst (where a controller keeps it), the bank activity that background energy is
computed from, and the command listeners.

Both also share the next-allowed cycles (:mod:`.next_allowed`) and the choice among one
candidate command per bank (:mod:`.command_choice`); each computes its banks' candidates
(DramController's FR-FCFS, :mod:`.command_scheduler`, or its per-bank command queues,
:mod:`.bank_queues`; the in-DRAM cache's through its tag store, with relocations first,
:mod:`.indram_cache`). A change to the queues, the drain rule or the bank activity is made
here, once, for both.
"""

from __future__ import annotations

import math
from typing import Callable

from archmodel.kernel import ParameterError, Registry

from .response_order import ResponseOrder


def _ramulator2(write_high: float, write_low: float, entries: int) -> tuple[int, int]:
    return math.floor(write_high * entries) + 1, math.ceil(write_low * entries) - 1


def _inclusive(write_high: float, write_low: float, entries: int) -> tuple[int, int]:
    return max(1, int(write_high * entries)), int(write_low * entries)


DRAIN_RULES: Registry[Callable[[float, float, int], tuple[int, int]]] = Registry("write-drain rule", {
    "ramulator2": _ramulator2, "inclusive": _inclusive})
"""How the write-drain watermarks round (see :func:`drain_watermarks`): each rule's
``(write_high, write_low, entries) -> (start fill, end fill)``."""


def drain_watermarks(write_high: float, write_low: float, entries: int, rule: str = "ramulator2") -> tuple[int, int]:
    """The write-queue fills (entries) at which a write drain starts and at which it ends.

    ``ramulator2``, as Ramulator 2 decides them: a drain starts once the queue holds more than
    ``write_high`` of its entries (26 or more of 32 at 0.8) and ends once it holds fewer than
    ``write_low`` of them (6 or fewer at 0.2) while reads wait. ``inclusive``, the rule this
    project had first and the in-DRAM cache still uses: a drain starts once the queue holds
    ``write_high`` of its entries rounded down (25 of 32, at least one) and ends at
    ``write_low`` of them rounded down (6 of 32)."""
    watermarks = DRAIN_RULES.get(rule)
    if watermarks is None:
        raise ParameterError(f"unknown write-drain rule '{rule}'", hint=DRAIN_RULES.hint(rule))
    return watermarks(write_high, write_low, entries)


class DramSchedulingCore:
    """The queues, drain, bank activity and listeners of a DRAM controller (see the module
    docstring). The controller provides ``read_queue``, ``write_queue``, ``write_high``,
    ``write_low`` and ``forward_cycles``, the statistics ``reads``, ``forwarded_reads``,
    ``read_latency``, ``read_queue_depth``, ``write_queue_depth`` and ``active_cycles``, its
    clock's ``_phase`` and ``_period`` and ``elapsed_cycles``; it calls
    :meth:`_setup_scheduling_core` in its setup.

    A queued burst is any object with ``bank`` and ``write``; the controller names the burst
    it is a piece of by a ``key`` (an address, or bank, row and column) for the pending reads
    and writes, so that a read of a burst a queued write will write is answered from the write
    queue and, where the controller keeps the order, a write waits for an older read of its
    burst."""

    def _setup_scheduling_core(self, banks: int, drain_rule: str = "ramulator2",
                               write_after_read: bool = False) -> None:
        """Empty queues for ``banks`` banks, the drain watermarks by ``drain_rule``, closed
        banks. ``write_after_read``: a write never goes before an older read of its burst (a
        drain neither starts nor goes on with only such writes queued)."""
        if self.write_low >= self.write_high:
            raise ParameterError(f"{self.path}: write_low ({self.write_low}) must be below write_high ({self.write_high})",
                                 hint="the drain runs from write_high down to write_low")
        self._rq: list[list] = [[] for _ in range(banks)]
        self._wq: list[list] = [[] for _ in range(banks)]
        # The banks with a non-empty read or write queue, in the order they became so.
        self._rq_active: dict[int, None] = {}
        self._wq_active: dict[int, None] = {}
        self._rq_count = self._wq_count = 0
        self._high, self._low = drain_watermarks(self.write_high, self.write_low, self.write_queue, drain_rule)
        self._write_mode = False
        # See _drain_flips: a scheduler asking often may skip asking while nothing changed.
        self._queue_changes = 0  # changes of the queue counts so far
        self._drain_seen = -1  # _queue_changes when the scheduler last asked
        self._drain_recheck = self._low >= self._high  # marks that round to one fill: always ask
        self._pending_writes: dict = {}  # burst key -> queued writes of it
        # Write-after-read: a queued read of a burst is older than every queued write of it
        # (a read arriving while a write of its burst waits is forwarded, never queued), so a
        # write may issue only once no read of its burst is queued; _blocked_writes counts
        # the queued writes that must wait so.
        self._keeps_write_after_read = write_after_read
        self._pending_reads: dict = {}  # burst key -> queued reads of it (write_after_read only)
        self._blocked_writes = 0
        self._order = ResponseOrder()
        self._job = None  # the request on req whose bursts are entering the queues
        self._seq = 0
        # Ramulator 2's active buffer: bank -> the burst its open row was activated for, served
        # next in its bank whatever the mode, so a drain does not precharge the row first.
        self._opened: dict = {}
        self._open_banks = 0
        self._active_since = 0
        self._listeners: list = []
        self.has_command_listeners = False
        """Whether :meth:`add_command_listener` registered any (asked after each call of a
        compiled core, where building :attr:`command_listeners` would cost more: an attribute,
        not worked out at each call)."""

    # -- the queues ---------------------------------------------------------------------
    def _queue_burst(self, entry, key, c: int) -> None:
        """Put one burst into its bank's read or write queue (which has room) at cycle c."""
        b = entry.bank
        if entry.write:
            queue = self._wq[b]
            if not queue:
                self._wq_active[b] = None
            queue.append(entry)
            self._wq_count += 1
            self._queue_changes += 1
            self.write_queue_depth.set(self._wq_count, at_ps=self._phase + c * self._period)
            self._pending_writes[key] = self._pending_writes.get(key, 0) + 1
            if key in self._pending_reads:
                self._blocked_writes += 1
        else:
            queue = self._rq[b]
            if not queue:
                self._rq_active[b] = None
            queue.append(entry)
            self._rq_count += 1
            self._queue_changes += 1
            self.read_queue_depth.set(self._rq_count, at_ps=self._phase + c * self._period)
            if self._keeps_write_after_read:
                self._pending_reads[key] = self._pending_reads.get(key, 0) + 1

    def _dequeue(self, entry, c: int) -> None:
        """A burst leaves its bank's read or write queue at cycle c (served, or moved on to a
        command queue: it stays pending until :meth:`_burst_served`)."""
        b = entry.bank
        if entry.write:
            queue = self._wq[b]
            queue.remove(entry)
            if not queue:
                del self._wq_active[b]
            self._wq_count -= 1
            self._queue_changes += 1
            self.write_queue_depth.set(self._wq_count, at_ps=self._phase + c * self._period)
        else:
            queue = self._rq[b]
            queue.remove(entry)
            if not queue:
                del self._rq_active[b]
            self._rq_count -= 1
            self._queue_changes += 1
            self.read_queue_depth.set(self._rq_count, at_ps=self._phase + c * self._period)

    def _burst_served(self, write: bool, key) -> None:
        """A burst's RD or WR issued: it is no longer pending."""
        if write:
            left = self._pending_writes[key] - 1
            if left:
                self._pending_writes[key] = left
            else:
                del self._pending_writes[key]
        elif self._keeps_write_after_read:
            left = self._pending_reads[key] - 1
            if left:
                self._pending_reads[key] = left
            else:
                del self._pending_reads[key]
                self._blocked_writes -= self._pending_writes.get(key, 0)
                self._queue_changes += 1

    def _forward_read(self, c: int, job) -> None:
        """Answer a read burst from the write queue (a queued write will write it): done
        ``forward_cycles`` after cycle c, without a DRAM access; ``job`` is its request on
        req (None for a burst of the controller's own feed, which completes it itself)."""
        self.forwarded_reads.add()
        self.reads.add()
        self.read_latency.sample(self.forward_cycles)
        if job is not None:
            self._order.piece_done(job, c + self.forward_cycles)

    def queue_depths(self) -> tuple[int, int]:
        """(reads, writes) queued now, for tests and monitors."""
        return self._rq_count, self._wq_count

    # -- the write drain ----------------------------------------------------------------
    def _drain_flips(self) -> bool:
        """Whether the queue being served changes now: a drain starts once the write queue
        holds the high watermark's entries or no read waits, and ends once it holds no more
        than the low watermark's while reads wait, or no write may go (none queued, or each
        waits for an older read of its burst).

        It depends on the counts alone, and a flip never undoes itself while they stay (the
        low mark is below the high one), so a scheduler that asks several times a cycle may
        skip asking while ``_queue_changes`` is what it was when it last asked
        (``_drain_seen``), unless ``_drain_recheck`` (marks that round to one fill)."""
        wq = self._wq_count
        writable = wq - self._blocked_writes
        if self._write_mode:
            return writable == 0 or (wq <= self._low and self._rq_count > 0)
        return writable > 0 and (wq >= self._high or self._rq_count == 0)

    # -- bank activity (background energy) ---------------------------------------------
    def _bank_opens(self, c: int) -> None:
        """A closed bank activates a row at cycle c."""
        if self._open_banks == 0:
            self._active_since = c
        self._open_banks += 1

    def _bank_closes(self, c: int) -> None:
        """An open bank is precharged at cycle c."""
        self._open_banks -= 1
        if self._open_banks == 0:
            self.active_cycles.add(c - self._active_since)

    @property
    def banks_open_since(self) -> int | None:
        """The cycle since which at least one bank has been open, None while all are closed."""
        return self._active_since if self._open_banks else None

    @property
    def active_cycles_so_far(self) -> int:
        """Cycles with at least one bank open up to now, the stretch still open included: the
        active standby time of background energy (:meth:`.energy.DramEnergy.total_nj`)."""
        since = self.banks_open_since
        active = self.active_cycles.value
        return active if since is None else active + self.elapsed_cycles - since

    # -- who watches the command bus ---------------------------------------------------
    def add_command_listener(self, listener) -> None:
        """Call ``listener(cycle, kind, rank, bankgroup, bank, flat_bank, row, column)`` for
        every command issued (the fields of :class:`~.commands.DramCommand`), as it is issued:
        how a :class:`~.checker.DramTimingChecker` watches without a channel."""
        self._listeners.append(listener)
        self.has_command_listeners = True

    @property
    def command_listeners(self) -> tuple:
        """The listeners :meth:`add_command_listener` registered, in order."""
        return tuple(self._listeners)
