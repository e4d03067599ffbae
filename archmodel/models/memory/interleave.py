"""Several DRAM channels seen as one memory: addresses spread over the channels in blocks of
``interleave_bytes``, a request cut where it crosses from one channel's block to the next.
"""

from __future__ import annotations

from archmodel.kernel import Component, Counter, In, Out, Param, ParameterError, ParamGroup, at_least, connect, model

from ..messages import MemRequest
from .backing_store import FunctionalMemory
from .controller import DramController
from .response_order import ResponseOrder, split
from .splitting import EVERY_CLIENT, NEVER, REQUESTS, KeepsAnswerBounds, RESPONSES, check_request
from .timing import PRESETS, dram_clock, preset


class _ChannelBounds(dict):
    """Channel -> the earliest an answer from it can arrive (:data:`NEVER`: none without new
    input), ``find(ch, *args)`` worked out for the channels a question reaches only, once."""

    def __init__(self, find, *args):
        super().__init__()
        self.find = find
        self.args = args

    def __missing__(self, ch: int) -> int:
        bound = self.find(ch, *self.args)
        self[ch] = bound = NEVER if bound is None else bound
        return bound


def _power_of_two(value: int) -> str | None:
    return None if value >= 1 and value & (value - 1) == 0 else "must be a power of two"


