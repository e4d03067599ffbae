"""In-DRAM caches: subarray-aware banks, the FIGARO relocation (RELOC), FIGCache-Fast and
FIGCache-Slow, LISA-VILLA and the no-cache baseline, driven by closed-loop synthetic cores.

Sources: FIGARO/FIGCache (Wang et al., MICRO 2020): RELOC moves one column between two
subarrays of one bank through the global row buffer, distance independent, in the sequence
ACT source, ACT destination, RELOC x n, PRE; FIGCache caches row segments in a reserved region
of each bank with a fully associative tag store in the controller, insert on miss,
benefit-based replacement. LISA (Chang et al., HPCA 2016): LISA-VILLA caches whole rows in
interleaved fast subarrays, moving a row buffer hop by hop between neighbouring subarrays.
TL-DRAM (Lee et al., HPCA 2013): fast-subarray timing ratios (:func:`.timing.fast_subarray_timing`).
"""

from __future__ import annotations

import heapq

from archmodel.kernel import (Component, Counter, Distribution, Formula, Level, Out, Param, ParameterError, at_least,
                              in_range, model)

from .address import AddressMapping
from .backing_store import BackingStore, FunctionalMemory
from .command_choice import CommandChoice
from .commands import ACT, PRE, RD, REF, WR, PublishesCommands
from .energy import DramEnergy
from .frontend import skewed_streams
from .policies import INDRAM_SCHEDULERS
from .scheduling_core import DRAIN_RULES, DramSchedulingCore
from .segment_cache import Req, SegmentCache
from .splitting import SplitsRequests
from .subarray_banks import SubarrayBanks
from .subarrays import CACHE_MODES, SubarrayLayout
from .timing import PRESETS, dram_clock



_ROW_COMMANDS_LATER = 1 << 40  # added to an ACT's or PRE's priority: after every column command
_NEVER = 1 << 62


