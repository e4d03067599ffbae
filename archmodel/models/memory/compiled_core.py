"""A compiled scheduling core for :class:`~.controller.DramController` (numba), for long traces
and for the requests of its ports.

When the controller schedules ahead of simulated time, nothing outside sees its work cycle by
cycle, so the work of one tick can run in compiled code. This module holds the same state the
Python path keeps (per-bank open rows, next-allowed cycles per command, the four-activate
windows, refresh, the read and write queues) in numpy arrays and one ``@njit`` function that
does the work of the controller's cycles, with the same decisions in the same order: FR-FCFS
(and FCFS, FR-FCFS with a row-hit cap), open page, all-bank or per-bank refresh (or none), write drain
between the watermarks (either rule of ``write_drain``) with the bursts whose rows were
activated for them served first, read forwarding from pending writes, one or more ranks. The
commands it issues come back as records (cycle, command, bank, row, column) that the
controller hands to its command listeners; counters, latency samples and queue-depth levels
are updated exactly as the Python path updates them. Anything else (closed or adaptive page,
per-bank queues, waveforms, a watched command port) stays on the Python path. It serves two feeds:

- an *attached stream* with no port and no observer (:meth:`CompiledCore.advance`): the
  cycles of one tick, up to ``lookahead_cycles`` past it, as ``DramController.tick``'s
  run-ahead loop;
- the *ports* (``ports=True``, :meth:`CompiledCore.feed` and :meth:`CompiledCore.schedule`):
  the controller takes each request from ``req`` and checks, stores or reads its bytes in
  Python; the core cuts it into bursts (as :func:`~.response_order.split`), queues them as room
  allows, schedules the cycles the controller's lookahead allows
  (:mod:`.schedule_ahead`), and returns each burst's completion (job slot, cycle), which the
  controller's :class:`~.response_order.ResponseOrder` turns into responses at their own cycles.

It follows the controller's public protocol (see :class:`~.controller.DramController`):

- *compute ahead*: only as far as the controller allows, which is while nothing outside can
  see or change its work (``lookahead_cycles`` on a stream; on the ports, the kernel's
  ``Simulator.undisturbed_until_ps``, the run's ``limit_ps`` and
  ``Simulator.watchdog_deadline_ps``, or the cycle that leaves room for a request waiting on
  ``req``);
- *settle*: every call hands its commands to the controller's listeners and its latency
  samples to its statistics; its counts and queue-depth levels too on a stream
  (:meth:`CompiledCore.flush`), while fed through the ports they add up in the arrays until
  the run returns, when the controller's ``settle`` has the core hand them over
  (:meth:`CompiledCore.hand_over`);
- *snapshot/restore*: the core is built from the controller's ``scheduling_config()`` and a
  ``snapshot()`` (:class:`~.scheduling_state.SchedulingState`), owns that state from then on,
  and gives it back as a snapshot (:meth:`CompiledCore.snapshot`), which the controller's
  ``restore`` takes on either engine. It reads only the controller's public attributes (its
  statistics, queue-depth Levels included through ``figures()``/``resume()``).

Used by the controller's ``engine`` parameter. numba is a dependency of archmodel; on a
platform where it cannot be installed, ``auto`` uses the Python path.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from archmodel.kernel import ParameterError, compiled

from .commands import PREA, RD, REF, WR
from .compiled_core_entry import run_packed as _run
from .compiled_core_layout import (ACTIVE_SINCE, BUF_LEN, C_BA, C_BANKS, C_BANKS_PER_RANK, C_BG, C_BURST, C_CAP, C_CL,
                                   C_CO, C_CWL, C_FAW, C_FCFS, C_FORWARD, C_GROUPS, C_HIGH, C_LOW, C_PER_GROUP,
                                   C_PACK, C_PERIOD, C_PHASE, C_PORTS, C_RA, C_RANKS, C_REFPB, C_REFPB_SETS, C_RO,
                                   C_RQ_CAP, C_TBL, C_TREFI, C_TREFIPB, C_REFPB_IDLE_FIRST, REFPB_DONE, REFPB_NEXT,
                                   REFPB_RANKS, REFPB_SET,
                                   C_WATCH_DONE, C_WQ_CAP, CALL_OUTPUTS, CONFIG_SIZE, COUNTER_END, COUNTER_FIRST,
                                   COUNTER_SLOTS, DIRTY, EXHAUSTED,
                                   FEED_CYCLE, FEED_N, FEED_OFFSET, FEED_SIZE, FEED_SLOT, FEED_WRITE, FREE_TOP, HAS_BEST, HEAD, N_CMD, N_RSAMPLE,
                                   N_WSAMPLE,
                                   OPEN_BANKS, OUT_C, OUT_PHASE, OUT_WAKE, POS, REF_DUE, REF_PENDING,
                                   RL_SINCE, RL_VALUE, RQC, SEQ, STATE_SIZE, UNDERRUN, WL_SINCE, WL_VALUE, WMODE, WQC,
                                   _NEVER)
from .scheduling_state import SchedulingState


def available() -> bool:
    """True when numba can run the compiled core (installed, in the tested versions)."""
    return compiled.available()


def unsupported_reason(controller) -> str | None:
    """Why the compiled core cannot serve this controller's configuration, or None."""
    why = compiled.unavailable_reason()
    if why is not None:
        return why
    if controller.queue != "shared":
        return f"queue {controller.queue} (the compiled core does the shared queue)"
    if controller.page_policy != "open":
        return f"page_policy {controller.page_policy} (the compiled core does open page)"
    return None


