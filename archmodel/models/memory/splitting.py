"""Client requests of any size: cut into pieces (device bursts, or one channel's share), each
answered once all its pieces are, and answered in request order per client.

A memory takes a :class:`~archmodel.models.messages.MemRequest` of any size and alignment,
serves it as pieces that may finish in any order (FR-FCFS reorders bursts; channels of an
interleaved memory finish independently), and sends one
:class:`~archmodel.models.messages.MemResponse` per request carrying all its bytes (or one
write acknowledgement). Responses to one client (one ``source``) leave in the order its
requests were taken, as AXI requires of one ID and as clients that match responses by order
(the Snitch cluster DMA) rely on; responses to different clients are independent. The
pieces and the reorder buffer that answers whole requests are :mod:`.response_order`'s;
here are the checks of a request, a memory's bounds on its answers and a DRAM
controller's front door.
"""

from __future__ import annotations

import itertools
from typing import Any

from archmodel.kernel import ArchError, Counter, In, Out

from ..messages import CONTROL_BITS, MemRequest
from .response_order import NEVER, Job, split

EVERY_CLIENT = object()
"""The client argument of a bound on the next response to any client (not one client's)."""

REQUESTS = "memory requests (MemRequest, any size and alignment inside the memory)"
RESPONSES = "read data and write acknowledgements (MemResponse), one per request, in request order per source"


def check_request(owner, message: MemRequest) -> int:
    """The store offset of a request's first byte, after checking it against ``owner`` (a
    :class:`~.backing_store.FunctionalMemory`): a positive size, data of that size for a
    write, every byte inside the memory. A bad request stops the run with a sentence naming
    the requester, the address and the memory's range."""
    address, size = message.address, message.size_bytes
    if size > 0 and (not message.is_write or (message.data is not None and len(message.data) == size)):
        offset = owner.store_offset(address, size)
        if offset is not None:
            return offset  # (the sentences below are made only for a request that needs them)
    kind = "write" if message.is_write else "read"
    who = f"from {message.source!r}" if message.source is not None else "from an unnamed source"
    if size < 1:
        owner.fail(f"req: {kind} of {size} bytes at {address:#x} {who}: a request needs at least one byte")
    if message.is_write and (message.data is None or len(message.data) != size):
        got = "no data" if message.data is None else f"{len(message.data)} bytes of data"
        owner.fail(f"req: write of {size} bytes at {address:#x} {who} carries {got}")
    offset = owner.store_offset(address, size)
    if offset is None:
        problem = f"req: {kind} of {size} bytes at {address:#x} {who} is outside this memory ({owner.address_range()})"
        if message.origin is not None:  # read from an input file: the file is at fault, say where
            raise ArchError(f"{owner.path}: {problem}", span=message.origin,
                            hint="keep the addresses inside the range in parentheses")
        owner.fail(problem)
    return offset


def _response_bits(message: MemRequest) -> int:
    """The size on the wire of the response to ``message`` (``MemResponse.size_bits``)."""
    return CONTROL_BITS if message.is_write or not message.size_bytes else 8 * message.size_bytes


class KeepsAnswerBounds:
    """A memory's bounds on its next response, to any client or to one, kept while its
    :meth:`bounds_version` holds: every question of the lookahead asks them (every cluster of
    a mesh, at one edge), and they change only when the memory works (its tick, a restore)
    or a request is sent to it. The memory provides ``req``, ``_resp_on`` and
    ``_resp_bound_now(now, client)``, and adds 1 to ``_bounds_changes`` whenever it works
    (before and after its edge's work, if the lookahead may ask it in the middle)."""

    _resp_bound_at = None  # the (time, bounds_version) _resp_bounds hold for
    _resp_bounds: dict = {}  # client (or EVERY_CLIENT) -> its bound
    _bounds_changes = 0

    def bounds_version(self) -> int:
        """Grows whenever the memory works or a request is sent to it (the requests on
        their way count in its bounds): see :meth:`Component.bounds_version`."""
        return self._bounds_changes + (self.req.channel.sent if self.req.connected else 0)

    def forget_bounds(self) -> None:
        """Drop the bounds kept (a test compares them with ones worked out again)."""
        self._resp_bound_at = None

    def earliest_answer_ps(self, source) -> int | None:
        """The bound of ``earliest_send_ps`` on ``resp`` for the responses to client
        ``source`` only (its oldest request here, or its first on the way): a network that
        knows whose requests it brought here asks it, since a response goes back to its
        requester only. Another client's request, taken later, never lets this one be
        answered sooner (the bound counts the data bus, queue slots and command timing as
        if it were alone)."""
        if not self._resp_on:
            return None
        return self._kept_bound(self.sim.now, source)

    def _kept_bound(self, now: int, client) -> int | None:
        if self.sim is None:
            return self._resp_bound_now(now, client)
        key = (now, self.bounds_version())
        if self._resp_bound_at != key:
            self._resp_bound_at = key
            self._resp_bounds = {}
        bounds = self._resp_bounds
        if client not in bounds:
            bounds[client] = self._resp_bound_now(now, client)
        return bounds[client]


