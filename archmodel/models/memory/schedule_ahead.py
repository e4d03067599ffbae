"""When a :class:`~.controller.DramController` sleeps and how far it schedules ahead of
simulated time when it is fed through its ports (a mixin of the controller, which holds the
state): the port-fed edge, the lookahead that bounds when a request can next arrive, the
rule that work with nothing outstanding but a refresh is upkeep, and the same edge with the
compiled scheduling core (:mod:`.compiled_core`) doing the scheduling: requests are taken
and cut into bursts here, the core queues and schedules the bursts, and the bursts it
completes are handed to the :class:`~.response_order.ResponseOrder` here, which sends each
response at its own cycle as on the Python path."""

from __future__ import annotations

from bisect import insort
from typing import Any

from .compiled_core_layout import CATCHING_UP, ENTERING
from .response_order import Bursts
from .splitting import NEVER

_NEVER = NEVER

SHORT_CYCLES_PER_SENDER = 4
"""An answer of the lookahead counts as short when it lets the controller schedule fewer than
this many DRAM cycles past its next one with work for each sender that can reach it: a
question walks the wiring behind the controller (one cluster, or a quadrant's clusters and
network behind an HBM channel), so the more senders, the more edges an answer must save to pay
for it. After a short answer the controller backs off (see QuestionBackoff) and works edge by
edge meanwhile, as it may always do; with the compiled core it asks no question whose answer
could not reach that far (its lookahead_cycles or the next answer's due cycle come sooner),
and counts such a chance as a short answer."""