STREAM_CHUNK = 1 << 15
"""Stream requests decoded into the core's arrays at a time (a test makes it tiny to check
that refilling in the middle of a cycle changes nothing)."""



PORT_BUFFER = 64
"""Bursts the buffer of a core fed through the ports holds at first (a request of more makes
it larger): a stream's chunk would cost every channel of a system its allocation."""

SAMPLE_CALLS = 16
"""Fed through the ports, the calls whose latency samples the arrays hold at the least before
the core hands them to the statistics (nearly every call records a read's: handing them over
at each call cost more than its other outputs together; a test makes it tiny)."""


@functools.lru_cache(maxsize=64)
def _update_tables(updates: tuple) -> tuple:
    """The next-allowed updates of each command as the compiled function reads them: start
    offsets, then the entries' indices and cycles, flat (never written, so the cores of
    identical channels share them)."""
    ptr, idx, cyc = [0], [], []
    for entry in updates:
        idx += [i for i, _ in entry]
        cyc += [v for _, v in entry]
        ptr.append(len(idx))
    # (not flagged read-only: numba would compile the function again for that array type)
    return np.array(ptr, dtype=np.int64), np.array(idx, dtype=np.int64), np.array(cyc, dtype=np.int64)


def kernel():
    """The compiled core (compiled on first use, then loaded from numba's on-disk cache)."""
    return _run.bind()


