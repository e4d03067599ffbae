"""A node of a memory tree: MemRequests routed by address down to the child that owns them,
else up; MemResponses back to their requesters in request order."""

from __future__ import annotations

from bisect import bisect_right
from collections import deque

import attrs

from archmodel.kernel import Component, Counter, Formula, In, Out, Param, ParameterError, at_least, model

from ..messages import MemRequest, MemResponse
from .address_map import AddressMap, ForwardsFunctionalAccess, hex_address


def _beats(message, channel) -> int:
    """Sender cycles ``message`` occupies on ``channel`` (one without a width)."""
    width = channel.width_bits if channel is not None else None
    return -(-message.size_bits // width) if width else 1


class _TreeMap(AddressMap):
    """A node's address map for the functional path: bytes no range holds belong to whatever
    the node's uplink leads to."""

    def __init__(self, node, *args):
        super().__init__(*args)
        self.node = node

    def pieces(self, address: int, size: int):
        end = address + size
        node = self.node
        while address < end:
            item = self.find(address)
            if item is None:
                if not node.up_req.connected:
                    raise ValueError(f"{node.path}: no address range holds {hex_address(address)} and no uplink "
                                     f"is connected (mapped: {self.describe()})")
                k = bisect_right(self.starts, address)
                step = min(end, self.starts[k] if k < len(self.starts) else end) - address
                yield node.memory_at(node.up_req), address, step
            else:
                step = min(end, item.piece_end(address)) - address
                yield node.memory_at(node.out_req[item.owner(address)]), address, step
            address += step


_REQUEST_FIELDS = ("address", "size_bytes", "is_write", "data", "source", "tag", "created_ps", "origin")
_RESPONSE_FIELDS = ("tag", "data", "source", "created_ps")
if tuple(f.name for f in attrs.fields(MemRequest)) != _REQUEST_FIELDS or \
        tuple(f.name for f in attrs.fields(MemResponse)) != _RESPONSE_FIELDS:
    raise AssertionError("MemRequest or MemResponse changed its fields: update _retagged and _restored")


def _retagged(request: MemRequest, tag: int, source) -> MemRequest:
    """``attrs.evolve(request, tag=tag, source=source)``, built field by field (evolve looks
    the fields up at every call, and a node forwards every request once)."""
    if type(request) is not MemRequest:
        return attrs.evolve(request, tag=tag, source=source)
    return MemRequest(request.address, request.size_bytes, request.is_write, request.data, source, tag,
                      request.created_ps, request.origin)


def _restored(response: MemResponse, tag: int, source) -> MemResponse:
    """``attrs.evolve(response, tag=tag, source=source)``, as :func:`_retagged`."""
    if type(response) is not MemResponse:
        return attrs.evolve(response, tag=tag, source=source)
    return MemResponse(tag, response.data, source, response.created_ps)


def _transit_ps(channel) -> int:
    """The least time a message spends on ``channel``: ``latency`` of the receiver's cycles in
    one clock domain, else just over ``latency - 1`` of them (it arrives at the first receiver
    edge strictly after it left)."""
    return channel.delay if channel.same_domain else channel.tail_delay + 1


def _link_utilisation(node, beats_name: str) -> float:
    return 100.0 * getattr(node, beats_name).value / node.elapsed_cycles


@model
class MemoryTreeNode(ForwardsFunctionalAccess, Component):
    """One level of a hierarchical memory interconnect (a quadrant or chiplet crossbar, as in
    Manticore's tree of clusters, quadrants and chiplets: Zaruba et al., IEEE Micro 41(2), 2021).

    Requesters: ``radix`` children below (``down_req``/``down_rsp``: a cluster's DMA port, or
    a lower node's uplink) and ``peers`` from above or beside (``peer_req``/``peer_rsp``: a
    parent routing into this subtree, a die-to-die link from another chiplet). Targets:
    ``outputs`` ports (``out_req``/``out_rsp``) reached by ``address_map`` (``start .. end ->
    output``, or ``-> [outputs]`` interleaved in ``interleave_bytes`` blocks), and the uplink
    (``up_req``/``up_rsp``), which takes every request from below whose address the map does
    not hold. A request from a peer that the map does not hold, or one from below with no
    uplink connected, stops the run naming the address and the map (it would bounce back up);
    so does a request whose bytes cross from one range (or interleave block) into another:
    the requester splits, as the Snitch DMA cuts its bursts at ``burst_bytes`` boundaries.

    Timing: at each edge every target grants one of the requesters whose head request is for
    it, round robin, and a granted request leaves ``latency_cycles`` later (arbitration and
    traversal of the node); a target queue holds ``queue_depth`` requests, then the requesters
    wait (head-of-line). Bandwidth belongs to the links (SST style): give the uplink's
    connection a ``width`` (or ``bandwidth``) in ``.arch`` and a 1 KiB burst occupies it for
    ``ceil(bits / width)`` cycles, so bandwidth thinning is a link attribute per level.

    Ordering: each request is forwarded with a tag of this node's own and, as its source, the
    pair (requester port, original source), so memories answering in order per source keep
    each requester's order only, as an AXI crossbar widens the ID with the master index.
    Responses go back with the original tag and source, per requester (port and source) in
    the order of its requests, across targets too (a reorder buffer), as the Snitch DMA and
    :class:`~.memory_interface.MemoryMappedInterface` expect.

    Functional access: ``backdoor_read``/``backdoor_write`` forward to the memory owning the
    bytes (through lower nodes, or up); ``base_address``/``size_bytes`` are those of the
    memory a workload should place data in: the range (or interleave block) of the map holding
    ``home_address``, else what the uplink leads to.

    Statistics: bytes and link-busy cycles each way on the uplink and on every output (the
    utilisation of a link is its busy cycles over the node's elapsed cycles).
    Leaves out: atomics, write-response merging, QoS, a separate narrow network.
    """

    radix = Param(int, 1, "requesters below (children)", check=at_least(1))
    peers = Param(int, 0, "requesters from above or beside (a parent, die-to-die links)", check=at_least(0))
    outputs = Param(int, 0, "targets reached by the address map", check=at_least(0))
    address_map = Param((list, tuple), (), "(start, end, output or [outputs]) byte ranges, end exclusive")
    interleave_bytes = Param(int, 4096, "block of a range interleaved over several outputs", unit="bytes",
                             check=at_least(1))
    home_address = Param(int, -1, "an address of the memory workloads place data in (-1: the uplink's)",
                         unit="bytes")
    address_bits = Param(int, 32, "address width of the requesters (the Snitch DMA's: 32); the map must lie "
                         "below 2**address_bits", check=at_least(1))
    latency_cycles = Param(int, 1, "cycles from a grant to the request (or response) leaving",
                           unit="cycles", check=at_least(0))
    queue_depth = Param(int, 4, "requests each target queue holds", check=at_least(1))

    down_req = In("MemRequests of the children", count="radix", required=False)
    down_rsp = Out("MemResponses to the children, in the order of their requests", count="radix", required=False)
    peer_req = In("MemRequests from above or beside, for this subtree", count="peers", required=False)
    peer_rsp = Out("MemResponses to them", count="peers", required=False)
    out_req = Out("MemRequests to the targets of the address map", count="outputs", required=False)
    out_rsp = In("MemResponses of those targets", count="outputs", required=False)
    up_req = Out("MemRequests the map does not hold, towards the parent", required=False)
    up_rsp = In("MemResponses from the parent", required=False)

    requests = Counter("requests", "requests taken from every requester")
    # the uplink, each way: bytes, busy cycles of its link (ceil(bits / width) per message), and
    # those cycles over the node's
    up_bytes_out = Counter("bytes", "bytes sent up (requests with their control word and write data)")
    up_beats_out = Counter("cycles", "cycles the uplink's request link was busy")
    up_utilisation_out = Formula("%", "busy cycles of the uplink's request link",
                                 lambda c: _link_utilisation(c, "up_beats_out"))
    up_bytes_in = Counter("bytes", "bytes received from the parent (read data, write acknowledgements)")
    up_beats_in = Counter("cycles", "cycles the uplink's response link was busy")
    up_utilisation_in = Formula("%", "busy cycles of the uplink's response link",
                                lambda c: _link_utilisation(c, "up_beats_in"))

    def setup(self) -> None:
        # not ``memory_map``: workloads take a component with one for a network interface and
        # place data in its ranges, where a node's data belong in its home (base_address)
        self.routes = _TreeMap(self, self.address_map, self.outputs, self.path, self.interleave_bytes)
        if self.routes.ranges and self.routes.ranges[-1].end > 1 << self.address_bits:
            last = self.routes.ranges[-1]
            raise ParameterError(f"{self.path}: address range {last} ends above the {self.address_bits}-bit address "
                                 f"space of the requesters ({hex_address(1 << self.address_bits)}): they cannot "
                                 f"reach its last {last.end - (1 << self.address_bits):,} bytes",
                                 hint="fewer or smaller memories, or requesters with wider addresses (address_bits)")
        self.requesters = list(self.down_req) + list(self.peer_req)
        self.answer_ports = list(self.down_rsp) + list(self.peer_rsp)
        self.target_ports = list(self.out_req) + [self.up_req]
        self.from_targets = list(self.out_rsp) + [self.up_rsp]
        self.up = self.outputs  # the uplink's index among the targets
        self._answer_index = {port: i for i, port in enumerate(self.answer_ports)}
        self._requester_index = {port: i for i, port in enumerate(self.requesters)}
        self._target_index = {port: t for t, port in enumerate(self.target_ports)}
        targets = len(self.target_ports)
        self.to_send = [deque() for _ in range(targets)]  # (ready_ps, request, requester) per target
        self.sent = [[0] * targets for _ in self.requesters]  # requests sent to each target, unanswered
        self.answers = [deque() for _ in self.requesters]  # (ready_ps, response) per requester
        self.priority = [0] * targets
        # (requester, source) -> deque of the tags awaited, oldest first (a tag numbers the
        # requests in the order they were taken: it is their sequence number too)
        self.in_order: dict = {}
        self.early: dict = {}  # (requester, source) -> {tag: response} that overtook an earlier one
        self.outstanding: dict = {}  # our tag -> (requester, key, original request, target)
        self.sources: list = [{} for _ in self.requesters]  # per requester, its sources awaiting answers
        self.next_tag = 0
        # per target, the uplink last: (bytes out, busy cycles out, bytes in, busy cycles in)
        self.tallies = []
        for t in range(self.outputs):
            tally = []
            for way, port in (("out", f"out_req[{t}]"), ("in", f"out_rsp[{t}]")):
                tally.append(self.add_stat(f"out{t}_bytes_{way}", Counter("bytes", f"bytes moved on {port}")))
                tally.append(self.add_stat(f"out{t}_beats_{way}", Counter("cycles", f"cycles {port}'s link was busy")))
                self.add_stat(f"out{t}_utilisation_{way}", Formula(
                    "%", f"busy cycles of {port}'s link", lambda c, busy=tally[-1]: 100.0 * busy.value / c.elapsed_cycles))
            self.tallies.append(tuple(tally))
        self.tallies.append((self.up_bytes_out, self.up_beats_out, self.up_bytes_in, self.up_beats_in))

    def start(self) -> None:
        self.period = self.domain.period_ps
        self.delay = self.latency_cycles * self.period
        self._asking = False
        self._bound_now = self._bound_transfers = -1  # the time point and transfers the bounds hold for
        self._bounds: dict = {}  # port (ours, or a target's) -> its bound then
        # kept then too: (requester, k) -> take_ps, (target, m) -> send_ps, and the requesters
        # waiting here (_waiting_runs)
        self._take_kept: dict = {}
        self._send_kept: dict = {}
        self._runs: list | None = None
        self._trips: dict = {}  # target (None: any) -> least round trip through it, in ps
        # the wiring is fixed once the run starts: the ticks look at the connected ports only
        self._live_targets = [(t, port) for t, port in enumerate(self.from_targets) if port.connected]
        self._live_requesters = [(i, port) for i, port in enumerate(self.requesters) if port.connected]
        # per requester, its head request and that request's target (target_of), so a request
        # waiting for room at its target is routed once, not at every edge it waits
        self._routed: list = [None] * len(self.requesters)
        # per target, the node there and our index among its requesters (None: not a node)
        self._above = []
        for port in self.target_ports:
            other = port.channel.dst_owner if port.connected else None
            self._above.append((other, other._requester_index[port.channel.dst])
                               if isinstance(other, MemoryTreeNode) else None)
        # per requester, the one target its requests can have (None: several), for the
        # messages of a take bound that the sender has not queued yet
        owners = self.routes.owners()
        self._sole_targets = []
        for i in range(len(self.requesters)):
            targets = owners | ({self.up} if i < self.radix and self.up_req.connected else set())
            self._sole_targets.append(next(iter(targets)) if len(targets) == 1 else None)

    # -- routing --------------------------------------------------------------------------------
    def target_of(self, requester: int, request: MemRequest) -> int:
        """The target index (an output, or ``self.up``) of ``request`` from ``requester``."""
        target, refused = self._route(requester, request)
        if refused is not None:
            self.fail(refused)
        return target

    def _route(self, requester: int, request: MemRequest) -> tuple[int, str | None]:
        """``(target, None)`` for ``request`` from ``requester``, or ``(-1, why)`` when this
        node refuses it (:meth:`target_of` stops the run with why, the lookahead's bounds
        only note it)."""
        address, size = request.address, request.size_bytes
        item = self.routes.find(address)
        if item is None:
            if requester >= self.radix:
                return -1, (f"a MemRequest for {hex_address(address)} arrived on {self.requesters[requester].name}, "
                            f"but no range of this node holds it ({self.routes.describe()}); sending it up "
                            "would return it here")
            if not self.up_req.connected:
                return -1, (f"MemRequest from {self.requesters[requester].name} to unmapped address "
                            f"{hex_address(address)} (mapped: {self.routes.describe()}; no uplink connected)")
            k = bisect_right(self.routes.starts, address)
            if k < len(self.routes.starts) and self.routes.starts[k] < address + size:
                return -1, (f"MemRequest of {size} bytes at {hex_address(address)} crosses into address range "
                            f"{self.routes.ranges[k]}; split it at the boundary")
            return self.up, None
        if address + size > item.piece_end(address):
            return -1, (f"MemRequest of {size} bytes at {hex_address(address)} crosses the end of address range "
                        f"{item} (or of one of its interleave blocks) at {hex_address(item.piece_end(address))}; "
                        "split it at the boundary")
        return item.owner(address), None

    # -- the clock edge -------------------------------------------------------------------------
    def tick(self) -> None:
        now = self.sim.now
        moved = False
        for t, port in self._live_targets:
            if port.valid:
                self._answered(t, port.recv(), now)
                moved = True
        for i, queue in enumerate(self.answers):
            if queue and queue[0][0] <= now and self.answer_ports[i].try_send(queue[0][1]):
                queue.popleft()
                moved = True
        wanted: dict = {}
        routed = self._routed
        for i, port in self._live_requesters:
            request = port.peek()  # (None when nothing is valid)
            if request is not None:
                route = routed[i]
                if route is None or route[0] is not request:
                    route = routed[i] = (request, self.target_of(i, request))
                asking = wanted.get(route[1])
                if asking is None:
                    wanted[route[1]] = [i]
                else:
                    asking.append(i)
        for t, asking in wanted.items():
            if len(self.to_send[t]) >= self.queue_depth:
                continue
            if len(asking) == 1:
                winner = asking[0]
            else:
                start, count = self.priority[t], len(self.requesters)
                winner = min(asking, key=lambda i: (i - start) % count)
            self.priority[t] = (winner + 1) % len(self.requesters)
            routed[winner] = None
            self._take(winner, t, self.requesters[winner].recv(), now)
            moved = True
        soonest = None
        for t, queue in enumerate(self.to_send):
            if queue and queue[0][0] <= now and self.target_ports[t].try_send(queue[0][1]):
                _, request, requester = queue.popleft()
                self.sent[requester][t] += 1
                self._count(t, request, True)
                moved = True
            if queue and queue[0][0] > now:
                soonest = queue[0][0] if soonest is None else min(soonest, queue[0][0])
        for queue in self.answers:
            if queue and queue[0][0] > now:
                soonest = queue[0][0] if soonest is None else min(soonest, queue[0][0])
        if moved:
            return
        # Nothing moved: what is left waits for a message, a credit, or a ready time.
        self.sleep()
        if soonest is not None:
            self.wake_at(soonest)

    def _take(self, requester: int, target: int, request: MemRequest, now: int) -> None:
        self.requests.add()
        key = (requester, request.source)
        tag = self.next_tag
        self.next_tag += 1
        self.outstanding[tag] = (requester, key, request, target)
        order = self.in_order.get(key)
        if order is None:
            order = self.in_order[key] = deque()
            self.sources[requester][request.source] = None
        order.append(tag)
        forwarded = _retagged(request, tag, (requester, request.source))
        self.to_send[target].append((now + self.delay, forwarded, requester))

    def _count(self, target: int, message, outward: bool) -> None:
        port = self.target_ports[target] if outward else self.from_targets[target]
        moved, busy = self.tallies[target][:2] if outward else self.tallies[target][2:]
        moved.add(message.size_bits // 8)
        busy.add(_beats(message, port.channel))

    def _answered(self, target: int, response: MemResponse, now: int) -> None:
        entry = self.outstanding.pop(response.tag, None)
        if entry is None:
            self.fail(f"MemResponse with tag {response.tag} on {self.from_targets[target].name} answers no request "
                      "this node sent")
        self._count(target, response, False)
        requester, key, request, _ = entry
        self.sent[requester][target] -= 1
        early = self.early.setdefault(key, {})
        early[response.tag] = _restored(response, request.tag, request.source)
        order = self.in_order[key]
        queue = self.answers[requester]
        while order and order[0] in early:
            queue.append((now + self.delay, early.pop(order.popleft())))
        if not order:
            del self.in_order[key]
            del self.early[key]
            del self.sources[requester][key[1]]

    # -- the watchdog ---------------------------------------------------------------------------
    def holding(self) -> str | None:
        """Requests forwarded and not yet answered, and messages queued here."""
        queued = sum(len(q) for q in self.to_send) + sum(len(q) for q in self.answers)
        if not self.outstanding and not queued:
            return None
        return f"{len(self.outstanding)} requests awaiting answers, {queued} messages queued"

    def waiting_for(self) -> list:
        """The targets still holding our requests."""
        waiting = {self.target_ports[t].channel.dst_owner for t, port in enumerate(self.target_ports)
                   if port.connected}
        return sorted(waiting, key=lambda c: c.path) if self.outstanding else []

    # -- computing ahead ------------------------------------------------------------------------
    bounds_inputs_in_flight = True
    """:meth:`earliest_send_ps` counts the messages on their way to this node's inputs (requests
    from the requesters, responses from the targets), so the lookahead adds no reaction for them."""

    sends_hold_through_credits = True
    """Each output's queue is its own: a credit returning on one output lets this node send
    sooner there only; the bounds of the others do not depend on it."""

    def earliest_send_ps(self, port) -> int | None:
        """Lookahead, per port. Towards a target: the head of its queue, or a request on its way
        here (taken and passed on ``latency_cycles`` later). Towards a requester: its next
        response in this node's queue, or the soonest answer to the oldest request of one of
        its sources (each source is answered in request order: queued here, sent to a target
        and on its way back, or no sooner than a node's bound on its next answer to that
        source, :meth:`answer_bound_for` up the tree to the memory), or its first request on
        its way of a source with nothing here; a requester with nothing outstanding here gets
        nothing (None) until it sends, whatever the other requesters do, since each response
        goes back to the requester that asked."""
        sim = self.sim
        # One question asks every node about each of its ports, and the nodes below ask again:
        # the bounds hold while nothing is sent or taken anywhere at this time point.
        self._fresh_bounds()
        if port in self._bounds:
            return self._bounds[port]
        if self._asking:  # a loop of nodes (die-to-die links both ways): no better bound
            return sim.now
        self._asking = True
        try:
            if port in self._answer_index:
                bound = self._answer_bound(self._answer_index[port])
            elif port in self._target_index:
                bound = self._request_bound(self._target_index[port])
            else:
                bound = sim.now
        finally:
            self._asking = False
        self._bounds[port] = bound
        return bound

    def earliest_take_ps(self, port) -> int:
        """The first edge at which this node may take the request at the head of requester
        ``port`` (its credit then returns to the requester: see
        :meth:`~archmodel.kernel.OutPort.unblocks_from_ps`): :meth:`take_ps` of its first
        message; now for a target's port (a response is taken at the edge it arrives) and for
        a requester with nothing on its way."""
        now = self.sim.now
        i = self._requester_index.get(port)
        if i is None or not port.connected or not port.channel.flight:
            return now
        return self.take_ps(i, 1)

    def take_ps(self, i: int, k: int) -> int:
        """A lower bound on the edge at which this node takes the ``k``-th message from now
        of requester ``i`` (1: the one at the head of its link; later ones may still be in
        the sender's queue), from the state now. A sender's ``k``-th send beyond its credits
        waits for the credit that such a take returns (:meth:`send_ps`), so a node blocked
        on its uplink follows the takes above it, not one send per edge.

        Each edge a target grants one requester, round robin from ``priority``, and only
        while its queue holds fewer than ``queue_depth`` requests; the queue sends at most one
        request per edge, after the grants. So the ``k``-th message is taken no sooner than
        (a) its arrival, when it is on the link, (b) after the grants for its target before
        it, one per edge: its own ``k - 1`` earlier messages (when all of them are for that
        target) and, of each other requester whose first messages have arrived and are for
        the same target (it keeps asking until they are granted), as many as the round robin
        grants before it: one between two grants of ``i``, and one more if it is ahead of
        ``i`` in the order now, and (c) while the target's queue is full, the edge after the
        send (:meth:`send_ps`) that makes room for the last of those grants. Never later than
        the truth: every step counts the fewest edges and grants."""
        sim = self.sim
        if sim.transfers != self._bound_transfers or sim.now != self._bound_now:
            self._fresh_bounds()
        key = (i, k)
        kept = self._take_kept.get(key)
        if kept is None:
            # (while it is worked out, a loop of nodes asking back, die-to-die links both
            # ways, gets no better bound than now)
            self._take_kept[key] = self.sim.now
            kept = self._take_kept[key] = self._take_bound(i, k)
        return kept

    def send_ps(self, t: int, m: int) -> int:
        """A lower bound on the edge at which the queue of target ``t`` sends its ``m``-th
        request from now (beyond the queue: requests still to be granted), from the state
        now: one per edge from the first edge the link is free; once ready
        (``latency_cycles`` after its grant, the first of those still to come at the next
        edge at the soonest); and with a credit: the ``m``-th send beyond the credits held
        now (and those returning at this time point, usable at the next edge) waits for the
        target to take the message that many places down the link, and sends at the edge
        after (:meth:`take_ps` of a node; any other receiver takes one message per edge of
        its clock, each once it arrived)."""
        sim = self.sim
        if sim.transfers != self._bound_transfers or sim.now != self._bound_now:
            self._fresh_bounds()
        key = (t, m)
        kept = self._send_kept.get(key)
        if kept is None:
            self._send_kept[key] = self.sim.now  # (as take_ps)
            kept = self._send_kept[key] = self._send_bound(t, m)
        return kept

    def _route_of(self, i: int, request: MemRequest) -> int | None:
        """:meth:`target_of` without its errors: None for a request the node would refuse
        (the run then stops at the tick that meets it, whatever the bounds said)."""
        routed = self._routed[i]
        if routed is not None and routed[0] is request:
            return routed[1]
        target, refused = self._route(i, request)
        return None if refused is not None else target

    def _target_ahead(self, i: int, k: int) -> int | None:
        """The target of the first ``k`` messages from now of requester ``i`` when they all
        have one (the only target its requests can have, or each routed: on the link, then
        in the sending node's queue), else None (several, or not known yet)."""
        sole = self._sole_targets[i]
        if sole is not None:
            return sole
        channel = self.requesters[i].channel
        flight = channel.flight
        sender = channel.src_owner
        target = None
        for n in range(k):
            if n < len(flight):
                message = flight[n][1]
            else:
                if not isinstance(sender, MemoryTreeNode):
                    return None
                queue = sender.to_send[sender._target_index[channel.src]]
                if n - len(flight) >= len(queue):
                    return None
                message = queue[n - len(flight)][1]
            route = self._route_of(i, message)
            if route is None or (target is not None and route != target):
                return None
            target = route
        return target

    def _waiting_runs(self, now: int) -> list:
        """``(j, target, n)`` for each requester ``j`` whose first ``n`` messages (n > 0) have
        arrived by now and are all for ``target``: it asks for that target at every edge
        until they are granted."""
        runs = []
        for j, port in self._live_requesters:
            flight = port.channel.flight
            if not flight or flight[0][0] > now:
                continue
            sole = self._sole_targets[j]
            target, n = None, 0
            for arrival, message in flight:
                if arrival > now:
                    break
                route = sole if sole is not None else self._route_of(j, message)
                if route is None or (n and route != target):
                    break
                target = route
                n += 1
            if n:
                runs.append((j, target, n))
        return runs

    def _take_bound(self, i: int, k: int) -> int:
        """:meth:`take_ps`, worked out from the state now."""
        now = self.sim.now
        period = self.period
        edge = self.domain.edge_at_or_after
        first = edge(now)
        bound = first + (k - 1) * period
        flight = self.requesters[i].channel.flight
        if k <= len(flight) and flight[k - 1][0] > bound:
            bound = edge(flight[k - 1][0])
        t = self._sole_targets[i]
        if t is None:
            t = self._target_ahead(i, k)
            if t is None:
                return bound
        runs = self._runs
        if runs is None:
            runs = self._runs = self._waiting_runs(now)
        count = len(self.requesters)
        start = self.priority[t]
        place = (i - start) % count
        grants = k
        for j, target, n in runs:
            if target == t and j != i:
                most = k if (j - start) % count < place else k - 1
                grants += n if n < most else most
        if first + (grants - 1) * period > bound:
            bound = first + (grants - 1) * period
        room = len(self.to_send[t]) + grants - self.queue_depth  # sends that must make room first
        if room > 0:
            made = self.send_ps(t, room) + period
            if made > bound:
                bound = made
        return bound

    def _send_bound(self, t: int, m: int) -> int:
        """:meth:`send_ps`, worked out from the state now."""
        now = self.sim.now
        period = self.period
        edge = self.domain.edge_at_or_after
        queue = self.to_send[t]
        channel = self.target_ports[t].channel
        first = edge(now)
        at = first + (m - 1) * period
        ready = queue[m - 1][0] if m <= len(queue) else first + (m - len(queue) - 1) * period + self.delay
        if ready > at:
            at = ready
        if channel.busy_until + (m - 1) * period > at:
            at = channel.busy_until + (m - 1) * period
        held = channel.credits
        if m > held:
            if m <= held + channel.returning:
                back = now + 1  # (taken at this time point: back at its commit)
            else:
                above = self._above[t]
                j = m - held - channel.returning
                back = (self._target_take_ps(t, j) if above is None else above[0].take_ps(above[1], j)) + 1
            if back > at:
                at = back
        return edge(at)

    def _target_take_ps(self, t: int, j: int) -> int:
        """A lower bound on the time target ``t`` takes the ``j``-th message from now on our
        link to it (see :meth:`send_ps`): a node's :meth:`take_ps`; any other receiver takes
        one message per edge of its clock, each once it arrived, the first after a take at
        this time point. (A memory's own ``earliest_take_ps`` is not asked: it reads state
        this node cannot tell has changed, so the bounds could not be kept while only other
        parts of the system move, and a busy memory's is seldom a cycle later than this.)"""
        channel = self.target_ports[t].channel
        receiver = channel.dst_owner
        if isinstance(receiver, MemoryTreeNode):
            return receiver.take_ps(receiver._requester_index[channel.dst], j)
        now = self.sim.now
        domain = receiver.domain
        flight = channel.flight
        head = now + 1 if channel.taken_at == now else now  # (one take per edge)
        if flight and flight[0][0] > head:
            head = flight[0][0]
        at = domain.edge_at_or_after(head) + (j - 1) * domain.period_ps
        if j <= len(flight) and flight[j - 1][0] > at:
            at = domain.edge_at_or_after(flight[j - 1][0])
        return at

    def _fresh_bounds(self) -> None:
        """Forget the bounds kept once anything moved (a message sent anywhere) or time went
        on: they hold only for the state they were worked out from (a message taken
        meanwhile at this time point leaves them low, never late: each counts from the
        message it was worked out for, and later ones come no sooner)."""
        sim = self.sim
        if sim.transfers != self._bound_transfers or sim.now != self._bound_now:
            self._bound_now = sim.now
            self._bound_transfers = sim.transfers
            self._bounds.clear()
            self._take_kept = {}
            self._send_kept = {}
            self._runs = None

    def reaction_ps(self, inp, out) -> int | None:
        """A request from a requester reaches a target ``latency_cycles`` later, and is
        answered to that requester no sooner than the least round trip through a target; a
        response from a target is counted by :meth:`earliest_send_ps` (None), as is anything
        a requester's request does for another requester (None)."""
        period = (self.domain or self.clock).period_ps
        if out in self._target_index:
            return self.latency_cycles * period if inp in self._requester_index else None
        if out in self._answer_index and inp in self._requester_index:
            if self._requester_index[inp] != self._answer_index[out]:
                return None
            trip = self._least_trip_ps(None)
            return None if trip is None else 2 * self.latency_cycles * period + trip
        return None

    def least_reaction_ps(self, inp, out) -> int | None:
        """From the wiring alone, as :meth:`reaction_ps`: a request reaches a target no
        sooner than ``latency_cycles``, and its requester's answer port no sooner than twice
        that; every other pair is None always (a target's responses and the other requesters'
        requests are counted by :meth:`earliest_send_ps`). So the lookahead of a cluster
        follows no other cluster's traffic through this node: its bound says it all."""
        period = (self.domain or self.clock).period_ps
        requester = self._requester_index.get(inp)
        if requester is None:
            return None
        if out in self._target_index:
            return self.latency_cycles * period
        if self._answer_index.get(out) == requester:
            return 2 * self.latency_cycles * period
        return None

    def answer_bound_for(self, port, source) -> int | None:
        """:meth:`earliest_send_ps` on answer port ``port`` for the responses to ``source``
        only (None: none without new input): a parent node asks it of its target, since each
        response goes back to the requester and source that asked, in their request order.
        The next one is a response already queued for ``source``, else the answer to its
        oldest request here (see :meth:`_oldest_answer_ps`), else, with nothing of ``source``
        here, its first request on the way (the node both ways and the least round trip)."""
        i = self._answer_index.get(port)
        if i is None:
            return self.earliest_send_ps(port)
        self._fresh_bounds()
        key = (port, source)
        if key in self._bounds:
            return self._bounds[key]
        if self._asking:  # a loop of nodes (die-to-die links both ways): no better bound
            return self.sim.now
        self._asking = True
        try:
            bound = self._source_bound(i, source)
        finally:
            self._asking = False
        self._bounds[key] = bound
        return bound

    def _source_bound(self, i: int, source) -> int | None:
        now = self.sim.now
        for ready, response in self.answers[i]:
            if response.source == source:  # (restored: the requester's own source)
                return max(now, ready)
        if source in self.sources[i]:
            return self._oldest_answer_ps(i, source)
        requester = self.requesters[i]
        for n, (_, message) in enumerate(requester.channel.flight if requester.connected else ()):
            if message.source == source:
                trip = self._least_trip_ps(None)
                return None if trip is None else self.take_ps(i, n + 1) + 2 * self.delay + trip
        return None

    def _answer_bound(self, i: int) -> int | None:
        """:meth:`earliest_send_ps` on ``answer_ports[i]``: a response queued, else for each
        source of requester ``i`` with requests here the answer to its oldest (its answers
        leave in request order, so no later one comes first), else the first request on the
        way of a source with nothing here."""
        now = self.sim.now
        if self.answers[i]:
            return max(now, self.answers[i][0][0])
        best = None
        sources = self.sources[i]
        requester = self.requesters[i]
        for n, (_, message) in enumerate(requester.channel.flight if requester.connected else ()):
            if message.source not in sources:
                trip = self._least_trip_ps(None)
                if trip is not None:
                    best = self.take_ps(i, n + 1) + 2 * self.delay + trip
                break  # (the first such is taken first)
        for source in sources:
            at = self._oldest_answer_ps(i, source)
            if at is not None and (best is None or at < best):
                best = at
        return best

    def _oldest_answer_ps(self, i: int, source) -> int | None:
        """The soonest the answer to the oldest request of ``source`` from requester ``i``
        leaves here (a ``latency_cycles`` after it arrives from its target): still queued for
        the target, the least round trip through it from when it can leave (the queue
        sends one request per edge from the first edge it can send: ``_first_send_ps``);
        sent, on its way back, or no sooner than a node's bound on its next answer to that
        request's forwarded source (``answer_bound_for``: the answer to that request is one
        of them, and it counts the requests on their way to it), or a memory's bound on its
        next answer to that client (``earliest_answer_ps``), else at once."""
        now = self.sim.now
        after = self.delay
        tag = self.in_order[(i, source)][0]
        t = self.outstanding[tag][3]
        queue = self.to_send[t]
        back = self.from_targets[t].channel
        if queue and queue[0][1].tag <= tag:  # not sent yet: the queue sends in tag order
            ahead = 0
            for _, request, _ in queue:
                if request.tag == tag:
                    break
                ahead += 1
            target = back.src_owner
            if isinstance(target, MemoryTreeNode):
                # taken there behind the messages on the link and those ahead in the queue
                forward = self.target_ports[t].channel
                reaction = target.reaction_ps(forward.dst, back.src)
                if reaction is None:
                    return None
                j = target._requester_index[forward.dst]
                return target.take_ps(j, len(forward.flight) + ahead + 1) + reaction + _transit_ps(back) + after
            trip = self._least_trip_ps(t)
            if trip is None:
                return None
            return self.send_ps(t, ahead + 1) + trip + after
        for arrival, message in back.flight:
            if message.tag == tag:
                return max(arrival, now) + after
        target = back.src_owner
        transit = _transit_ps(back)
        # A node above is asked about the request's forwarded source, a memory that bounds
        # its answers per client (earliest_answer_ps: a DRAM controller, an interleaved
        # stack) about that client; any other may answer at once. (Asking the memory buys
        # little while the credits a blocked requester waits for are bounded one send per
        # edge: both horizons must reach further for a batch to.)
        if isinstance(target, MemoryTreeNode):
            sent = target.answer_bound_for(back.src, (i, source))
        else:
            per_client = getattr(target, "earliest_answer_ps", None)
            sent = now if per_client is None else per_client((i, source))
        return None if sent is None else max(sent, now) + transit + after

    def _request_bound(self, t: int) -> int | None:
        now = self.sim.now
        if self.to_send[t]:
            return max(now, self.to_send[t][0][0])
        best = None
        for i, port in enumerate(self.requesters):
            if port.connected and port.channel.flight:
                at = max(port.channel.flight[0][0], now) + self.latency_cycles * self.period
                best = at if best is None else min(best, at)
        return best

    def _least_trip_ps(self, t: int | None) -> int | None:
        """The least time from a request leaving towards target ``t`` (None: any target) to its
        response arriving back here: both links and the target's least reaction."""
        cache = self._trips
        if t not in cache:
            cache[t] = 0  # while the targets answer (a loop of nodes asks back): no bound
            trips = []
            for k in (range(len(self.target_ports)) if t is None else (t,)):
                forward, back = self.target_ports[k].channel, self.from_targets[k].channel
                if forward is None or back is None:
                    continue
                reaction = back.src_owner.reaction_ps(forward.dst, back.src)
                trips.append(_transit_ps(forward) + (reaction or 0) + _transit_ps(back))
            cache[t] = min(trips) if trips else None
        return cache[t]

    # -- the functional path --------------------------------------------------------------------
    def _mapped(self):
        return self.routes  # the functional path (ForwardsFunctionalAccess) follows the routes

    def memory_at(self, port):
        """The memory (or node) at the other end of target port ``port``, for the functional
        path; ValueError naming the port when it leads nowhere."""
        if not port.connected:
            raise ValueError(f"{port.path} is not connected, so nothing below {self.path} reaches the bytes it "
                             "routes there")
        memory = port.channel.dst_owner
        if not hasattr(memory, "backdoor_read"):
            raise ValueError(f"{port.path} leads to {memory.path}, which offers no backdoor_read/backdoor_write")
        return memory

    def _home(self) -> tuple[int, int]:
        if self.home_address >= 0:
            item = self.routes.find(self.home_address)
            if item is None:
                raise ValueError(f"{self.path}: home_address {hex_address(self.home_address)} lies in no range "
                                 f"({self.routes.describe()})")
            if not item.interleave:
                return item.start, item.end - item.start
            block = item.block_bytes
            first = item.start + (self.home_address - item.start) // block * block
            # a memory smaller than its block (a die's window) holds only its own bytes
            memory = self.memory_at(self.out_req[item.owner(self.home_address)])
            end = min(item.piece_end(self.home_address), memory.base_address + memory.size_bytes)
            return first, end - first
        memory = self.memory_at(self.up_req)
        return memory.base_address, memory.size_bytes

    @property
    def base_address(self) -> int:
        """The first byte of the memory workloads place data in (see the class docstring)."""
        return self._home()[0]

    @property
    def size_bytes(self) -> int:
        """The bytes of that memory."""
        return self._home()[1]
