"""The memory-mapped network interface: MemRequests in, packets across, MemResponses back."""

from __future__ import annotations

from collections import deque

import attrs

from archmodel.kernel import In, Out, Param, model

from ..messages import CONTROL_BITS, MemRequest, MemResponse, restored, retagged
from .address_map import AddressMap, ForwardsFunctionalAccess, hex_address
from .interface import NetworkInterface


def answer_flits(request: MemRequest, flit_bits: int) -> int:
    """Flits of the response packet that answers ``request`` on a network of ``flit_bits``
    flits: the bytes read, or one control word for a write acknowledgement, as
    :class:`MemResponse` sizes itself (:meth:`MemoryMappedInterface._send_response` holds a
    memory to it). For the lookahead, which counts a cycle per flit behind the head."""
    bits = CONTROL_BITS if request.is_write or not request.size_bytes else 8 * request.size_bytes
    return max(1, -(-bits // flit_bits))


@attrs.frozen
class RequestTrip:
    """What a request packet carries: the request, the requesting terminal, the request's
    number among that requester's requests (``order``, the key of its reorder buffer) and
    among those it sent to this destination (``pair_seq``, restoring order on arrival)."""

    requester: int
    order: int
    pair_seq: int
    request: MemRequest


@attrs.frozen
class ResponseTrip:
    """What a response packet carries: the response and the ``order`` of its request."""

    order: int
    response: MemResponse


@model
class MemoryMappedInterface(ForwardsFunctionalAccess, NetworkInterface):
    """A network interface that carries memory traffic: a requester on one terminal reaches the
    memories on others through an address map, as an AXI or TileLink bridge onto a NoC does.

    Requester side: a MemRequest taken from ``mem_req`` is looked up in the address map; the
    terminal owning its bytes is the packet's destination. The packet has
    ``ceil(size_bits / flit_bits)`` flits: one control word for a read, the control word and
    the data for a write. The response comes back as a packet of its own size (the read data,
    or one word for a write acknowledgement) and leaves on ``mem_rsp`` with the request's
    ``tag`` and ``source``. A request to an address no range holds, or one whose bytes cross
    the end of its range into the next, stops the run (ModelAssertion naming the address):
    the interface does not split requests, because reassembling the pieces of one response
    from several memories is the requester's protocol, not the network's.

    Memory side: a request packet arriving here leaves on ``to_memory`` with a tag of this
    interface's own (so requesters' tags never collide at the memory) and, as its source,
    the pair (requester terminal, original source), so that a memory answering in order per
    source keeps only each requester's order, as AXI keeps it per ID; the memory's
    response, taken from ``from_memory``, is matched to its request by that tag and sent
    back. The memory may answer in any order.

    Ordering. The network itself keeps no order between packets (virtual channels and
    adaptive routing let a later packet overtake), so the interfaces restore it: each memory
    receives a requester's requests in the order the requester issued them (no read
    overtakes an earlier write to the same bytes), and each requester receives its responses
    in the order of its requests, across memories too (a reorder buffer), which is what the
    Snitch cluster's DMA expects. With one in-order memory that is the order the memory gave.

    The source queue takes a request from ``mem_req`` while it holds fewer than two packets, as
    ``inp`` does, so a busy network pushes back on the requester. Responses from the memory
    are always taken. A workload that finds this interface at the end of its memory port can
    use ``backdoor_read``/``backdoor_write`` (forwarded to the memories owning the bytes),
    ``base_address`` (the lowest mapped address) and ``size_bytes`` (the span of the map).

    Built by :class:`~.network.Noc` (``address_map = [(start, end, terminal), ...]``), which
    shares one map among its interfaces; standalone (beside a ``topology ... of NocRouter``)
    give each interface the same ``address_map``; the functional path then reaches only the
    memory on the interface's own terminal.
    Leaves out: atomics, bursts split by the interface, limits on outstanding requests.
    """

    address_map = Param((list, tuple), (), "standalone: (start, end, terminal) byte ranges, end exclusive")
    mem_req = In("MemRequests of a requester, routed by the address map", required=False, pair="mem_rsp",
                 carries="requests")
    mem_rsp = Out("MemResponses to the requester, in the order of its requests", required=False, pair="mem_req",
                  carries="answers")
    to_memory = Out("MemRequests for the memory at this terminal", required=False, pair="from_memory")
    from_memory = In("MemResponses of the memory at this terminal", required=False, pair="to_memory")

    def setup(self) -> None:
        super().setup()
        self.memory_map = AddressMap(self.address_map, self.terminals, self.path)
        self.memory_map.memory_ports[self.terminal] = self.to_memory
        self.io = (self.mem_req, self.mem_rsp, self.to_memory, self.from_memory)
        self.requests_issued = 0
        self.responses_delivered = 0
        self.early_responses: dict = {}  # order -> response that overtook an earlier one
        self.sent_to: dict = {}  # destination terminal -> requests sent there
        self.expected_from: dict = {}  # requester terminal -> pair_seq of its next request
        self.early_requests: dict = {}  # (requester, pair_seq) -> RequestTrip that overtook
        self.at_memory: dict = {}  # our tag at the memory -> RequestTrip
        self.held_sources: dict = {}  # requester -> {its source: requests of it at the memory}
        self.waiting: dict = {}  # requester -> {its source: its requests here not yet passed on (early or for_memory)}
        self.held_orders: set = set()  # (requester, order) of the requests here, until their responses are taken
        self.memory_tags = 0
        self.to_requester: deque = deque()
        self.for_memory: deque = deque()
        # The least cycles from taking a request to its response arriving (a lower bound, for
        # the lookahead); Noc sets the network's, standalone it is 0.
        self.round_trip_cycles = 0
        self.in_flights: tuple = (deque(), deque())  # mem_req's and from_memory's messages on their way in (set by begin)

    def share_memory_map(self, memory_map: AddressMap) -> None:
        """Route by ``memory_map`` (one map for every interface of a network)."""
        self.memory_map = memory_map

    def use_ports(self, mem_req, mem_rsp, to_memory, from_memory) -> None:
        """Serve these four ports instead of this interface's own: under ``Noc(engine="fast")``
        the engine, a kernel component, owns them, and steps this interface."""
        self.io = (mem_req, mem_rsp, to_memory, from_memory)

    def memory_ports_in_use(self) -> bool:
        """Whether any of the served memory ports is connected."""
        return any(port.connected for port in self.io)

    def begin(self, now: int, period: int, phase: int, rng) -> None:
        # (half a port pair connected is refused as the simulator is built: the ports' pairs)
        mem_req, _, _, from_memory = self.io
        super().begin(now, period, phase, rng)
        # The messages on their way in on mem_req and from_memory (a channel keeps one deque
        # of them for its life; an unconnected port's stays empty): a port with none is not
        # ``valid``, which step then need not ask (a property of the kernel's, at every edge
        # of every busy interface, while most of these deques are empty).
        self.in_flights = tuple(port.channel.flight if port.channel is not None else deque()
                                for port in (mem_req, from_memory))

    def step(self, now: int, word):
        self.take_messages(now)
        word = NetworkInterface.step(self, now, word)
        self.pass_messages()
        return word

    def take_messages(self, now: int) -> None:
        """What :meth:`step` does before the network side: a request taken from ``mem_req``
        while the source queue holds fewer than two packets, and a response from
        ``from_memory``, become packets (queued at ``now``)."""
        mem_req, _, _, from_memory = self.io
        requests, responses = self.in_flights
        if requests and len(self.queue) < 2 and mem_req.valid:
            self._send_request(mem_req.recv(), now)
        if responses and from_memory.valid:
            self._send_response(from_memory.recv(), now)

    def pass_messages(self) -> None:
        """What :meth:`step` does after the network side: what arrived leaves, responses on
        ``mem_rsp`` in the order of the requests and requests on ``to_memory``, while the
        ports take them."""
        _, mem_rsp, to_memory, _ = self.io
        to_requester = self.to_requester
        while to_requester and mem_rsp.try_send(to_requester[0]):
            to_requester.popleft()
        for_memory = self.for_memory
        while for_memory and to_memory.try_send(for_memory[0]):
            requester, source = for_memory.popleft().source
            waiting = self.waiting[requester]
            if waiting[source] > 1:
                waiting[source] -= 1
            elif len(waiting) > 1:
                del waiting[source]
            else:
                del self.waiting[requester]

    def busy(self) -> bool:
        if self.network_busy():
            return True
        mem_req, _, _, from_memory = self.io
        requests, responses = self.in_flights
        return bool((requests and mem_req.valid) or (responses and from_memory.valid)
                    or (self.inp.channel is not None and self.inp.valid))

    def earliest_send_ps(self, port) -> int | None:
        """Lookahead: on ``mem_rsp`` the next edge while a response in request order waits to
        leave, else the soonest answer to a request not yet injected whole
        (:meth:`unsent_answered_ps`); on ``to_memory`` the next edge while a request waits to
        leave. Else None: a response is reassembled only from flits still to arrive (one
        waiting for an earlier response needs that one first), and a request likewise."""
        _, mem_rsp, to_memory, _ = self.io
        if port is mem_rsp:
            if self.to_requester:
                return self.sim.now
            return self.unsent_answered_ps()
        if port is to_memory:
            return self.sim.now if self.for_memory else None
        return super().earliest_send_ps(port)

    def reaction_ps(self, inp, out) -> int | None:
        """As :meth:`NetworkInterface.reaction_ps`, but on ``mem_rsp``: a request taken is
        answered no sooner than the network's least round trip (``round_trip_cycles``), and a
        word from the router completes a response only as :meth:`completion_ps` says."""
        mem_req, mem_rsp, _, _ = self.io
        if out is mem_rsp:
            if inp is self.from_router:
                return self.completion_ps()
            if inp is mem_req:
                return self.round_trip_cycles * self.period
        return super().reaction_ps(inp, out)

    def _unsent_requests(self) -> list:
        """This interface's request packets not yet injected whole: queued, or being sent."""
        packets = [p for p in self.queue if isinstance(p.payload, RequestTrip)]
        if self.sending is not None and isinstance(self.sending.payload, RequestTrip):
            packets.append(self.sending)
        return packets

    def unsent_answered_ps(self) -> int | None:
        """The soonest a response to a request still (partly) in the source queue can leave:
        its head goes no sooner than now (or went at its injection), its tail arrives one
        cycle per further flit behind, and the round trip takes ``round_trip_cycles``."""
        now = self.sim.now
        soonest = None
        for packet in self._unsent_requests():
            if packet.injected_ps < 0:
                at = now + self.round_trip_cycles * self.period
            else:
                at = max(now, packet.injected_ps + (self.round_trip_cycles + packet.size - 1) * self.period)
            if soonest is None or at < soonest:
                soonest = at
        return soonest

    def completion_ps(self) -> int | None:
        """The soonest a response completes after the next word from the router, for the
        responses to the requests injected whole so far (those to later requests are charged
        to the request, see :meth:`reaction_ps`, and to requests still being injected, see
        :meth:`unsent_answered_ps`): at once while one has not begun to arrive (it
        may be a single flit), else when the packet with the fewest flits to come has had
        them, one per cycle; never (None) when none is awaited."""
        awaited = (self.requests_issued - self.responses_delivered - len(self.early_responses)
                   - len(self._unsent_requests()))  # those are bounded on their own
        to_come = [packet.size - index for packet, index in self.arriving.values()
                   if isinstance(packet.payload, ResponseTrip)]
        if awaited > len(to_come):
            return 0
        if not to_come:
            return None
        return (min(to_come) - 1) * self.period

    def holds_for_memory(self, requester: int) -> bool:
        """Whether a request of requester terminal ``requester`` has arrived here and not yet
        left on ``to_memory`` (one that overtook an earlier one, or one waiting for the
        memory to take it): kept as they come and go, for the lookahead."""
        return requester in self.waiting

    def holds_requests_of(self, requester: int) -> bool:
        """Whether a request of requester terminal ``requester`` is anywhere between its
        arrival here and its response's leaving the memory's link: waiting to be put in order
        or passed on (:meth:`holds_for_memory`), on its way to the memory, held there, or its
        response on its way back (counted in :meth:`sources_at_memory` until the response is
        taken). For the lookahead, which asks only the memories holding a requester's
        requests about it."""
        return requester in self.held_sources or requester in self.waiting

    def next_answer_order(self) -> int | None:
        """The ``order`` of the request whose response this requester's ``mem_rsp`` sends
        next once ``to_requester`` is empty (responses leave in the order of the requests),
        or None when every request issued has its response delivered: for the lookahead."""
        return self.responses_delivered if self.requests_issued > self.responses_delivered else None

    def holds_order(self, requester: int, order: int) -> bool:
        """Whether the request numbered ``order`` of requester terminal ``requester`` is
        here: arrived, waiting to be put in order or passed on, on its way to the memory,
        held there, or its response on its way back (until the response is taken)."""
        return (requester, order) in self.held_orders

    def sources_waiting(self, requester: int):
        """The sources (the requester's own ``source`` values) of the requests of
        :meth:`holds_for_memory`."""
        return self.waiting.get(requester, ())

    def sources_at_memory(self, requester: int):
        """The sources (the requester's own ``source`` values) of requester terminal
        ``requester``'s requests held by the memory here, passed on and not yet answered:
        kept as they come and go, for the lookahead, which asks about one requester."""
        return self.held_sources.get(requester, ())

    def first_for_memory(self, requester: int) -> dict:
        """Per source of requester terminal ``requester``, its request that is passed on
        next to the memory here (the first of that source in the queue for ``to_memory``)
        and whether a write is queued before it, for the sources none of whose requests
        waits to be put in order (one that overtook an earlier request): the memory takes
        them in this order, so the first is the first to be answered. For the lookahead,
        which asks about one requester."""
        early = {trip.request.source for (r, _), trip in self.early_requests.items() if r == requester}
        firsts: dict = {}
        writes = False
        for request in self.for_memory:
            r, source = request.source
            if r == requester and source not in firsts and source not in early:
                firsts[source] = (request, writes)
            writes = writes or request.is_write
        return firsts

    def next_answer_flits(self, requester: int, source, returning) -> int:
        """Flits of the response the memory here sends next to client (``requester``,
        ``source``): the answer to that client's oldest request passed on (or to be passed
        on) whose response is not on its way back (its tag in ``returning``, or taken
        already), since such a memory answers a client in the order of its requests; 1 when
        none is known. The requester gets that client's later responses after this one (in
        the order of its requests), so none before this packet's tail: for the lookahead."""
        for tag, trip in self.at_memory.items():  # (tags in the order the requests were passed on)
            if trip.requester == requester and trip.request.source == source and tag not in returning:
                return answer_flits(trip.request, self.flit_bits)
        return 1

    def _send_request(self, request: MemRequest, now: int) -> None:
        address, size = request.address, request.size_bytes
        owner = self.memory_map.find(address)
        if owner is None:
            self.fail(f"MemRequest to unmapped address {hex_address(address)} (mapped: "
                      f"{self.memory_map.describe()})")
        if address + size > owner.piece_end(address):
            where = "the end of address range" if owner.piece_end(address) == owner.end else \
                f"an interleave block ({owner.block_bytes} bytes) of address range"
            self.fail(f"MemRequest of {size} bytes at {hex_address(address)} crosses {where} "
                      f"{owner} at {hex_address(owner.piece_end(address))}; split it at the boundary")
        dest = owner.owner(address)
        pair_seq = self.sent_to.get(dest, 0)
        self.sent_to[dest] = pair_seq + 1
        trip = RequestTrip(self.terminal, self.requests_issued, pair_seq, request)
        self.requests_issued += 1
        self.create_packet(dest, self.flits_for(request), trip, now)

    def _send_response(self, response: MemResponse, now: int) -> None:
        trip = self.at_memory.pop(response.tag, None)
        if trip is None:
            self.fail(f"MemResponse with tag {response.tag} from {self.io[3].channel.src.path} answers no "
                      "request this interface sent")
        self.held_orders.discard((trip.requester, trip.order))
        held = self.held_sources[trip.requester]
        source = trip.request.source
        if held[source] > 1:
            held[source] -= 1
        elif len(held) > 1:
            del held[source]
        else:
            del self.held_sources[trip.requester]
        request = trip.request
        back = restored(response, request.tag, request.source)
        flits = self.flits_for(back)
        if flits < answer_flits(request, self.flit_bits):
            # (the lookahead counts the flits of the answer from the request)
            self.fail(f"MemResponse with tag {response.tag} from {self.io[3].channel.src.path} answers a read of "
                      f"{request.size_bytes} bytes at {hex_address(request.address)} with "
                      f"{len(response.data or b'')} bytes")
        self.create_packet(trip.requester, flits, ResponseTrip(trip.order, back), now)

    def _deliver(self, packet, now: int) -> None:
        payload = packet.payload
        if isinstance(payload, RequestTrip):
            self._request_arrived(payload)
        elif isinstance(payload, ResponseTrip):
            self.early_responses[payload.order] = payload.response
            while self.responses_delivered in self.early_responses:
                self.to_requester.append(self.early_responses.pop(self.responses_delivered))
                self.responses_delivered += 1
        else:
            super()._deliver(packet, now)

    def _request_arrived(self, trip: RequestTrip) -> None:
        if not self.io[2].connected:
            self.fail(f"a MemRequest for {hex_address(trip.request.address)} arrived, but no memory is "
                      "connected to to_memory")
        requester = trip.requester
        self.held_orders.add((requester, trip.order))
        waiting = self.waiting.setdefault(requester, {})
        waiting[trip.request.source] = waiting.get(trip.request.source, 0) + 1
        expected = self.expected_from.get(requester, 0)
        if trip.pair_seq != expected:
            self.early_requests[(requester, trip.pair_seq)] = trip
            return
        while trip is not None:
            tag = self.memory_tags
            self.memory_tags += 1
            self.at_memory[tag] = trip
            held = self.held_sources.setdefault(requester, {})
            held[trip.request.source] = held.get(trip.request.source, 0) + 1
            # the requester's terminal joins the source, as an AXI interconnect widens the ID
            # with the master's index: requests of different requesters are different clients
            # to the memory, answered in order per requester only
            self.for_memory.append(retagged(trip.request, tag, (trip.requester, trip.request.source)))
            expected += 1
            trip = self.early_requests.pop((requester, expected), None)
        self.expected_from[requester] = expected
