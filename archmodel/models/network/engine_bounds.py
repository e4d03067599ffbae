"""The fast network engine's lookahead answers on its memory ports (a mixin of
:class:`~.engine.NocEngine`, see :mod:`archmodel.kernel.lookahead`).

A message leaves on ``mem_rsp[t]`` only when the tail of a response packet for t arrives
there, on ``to_memory[t]`` when a request's does. So a port's earliest send is the soonest
any such flit can reach terminal t from where it is now (a router's pipeline, a link, a
source queue), each leg at its least time; and a message arriving on a memory port reaches
the other terminal's port no sooner than the network's least latency. A response goes back
only to the requester that asked, so ``mem_rsp[t]`` is also bounded by the soonest answer to
t's own requests wherever they are (on their way in, in the network, at a memory), and as
t's interface sends them in the order of t's requests, while a memory holds the request
answered next only that memory's bound on t's requests counts. An answer
leaves only when the tail of its packet arrives, a cycle per flit behind the head, and its
flits follow from the request (the bytes read, or one word for a write's acknowledgement:
:func:`~.memory_interface.answer_flits`), so every answer's bound counts them: between
routers no faster than a buffer's depth of flits per credit round trip (:meth:`_tail_ps`;
with links of 8 cycles a 1 KiB response's tail is 60 cycles behind its head, not 15, over
one). A request
reaches its memory only over the link from the memory's terminal, which the interface sends
on when it is ready, in order: while the link refuses (a DRAM channel with full queues has
scheduled its cycles ahead and takes nothing before them), no request on its way there or
waiting is passed on before the link may take again
(:meth:`~archmodel.kernel.OutPort.unblocks_from_ps`), worked out at each question. A
request of t's on its way (in the network, or into ``mem_req[t]``), or waiting there, is
answered no sooner than a memory that can bound a newcomer says it answers one arriving
then behind the requests on the link and those waiting to be passed on
(``newcomer_answer_ps``: a DRAM channel with full queues takes their read bursts first).
"""

from __future__ import annotations

import functools
import itertools

from .memory_interface import RequestTrip, ResponseTrip, answer_flits
from .tail_bounds import PacketTailBounds


