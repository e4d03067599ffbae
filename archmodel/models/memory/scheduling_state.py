"""The DRAM controller's scheduling state as plain data: the protocol its compiled core uses.

:class:`SchedulingConfig` holds what does not change during a run (the numbers and tables
the scheduler decides with); :class:`SchedulingState` is a snapshot of everything that
does (next-allowed cycles, open rows, the four-activate windows, refresh, the queues, the
stream, the statistics). :class:`HasSchedulingState` gives
:class:`~.controller.DramController` the public pair ``snapshot()`` / ``restore(state)``
and ``scheduling_config()``: a compiled engine builds its arrays from a snapshot and hands
its state back as one, and never reads the controller's private attributes. A snapshot
holds stream work only: a request taken from the ``req`` port belongs to a client waiting
for its response, and the controller computes ahead only without ports anyway.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator

import attrs

from archmodel.kernel import Level, ModelAssertion, ParameterError

from .command_scheduler import QueuedBurst

QUEUED_FIELDS = ("seq", "arrival", "row", "column", "burst", "size", "kind")
"""The fields of one queued burst in :attr:`SchedulingState.read_queues` (and ``write_queues``):
sequence number, arrival cycle, row, column, burst-aligned address, bytes, and how it was
served so far (0 not yet, 1 row hit, 2 miss, 3 conflict)."""

COUNTERS = ("reads", "writes", "bytes_read", "bytes_written", "forwarded_reads", "row_hits", "row_misses",
            "row_conflicts", "acts", "pres", "preas", "rds", "wrs", "refs", "refpbs", "active_cycles")
"""The controller's counters a snapshot carries, by statistic name."""


@attrs.frozen
class SchedulingConfig:
    """What a scheduling engine needs to know of a controller and that a run does not change.

    Timing in DRAM cycles; ``per_bank_refresh``: a REFpb to one of ``refpb_sets`` bank sets
    falls due every ``tREFIpb``, the sets in turn or, with ``refresh_idle_first``, the least
    targeted set not yet refreshed in the round (else all-bank refresh every tREFI, or none when the state's
    ``refresh_due`` never comes); ``write_high``/``write_low`` are the drain watermarks as queue
    entries; ``row_hit_cap`` is 1 << 62 unless the scheduler caps hits. ``updates[k * banks + b]``
    lists the (index into ``next_allowed``, cycles) pairs that command k on bank b advances;
    ``next_allowed`` has ``COMMAND_COUNT`` slots per bank, then per bank group, then per rank,
    and ``group_base[b]``/``rank_base[b]`` are bank b's group and rank slots there.
    ``address_fields`` is the address map's (shift, mask) of each field (``Ra``, ``Bg``...),
    ``store_fields`` the same of an offset in the channel's store (what a request from ``req``
    is decoded by; the address map's own with one channel).
    """

    banks: int
    banks_per_rank: int
    ranks: int
    bankgroups: int
    banks_per_group: int
    CL: int
    CWL: int
    tBL: int
    tREFI: int
    per_bank_refresh: bool
    refpb_sets: int
    tREFIpb: int
    refresh_idle_first: bool
    faw_cycles: int
    write_high: int
    write_low: int
    read_queue: int
    write_queue: int
    fcfs: bool
    row_hit_cap: int
    burst_bytes: int
    forward_cycles: int
    phase_ps: int
    period_ps: int
    stop_when_done: bool
    lookahead_cycles: int
    updates: tuple
    group_base: tuple
    rank_base: tuple
    rank_of: tuple
    address_fields: dict
    store_fields: dict


