"""The DRAM controller and the device it drives: one channel, in the DRAM clock (tCK).

The controller takes :class:`~archmodel.models.messages.MemRequest` on ``req`` (and/or from an
attached request stream, see :meth:`DramController.attach_stream`), keeps separate read and
write queues, schedules one command per DRAM cycle under every timing constraint of
:mod:`.constraints`, and returns :class:`~archmodel.models.messages.MemResponse` on ``resp``.
Every issued command is published on ``cmd`` (a :class:`~.commands.DramCommand`), which an
independent :class:`~.checker.DramTimingChecker` watches.
"""

from __future__ import annotations

from collections.abc import Iterator

from archmodel.kernel import (ENGINES, Component, Counter, Distribution, Formula, Level, Out, Param, QuestionBackoff,
                              ParameterError, at_least, in_range, model)

from .address import AddressMapping
from .answer_bounds import BoundsQueuedReads
from .backing_store import BackingStore, FunctionalMemory, range_text
from .bank import CLOSED
from .bank_queues import PerBankQueues
from .compiled_core import core_for
from .compiled_core_layout import DONE, HELD_STOP, STOP_NOW
from .command_scheduler import CommandScheduler, QueuedBurst
from .constraints import refresh_commands
from .energy import DramEnergy
from .policies import PAGE_POLICIES, QUEUE_ORGANISATIONS, REFRESH_MODES, REFRESH_ORDERS, SCHEDULERS
from .schedule_ahead import SchedulesAhead
from .scheduling_core import DRAIN_RULES, DramSchedulingCore
from .scheduling_state import HasSchedulingState
from .splitting import NEVER, SplitsRequests
from .stream_intake import TakesStreams
from .timing import PRESETS, TIMING_FIELDS, dram_clock, preset

_NEVER = NEVER

FIXED_OVERHEAD_CYCLES = 0
"""Cycles the controller adds to an unloaded request: a request taken at edge t may issue its
first command at edge t, and its response leaves at the edge its last data beat ends. (The
channels to and from the controller add their own latency.)"""


def _ns(cycles: float | None, controller) -> float | None:
    """DRAM cycles in ns; None (no samples) stays None."""
    return None if cycles is None else cycles * controller.tck_ps / 1000


def _timing_params(cls):
    for name in TIMING_FIELDS:
        setattr(cls, name, Param(int, None, f"override the preset's {name}", unit=None, check=at_least(1)))
        cls.__dict__[name].__set_name__(cls, name)
    return cls