class MemoryPortBounds(PacketTailBounds):
    """The lookahead protocol of :class:`~.engine.NocEngine` (``earliest_send_ps``,
    ``reaction_ps``, ``least_reaction_ps``, ``reactions``): the engine provides ``parent`` (the
    Noc), its memory ports, ``period``, ``port_terminals``, ``port_terminal``, ``steps``,
    the timing wheels and ``sim``; :meth:`_plan_bounds` runs at its start."""

    def _plan_bounds(self) -> None:
        """The least cycles from a terminal to each terminal for one flit (the packets waiting
        at their interfaces), and the tail terms (:meth:`_plan_tails`)."""
        self._plan_tails()
        noc = self.parent
        pm = noc.port_map
        # Noc.min_latency(u, t) for one flit (a packet of n flits takes n - 1 cycles more),
        # asked for every queued packet at every edge a question comes at
        terminals = range(pm.terminals)
        self.least_cycles = [[noc.min_latency(u, t) for t in terminals] for u in terminals]
        self.memory_sides = None  # see _memory_sides

    def _port_bounds(self) -> dict:
        """Per memory port in use, the soonest time (ps) a message can leave on it from what
        the network holds now (see the module docstring); cached for the current edge."""
        now = self.sim.now
        key = (now, self.steps)
        if self.bounds_at == key:
            return self.bounds
        noc = self.parent
        bounds: dict = {}
        heading: dict = {}  # requester -> [(tail's arrival at the memory's terminal, that terminal, then to its answer)]
        # (requester, order) -> the soonest the tail of its response arrives there, or its
        # request's entry in heading (see _next_answer_on_its_way)
        on_its_way: dict = {}

        def offer(packet, at: int) -> None:
            payload = packet.payload
            if isinstance(payload, ResponseTrip):
                port = self.mem_rsp[packet.dest]
                on_its_way[packet.dest, payload.order] = at
            elif isinstance(payload, RequestTrip):
                port = self.to_memory[packet.dest]
                entry = self._heading_entry(packet, at)
                heading.setdefault(payload.requester, []).append(entry)
                on_its_way[payload.requester, payload.order] = entry
            else:
                return
            if port not in bounds or at < bounds[port]:
                bounds[port] = at

        for packet, at in self.network_tails(now):
            offer(packet, at)
        interfaces = noc.interfaces
        # (only an interface with memory ports in use makes packets that carry memory traffic)
        # a packet waiting at its interface, or being sent, is bounded as an answer to come:
        # its head at the network's least latency, its tail behind it crossing into the
        # destination's router no faster than the credits come back (_tail_ps); a packet
        # waiting starts no sooner than the flits ahead of it are sent (_queue_starts)
        for u in self.port_terminals:
            ni = interfaces[u]
            for packet, at in self._waiting_tails(u, ni, now):
                offer(packet, at)
            _, mem_rsp, to_memory, _ = ni.io
            if ni.to_requester:
                bounds[mem_rsp] = now
            if ni.for_memory:
                bounds[to_memory] = now
        self.bounds_at, self.bounds, self.heading, self.on_its_way = key, bounds, heading, on_its_way
        self.answers = {}  # requester -> (_answer_bound, [(memory, its bounds_version)]), for this edge
        return bounds

    def _waiting_tails(self, u: int, ni, now: int):
        """The packets waiting at interface ``ni`` (terminal u) and the one it is sending, in
        that order, each with the soonest its tail can arrive (see :meth:`_port_bounds`)."""
        period = self.period
        least = self.least_cycles[u]
        tail = self._tail_ps
        for packet, start in self._queue_starts(ni, now):
            yield packet, start + least[packet.dest] * period + tail(u, packet.dest, packet.size)
        packet = ni.sending
        if packet is not None:
            yield packet, max(now, packet.injected_ps + least[packet.dest] * period + tail(u, packet.dest, packet.size))

    def _heading_entry(self, packet, at: int) -> tuple:
        """A request packet whose tail arrives at its memory's terminal at ``at`` at the
        soonest, as :meth:`_port_bounds` keeps it: ``(at, that terminal, the least time from
        there to its answer's tail at the requester, the request)``; the answer is worked out
        at each question (see :meth:`_heading_answer`), since the link to the memory may
        change between edges."""
        trip = packet.payload
        after = (self._answer_after_ps(packet.dest, trip.requester)
                 + self._tail_ps(packet.dest, trip.requester, answer_flits(trip.request, self.parent.flit_bits)))
        return (at, packet.dest, after, trip.request)

    def _on_its_way(self, t: int, order: int):
        """What :meth:`_port_bounds` keeps in ``on_its_way`` for request ``order`` of terminal
        t's (the soonest its response's tail arrives at t, or its request's
        :meth:`_heading_entry`; None: neither packet is in the network or at an interface),
        worked out for that one packet when the bounds of this edge are not kept yet: most
        questions at an edge ask about one cluster's next answer, and the bounds of every
        packet cost several times as much. The same terms in the same order (a packet being
        sent is also in the network: its sending bound is the one kept)."""
        key = (t, order)
        if self.bounds_at == (self.sim.now, self.steps):
            return self.on_its_way.get(key)
        now = self.sim.now
        found = self.network_tail_of(now, key)  # (first: _queue_starts reads its counts)
        interfaces = self.parent.interfaces
        for u in self._holding_interfaces(key):
            ni = interfaces[u]
            for packet, at in self._waiting_tails(u, ni, now):
                if trip_of(packet) == key:
                    found = (packet, at)
        if found is None:
            return None
        packet, at = found
        return at if isinstance(packet.payload, ResponseTrip) else self._heading_entry(packet, at)

    def _holding_interfaces(self, key: tuple):
        """The terminals whose interfaces hold the packet carrying request ``key`` or its
        response, queued or being sent (one at the most)."""
        interfaces = self.parent.interfaces
        for u in self.port_terminals:
            ni = interfaces[u]
            sending = ni.sending
            # (most interfaces hold nothing: told without a look at their queues)
            if ((sending is not None and trip_of(sending) == key)
                    or (ni.queue and any(trip_of(packet) == key for packet in ni.queue))):
                yield u

    def network_tail_of(self, now: int, key: tuple) -> tuple | None:
        """``(packet, soonest its tail arrives)`` for the packet in the network that carries
        request ``key`` (``(requester, order)``: :func:`trip_of`) or its response, as
        :meth:`network_tails` offers it (one packet at the most: the response is made once
        the request has arrived); None when neither is in the network."""
        for packet, at in self.network_tails(now):
            if trip_of(packet) == key:
                return packet, at
        return None

    def _answer_bound(self, t: int) -> int | None:
        """The soonest answer to a request of terminal t's at a memory (see
        :meth:`_memory_side_bound`), kept with :meth:`_port_bounds` while the
        :meth:`~archmodel.kernel.Component.bounds_version` of each memory holding t's requests
        holds (a memory working at this time point, or taking a request, moves its bounds on;
        one without a version is asked again each time): only the requesters asked about are
        worked out (a question about one cluster asks for its own port), and only at the
        memories whose interfaces hold their requests (:meth:`holds_requests_of`; what the
        interfaces hold changes only at the engine's edges, which drop every answer kept)."""
        self._port_bounds()
        sides = self._memory_sides().values()
        kept = self.answers.get(t)
        if kept is not None:
            known, versions = kept
            for memory, version in versions:
                if memory.bounds_version() != version:
                    break
            else:
                return known
        now = self.sim.now
        known = None
        versions: list | None = []
        for side in sides:
            if not side[0].holds_requests_of(t):
                continue
            if versions is not None:
                memory = side[6]
                version = memory.bounds_version()
                if version is None:
                    versions = None
                else:
                    versions.append((memory, version))
            at = self._memory_side_bound(side, now, t)
            if at is not None and (known is None or at < known):
                known = at
        if versions is not None:
            self.answers[t] = (known, versions)
        return known

    def forget_bounds(self) -> None:
        """Drop every bound kept for this edge (a packet created between edges changes them;
        a test compares them with ones worked out again); the answers go with them."""
        self.bounds_at = None

    def _memory_sides(self) -> dict:
        """Per terminal with a memory connected both ways (in the order of
        ``port_terminals``), what :meth:`_memory_side_bound` reads of the wiring, which does
        not change: the interface, the two links and their least delays, the memory's least
        reaction, whether it answers per client, the least cycles (in ps) from the terminal
        to every requester, whether it bounds a newcomer, and the tails of packets from the
        terminal (:meth:`_tail_ps`). Worked out at the first question, when every memory has
        started, and kept."""
        if self.memory_sides is not None:
            return self.memory_sides
        sides = self.memory_sides = {}
        period = self.period
        terminals = self.parent.port_map.terminals
        for u in self.port_terminals:
            forward, back = self.to_memory[u].channel, self.from_memory[u].channel
            if forward is None or back is None:
                continue
            memory = forward.dst_owner
            sides[u] = (self.parent.interfaces[u], forward, back,
                        forward.delay if forward.same_domain else forward.tail_delay,
                        back.delay if back.same_domain else back.tail_delay,
                        self._memory_reaction_ps(u), memory, getattr(memory, "earliest_answer_ps", None),
                        [self.least_cycles[u][r] * period for r in range(terminals)],
                        getattr(memory, "newcomer_answer_ps", None), functools.partial(self._tail_ps, u))
        return sides

    @staticmethod
    def _memory_side_bound(side: tuple, now: int, only: int) -> int | None:
        """The soonest answer to requester ``only``'s requests at one memory (waiting to be
        passed on, on their way to it, held by it) and to its responses on their way back
        from it, as its ``mem_rsp``. A memory that can say when it answers one client
        (``earliest_answer_ps``, the DRAM controllers and the interleaved memory) is asked
        about the requester's own; another, when it answers anyone.

        Such a memory answers each client in the order of its requests and counts the
        requests on their way to it, so a request of a client it gives a bound for, still
        waiting here or on the link, is answered after that bound: only the requests of the
        other clients are bounded on their own, by the least reaction (with 16 clusters on 4
        DRAM channels the queues are full and requests wait here, and their least reaction,
        one DRAM cycle, would end each cluster's batch within a few cycles). A request of a
        client the memory holds nothing of, next to be passed on from here, is bounded by
        the memory itself where it can say so (``newcomer_answer_ps``: a 1 KiB read or write
        needs its 16 bursts to find queue slots) as arriving over the link at the soonest,
        which is after the link takes again while it refuses the requests waiting here
        (:meth:`~archmodel.kernel.OutPort.unblocks_from_ps`: a DRAM channel scheduling
        ahead takes no request before the cycles it has scheduled).

        Each answer's packet counts its flits behind the head. A client's responses reach
        the requester in the order of its requests, so a bound on the client's next answer
        (from the memory, or for its first request waiting here) counts the flits of that
        answer (:meth:`~.memory_interface.MemoryMappedInterface.next_answer_flits`): the
        client's later answers come after its tail."""
        ni, forward, back, forward_ps, back_ps, react, memory, per_client, to_requester, newcomer, tail = side
        network_ps = to_requester[only]
        best = None
        returning: set | tuple = ()  # the tags of the responses on their way back
        if back.flight:
            held = ni.at_memory
            returning = set()
            for arrival, response in back.flight:
                returning.add(response.tag)
                trip = held.get(response.tag)
                if trip is not None and trip.requester == only:
                    # (its packet's tail a cycle per flit behind the head)
                    at = (arrival if arrival > now else now) + network_ps + tail(only, ni.flits_for(response))
                    if best is None or at < best:
                        best = at
        # a response leaving the memory at `leaves` reaches mem_rsp[only] back_ps + network_ps later
        back_ps += network_ps
        sources = ni.sources_at_memory(only)
        answered = ()  # the sources the memory bounds
        if per_client is None:
            if sources:
                leaves = memory.earliest_send_ps(back.src)
                if leaves is not None:
                    at = (leaves if leaves > now else now) + back_ps
                    if best is None or at < best:
                        best = at
        elif sources:
            answered = set()
            for source in sources:
                leaves = per_client((only, source))
                if leaves is not None:
                    answered.add(source)
                    at = ((leaves if leaves > now else now) + back_ps
                          + tail(only, ni.next_answer_flits(only, source, returning)))
                    if best is None or at < best:
                        best = at
        waiting = ni.sources_waiting(only)
        if waiting:
            firsts = ni.first_for_memory(only) if newcomer is not None else {}
            # A request waits here while the link to the memory refuses (the engine passes
            # them on at every step until it does), and every waiting request goes over that
            # link: none is passed on before the link may take again.
            passed = now
            if ni.for_memory:
                unblocked = link_takes_from_ps(forward.src, now)
                if unblocked > passed:
                    passed = unblocked
            for source in waiting:
                if source in answered:
                    continue
                first = firsts.get(source)
                if first is None:
                    leaves = None
                else:  # (behind the requests passed on before it, whose writes it sees)
                    request = first[0]
                    ahead = list(itertools.takewhile(lambda queued: queued is not request, ni.for_memory))
                    leaves = newcomer(request, passed + forward_ps, False, ahead)
                # passed on at the soonest, over the link to the memory
                if leaves is None:
                    at = passed + forward_ps + react + back_ps
                else:  # (that request is its client's next answered)
                    at = max(leaves, now) + back_ps + tail(only, answer_flits(first[0], ni.flit_bits))
                if best is None or at < best:
                    best = at
        for arrival, request in forward.flight:
            requester, source = request.source
            if requester == only and source not in answered:
                at = ((arrival if arrival > now else now) + react + back_ps
                      + tail(only, answer_flits(request, ni.flit_bits)))
                if best is None or at < best:
                    best = at
        return best

    sends_hold_through_credits = True
    """The bounds of :meth:`earliest_send_ps` take every flit at its least latency and a
    message waiting at a port as leaving now, whatever the ports' credits: a credit returning
    on one memory port (a requester taking a response, a memory a request) lets the engine
    send sooner on that port only, so the lookahead wakes none of the others (with 32
    requesters, any one of them taking a response would otherwise bound every other's
    horizon by a cycle)."""

    bounds_inputs_in_flight = True
    """:meth:`earliest_send_ps` counts the requests on their way to ``mem_req`` (and through
    the memory back) and the responses on their way to ``from_memory``, so the lookahead adds
    no reaction for them."""

    def earliest_send_ps(self, port) -> int | None:
        """The soonest a response can leave on ``mem_rsp[t]`` or a request on ``to_memory[t]``
        from what the network and its memories hold now and the messages on their way to it:
        the next edge while one waits there, else the soonest tail of such a packet can
        arrive at terminal t (see :meth:`_port_bounds`); on ``mem_rsp[t]`` also the soonest
        answer to a request of t's wherever it is (on its way here, in the network, at a
        memory: :meth:`_memory_side_bounds`), since a response goes back only to the
        requester that asked; but only the answer to t's oldest request while a memory holds
        it (:meth:`_oldest_answer_bound`), and only the requests on their way into
        ``mem_req[t]`` while t awaits no answer. None: only a new request can make one."""
        t = self.port_terminal.get(port)
        if t is not None and port is self.mem_rsp[t]:
            ni = self.parent.interfaces[t]
            if not ni.to_requester and ni.next_answer_order() is None:
                # Every request t's interface took is answered and delivered: nothing in the
                # network, at a memory or on its way back is for t (about one question in
                # five with 16 clusters on 4 DRAM channels, a cluster computing between its
                # transfers), so only a request on its way into mem_req[t] can be answered.
                return self._arriving_requests_bound(t, False, None)
            oldest = self._oldest_answer_bound(t)
            if oldest is None:
                oldest = self._next_answer_on_its_way(t)
            if oldest is not None:
                return oldest
        bound = self._port_bounds().get(port)
        if t is None:
            return bound
        to_memory = port is self.to_memory[t]
        if not to_memory:
            for answer in (self._answer_bound(t), self._heading_answer(t)):
                if answer is not None and (bound is None or answer < bound):
                    bound = answer
        return self._arriving_requests_bound(t, to_memory, bound)

    def _arriving_requests_bound(self, t: int, to_memory: bool, bound: int | None) -> int | None:
        """``bound`` lowered to the soonest a request on its way into ``mem_req`` (sent since
        the bounds were cached, too) reaches ``to_memory[t]`` (any requester's, for the
        memory at t), or is answered on ``mem_rsp[t]`` (t's own: no sooner than its memory
        bounds it, :meth:`_newcomer_on_its_way`)."""
        now = self.sim.now
        for u in (self.port_terminals if to_memory else (t,)):
            channel = self.mem_req[u].channel
            if channel is None:
                continue
            for arrival, request in channel.flight:
                dest = self._destination(u, request)
                if dest is None or (to_memory and dest != t):
                    continue
                if to_memory:
                    at = max(arrival, now) + self.parent.min_latency(u, t) * self.period
                else:
                    # at the memory's terminal, passed on to the memory, answered
                    at = max(arrival, now) + self.parent.min_latency(u, dest) * self.period
                    passed = max(at, self._passed_on_from_ps(dest))
                    at = max(passed + self._answer_after_ps(dest, u)
                             + self._tail_ps(dest, u, answer_flits(request, self.parent.flit_bits)),
                             self._newcomer_on_its_way(u, dest, request, passed))
                if bound is None or at < bound:
                    bound = at
        return bound

    def _oldest_answer_bound(self, t: int) -> int | None:
        """The soonest a response can leave on ``mem_rsp[t]`` while the request whose response
        goes next is held at a memory's terminal (from its arrival there until its response
        is taken from the link back): the interface at t sends its responses in the order
        of t's requests (its reorder buffer), so none leaves before that request's answer,
        which the bound of that memory for t's requests there counts
        (:meth:`_memory_side_bound`), whatever t's later requests or their responses
        elsewhere may do; now while a response waits to leave. None when the next is
        elsewhere (on its way there, or its response on its way back to t) or that bound
        knows none: the caller works out the bound from everything.

        With 16 clusters streaming from 4 DRAM channels a cluster's oldest request is held
        at its channel at most questions, so the scan of the network's packets
        (:meth:`_port_bounds`) is spared there, and the bounds of its later requests (on
        their way, waiting for a channel that holds nothing of theirs yet) no longer set
        the horizon."""
        ni = self.parent.interfaces[t]
        if ni.to_requester:
            return self.sim.now
        order = ni.next_answer_order()
        if order is None:
            return None
        for side in self._memory_sides().values():
            if side[0].holds_order(t, order):
                return self._memory_side_bound(side, self.sim.now, t)
        return None

    def _next_answer_on_its_way(self, t: int) -> int | None:
        """The soonest a response can leave on ``mem_rsp[t]`` while the packet of the request
        whose response goes next, or of that response, is on its way through the network or
        waits to be injected: the interface at t sends its responses in the order of t's
        requests, so none leaves before that response's tail arrives, or that request is
        answered (:meth:`_heading_answer`'s term for it alone), whatever t's later requests
        or their responses do, nor before its memory can answer it
        (:meth:`_newcomer_on_its_way`). None when that packet is elsewhere (at a memory's
        terminal: :meth:`_oldest_answer_bound`): the caller works out the bound from
        everything."""
        order = self.parent.interfaces[t].next_answer_order()
        if order is None:
            return None
        found = self._on_its_way(t, order)
        if found is None or isinstance(found, int):
            return found
        arrival, dest, after, request = found
        passed = self._passed_on_from_ps(dest)
        reached = arrival if arrival > passed else passed
        return max(reached + after, self._newcomer_on_its_way(t, dest, request, reached))

    def _newcomer_on_its_way(self, t: int, dest: int, request, passed: int) -> int:
        """The soonest the answer to ``request`` of terminal t's, on its way to the memory at
        terminal ``dest`` and passed on to it no sooner than ``passed``, can leave on
        ``mem_rsp[t]`` as that memory bounds a newcomer (``newcomer_answer_ps``; 0 where it
        cannot say). It arrives over the link behind the requests on it now and those
        waiting there to be passed on (with 16 clusters on 4 DRAM channels, whose queues are
        full, their read bursts need read-queue slots first), and a write unseen yet may
        come first. For t's next answered request (every request of t's before it answered,
        its later ones held back at that terminal until it arrives, in the order they were
        sent) t holds nothing there before it; for a later one, what t holds there is
        answered first, which only delays it (that memory answers a client in order)."""
        side = self._memory_sides().get(dest)
        if side is None:
            return 0
        ni, _, _, forward_ps, back_ps, _, _, _, to_requester, newcomer, _ = side
        if newcomer is None:
            return 0
        leaves = newcomer(request, passed + forward_ps, True, ni.for_memory)
        if leaves is None:
            return 0
        now = self.sim.now
        return ((leaves if leaves > now else now) + back_ps + to_requester[t]
                + self._tail_ps(dest, t, answer_flits(request, ni.flit_bits)))

    def _heading_answer(self, t: int) -> int | None:
        """The soonest answer to a request of terminal t's on its way to a memory (queued at
        t's interface or in the network): its tail reaches the memory's terminal no sooner
        than :meth:`_port_bounds` found, it is passed on to the memory no sooner than the
        link there may take (:meth:`_passed_on_from_ps`), and it is answered no sooner than
        the least time from there (:meth:`_answer_after_ps`, its response's flits behind
        the head). None: no request of t's is on its way."""
        soonest = None
        for arrival, dest, after, _ in self.heading.get(t, ()):
            passed = self._passed_on_from_ps(dest)
            at = (arrival if arrival > passed else passed) + after
            if soonest is None or at < soonest:
                soonest = at
        return soonest

    def _passed_on_from_ps(self, u: int) -> int:
        """The soonest a request arriving at terminal u can be passed on to the memory there:
        not before the link to it may take a message: now (or once the link frees) while it
        holds a credit, else :meth:`OutPort.unblocks_from_ps` (the interface sends on it only
        when it is ready, and a request goes behind those waiting, which the link refuses
        until then; a DRAM channel scheduling ahead takes none before the cycles it has
        scheduled); now without a memory connected."""
        port = self.to_memory[u]
        now = self.sim.now
        if not port.connected:
            return now
        return link_takes_from_ps(port, now)

    def _destination(self, t: int, request) -> int | None:
        """The terminal whose memory holds ``request``'s address (None: unmapped, which the
        interface reports when it takes it)."""
        owner = self.parent.interfaces[t].memory_map.find(request.address)
        return None if owner is None else owner.owner(request.address)

    def reaction_ps(self, inp, out) -> int | None:
        """A request taken on ``mem_req[u]`` reaches ``to_memory[t]`` no sooner than the least
        latency of a one-flit packet from u to t (:meth:`Noc.min_latency`), and is answered on
        ``mem_rsp[u]`` no sooner than u's least round trip (:meth:`_least_round_trip_ps`). A
        response taken on ``from_memory`` goes back only to the requester that asked, which
        :meth:`earliest_send_ps` already counts (None), as it counts the answers to every
        request it holds; a request causes nothing on another requester's port."""
        return self._static_reaction(inp, out)

    def least_reaction_ps(self, inp, out) -> int | None:
        """As :meth:`reaction_ps`, which follows from the wiring and the network alone."""
        return self._static_reaction(inp, out)

    def reactions(self, inp) -> list:
        """:meth:`reaction_ps` for the connected outputs that may react, listed from the
        terminals served instead of asking about all of the network's memory ports."""
        table = self._reaction_table.get(inp)
        if table is None:
            table = self._reaction_table[inp] = [
                (out.channel, reaction) for out in self._connected_outputs()
                if (reaction := self._static_reaction(inp, out)) is not None]
        return table

    def _connected_outputs(self) -> list:
        return [port for t in self.port_terminals for port in (self.mem_rsp[t], self.to_memory[t])
                if port.connected]

    def _static_reaction(self, inp, out) -> int | None:
        key = (inp, out)
        known = self._reactions.get(key, False)
        if known is False:
            known = None
            if inp.name.startswith("mem_req"):
                u, t = self.port_terminal[inp], self.port_terminal[out]
                if out.name.startswith("to_memory"):
                    known = self.parent.min_latency(u, t) * self.period
                elif u == t:
                    known = self._least_round_trip_ps(t)
            self._reactions[key] = known  # the wiring and the network do not change: asked again and again
        return known

    def _memory_reaction_ps(self, u: int) -> int:
        """The least time the memory at terminal u takes from a request's arrival to its
        response (as it declares it; 0 if it declares none)."""
        forward, back = self.to_memory[u].channel, self.from_memory[u].channel
        return forward.dst_owner.least_reaction_ps(forward.dst, back.src) or 0

    def _answer_after_ps(self, u: int, t: int) -> int:
        """The least time from a request of terminal t's leaving on ``to_memory[u]`` to its
        answer leaving on ``mem_rsp[t]``: the link to the memory, the memory, the link back,
        the network from u to t (0 for the memory parts where none is connected)."""
        key = (u, t)
        known = self._answers.get(key)
        if known is None:
            known = self.parent.min_latency(u, t) * self.period
            forward, back = self.to_memory[u].channel, self.from_memory[u].channel
            if forward is not None and back is not None:
                known += self._memory_reaction_ps(u)
                for link in (forward, back):  # a link's message arrives after at least its latency
                    known += link.delay if link.same_domain else link.tail_delay
            self._answers[key] = known
        return known

    def _trip_ps(self, t: int, u: int) -> int:
        """The least time from a request taken on ``mem_req[t]`` for the memory at u to its
        answer leaving on ``mem_rsp[t]``."""
        return self.parent.min_latency(t, u) * self.period + self._answer_after_ps(u, t)

    def _least_round_trip_ps(self, t: int) -> int:
        """:meth:`_trip_ps` to the nearest memory connected (the network's least round trip
        without one)."""
        trips = [self._trip_ps(t, u) for u in self.port_terminals if self.to_memory[u].connected]
        return min(trips) if trips else self.parent.interfaces[t].round_trip_cycles * self.period


def link_takes_from_ps(port, now: int) -> int:
    """The soonest the link behind a memory's connected ``to_memory`` port may take a request
    from the interface: now (or once the link frees) while it holds a credit, else
    :meth:`~archmodel.kernel.OutPort.unblocks_from_ps` (meant for a port found not ready: for
    one holding a credit, the memory's next take would come up to a link's latency late)."""
    channel = port.channel
    if channel.credits > 0:
        return channel.busy_until if channel.busy_until > now else now
    return port.unblocks_from_ps()


def trip_of(packet) -> tuple | None:
    """``(requester, order)`` of the request a memory packet carries, or answers (None: not
    memory traffic)."""
    payload = packet.payload
    if isinstance(payload, ResponseTrip):
        return (packet.dest, payload.order)
    if isinstance(payload, RequestTrip):
        return (payload.requester, payload.order)
    return None