class SchedulesAhead:
    """The controller's sleeping and port-fed scheduling ahead. The controller provides
    ``_schedule(c)``, ``_order``, ``_job``, ``_processed``, ``_next_work``, ``_lookahead``
    (a QuestionBackoff), ``lookahead_cycles``, ``idle``, ``_core``, ``_port_ahead``,
    ``_best``, the refresh state, ``_phase`` and ``_period``; with a compiled core also
    ``_accept()``, ``_room``, ``_intake_waits()``, ``_local_decode``, ``_burst_mask`` and the
    queue counts, which this class keeps equal to the core's after each of its calls (the
    lookahead bounds of :class:`~.splitting.SplitsRequests` read them)."""

    _core: Any  # the controller's compiled core (None: the Python path)

    def _sleep_until(self, wake: int, edge: int = _NEVER) -> None:
        """Sleep until DRAM cycle ``wake`` (_NEVER: until a request comes). With nothing
        outstanding and no command due but a refresh's, the work then is upkeep, which should
        not keep a system with nothing else to do running for ever (a closing precharge is
        still part of the last access). ``edge``: the cycle of this edge, when the caller
        knows it and ``wake`` is after it (the wake-up is then counted in cycles from this
        edge, which needs no rounding to an edge: this runs at most edges of a busy channel)."""
        self.sleep()
        if wake < _NEVER:
            if self._only_upkeep():
                self.wake_for_upkeep_at(self._phase + wake * self._period)
            elif edge < wake:
                self.wake_in(wake - edge)
            else:
                self.wake_at(self._phase + wake * self._period)

    def _only_upkeep(self) -> bool:
        """Nothing outstanding and no command due but a refresh's (the compiled core keeps
        its own copy of this state; on an attached stream the controller goes on with it as
        it always did, since the stream's last request ends such a run)."""
        core = self._core
        if core is not None:
            if self._rq_count or self._wq_count or self._order.jobs:  # (not idle: the common case, told at once)
                return False
            # (the rest of idle, written out: fed through the ports, the counts are the core's;
            # the core's state read last: it costs most)
            return (self._port_ahead and not self._cq_count and self._job is None and self._stream_head is None
                    and core.only_upkeep_due)
        return self.idle and (self._best is None or self._refresh_pending or bool(self._refpb_banks))

    def _tick_ports(self, c: int) -> None:
        """The edge at cycle c of a controller fed through its ports, scheduling ahead.

        Responses leave at their true cycles (one per cycle, as :meth:`_cycle` sends them), so
        the ``resp`` channel sees what it sees cycle by cycle. The scheduling work (which command
        issues when) depends only on the queued requests, which change only when one is taken
        from ``req``: while a client waits for an answer and no request waits on ``req``, the
        cycles up to the earliest one at which a request can arrive (the kernel's lookahead,
        the run's limit and watchdog deadline, and the next response's due cycle, since a
        client may answer a response) are scheduled now. A request waiting on ``req`` (the
        queues full, or another request still entering) keeps the work cycle by cycle, so it
        enters at the cycle it would have entered at."""
        order = self._order
        if c <= self._processed and order.due > c:
            behind = self._behind
            if behind is not None and self.req.peek() is behind:
                # A request waits for room, which it has from no cycle scheduled yet, and no
                # answer is due: nothing to do at this edge (another request arrived behind
                # it, or a wake-up asked for before it came), and the wake-up asked for at the
                # edge that scheduled behind it is still to come.
                self.sleep()
                return
        if self._left_overs and self._left_over_only(c):
            self.sleep()  # (as if it had not ticked: every wake-up it asked for is still due)
            return
        caught_up = self._deferring and self._end_deferral(c)
        if order.due <= c and self.resp.try_send(order.head()):
            order.pop()
        # (waiting: a request is valid on req; nothing arrives while the edge works, and a
        # request taken leaves nothing valid at this edge: one take per edge)
        if caught_up:
            # cycle c's work done with the deferred cycles' (see _end_deferral): what is left
            # of the edge's scheduling is the lookahead's
            waiting = False
            wake = self._next_work
            if wake < _NEVER and (order.jobs or self._job is not None):
                wake = self._next_work = self._schedule_ahead(c, wake)
        elif c > self._processed:
            if self._core is None:
                wake = self._schedule(c)
                self._processed = c
                waiting = self.req.valid
            else:
                waiting = self.req.valid
                taken = waiting and self._job is None and self._take_into_core(c)
                if taken:
                    waiting = False
                if waiting:
                    wake = self._schedule_behind(c)
                elif taken or c >= self._next_work:
                    wake = self._schedule_compiled(c, c)
                else:
                    # Nothing entered and no work is due: the cycle's scheduling is a no-op.
                    self._processed = c
                    wake = self._next_work
            if wake < _NEVER and (order.jobs or self._job is not None) and not waiting:
                wake = self._schedule_ahead(c, wake)
            self._next_work = wake
        else:
            waiting = self.req.valid
            # (a request arriving while none could be taken waits: _schedule_held)
            if waiting and c > self._held_until:
                self.fail(f"req: a request arrived at cycle {c}, which the controller had already scheduled "
                          "(a lookahead bound was not conservative)")
        wake = self._next_work
        due = order.due
        # (not while requests arriving up to _held_until may wait unseen: a deferral
        # assumes none waits)
        if wake < due and self._answer_cycles and self._job is None and not waiting and c > self._held_until:
            # (see _deferring)
            until = wake + self._answer_cycles
            if due < until:
                until = due
            elif due == _NEVER:
                queued = self._rq_count + self._wq_count
                if queued:  # (the work lasts at least to last: see _deferring)
                    last = wake + queued - 1
                    if last < until:
                        until = last
                elif not order.jobs and self._only_upkeep():
                    until = wake + self.lookahead_cycles  # (upkeep: see _deferring)
                else:
                    until = wake
            if until > wake:
                self._deferring = True
                lefts = self._left_overs
                if lefts and wake < lefts[0] <= until:
                    # a wake-up left over comes first: end there (it ticks anyway) instead of
                    # ticking for nothing there and again at the end
                    until = lefts.pop(0)
                self._deferred_until = until
                self._sleep_until(until, c)
                return
        self._deferring = False
        if due < wake:
            wake = due if due > c else c + 1
        if wake <= c + 1:
            self._asked(c + 1, c)  # (it stays awake: it ticks at the next edge)
            return
        if wake < _NEVER:
            self._asked(wake, c)
        self._sleep_until(wake, c)

    # -- deferred edges ---------------------------------------------------------------------
    _deferring = False
    """True while the controller defers its cycles with work, which lets a channel with the
    compiled core, fed through its ports, work at fewer edges than it has cycles with work.
    Its work is seen outside only through its answers while every burst of the requests
    taken has entered the queues (a posted write, or a read forwarded from a queued write,
    is answered as its burst enters) and no request waits on ``req``; and the soonest answer
    a cycle's work can decide is a read's, :attr:`~.compiled_core.CompiledCore.answer_cycles`
    (CL + tBL) after its RD. So when the next cycle with work W comes before the next
    answer's due cycle, the controller sleeps from W until that due cycle or W +
    ``answer_cycles``, whichever comes first (``_deferred_until``: no answer a deferred cycle
    decides is due sooner), or until a request's arrival, which wakes it. With no answer to
    come it sleeps no longer than its work lasts for sure, to W + the bursts queued - 1 (the
    RD or WR of each issues at a cycle of its own from W on): a run that has nothing else
    left to do ends at the last cycle with work, as edge by edge, not at a deferral's end.
    Holding nothing at all (no burst queued, no answer owed), its work is upkeep (a
    refresh's commands: with nothing queued the core chooses no other) and decides no
    answer: it sleeps until W + ``lookahead_cycles`` on a wake-up for upkeep, as edge by
    edge it would have slept until each cycle with work, so a run with nothing else left
    ends quiescent at the same time. Then it decides
    the cycles it passed over in one call of the core before anything else at that edge
    (:meth:`_end_deferral`): the same cycles, in the same order, with nothing arrived in
    them, as edge by edge. The state a deferred cycle changes is read before that edge only
    by the lookahead's questions about the answers (:meth:`_kept_bound`) and by whoever reads
    the statistics when a run returns (:meth:`settle`): both catch up first, to the cycles
    the edges up to then would have decided. A wake-up cannot be taken back, so a deferral
    that an arrival ends leaves its own behind, for an edge that edge-by-edge work may not
    have: see :attr:`_left_overs`."""

    _answer_cycles = 0  # CompiledCore.answer_cycles, kept once the core is in use (see _deferring)
    _deferred_until = 0  # the cycle the deferral under way wakes at (see _deferring)

    _left_overs: list = []  # (the class's stays empty: a compiled core's controller has its own)
    """The cycles, in order, of the wake-ups of deferrals that an arrival ended sooner. The
    controller takes a request waiting on ``req`` at the first edge it ticks at once there is
    room (as the Python path does, cycle by cycle), so it must tick at the edges edge-by-edge
    work ticks at and no others while a request waits: at such a wake-up it ticks as edge by
    edge only if edge-by-edge work would tick there too, and otherwise goes straight back to
    sleep (:meth:`_left_over_only`)."""

    _asks: set | None = None
    """The cycles of the wake-ups the controller asked for as edge-by-edge work asks (each
    edge's next cycle with work or answer, and the one :meth:`_end_deferral` asks for on
    behalf of the edges it passed over; a deferral's own not counted), with the compiled
    core (None on the Python path, which never defers); the past ones are dropped from time
    to time (see :meth:`_asked`)."""

    def _asked(self, cycle: int, c: int) -> None:
        """Note a wake-up asked for at ``cycle`` at the edge of cycle c, as edge-by-edge work
        would ask it (see :attr:`_asks`)."""
        asks = self._asks
        if asks is not None:
            if len(asks) >= 16:  # (a few at most are still to come: the rest are past)
                asks = self._asks = {at for at in asks if at > c}
            asks.add(cycle)

    def _end_deferral(self, c: int) -> bool:
        """At an edge at cycle c while deferring: decide the cycles passed over before it,
        and look at the edge the controller would have slept until after them (it takes a
        request waiting on ``req`` at the first edge it works at, so the edges it works at
        must stay those of edge-by-edge work). Edge by edge, the last cycle with work before
        c (or the edge that began to defer) asked to wake at the next cycle with work or the
        answer's due cycle, whichever comes first, for upkeep only if holding nothing (see
        :meth:`_sleep_until`); at the deferral's own wake-up with nothing arrived, the edge
        asks that itself or defers again.

        Whether cycle c's own work was decided here too: at the deferral's own wake-up with
        nothing arrived, nothing enters at c, so the same call of the core that catches up
        goes on to c (one call fewer than catching up, then working at c). A request the
        work of c completes is answered after c (by an RD's data, CL + tBL later: no burst
        enters at c, so none is posted or forwarded then), so handing it to the response
        order before this edge's response leaves changes nothing."""
        own = c == self._deferred_until and not self.req.valid
        if c < self._deferred_until:
            insort(self._left_overs, self._deferred_until)
        caught_up = False
        if self._next_work < c:
            caught_up = own
            self._catch_up(c if own else c - 1)
        if own:
            # Ended by its own wake-up, with nothing arrived: this edge asks for that wake-up
            # itself (nothing changed the work after it), or defers again, and then an
            # arrival before it asks for it (below). (A request arriving now may change the
            # work, and the wake-up still counts then: one waiting for room enters at the
            # first edge the controller works at.)
            return caught_up
        wake = self._next_work
        due = self._order.due
        if due < wake:
            wake = due
        if wake > c:
            at = self._phase + wake * self._period
            if self._only_upkeep():  # (as the edge before would have asked it: see _sleep_until)
                self.wake_for_upkeep_at(at)
            else:
                self.wake_at(at)
            self._asked(wake, c)
        return False

    def _left_over_only(self, c: int) -> bool:
        """Whether the controller ticks at cycle c only for the wake-up a deferral left over
        (see :attr:`_left_overs`), where edge-by-edge work would not tick: for nothing it
        asked for (:attr:`_asks`), no answer due, no message arriving on ``req`` and no
        request taken at the edge before with another behind it (the kernel looks at the
        next edge then). The left-over wake-ups up to c are dropped."""
        lefts = self._left_overs
        if lefts[0] > c:
            return False
        left_over = False
        while lefts and lefts[0] <= c:
            if lefts.pop(0) == c:
                left_over = True
        if not left_over or c == self._order.due or c in self._asks:
            return False
        if self._deferring and c == self._deferred_until:  # (the deferral under way wakes here too)
            return False
        channel = self.req.channel
        now = self.sim.now
        for arrival, _ in channel.flight:
            if arrival >= now:
                if arrival == now:
                    return False
                break
        flight = channel.flight
        return not (channel.taken_at == now - self._period and flight and flight[0][0] < now)

    def _catch_up(self, last: int) -> None:
        """Decide the deferred cycles with work up to ``last`` (see :attr:`_deferring`), at
        most ``lookahead_cycles`` + 1 of them a call (the core records a call's commands in
        buffers of that size)."""
        wake = self._next_work
        span = self.lookahead_cycles
        while wake <= last:
            # (no response is sent meanwhile: the core goes on past the requests it completes)
            wake = self._schedule_compiled(wake, min(last, wake + span), CATCHING_UP)
        self._next_work = wake
        if self._processed < last:
            self._processed = last

    def _catch_up_before(self, now: int) -> None:
        """While deferring, decide the deferred cycles before the first edge at or after
        ``now``, counted as a change of the bounds (the work the edges would have done by now)."""
        last = max(0, -(-(now - self._phase) // self._period)) - 1
        if self._next_work <= last:
            self._bounds_changes += 1
            if self._bounds_watch is not None:
                self._bounds_watch[0] += 1
            self._catch_up(last)

    def _kept_bound(self, now: int, client) -> int | None:
        """As :meth:`~.splitting.KeepsAnswerBounds._kept_bound`, from the state the edges up to
        now would have left (deferred cycles decided first: a queued read's RD then comes
        after them, as the bounds count it)."""
        if self._deferring:  # (else nothing is deferred: the common case, asked at every question)
            self._catch_up_before(now)
        return super()._kept_bound(now, client)

    def settle(self) -> None:
        """When a run returns, decide the deferred cycles up to its time (each edge up to
        then would have), so the statistics and the command listeners are as edge by edge;
        and have the compiled core hand over the counts it keeps meanwhile."""
        if self._deferring:
            self._catch_up_before(self.sim.now + 1)
        if self._core is not None:
            self._core.hand_over()

    def _schedule_ahead(self, c: int, wake: int) -> int:
        """Schedule the cycles after c with work (the next is ``wake``) that no request can
        reach; return the next cycle with work after them."""
        if self._job is not None and self._core is not None:
            return self._schedule_entering(c, wake)  # (no arrival can change these cycles)
        order = self._order
        end = c + self.lookahead_cycles + 1  # the first cycle not scheduled now
        due = order.due
        # A client may answer a response sent at its due cycle (or later): its request then
        # arrives after that cycle.
        if due < end:
            end = due + 1
        if wake >= end:
            return wake
        answer = self._answer_cycles
        if answer and due <= wake + answer and self._job is None:
            # The edge defers these cycles instead, up to the answer's due cycle, which it
            # works at either way (see _deferring): as many edges as a question could save,
            # without one (a question walks the wiring behind the controller).
            return wake
        sim, domain = self.sim, self.domain
        # wake past the run's limit or the watchdog's deadline: nothing to schedule now (as
        # _run_bound(end) <= wake says, found without working the bound out: the common case
        # is the next one, where the bound is not needed either)
        at = self._phase + wake * self._period
        if at > sim.watchdog_deadline_ps or (sim.limit_ps is not None and at > sim.limit_ps):
            return wake
        if not self._lookahead.should_ask():
            # the last questions gave nothing to schedule ahead: not running ahead is always
            # right, and asking each cycle would cost more (it walks the wiring)
            return wake
        if answer and end - wake < self.short_horizon_cycles:
            # No answer could reach the short horizon (see SHORT_CYCLES_PER_SENDER): taken as
            # the short answer the question would give, without asking it (the edge defers
            # what such an answer would let it schedule, but for a request still entering).
            self._lookahead.answered(False)
            return wake
        end = self._run_bound(end)
        until = sim.undisturbed_until_ps(self, self._phase + end * self._period)
        if until is not None:
            end = min(end, domain.cycle_of(until - 1) + 1)
        self._lookahead.answered(end - wake >= self.short_horizon_cycles)
        if wake >= end:
            return wake
        core = self._core
        while wake < end:
            if core is None:
                c = wake
                wake = self._schedule(c)
                self._processed = c
                if wake <= c:
                    wake = c + 1
            else:
                # every cycle with work up to end - 1, in one call, unless a request's last
                # burst completes first (its response may bring end closer)
                wake = self._schedule_compiled(wake, end - 1)
            due = order.due
            if due < end:
                end = due + 1
        return wake

    _held_until = -1
    """The last cycle scheduled while no request could be taken (:meth:`_schedule_held`:
    one waiting for room, or one still entering): a request arriving up to then waits on
    ``req`` without waking the controller."""

    def _schedule_entering(self, c: int, wake: int) -> int:
        """Schedule the cycles with work from ``wake`` on while the request taken last still
        has bursts to enter (the queues full), up to the cycle its last burst enters in
        (within ``lookahead_cycles`` and the run's bounds); return the next cycle with work.
        The controller takes no request before every burst of that one has entered, so
        whatever arrives meanwhile waits on ``req`` and changes none of those cycles, nor do
        the answers they decide (a client answering one sends a request that waits too): no
        question of the lookahead is needed. A request arriving then does not wake the
        controller: on the cycle-by-cycle path it would tick at its arrival only to find the
        request not takeable, and it is taken at the first edge after that cycle the
        controller works at with room for it, here as there (with 16 clusters on 4 DDR4
        channels, about 1,400 of the 6,200 edges a channel ticked at were such cycles, one
        at a time)."""
        end = self._run_bound(c + self.lookahead_cycles + 1)
        if wake >= end:
            return wake
        return self._schedule_held(wake, end - 1, ENTERING)

    _short = (None, 0)  # (simulator, short horizon) for short_horizon_cycles

    @property
    def short_horizon_cycles(self) -> int:
        """DRAM cycles below which an answer of the lookahead counts as short, after which the
        controller asks less often (see :data:`SHORT_CYCLES_PER_SENDER`): found once per
        simulator from the senders its wiring lets reach the controller. After short answers
        in a row it lets as many chances pass between questions at most (the backoff's
        ``most``, if larger): a question costs in proportion to those senders, so useless ones
        (every one of a channel behind a chiplet's 174 senders, in the Manticore package's
        GEMM) cost no more than the edges a useful one would save."""
        sim, short = self._short
        if sim is not self.sim:
            short = SHORT_CYCLES_PER_SENDER * max(1, len(self.sim.connection_graph.senders(self)))
            self._short = (self.sim, short)
            if self._lookahead.most < short:
                self._lookahead.most = short
        return short

    def earliest_take_ps(self, port) -> int:
        """The first edge at which the controller may take the request waiting on ``req``:
        fed through its ports and scheduling ahead, it takes requests only at cycles after
        the last one it has scheduled (one arriving at a cycle already scheduled would be an
        error), so a client blocked on ``req`` gets its credit back no sooner (see
        :meth:`~archmodel.kernel.OutPort.unblocks_from_ps`). Now otherwise."""
        now = self.sim.now
        if port is not self.req or not self._port_ahead:
            return now
        first = self._phase + (self._processed + 1) * self._period
        return first if first > now else now

    def _run_bound(self, end: int) -> int:
        """``end`` (the first cycle not to schedule now), or sooner the cycle after the run's
        limit or the watchdog's deadline."""
        sim, domain = self.sim, self.domain
        end = min(end, domain.cycle_of(sim.watchdog_deadline_ps) + 1)
        if sim.limit_ps is not None:
            end = min(end, domain.cycle_of(sim.limit_ps) + 1)
        return end

    # -- with the compiled core -------------------------------------------------------
    _behind = None  # the request waiting on req that the core has scheduled behind

    def _schedule_behind(self, c: int) -> int:
        """Cycle c's work, with a request waiting on ``req`` that could not enter at c (no
        room, or the previous request's bursts still entering): whatever arrives after it
        waits behind it, so the work up to the cycle that leaves room for it depends on
        nothing outside; it is scheduled now too (within ``lookahead_cycles`` and the run's
        bounds), and the request enters at the next cycle the controller works at, as on the
        Python path. Return the next cycle with work: the one after the cycle that left room,
        when that left the queues empty (as the Python path's ``_schedule``)."""
        message = self.req.peek()
        self._behind = message
        end = self._run_bound(c + self.lookahead_cycles + 1)
        wake = self._schedule_held(c, max(c, end - 1), int(message.is_write))
        done = self._processed  # (the cycle that left room for it, if one did)
        if wake > done + 1 and self._intake_waits():
            wake = done + 1
        return wake

    def _schedule_held(self, first: int, last: int, head: int) -> int:
        """The core's work from cycle ``first`` to ``last`` (where ``head`` lets it stop:
        :meth:`~.compiled_core.CompiledCore.schedule`) while no request can be taken, so the
        requests arriving in the cycles it decides wait on ``req`` without waking the
        controller (they would wake it for nothing) and are no lookahead error there
        (``_held_until``). Return the next cycle with work."""
        wake = self._schedule_compiled(first, last, head)
        self._held_until = self._processed
        self.req.wake_on_arrivals_after(self._phase + self._processed * self._period)
        return wake

    def _start_core_jobs(self, slots: int) -> None:
        """The compiled core names each client request by a job slot: none used yet."""
        self._slot_jobs: list = [None] * slots
        self._answer_cycles = self._core.answer_cycles
        self._asks = set()
        self._left_overs = []
        self._free_slots = list(range(slots - 1, -1, -1))

    def _job_progress(self, job) -> tuple[int, int]:
        """As :meth:`~.splitting.SplitsRequests._job_progress`: with the compiled core, which
        reports a request only once its last burst completes, the core's counts."""
        if job.slot >= 0 and self._core is not None:
            return self._core.job_progress(job.slot)
        return job.left, job.done

    def _take_into_core(self, c: int) -> bool:
        """As :meth:`~.splitting.SplitsRequests._take` at cycle c: once every burst of the
        previous request has entered, take the request on ``req`` if its first burst has
        room, and hand its bursts to the core, which puts them into the queues as room
        allows (from cycle c on, as ``_enter`` does). Whether one was taken."""
        if self._job is not None:
            return False
        job = self._accept(Bursts)  # (the core cuts the bursts: Python needs only their count)
        if job is None:
            return False
        slot = self._free_slots.pop()
        self._slot_jobs[slot] = job
        job.slot = slot
        bursts = job.pieces
        self._core.feed(c, slot, job.message.is_write, bursts.address, bursts.size, bursts.count)
        self._job = job
        return True

    def _schedule_compiled(self, first: int, last: int, head: int = -1) -> int:
        """The core's scheduling work of cycle ``first`` and of the later cycles with work up
        to ``last`` (fewer if a request's last burst completes, unless ``head`` is
        CATCHING_UP): hand the completed requests to the response order, follow the queue
        counts and the entering request; return the next cycle with work."""
        wake, self._processed, self._rq_count, self._wq_count, waiting, done = self._core.schedule(first, last, head)
        if done:
            order, slots, free = self._order, self._slot_jobs, self._free_slots
            for slot, at in done:
                order.job_done(slots[slot], at)
                slots[slot] = None
                free.append(slot)
        job = self._job
        if job is not None:
            job.entered = len(job.pieces) - waiting
            if not waiting:
                self._job = None
        return wake