class CompiledCore:
    """The controller's scheduling state in arrays, and the driver of the compiled core.

    Built from a controller's :meth:`~.controller.DramController.scheduling_config` and a
    :meth:`~.controller.DramController.snapshot`; from then on it owns the scheduling state
    (the queues, bank state and stream), answers :attr:`idle` and :attr:`banks_open_since`
    for the controller, and hands the state back as a snapshot (:meth:`snapshot`). It calls
    the controller's command listeners after every call, and updates its statistics then or,
    fed through the ports, when a run returns (:meth:`hand_over`). It reads only the
    controller's public attributes.
    ``chunk`` is how many stream requests are decoded into the arrays at a time.
    """

    free: np.ndarray  # the free entries, a stack below st[FREE_TOP] (set by _load_queues)

    def __init__(self, controller, state, chunk: int | None = None, ports: bool = False):
        self.dram = d = controller
        self.ports = ports
        self.config = g = d.scheduling_config()
        n = g.banks
        self.run = kernel()
        self.chunk = max(1, chunk or STREAM_CHUNK)
        cf = np.zeros(CONFIG_SIZE, dtype=np.int64)
        cf[C_BANKS] = n
        cf[C_BANKS_PER_RANK] = g.banks_per_rank
        cf[C_RANKS] = g.ranks
        cf[C_CL], cf[C_CWL], cf[C_TBL], cf[C_TREFI] = g.CL, g.CWL, g.tBL, g.tREFI
        cf[C_FAW] = g.faw_cycles
        cf[C_REFPB], cf[C_REFPB_SETS], cf[C_TREFIPB] = g.per_bank_refresh, g.refpb_sets, g.tREFIpb
        cf[C_REFPB_IDLE_FIRST] = g.refresh_idle_first
        cf[C_HIGH], cf[C_LOW] = g.write_high, g.write_low
        cf[C_RQ_CAP], cf[C_WQ_CAP] = g.read_queue, g.write_queue
        cf[C_FCFS] = g.fcfs
        cf[C_CAP] = min(g.row_hit_cap, _NEVER)
        cf[C_BURST] = g.burst_bytes
        cf[C_FORWARD] = g.forward_cycles
        cf[C_PHASE], cf[C_PERIOD] = g.phase_ps, g.period_ps
        cf[C_WATCH_DONE] = bool(g.stop_when_done)
        cf[C_PORTS] = ports
        fields = g.store_fields
        for at, name in ((C_RA, "Ra"), (C_BG, "Bg"), (C_BA, "Ba"), (C_RO, "Ro"), (C_CO, "Co")):
            cf[at], cf[at + 1] = fields[name]
        cf[C_GROUPS], cf[C_PER_GROUP] = g.bankgroups, g.banks_per_group
        self.cf = cf
        st = np.zeros(STATE_SIZE, dtype=np.int64)
        st[SEQ] = state.seq
        st[DIRTY] = 1
        st[REF_DUE] = state.refresh_due
        st[REF_PENDING] = state.refresh_pending
        st[REFPB_NEXT] = state.refpb_next_set
        st[REFPB_DONE] = state.refpb_done
        st[REFPB_SET] = state.refpb_banks[0] % g.refpb_sets if state.refpb_banks else -1
        st[REFPB_RANKS] = sum({1 << g.rank_of[b] for b in state.refpb_banks})
        st[WMODE] = state.write_mode
        st[OPEN_BANKS] = state.open_banks
        st[ACTIVE_SINCE] = state.active_since
        self.st = st
        self._outputs = st[:CALL_OUTPUTS]  # (what a call fed through the ports returns: a view made once)
        self.nxt = np.array(state.next_allowed, dtype=np.int64)
        self.upd = _update_tables(g.updates)
        self.gbase = np.array(g.group_base, dtype=np.int64)
        self.rbase = np.array(g.rank_base, dtype=np.int64)
        self.rank_of = np.array(g.rank_of, dtype=np.int64)
        self.rows = np.array(state.open_rows, dtype=np.int64)
        self.hits_run = np.array(state.hits_run, dtype=np.int64)
        self.faw = np.array(state.faw, dtype=np.int64).reshape(g.ranks, 4)
        self.needs = np.array(state.rank_needs_refresh, dtype=np.int64)
        self.queues = (np.zeros((n, g.read_queue), dtype=np.int64), np.zeros(n, dtype=np.int64),
                       np.zeros((n, g.write_queue), dtype=np.int64), np.zeros(n, dtype=np.int64))
        size = g.read_queue + g.write_queue
        # seq arrival row column burst kind size job
        self.entries = tuple(np.zeros(size, dtype=np.int64) for _ in range(8))
        # Per bank: the entry its open row was activated for (-1: none) and that entry's RD or WR.
        self.opened = np.full((n, 2), -1, dtype=np.int64)
        self._load_queues(state)
        out = g.lookahead_cycles + 2
        self.cmd_log = np.zeros((out, 5), dtype=np.int64)
        # (a call records a write's sample at each WR, one a cycle at most; fed through the
        # ports the samples of several calls, see SAMPLE_CALLS)
        self._sample_calls = SAMPLE_CALLS if ports else 1
        self.wsamples = np.zeros(out * self._sample_calls, dtype=np.float64)
        self._wsample_room = len(self.wsamples) - out  # (more than this many kept: hand them over)
        self._wsample_bytes = self.wsamples.data.cast("B")  # (as _rsample_bytes: see _hand_over_samples)
        # (fed through the ports, a buffer holds one request's bursts: feed makes it larger as needed)
        self._size_buffer(min(self.chunk, PORT_BUFFER) if ports else self.chunk)
        # Fed through the ports, per job slot (see feed): the client request's bursts still to
        # finish, and the cycle the last finished one did.
        self.job_left = np.zeros((size + 2, 2), dtype=np.int64)
        self._pack()
        fields = g.address_fields
        (self._rs, self._rm), (self._gs, self._gm), (self._bs, self._bm) = fields["Ra"], fields["Bg"], fields["Ba"]
        (self._os, self._om), (self._ks, self._km) = fields["Ro"], fields["Co"]
        self._burst_mask = ~(g.burst_bytes - 1)
        self._stream = iter(()) if state.stream is None else state.stream
        self.refill()
        self.counters = [(getattr(d, name), slot) for name, slot in COUNTER_SLOTS.items()]
        self._levels: tuple = ((), ())  # the queue-depth levels' figures the arrays and the statistics share
        self._level_list: list = []  # the same, flat (as the state array holds them)
        self._depths = (d.read_queue_depth, d.write_queue_depth)
        self._read_latency = d.read_latency
        self._write_latency = d.write_latency
        # Whether the arrays' queue-depth levels may not be the statistics' (none loaded yet,
        # or a run returned since the last hand-over: a reset may follow), see _begin.
        self._levels_unsure = True
        self._bind()

    def _pack(self) -> None:
        """Move the int64 arrays of fixed size into one array, ``ints`` (each attribute becomes
        a view of its part), in the order of the P_ indices of :mod:`.compiled_core_layout`,
        and note where each part starts in the configuration: a call passes one array for them."""
        arrays = (self.nxt, *self.upd, self.gbase, self.rbase, self.rank_of, self.rows, self.hits_run, self.faw,
                  self.needs, *self.queues, *self.entries, self.free, self.cmd_log, self.opened, self.job_left)
        bounds = np.cumsum([0] + [array.size for array in arrays])
        self.cf[C_PACK:C_PACK + len(bounds)] = bounds
        self.ints = np.concatenate([array.ravel() for array in arrays])
        views = [self.ints[start:end].reshape(array.shape) for array, start, end in zip(arrays, bounds, bounds[1:])]
        self.nxt, self.upd = views[0], tuple(views[1:4])
        self.gbase, self.rbase, self.rank_of, self.rows, self.hits_run, self.faw, self.needs = views[4:11]
        self.queues, self.entries = tuple(views[11:15]), tuple(views[15:23])
        self.free, self.cmd_log, self.opened, self.job_left = views[23:]

    def _size_buffer(self, length: int) -> None:
        """Buffers for ``length`` requests (or bursts) and for what one call may record of them
        beside the commands of its cycles: read latency samples and completions."""
        # cycle bank row column burst write size job: the rows of one array (a call passes it)
        self.buffer_rows = np.zeros((8, length), dtype=np.int64)
        self.buffer = tuple(self.buffer_rows)
        out = self.config.lookahead_cycles + 2
        # (a read's sample at each RD, one a cycle at most, and at each forwarded burst)
        self.rsamples = np.zeros((out + length) * self._sample_calls, dtype=np.float64)
        self._rsample_room = len(self.rsamples) - (out + length)  # (more than this many kept: hand them over)
        # (its bytes, which the read latency's samples take without a copy: see _hand_over_samples)
        self._rsample_bytes = self.rsamples.data.cast("B")
        self.done_log = np.zeros((out + length, 2), dtype=np.int64)

    def _load_queues(self, state) -> None:
        """Place the snapshot's queued bursts in the entry arrays; the rest of the entries are free."""
        rq_ids, rq_len, wq_ids, wq_len = self.queues
        used = 0
        for side, ids, lengths, k in ((state.read_queues, rq_ids, rq_len, RD),
                                      (state.write_queues, wq_ids, wq_len, WR)):
            for b, items in enumerate(side):
                for i, item in enumerate(items):
                    for column, value in zip(self.entries, item[:5] + item[6:] + item[5:6] + (-1,)):
                        column[used] = value
                    if item[0] == state.opened[b]:
                        self.opened[b] = (used, k)
                    ids[b, i] = used
                    used += 1
                lengths[b] = len(items)
        self.st[RQC], self.st[WQC] = int(rq_len.sum()), int(wq_len.sum())
        free = np.arange(len(self.entries[0]), dtype=np.int64)
        self.free = np.concatenate([free[used:], free[:used]])
        self.st[FREE_TOP] = len(free) - used

    def refill(self) -> None:
        """Keep the unread stream requests at the front of the buffer and decode more behind them."""
        st = self.st
        if st[EXHAUSTED]:
            return
        pos, length = int(st[POS]), int(st[BUF_LEN])
        left = length - pos
        if left:
            for column in self.buffer:
                column[:left] = column[pos:length]
        want = self.chunk - left
        items = list(itertools.islice(self._stream, want))
        got = len(items)
        if got < want:
            st[EXHAUSTED] = 1
        if got:
            cycles, addresses, writes = zip(*items)
            a = np.array(addresses, dtype=np.int64)
            cycle, bank, row, column, burst, write, size, job = self.buffer
            end = left + got
            cycle[left:end] = cycles
            bank[left:end] = ((((a >> self._rs) & self._rm) * self.config.bankgroups + ((a >> self._gs) & self._gm))
                              * self.config.banks_per_group + ((a >> self._bs) & self._bm))
            row[left:end] = (a >> self._os) & self._om
            column[left:end] = (a >> self._ks) & self._km
            burst[left:end] = a & self._burst_mask
            write[left:end] = writes
            size[left:end] = self.config.burst_bytes
            job[left:end] = -1
        st[POS] = 0
        st[BUF_LEN] = left + got

    def advance(self, c: int) -> tuple[int, int]:
        """Do the work of the tick at cycle c (the controller's run-ahead loop); return the
        cycle to wake at and how the work ended: DONE, STOP_NOW (stop the run now),
        HELD_STOP or HELD_GO (keep the edge at the wake cycle, then stop or go on), as the
        Python loop would."""
        st = self.st
        horizon = c + self.config.lookahead_cycles
        first = c
        phase = 0
        self._begin()
        while True:
            if st[BUF_LEN] - st[POS] < 64:
                self.refill()
            status = self._call(c, first, horizon, phase)
            if status != UNDERRUN:
                break
            self.flush()
            self.refill()
            c = int(st[OUT_C])
            phase = int(st[OUT_PHASE])
        self.flush()
        return int(st[OUT_WAKE]), int(status)

    def _begin(self) -> None:
        """Before a call: the queue-depth levels as the controller's statistics hold them (the
        last hand-over left them so unless another hand changed them since: a restore, a
        reset). (Each call starts its records from zero; its counts add to those not yet
        handed over.)"""
        self._levels_unsure = False
        reads, writes = self._depths
        levels = (reads.figures(), writes.figures())
        if levels != self._levels:
            st = self.st
            st[RL_VALUE:RL_SINCE + 1] = levels[0]
            st[WL_VALUE:WL_SINCE + 1] = levels[1]
            self._levels = levels
            self._level_list = [*levels[0], *levels[1]]

    def _bind(self) -> None:
        """The arrays every call passes after its scalars, in the compiled function's order
        (bound again when a buffer is replaced)."""
        self._arrays = (self.ints, self.buffer_rows, self.rsamples, self.wsamples, self.done_log)
        self._entry = None  # the compiled entry for these arrays, found after a call (see schedule)

    def _call(self, c: int, first: int, horizon: int, phase: int) -> int:
        """One call of the compiled function on the arrays."""
        return self.run(self.st, self.cf, c, first, horizon, phase, *self._arrays)

    # -- fed through the ports -----------------------------------------------------------
    def feed(self, c: int, slot: int, write: bool, offset: int, size: int, bursts: int) -> None:
        """A client request taken at cycle c, ``size`` bytes from ``offset`` in the store, in
        job slot ``slot``: the next :meth:`schedule` cuts it into its ``bursts`` device
        bursts as :func:`~.response_order.split` does, which enter the queues from cycle c as
        room allows, as SplitsRequests._enter puts them (feed a request only once every
        burst of the previous one has entered)."""
        if bursts > len(self.buffer[0]):
            self._hand_over_samples()  # (those kept over calls: their array is replaced)
            self._size_buffer(bursts)
            self._bind()
        st = self.st  # (one slot at a time: assigning a tuple to a slice costs twice as much)
        st[FEED_N] = bursts
        st[FEED_OFFSET] = offset
        st[FEED_SIZE] = size
        st[FEED_CYCLE] = c
        st[FEED_SLOT] = slot
        st[FEED_WRITE] = write

    _head = None  # st[HEAD] as the last call of schedule set it (None: not set yet)

    def schedule(self, first: int, last: int, head: int = -1) -> tuple[int, int, int, int, int, list | tuple]:
        """Do the scheduling work of cycle ``first`` and of the later cycles with work up to
        ``last`` (SchedulesAhead._schedule_ahead's loop), stopping after a cycle in which a
        client request's last burst completed, or, with ``head`` the kind of a request
        waiting on req (0 read, 1 write), after the cycle that leaves room for it (with
        ``head`` CATCHING_UP, at ``last`` whatever completes). Returns the next cycle with
        work, the last cycle done, the bursts in the read and in the write queue, the bursts
        of the last fed request still waiting to enter, and ``[job slot, cycle]`` of each
        client request whose last burst completed (at that cycle, the latest of its
        bursts'), in the order the Python path completes them (:meth:`job_progress` has the
        bursts of the others)."""
        # (the call and what it recorded written out: this runs at every edge of a channel fed
        # through its ports, where each Python call counts; the counts and queue-depth levels
        # stay in the arrays until the run returns, see hand_over)
        st = self.st
        if self._levels_unsure:
            self._begin()
        if head != self._head:  # (written only when it changes: the arrays' writes cost, and it seldom does)
            st[HEAD] = self._head = head
        entry = self._entry
        if entry is not None:
            entry(st, self.cf, first, first, last, 0, *self._arrays)
        else:
            self.run(st, self.cf, first, first, last, 0, *self._arrays)
            self._entry = compiled.compiled_entry(self.run, (st, self.cf, first, first, last, 0, *self._arrays))
        wake, c, reads, writes, length, pos, n, commands, read_samples, write_samples = self._outputs.tolist()
        if read_samples > self._rsample_room or write_samples > self._wsample_room:
            # (the samples add up in the arrays over calls until one more call might not fit)
            self._hand_over_samples()
        if commands and self.dram.has_command_listeners:
            self._hand_over_records(commands, 0, 0)
        return wake, c, reads, writes, length - pos, self.done_log[:n].tolist() if n else ()

    def job_progress(self, slot: int) -> tuple[int, int]:
        """The bursts of the client request in job ``slot`` still to finish, and the cycle
        the last of its finished ones did (0: none yet), after the last call."""
        left, done = self.job_left[slot].tolist()
        return left, done

    @property
    def answer_cycles(self) -> int:
        """The fewest cycles from a cycle's work to an answer it decides while no request's
        bursts are entering (a posted write and a forwarded read are answered as they enter):
        a read burst's, from its RD to the end of its data (CL + tBL)."""
        return self.config.CL + self.config.tBL

    @property
    def job_slots(self) -> int:
        """How many client requests the core can name at once (one entering, the others
        each with a burst queued)."""
        return len(self.job_left)

    @property
    def only_upkeep_due(self) -> bool:
        """No command to choose, or the one chosen is a refresh's (with :attr:`idle`, the
        controller's work is upkeep), after the last call."""
        st = self.st
        return not st[HAS_BEST] or bool(st[REF_PENDING]) or st[REFPB_SET] >= 0

    def flush(self) -> None:
        """Hand the last call's commands and samples to the controller's listeners and
        statistics, and its counts and queue-depth levels: after each call on an attached
        stream."""
        n, reads, writes = self.st[N_CMD:N_WSAMPLE + 1].tolist()
        self._hand_over_records(n, reads, writes)
        self._take_counts(levels=True)

    def _hand_over_records(self, n: int, reads: int, writes: int) -> None:
        """Hand the ``n`` commands and the read and write latency samples the last call
        recorded to the controller's command listeners and statistics."""
        d = self.dram
        if reads:
            self._read_latency.samples.frombytes(self.rsamples[:reads].tobytes())
        if writes:
            d.write_latency.samples.frombytes(self.wsamples[:writes].tobytes())
        listeners = d.command_listeners if n else ()
        if listeners:
            g = self.config
            per_rank, per_group = g.banks_per_rank, g.banks_per_group
            for c, k, b, row, column in self.cmd_log[:n].tolist():
                rank = b // per_rank
                if k == REF or k == PREA:
                    fields = (c, k, rank, -1, -1, -1, row, column)
                else:
                    fields = (c, k, rank, (b // per_group) % g.bankgroups, b % per_group, b, row, column)
                for listener in listeners:
                    listener(*fields)

    def hand_over(self) -> None:
        """Add the counts the calls since the last hand-over kept in the arrays to the
        controller's statistics, and set its queue-depth levels to the arrays' (fed through
        the ports, when a run returns, since no one reads them while it lasts: an observer
        keeps the controller off the ports' path). With no call since the last hand-over, or
        since the core was built, the levels in the arrays are not the statistics' to take
        (they may not even have been loaded)."""
        self._take_counts(levels=not self._levels_unsure)
        self._levels_unsure = True
        if self.ports:
            self._hand_over_samples()

    def _hand_over_samples(self) -> None:
        """Fed through the ports, hand the latency samples the calls since the last hand-over
        kept in the arrays to the controller's statistics, in the order they were recorded
        (the calls add to them: the compiled function sets their counts to zero only on a
        stream, where :meth:`flush` hands them over after each call)."""
        st = self.st
        reads, writes = st[N_RSAMPLE:N_WSAMPLE + 1].tolist()
        if reads:
            self._read_latency.samples.frombytes(self._rsample_bytes[:reads * 8])
        if writes:
            self._write_latency.samples.frombytes(self._wsample_bytes[:writes * 8])
        st[N_RSAMPLE] = st[N_WSAMPLE] = 0

    def _take_counts(self, levels: bool) -> None:
        """Hand the counts in the arrays to the controller's statistics (and set them to zero),
        and with ``levels`` its queue-depth levels to the arrays'."""
        st = self.st
        counts = st[COUNTER_FIRST:COUNTER_END].tolist()
        if any(counts):
            for stat, slot in self.counters:
                count = counts[slot - COUNTER_FIRST]
                if count:
                    stat.value += count
            st[COUNTER_FIRST:COUNTER_END] = 0
        if not levels:
            return
        figures = st[RL_VALUE:WL_SINCE + 1].tolist()
        if figures != self._level_list:
            # (most calls move one queue's level only: hand back the one that changed)
            known = self._level_list
            self._level_list = figures
            reads, writes = self._levels
            if figures[:4] != known[:4]:
                reads = tuple(figures[:4])
                self._depths[0].resume(reads)
            if figures[4:] != known[4:]:
                writes = tuple(figures[4:])
                self._depths[1].resume(writes)
            self._levels = (reads, writes)

    def _refpb_banks(self) -> tuple:
        """The banks whose per-bank refresh is due (the controller's ``_refpb_banks``)."""
        s, ranks, g = int(self.st[REFPB_SET]), int(self.st[REFPB_RANKS]), self.config
        return () if s < 0 else tuple(b for b in range(g.banks)
                                      if b % g.refpb_sets == s and (ranks >> g.rank_of[b]) & 1)

    @property
    def idle(self) -> bool:
        """No burst queued and no stream request left (the controller's ``idle``)."""
        st = self.st
        return not st[RQC] and not st[WQC] and bool(st[EXHAUSTED]) and st[POS] >= st[BUF_LEN]

    @property
    def banks_open_since(self) -> int | None:
        """The cycle since which a bank has been open, or None while all are closed."""
        return int(self.st[ACTIVE_SINCE]) if self.st[OPEN_BANKS] else None

    def snapshot(self, held: tuple | None = None):
        """The state in the arrays as a :class:`~.scheduling_state.SchedulingState`, with the
        controller's statistics (up to date between runs: see :meth:`hand_over`). The unread
        stream is handed over: this core is done with it."""
        st = self.st
        g = self.config
        rq_ids, rq_len, wq_ids, wq_len = self.queues
        entries = [column.tolist() for column in self.entries]

        def queued(ids, lengths):
            return [[tuple(column[e] for column in entries[:5]) + (entries[6][e], entries[5][e])
                     for e in ids[b, :lengths[b]].tolist()] for b in range(g.banks)]

        pos, length = int(st[POS]), int(st[BUF_LEN])
        cycle, _, _, _, burst, write = (column[pos:length].tolist() for column in self.buffer[:6])
        unread = list(zip(cycle, burst, map(bool, write)))
        self._stream, stream = iter(()), itertools.chain(unread, self._stream)
        st[POS] = st[BUF_LEN] = 0
        st[EXHAUSTED] = 1
        return SchedulingState(
            seq=int(st[SEQ]), next_allowed=self.nxt.tolist(), open_rows=self.rows.tolist(),
            hits_run=self.hits_run.tolist(), faw=self.faw.tolist(), refresh_due=int(st[REF_DUE]),
            refresh_pending=bool(st[REF_PENDING]), rank_needs_refresh=[bool(x) for x in self.needs],
            refpb_next_set=int(st[REFPB_NEXT]), refpb_banks=self._refpb_banks(),
            refpb_done=int(st[REFPB_DONE]), to_close={}, write_mode=bool(st[WMODE]),
            open_banks=int(st[OPEN_BANKS]), active_since=int(st[ACTIVE_SINCE]),
            read_queues=queued(rq_ids, rq_len), write_queues=queued(wq_ids, wq_len),
            opened=[entries[0][e] if e >= 0 else -1 for e in self.opened[:, 0].tolist()], stream=stream, held=held,
            **self.dram.statistics_figures())


def core_for(controller, current):
    """The compiled core for this controller's run from its first tick (``current`` if it
    has one already), or None for the Python path (``engine = "auto"`` when the core does
    not apply; ``"compiled"`` then fails)."""
    d = controller
    ports = d.schedules_ahead_through_ports
    if current is not None:
        if not (d.running_ahead or ports):
            d.fail("engine: the compiled core cannot hand its work back to the Python path once an observer "
                   "watches (attach tracers before the run, or use engine = 'python')")
        return current
    reason = unsupported_reason(d)
    if reason is None and not (d.running_ahead or ports):
        reason = ("an observer watches, the command port is connected, or a stream is attached beside the ports"
                  if d.lookahead_cycles else "lookahead_cycles is 0")
    state = d.snapshot() if reason is None else None
    if reason is None and state.stream is None and not ports:
        reason = "no request stream is attached and no port is connected"
    if reason is None and (state.seq or state.queued):
        reason = "the controller has already served requests on the Python path"
    if reason is None:
        return CompiledCore(d, state, ports=ports)
    if d.engine == "compiled":
        raise ParameterError(f"{d.path}: engine compiled does not apply: {reason}",
                             hint='engine = "auto" picks the compiled core where it applies, the Python path elsewhere')
    return None
