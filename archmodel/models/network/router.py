"""The virtual-channel router: input queued, credit flow control, wormhole, pipelined."""

from __future__ import annotations

import random
import re
from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model, one_of

from .allocators import ALLOCATORS
from .flit import NO_CREDIT

_NODE_INDEX = re.compile(r"\[(\d+)\]$")
_SHARED_ROUTING: dict = {}


@model
class NocRouter(Component):
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
    cycles; body flits follow one per cycle. A flit's credit returns upstream
    ``credit_delay`` cycles after it leaves its buffer (plus the link latency back). The output
    VC is free for another packet once the tail has left, or, with ``wait_for_tail_credit``,
    once the tail's credit has come back (downstream buffer empty).

    Links carry :data:`~archmodel.models.network.flit.LinkWord` pairs (flit, returned credit), so
    port ``i`` of ``inp`` and ``out`` lead to the same neighbour (local ports first, then
    neighbours in increasing order, as the ``topology`` statement numbers them). Every link
    must be two-way for credits to return. Registers ``occ<port>_<vc>`` hold the flits buffered
    per input VC (for waveforms). Leaves out: speculative allocation, input/output speedup,
    shared buffers, power.
    """

    inputs = Param(int, 5, "input ports (local ports first, then one per neighbour)", check=at_least(1))
    outputs = Param(int, 5, "output ports (same numbering as the inputs)", check=at_least(1))
    vcs = Param(int, 2, "virtual channels per port", check=at_least(1))
    buffer_depth = Param(int, 4, "flits per VC buffer (also the credits per downstream VC)", check=at_least(1))
    routing_delay = Param(int, 0, "cycles to compute the route (0: lookahead)", unit="cycles", check=at_least(0))
    vc_alloc_delay = Param(int, 1, "cycles of VC allocation", unit="cycles", check=at_least(0))
    sw_alloc_delay = Param(int, 1, "cycles of switch allocation", unit="cycles", check=at_least(0))
    st_delay = Param(int, 1, "cycles of switch traversal", unit="cycles", check=at_least(0))
    credit_delay = Param(int, 0, "cycles between a flit leaving its buffer and its credit being sent",
                         unit="cycles", check=at_least(0))
    allocator = Param(str, "islip", "VC and switch allocator", check=one_of("round_robin", "islip"))
    alloc_iterations = Param(int, 1, "iSLIP iterations", check=at_least(1))
    wait_for_tail_credit = Param(bool, False, "free an output VC only when the tail's credit returns")
    node = Param(int, -1, "router id in the topology (-1: the index of the instance name, node[i])")
    topology = Param(str, "", "topology generator call, e.g. 'mesh(4, 4)', for use in a .arch topology statement")
    routing = Param(str, "dor", "routing function (see archmodel.models.network.routing)")
    occupancy_registers = Param(bool, True, "keep the per-VC occupancy registers up to date (for waveforms)")

    inp = In("link words (flit, returned credit) from each neighbour or terminal", count="inputs")
    out = Out("link words (flit, returned credit) to each neighbour or terminal", count="outputs")

    flits = Counter("flits", "flits sent through the crossbar")
    packets = Counter("packets", "tails sent through the crossbar")
    va_stalls = Counter("cycles", "head-cycles spent waiting for an output VC after being ready")

    def setup(self) -> None:
        v = self.vcs
        self.in_vcs = self.inputs * v
        self.out_vcs = self.outputs * v
        self.buf = [deque() for _ in range(self.in_vcs)]
        self.ivc_route = [None] * self.in_vcs
        self.ivc_out = [-1] * self.in_vcs
        self.ivc_ready = [0] * self.in_vcs
        self.ovc_owner = [-1] * self.out_vcs
        self.ovc_credits = [self.buffer_depth] * self.out_vcs
        self.ovc_tail_wait = [False] * self.out_vcs
        self.va_waiting: list[int] = []
        self.sa_active: set[int] = set()
        self.pending_flits = [deque() for _ in range(self.outputs)]
        self.pending_credits = [deque() for _ in range(max(self.inputs, self.outputs))]
        self.due: set[int] = set()
        self.buffered = 0
        self.va_in_ptr = [0] * self.in_vcs
        self.va_out_ptr = [0] * self.out_vcs
        self.sa_in_ptr = [0] * self.inputs
        self.sa_out_ptr = [0] * self.outputs
        self.sa_vc_ptr = [0] * self.inputs
        self.occ = [self.register(f"occ{p}_{w}", 0, width=max(1, self.buffer_depth.bit_length()))
                    for p in range(self.inputs) for w in range(v)]
        self.route_fn = None
        self.ovc_lists: dict = {}
        self.port_of = [ivc // v for ivc in range(self.in_vcs)]
        self.sa_wanting = [[] for _ in range(self.inputs)]
        if self.node < 0:
            match = _NODE_INDEX.search(self.name)
            self.node = int(match.group(1)) if match else 0

    def attach_routing(self, routing) -> None:
        """Use ``routing`` (a :class:`~archmodel.models.network.routing.Routing`) for this router."""
        self.route_fn = routing.for_router(self)

    def start(self) -> None:
        if self.route_fn is None:
            if not self.topology:
                self.fail("no routing attached: give topology= and routing=, or build it with Noc")
            from .routing import PortMap, make_routing
            from .topology import build_topology

            key = (self.topology, self.routing, self.vcs)
            if key not in _SHARED_ROUTING:
                _SHARED_ROUTING[key] = make_routing(self.routing, PortMap(build_topology(self.topology)), self.vcs)
            self.attach_routing(_SHARED_ROUTING[key])
        self.period = self.domain.period_ps
        self.va_ready_delay = self.vc_alloc_delay * self.period
        self.rc_delay = self.routing_delay * self.period
        self.st_total = (self.sw_alloc_delay + self.st_delay) * self.period
        self.cr_delay = self.credit_delay * self.period
        self.ports_in = [(p, port) for p, port in enumerate(self.inp) if port.connected]
        self.allocate = ALLOCATORS[self.allocator]
        self.random = random.Random(int(self.rng.integers(1 << 62)))
        self.trace_occ = self.occupancy_registers

    # -- helpers for routing functions ----------------------------------------------------
    def output_load(self, port: int) -> int:
        """Flits queued downstream of output ``port`` (credits in use) plus those leaving now."""
        depth = self.buffer_depth
        base = port * self.vcs
        return sum(depth - c for c in self.ovc_credits[base:base + self.vcs]) + len(self.pending_flits[port])

    def route_random(self, n: int) -> int:
        """A uniform random integer in ``[0, n)`` from this router's stream (Valiant, UGAL)."""
        return self.random.randrange(n)

    # -- the cycle ------------------------------------------------------------------------
    def _new_front(self, ivc: int, now: int) -> None:
        """The flit at the front of ``ivc`` is a head: route it and queue it for VC allocation."""
        flit = self.buf[ivc][0]
        v = self.vcs
        port = ivc // v
        self.ivc_route[ivc] = self.route_fn(port, ivc - port * v, flit.packet)
        ready = flit.arrived_ps + self.rc_delay
        self.ivc_ready[ivc] = ready if ready > now else now
        self.va_waiting.append(ivc)

    def tick(self) -> None:
        now = self.sim.now
        v = self.vcs
        buf = self.buf
        credits = self.ovc_credits
        active = False
        # Links: returned credits and arriving flits.
        for p, port in self.ports_in:
            if port.valid:
                flit, credit = port.recv()
                active = True
                if credit >= 0:
                    ovc = p * v + credit
                    credits[ovc] += 1
                    if self.ovc_tail_wait[ovc] and credits[ovc] == self.buffer_depth:
                        self.ovc_tail_wait[ovc] = False
                        self.ovc_owner[ovc] = -1
                if flit is not None:
                    ivc = p * v + flit.vc
                    q = buf[ivc]
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
        if self.va_waiting:
            active = self._allocate_vcs(now) or active
        if self.sa_active:
            active = self._allocate_switch(now, buf, credits) or active
        if self.due:
            self._send(now)
            active = True
        if not active:
            self._rest(now)

    def _ovcs(self, choices) -> list:
        """The output VC indices of an output set (cached per set)."""
        ovcs = self.ovc_lists.get(choices)
        if ovcs is None:
            v = self.vcs
            ovcs = self.ovc_lists[choices] = [[port * v + w for w in range(first, end)]
                                              for port, first, end in choices]
        return ovcs

    def _allocate_vcs(self, now: int) -> bool:
        owner = self.ovc_owner
        credits = self.ovc_credits
        v = self.vcs
        ready_at = self.ivc_ready
        requests = {}
        for ivc in self.va_waiting:
            if ready_at[ivc] > now:
                continue
            groups = self._ovcs(self.ivc_route[ivc])
            if len(groups) == 1:
                free = [o for o in groups[0] if owner[o] < 0]
            else:
                # Adaptive: the selection function prefers the output with most free credits.
                best, free = -1, []
                for ovcs in groups:
                    cand = [o for o in ovcs if owner[o] < 0]
                    if cand:
                        base = ovcs[0] - ovcs[0] % v
                        room = sum(credits[base:base + v])
                        if room > best:
                            best, free = room, cand
                        elif room == best:
                            free = free + cand
            if free:
                requests[ivc] = free
        stalled = len(self.va_waiting) - len(requests)
        if not requests:
            self.va_stalls.value += stalled
            return False
        if len(requests) == 1:
            # One requester: every allocator grants it the first free VC from its pointer.
            (ivc, free), = requests.items()
            o = free[0] if len(free) == 1 else min(free, key=lambda x, p=self.va_in_ptr[ivc], n=self.out_vcs: (x - p) % n)
            self.va_in_ptr[ivc] = (o + 1) % self.out_vcs
            self.va_out_ptr[o] = (ivc + 1) % self.in_vcs
            grants = {ivc: o}
        else:
            grants = self.allocate(requests, self.va_in_ptr, self.va_out_ptr, self.in_vcs, self.out_vcs,
                                   self.alloc_iterations)
        ready = now + self.va_ready_delay
        for ivc, ovc in grants.items():
            owner[ovc] = ivc
            self.ivc_out[ivc] = ovc
            ready_at[ivc] = ready
            self.sa_active.add(ivc)
        if len(grants) == len(self.va_waiting):
            self.va_waiting.clear()
        else:
            self.va_waiting = [i for i in self.va_waiting if i not in grants]
        self.va_stalls.value += stalled + len(requests) - len(grants)
        return True

    def _allocate_switch(self, now: int, buf, credits) -> bool:
        v = self.vcs
        ivc_out = self.ivc_out
        ivc_ready = self.ivc_ready
        port_of = self.port_of
        wanting = self.sa_wanting
        ports = []
        for ivc in self.sa_active:
            if credits[ivc_out[ivc]] > 0 and ivc_ready[ivc] <= now:
                p = port_of[ivc]
                w = wanting[p]
                if not w:
                    ports.append(p)
                w.append(ivc)
        if not ports:
            return False
        winners = []
        vc_ptr = self.sa_vc_ptr
        in_ptr = self.sa_in_ptr
        out_ptr = self.sa_out_ptr
        n_in, n_out = self.inputs, self.outputs
        if self.allocator == "round_robin" or all(len(wanting[p]) == 1 for p in ports):
            # Input stage: each input's VC arbiter picks one VC (with one candidate per input,
            # iSLIP's request-grant-accept reduces to the same output arbitration).
            by_out: dict = {}
            for p in ports:
                w = wanting[p]
                if len(w) == 1:
                    ivc = w[0]
                else:
                    start = p * v + vc_ptr[p]
                    ivc = min(w, key=lambda i: (i - start) % v)
                o = port_of_out = ivc_out[ivc] // v
                if o in by_out:
                    by_out[o].append(ivc)
                else:
                    by_out[port_of_out] = [ivc]
                w.clear()
            for o, ivcs in by_out.items():
                if len(ivcs) == 1:
                    ivc = ivcs[0]
                else:
                    start = out_ptr[o]
                    ivc = min(ivcs, key=lambda i: (port_of[i] - start) % n_in)
                p = port_of[ivc]
                out_ptr[o] = (p + 1) % n_in
                in_ptr[p] = (o + 1) % n_out
                vc_ptr[p] = (ivc - p * v + 1) % v
                winners.append(ivc)
        else:
            requests = {}
            for p in ports:
                requests[p] = sorted({ivc_out[i] // v for i in wanting[p]})
            grants = self.allocate(requests, in_ptr, out_ptr, n_in, n_out, self.alloc_iterations)
            for p in ports:
                w = wanting[p]
                o = grants.get(p)
                if o is not None:
                    choice = [i for i in w if ivc_out[i] // v == o]
                    start = p * v + vc_ptr[p]
                    ivc = choice[0] if len(choice) == 1 else min(choice, key=lambda i: (i - start) % v)
                    vc_ptr[p] = (ivc - p * v + 1) % v
                    winners.append(ivc)
                w.clear()
        leave = now + self.st_total
        credit_at = now + self.cr_delay
        for ivc in winners:
            q = buf[ivc]
            flit = q.popleft()
            self.buffered -= 1
            if self.trace_occ:
                self.occ[ivc].set(len(q))
            ovc = ivc_out[ivc]
            credits[ovc] -= 1
            o = ovc // v
            flit.vc = ovc - o * v
            self.pending_flits[o].append((leave, flit))
            self.due.add(o)
            p = ivc // v
            self.pending_credits[p].append((credit_at, ivc - p * v))
            self.due.add(p)
            self.flits.value += 1
            if flit.tail:
                self.packets.value += 1
                if self.wait_for_tail_credit:
                    self.ovc_tail_wait[ovc] = True
                else:
                    self.ovc_owner[ovc] = -1
                ivc_out[ivc] = -1
                self.sa_active.discard(ivc)
                if q:
                    self._new_front(ivc, now + self.period)
            elif not q:
                self.sa_active.discard(ivc)
        return True

    def _send(self, now: int) -> None:
        outs = self.out
        done = []
        for p in self.due:
            fq = self.pending_flits[p] if p < self.outputs else ()
            cq = self.pending_credits[p]
            flit = fq.popleft()[1] if fq and fq[0][0] <= now else None
            credit = cq.popleft()[1] if cq and cq[0][0] <= now else NO_CREDIT
            if flit is not None or credit != NO_CREDIT:
                outs[p].send((flit, credit))
            if not fq and not cq:
                done.append(p)
        for p in done:
            self.due.discard(p)

    def _rest(self, now: int) -> None:
        """Nothing moved this edge: sleep until an arrival, a credit, or the next timed event."""
        soonest = None
        for p in self.due:
            for q in (self.pending_flits[p] if p < self.outputs else (), self.pending_credits[p]):
                if q and (soonest is None or q[0][0] < soonest):
                    soonest = q[0][0]
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

    # -- inspection -----------------------------------------------------------------------
    def waits(self) -> list[tuple[str, str]]:
        """Who waits on whom, for deadlock reports: pairs of input VCs named
        ``<input port path>.vc<v>``. A VC holding an output VC without credits waits on the
        downstream VC it feeds; a head waiting for an output VC waits on each VC holding one."""
        v = self.vcs
        edges = []
        for ivc, q in enumerate(self.buf):
            if not q:
                continue
            me = f"{self.inp[ivc // v].path}.vc{ivc % v}"
            ovc = self.ivc_out[ivc]
            if ovc >= 0:
                if self.ovc_credits[ovc] == 0:
                    edges.append((me, f"{self.out[ovc // v].channel.dst.path}.vc{ovc % v}"))
            elif self.ivc_route[ivc]:
                for port, first, end in self.ivc_route[ivc]:
                    for w in range(first, end):
                        holder = self.ovc_owner[port * v + w]
                        if holder >= 0 and holder != ivc:
                            edges.append((me, f"{self.inp[holder // v].path}.vc{holder % v}"))
        return edges


@model
class SimpleRouter(NocRouter):
    """A single-cycle wormhole router for large systems: one VC, route, allocation and
    traversal in the edge a flit arrives, round-robin switch allocation, credit flow control.

    Each hop costs only the link latency (plus contention). The same machinery as
    :class:`NocRouter` with every stage delay zero and one VC, so it is exactly as correct and
    tested; choose it when a system has thousands of routers and the interconnect is not
    under study. Leaves out VCs, so use deadlock-free routing (``dor``, ``updown``).
    """

    vcs = Param(int, 1, "virtual channels per port", check=at_least(1))
    vc_alloc_delay = Param(int, 0, "cycles of VC allocation", unit="cycles", check=at_least(0))
    sw_alloc_delay = Param(int, 0, "cycles of switch allocation", unit="cycles", check=at_least(0))
    st_delay = Param(int, 0, "cycles of switch traversal", unit="cycles", check=at_least(0))
    allocator = Param(str, "round_robin", "VC and switch allocator", check=one_of("round_robin", "islip"))
    occupancy_registers = Param(bool, False, "keep the per-VC occupancy registers up to date (for waveforms)")
