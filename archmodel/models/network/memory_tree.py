"""A node of a memory tree: MemRequests routed by address down to the child that owns them,
else up; MemResponses back to their requesters in request order."""

from __future__ import annotations

from bisect import bisect_right
from collections import deque

from archmodel.kernel import Component, Counter, Formula, In, Out, Param, ParameterError, at_least, model

from ..messages import MemRequest, MemResponse, restored, retagged
from .address_map import AddressMap, ForwardsFunctionalAccess, hex_address
from .memory_tree_bounds import MemoryTreeBounds


_NEVER = 1 << 62  # (a time no run reaches)


def _width(port) -> int | None:
    """The width in bits of the link at ``port`` (None: unconnected, or a message a cycle)."""
    return port.channel.width_bits if port.connected else None


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


def _link_utilisation(node, beats_name: str) -> float:
    return 100.0 * getattr(node, beats_name).value / node.elapsed_cycles


@model
class MemoryTreeNode(MemoryTreeBounds, ForwardsFunctionalAccess, Component):
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

    Computing ahead: what the node tells the kernel's lookahead (when it next sends, takes
    and answers) is :class:`~.memory_tree_bounds.MemoryTreeBounds`.

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

    down_req = In("MemRequests of the children", count="radix", required=False, pair="down_rsp", carries="requests")
    down_rsp = Out("MemResponses to the children, in the order of their requests", count="radix", required=False,
                   pair="down_req", carries="answers")
    peer_req = In("MemRequests from above or beside, for this subtree", count="peers", required=False,
                  pair="peer_rsp", carries="requests")
    peer_rsp = Out("MemResponses to them", count="peers", required=False, pair="peer_req", carries="answers")
    out_req = Out("MemRequests to the targets of the address map", count="outputs", required=False, pair="out_rsp")
    out_rsp = In("MemResponses of those targets", count="outputs", required=False, pair="out_req")
    up_req = Out("MemRequests the map does not hold, towards the parent", required=False, pair="up_rsp")
    up_rsp = In("MemResponses from the parent", required=False, pair="up_req")

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
        self.answers = [deque() for _ in self.requesters]  # (ready_ps, response) per requester
        self._answers_queued = 0  # responses in all of them (none: a tick skips them)
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
        # the same with their channels: a tick looks at a channel's messages on their way before
        # asking the port whether one has arrived (most edges, none is on its way)
        self._target_links = [(t, port, port.channel) for t, port in self._live_targets]
        self._requester_links = [(i, port, port.channel) for i, port in self._live_requesters]
        # per target, each way: the bytes and busy-cycle counters and the link's width (None:
        # a message a cycle), so counting a message looks nothing else up
        self._tally_out = [(moved, busy, _width(port)) for (moved, busy, _, _), port in
                           zip(self.tallies, self.target_ports)]
        self._tally_in = [(moved, busy, _width(port)) for (_, _, moved, busy), port in
                          zip(self.tallies, self.from_targets)]
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
        # a node without ranges (a quadrant's) sends every request from below up
        self._all_up = not self.routes.ranges and self.up_req.connected
        # what the ticks look at: the connected output ports with their queues and channels
        self._answer_outputs = [(self.answers[i], self.answer_ports[i], self.answer_ports[i].channel)
                                for i, port in self._live_requesters if self.answer_ports[i].connected]
        self._target_outputs = [(t, self.to_send[t], port, port.channel)
                                for t, port in enumerate(self.target_ports) if port.connected]
        self._output_queues = [(queue, channel) for queue, _, channel in self._answer_outputs] + \
            [(queue, channel) for _, queue, _, channel in self._target_outputs]
        # requesters that are all below a node sending all up: none is refused, none granted
        # while the uplink's queue is full, and then their arrivals wake no sleeping node
        self._all_up_only = self._all_up and all(i < self.radix for i, _ in self._live_requesters)
        self._quiet = False

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
        if self._all_up and requester < self.radix:
            return self.up, None  # (no range holds it, nor can it cross into one)
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
        """One edge: take the targets' responses, send the answers and requests whose time has
        come and whose link is free, and grant each target one requester, round robin. An
        edge that moved something keeps the node awake for the next; one that moved nothing
        puts it to sleep (:meth:`_sleep_until_due`)."""
        now = self.sim.now
        moved = False
        for t, port, channel in self._target_links:
            if channel.flight and port.valid:
                self._answered(t, port.recv(), now)
                moved = True
        # A message whose link is still busy is not offered (it could not go), so no credit
        # returning meanwhile wakes the node for nothing: asleep, it wakes itself when the link
        # frees (_sleep_until_due). One refused for want of a credit leaves its port blocked,
        # and the returning credit wakes the node.
        if self._answers_queued:
            for queue, port, channel in self._answer_outputs:
                if queue and queue[0][0] <= now and channel.busy_until <= now and port.try_send(queue[0][1]):
                    queue.popleft()
                    self._answers_queued -= 1
                    moved = True
        to_send = self.to_send
        depth = self.queue_depth
        # (a node whose requesters all send up grants none while the uplink's queue is full)
        if not self._all_up_only or len(to_send[self.up]) < depth:
            routed = self._routed
            wanted = None
            # (a node sending all up sends every request from below there: no need to route it)
            up, below = self.up, (self.radix if self._all_up else 0)
            for i, port, channel in self._requester_links:
                route = routed[i]
                if route is None:
                    # Only this node takes from its requesters, so a head routed at an earlier
                    # edge is still there and still valid: just a new head is looked at (and
                    # routed at the edge it is first seen, where a request this node refuses
                    # stops the run).
                    if not channel.flight:
                        continue
                    request = port.peek()  # (None when nothing is valid)
                    if request is None:
                        continue
                    route = routed[i] = (request, up if i < below else self.target_of(i, request))
                t = route[1]
                if len(to_send[t]) >= depth:
                    continue  # (no grant for a full queue: the requester waits at its head)
                if wanted is None:
                    wanted = {t: [i]}
                else:
                    asking = wanted.get(t)
                    if asking is None:
                        wanted[t] = [i]
                    else:
                        asking.append(i)
            if wanted is not None:
                for t, asking in wanted.items():
                    # round robin: the first asking at or after the priority, else the first
                    # (asking lists the requesters in their order)
                    winner = asking[0]
                    if len(asking) > 1:
                        start = self.priority[t]
                        for i in asking:
                            if i >= start:
                                winner = i
                                break
                    self.priority[t] = (winner + 1) % len(self.requesters)
                    routed[winner] = None
                    self._take(winner, t, self.requesters[winner].recv(), now)
                moved = True
        for t, queue, port, channel in self._target_outputs:
            if queue and queue[0][0] <= now and channel.busy_until <= now:
                request = queue[0][1]
                bits = request.size_bits  # (worked out once for the link and the tally)
                if port.try_send(request, bits):
                    queue.popleft()
                    self._count(t, bits, True)
                    moved = True
        if not moved:
            self._sleep_until_due(now)

    def _sleep_until_due(self, now: int) -> None:
        """Sleep after an edge that moved nothing, until the first queued message may go (its
        ready time, or its link's free time; one refused for want of a credit waits for the
        credit, which wakes the node), unless a message arriving wakes it first. A request
        arriving from below while the uplink's queue that takes all of them is full does not
        wake it: that queue makes room only at an edge of the node's own, and the node looks
        at the next edge after it."""
        soonest = _NEVER
        for queue, channel in self._output_queues:
            if queue:
                ready = queue[0][0]
                free = channel.busy_until
                if ready <= now and free <= now:
                    continue  # (refused at this edge: the returning credit wakes the node)
                at = ready if ready > free else free
                if at < soonest:
                    soonest = at
        if self._all_up_only:
            quiet = len(self.to_send[self.up]) >= self.queue_depth
            if quiet != self._quiet:
                self._quiet = quiet
                for _, port in self._live_requesters:
                    port.wake_on_arrivals_after(_NEVER if quiet else -1)
        self.sleep()
        if soonest < _NEVER:
            self.wake_at(soonest)

    def _take(self, requester: int, target: int, request: MemRequest, now: int) -> None:
        self.requests.value += 1
        source = request.source
        key = (requester, source)  # (also the source the request goes on with)
        tag = self.next_tag
        self.next_tag = tag + 1
        self.outstanding[tag] = (requester, key, request, target)
        order = self.in_order.get(key)
        if order is None:
            order = self.in_order[key] = deque()
            self.sources[requester][source] = None
        order.append(tag)
        self.to_send[target].append((now + self.delay, retagged(request, tag, key), requester))

    def _count(self, target: int, bits: int, outward: bool) -> None:
        moved, busy, width = self._tally_out[target] if outward else self._tally_in[target]
        moved.value += bits // 8
        busy.value += -(-bits // width) if width else 1

    def _answered(self, target: int, response: MemResponse, now: int) -> None:
        entry = self.outstanding.pop(response.tag, None)
        if entry is None:
            self.fail(f"MemResponse with tag {response.tag} on {self.from_targets[target].name} answers no request "
                      "this node sent")
        self._count(target, response.size_bits, False)
        requester, key, request, _ = entry
        answer = restored(response, request.tag, request.source)
        order = self.in_order[key]
        queue = self.answers[requester]
        if order[0] != response.tag:  # it overtook an earlier request of its requester and source
            self.early.setdefault(key, {})[response.tag] = answer
            return
        order.popleft()
        queue.append((now + self.delay, answer))
        self._answers_queued += 1
        early = self.early.get(key)
        if early:  # the answers it held up
            while order and order[0] in early:
                queue.append((now + self.delay, early.pop(order.popleft())))
                self._answers_queued += 1
        if not order:
            del self.in_order[key]
            self.early.pop(key, None)
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