class SplitsRequests(KeepsAnswerBounds):
    """The front door of a DRAM controller (a mixin): takes requests from ``req``, cuts them
    into bursts that enter the read and write queues as room allows, and keeps the
    :class:`~.response_order.ResponseOrder` that answers them on ``resp``.

    The controller provides ``store`` (its :class:`~.backing_store.BackingStore`),
    ``burst_bytes``, ``timing`` (CL, tBL), ``forward_cycles``, the queue counts and
    capacities (``_rq_count``, ``read_queue``, ``_wq_count``, ``write_queue``),
    ``_order``, ``_job`` and ``_resp_on``, and ``_enqueue_piece(c, job, offset, size)``,
    which queues one burst (and reports a finished piece to ``_order``).
    """

    req = In(REQUESTS, required=False, pair="resp", carries="requests")
    resp = Out(RESPONSES, required=False, pair="req", carries="answers")
    _processed = -1
    """The last cycle whose command issue is decided for good (ahead of now while the
    controller schedules ahead; -1 for one that never does): the response bounds start the
    reads still to issue after it."""
    client_requests = Counter("requests", "requests taken on req (each one or more bursts)")
    split_requests = Counter("requests", "requests on req that needed more than one burst")

    def _room(self, write: bool) -> bool:
        return self._wq_count < self.write_queue if write else self._rq_count < self.read_queue

    def _take(self, c: int) -> None:
        """Let the request on ``req`` (or the one already entering) put its bursts into the
        queues as room allows. The next request is taken only once every burst of the
        previous one has entered, and only when its first burst has room, so a request of
        one burst is taken exactly when the queue has room for it."""
        job = self._job
        if job is None:
            job = self._accept()
            if job is None:
                return
        self._enter(c, job)

    def _accept(self, cut=split) -> Job | None:
        """Take the request on ``req`` into service if its first burst has room: check it,
        store a write's bytes or read a read's, cut it into bursts (offsets in the store:
        ``cut(offset, size, burst_bytes)``, :func:`~.response_order.split` or
        :class:`~.response_order.Bursts`) and open its job in the
        :class:`~.response_order.ResponseOrder` (None: nothing taken)."""
        port = self.req
        message = port.peek()  # (None: nothing valid on req)
        if message is None or not (self._wq_count < self.write_queue if message.is_write
                                   else self._rq_count < self.read_queue):  # (_room, written out)
            return None
        port.recv()
        offset = check_request(self, message)
        self.client_requests.value += 1
        if message.is_write:
            self.store.write(offset, message.data)
            data = None
        else:
            # Data is functional at arrival: the read sees exactly the writes taken before it.
            data = self.store.read(offset, message.size_bytes)
        pieces = cut(offset, message.size_bytes, self.burst_bytes)
        if len(pieces) > 1:
            self.split_requests.value += 1
        return self._order.open(message, pieces, data, self._resp_on)

    def _enter(self, c: int, job: Job) -> None:
        """Put the bursts of ``job`` that find room into the queues at cycle c."""
        pieces = job.pieces
        count = len(pieces)
        write = job.message.is_write
        while job.entered < count and self._room(write):
            offset, size = pieces[job.entered]
            job.entered += 1
            self._enqueue_piece(c, job, offset, size)
        self._job = job if job.entered < count else None

    # -- computing ahead --------------------------------------------------------------
    bounds_inputs_in_flight = True
    """:meth:`earliest_send_ps` counts the requests already on their way to ``req`` (their
    answers queue behind their client's earlier ones), so the kernel's lookahead does not add
    a reaction for them."""

    answers_in_order_per_client = True
    """Responses leave through the :class:`~.response_order.ResponseOrder` only, each client's in the order
    its requests were taken (a posted write's acknowledgement waits for the responses to
    the client's earlier requests too): see :attr:`Component.answers_in_order_per_client`."""

    def earliest_send_ps(self, port) -> int | None:
        """A lower bound on the time of the next message on ``port`` from what this
        controller holds now and the requests already on their way to it (None: none
        without new input). For ``resp``: responses leave in request order per client, so
        only each client's oldest unanswered request can answer next: the earliest of those
        (a posted write one cycle after its last burst enters; a read once its queued bursts
        have had their RDs, one data burst per tBL on the data bus, the last CL + tBL after
        its RD; a burst not yet queued ``forward_cycles`` after it enters if a write to it
        waits), and for a client with nothing here yet the first of its requests on the way
        (from its arrival and the requests in line ahead of it, as soon as a write or a read
        can be answered: :meth:`_newcomer_terms`); the controller may count the banks, a
        drain and the queue slots too (:class:`~.answer_bounds.BoundsQueuedReads`). Other
        outputs (the command bus) may send at once."""
        now = self.sim.now if self.sim is not None else 0
        if port is not self.resp:
            return now
        if not self._resp_on:
            return None
        return self._kept_bound(now, EVERY_CLIENT)  # (kept for the time point)

    def least_message_bits(self, port) -> int:
        """On ``resp``, the smallest of the responses :meth:`earliest_send_ps` counts: each
        client's oldest unanswered request here and the requests on their way to ``req`` (a
        read's response carries its bytes, a write's one control word)."""
        if port is not self.resp:
            return 0
        least = None
        for job in self._order.heads():
            bits = _response_bits(job.message)
            if least is None or bits < least:
                least = bits
        if self.req.connected:
            for _, message in self.req.channel.flight:
                bits = _response_bits(message)
                if least is None or bits < least:
                    least = bits
        return least or 0

    _terms_at = None  # the (simulator, bounds_version) _terms hold for
    _terms: dict = {}  # client (or EVERY_CLIENT) -> its bound's terms (see _bound_terms)

    def forget_bounds(self) -> None:
        """Drop the bounds kept, and the terms they are worked out from."""
        super().forget_bounds()
        self._terms_at = None

    def _resp_bound_now(self, now: int, client) -> int | None:
        """:meth:`earliest_send_ps` on ``resp`` for ``client`` (EVERY_CLIENT: for any),
        worked out from the state now: the terms of :meth:`_bound_terms` at the first edge
        at or after now. The terms hold while :meth:`bounds_version` does, whatever the
        time (the channels of an interleaved memory are asked at every time point, mostly
        with nothing changed but the time), so they are kept on it."""
        if self.sim is None:
            pairs = self._bound_terms(client)
        else:
            key = (self.sim, self.bounds_version())
            if self._terms_at != key:
                self._terms_at = key
                self._terms = {}
            pairs = self._terms.get(client)
            if pairs is None:
                pairs = self._terms[client] = self._bound_terms(client)
        period, phase = self._period, self._phase
        c0 = max(0, -(-(now - phase) // period))  # the first edge at or after now
        best = NEVER
        for a, b in pairs:
            at = c0 + a
            if b > at:
                at = b
            if at < best:
                best = at
        return None if best >= NEVER else phase + best * period

    def _bound_terms(self, client) -> list:
        """The bound of :meth:`earliest_send_ps` on ``resp`` for ``client`` (EVERY_CLIENT:
        for any) as terms that hold whatever the time while the state does: ``(a, b)``
        pairs such that the soonest cycle from c0, the first edge at or after now, is the
        least of ``max(c0 + a, b)`` over them (every term is at least c0: nothing leaves
        before now; no pairs: none without new input)."""
        timing = self.timing
        cl, burst_cycles = timing.CL, timing.tBL
        early = min(cl + burst_cycles, self.forward_cycles)
        # A queued burst not yet read was not issued in the cycles already scheduled (a
        # controller scheduling ahead decides them for good, and reports a read burst done
        # when its RD issues): its RD comes after them, and after c0.
        issue0 = self._processed + 1
        # (the queue room and _last_entry_cycle written out: a question of the lookahead
        # may ask every channel of a memory, each over every client's oldest request)
        free_reads = self.read_queue - self._rq_count
        free_writes = self.write_queue - self._wq_count
        read_entry = 0 if free_reads else 1  # cycles from c0 until the last burst of a read can enter

        order = self._order
        every = client is EVERY_CLIENT
        pairs = []
        if every:
            # each client's oldest request, every piece finished: answered at its cycle
            # (order.due is the soonest of those), not before c0
            if order.due < NEVER:
                pairs.append((0, order.due))
            heads: Any = order.heads()
        else:
            # (one client's oldest request, looked up: the channels of an interleaved memory
            # are asked about one client at every question of the lookahead)
            head = order.head_of(client)
            heads = () if head is None else (head,)
        for job in heads:
            if not job.left:
                if every:
                    continue  # (counted through order.due)
                pairs.append((0, job.done))  # answered once its turn comes
                continue
            left, done = self._job_progress(job)
            message = job.message
            unqueued = len(job.pieces) - job.entered
            if message.is_write:
                # posted: acknowledged once every burst is queued, the cycle after it is
                # taken at the soonest (or at the stamp of a burst entering as a slot frees,
                # at a cycle not yet scheduled, the cycle after a WR at one)
                departures = unqueued - free_writes
                entry = 0 if departures <= 0 else 1 + (departures - 1) * burst_cycles
                pairs.append((max(1, entry), issue0 + entry))
                continue
            # Queued bursts still need their RD: one data burst per tBL on the channel's
            # data bus, the first CL after an RD issued at c0 at the soonest (or after the
            # cycles already scheduled). Bursts not yet queued might still be answered from
            # the write queue once they enter.
            queued = left - unqueued
            if queued:
                a = cl + queued * burst_cycles
                b = issue0 + a
                banks = self._queued_read_terms(job, queued, issue0)
                if banks is not None:  # (the banks the bursts need, where the controller counts them)
                    if banks[0] > a:
                        a = banks[0]
                    if banks[1] > b:
                        b = banks[1]
            else:
                a, b = early, -1
            if unqueued and read_entry + early > a:
                a = read_entry + early
            if done > b:
                b = done
            pairs.append((a, b))
        # (a client asked about with a request here has no newcomer on the way: skip the walk)
        if (every or not heads) and self.req.connected and self.req.channel.flight:
            flight = self.req.channel.flight
            if not every:
                # Only the client's first request on the way counts (it has none here), so
                # the walk stops there, and is spared when the client sends none: most
                # questions ask about one client, and each request walked costs a look at
                # the writes ahead of it (_may_forward).
                first = next((i for i, (_, message) in enumerate(flight) if message.source == client), None)
                if first is None:
                    return pairs
                flight = itertools.islice(flight, first + 1)
            free = {False: free_reads, True: free_writes}
            ahead = self._entering_bursts()
            newcomers = set()
            for arrival, message, writes_before, reads_before in self._line(flight):
                source = message.source
                if not (order.has_client(source) or source in newcomers or not (every or source == client)):
                    newcomers.add(source)
                    pairs.append(self._newcomer_terms(free, ahead, message, arrival, writes_before, reads_before))
                # (else answered after its client's earlier requests, or not asked about)
        return pairs

    def _job_progress(self, job: Job) -> tuple[int, int]:
        """The pieces of ``job`` (not finished) still to finish, and the cycle the last of its
        finished ones did (0: none yet): its own counts here; a controller whose compiled
        core counts them reads the core's."""
        return job.left, job.done

    def _queued_read_terms(self, job, queued: int, issue0: int) -> tuple[int, int] | None:
        """``(a, b)``: the ``queued`` read bursts of ``job`` in the read queue are answered no
        sooner than ``max(c0 + a, b)`` from cycle c0, counting what their banks must do first
        (None: only the data bus is counted). A controller whose scheduler it knows says so
        (:class:`~.answer_bounds.BoundsQueuedReads`)."""
        return None

    def _newcomer_read_terms(self, message: MemRequest, enters: int, arrives: int,
                             undecided: int) -> tuple[int, int] | None:
        """As :meth:`_queued_read_terms`, for a client's first read, not yet here, that no
        write can answer (see :meth:`_newcomer_terms`: its bursts enter ``enters`` cycles
        after c0 and at cycle ``arrives`` at the soonest): None, only the data bus is
        counted, unless the controller counts its banks."""
        return None

    def _bring_bounds_up_to(self, now: int) -> None:
        """Bring the state the bounds read up to what the edges before ``now`` would have
        left (nothing to do here; a controller that defers edges decides them first)."""

    def newcomer_answer_ps(self, message: MemRequest, arrival_ps: int, writes_ahead: bool = True,
                           queued=()) -> int | None:
        """The soonest the response to ``message`` can leave on ``resp`` if the request
        arrives on ``req`` at ``arrival_ps`` or later, behind every request on its way now
        and then the requests ``queued`` (in that order), and its client holds nothing here
        before it: the bound :meth:`earliest_send_ps` gives a client's first request on its
        way, worked out from the state now (None without a response path). ``writes_ahead``:
        whether a write this memory does not see yet, nor in ``queued``, may arrive before
        it (then a read may be answered from the write queue). A network whose memory-side
        interface holds such a request, not yet passed on, asks it with the soonest the
        request can arrive over the link and the requests it passes on first: their read
        bursts need read-queue slots before it (:meth:`_read_line_terms`), as those on
        their way do."""
        if not self._resp_on:
            return None
        period, phase = self._period, self._phase
        now = self.sim.now
        self._bring_bounds_up_to(now)  # (the terms count the commands to come from c0 on)
        c0 = max(0, -(-(now - phase) // period))
        writes: bool | list = []
        reads = 0
        line = self.req.channel.flight if self.req.connected else ()
        if queued:
            line = itertools.chain(line, ((None, request) for request in queued))
        for _, _, writes, reads in self._line(line, True):
            pass  # (what is ahead of a request behind them all)
        if writes_ahead:
            writes = True  # (unknown writes may come first)
        at = self._newcomer_cycle(c0, self._queue_room(), self._entering_bursts(), message, arrival_ps, writes, reads)
        return phase + at * period

    def _line(self, flight, behind: bool = False):
        """Each request on its way (``flight``) with what enters the queues before it:
        ``(arrival, message, writes, reads)``, the writes on their way ahead of it (a list,
        read before the next item) and the read bursts ahead of it (the request still entering
        too) that need a read-queue slot, none answered from the write queue
        (:meth:`_may_forward`); ``behind``: then one more item, ``(None, None, writes,
        reads)`` for a request behind them all. A request is taken only once every burst
        of the one before it has entered."""
        writes: list = []
        reads = 0
        entering = self._job
        if entering is not None and not entering.message.is_write and not self._may_forward(entering.message, writes):
            reads = len(entering.pieces) - entering.entered
        for arrival, message in flight:
            yield arrival, message, writes, reads
            if message.is_write:
                writes.append(message)
            elif not self._may_forward(message, writes):
                reads += self._burst_count(message)
        if behind:
            yield None, None, writes, reads

    def _burst_count(self, message: MemRequest) -> int:
        """The bursts ``message`` is cut into (as many pieces as :func:`~.response_order.split` makes)."""
        burst = self.burst_bytes
        size = message.size_bytes
        return (message.address + size - 1) // burst - message.address // burst + 1 if size > 0 else 0

    def _queue_room(self) -> dict:
        return {False: self.read_queue - self._rq_count, True: self.write_queue - self._wq_count}

    def _entering_bursts(self) -> dict:
        """The bursts of the request still entering (one at a time), by is_write: they take
        their queue's slots before any request behind them."""
        ahead = {False: 0, True: 0}
        entering = self._job
        if entering is not None:
            ahead[entering.message.is_write] = len(entering.pieces) - entering.entered
        return ahead

    def _last_entry_cycle(self, c0: int, free: dict, pieces: int, write: bool, ahead: int = 0) -> int:
        """The cycle the last of ``pieces`` bursts can enter (be stamped), from cycle c0:
        then while the queue has room; else a slot frees when a burst's RD or WR issues,
        one per tBL on the data bus at most, and the burst waiting for it enters the next
        cycle. A read burst answered from the write queue takes no slot, so one free slot
        may let every read burst in at once."""
        return c0 + self._entry_cycles(free, pieces, write, ahead)

    def _entry_cycles(self, free: dict, pieces: int, write: bool, ahead: int = 0) -> int:
        """:meth:`_last_entry_cycle` less c0 (it does not depend on c0)."""
        departures = ahead + pieces - free[write] if write else (0 if free[write] else 1)
        return 0 if departures <= 0 else 1 + (departures - 1) * self.timing.tBL

    def _newcomer_cycle(self, c0: int, free: dict, ahead: dict, message: MemRequest, arrival_ps: int,
                        writes_before: bool | list = True, reads_before: int = 0) -> int:
        """The soonest cycle the response to ``message``, a client's first request here,
        arriving at ``arrival_ps`` at the soonest, can leave (see :meth:`earliest_send_ps`),
        from cycle c0: :meth:`_newcomer_terms` at c0."""
        a, b = self._newcomer_terms(free, ahead, message, arrival_ps, writes_before, reads_before)
        return c0 + a if c0 + a > b else b

    def _newcomer_terms(self, free: dict, ahead: dict, message: MemRequest, arrival_ps: int,
                        writes_before: bool | list = True, reads_before: int = 0) -> tuple[int, int]:
        """``(a, b)``: the response to ``message``, a client's first request here, arriving
        at ``arrival_ps`` at the soonest, can leave no sooner than ``max(c0 + a, b)`` from
        cycle c0. It is taken at a cycle after those already scheduled (a controller that
        schedules ahead takes none at a cycle it has decided), and once the ``reads_before``
        read bursts ahead of it that need a slot have entered (:meth:`_read_line_terms`). A
        read is answered from the write queue only if a write of one of its bursts is
        pending there when the burst enters: the writes queued now, entering, or before it
        (``writes_before``: those on their way ahead of it; True: unknown writes may come
        first); where none can be (:meth:`_may_forward`; a write leaves the queue only, by
        its WR), every burst needs its RD and a read-queue slot: one data burst per tBL, the
        first CL after an RD at its entry at the soonest, after the cycles already
        scheduled."""
        write = message.is_write
        pieces = self._burst_count(message)
        arrives = -(-(arrival_ps - self._phase) // self._period)  # (from c0 at the soonest)
        taken = max(arrives, self._processed + 1)
        enters = self._entry_cycles(free, pieces, write, ahead[write])  # (cycles after c0)
        line = self._read_line_terms(reads_before, 0) if reads_before else None
        if line is not None:  # (taken once the reads ahead have entered)
            enters = max(enters, line[0])
            taken = max(taken, line[1])
        if write:  # (acknowledged once its bursts have entered, the cycle after it is taken at the soonest)
            return max(1, enters, 0 if line is None else line[0] + 1), taken + 1
        early = min(self.timing.CL + self.timing.tBL, self.forward_cycles)
        a, b = enters + early, taken + early
        if not self._may_forward(message, writes_before):
            rest = self.timing.CL + pieces * self.timing.tBL
            a = max(a, enters + rest)
            b = max(b, taken + rest)
            # (the banks its bursts need, and the slots, where the controller counts them)
            for terms in (self._newcomer_read_terms(message, enters, arrives, self._processed + 1),
                          self._read_line_terms(reads_before, pieces)):
                if terms is not None:
                    a = max(a, terms[0])
                    b = max(b, terms[1])
        return a, b

    def _read_line_terms(self, before: int, reads: int) -> tuple[int, int] | None:
        """``(a, b)``: with ``before`` read bursts ahead in line and ``reads`` of a request's
        own, each needing a read-queue slot, the last burst ahead has entered (``reads`` 0),
        or the request is answered (else), no sooner than ``max(c0 + a, b)`` from cycle c0
        (None: not counted; a controller that frees a slot only at an RD counts it)."""
        return None

    def _may_forward(self, message: MemRequest, writes_before: bool | list) -> bool:
        """Whether a burst of the read ``message``, a client's first request here, might be
        answered from the write queue (see :meth:`_newcomer_terms`): here whenever a write is
        queued, entering or before it; a controller that knows its queued writes' bursts
        looks at those of the read."""
        entering = self._job
        return bool(writes_before) or bool(self._wq_count) or (entering is not None and entering.message.is_write)

    def reaction_ps(self, inp, out) -> int:
        """A lower bound on the time from a message arriving on ``inp`` to a message it causes
        on ``out``: one cycle from ``req`` to ``resp`` (a write is acknowledged the cycle after
        it is queued; a read takes at least ``forward_cycles``), none otherwise."""
        if inp is self.req and out is self.resp:
            return (self.domain or self.clock).period_ps
        return 0

    def least_reaction_ps(self, inp, out) -> int:
        """As :meth:`reaction_ps`, which follows from the clock alone."""
        return self.reaction_ps(inp, out)
