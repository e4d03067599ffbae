"""The virtual-channel router: input queued, credit flow control, wormhole, pipelined."""

from __future__ import annotations

import random
import re
from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, in_range, model

from .allocators import (ALLOCATORS, grant_lone, islip_ports, islip_shared, match_moves, match_ports, pick_vc,
                         separable_ports, set_bits)
from .router_reports import RouterReports
from .routing import tie_coin
from .routing_functions import ROUTINGS
from .flit import MAX_BUFFER_DEPTH, MAX_VCS, NO_CREDIT

_NODE_INDEX = re.compile(r"\[(\d+)\]$")
WON = 1
"""In :meth:`NocRouter.arbitrate_and_ask`'s answer: flits won the switch."""
ASKING = 2
"""In :meth:`NocRouter.arbitrate_and_ask`'s answer: the router still has requests."""
_SHARED_ROUTING: dict = {}


@model
class NocRouter(RouterReports, Component):
    """An input-queued virtual-channel router with credit flow control, as BookSim 2's ``iq``
    router (Jiang et al., ISPASS 2013; Dally and Towles, Principles and Practices of
    Interconnection Networks, ch. 16-19).

    Each input port has ``vcs`` virtual channels of ``buffer_depth`` flits. Packets are cut into
    flits (head, body, tail) and move wormhole: the head is routed (lookahead: the route is a
    function of destination and input, so ``routing_delay = 0`` models computing it one hop
    upstream), allocates an output VC (VC allocation), and then every flit of the packet
    competes for the crossbar (switch allocation) one flit per input and per output per cycle,
    and only when the output VC holds a credit. Allocators: separable round robin or iSLIP
    with ``alloc_iterations`` rounds.

    Timing, per hop without contention: a head that arrives at edge t is allocated a VC at
    ``t + routing_delay``, may win the switch ``vc_alloc_delay`` cycles later, and is sent on the
    output link ``sw_alloc_delay + st_delay`` cycles after winning; the link adds its latency.
    So a hop costs ``routing_delay + vc_alloc_delay + sw_alloc_delay + st_delay + link latency``
    cycles; body flits follow one per cycle. A flit's credit leaves when switch allocation
    completes (``sw_alloc_delay`` cycles after the flit won: BookSim sends it at the end of its
    allocation cycle, and its channels take one cycle more than their latency, which for flits
    the stage delays already hold), crosses the link back, and the upstream router uses it
    ``credit_delay`` cycles after it arrives (BookSim's credit processing delay, charged by
    the receiver, so a credit for an interface is not delayed and an interface's credit for
    its router is: :class:`~.interface.NetworkInterface` holds it that long). The output VC is
    free for another packet once the tail has left, or, with ``wait_for_tail_credit``, once the
    tail's credit has been processed (downstream buffer empty).

    Links carry :data:`~archmodel.models.network.flit.LinkWord` pairs (flit, returned credit), so
    port ``i`` of ``inp`` and ``out`` lead to the same neighbour (local ports first, then
    neighbours in increasing order, as the ``topology`` statement numbers them). Every link
    must be two-way for credits to return. Registers ``occ<port>_<vc>`` hold the flits buffered
    per input VC (for waveforms). Leaves out: speculative allocation, input/output speedup,
    shared buffers, power.

    Every allocation decision is made by :mod:`.allocators` (the general separable and iSLIP
    allocators, and their exact shortcuts for a lone requester and for input ports with VCs), so
    the router carries no allocator of its own. The network-level engines step a router through
    :meth:`begin`, :meth:`take`, :meth:`arbitrate`, :meth:`has_requests` (or both at once,
    :meth:`arbitrate_and_ask`) and :meth:`words_due` (or a pop of :attr:`outbox`)
    (with ``st_total`` and ``credit_times``, the delays after a switch win at which its words
    are due, ``buffered``, the flits it holds, and ``route_key``, its tie coin's key), as
    :meth:`tick` does.

    For speed the allocators work on bit masks of free output VCs and skip what cannot change:
    a head whose allowed output VCs are all owned is parked until one of that port frees, and an
    input VC without a credit until the credit returns; results are those of rescanning every
    cycle. ``holding``/``waiting_for`` let the kernel's watchdog report a deadlock among routers
    wired by a ``topology`` statement, with the cycle of routers named.
    """

    inputs = Param(int, 5, "input ports (local ports first, then one per neighbour)", check=at_least(1))
    outputs = Param(int, 5, "output ports (same numbering as the inputs)", check=at_least(1))
    vcs = Param(int, 2, "virtual channels per port", check=in_range(1, MAX_VCS))
    buffer_depth = Param(int, 4, "flits per VC buffer (also the credits per downstream VC)", check=in_range(1, MAX_BUFFER_DEPTH))
    routing_delay = Param(int, 0, "cycles to compute the route (0: lookahead)", unit="cycles", check=at_least(0))
    vc_alloc_delay = Param(int, 1, "cycles of VC allocation", unit="cycles", check=at_least(0))
    sw_alloc_delay = Param(int, 1, "cycles of switch allocation", unit="cycles", check=at_least(0))
    st_delay = Param(int, 1, "cycles of switch traversal", unit="cycles", check=at_least(0))
    credit_delay = Param(int, 0, "cycles an upstream router takes to process a returned credit "
                         "(BookSim's credit_delay)", unit="cycles", check=at_least(0))
    allocator = Param(str, "islip", "VC and switch allocator", check=ALLOCATORS.check)
    alloc_iterations = Param(int, 1, "iSLIP iterations", check=at_least(1))
    wait_for_tail_credit = Param(bool, False, "free an output VC only when the tail's credit returns")
    node = Param(int, -1, "router id in the topology (-1: the index of the instance name, node[i])")
    topology = Param(str, "", "topology generator call, e.g. 'mesh(4, 4)', for use in a .arch topology statement")
    routing = Param(str, "dor", "routing function (see archmodel.models.network.routing)", check=ROUTINGS.check)
    occupancy_registers = Param(bool, True, "keep the per-VC occupancy registers up to date (for waveforms)")

    inp = In("link words (flit, returned credit) from each neighbour or terminal", count="inputs")
    out = Out("link words (flit, returned credit) to each neighbour or terminal", count="outputs")

    flits = Counter("flits", "flits sent through the crossbar")
    packets = Counter("packets", "tails sent through the crossbar")
    # Counted when a head gets its VC, from the cycle it was ready: the same whenever the router
    # happens to be stepped (asleep with parked heads, say), so both network engines agree.
    va_stalls = Counter("cycles", "head-cycles spent waiting for an output VC after being ready "
                        "(counted when the head gets one)")

    def setup(self) -> None:
        v = self.vcs
        self.in_vcs = self.inputs * v
        self.out_vcs = self.outputs * v
        self.buf = [deque() for _ in range(self.in_vcs)]
        self.ivc_route = [None] * self.in_vcs
        self.ivc_out = [-1] * self.in_vcs
        self.ivc_ready = [0] * self.in_vcs
        self.ovc_owner = [-1] * self.out_vcs
        # Bit o set: output VC o has no owner (the VC allocator's free set as one integer).
        self.free_ovcs = (1 << self.out_vcs) - 1
        # Per input VC whose head waits for VC allocation: the output VCs its route allows as a
        # bit mask, or None when the route offers several output ports (adaptive selection).
        self.ivc_mask = [0] * self.in_vcs
        self.ivc_route_port = [0] * self.in_vcs  # the first output VC of that port
        self.ovc_credits = [self.buffer_depth] * self.out_vcs
        self.ovc_tail_wait = [False] * self.out_vcs
        self.va_waiting: list[int] = []
        # Heads whose every allowed output VC is owned, by output port: they are not looked at
        # again until a VC of that port frees (``_free_ovc``).
        self.va_parked: list[list[int]] = [[] for _ in range(self.outputs)]
        self.va_parked_count = 0
        self.sa_active: set[int] = set()
        # Output VCs whose owner has a flit but no credit: the owner left sa_active and comes
        # back when the credit does (``take``).
        self.sa_parked = [False] * self.out_vcs
        # Link words waiting for their edge: time -> {port: (flit or None, credit vc or NO_CREDIT)}.
        # Each input port frees at most one buffer slot and each output port wins at most one
        # flit per cycle, and both delays are constant, so a port has at most one of each per edge.
        self.outbox: dict = {}
        self.buffered = 0
        self.va_in_ptr = [0] * self.in_vcs
        self.va_out_ptr = [0] * self.out_vcs
        self.sa_in_ptr = [0] * self.inputs
        self.sa_out_ptr = [0] * self.outputs
        self.sa_vc_ptr = [0] * self.inputs
        self.occ = [self.register(f"occ{p}_{w}", 0, width=max(1, self.buffer_depth.bit_length()))
                    for p in range(self.inputs) for w in range(v)]
        self.route_fn = None
        self.terminal_ports: set = set()  # input ports fed by an interface (attach_routing)
        self.downstream = None  # per output port, the input it feeds (set by the network-level engine)
        self.route_masks: dict = {}
        self.port_of = [ivc // v for ivc in range(self.in_vcs)]
        self.sa_moves, self.sa_in_next = match_moves(self.inputs, self.outputs, v)
        self.out_port_of = [ovc // v for ovc in range(self.out_vcs)]
        if self.node < 0:
            match = _NODE_INDEX.search(self.name)
            self.node = int(match.group(1)) if match else 0

    def attach_routing(self, routing) -> None:
        """Use ``routing`` (a :class:`~archmodel.models.network.routing.Routing`) for this router."""
        self.route_fn = routing.for_router(self)
        # Ports with no router behind them lead to terminals, whose interfaces process a
        # credit the edge it arrives.
        self.terminal_ports = {p for p, n in enumerate(routing.ports.neighbour[self.node]) if n is None}

    def start(self) -> None:
        if self.route_fn is None:
            if not self.topology:
                self.fail("no routing attached: give topology= and routing=, or build it with Noc")
            from .routing import PortMap
            from .routing_functions import make_routing
            from .topology import build_topology

            key = (self.topology, self.routing, self.vcs)
            if key not in _SHARED_ROUTING:
                _SHARED_ROUTING[key] = make_routing(self.routing, PortMap(build_topology(self.topology)), self.vcs)
            self.attach_routing(_SHARED_ROUTING[key])
        self.ports_in = [(p, port, port.channel.flight) for p, port in enumerate(self.inp) if port.connected]
        self.in_index = {port: p for p, port in enumerate(self.inp)}
        self.out_index = {port: o for o, port in enumerate(self.out)}
        self.begin(self.domain.period_ps, self.rng, self.occupancy_registers)

    def begin(self, period: int, rng, trace_occupancy: bool) -> None:
        """Fix the stage delays for clock ``period`` (ps) and seed the routing's random
        stream and tie key (:attr:`route_key`) from ``rng`` (the kernel's, or the same stream
        in the network-level and compiled engines)."""
        self.period = period
        self.va_ready_delay = self.vc_alloc_delay * period
        self.rc_delay = self.routing_delay * period
        self.st_total = (self.sw_alloc_delay + self.st_delay) * period
        # Per input port, from a flit winning the switch to its credit's arrival upstream
        # being acted on, less the link: the credit leaves when switch allocation completes,
        # and a router upstream takes credit_delay more to process it.
        self.credit_after = [(self.sw_alloc_delay + (0 if p in self.terminal_ports else self.credit_delay)) * period
                             for p in range(self.inputs)]
        self.credit_times = sorted(set(self.credit_after))
        # What a switch win of input VC ivc puts in the outbox, looked up once per win rather
        # than worked out: its credit's (input port, delay, VC number there), and per output
        # VC its (output port, VC number there).
        v = self.vcs
        self.credit_word = [(ivc // v, self.credit_after[ivc // v], ivc % v) for ivc in range(self.in_vcs)]
        self.out_place = [(ovc // v, ovc % v) for ovc in range(self.out_vcs)]
        self.allocate = ALLOCATORS[self.allocator]
        self.random = random.Random(int(rng.integers(1 << 62)))
        # Drawn after the stream's seed, so Valiant's and UGAL's draws are what they were.
        self.route_key = int(rng.integers(1 << 32))
        self.trace_occ = trace_occupancy

    # -- helpers for routing functions ----------------------------------------------------
    def output_load(self, port: int) -> int:
        """Flits queued downstream of output ``port`` (credits in use) plus those leaving now
        (switched to it, their words not yet sent: counted from the outbox here, which only
        adaptive routing asks, rather than kept at every switch win and send)."""
        depth = self.buffer_depth
        base = port * self.vcs
        leaving = 0
        for words in self.outbox.values():
            word = words.get(port)
            if word is not None and word[0] is not None:
                leaving += 1
        return sum(depth - c for c in self.ovc_credits[base:base + self.vcs]) + leaving

    def route_random(self, n: int) -> int:
        """A uniform random integer in ``[0, n)`` from this router's stream (Valiant, UGAL)."""
        return self.random.randrange(n)

    def route_coin(self, packet) -> int:
        """This router's fair coin (0 or 1) for ``packet`` (dateline's tie at k/2): a hash of
        :attr:`route_key` and the packet's id (:func:`~.routing.tie_coin`), the same however
        often and in whatever order it is asked, so every engine gets the same coin."""
        return tie_coin(self.route_key, packet.id)

    # -- the cycle ------------------------------------------------------------------------
    def _new_front(self, ivc: int, now: int) -> None:
        """The flit at the front of ``ivc`` is a head: route it and queue it for VC allocation."""
        flit = self.buf[ivc][0]
        v = self.vcs
        port = ivc // v
        route = self.ivc_route[ivc] = self.route_fn(port, ivc - port * v, flit.packet)
        masks = self.route_masks.get(route)
        if masks is None:
            masks = self.route_masks[route] = self._route_masks(route)
        if len(masks) == 1:
            self.ivc_mask[ivc] = masks[0][0]
            self.ivc_route_port[ivc] = masks[0][1]
        else:
            self.ivc_mask[ivc] = None
        ready = flit.arrived_ps + self.rc_delay
        self.ivc_ready[ivc] = ready if ready > now else now
        self.va_waiting.append(ivc)

    def tick(self) -> None:
        now = self.sim.now
        active = False
        # Links: returned credits and arriving flits. A port is looked at only when its
        # channel holds a message that has arrived (the router is the channel's only reader,
        # so none was taken yet at this edge): the cheap test of the common idle port.
        for p, port, flight in self.ports_in:
            if flight and flight[0][0] <= now:
                flit, credit = port.recv()
                active = True
                self.take(p, flit, credit, now)
        if self.va_waiting:
            active = self._allocate_vcs(now) or active
        if self.sa_active:
            active = self._allocate_switch(now) or active
        if self.outbox:
            words = self.words_due(now)
            if words is not None:
                outs = self.out
                for p, word in words.items():
                    outs[p].send(word)
            active = True
        if not active:
            self._rest(now)

    # -- stepping, for the network-level engine (and tick) ---------------------------------
    def take(self, p: int, flit, credit: int, now: int) -> bool:
        """Take the link word ``(flit, credit)`` arriving on input port ``p`` at ``now``: the
        credit (a VC number, or NO_CREDIT) returns to output VC ``credit`` of port ``p``, the
        flit (or None) enters its input VC's buffer. Returns whether a step may move something
        now: a flit arrived, or heads wait for an output VC or input VCs for the switch
        (:meth:`has_requests`, asked here for the engine, which asks it after every word)."""
        if credit >= 0:  # (inline: a credit comes with about every other word a router takes)
            ovc = p * self.vcs + credit
            credits = self.ovc_credits
            credits[ovc] += 1
            if self.sa_parked[ovc]:
                self.sa_parked[ovc] = False
                self.sa_active.add(self.ovc_owner[ovc])
            if self.ovc_tail_wait[ovc] and credits[ovc] == self.buffer_depth:
                self.ovc_tail_wait[ovc] = False
                self._free_ovc(ovc)
        if flit is None:
            return bool(self.va_waiting or self.sa_active)
        # The flit enters its input VC's buffer (inline: about 60,000 of them in a run of 16
        # clusters on 4 DRAM channels).
        ivc = p * self.vcs + flit.vc
        q = self.buf[ivc]
        q.append(flit)
        flit.arrived_ps = now
        self.buffered += 1
        if self.trace_occ:
            self.occ[ivc].set(len(q))
        if len(q) == 1:
            if self.ivc_out[ivc] >= 0:
                self.sa_active.add(ivc)
            elif flit.head:
                self._new_front(ivc, now)
            else:
                self.fail(f"inp[{p}] vc{flit.vc}: {flit!r} arrived with no packet in progress")
        elif len(q) > self.buffer_depth:
            self.fail(f"inp[{p}] vc{flit.vc}: buffer overflow ({len(q)} > {self.buffer_depth} flits): "
                      "the upstream sender ignored its credits")
        return True

    def arbitrate(self, now: int) -> bool:
        """VC allocation for the waiting heads, then switch allocation; returns whether flits
        won the switch (their words are due at ``now + st_total``, their credits upstream at
        ``now`` plus one of ``credit_times``, see :meth:`words_due`)."""
        return bool(self.arbitrate_and_ask(now) & WON)

    def arbitrate_and_ask(self, now: int) -> int:
        """:meth:`arbitrate`, then :meth:`has_requests`, in one call (the network engine asks
        both of every router it steps, about 70,000 times in a run of 16 clusters on 4 DRAM
        channels): :data:`WON` set when flits won the switch, :data:`ASKING` when heads or
        input VCs still have requests."""
        if self.va_waiting:
            self._allocate_vcs(now)
        won = WON if self.sa_active and self._allocate_switch(now) else 0
        return won | ASKING if self.va_waiting or self.sa_active else won

    def has_requests(self) -> bool:
        """Whether heads wait for an output VC or input VCs for the switch (a step may move
        something even with no word arriving)."""
        return bool(self.va_waiting or self.sa_active)

    def words_due(self, now: int) -> dict | None:
        """The link words to send at ``now`` (output port -> (flit or None, credit vc or
        NO_CREDIT)), taken out of the router, or None."""
        return self.outbox.pop(now, None)

    def _free_ovc(self, ovc: int) -> None:
        """Output VC ``ovc`` has no owner any more: heads parked on its port may ask again."""
        self.ovc_owner[ovc] = -1
        self.free_ovcs |= 1 << ovc
        parked = self.va_parked[self.out_port_of[ovc]]
        if parked:
            self.va_waiting.extend(parked)
            self.va_parked_count -= len(parked)
            parked.clear()

    def _route_masks(self, choices) -> list:
        """Per output port of an output set: the bit mask of its allowed output VCs and the
        index of the port's first VC (for the adaptive selection's credit count)."""
        v = self.vcs
        return [(sum(1 << (port * v + w) for w in range(first, end)), port * v) for port, first, end in choices]

    def _adaptive_request(self, ivc: int) -> int:
        """The free output VCs a head with several allowed output ports asks for: the
        selection function prefers the port with most free credits (ties: all of them)."""
        free = self.free_ovcs
        credits = self.ovc_credits
        v = self.vcs
        best, request = -1, 0
        for mask, base in self.route_masks[self.ivc_route[ivc]]:
            cand = free & mask
            if cand:
                room = sum(credits[base:base + v])
                if room > best:
                    best, request = room, cand
                elif room == best:
                    request |= cand
        return request

    def _allocate_vcs(self, now: int) -> bool:
        """VC allocation. Requests are bit masks of free output VCs; heads asking for the same
        mask form a group, and groups that share no output VC are allocated independently
        (any allocator decomposes so), which makes the common cases cheap: a lone requester
        takes the first free VC from its round-robin pointer."""
        free = self.free_ovcs
        ready_at = self.ivc_ready
        waiting = self.va_waiting
        if len(waiting) == 1 and not self.va_parked_count:
            # The common case at low and moderate load: one head, one allowed port.
            ivc = waiting[0]
            mask = self.ivc_mask[ivc]
            if mask is not None and ready_at[ivc] <= now:
                request = free & mask
                if request:
                    ovc = grant_lone(request, ivc, self.va_in_ptr, self.va_out_ptr, self.in_vcs, self.out_vcs)
                    self.ovc_owner[ovc] = ivc
                    self.free_ovcs = free & ~(1 << ovc)
                    self.ivc_out[ivc] = ovc
                    if ready_at[ivc] < now:
                        self.va_stalls.value += (now - ready_at[ivc]) // self.period
                    ready_at[ivc] = now + self.va_ready_delay
                    self.sa_active.add(ivc)
                    waiting.clear()
                    return True
        ivc_mask = self.ivc_mask
        groups: dict = {}
        parking = None
        for ivc in waiting:
            if ready_at[ivc] > now:
                continue
            mask = ivc_mask[ivc]
            if mask is None:
                request = self._adaptive_request(ivc)
            else:
                request = free & mask
                if not request:
                    if parking is None:
                        parking = [ivc]
                    else:
                        parking.append(ivc)
                    continue
            if request:
                group = groups.get(request)
                if group is None:
                    groups[request] = [ivc]
                else:
                    group.append(ivc)
        if parking is not None:
            parked = self.va_parked
            out_port_of = self.out_port_of
            for ivc in parking:
                parked[out_port_of[self.ivc_route_port[ivc]]].append(ivc)
            self.va_parked_count += len(parking)
            self.va_waiting = waiting = [i for i in waiting if i not in parking] if len(parking) < len(waiting) else []
        if not groups:
            return False
        in_ptr, out_ptr = self.va_in_ptr, self.va_out_ptr
        n_in, n_out = self.in_vcs, self.out_vcs
        disjoint = True
        if len(groups) > 1:
            seen = 0
            for request in groups:
                if seen & request:
                    disjoint = False
                    break
                seen |= request
        grants = {}
        if disjoint:
            for request, ivcs in groups.items():
                if len(ivcs) == 1:
                    grants[ivcs[0]] = grant_lone(request, ivcs[0], in_ptr, out_ptr, n_in, n_out)
                elif self.allocator == "islip" and self.alloc_iterations == 1:
                    islip_shared(sorted(ivcs), set_bits(request), in_ptr, out_ptr, n_in, n_out, grants)
                else:
                    ovcs = set_bits(request)
                    grants.update(self.allocate({ivc: ovcs for ivc in ivcs}, in_ptr, out_ptr, n_in, n_out,
                                                self.alloc_iterations))
        else:
            requests = {ivc: set_bits(request) for request, ivcs in groups.items() for ivc in ivcs}
            grants = self.allocate(requests, in_ptr, out_ptr, n_in, n_out, self.alloc_iterations)
        owner = self.ovc_owner
        ready = now + self.va_ready_delay
        taken = 0
        stalled = 0
        for ivc, ovc in grants.items():
            owner[ovc] = ivc
            taken |= 1 << ovc
            self.ivc_out[ivc] = ovc
            stalled += now - ready_at[ivc]
            ready_at[ivc] = ready
            self.sa_active.add(ivc)
        self.free_ovcs = free & ~taken
        if stalled:
            self.va_stalls.value += stalled // self.period
        if len(grants) == len(waiting):
            waiting.clear()
        else:
            self.va_waiting = [i for i in waiting if i not in grants]
        return True

    def _allocate_switch(self, now: int) -> bool:
        """Switch allocation among the input VCs that hold an output VC, a flit and a credit:
        one flit per input port and per output port; returns whether any flit won."""
        sa_active = self.sa_active
        if len(sa_active) == 1:
            # The common case below saturation (six allocations in seven with 16 clusters on
            # 4 DRAM channels): one input VC wants the switch.
            for ivc in sa_active:
                break
            ovc = self.ivc_out[ivc]
            if self.ovc_credits[ovc] <= 0:
                self.sa_parked[ovc] = True
                sa_active.clear()
                return False
            if self.ivc_ready[ivc] > now:
                return False
            # (match_ports, looked up: one call fewer per flit hop)
            p, out_next, vc_next = self.sa_moves[ivc]
            o = self.out_port_of[ovc]
            self.sa_out_ptr[o] = out_next
            self.sa_in_ptr[p] = self.sa_in_next[o]
            self.sa_vc_ptr[p] = vc_next
            self._traverse_one(ivc, now)
            return True
        v = self.vcs
        credits = self.ovc_credits
        ivc_out = self.ivc_out
        ivc_ready = self.ivc_ready
        port_of = self.port_of
        out_port_of = self.out_port_of
        vc_ptr = self.sa_vc_ptr
        in_ptr = self.sa_in_ptr
        out_ptr = self.sa_out_ptr
        n_in, n_out = self.inputs, self.outputs
        by_port: dict = {}
        several = False  # some input port has more than one VC ready
        parking = None
        for ivc in sa_active:
            ovc = ivc_out[ivc]
            if credits[ovc] <= 0:
                if parking is None:
                    parking = [ivc]
                else:
                    parking.append(ivc)
            elif ivc_ready[ivc] <= now:
                p = port_of[ivc]
                w = by_port.get(p)
                if w is None:
                    by_port[p] = [ivc]
                else:
                    w.append(ivc)
                    several = True
        if parking is not None:
            sa_parked = self.sa_parked
            for ivc in parking:
                sa_parked[ivc_out[ivc]] = True
                self.sa_active.discard(ivc)
        if not by_port:
            return False
        if len(by_port) == 1 and not several:
            # One input port with one VC ready: it wins its output port.
            (p, (ivc,)), = by_port.items()
            match_ports(p, out_port_of[ivc_out[ivc]], ivc, in_ptr, out_ptr, vc_ptr, n_in, n_out, v)
            winners = [ivc]
        elif not several or self.allocator == "round_robin":
            # With one candidate VC per input, iSLIP's request-grant-accept is this too.
            winners = separable_ports(by_port, ivc_out, out_port_of, in_ptr, out_ptr, vc_ptr, n_in, n_out, v)
        elif self.alloc_iterations == 1:
            winners = islip_ports(by_port, ivc_out, out_port_of, in_ptr, out_ptr, vc_ptr, n_in, n_out, v)
        else:
            winners = []
            requests = {p: sorted({out_port_of[ivc_out[i]] for i in w}) for p, w in by_port.items()}
            grants = self.allocate(requests, in_ptr, out_ptr, n_in, n_out, self.alloc_iterations)
            for p, o in grants.items():
                ivc = pick_vc([i for i in by_port[p] if out_port_of[ivc_out[i]] == o], p, v, vc_ptr)
                # the allocator moved the port pointers (on its first round's matches)
                vc_ptr[p] = (ivc - p * v + 1) % v
                winners.append(ivc)
        if len(winners) > 1:
            winners.sort()  # a canonical order, whatever the set's history (routing may draw random numbers)
        self._traverse(winners, now)
        return True

    def _traverse(self, winners, now: int) -> None:
        """The switch allocation winners' flits leave their buffers, in the order given (see
        :meth:`_traverse_one`)."""
        for ivc in winners:
            self._traverse_one(ivc, now)

    def _traverse_one(self, ivc: int, now: int) -> None:
        """The flit at the front of input VC ``ivc``, which won the switch at ``now``, leaves its
        buffer: it is queued for its output link and its credit for the link back upstream."""
        q = self.buf[ivc]
        flit = q.popleft()
        self.buffered -= 1
        self.flits.value += 1
        if self.trace_occ:
            self.occ[ivc].set(len(q))
        ovc = self.ivc_out[ivc]
        self.ovc_credits[ovc] -= 1
        o, flit.vc = self.out_place[ovc]
        outbox = self.outbox
        leave = now + self.st_total
        # (words are tuples, LinkWords as the links carry them: a flit and a credit due on the
        # same port at the same edge share one, made anew when the second comes)
        words = outbox.get(leave)
        if words is None:
            outbox[leave] = {o: (flit, NO_CREDIT)}
        else:
            word = words.get(o)
            words[o] = (flit, NO_CREDIT) if word is None else (flit, word[1])
        p, after, w = self.credit_word[ivc]
        credit_at = now + after
        words = outbox.get(credit_at)
        if words is None:
            outbox[credit_at] = {p: (None, w)}
        else:
            word = words.get(p)
            words[p] = (None, w) if word is None else (word[0], w)
        if flit.tail:
            self.packets.value += 1
            if self.wait_for_tail_credit:
                self.ovc_tail_wait[ovc] = True
            else:
                self._free_ovc(ovc)
            self.ivc_out[ivc] = -1
            self.sa_active.discard(ivc)
            if q:
                self._new_front(ivc, now + self.period)
        elif not q:
            self.sa_active.discard(ivc)

    def _rest(self, now: int) -> None:
        """Nothing moved this edge: sleep until an arrival, a credit, or the next timed event."""
        soonest = min(self.outbox) if self.outbox else None
        for ivc in self.va_waiting:
            t = self.ivc_ready[ivc]
            if t > now and (soonest is None or t < soonest):
                soonest = t
        for ivc in self.sa_active:
            t = self.ivc_ready[ivc]
            if t > now and (soonest is None or t < soonest):
                soonest = t
        self.sleep()
        if soonest is not None:
            self.wake_at(soonest)