@attrs.define
class SchedulingState:
    """A snapshot of a controller's scheduling state, between two cycles of its work.

    ``read_queues[b]``/``write_queues[b]`` are bank b's queued bursts, oldest first, as
    tuples of :data:`QUEUED_FIELDS`; ``opened[b]`` is the sequence number of the queued burst
    bank b's open row was activated for (served before anything else), -1 if none; ``stream`` yields the attached stream's requests not yet
    taken, ``(cycle, address, is_write)`` (None: no stream); it is handed over, not copied,
    so a snapshot is restored once. ``held``: (stops, cycle) of an edge kept after work done
    ahead (the run stops there or goes on), or None. ``counters``, ``read_latency``/``write_latency`` (samples) and
    ``levels`` (``read_queue_depth``/``write_queue_depth`` as value, maximum, area, since)
    are the statistics so far. ``refpb_done`` has bit s set once bank set s was refreshed in
    the round of per-bank refreshes under way (refresh_order idle_first).
    """

    seq: int
    next_allowed: list
    open_rows: list
    hits_run: list
    faw: list
    refresh_due: int
    refresh_pending: bool
    rank_needs_refresh: list
    refpb_next_set: int
    refpb_banks: tuple
    refpb_done: int
    to_close: dict
    write_mode: bool
    open_banks: int
    active_since: int
    read_queues: list
    write_queues: list
    opened: list
    stream: Iterator | None
    held: tuple | None
    counters: dict
    read_latency: array
    write_latency: array
    levels: dict

    @property
    def queued(self) -> int:
        """Bursts waiting in the read and write queues."""
        return sum(map(len, self.read_queues)) + sum(map(len, self.write_queues))


def level_figures(level: Level) -> tuple[int, int, int, int]:
    """A Level's (value, maximum, area, since), its running integral included: a compiled
    engine continues it exactly."""
    return level.figures()


def set_level_figures(level: Level, figures) -> None:
    """Set a Level from :func:`level_figures`' tuple."""
    level.resume(tuple(map(int, figures)))