@model
class InterleavedMemory(KeepsAnswerBounds, FunctionalMemory, Component):
    """``channels`` DRAM channels of ``standard`` behind one ``req``/``resp`` pair: to a
    client, one memory of ``channels`` times a channel's capacity from ``base_address``.

    Consecutive blocks of ``interleave_bytes`` go to consecutive channels (the channel index
    is the address bits just above the block offset), so a stream spreads over every
    channel. The default, 256 B, is the channel interleave granularity recent Intel Xeon and
    AMD EPYC memory controllers use by default (firmware offers 64 B up to 4 KiB), and GPUs
    with HBM spread addresses over channels in blocks of a few hundred bytes. The channels
    are children ``ch0`` .. ``ch{N-1}``, each a :class:`~.controller.DramController` with
    its ``channel`` index and ``channels`` = N, so each decodes and holds its own blocks;
    they connect to this component by channels of ``link_latency_cycles``.

    A request of any size is cut at block boundaries into one piece per block; pieces wait
    (at most ``pending_pieces`` of them) for their channel's link, one piece per channel per
    cycle; each channel cuts its pieces into bursts. The response to a request leaves once
    every piece is answered, in request order per client (``source``), at the cycle the last
    piece's answer arrives. ``backdoor_write``/``backdoor_read`` forward to the owning
    channels block by block.

    Leaves out: address hashing (XOR of row bits into the channel index), a shared command
    bus between channels, and any queueing or arbitration delay of a real interconnect
    beyond the links' latency.
    """

    standard = Param(str, "HBM2E", "timing preset of every channel", check=PRESETS.check)
    channels = Param(int, 8, "channels (a power of two)", check=_power_of_two)
    interleave_bytes = Param(int, 256, "bytes of one channel's block (a power of two, at least a burst)",
                             unit="bytes", check=_power_of_two)
    ranks = Param(int, None, "override the preset's ranks per channel", check=at_least(1))
    mapping = Param(str, "RoBaRaCoCh", "address bit-field order inside each channel")
    # Every channel controller's scheduling, as DramController declares it (one source).
    channel_params = ParamGroup(DramController, "scheduler", "page_policy", "refresh", "refresh_order", "read_queue",
                                "write_queue", "queue", "write_drain")
    link_latency_cycles = Param(int, 1, "latency of the links to and from each channel", unit="cycles",
                                check=at_least(1))
    pending_pieces = Param(int, 32, "pieces held waiting for their channel's link before a new request is "
                           "taken", check=at_least(1))

    req = In(REQUESTS, required=False, pair="resp", carries="requests")
    resp = Out(RESPONSES, required=False, pair="req", carries="answers")
    to_channel = Out("pieces to the channels", count="channels")
    from_channel = In("answers from the channels", count="channels")

    client_requests = Counter("requests", "requests taken on req")
    split_requests = Counter("requests", "requests that spanned more than one channel block")

    def setup(self) -> None:
        t = preset(self.standard)
        if self.clock is None:
            self.clock = dram_clock(t)
        if self.interleave_bytes < t.burst_bytes:
            raise ParameterError(f"{self.path}: interleave_bytes {self.interleave_bytes} is smaller than a "
                                 f"{self.standard} burst ({t.burst_bytes} bytes)",
                                 hint="a channel block holds whole bursts")
        self.channel_list = []
        # the channels' changes to their bounds, all counted here (see bounds_version)
        self._channel_changes = [0]
        for i in range(self.channels):
            ch = DramController(f"ch{i}", self, clock=self.clock, standard=self.standard, ranks=self.ranks,
                                mapping=self.mapping, channels=self.channels, channel=i,
                                interleave_bytes=self.interleave_bytes, base_address=self.base_address,
                                **self.channel_params)
            connect(self.to_channel[i], ch.req, latency=self.link_latency_cycles)
            connect(ch.resp, self.from_channel[i], latency=self.link_latency_cycles)
            ch.share_bounds_changes(self._channel_changes)
            self.channel_list.append(ch)
        self._link_index = {port: i for i, port in enumerate(self.to_channel)}
        self._shift = self.interleave_bytes.bit_length() - 1
        self._mask = self.channels - 1
        self._order = ResponseOrder()
        self._waiting = [[] for _ in range(self.channels)]  # per channel: (tag, MemRequest) to send
        self._held = 0
        self._outstanding: dict[int, tuple] = {}  # tag -> (job, offset in the request, channel)
        # job -> {channel: its pieces of the job not yet answered}, for the bounds (kept as
        # pieces go out and come back, not rebuilt from every piece at each question)
        self._unanswered: dict = {}
        self._next_tag = 0

    def start(self) -> None:
        self._period = self.domain.period_ps
        self._phase = self.domain.phase_ps
        self._resp_on = self.resp.connected
        self._answer_links = [(port, port.channel) for port in self.from_channel]
        child = self.channel_list[0]
        self._back = self.link_latency_cycles * self._period
        # a piece sent now is answered here no sooner than the links and a channel's reaction
        self._trip = 2 * self._back + child.reaction_ps(child.req, child.resp)

    # -- the functional side ------------------------------------------------------------
    @property
    def size_bytes(self) -> int:
        """Capacity: every channel's."""
        return self.channel_list[0].size_bytes * self.channels

    def store_offset(self, address: int, size: int) -> int | None:
        """The offset of ``size`` bytes at ``address`` from the first byte, or None when they do
        not all lie in this memory."""
        offset = address - self.base_address
        if offset < 0 or size < 0 or offset + size > self.size_bytes:
            return None
        return offset

    def _blocks(self, offset: int, size: int):
        """(channel, absolute address, bytes, offset in the access) of each block touched."""
        for at, n in split(offset, size, self.interleave_bytes):
            yield (at >> self._shift) & self._mask, self.base_address + at, n, at - offset

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Place bytes without simulated time, block by block in the owning channels."""
        offset = self._backdoor_offset("write", address, len(data))
        for ch, at, n, inside in self._blocks(offset, len(data)):
            self.channel_list[ch].backdoor_write(at, data[inside:inside + n])

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read bytes without simulated time, block by block from the owning channels."""
        offset = self._backdoor_offset("read", address, size)
        return b"".join(self.channel_list[ch].backdoor_read(at, n) for ch, at, n, _ in self._blocks(offset, size))

    def channel_of(self, address: int) -> int:
        """The channel that holds the byte at ``address``."""
        return ((address - self.base_address) >> self._shift) & self._mask

    # -- the clock edge -----------------------------------------------------------------
    def tick(self) -> None:
        self._bounds_changes += 1  # (the bounds kept for the lookahead: see KeepsAnswerBounds)
        c = (self.sim.now - self._phase) // self._period
        order = self._order
        outstanding = self._outstanding
        for port, link in self._answer_links:
            if link.flight and port.valid:  # (most links hold nothing: skip the port's checks)
                answer = port.recv()
                job, inside, ch = outstanding.pop(answer.tag)
                left = self._unanswered[job]
                if left[ch] == 1:
                    del left[ch]
                    if not left:
                        del self._unanswered[job]
                else:
                    left[ch] -= 1
                order.piece_done(job, c, inside, answer.data)
        if order.due <= c and self.resp.try_send(order.head()):
            order.pop()
        port = self.req
        if port.valid and self._held < self.pending_pieces:
            self._take(c, port.recv())
        busy = False
        for ch, waiting in enumerate(self._waiting):
            if waiting and self.to_channel[ch].try_send(waiting[0][1]):
                tag, _ = waiting.pop(0)
                self._held -= 1
                busy = busy or bool(waiting)
        if busy or order.due <= c or (port.valid and self._held < self.pending_pieces):
            return
        # Anything else comes with an answer arriving, a credit returning or a request arriving.
        self.sleep()

    def _take(self, c: int, message: MemRequest) -> None:
        offset = check_request(self, message)
        self.client_requests.add()
        size = message.size_bytes
        blocks = list(self._blocks(offset, size))
        if len(blocks) > 1:
            self.split_requests.add()
        job = self._order.open(message, [(at, n) for _, at, n, _ in blocks],
                               None if message.is_write else bytearray(size), track=self._resp_on)
        channels = self._unanswered[job] = {}
        for ch, at, n, inside in blocks:
            channels[ch] = channels.get(ch, 0) + 1
            tag = self._next_tag
            self._next_tag += 1
            data = message.data[inside:inside + n] if message.is_write else None
            piece = MemRequest(address=at, size_bytes=n, is_write=message.is_write, data=data, source=message.source,
                               tag=tag, created_ps=message.created_ps)
            self._outstanding[tag] = (job, inside, ch)
            self._waiting[ch].append((tag, piece))
            self._held += 1
        job.entered = len(blocks)

    def holding(self) -> str | None:
        """Requests taken and not yet answered (for the deadlock report)."""
        return f"{len(self._order)} requests" if len(self._order) else None

    # -- computing ahead ----------------------------------------------------------------
    def bounds_version(self) -> int:
        """Grows whenever this memory or one of its channels works or a request is sent to
        either (its bounds read the channels' own and their links'): the channels count
        their work here as they do it (``DramController.share_bounds_changes``), and only
        this memory's edge sends them pieces, counted by its own work, so one question
        does not add up sixteen channels' versions."""
        return super().bounds_version() + self._channel_changes[0]

    def earliest_send_ps(self, port) -> int | None:
        """A lower bound on the time of the next message on ``port`` from what this memory
        and its channels hold, with no new input (None: none without input). For ``resp``:
        responses leave in request order per client, each once every piece is back, so the
        next is a client's oldest request: at once if all its pieces are back, else not
        before the last of its channels with a piece outstanding can answer (an answer on
        its way back; a channel's own bound plus the link; a piece still to be sent, or on
        its way to the channel, plus the channel's reaction). For a channel's link
        (``to_channel[i]``): at once while a piece for it waits here, else once the first
        request on its way to ``req`` with a block in that channel arrives (pieces come only
        from requests taken, never from answers), None without one."""
        now = self.sim.now
        if port is self.resp:
            if not self._resp_on:
                return None
            return self._kept_bound(now, EVERY_CLIENT)  # (kept for the time point)
        ch = self._link_index.get(port)
        if ch is None or self._waiting[ch]:
            return now
        if self.req.connected:
            for arrival, message in self.req.channel.flight:
                if self._touches(message, ch):
                    return arrival if arrival > now else now
        return None

    _take_at = None  # the (time, transfers) _take_kept holds for
    _take_kept = 0

    def earliest_take_ps(self, port) -> int:
        """The first edge at which this memory may take the request at the head of ``req``
        (its credit then returns to the sender: see
        :meth:`~archmodel.kernel.OutPort.unblocks_from_ps`); now for a channel's answers and
        for ``req`` with nothing on its way.

        An edge takes one request from ``req``, before it sends any piece, and only while
        fewer than ``pending_pieces`` pieces wait here. So the head is taken no sooner than
        its arrival, and while ``k`` pieces too many wait, no sooner than the edge after the
        ``k``-th of the sends that make room: pieces waiting now only (none is added before
        the take), each channel sending at most one per edge from the first edge it can send
        (the link free, a credit held, or back the edge after its channel takes the request
        at the head of the link, no sooner than the channel's own ``earliest_take_ps``).
        Never later than the truth: every step counts the fewest edges. Kept while nothing
        is sent or taken anywhere at this time point (a channel's take bound only grows
        meanwhile)."""
        sim = self.sim
        now = sim.now
        if port is not self.req or not port.connected:
            return now
        flight = port.channel.flight
        if not flight:
            return now
        key = (now, sim.transfers)
        if self._take_at == key:
            return self._take_kept
        bound = self._take_bound(now, flight[0][0])
        self._take_at = key
        self._take_kept = bound
        return bound

    def _take_bound(self, now: int, arrival: int) -> int:
        """:meth:`earliest_take_ps` on ``req``, worked out from the state now."""
        period, edge = self._period, self.domain.edge_at_or_after
        first = edge(now)
        bound = edge(arrival)
        if bound < first:
            bound = first
        sends = self._held - self.pending_pieces + 1  # sends that must make room first
        if sends <= 0:
            return bound
        edges = []  # the edges of the soonest sends, up to `sends` per channel
        for ch, waiting in enumerate(self._waiting):
            if waiting:
                at = self._first_piece_ps(ch, first, now)
                for _ in range(min(len(waiting), sends)):
                    edges.append(at)
                    at += period
        if len(edges) < sends:  # (never: every piece held waits here)
            return bound
        edges.sort()
        made = edges[sends - 1] + period  # the take is checked before the edge's sends
        return made if made > bound else bound

    def _first_piece_ps(self, ch: int, first: int, now: int) -> int:
        """The first edge (from ``first``, this memory's next) at which a piece can go to
        channel ``ch``: its link free and a credit held (one taken at this time point returns
        at its commit; else the channel takes the message at the head of the link no sooner
        than its ``earliest_take_ps``, and the credit is usable at the edge after)."""
        channel = self.to_channel[ch].channel
        at = first if first > channel.busy_until else channel.busy_until
        if channel.credits <= 0:
            taken = channel.next_take_ps()
            back = now if taken is None else taken + 1
            if back > at:
                at = back
        return self.domain.edge_at_or_after(at)

    def _touches(self, message: MemRequest, ch: int) -> bool:
        """Whether ``message`` has a block in channel ``ch`` (a request this memory will
        refuse counts as touching every channel: what it does is the error's business)."""
        offset = message.address - self.base_address
        size = message.size_bytes
        if offset < 0 or size < 1 or offset + size > self.size_bytes:
            return True
        first = offset >> self._shift
        blocks = ((offset + size - 1) >> self._shift) - first + 1
        return blocks >= self.channels or (ch - first) & self._mask < blocks

    def _resp_bound_now(self, now: int, client) -> int | None:
        """:meth:`earliest_send_ps` on ``resp`` for ``client`` (EVERY_CLIENT: for any),
        worked out from the state now."""
        if client is not EVERY_CLIENT:
            return self._client_bound_now(now, client)
        period, phase = self._period, self._phase
        back, trip = self._back, self._trip
        best = None
        every = client is EVERY_CLIENT
        if self.req.connected and self.req.channel.flight:
            # a client with nothing here yet: its first request on the way, answered through
            # a channel at the soonest
            react = self.reaction_ps(self.req, self.resp)
            seen = set()
            for arrival, message in self.req.channel.flight:
                if not (every or message.source == client):
                    continue
                if message.source not in seen and not self._order.has_client(message.source):
                    seen.add(message.source)
                    at = max(arrival, now) + react
                    best = at if best is None else min(best, at)
        unanswered = self._unanswered
        order = self._order
        if every and order.due < NEVER:
            # each client's oldest request with every piece back leaves at its cycle
            # (order.due is the soonest of those), not before now
            at = max(now, phase + order.due * period)
            best = at if best is None else min(best, at)
        bounds = _ChannelBounds(self._channel_bound, now, back, trip)
        for job in order.heads():
            if not job.left:
                if every or job.message.source != client:
                    continue  # (counted through order.due, or not asked about)
                at = max(now, phase + job.done * period)
            else:
                if not (every or job.message.source == client):
                    continue
                # not before the last of the channels still to answer one of its pieces
                at = max(map(bounds.__getitem__, unanswered.get(job, ())), default=NEVER)
                if at >= NEVER:  # a piece no channel can answer without new input
                    continue
            best = at if best is None else min(best, at)
        return best

    def _client_bound_now(self, now: int, client) -> int | None:
        """:meth:`earliest_answer_ps` for ``client``, worked out from the state now: its
        oldest request here, looked up directly, at once if every piece is back, else not
        before the last of its channels still to answer one of its pieces can
        (:meth:`_client_piece_ps`); with nothing here, its first request on the way,
        answered through a channel at the soonest."""
        job = self._order.head_of(client)
        if job is None:
            if self.req.connected:
                for arrival, message in self.req.channel.flight:
                    if message.source == client:
                        return max(arrival, now) + self.reaction_ps(self.req, self.resp)
            return None
        if not job.left:
            return max(now, self._phase + job.done * self._period)
        best = None
        for ch in self._unanswered.get(job, ()):
            at = self._client_piece_ps(ch, client, now)
            if best is None or at > best:
                best = at
        return best

    def _client_piece_ps(self, ch: int, client, now: int) -> int:
        """The soonest the next answer from channel ``ch`` to a piece of ``client``'s oldest
        request here can arrive (it has one there). Each channel answers a client's pieces
        in the order they were sent, which is the order of the client's requests here, and
        every piece of its earlier requests is back: so the first answer to ``client`` on its
        way back is to one of those pieces; else the channel's own bound on its next answer
        to ``client`` (its oldest piece there, or its first on the way) plus the link; else,
        with none of its pieces at the channel or on the way, they wait here
        (:meth:`_waiting_piece_ps`)."""
        for arrival, message in self.from_channel[ch].channel.flight:
            if message.source == client:
                return arrival
        channel = self.channel_list[ch]
        sent = channel.earliest_answer_ps(client)
        if sent is not None:
            return sent + self._back
        return self._waiting_piece_ps(ch, client, now)

    def _waiting_piece_ps(self, ch: int, client, now: int) -> int:
        """The soonest the answer to ``client``'s first piece waiting here for channel ``ch``
        can arrive back, the client having none at the channel nor on the link to it. The
        pieces for one channel leave in the order they wait (new ones join the end), one per
        edge at most, from the first edge the link can take one (:meth:`_first_piece_ps`):
        so the k-th in line (from 0) leaves no sooner than k edges after that, and reaches
        the channel a link later, behind every request on its way there now, as the
        client's first request there (its earlier pieces are all answered). The channel
        bounds such a newcomer from its state now (``newcomer_answer_ps``); a write among
        the pieces before it may reach the write queue first and answer it from there (one
        behind it never can: a channel takes the next request only once every burst of the
        last has entered). Then the link back; and never sooner than a piece sent at this
        memory's next edge plus the round trip."""
        phase, period = self._phase, self._period
        first = phase + max(0, -(-(now - phase) // period)) * period
        soonest = first + self._trip
        waiting = self._waiting[ch]
        for k, (_, piece) in enumerate(waiting):
            if piece.source == client:
                break
        else:  # (never: the client has a piece here, at the channel, or on a link)
            return soonest
        leaves = self._first_piece_ps(ch, first, now) + k * period
        writes_ahead = any(message.is_write for _, message in waiting[:k])
        answered = self.channel_list[ch].newcomer_answer_ps(piece, leaves + self._back, writes_ahead)
        if answered is not None and answered + self._back > soonest:
            return answered + self._back
        return soonest

    def _channel_bound(self, ch: int, now: int, back: int, trip: int) -> int | None:
        """The earliest an answer from channel ``ch`` can arrive here (None: none without new
        input): one on its way back; a piece on its way there, or waiting here, plus the
        round trip; the channel's own bound on its next answer plus the link."""
        times = []
        inbound = self.from_channel[ch].channel.flight
        if inbound:
            times.append(inbound[0][0])
        outbound = self.to_channel[ch].channel.flight
        if outbound:
            times.append(outbound[0][0] - back + trip)
        if self._waiting[ch]:
            phase, period = self._phase, self._period
            times.append(phase + max(0, -(-(now - phase) // period)) * period + trip)
        channel = self.channel_list[ch]
        sent = channel.earliest_send_ps(channel.resp)
        if sent is not None:
            times.append(sent + back)
        return min(times) if times else None

    bounds_inputs_in_flight = True
    """:meth:`earliest_send_ps` counts the requests on their way to ``req`` and the answers on
    their way back from the channels, so the kernel's lookahead adds no reaction for them."""

    def reaction_ps(self, inp, out) -> int | None:
        """A lower bound on the time from a request arriving on ``req`` to a response it
        causes on ``resp``: the link to a channel, the channel's reaction, the link back; to
        a piece on a channel's link: none (sent at the edge the request is taken). An answer
        from a channel causes a response only as :meth:`earliest_send_ps` counts it (the
        channels hear from nobody else), and never a piece: None."""
        if inp is not self.req:
            return None
        if out is self.resp:
            child = self.channel_list[0]
            back = self.link_latency_cycles * (self.domain or self.clock).period_ps
            return 2 * back + child.reaction_ps(child.req, child.resp)
        return 0

    def least_reaction_ps(self, inp, out) -> int | None:
        """As :meth:`reaction_ps`, which follows from the wiring and the channels' clock alone."""
        return self.reaction_ps(inp, out)