@model
class InDramCacheController(SegmentCache, SubarrayBanks, CommandChoice, DramSchedulingCore, PublishesCommands,
                            SplitsRequests, FunctionalMemory, Component):
    """A subarray-aware DRAM controller with an in-DRAM cache, fed by closed-loop cores
    and/or any client on ``req``.

    One channel, one rank of ``standard``, on the scheduling core of
    :class:`.controller.DramController`: its queues, read forwarding, write-drain decision,
    bank activity and listeners (:mod:`.scheduling_core`), its next-allowed cycles under the
    same constraints (:mod:`.next_allowed`, :mod:`.constraints`) and its command choice (one
    candidate per bank, the earliest ready first, :mod:`.command_choice`), to which it adds
    subarray-aware banks (fast subarrays' array timing, :mod:`.subarray_banks`), RELOC and
    the tag store with its hit/miss path (:mod:`.segment_cache`). Separate read and write
    queues (``read_queue``, ``write_queue`` entries), FR-FCFS with column commands first
    (``scheduler`` frfcfs_column_first: the oldest request whose column command can issue
    now, else the oldest whose ACT or PRE can; ``frfcfs`` is DramController's, the oldest
    that can issue; a bank with a request to its open row is not precharged) over the
    reads, or over the writes during a write drain (whenever no read waits, or between the
    watermarks ``write_high`` and ``write_low`` of the write queue; writes waiting for an
    older read of their burst do not count), open page, all-bank refresh (a PRE per bank,
    each at its own rows' tRP, a bank under relocation left to finish; DramController
    precharges with PREA), one command per cycle, relocations first. The drain is DramController's, Ramulator 2's: by default
    (``write_drain`` ramulator2) it starts above the high mark and ends below the low one (26
    and 6 of 32; ``inclusive``, the rule this controller had first, reaches each mark at the
    entry count it rounds down to, 25 and 6), and a burst whose row was activated for it is
    its bank's next column command whatever the mode (the active buffer), so neither a drain
    nor a refresh precharges that row before it is served. Writes are posted: a core's
    write completes when the write queue takes it, and a read of a burst that a queued write
    will write is answered from the write queue after ``forward_cycles`` (no DRAM access).
    Queued requests are kept per bank, and each bank's next command is recomputed only when
    its queue, open row or cached units change, so a decision looks at one candidate per
    bank. Idle time is skipped (``skip_idle``): the controller sleeps until the first cycle a
    command may issue, a core may issue or a read completes; a test checks that the commands,
    completions and statistics equal those of ticking every cycle. ``cache`` picks the
    organisation: ``none``; ``figcache_fast`` / ``figcache_slow``: row segments of
    ``segment_bursts`` bursts cached in ``cache_rows_per_bank`` reserved rows of each bank
    (a fast subarray with :func:`.timing.fast_subarray_timing`, or a regular one), a fully
    associative per-bank tag store here in the controller, insert on every miss (the
    relocation follows the missing access while its row is still open: ACT cache row,
    RELOC x ``segment_bursts`` of ``tRELOC`` cycles each, PRE), benefit-based replacement
    (each segment counts its hits; the victim has the fewest, counts halve every
    ``aging_inserts`` insertions; a dirty victim is first written back with its own
    relocation); ``lisa_villa``: whole rows cached in ``villa_subarrays`` interleaved fast
    subarrays, moved by a row-buffer movement of ``lisa_hop_cycles`` per subarray hop
    (issued as one whole-row RELOC, column -1), and only hot rows: the controller counts
    each row's misses and caches a row at its ``villa_hot_threshold``-th miss (counts halve
    every ``aging_inserts`` misses of the bank), so one-off accesses do not evict hot rows.
    ``insert_threshold`` sets the same filter for any organisation (FIGCache's default, 1,
    is insert on every miss). Cache rows are extra reserved rows, the address space is
    unchanged.

    Cores: ``cores`` closed-loop cores, each with at most ``mlp`` reads outstanding and
    ``gap_cycles`` between its issues, replay :func:`skewed_streams` (or streams given with
    :meth:`attach_cores`); ``finish`` holds each core's finishing cycle. The run stops when
    the cores are done, unless ``req`` is connected.

    A full memory on ``req``/``resp``, as :class:`.controller.DramController` is: it holds
    ``size_bytes`` (the channel's home rows, decoded by ``mapping``) from ``base_address``
    in a sparse backing store with ``backdoor_write``/``backdoor_read``; a request of any
    size is cut into bursts that enter the queues beside the cores' (:mod:`.splitting`),
    answered by one response in request order per source; writes are posted. Cached copies
    hold the same bytes as their home row, so the store is the data of both.

    Leaves out: data for the synthetic cores (the order of accesses to a burst is kept all
    the same: a read never reaches DRAM while a write to its burst waits, it is forwarded; a write never
    reaches DRAM before an older read of its burst, it is passed over until that read has
    issued, and a drain neither starts nor goes on while every queued write waits so),
    closed and adaptive page policies, multiple ranks, per-bank refresh. Energy: DRAMPower
    style (:class:`.energy.DramEnergy`) with the fast subarray's ACT/PRE energy from its own
    tRAS/tRC; a RELOC costs one read burst of VDD current (IDD4R - IDD3N over tBL: the
    column path; the off-chip I/O and termination are on VDDQ and were never in it) and a
    LISA hop one fast-subarray ACT/PRE. Assumptions, not published figures: those two
    energies, ``tRELOC`` 4 cycles (DDR4's tCCD_S: a RELOC uses the column path like a RD),
    ``lisa_hop_cycles`` 8 and ``villa_hot_threshold`` 2; all are parameters.
    """

    standard = Param(str, "DDR4-2400R", "timing preset", check=PRESETS.check)
    cache = Param(str, "figcache_fast", "none, lisa_villa, figcache_slow or figcache_fast", check=CACHE_MODES.check)
    segment_bursts = Param(int, 16, "bursts (columns of 64 B) per row segment", unit="bursts", check=at_least(1))
    cache_rows_per_bank = Param(int, 64, "reserved cache rows per bank", unit="rows", check=at_least(1))
    villa_subarrays = Param(int, 4, "interleaved fast subarrays per bank (LISA-VILLA)", check=at_least(1))
    tRELOC = Param(int, 4, "cycles of one RELOC (one column through the global row buffer)", unit=None,
                   check=at_least(1))
    lisa_hop_cycles = Param(int, 8, "cycles per subarray hop of a LISA row-buffer movement", unit=None,
                            check=at_least(1))
    aging_inserts = Param(int, 256, "insertions per bank between halvings of the benefit counts", check=at_least(1))
    insert_threshold = Param(int, None, "misses to a unit (segment or row) before it is cached; the miss counts "
                             "halve every aging_inserts misses of the bank. Default: 1 for FIGCache (insert on "
                             "every miss), villa_hot_threshold for LISA-VILLA", check=at_least(1))
    villa_hot_threshold = Param(int, 2, "LISA-VILLA's default insert_threshold: a row is hot (cached) once it "
                                "has missed this often", check=at_least(1))
    scheduler = Param(str, "frfcfs_column_first", "frfcfs_column_first (the oldest ready column command, else the "
                      "oldest ready ACT or PRE) or frfcfs (DramController's: the oldest ready command)",
                      check=INDRAM_SCHEDULERS.check)
    read_queue = Param(int, 32, "read queue entries", unit="requests", check=at_least(1))
    write_queue = Param(int, 32, "write queue entries", unit="requests", check=at_least(1))
    write_high = Param(float, 0.8, "write-queue fill that starts a write drain", check=in_range(0.0, 1.0))
    write_low = Param(float, 0.2, "write-queue fill that ends a write drain", check=in_range(0.0, 1.0))
    write_drain = Param(str, "ramulator2", "how the watermarks round: ramulator2 (DramController's: a drain "
                        "starts above write_high and ends below write_low) or inclusive (at each mark, rounded "
                        "down), see .scheduling_core.drain_watermarks", check=DRAIN_RULES.check)
    forward_cycles = Param(int, 1, "cycles to answer a read from a pending write", unit=None, check=at_least(1))
    skip_idle = Param(bool, True, "sleep until the next cycle a command can issue, a request arrives or a "
                      "response is due (False: tick every cycle; the results are the same)")
    cores = Param(int, 8, "synthetic cores", check=at_least(0))
    requests_per_core = Param(int, 2000, "requests each synthetic core makes", unit="requests", check=at_least(0))
    hot_segments = Param(int, 256, "hot row segments per core", check=at_least(1))
    zipf_s = Param(float, 1.1, "Zipf exponent of segment popularity")
    write_fraction = Param(float, 0.25, "share of writes")
    mlp = Param(int, 4, "outstanding reads per core (writes are posted)", check=at_least(1))
    gap_cycles = Param(int, 20, "cycles a core computes between issues", unit=None, check=at_least(0))
    mapping = Param(str, "RoBaRaCoCh", "address bit-field order of requests on req, most significant first")

    cmd = Out("every issued command (DramCommand)", required=False)

    reads = Counter("requests", "reads served (from DRAM or forwarded)")
    writes = Counter("requests", "writes written to DRAM")
    forwarded_reads = Counter("requests", "reads answered from the write queue (no DRAM access)")
    write_drains = Counter("drains", "switches from serving reads to draining writes")
    read_latency = Distribution("cycles", "cycles from a read's arrival to its last data beat (or its forwarding)")
    cache_hits = Counter("requests", "requests served from a cache row")
    cache_misses = Counter("requests", "requests served from their home row")
    relocations = Counter("relocations", "insertions and write-backs (relocation sequences)")
    writebacks = Counter("relocations", "dirty victims written back")
    reloc_commands = Counter("commands", "RELOC commands")
    extra_commands = Counter("commands", "ACT, PRE and RELOC commands issued for relocations")
    acts = Counter("commands", "ACT commands (all)")
    pres = Counter("commands", "PRE commands")
    refs = Counter("commands", "REF commands")
    row_hits = Counter("requests", "requests whose first command was RD/WR (no PRE or ACT issued for them)")
    active_cycles = Counter("cycles", "cycles with at least one bank open (for background energy)")
    read_queue_depth = Level("requests", "read queue occupancy")
    write_queue_depth = Level("requests", "write queue occupancy")
    hit_rate = Formula("%", "cache hits per request", lambda s: 100 * s.cache_hits.value /
                       max(1, s.cache_hits.value + s.cache_misses.value))
    energy_nj = Formula("nJ", "DRAM energy (commands plus background)", lambda s: s.energy_total_nj())
    reloc_energy_nj = Formula("nJ", "the part of energy_nj spent on RELOCs and LISA hops",
                              lambda s: s.reloc_energy_pj / 1000)

    def setup(self) -> None:
        self.layout = lay = SubarrayLayout(self.standard, self.cache, self.cache_rows_per_bank, self.villa_subarrays)
        self.timing = t = lay.normal
        if t.ranks != 1:
            raise ParameterError(f"{self.path}: one rank only")
        if t.bursts_per_row % self.segment_bursts:
            raise ParameterError(f"{self.path}: a row of {t.bursts_per_row} bursts does not split into segments of "
                                 f"{self.segment_bursts}")
        if self.clock is None:
            self.clock = dram_clock(t)
        self.energy = DramEnergy(t)
        self.fast_energy = DramEnergy(lay.fast)
        self.address_map = AddressMapping(t, self.mapping)
        self._decode = self.address_map.bank_decoder()
        self.burst_bytes = t.burst_bytes
        self.store = BackingStore(self.address_map.capacity_bytes)
        n = self._n = t.banks
        self._setup_banks(n)
        self._ops = [[] for _ in range(n)]
        # Per bank, oldest first, keyed by (bank, row, column); a write waits for an older
        # read of its burst (see "Leaves out" above). A decision looks at one candidate per
        # bank, recomputed only for the banks whose queue, open row or cached units changed.
        self._setup_scheduling_core(n, self.write_drain, write_after_read=True)
        self._setup_choice(refresh_precharge="bank")
        self._stale = set(range(n))  # the banks whose candidates must be recomputed
        # Column commands first among the ready (FR-FCFS's first-ready column rule), or by age alone.
        self._row_command_later = _ROW_COMMANDS_LATER if self.scheduler == "frfcfs_column_first" else 0
        self._fcfs = False
        self._to_close: dict = {}
        self._refpb_banks = ()
        self._refresh_pending = False
        self._rank_needs_refresh = [False] * t.ranks
        self._cores_blocked = False
        self._intake_at = 0
        self._soonest = _NEVER  # the first cycle a bank candidate may issue, from the last decision
        self._segs = t.bursts_per_row // self.segment_bursts if self.cache != "lisa_villa" else 1
        self._unit = self.segment_bursts if self.cache != "lisa_villa" else t.bursts_per_row
        slots = self.cache_rows_per_bank * self._segs
        self._slots = slots
        # Per bank: tag (row, segment) -> slot; slot -> [tag, benefit, dirty]; free slots.
        self._tags = [{} for _ in range(n)]
        self._slot_state = [[None] * slots for _ in range(n)]
        self._free = [list(range(slots - 1, -1, -1)) for _ in range(n)]
        self._inserts = [0] * n
        self._threshold = self.insert_threshold if self.insert_threshold is not None else (
            self.villa_hot_threshold if self.cache == "lisa_villa" else 1)
        self._miss_counts = [{} for _ in range(n)]  # per bank: unit tag -> misses since the last halving
        self._misses_since_aging = [0] * n
        self._pending_tags = [set() for _ in range(n)]
        self._completion_listeners = []
        self._refresh_due = t.tREFI
        self._streams = None
        self.finish: list[int] = []
        self.bank_states = [self.register(f"bank{b}_state", "closed") for b in range(n)]

    def add_completion_listener(self, listener) -> None:
        """Call ``listener(cycle, core, index, is_write, forwarded)`` as each core's request
        completes: a read when its last data beat arrives (or ``forward_cycles`` after it
        arrived, if forwarded), a write when the write queue takes it (writes are posted)."""
        self._completion_listeners.append(listener)

    def attach_cores(self, streams) -> None:
        """Replace the synthetic cores' streams: one list of (bank, row, burst, is_write) per core."""
        self._streams = [list(s) for s in streams]

    def start(self) -> None:
        if self._streams is None:
            self._streams = skewed_streams(self.standard, self.cores, self.requests_per_core, self.sim.seed,
                                           self.hot_segments, self.zipf_s, self.segment_bursts, self.write_fraction)
        k = len(self._streams)
        self._pos = [0] * k
        self._outstanding = [0] * k
        self._next_issue = [0] * k
        self._done = [0] * k
        self.finish = [-1] * k
        # (cycle, seq, core, index, is_write, forwarded): reads in flight, a heap.
        self._completions: list[tuple] = []
        self._period = self.domain.period_ps
        self._phase = self.domain.phase_ps
        self._cmd_on = self.cmd.connected
        self._req_on = self.req.connected
        self._resp_on = self.resp.connected

    @property
    def elapsed_cycles(self) -> int:
        """DRAM cycles from time 0 to now (the energy's total time)."""
        return (self.sim.now - self._phase) // self._period if self.sim else 0

    # -- one cycle -----------------------------------------------------------------------
    def tick(self) -> None:
        self._bounds_changes += 1  # (the bounds kept for the lookahead: see KeepsAnswerBounds)
        c = (self.sim.now - self._phase) // self._period
        comps = self._completions
        while comps and comps[0][0] <= c:
            done, _, core, index, write, forwarded = heapq.heappop(comps)
            self._outstanding[core] -= 1
            self._retire(done, core, index, write, forwarded)
            self._cores_blocked = False
        order = self._order
        if order.due <= c and self.resp.try_send(order.head()):
            order.pop()
        if self._req_on:
            self._take(c)
        # A core may issue only once its gap has passed, a read of its completed or its
        # queue has room again (a RD or WR issued): until then the intake has nothing to do.
        if self._cores_blocked and c < self._intake_at:
            wake = self._intake_at
        else:
            wake = self._intake_at = self._intake(c)
            self._cores_blocked = True
        issued = self._schedule(c)
        if not self._req_on and not (self._rq_count or self._wq_count or comps or any(self._ops)) and all(
                p >= len(s) for p, s in zip(self._pos, self._streams)):
            self.sim.stop("cores done")
            self.sleep()
        elif self.skip_idle and not issued:
            # Nothing changes until a command can issue, a response is due, a core may issue
            # or a refresh falls due; all of those are known now.
            if comps and comps[0][0] < wake:
                wake = comps[0][0]
            if order.due < wake:
                wake = order.due if order.due > c else c + 1
            ready = self._next_ready(c)
            if ready < wake:
                wake = ready
            if wake > c + 1:
                if wake < _NEVER and not (self._rq_count or self._wq_count or comps or order or any(self._ops)) and all(
                        p >= len(s) for p, s in zip(self._pos, self._streams)):
                    # nothing outstanding: what is left is a refresh, upkeep that must not keep
                    # a system with nothing else to do running for ever
                    self.sleep()
                    self.wake_for_upkeep_at(self.sim.now + (wake - c) * self._period)
                else:
                    self.sleep_for(wake - c if wake < _NEVER else 1 << 40)

    def _retire(self, done: int, core: int, index: int, write: bool, forwarded: bool) -> None:
        """A core's request is complete at cycle done."""
        self._done[core] += 1
        if self._done[core] == len(self._streams[core]):
            self.finish[core] = done
        for listener in self._completion_listeners:
            listener(done, core, index, write, forwarded)

    def _admit(self, c: int, core, index, bank: int, row: int, column: int, write: bool) -> None:
        """Queue one burst (the queue has room) from a core, or from req (core None, index its job)."""
        self._seq += 1
        self._queue_burst(Req(core, index, self._seq, bank, row, column, write, c), (bank, row, column), c)

    def _enqueue_piece(self, c: int, job, offset: int, size: int) -> None:
        """Queue one burst of a request from req (see :class:`.splitting.SplitsRequests`)."""
        bank, row, column = self._decode(offset)
        write = job.message.is_write
        if not write and (bank, row, column) in self._pending_writes:
            self._forward_read(c, job)
            return
        self._admit(c, None, job, bank, row, column, write)
        if write:
            self._order.piece_done(job, c)
        if write == self._write_mode:
            self._stale.add(bank)

    def _intake(self, c: int) -> int:
        """Let the cores issue at cycle c; return the next cycle one of them may issue (or _NEVER)."""
        wake = _NEVER
        gap = self.gap_cycles
        for core, stream in enumerate(self._streams):
            pos = self._pos[core]
            if pos >= len(stream) or self._outstanding[core] >= self.mlp:
                continue
            at = self._next_issue[core]
            if c < at:
                if at < wake:
                    wake = at
                continue
            bank, row, column, write = stream[pos]
            if write:
                # Writes are posted: complete for the core once the write queue takes them.
                if self._wq_count >= self.write_queue:
                    continue  # room comes only with a WR issued, after which the controller ticks
                self._admit(c, core, pos, bank, row, column, True)
                self._retire(c, core, pos, True, False)
            elif (bank, row, column) in self._pending_writes:
                # A read of a burst a queued write will write: answered from the write queue.
                self._forward_read(c, None)
                self._outstanding[core] += 1
                heapq.heappush(self._completions, (c + self.forward_cycles, -1, core, pos, False, True))
            else:
                if self._rq_count >= self.read_queue:
                    continue
                self._admit(c, core, pos, bank, row, column, False)
                self._outstanding[core] += 1
            if write == self._write_mode:
                self._stale.add(bank)
            self._pos[core] = pos + 1
            self._next_issue[core] = c + gap
            if pos + 1 < len(stream) and self._outstanding[core] < self.mlp:
                at = c + gap if gap else c + 1
                if at < wake:
                    wake = at
        return wake

    def _schedule(self, c: int) -> bool:
        """Issue at most one command at cycle c; True if one was issued."""
        if c >= self._refresh_due and not self._refresh_pending:
            self._refresh_pending = True
            self._rank_needs_refresh = [True] * self.timing.ranks
        # Relocations under way go first, in bank order (a refresh waits for them).
        for b in range(self._n):
            if self._ops[b] and self._step_op(c, b):
                return True
        if self._stale:
            for b in self._stale:
                self._refresh_bank(b)
            self._stale.clear()
        draining = self._write_mode
        self._choose(c)
        if self._write_mode and not draining:
            self.write_drains.add()
        best = self._best
        if best is None or best[0] > c:
            self._soonest = _NEVER if best is None else best[0]
            return False
        _, _, b, k, req = best
        if k == RD or k == WR:
            self._column(c, req, *self._lookup(req))
        elif k == REF:
            self._issue(c, REF, b)
            self._refresh_due += self.timing.tREFI
            self._refresh_pending = False
            self._stale.update(range(self._n))  # (every bank's ACT waits for tRFC)
        elif req is None:  # a refresh's PRE
            self._issue(c, PRE, b)
        else:
            req.opened = True
            if k == ACT:
                self._issue(c, ACT, b, self._lookup(req)[0])
                self._opened[b] = req
            else:
                self._issue(c, PRE, b)
        return True

    def _refresh_bank(self, b: int) -> None:
        """Recompute bank b's candidate for the queue being served (see
        :class:`~.command_choice.CommandChoice`): the column command of the burst its open row
        was activated for, whatever the mode (the active buffer); else a column command for its
        oldest request to the open row (through the tag store: a cached unit's row is its cache
        row), else ACT or PRE for its oldest request; none if it has no request or a relocation
        holds it. A write waiting for a queued read of its burst is passed over. Column commands
        go first among the ready with ``scheduler`` frfcfs_column_first, age alone decides with
        frfcfs."""
        if self._ops[b]:
            self._drop_candidate(b)
            return
        req = self._opened.get(b)
        if req is not None:
            self._set_candidate(b, WR if req.write else RD, req, req.seq)
            return
        queue = (self._wq if self._write_mode else self._rq)[b]
        if queue and self._write_mode and self._blocked_writes:
            reads = self._pending_reads
            queue = [req for req in queue if (b, req.row, req.column) not in reads]
        if not queue:
            self._drop_candidate(b)
            return
        open_row = self._rows[b]
        if open_row >= 0:
            for req in queue:
                if self._lookup(req)[0] == open_row:
                    self._set_candidate(b, WR if req.write else RD, req, req.seq)
                    return
            self._set_candidate(b, PRE, queue[0], queue[0].seq + self._row_command_later)
            return
        self._set_candidate(b, ACT, queue[0], queue[0].seq + self._row_command_later)

    def _next_ready(self, c: int) -> int:
        """A lower bound of the next cycle after c at which a command may issue (nothing
        changes in between: only an issued command or a new request moves the state)."""
        best = self._soonest  # (the last choice's earliest command, a refresh's included)
        if not self._refresh_pending and self._refresh_due < best:
            best = self._refresh_due
        for b in range(self._n):
            if self._ops[b]:
                at = self._op_ready_at(b)
                if at < best:
                    best = at
        return best if best > c else c + 1

    def _column(self, c: int, req: Req, row: int, column: int, slot) -> None:
        """Issue req's RD or WR at cycle c (to its cache row if slot is not None)."""
        t = self.timing
        b = req.bank
        if not req.opened:
            self.row_hits.add()
        self._opened.pop(b, None)
        self._cores_blocked = False
        self._dequeue(req, c)
        self._burst_served(req.write, (b, req.row, req.column))
        if req.write:
            self._issue(c, WR, b, row, column)
            self.writes.add()
        else:
            self._issue(c, RD, b, row, column)
            self.reads.add()
            done = c + t.CL + t.tBL
            if req.core is None:
                self._order.piece_done(req.index, done)
            else:
                heapq.heappush(self._completions, (done, req.seq, req.core, req.index, False, False))
            self.read_latency.sample(done - req.arrival)
        if self.cache == "none":
            return
        if slot is not None:
            self.cache_hits.add()
            state = self._slot_state[b][slot]
            state[1] += 1
            if req.write:
                state[2] = True
        else:
            self.cache_misses.add()
            if self._hot(b, req):
                self._insert(b, req)