@model
@_timing_params
class DramController(CommandScheduler, PerBankQueues, SchedulesAhead, TakesStreams, HasSchedulingState,
                     DramSchedulingCore, BoundsQueuedReads, SplitsRequests, FunctionalMemory, Component):
    """A DRAM memory controller with its device: one channel of DDR4, DDR5, HBM2 or HBM2E.

    Models the reference controller of VALIDATION.md: address mapping as a bit-field order
    (``mapping``, default RoBaRaCoCh), separate read and write queues (``read_queue``,
    ``write_queue`` entries), FR-FCFS scheduling (the oldest request whose next command can
    issue this cycle; a bank with pending hits to its open row is not precharged), open page,
    one command per DRAM cycle, write drain between ``write_high`` and ``write_low`` of the
    write queue, all-bank refresh every tREFI, and every JEDEC timing constraint (same bank,
    same bank group, same rank, data-bus turnaround, four-activate window, refresh).
    The drain is Ramulator 2's: it starts once the write queue holds more than ``write_high``
    of its entries (26 of 32) or no read waits, and ends once it holds fewer than
    ``write_low`` (6 of 32) while reads wait (:func:`.scheduling_core.drain_watermarks`);
    a burst whose row was activated for it is served next in its bank whatever the mode
    (Ramulator 2's active buffer, which also lets it win ties; here it competes by age, see
    :meth:`~.command_scheduler.CommandScheduler._refresh_bank`), so a drain or a refresh
    never precharges a row opened for a read before that read (DRAMSim3 keeps the same
    work: a read already in its command queue goes on during a drain).
    Alternatives: ``scheduler`` fcfs or frfcfs_cap (a bank serves at most ``row_hit_cap``
    hits in a row while an older request to another row waits), ``page_policy`` closed
    (precharge once no queued request hits the row) or adaptive (precharge after
    ``adaptive_idle_cycles`` without a hit), ``refresh`` per_bank (every tREFIpb a bank set
    falls due, and each rank's banks of it take a REFpb of their own while the other banks
    keep working; ``refresh_order`` round_robin takes the sets in turn, idle_first takes,
    among the sets not yet refreshed in this round of tREFI/tREFIpb refreshes, the one the
    fewest queued bursts target, as DARP does) or none. ``queue`` per_bank is DRAMSim3's
    organisation instead of one choice over the queue being served: a command queue of
    ``command_queue`` entries per bank, fed one burst per cycle, arbitrated round robin over
    banks (:mod:`.bank_queues`; Python path only).

    The queues, read forwarding, the drain decision (``write_drain`` picks how the watermarks
    round) and the bank activity are the DRAM scheduling core's (:mod:`.scheduling_core`),
    which the in-DRAM cache controller shares. The device is the channel's ranks x bank
    groups x banks x rows x columns; each bank is the state machine of :mod:`.bank`.

    A full memory: it holds ``size_bytes`` (the channel's capacity) from ``base_address`` in
    a sparse :class:`~.backing_store.BackingStore`, reachable without simulated time through
    ``backdoor_write``/``backdoor_read``. Data is functional: a write's bytes are stored when
    the request is taken and a read returns the bytes of every write taken before it (a read
    burst that finds a pending write to its burst is answered from the write queue after
    ``forward_cycles``, without a DRAM access). A request of any size and alignment is cut
    into device bursts (:mod:`.splitting`) that enter the queues as room allows, one request
    after another; its one response carries all its bytes once its last burst is done, and
    a write is acknowledged once its last burst entered the write queue (posted; a write
    smaller than a burst merges into the stored burst and costs one WR). Responses to one
    client (``source``) leave in the order of its requests, whatever order FR-FCFS served
    them in. A request outside the memory stops the run with an error naming it. With
    ``channels`` > 1 this controller is channel ``channel`` of an interleaved memory: it
    answers to the ``interleave_bytes`` blocks of the range whose channel bits are its index
    (default: the ``Ch`` field of ``mapping``).

    The controller runs in its own clock of period tCK (unless placed in one). Timing
    overrides (``tRCD = 18``...) are in DRAM cycles; an impossible set is an error with a
    hint. Fixed overhead: none (:data:`FIXED_OVERHEAD_CYCLES`), so an unloaded read taken at
    edge t responds at t + CL + tBL (row hit), + tRCD (closed bank), + tRP (conflict).
    Idle time is skipped: the controller sleeps until the earliest cycle a command can issue,
    a response is due, a refresh falls due or a request arrives. Registers (bank states,
    command bus, data bus, queue depths) are updated only while a tracer (any observer of
    the simulator) watches.

    Scheduling ahead: fed by an attached stream, with no port connected and no observer, no
    one can see or change its work cycle by cycle, so one tick does the work of the cycles it
    would have ticked at, up to ``lookahead_cycles`` ahead of simulated time (a checker
    attached with ``DramTimingChecker.watch`` still sees every command with its cycle). The
    commands, their cycles and the statistics at the end of the run are the same as with
    ``lookahead_cycles = 0`` (a test compares them); only statistics read after a run cut
    short by a time limit may include up to ``lookahead_cycles`` cycles of work beyond it.
    Fed through its ports (no stream, nothing on ``cmd``, no observer), it schedules ahead
    while a client waits for an answer and no request waits on ``req``: the cycles before the
    earliest arrival of a request (the kernel's lookahead over the wiring, the run's limit,
    the watchdog's deadline, and the next response's due cycle, since a client may answer a
    response) are scheduled in one tick, and each response still leaves at its own cycle.
    With the compiled core it also schedules ahead while a request waits on ``req`` that
    cannot enter yet (the queue full, or the previous request's bursts still entering):
    whatever arrives meanwhile waits behind it, so the cycles up to the one that leaves room
    for it are scheduled in one call, and it enters at the next cycle the controller works
    at, as cycle by cycle; and, with nothing waiting on ``req``, while the request taken last
    still has bursts to enter, up to the cycle its last one enters (no request is taken
    before then, whatever arrives). Commands, responses and statistics are those of
    ``lookahead_cycles = 0`` (tests compare them); a run stopped by another component while a
    request is in service may count the work scheduled up to that request's next response.

    Engines: ``engine = "auto"`` schedules in the compiled core (:mod:`.compiled_core`)
    wherever it schedules ahead (an attached stream with no port, or the ports as above) and
    the configuration is one the core takes: the shared queue, open page, all-bank or
    per-bank refresh or none, any scheduler, drain rule, address mapping, queue size, rank
    count and timing override; the Python path otherwise (closed or adaptive page, ``queue = "per_bank"``,
    ``lookahead_cycles = 0``, a waveform or a connected ``cmd``). Requests from ``req`` are
    checked, stored or read in Python and answered by the :class:`~.response_order.ResponseOrder`
    either way; the core queues and schedules their bursts.

    The protocol of a compiled engine (:mod:`.compiled_core`, and any other):

    - *Compute ahead*, conservatively: only as far as nothing can reach the controller.
      Here that is ``lookahead_cycles`` with an attached stream and no port or observer; fed
      through its ports, the batch ends at the kernel's
      :meth:`~archmodel.kernel.Simulator.undisturbed_until_ps` (the connection graph's
      lookahead), the run's ``limit_ps`` and :meth:`~archmodel.kernel.Simulator.watchdog_deadline_ps`,
      or where a waiting request finds room, or the entering one's last burst enters (see
      "Scheduling ahead").
    - *Settle*: :meth:`~archmodel.kernel.Component.settle` runs whenever a run returns; a
      model keeping state aside copies it back there. This controller decides the cycles it
      deferred up to then (see :attr:`~.schedule_ahead.SchedulesAhead._deferring`), and its
      compiled core, fed through the ports, hands over the counts and queue-depth levels it
      keeps in its arrays while a run lasts (its listeners and latency samples are updated
      after each batch).
    - *Snapshot/restore*: :meth:`snapshot` returns the scheduling state as plain data
      (:class:`~.scheduling_state.SchedulingState`; the fixed numbers and tables are
      :meth:`scheduling_config`), :meth:`restore` continues from one, in this controller or
      an identical one whose simulator reached the same time. A compiled core is built from
      a snapshot and owns the state from then on (the controller asks it for :attr:`idle`
      and :attr:`banks_open_since`); :meth:`snapshot` then asks the core. No engine reads
      the controller's private attributes. A snapshot holds stream work only.

    Leaves out: additive latency, power-down and
    self-refresh, ECC, command/address parity, rank-to-rank ODT details beyond tRTRS, and
    masked writes (a sub-burst write is timed as one WR burst; its merge into the stored
    burst is functional).
    Sources: JEDEC JESD79-4/JESD79-5/JESD235; Ramulator 2 and DRAMSim3 presets (see
    :mod:`.timing`).
    """

    standard = Param(str, "DDR4-2400R", "timing preset", check=PRESETS.check)
    mapping = Param(str, "RoBaRaCoCh", "address bit-field order, most significant first")
    read_queue = Param(int, 32, "read queue entries", unit="requests", check=at_least(1))
    write_queue = Param(int, 32, "write queue entries", unit="requests", check=at_least(1))
    queue = Param(str, "shared", "shared (the scheduler chooses among the read or write queue) or per_bank "
                  "(DRAMSim3's command queue per bank, round robin over banks, see .bank_queues)",
                  check=QUEUE_ORGANISATIONS.check)
    command_queue = Param(int, 8, "entries of each bank's command queue (queue per_bank)", unit="requests",
                          check=at_least(1))
    scheduler = Param(str, "frfcfs", "frfcfs, fcfs or frfcfs_cap", check=SCHEDULERS.check)
    row_hit_cap = Param(int, 4, "hits a bank may serve in a row while an older request waits (frfcfs_cap, "
                        "and queue per_bank)", check=at_least(1))
    page_policy = Param(str, "open", "open, closed or adaptive", check=PAGE_POLICIES.check)
    adaptive_idle_cycles = Param(int, 32, "idle cycles before the adaptive policy closes a row", check=at_least(1))
    refresh = Param(str, "all_bank", "all_bank, per_bank or none", check=REFRESH_MODES.check)
    refresh_order = Param(str, "round_robin", "which bank set a per-bank refresh takes next: round_robin or "
                          "idle_first (see .command_scheduler.CommandScheduler._next_refresh_set)",
                          check=REFRESH_ORDERS.check)
    write_high = Param(float, 0.8, "write-queue fill that starts a write drain", check=in_range(0.0, 1.0))
    write_low = Param(float, 0.2, "write-queue fill that ends a write drain", check=in_range(0.0, 1.0))
    write_drain = Param(str, "ramulator2", "how the watermarks round: ramulator2 (a drain starts above write_high "
                        "and ends below write_low) or inclusive (at each mark, rounded down), see "
                        ".scheduling_core.drain_watermarks", check=DRAIN_RULES.check)
    forward_cycles = Param(int, 1, "cycles to answer a read from a pending write", check=at_least(1))
    channels = Param(int, 1, "channels the address map spreads over", check=at_least(1))
    channel = Param(int, 0, "this controller's channel index", check=at_least(0))
    interleave_bytes = Param(int, None, "bytes of one channel's block when channels > 1 (a power of two, at "
                             "least a burst); default: where mapping puts the Ch field", unit="bytes",
                             check=at_least(1))
    omit_constraints = Param((tuple, list), (), "constraint names the scheduler ignores (for testing the checker)")
    ranks = Param(int, None, "override the preset's ranks per channel", check=at_least(1))
    lookahead_cycles = Param(int, 512, "cycles the controller may schedule ahead of simulated time while "
                             "nothing outside can see or change its work (an attached stream, or ports no "
                             "request can arrive on meanwhile; no waveform); 0 turns it off", check=at_least(0))
    engine = Param(str, "auto", "scheduling engine while running ahead: python, compiled (numba, see "
                   ".compiled_core) or auto (compiled where it applies)", check=ENGINES.check)
    stop_when_done = Param(bool, False, "stop the simulation once an attached stream is used up and every "
                           "request is served (refresh would otherwise run forever)")

    cmd = Out("every issued command (DramCommand), for a timing checker", required=False)

    reads = Counter("requests", "read bursts completed (from DRAM or forwarded)")
    writes = Counter("requests", "write bursts written to DRAM")
    bytes_read = Counter("bytes", "bytes read from DRAM or forwarded")
    bytes_written = Counter("bytes", "bytes written to DRAM")
    forwarded_reads = Counter("requests", "read bursts answered from the write queue")
    row_hits = Counter("requests", "requests whose first command was RD/WR (row open)")
    row_misses = Counter("requests", "requests that needed an ACT on a closed bank")
    row_conflicts = Counter("requests", "requests that needed a PRE of another row first")
    read_latency = Distribution("cycles", "DRAM cycles from a read's arrival to its last data beat")
    write_latency = Distribution("cycles", "DRAM cycles from a write's arrival to its last data beat")
    read_queue_depth = Level("requests", "read queue occupancy")
    write_queue_depth = Level("requests", "write queue occupancy")
    command_queue_depth = Level("requests", "bursts in the banks' command queues (queue per_bank)")
    acts = Counter("commands", "ACT commands")
    pres = Counter("commands", "PRE commands")
    preas = Counter("commands", "PREA commands")
    rds = Counter("commands", "RD commands")
    wrs = Counter("commands", "WR commands")
    refs = Counter("commands", "REF commands (all-bank)")
    refpbs = Counter("commands", "REFpb commands (per bank set)")
    active_cycles = Counter("cycles", "cycles with at least one bank open (for background energy)")
    bandwidth = Formula("GB/s", "bytes read and written per second",
                        lambda s: (s.bytes_read.value + s.bytes_written.value) * 1000 / s.elapsed_ps)
    read_latency_ns = Formula("ns", "mean read latency", lambda s: _ns(s.read_latency.mean, s))
    read_latency_p50_ns = Formula("ns", "median read latency", lambda s: _ns(s.read_latency.percentile(50), s))
    read_latency_p99_ns = Formula("ns", "99th percentile read latency",
                                  lambda s: _ns(s.read_latency.percentile(99), s))
    write_latency_ns = Formula("ns", "mean write latency", lambda s: _ns(s.write_latency.mean, s))
    row_hit_rate = Formula("%", "row hits per request served by DRAM",
                           lambda s: 100 * s.row_hits.value /
                           (s.row_hits.value + s.row_misses.value + s.row_conflicts.value))
    energy_nj = Formula("nJ", "DRAM energy: commands plus background (DRAMPower style)",
                        lambda s: s.energy.total_nj(s))

    # -- construction -------------------------------------------------------------------
    def setup(self) -> None:
        base = preset(self.standard)
        overrides = {name: getattr(self, name) for name in TIMING_FIELDS}
        overrides["ranks"] = self.ranks
        try:
            self.timing = t = base.override(**overrides)
        except Exception as err:
            raise ParameterError(f"{self.path}: {getattr(err, 'message', err)}", hint=getattr(err, "hint", None)) from None
        if self.queue == "per_bank":
            for name, value, allowed in (("page_policy", self.page_policy, ("open",)),
                                         ("refresh", self.refresh, ("all_bank", "none")),
                                         ("scheduler", self.scheduler, ("frfcfs", "frfcfs_cap"))):
                if value not in allowed:
                    raise ParameterError(f"{self.path}: queue per_bank does not take {name} {value}",
                                         hint=f"with per-bank command queues {name} is " + " or ".join(allowed))
        if self.channel >= self.channels:
            raise ParameterError(f"{self.path}: channel {self.channel} is not below channels ({self.channels})")
        if self.clock is None:
            self.clock = dram_clock(t)
        self.tck_ps = t.tCK_ps
        self.address_map = AddressMapping(t, self.mapping, self.channels)
        self._decode = self.address_map.bank_decoder()
        self._setup_channel_share(t)
        self.energy = DramEnergy(t)
        self.burst_bytes = t.burst_bytes
        self._burst_mask = ~(t.burst_bytes - 1)
        self._setup_next_allowed(self.omit_constraints, refresh_commands(self.refresh))
        n = self._bank_count
        self._rows = [-1] * n
        self._setup_scheduling_core(n, self.write_drain)
        self._hits_run = [0] * n
        self._to_close: dict[int, int] = {}  # bank -> earliest cycle (closed/adaptive policies)
        self._refresh_due = t.tREFI if self.refresh == "all_bank" else (t.tREFIpb if self.refresh == "per_bank" else _NEVER)
        self._refresh_pending = False
        self._rank_needs_refresh = [False] * t.ranks
        self._refpb_next_set = 0
        self._refpb_done = 0  # bit s: bank set s was refreshed in this round (refresh_order idle_first)
        self._idle_first = self.refresh_order == "idle_first"
        self._refpb_banks: tuple[int, ...] = ()
        self._stream: Iterator | None = None
        self._stream_head = None
        self._setup_choice()
        self._per_bank = self.queue == "per_bank"
        self._choose_next = self._choose_per_bank if self._per_bank else self._choose  # (bound once: every cycle)
        self._cq: list[list] = [[] for _ in range(n)]  # per-bank command queues (queue per_bank)
        self._cq_count = 0
        self._options: dict[int, tuple] = {}  # bank -> the commands it may issue (queue per_bank)
        self._rr = 0  # the bank that issued last (the round robin starts after it)
        self._move_due = _NEVER  # the next cycle a burst may move into a bank's command queue
        self._fcfs = self.scheduler == "fcfs"
        # (DRAMSim3's per-bank queues always cap a bank's hits while an older request waits)
        self._cap = self.row_hit_cap if self.scheduler == "frfcfs_cap" or self.queue == "per_bank" else _NEVER
        self._traced = None  # registers follow the state only while an observer watches
        self._ahead = 0
        self._held = None  # (stops, cycle): a kept edge, at which the run stops or goes on
        self._port_ahead = False
        self._processed = -1  # the last cycle whose scheduling work is done (fed through ports)
        self._next_work = 0  # the next cycle with scheduling work after it
        self._lookahead = QuestionBackoff()  # when to ask again after questions that gave nothing
        self._core = None  # the compiled scheduling core, when engine selects it (see tick)
        self._transitions: list = []
        self.bank_states = [self.register(f"bank{b}_state", CLOSED) for b in range(n)]
        self.open_rows = [self.register(f"bank{b}_row", -1) for b in range(n)]
        self.command = self.register("command", "idle")
        self.data_bus = self.register("data_bus", "idle")
        self.rq_depth = self.register("rq_depth", 0, 8)
        self.wq_depth = self.register("wq_depth", 0, 8)

    def _setup_channel_share(self, t) -> None:
        """This channel's share of the address range, its store, and the decoder of its
        requests (their channel bits removed)."""
        channels = self.channels
        capacity = self.address_map.capacity_bytes // channels
        self.store = BackingStore(capacity)
        self._channel_bits = channels.bit_length() - 1
        # (store_offset's numbers, worked out once: it runs for every request and question)
        self._span_bytes = capacity << self._channel_bits
        self._channel_mask = channels - 1
        if channels == 1:
            self._channel_shift = 0
            self._local_decode = self._decode
            self._local_map = self.address_map
            return
        block = self.interleave_bytes
        if block is None:
            block = 1 << self.address_map.fields["Ch"][0]
        if block & (block - 1) or block < t.burst_bytes or block > capacity:
            raise ParameterError(f"{self.path}: interleave_bytes {block} must be a power of two from the burst "
                                 f"({t.burst_bytes} bytes) to the channel capacity ({capacity} bytes)")
        self.interleave_bytes = block
        self._channel_shift = block.bit_length() - 1
        self._block_mask = block - 1
        self._local_map = AddressMapping(t, self.mapping, 1)  # (of offsets in this channel's store)
        self._local_decode = self._local_map.bank_decoder()

    def store_offset(self, address: int, size: int) -> int | None:
        """The store offset of ``size`` bytes at ``address``, or None if they are not all this
        channel's (outside the range, or in another channel's block)."""
        offset = address - self.base_address
        if offset < 0 or size < 0 or offset + size > self._span_bytes:
            return None
        bits = self._channel_bits
        if bits == 0:
            return offset
        shift = self._channel_shift
        block = offset >> shift
        if block != ((offset + (size or 1) - 1) >> shift) or block & self._channel_mask != self.channel:
            return None
        return ((block >> bits) << shift) | (offset & self._block_mask)

    def address_range(self) -> str:
        """The addresses this controller answers to, as errors print them."""
        if self._channel_bits == 0:
            return range_text(self.base_address, self.size_bytes)
        span = range_text(self.base_address, self.size_bytes << self._channel_bits)
        return (f"channel {self.channel} of {self.channels}: the {self.interleave_bytes}-byte blocks of "
                f"{span} with channel index {self.channel}")

    def start(self) -> None:
        self._period = self.domain.period_ps
        self._phase = self.domain.phase_ps
        self._resp_on = self.resp.connected
        self._cmd_on = self.cmd.connected
        self._req_on = self.req.connected

    # -- request intake -----------------------------------------------------------------
    def _enqueue_piece(self, c: int, job, offset: int, size: int) -> None:
        bank, row, column = self._local_decode(offset)
        self._enqueue(c, offset, job.message.is_write, job, size, bank, row, column)

    def _enqueue(self, c: int, address: int, write: bool, job, size: int, bank: int, row: int,
                 column: int) -> None:
        """Accept one burst at cycle c (the queue has room)."""
        burst = address & self._burst_mask
        self._seq += 1
        if write:
            if job is not None:
                # Posted: the write is done for its client once its bursts are queued.
                self._order.piece_done(job, c)
            self._queue_burst(QueuedBurst(self._seq, c, bank, row, column, True, job, burst, size), burst, c)
        else:
            if burst in self._pending_writes:
                self._forward_read(c, job)
                self.bytes_read.add(size)
                return
            self._queue_burst(QueuedBurst(self._seq, c, bank, row, column, False, job, burst, size), burst, c)
        if self._per_bank:
            if c < self._move_due:
                self._move_due = c
            return
        if write != self._cands_mode:
            # Not the queue being served, so no candidate changes, unless the mode flips.
            if self._drain_flips():
                self._dirty = True
            return
        best = self._best
        # While a refresh is pending its command stays the best: _choose decides again.
        if (self._dirty or best is None or best[2] == bank or self._fcfs or self._write_mode != write
                or self._refresh_pending):
            self._refresh_bank(bank)
            self._dirty = True
        else:
            self._consider(bank, c)

    # -- the clock edge -----------------------------------------------------------------
    _bounds_watch: list | None = None  # see share_bounds_changes

    def share_bounds_changes(self, counter: list) -> None:
        """Add 1 to ``counter[0]`` too whenever this controller's own count of the changes to
        its bounds grows (before and after each edge's work, at a restore): a memory made of
        many controllers (the channels of an :class:`~.interleave.InterleavedMemory`) keeps
        one count for them all instead of adding up their ``bounds_version`` at every
        question. The requests sent to ``req`` are the sender's to count."""
        self._bounds_watch = counter

    def tick(self) -> None:
        # The bounds kept for the lookahead (KeepsAnswerBounds) hold until the edge's work
        # begins, and what is kept while it works (the port-fed edge asks the lookahead,
        # which may ask this controller about its own responses) until it ends.
        watch = self._bounds_watch
        self._bounds_changes += 1
        if watch is not None:
            watch[0] += 1
        sim = self.sim
        if self._port_ahead and self._held is None and not sim.observers:
            # (the edge of a channel fed through its ports, as _edge would dispatch it: told
            # at once, since a busy channel ticks at tens of thousands of edges a run)
            self._tick_ports((sim.now - self._phase) // self._period)
        else:
            self._edge()
        self._bounds_changes += 1
        if watch is not None:
            watch[0] += 1

    def restore(self, state) -> None:
        """As :meth:`HasSchedulingState.restore`, told to the count shared by
        :meth:`share_bounds_changes` too."""
        super().restore(state)
        if self._bounds_watch is not None:
            self._bounds_watch[0] += 1

    def _edge(self) -> None:
        c = (self.sim.now - self._phase) // self._period
        observed = bool(self.sim.observers)
        if observed is not self._traced:
            # A tracer (any observer) may watch the registers: keep them up to date, cycle by
            # cycle. Otherwise, with no port either, nothing outside sees or changes the work
            # cycle by cycle, and the controller may run ahead.
            self._traced = observed
            self._ahead = (self.lookahead_cycles if not (observed or self._req_on or self._resp_on
                                                         or self._cmd_on) else 0)
            # Fed through its ports, it schedules ahead while no request can arrive (see
            # _tick_ports), unless something watches its command bus cycle by cycle.
            self._port_ahead = bool(self.lookahead_cycles and not observed and not self._cmd_on
                                    and (self._req_on or self._resp_on) and self._stream is None)
            if self.engine != "python":
                self._core = core_for(self, self._core)
                if self._core is not None and self._port_ahead:
                    self._start_core_jobs(self._core.job_slots)
        if self._held is not None:
            # Work up to this cycle was done ahead; the edge is kept so that simulated time
            # reaches it (the run ends here, or goes quiescent here, as without running ahead).
            stops, at = self._held
            if c < at:
                # Woken before the kept edge (a restore asks for the next edge): wait on.
                self.sleep()
                self.wake_at(self._phase + at * self._period)
                return
            self._held = None
            if stops:
                self.sim.stop("stream done")
            if stops or self._core is not None:  # (the compiled core kept no work after the edge)
                self.sleep()
            else:  # what is left after the kept edge is upkeep (see the loop below)
                self._sleep_until(self._next_work_cycle())
            return
        if self._port_ahead:
            self._tick_ports(c)
            return
        if self._core is not None:
            wake, outcome = self._core.advance(c)
            if outcome != DONE:
                if outcome == STOP_NOW:
                    self.sim.stop("stream done")
                else:
                    self._held = (outcome == HELD_STOP, wake)
        elif not self._ahead:
            wake = self._cycle(c)
            if self.stop_when_done and self._stream is not None and self.idle:
                self.sim.stop("stream done")
            if wake <= c + 1:
                return
        else:
            # Run the cycles the controller would tick at, up to the horizon, in this tick:
            # with no port and no waveform they are the same cycles and the same decisions.
            first = c
            horizon = c + self._ahead
            watch_done = self.stop_when_done and self._stream is not None
            while True:
                wake = self._cycle(c)
                if watch_done and self._stream_head is None and self.idle:
                    if c == first:
                        self.sim.stop("stream done")
                    else:
                        self._held = (True, c)
                        wake = c
                    break
                if wake >= _NEVER or self._only_upkeep():
                    # Nothing more to do, or only upkeep (refresh): the edge of this cycle is
                    # where a system with nothing else to do goes quiescent, as cycle by cycle.
                    if c > first:
                        self._held = (False, c)
                        wake = c
                    break
                if wake <= c:
                    wake = c + 1
                if wake > horizon:
                    break
                c = wake
        if self._held is not None:  # simulated time must reach a kept edge: not upkeep
            self.sleep()
            self.wake_at(self._phase + self._held[1] * self._period)
            return
        self._sleep_until(wake)

    def _cycle(self, c: int) -> int:
        """Do the work of DRAM cycle c; return the next cycle with work (_NEVER if none)."""
        if self._traced and self._transitions:
            # Due waveform changes first: a command issued now may override one (an ACT at
            # the cycle its bank's precharge ends).
            self._apply_transitions(c)
        order = self._order
        if order.due <= c and self.resp.try_send(order.head()):
            order.pop()
        wake = self._schedule(c)
        due = order.due
        if due < wake:
            wake = due if due > c else c + 1
        if self._traced:
            self.rq_depth.set(self._rq_count)
            self.wq_depth.set(self._wq_count)
            soonest = self._apply_transitions(c)
            if soonest < wake:
                wake = soonest
        return wake

    def _schedule(self, c: int) -> int:
        """The scheduling work of DRAM cycle c (intake, refresh, one command), without
        sending a response: return the next cycle with such work (_NEVER if none). What it
        decides never depends on the responses sent (they only leave the ResponseOrder)."""
        if self._req_on:
            self._take(c)
        head = self._stream_head
        if head is not None and head[0] <= c and (
                self._wq_count < self.write_queue if head[2] else self._rq_count < self.read_queue):
            self._pull_stream(c)
        if c >= self._refresh_due and not self._refresh_pending and not self._refpb_banks:
            self._start_refresh()
        per_bank = self._per_bank
        choose = self._choose_next
        if self._dirty or self._best is None:
            choose(c)
        best = self._best
        if best is not None and best[0] <= c:
            self._issue(c)
            if not per_bank:  # the issued burst left its queue
                self._take_next_cycle(c)
        if per_bank:
            self._move_to_bank(c)  # (one burst leaves the read or write queue for its bank's)
            if self._move_due == c + 1:
                self._take_next_cycle(c)
        if self._dirty:
            choose(c + 1)
        wake = self._next_work_cycle()
        # (the queue counts first: a busy controller, the common case, is told at once)
        if wake > c + 1 and not self._rq_count and not self._wq_count and self._intake_waits():
            wake = c + 1
        return wake

    def _intake_waits(self) -> bool:
        """Whether a request waits on ``req`` while the (shared) queues are empty: their last
        burst issued after the request was refused room, and only its intake is left to do,
        at the next cycle. A request is taken only at a cycle with scheduling work, so
        without it a write queue of one entry held the next write until the next refresh,
        or for ever with none, and a read queue of one entry the next read until the answer
        to the one before it was due."""
        return (self._req_on and not self._rq_count and not self._wq_count and self._job is None
                and not self._per_bank and self.req.valid)

    def _next_work_cycle(self) -> int:
        """The next cycle with scheduling work as things stand: a command may issue, a
        refresh falls due or the attached stream's next request may enter (_NEVER: none)."""
        best = self._best
        wake = best[0] if best is not None else _NEVER
        if self._refresh_due < wake and not self._refresh_pending and not self._refpb_banks:
            wake = self._refresh_due
        head = self._stream_head
        if head is not None and head[0] < wake and (
                self._wq_count < self.write_queue if head[2] else self._rq_count < self.read_queue):
            wake = head[0]
        if self._move_due < wake:
            wake = self._move_due
        return wake

    @property
    def idle(self) -> bool:
        """No request queued, no response waiting and no stream left."""
        if self._core is not None and not self._port_ahead:  # (fed through the ports, the counts follow the core's)
            return self._core.idle
        return (self._rq_count == 0 and self._wq_count == 0 and self._cq_count == 0 and not self._order
                and self._job is None and self._stream_head is None)

    @property
    def banks_open_since(self) -> int | None:
        """The cycle since which at least one bank has been open, None while all are closed
        (for background energy); the compiled core's while it owns the state."""
        if self._core is not None:
            return self._core.banks_open_since
        return super().banks_open_since

    @property
    def running_ahead(self) -> bool:
        """True while the controller may do the work of several cycles in one tick on an
        attached stream (see "Scheduling ahead" above); decided at its first tick and
        whenever observers change."""
        return bool(self._ahead)

    @property
    def schedules_ahead_through_ports(self) -> bool:
        """True while, fed through its ports, the controller may schedule the cycles no
        request can reach in one tick (see "Scheduling ahead" above); decided as
        :attr:`running_ahead` is."""
        return self._port_ahead

    @property
    def engine_in_use(self) -> str:
        """"compiled" while the compiled core does the scheduling, else "python"."""
        return "python" if self._core is None else "compiled"
