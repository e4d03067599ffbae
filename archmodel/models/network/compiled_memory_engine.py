"""Memory traffic on the compiled network: the fast engine with its flit level in numba.

``Noc(engine="compiled")`` with an ``address_map`` runs :class:`CompiledMemoryEngine`, a
:class:`~.engine.NocEngine`: it owns the memory ports and keeps the message level in Python as
the fast engine does (each :class:`~.memory_interface.MemoryMappedInterface` makes packets of
the requests and responses it takes, and hands on the packets delivered: the address map, the
trips, the orders), while the routers, the links and the interfaces' flit layer run in one
numba call per edge (:mod:`.compiled_edge`) over arrays, with the decisions and timing of the
routers and interfaces the fast engine steps. So a run gives the same messages at the same
edges and the same statistics (the routers' and the interfaces' flit counts written back
from the arrays for a report), and the lookahead the same answers
(:func:`~.compiled_edge.packet_tails` for the flits in the network, the rest as the fast engine).

Per edge, in the fast engine's order: the interfaces with a message arrived on a port take it
(:meth:`~.memory_interface.MemoryMappedInterface.take_messages`; its packets queue in the
arrays as slots); the numba edge (arrivals, ejection, injection, routers); then each
interface's ``queue`` and ``sending`` follow the arrays (the message level and the lookahead
read them), the packets delivered are handed on
(:meth:`~.interface.NetworkInterface.packet_arrived`) and what waits to leave goes on the ports
that take it (:meth:`~.memory_interface.MemoryMappedInterface.pass_messages`). The fast engine
does these per interface in turn; here each phase runs for every interface before the next,
which changes nothing: an interface takes from and sends on its own ports only, the network
side of an edge reads only the packets queued before it, and handing on only queues messages.

Quiet edges. After each edge the numba side bounds the first cycle at which an edge can have
anything for Python to do then, a packet delivered (:func:`~.compiled_edge.quiet_until`, from
the soonest each packet's tail can arrive, and each queued packet's soonest start and trip).
Until then an edge with no check due is ticked without a call (what waits to leave still goes
on the ports; a message arrived on a memory port joins the arrays, :meth:`_queue_arrivals`),
and the engine dozes through the stretch where it can
(:meth:`~archmodel.kernel.Component.doze_until`: a message sent to a port ends the doze). It
stays awake (the kernel ticks it at the same edges, in the same order, as the fast engine,
since flits are in the network throughout) and the edges are simulated in one call with the
next edge that needs Python, or as soon as anything reads the network (the lookahead, the
deadlock checks, the statistics), so every reader sees what the fast engine would hold then.
A packet started or a tail sent changes only what such readers see (an interface's ``queue``
and ``sending``) and how many packets wait at an interface that takes a request while fewer
than two do: they come back with the edges of that call, each with its cycle, and the engine
simulates the edges before a message arrives at such an interface with two waiting. With 16
clusters on 4 DRAM channels two edges in three are quiet; waking for each packet started and
tail sent as well woke the engine twice as often (a channel's credits come back later than
their least round trip).

A deadlock is reported with the cycle and the flits buffered, but not the cycle of waiting
VCs the fast engine names.
"""

from __future__ import annotations

from itertools import compress
from types import SimpleNamespace

import numpy as np

from archmodel.kernel import ModelAssertion, ParameterError, model
from archmodel.kernel.compiled import compiled_entry

from .compiled_edge import (DELIVERED, EVENTS_SHIFT, FAILED, MOVED, QUIET_SPAN, STARTED, WORKING, edge, packet_tails,
                            quiet_until)
from .compiled_engine import network_tables, refusal, router_config, router_state, write_back_routers
from .compiled_loop import MAX_PACKET_FLITS
from .engine import NocEngine
from .engine_bounds import trip_of

_AWAIT_CREDIT = 1 << 62
"""A retry time no edge reaches: the port waits for a credit, not for a time (_pass_messages)."""

