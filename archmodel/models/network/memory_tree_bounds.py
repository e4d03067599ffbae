"""What a memory tree node tells the lookahead (:mod:`archmodel.kernel.lookahead`): when it
next sends on each port, when it takes the k-th message of a requester's link and when its
queues send their m-th request, how soon a requester's answers can come, and its least
reactions; a mixin of :class:`~.memory_tree.MemoryTreeNode`, whose state (queues, round
robin, answers awaited) it reads as the node's own."""

from __future__ import annotations

from ..messages import MemRequest

_UNKNOWN = object()  # (a bound not kept: None is a bound)


def _transit_ps(channel) -> int:
    """The least time a message spends on ``channel``: ``latency`` of the receiver's cycles in
    one clock domain, else just over ``latency - 1`` of them (it arrives at the first receiver
    edge strictly after it left)."""
    return channel.delay if channel.same_domain else channel.tail_delay + 1


class MemoryTreeBounds:
    """The lookahead's side of :class:`~.memory_tree.MemoryTreeNode` (see the module
    docstring): every bound is a lower bound from the node's state now, never later than
    the event it bounds."""

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
        if sim.transfers != self._bound_transfers or sim.now != self._bound_now:
            self._fresh_bounds()
        bound = self._bounds.get(port, _UNKNOWN)
        if bound is not _UNKNOWN:
            return bound
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
        kept = self._take_kept.get((i, k))
        return self._kept(self._take_kept, self._take_bound, i, k) if kept is None else kept

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
        kept = self._send_kept.get((t, m))
        return self._kept(self._send_kept, self._send_bound, t, m) if kept is None else kept

    def _kept(self, kept: dict, bound, a: int, b: int) -> int:
        """``bound(a, b)``, worked out and kept in ``kept`` under ``(a, b)`` (the bounds of
        :meth:`take_ps` and :meth:`send_ps` hold for the state they came from, see
        :meth:`_fresh_bounds`). While it is worked out, a loop of nodes asking back (die-to-die
        links both ways) gets no better bound than now."""
        kept[a, b] = self.sim.now
        value = kept[a, b] = bound(a, b)
        return value

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
                if not isinstance(sender, MemoryTreeBounds):
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
        if isinstance(receiver, MemoryTreeBounds):
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
        return self._answer_for(i, port, source)

    def _answer_for(self, i: int, port, source) -> int | None:
        """:meth:`answer_bound_for` on ``answer_ports[i]`` (``port``), kept for the state now."""
        sim = self.sim
        if sim.transfers != self._bound_transfers or sim.now != self._bound_now:
            self._fresh_bounds()
        key = (port, source)
        bound = self._bounds.get(key, _UNKNOWN)
        if bound is not _UNKNOWN:
            return bound
        if self._asking:  # a loop of nodes (die-to-die links both ways): no better bound
            return sim.now
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
        # (key: the pair (i, source) this node forwarded the request with, the very object:
        # the nodes above and the memory look it up among the keys they made of it, and a
        # key compares equal at once where its parts are the same objects, not part by part)
        _, key, _, t = self.outstanding[tag]
        queue = self.to_send[t]
        back = self.from_targets[t].channel
        if queue and queue[0][1].tag <= tag:  # not sent yet: the queue sends in tag order
            ahead = 0
            for _, request, _ in queue:
                if request.tag == tag:
                    break
                ahead += 1
            target = back.src_owner
            if isinstance(target, MemoryTreeBounds):
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
        # A node above is asked about the request's forwarded source, a memory that bounds
        # its answers per client (earliest_answer_ps: a DRAM controller, an interleaved
        # stack) about that client; any other may answer at once. (Asking the memory buys
        # little while the credits a blocked requester waits for are bounded one send per
        # edge: both horizons must reach further for a batch to.)
        kept = self._answerers
        if kept[0] is not self.sim:
            kept = self._answerers = (self.sim, self._answerers_now())
        above, j, port, per_client, transit = kept[1][t]
        if above is not None:
            sent = above._answer_for(j, port, key)
        else:
            sent = now if per_client is None else per_client(key)
        return None if sent is None else max(sent, now) + transit + after

    _answerers: tuple = (None, [])  # (simulator, _answerers_now()), built at its first question

    def _answerers_now(self) -> list:
        """Per target (the wiring is fixed once the run starts), whom :meth:`_oldest_answer_ps`
        asks about a request sent there and no longer on its way back: ``(node, its requester
        index of our link, its answer port towards us, None, transit back)`` for a node above,
        ``(None, None, None, the memory's earliest_answer_ps or None, transit back)`` for
        anything else (None: not connected)."""
        answerers: list = []
        for port in self.from_targets:
            back = port.channel
            if back is None:
                answerers.append(None)
            elif isinstance(back.src_owner, MemoryTreeBounds):
                target = back.src_owner
                answerers.append((target, target._answer_index[back.src], back.src, None, _transit_ps(back)))
            else:
                answerers.append((None, None, None, getattr(back.src_owner, "earliest_answer_ps", None),
                                  _transit_ps(back)))
        return answerers

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