class HasSchedulingState:
    """The snapshot/restore half of :class:`~.controller.DramController` (see its docstring)."""

    def scheduling_config(self) -> SchedulingConfig:
        """The fixed numbers and tables the scheduler decides with (valid once the run started)."""
        t = self.timing
        return SchedulingConfig(
            banks=self._bank_count, banks_per_rank=t.banks, ranks=t.ranks, bankgroups=t.bankgroups,
            banks_per_group=t.banks_per_group, CL=t.CL, CWL=t.CWL, tBL=t.tBL, tREFI=t.tREFI,
            per_bank_refresh=self.refresh == "per_bank", refpb_sets=self._refpb_sets, tREFIpb=t.tREFIpb,
            refresh_idle_first=self._idle_first,
            faw_cycles=self._faw_cycles, write_high=self._high, write_low=self._low, read_queue=self.read_queue,
            write_queue=self.write_queue, fcfs=self._fcfs, row_hit_cap=self._cap, burst_bytes=self.burst_bytes,
            forward_cycles=self.forward_cycles, phase_ps=self._phase, period_ps=self._period,
            stop_when_done=self.stop_when_done, lookahead_cycles=self.lookahead_cycles,
            updates=tuple(map(tuple, self._compiled)), group_base=tuple(base[1] for base in self._bases),
            rank_base=tuple(base[2] for base in self._bases), rank_of=tuple(self._rank_of),
            address_fields=dict(self.address_map.fields), store_fields=dict(self._local_map.fields))

    def snapshot(self) -> SchedulingState:
        """The scheduling state now (from the compiled core while it owns it), to :meth:`restore`
        here or into an identical controller whose simulator has reached the same time."""
        if self._job is not None or self._order:
            raise ModelAssertion(f"{self.path}: a snapshot holds stream work only, and requests from 'req' are "
                                 "in flight")
        if self._core is not None:
            return self._core.snapshot(self._held)
        if self._per_bank:
            raise ParameterError(f"{self.path}: a snapshot holds the shared queue's state, not queue per_bank's")
        queues = [[[(e.seq, e.arrival, e.row, e.column, e.address, e.size, e.kind) for e in queue] for queue in side]
                  for side in (self._rq, self._wq)]
        stream = self._stream
        if self._stream_head is not None:
            stream = itertools.chain([self._stream_head], stream)
        return SchedulingState(
            seq=self._seq, next_allowed=list(self._nxt), open_rows=list(self._rows), hits_run=list(self._hits_run),
            faw=[list(w) for w in self._faw], refresh_due=self._refresh_due, refresh_pending=self._refresh_pending,
            rank_needs_refresh=list(self._rank_needs_refresh), refpb_next_set=self._refpb_next_set,
            refpb_banks=self._refpb_banks, refpb_done=self._refpb_done, to_close=dict(self._to_close),
            write_mode=self._write_mode,
            open_banks=self._open_banks, active_since=self._active_since, read_queues=queues[0],
            write_queues=queues[1], opened=[self._opened[b].seq if b in self._opened else -1
                                            for b in range(self._bank_count)], stream=stream, held=self._held, **self.statistics_figures())

    def statistics_figures(self) -> dict:
        """The statistics a snapshot carries, as :class:`SchedulingState` fields."""
        return dict(counters={name: getattr(self, name).value for name in COUNTERS},
                    read_latency=array("d", self.read_latency.samples),
                    write_latency=array("d", self.write_latency.samples),
                    levels={name: level_figures(getattr(self, name)) for name in ("read_queue_depth",
                                                                                   "write_queue_depth")})

    def restore(self, state: SchedulingState) -> None:
        """Continue from ``state`` (a :meth:`snapshot` of this or an identical controller, taken
        at the simulated time now): the queues, banks, refresh, stream and statistics become
        the snapshot's, and the controller looks at its next edge (an extra edge does no work
        twice). With a compiled core in use, a new one takes the state."""

        if len(state.open_rows) != self._bank_count or len(state.next_allowed) != len(self._nxt):
            raise ParameterError(f"{self.path}: the snapshot is of a controller with {len(state.open_rows)} banks, "
                                 f"not {self._bank_count}")
        self._bounds_changes += 1  # (the bounds kept for the lookahead no longer hold)
        self._seq = state.seq
        self._nxt[:] = state.next_allowed
        self._rows[:] = state.open_rows
        self._hits_run[:] = state.hits_run
        self._faw = [list(w) for w in state.faw]
        self._refresh_due, self._refresh_pending = state.refresh_due, state.refresh_pending
        self._rank_needs_refresh = list(state.rank_needs_refresh)
        self._refpb_next_set, self._refpb_banks = state.refpb_next_set, tuple(state.refpb_banks)
        self._refpb_done = state.refpb_done
        self._to_close = dict(state.to_close)
        self._write_mode = state.write_mode
        self._drain_seen = -1  # (the drain is decided afresh)
        self._open_banks, self._active_since = state.open_banks, state.active_since
        self._pending_writes = {}
        by_seq = {}
        for write, side, queues, active in ((False, state.read_queues, self._rq, self._rq_active),
                                            (True, state.write_queues, self._wq, self._wq_active)):
            active.clear()
            for b, items in enumerate(side):
                queues[b] = []
                for seq, arrival, row, column, burst, size, kind in items:
                    entry = QueuedBurst(seq, arrival, b, row, column, write, None, burst, size)
                    entry.kind = kind
                    by_seq[seq] = entry
                    queues[b].append(entry)
                    if write:
                        self._pending_writes[burst] = self._pending_writes.get(burst, 0) + 1
                if items:
                    active[b] = None
        self._opened = {b: by_seq[seq] for b, seq in enumerate(state.opened) if seq >= 0}
        self._rq_count = sum(map(len, self._rq))
        self._wq_count = sum(map(len, self._wq))
        self._stream = state.stream
        self._stream_head = None if state.stream is None else next(state.stream, None)
        self._held = state.held
        for name, value in state.counters.items():
            getattr(self, name).value = value
        self.read_latency.samples = array("d", state.read_latency)
        self.write_latency.samples = array("d", state.write_latency)
        for name, figures in state.levels.items():
            set_level_figures(getattr(self, name), figures)
        # The candidates and the best command are derived: rebuilt from the restored queues.
        self._write_mode = state.write_mode
        self._rebuild()
        self._best = None
        self._dirty = True
        if self._core is not None:
            self._core = type(self._core)(self, self.snapshot_for_core(), ports=self._core.ports)
        if self.sim is not None:
            self.wake_at(self.sim.now + 1)

    def snapshot_for_core(self) -> SchedulingState:
        """The Python path's snapshot, whoever owns the state (a compiled core starting from it)."""
        core, self._core = self._core, None
        try:
            return self.snapshot()
        finally:
            self._core = core