_SLOTS = 256  # packet slots at first (doubled when all are in use)
_QUEUED = 16  # packets per interface's source queue at first (doubled when one is full)
_DOZE_CYCLES = 64  # the longest doze (_doze): the watchdogs hear of the network at least this often


@model(catalogue=False)
class CompiledMemoryEngine(NocEngine):
    """The fast network engine with the flit level of its routers and interfaces in one numba
    call per edge (see the module docstring)."""

    def setup(self) -> None:
        super().setup()
        noc = self.parent
        why = refusal(noc)
        if why is not None:
            raise ParameterError(f"{noc.path}: engine='compiled' does not support {why}",
                                 hint="engine='fast' runs every configuration with the same results")
        self.arrays = None  # the edge's arrays (from the start on)
        self.flags = 0  # what the last edge reported (compiled_edge's MOVED, WORKING)
        self.last = None  # the last cycle simulated
        self.ticked = None  # the cycle of the last edge ticked (simulated, or to catch up)
        self.dozed_edge_ps = -1  # the last edge it was ticked at dozing (_catch_up)
        self.quiet = 0  # until this cycle no edge has an event for Python (quiet_until)
        self.entries: dict = {}  # compiled function's name -> its entry (see _call)
        self.fresh: set = set()  # terminals whose queue holds packets not yet in the arrays
        self.out_pending: set = set()  # terminals with messages waiting to leave on their ports
        # terminal -> (the soonest its refusing ports with a credit may take, as their links free,
        # or _AWAIT_CREDIT; the channels of those refusing for want of a credit) (_pass_messages)
        self.retry_at: dict = {}
        self.next_retry = 0  # the soonest of those times, or of an interface to try at the next edge
        self.awaited: list = []  # the channels of those ports refusing for want of a credit
        self.slots: list = []  # packet slot -> its NetPacket (None while free)
        self.trip_slots: dict = {}  # (requester, order) -> the slot of the memory packet that carries it
        self.free: list = []
        self.tails_kept = None  # (now, last, steps) the packet tails in the arrays were worked out for

    def start(self) -> None:
        super().start()
        noc = self.parent
        pm = noc.port_map
        tables = network_tables(noc)
        R, P, V, T = tables.shape
        run = router_state(SimpleNamespace(), tables.shape, noc.buffer_depth)
        run.cfg = router_config(noc, tables.shape, tables.ranged, self.period, self.domain.phase_ps)
        run.route_key = np.array([router.route_key for router in noc.routers], np.int64)
        run.ni_send_slot = np.zeros(T, np.int64)
        run.queue = np.zeros((T, _QUEUED), np.int64)
        run.q_head, run.q_count = np.zeros(T, np.int64), np.zeros(T, np.int64)
        run.arr_slot = np.full((T, V), -1, np.int64)  # per interface VC, the packet arriving on it, or -1
        run.arr_next = np.zeros((T, V), np.int64)  # and the index of its next flit
        # Per call, at most: per interface and edge (QUIET_SPAN and one of them at the most) a
        # packet started and a tail sent, and at the last edge one delivered.
        run.events = np.zeros((2 * T * (QUIET_SPAN + 1) + T + 1, 4), np.int64)
        run.least = np.array(self.least_cycles, np.int64)  # for quiet_until: a head's least cycles
        # per terminal, whether its interface takes requests (while fewer than two packets
        # wait: MemoryMappedInterface.take_messages), and whether messages come in on its
        # memory ports only (_queue_arrivals)
        self.takes_requests = [ni.io[0].channel is not None for ni in noc.interfaces]
        self.memory_ports_only = [not ni.inp.connected for ni in noc.interfaces]
        # For packet_tails: the latency of the link into each router port, and per (head or
        # not, router, terminal) the fast engine's least cycles from leaving the router to the
        # terminal (PacketTailBounds.reach).
        run.in_lat = np.zeros((R, P), np.int64)
        for v in pm.routers:
            for p, u in enumerate(pm.neighbour[v]):
                if u is not None:
                    run.in_lat[v, p] = pm.latency(u, v)
        run.reach = np.array([[[self.reach[head, r][pm.terminal_router[t]] for t in range(T)] for r in pm.routers]
                              for head in (False, True)], np.int64)
        # and what the credits add to a tail behind flits yet to cross into its destination's router
        # (PacketTailBounds._credit_excess), and for quiet_until an interface's credits: the
        # cycles from its router taking a flit to the flit's credit reaching it
        # (PacketTailBounds.credit_back), and the link in
        run.credit = np.array([self.credit_depth, self.credit_cycles, self.credit_back, noc.injection_cycles],
                              np.int64)
        run.sent = np.zeros(self.credit_depth, np.int64)  # quiet_until's scratch
        self.tables, self.arrays = tables, run
        # per terminal, its interface and each queue of messages waiting to leave with the port
        # it leaves on (responses on mem_rsp, requests on to_memory)
        self.served = [(ni, ((ni.to_requester, ni.io[1]), (ni.for_memory, ni.io[2]))) for ni in noc.interfaces]
        self._grow_slots(_SLOTS)
        self.fresh = set(range(T))  # packets sent before the run are queued already
        # compiled, or loaded from numba's cache, at the first engine
        self.edge, self.packet_tails, self.quiet_until = edge.bind(), packet_tails.bind(), quiet_until.bind()

    def _grow_slots(self, count: int) -> None:
        """``count`` packet slots more (the arrays keep their contents)."""
        run = self.arrays
        old = len(self.slots)
        new = old + count
        pk_dest = np.zeros((1, new), np.int64)
        pk_id, pk_size, pk_from = (np.zeros(new, np.int64) for _ in range(3))
        if old:
            pk_dest[:, :old], pk_id[:old], pk_size[:old], pk_from[:old] = run.pk_dest, run.pk_id, run.pk_size, run.pk_from
        run.pk_dest, run.pk_id, run.pk_size, run.pk_from = pk_dest, pk_id, pk_size, pk_from
        run.soonest = np.zeros(new, np.int64)
        run.ahead = np.zeros((3, new), np.int64)  # packet_tails' scratch (and flits entering: _flits_entering)
        self.tails_kept = None
        self.slots.extend([None] * count)
        self.free.extend(range(new - 1, old - 1, -1))  # the lowest slots first
        self._arguments()

    def _grow_queues(self) -> None:
        """Twice the room in every interface's source queue (each kept in order from 0)."""
        run = self.arrays
        T, Q = run.queue.shape
        queue = np.zeros((T, 2 * Q), np.int64)
        for t in range(T):
            n = int(run.q_count[t])
            queue[t, :n] = np.roll(run.queue[t], -int(run.q_head[t]))[:n]
        run.queue = queue
        run.q_head[:] = 0
        self._arguments()

    def _arguments(self) -> None:
        """The edge's and quiet_until's arguments after the cycles (the arrays, which stay
        until one grows)."""
        run, tb = self.arrays, self.tables
        self.args = (run.events, tb.nports, tb.out_kind, tb.out_target, tb.out_tport, tb.out_lat, tb.route,
                     tb.vc_class, run.route_key, tb.term_router, tb.term_port, run.buf_id, run.buf_arr, run.buf_head,
                     run.buf_count, run.ivc_state, run.ivc_out, run.ivc_ready, run.ivc_dest_port, run.ivc_lo,
                     run.ivc_hi, run.ovc_free, run.ovc_wait, run.ovc_credits, run.va_in_ptr, run.va_out_ptr,
                     run.sa_in_ptr, run.sa_out_ptr, run.sa_vc_ptr, run.buffered, run.r_next, run.r_flits,
                     run.r_packets, run.r_va_stalls, run.ni_credits, run.ni_busy, run.ni_wait, run.ni_vc_ptr, run.ni_send,
                     run.ni_send_vc, run.ni_send_slot, run.ni_flits, run.ni_ejected, run.queue, run.q_head,
                     run.q_count, run.arr_slot, run.arr_next, run.pk_dest, run.pk_id, run.pk_size, run.pk_from, run.ev_kind,
                     run.ev_a, run.ev_b, run.ev_n, *run.scratch)
        # quiet_until's after the cycle
        self.quiet_args = (run.soonest, run.ahead, run.credit, run.reach, run.in_lat, tb.out_kind, tb.out_target,
                           tb.term_router, run.buf_id, run.buf_arr, run.buf_head, run.buf_count, run.ivc_state,
                           run.ivc_ready, run.buffered, run.pk_dest, run.pk_size, run.pk_from, run.ev_kind, run.ev_a,
                           run.ev_b, run.ev_n, run.ni_send, run.ni_send_vc, run.ni_send_slot, run.ni_credits,
                           run.queue, run.q_head, run.q_count, run.least, run.sent)

    def send_packet(self, ni, dest: int, size: int, payload):
        """:meth:`NocEngine.send_packet`; the packet joins the arrays at the next edge."""
        packet = super().send_packet(ni, dest, size, payload)
        self.fresh.add(ni.terminal)
        return packet

    def tick(self) -> None:
        now = self.sim.now
        self.steps += 1
        if now < self.doze_end_ps:
            self.dozed_edge_ps = now  # (see _catch_up)
            return
        c = (now - self.domain.phase_ps) // self.period
        if c < self.quiet and now != self.check_ps and not self.fresh and not self.ni_wakes:
            arrived = None  # the terminals with a message arrived on a memory port
            for t, flight in compress(self.port_polls, self.poll_flights):
                if flight[0][0] <= now:
                    if not self.memory_ports_only[t] or (self.takes_requests[t]
                                                         and len(self.parent.interfaces[t].queue) > 1):
                        break  # (whether it takes a request depends on the packets started since)
                    arrived = [t] if arrived is None else arrived + [t]
            else:
                # Nothing here for the network (but messages to queue: _queue_arrivals): the
                # edge is simulated with the next that needs it (or when something asks about
                # the network), in one call (_catch_up). Messages waiting to leave go on their
                # ports as after a simulated edge: the edge could deliver none, and passing
                # them reads nothing of the network.
                if arrived is not None:
                    self._queue_arrivals(arrived, now, c)
                self.ticked = c
                self.progress()  # (flits are in the network: see quiet_until)
                if self.out_pending and (now >= self.next_retry or self._credit_back()):
                    self._pass_messages(now)
                self._doze(now)
                return
        if self.last is None or not self.flags & WORKING:
            self.last = c - 1  # (an idle network: the edges slept through change nothing)
        interfaces = self.parent.interfaces
        fresh = self.fresh
        woken = self.ni_wakes.pop(now, None)  # (send_packet's, between edges)
        if woken is not None:
            fresh |= woken
        for t, flight in compress(self.port_polls, self.poll_flights):
            if flight[0][0] <= now:
                fresh.add(t)
        if fresh:
            if self.last < c - 1 and any(self.takes_requests[t] and len(interfaces[t].queue) > 1 for t in fresh):
                # (as the edges before this one go, packets start and leave fewer waiting: a
                # request is taken while fewer than two do)
                self.ticked = c - 1
                self._catch_up()
            for t in fresh:
                ni = interfaces[t]
                if t in self.port_terminal_set:
                    ni.take_messages(now)
                self._enqueue(t, ni, c)
            fresh.clear()
        # the edges ticked without a call, then this one
        args = (self.arrays.cfg, self.last + 1, c, c - 1) + self.args
        flags = self._call("edge", args)
        self.ticked = self.last = c
        if flags & FAILED:
            raise ModelAssertion(f"{self.parent.path}: a flit overflowed a buffer, reached the wrong terminal or "
                                 f"arrived out of order, an edge thought quiet was not, or more events came than "
                                 f"a call has room for, by {now} ps (engine='compiled')")
        n_events = flags >> EVENTS_SHIFT
        if n_events:
            self._take_events(self.arrays.events[1:n_events + 1].tolist(), now)
        if self.out_pending and (now >= self.next_retry or self._credit_back()):
            self._pass_messages(now)
        self.flags = flags
        if flags & MOVED:
            self.moved = True
            # Flits move inside this one component, on no kernel channel: tell the kernel's
            # watchdog, or a busy network looks stuck to it after one window.
            self.progress()
        if flags & WORKING:
            self.quiet = self._call("quiet_until", (self.arrays.cfg, c) + self.quiet_args)
        else:
            self.quiet = c + 1
        if now == self.check_ps and self._check(now):
            return
        if not flags & WORKING:
            self._rest(now)
        elif self.quiet > c + 1:
            self.progress()  # (flits move in the network as it dozes)
            self._doze(now)

    def _queue_arrivals(self, terminals: list, now: int, c: int) -> None:
        """Take the messages arrived on the memory ports of ``terminals`` at edge c, otherwise
        quiet, without simulating it: their packets join the queues in the arrays, to start
        no sooner than c (the edges before it are simulated later, with the next that needs
        a call), and the quiet edges end no later than the soonest each can be delivered (it
        starts at c at the soonest, its head takes the least cycles to its destination, its
        tail follows as :meth:`_tail_ps` says). A packet started is no event for Python (an
        interface takes a request while fewer than two packets wait, and those counted now,
        as at the last edge simulated, are no fewer: packets only start since), and a packet
        joining the network makes no other sooner: every bound counts the least times. With
        16 clusters on 4 DRAM channels about one edge in four with a call was only this."""
        interfaces = self.parent.interfaces
        least, period = self.least_cycles, self.period
        for t in terminals:
            ni = interfaces[t]
            known = len(ni.queue)
            ni.take_messages(now)
            for k in range(known, len(ni.queue)):
                packet = ni.queue[k]
                at = c + least[t][packet.dest] + self._tail_ps(t, packet.dest, packet.size) // period
                if at < self.quiet:
                    self.quiet = at
            self._enqueue(t, ni, c)
        self.fresh.clear()  # (send_packet named them)

    def _doze(self, now: int) -> None:
        """Doze (:meth:`Component.doze_until <archmodel.kernel.Component.doze_until>`) through
        the quiet edges to come, those the cheap path of :meth:`tick` would take: until the
        first that is not quiet, the next check, the next retry on a port, a wake-up asked for
        an interface, or the arrival of a message already on its way to a port (a message
        sent later ends the doze by itself); for at most ``_DOZE_CYCLES``, so the watchdogs
        hear of the flits moving. An edge dozed through counts as ticked, whether the kernel
        ticked the engine there or skipped it (:meth:`_catch_up`: a question asked after it
        sees the network after that edge, as after a cheap tick)."""
        until = self.domain.phase_ps + min(self.quiet, self.ticked + _DOZE_CYCLES) * self.period
        if self.check_ps is not None and self.check_ps < until:
            until = self.check_ps
        if self.out_pending and self.next_retry < until:
            until = self.next_retry
        if self.ni_wakes:
            soonest = min(self.ni_wakes)
            if soonest < until:
                until = soonest
        for flight in compress(self.poll_flights, self.poll_flights):
            if flight[0][0] < until:
                until = flight[0][0]
        if until > now + self.period:
            self.doze_until(until)

    def _call(self, name: str, args: tuple) -> int:
        """The compiled function ``name`` on ``args``: through its entry for them once known
        (the dispatcher's typing of some 60 arrays costs more than an edge's work)."""
        entry = self.entries.get(name)
        if entry is None:
            function = getattr(self, name)
            result = function(*args)
            self.entries[name] = compiled_entry(function, args)
            return result
        return entry(*args)

    def _catch_up(self) -> None:
        """Simulate the edges ticked without a call (see :meth:`tick`), or passed over dozing,
        up to the last of them: what the network holds is then what the fast engine's routers
        and wheels hold."""
        now = self.sim.now
        if now < self.doze_end_ps and self.dozed_edge_ps != now and self.sim.edge_pending(self):
            dozed_edge_ps = now - self.period  # (its edge now is to come: a question asked before it)
        else:  # (the edges before the doze's end, this one at the latest, were dozed through)
            dozed_edge_ps = min(now, self.doze_end_ps - self.period)
        dozed = (dozed_edge_ps - self.domain.phase_ps) // self.period
        if dozed > self.ticked:
            self.ticked = dozed
        if self.ticked > self.last:
            flags = self._call("edge", (self.arrays.cfg, self.last + 1, self.ticked, self.ticked) + self.args)
            if flags & FAILED:
                raise ModelAssertion(f"{self.parent.path}: a model check failed or an edge thought quiet was not "
                                     f"in cycles {self.last + 1} to {self.ticked} (engine='compiled')")
            if flags & MOVED:
                self.moved = True
            n_events = flags >> EVENTS_SHIFT
            if n_events:  # (packets started and tails sent: the only events while quiet)
                self._take_events(self.arrays.events[1:n_events + 1].tolist(), self.sim.now)
            self.last = self.ticked

    def _enqueue(self, t: int, ni, c: int) -> None:
        """The packets of interface t's queue not yet in the arrays join its queue there, to
        start no sooner than cycle c."""
        run = self.arrays
        known = int(run.q_count[t])
        queue = ni.queue
        for k in range(known, len(queue)):
            packet = queue[k]
            if packet.size >= MAX_PACKET_FLITS:
                raise ModelAssertion(f"{ni.path}: a packet of {packet.size} flits (engine='compiled' carries "
                                     f"fewer than {MAX_PACKET_FLITS})")
            if not self.free:
                self._grow_slots(len(self.slots))
            s = self.free.pop()
            self.slots[s] = packet
            trip = trip_of(packet)
            if trip is not None:
                self.trip_slots[trip] = s
            run.pk_dest[0, s], run.pk_id[s], run.pk_size[s], run.pk_from[s] = packet.dest, packet.id, packet.size, c
            if run.q_count[t] == run.queue.shape[1]:
                self._grow_queues()
            Q = run.queue.shape[1]
            run.queue[t, (run.q_head[t] + run.q_count[t]) % Q] = s
            run.q_count[t] += 1

    def _take_events(self, events: list, now: int) -> None:
        """What the edge reported, in its order: packets started (their interface's ``sending``,
        their injection time), tails sent, packets delivered (handed on)."""
        interfaces = self.parent.interfaces
        slots = self.slots
        phase, period = self.domain.phase_ps, self.period
        for kind, t, s, cycle in events:
            ni = interfaces[t]
            if kind == DELIVERED:
                packet = slots[s]
                slots[s] = None
                self.free.append(s)
                trip = trip_of(packet)
                if trip is not None and self.trip_slots.get(trip) == s:
                    del self.trip_slots[trip]
                ni.packet_arrived(packet, now)
                if ni.to_requester or ni.for_memory:
                    self.out_pending.add(t)
                    self.retry_at.pop(t, None)
                    self.next_retry = now
            elif kind == STARTED:
                packet = ni.sending = ni.queue.popleft()
                packet.injected_ps = phase + cycle * period
            else:
                ni.sending = None

    def _pass_messages(self, now: int) -> None:
        """Each interface with messages waiting sends them on its ports while they take them.
        One whose ports refuse is not asked again before either may take: a port whose link
        is busy while it holds a credit once the link frees, one without a credit once a
        credit has come back (the kernel ends the engine's doze, or its sleep, at the edge
        after the receiver takes, ``ready`` having marked the port blocked as a refused try
        would: :meth:`_credit_back`); a packet delivered to it asks at once. With 16 clusters
        on 4 DRAM channels the channels' request queues are full at most edges, and a
        channel takes a request later than the soonest it could
        (:meth:`~archmodel.kernel.OutPort.unblocks_from_ps`): tried then, three tries in four
        were refused. A traced port is tried at every edge, since the try shows."""
        retry_at = self.retry_at
        done = []
        soonest = None  # the soonest timed retry of those still refused
        awaited = []  # the channels refused for want of a credit, still without one
        for t in self.out_pending:
            waits = retry_at.get(t)
            if waits is not None:
                at, short = waits
                if at > now and not any(channel.credits > 0 for channel in short):
                    if at != _AWAIT_CREDIT:
                        soonest = at if soonest is None or at < soonest else soonest
                    awaited.extend(short)
                    continue
            ni, outs = self.served[t]
            refused = False
            at, short = _AWAIT_CREDIT, ()
            for waiting, port in outs:
                if waiting:
                    channel = port.channel
                    if channel.traced or port.ready:
                        refused = False
                        break
                    refused = True
                    if channel.credits > 0:  # (its link is busy: it takes once that frees)
                        at = channel.busy_until if channel.busy_until < at else at
                    else:
                        short += (channel,)
            if refused:
                retry_at[t] = (at, short)
                if at != _AWAIT_CREDIT:
                    soonest = at if soonest is None or at < soonest else soonest
                awaited.extend(short)
                continue
            retry_at.pop(t, None)
            ni.pass_messages()
            if ni.to_requester or ni.for_memory:
                soonest = now  # (tried again at the next edge)
            else:
                done.append(t)
        self.out_pending.difference_update(done)
        self.awaited = awaited
        self.next_retry = soonest if soonest is not None else _AWAIT_CREDIT if awaited else now

    def _credit_back(self) -> bool:
        """Whether a port refused for want of a credit holds one again (see
        :meth:`_pass_messages`)."""
        for channel in self.awaited:
            if channel.credits > 0:
                return True
        return False

    def working(self) -> bool:
        """Whether the last edge left work for the next (words on the wheel, flits buffered,
        packets queued or being sent)."""
        return bool(self.flags & WORKING)

    def buffered_flits(self) -> int:
        """The flits buffered in the routers."""
        if self.arrays is None:
            return 0
        self._catch_up()
        return int(self.arrays.buffered.sum())

    def deadlock_report(self, now: int) -> str:
        """:meth:`Noc.deadlock_report` from the arrays: the flits buffered, and who waits on
        whom as :meth:`NocRouter.waits` says it of the routers' objects."""
        buffered = self.buffered_flits()  # (caught up)
        return self.parent.deadlock_report(now, self._waits(), buffered)

    def _waits(self) -> list:
        """:meth:`NocRouter.waits` of every router, in their order, read from the arrays: an
        input VC holding an output VC without credits waits on the VC it feeds; a head routed
        and waiting for an output VC waits on each input VC holding one of those it may take
        (with ``wait_for_tail_credit`` also the one whose tail left it, until its credits are
        back, as the router object keeps it as the VC's owner)."""
        if self.arrays is None:
            return []
        run = self.arrays
        _, P, V, _ = self.tables.shape
        count, state, out = run.buf_count.tolist(), run.ivc_state.tolist(), run.ivc_out.tolist()
        credits, port, lo, hi = (run.ovc_credits.tolist(), run.ivc_dest_port.tolist(), run.ivc_lo.tolist(),
                                 run.ivc_hi.tolist())
        tail_left = run.ovc_wait.tolist()
        waits = []
        for r, router in enumerate(self.parent.routers):
            base = r * P * V
            holders = {out[base + i]: i for i in range(P * V) if out[base + i] >= 0}
            holders.update((o, tail_left[base + o]) for o in range(P * V) if tail_left[base + o] >= 0)
            for i in range(len(router.inp) * V):
                g = base + i
                if not count[g]:
                    continue
                me = f"{router.inp[i // V].path}.vc{i % V}"
                ovc = out[g]
                if ovc >= 0:
                    if credits[base + ovc] == 0:
                        waits.append((me, f"{router.downstream[ovc // V]}.vc{ovc % V}"))
                elif state[g] == 1:
                    for w in range(lo[g], hi[g]):
                        holder = holders.get(port[g] * V + w)
                        if holder is not None and holder != i:
                            waits.append((me, f"{router.inp[holder // V].path}.vc{holder % V}"))
        return waits

    def write_back_statistics(self) -> None:
        """The routers' statistics and the interfaces' flit counts from the arrays."""
        run = self.arrays
        if run is None:
            return
        self._catch_up()
        noc = self.parent
        write_back_routers(noc, run)
        for t, ni in enumerate(noc.interfaces):
            ni.injected_flits.value = int(run.ni_flits[t])
            ni.ejected_flits.value = int(run.ni_ejected[t])

    def _flits_to_send(self, ni) -> int:
        """:meth:`~.tail_bounds.PacketTailBounds._flits_to_send` from the arrays."""
        self._catch_up()  # (first: it may find the tail sent)
        if ni.sending is None:
            return 0
        run, t = self.arrays, ni.terminal
        return int(run.pk_size[run.ni_send_slot[t]] - run.ni_send[t])

    def _flits_entering(self, ni) -> int:
        """:meth:`~.tail_bounds.PacketTailBounds._flits_entering`, as the last
        :meth:`network_tails` counted them (at the same question: _port_bounds asks it first)."""
        run = self.arrays
        return int(run.ahead[2, run.ni_send_slot[ni.terminal]])

    def network_tails(self, now: int):
        """:meth:`~.tail_bounds.PacketTailBounds.network_tails` from the arrays
        (:func:`~.compiled_edge.packet_tails`)."""
        soonest = self._packet_tails(now)
        if soonest is None:
            return ()
        found = np.flatnonzero(soonest >= 0)
        slots = self.slots
        return [(slots[s], at) for s, at in zip(found.tolist(), soonest[found].tolist())]

    def network_tail_of(self, now: int, key: tuple) -> tuple | None:
        """:meth:`~.engine_bounds.MemoryPortBounds.network_tail_of`, the packet found by its
        trip (``trip_slots``) instead of among all those in the network."""
        soonest = self._packet_tails(now)  # (also when none carries it: _flits_entering reads its counts)
        s = self.trip_slots.get(key)
        if soonest is None or s is None:
            return None
        at = int(soonest[s])
        return (self.slots[s], at) if at >= 0 else None

    def _holding_interfaces(self, key: tuple):
        """:meth:`~.engine_bounds.MemoryPortBounds._holding_interfaces`: the interface of the
        packet kept by its trip (``trip_slots``), when the packet waits there (the lookahead
        caught up first, so its ``queue`` and ``sending`` are those of the last edge ticked;
        packets queued since, not in the arrays yet, are looked for as the fast engine does)."""
        if self.fresh:
            return super()._holding_interfaces(key)
        s = self.trip_slots.get(key)
        if s is None:
            return ()
        packet = self.slots[s]
        ni = self.parent.interfaces[packet.source]
        if ni.sending is packet or any(waiting is packet for waiting in ni.queue):
            return (packet.source,)
        return ()

    def forget_bounds(self) -> None:
        """As :meth:`NocEngine.forget_bounds`, and the packet tails kept for this time point
        with them (a test compares what is kept with what is worked out again)."""
        super().forget_bounds()
        self.tails_kept = None

    def _packet_tails(self, now: int):
        """Per packet slot, the soonest its tail can arrive (-1: none of its flits in the
        network), from the network caught up to the edges ticked; None before the first. Kept
        for the next question at this time point while the engine has not ticked since (with
        16 clusters on 4 DRAM channels about half the questions come in pairs, two clusters
        alike): only an edge changes what the tails are worked out from, and quiet_until,
        the other user of the scratch, runs only at a tick."""
        if self.last is None:
            return None
        self._catch_up()
        run, tb = self.arrays, self.tables
        soonest = run.soonest
        key = (now, self.last, self.steps)
        if self.tails_kept == key:
            return soonest
        self.tails_kept = key
        self.packet_tails(run.cfg, now, self.last, soonest, run.ahead, run.credit, run.reach, run.in_lat,
                          tb.out_kind, tb.out_target, tb.term_router, run.buf_id, run.buf_arr, run.buf_head,
                          run.buf_count, run.ivc_state, run.ivc_ready, run.buffered, run.pk_dest, run.pk_size,
                          run.ev_kind, run.ev_a, run.ev_b, run.ev_n)
        return soonest
