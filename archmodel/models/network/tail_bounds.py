"""The tails of the packets a network engine carries (a mixin of
:class:`~.engine.NocEngine`, under :class:`~.engine_bounds.MemoryPortBounds`): the soonest a
packet's tail can reach its destination terminal from where its flits are, each flit at its
least time with one cycle per flit behind it, and between routers the credits of a link's
buffer: a buffer's depth of flits per credit round trip at the most.
"""

from __future__ import annotations

import networkx as nx


class PacketTailBounds:
    """The tail terms of the lookahead on the memory ports (see the module docstring): the
    engine provides ``parent`` (the Noc), ``period``, its routers' reports and the timing
    wheels; :meth:`_plan_tails` runs at its start."""

    def _plan_tails(self) -> None:
        """The least cycles from a flit leaving each router to its arrival at each router's
        terminals, for heads (every stage at every router) and other flits (switch
        allocation and traversal only, their head having routed and allocated), and the
        credits' terms of :meth:`_tail_ps`."""
        noc = self.parent
        pm = noc.port_map
        model = noc.routers[0]
        self.body_stages = model.sw_alloc_delay + model.st_delay
        self.head_stages = model.routing_delay + model.vc_alloc_delay + self.body_stages
        self.reach = {}
        for head, stages in ((True, self.head_stages), (False, self.body_stages)):
            for r in pm.routers:
                lengths = nx.single_source_dijkstra_path_length(
                    noc.graph, r, weight=lambda u, v, _, st=stages: pm.latency(u, v) + st)
                self.reach[head, r] = {g: cycles + noc.ejection_latency for g, cycles in lengths.items()}
        # (see _tail_ps) a flit wins the switch into a link no sooner than the credit of the
        # flit a buffer's depth ahead of it there (on its VC, which the packet holds on that
        # link) came back: that flit went through switch allocation and traversal, crossed
        # the link, won the switch downstream no sooner than it arrived, and its credit left
        # with that switch allocation, crossed the link back and was processed credit_delay
        # later: the round trip, the least link's latency both ways and those stages
        links = [pm.latency(a, b) for a, b in noc.graph.edges]
        self.credit_depth = model.buffer_depth
        self.credit_cycles = (2 * min(links) + model.credit_delay + self.body_stages + model.sw_alloc_delay
                              if links else 0)
        self.terminal_router = pm.terminal_router
        # (see _queue_starts) from a flit winning the switch of its source router to its
        # credit reaching the interface that sent it: the credit leaves with switch
        # allocation, over the link out to the terminal
        self.credit_back = model.sw_alloc_delay + noc.ejection_latency
        # per router and input port, whether a router's link comes in there (network_tails)
        self.router_inputs = [[u is not None for u in pm.neighbour[v]] for v in pm.routers]

    def network_tails(self, now: int):
        """Per packet with flits in the routers or on the links, the soonest its tail can
        arrive at its destination terminal, as ``(packet, time in ps)`` pairs: each flit
        offers its packet's tail at its least arrival plus one cycle per flit behind it; the
        flits yet to cross a link into the destination's router (in another router, or on a
        link from a router) also count the credits of those behind over it
        (:meth:`_credit_excess`, for the rearmost of them, the fewest behind). Each flit
        bounds the tail: the later of the least over those and over the others counts."""
        noc = self.parent
        pm = noc.port_map
        period = self.period
        # (the soonest of a packet's flits is offered once: per flit, the packet's ports and
        # answers would be looked up again and again)
        soonest: dict = {}  # packet -> the soonest its tail can arrive, over its flits past the last link
        ahead: dict = {}  # packet -> (the same over its flits yet to cross it, their greatest index)
        reach = self.reach
        terminal_router = pm.terminal_router

        def offer_ahead(packet, at: int, index: int) -> None:
            known = ahead.get(packet)
            if known is None:
                ahead[packet] = (at, index)
            elif at < known[0] or index > known[1]:
                ahead[packet] = (at if at < known[0] else known[0], index if index > known[1] else known[1])

        for r, router in enumerate(noc.routers):
            if router.outbox or router.buffered:  # else it holds no flit to report
                # a flit leaves router r at `leave`; the tail follows one cycle per flit
                # behind it: leave - index * period is the flit's lead (per packet, the least)
                for (packet, head), (lead, index) in router.packet_leads(now).items():
                    g = terminal_router[packet.dest]
                    at = lead + (reach[head, r][g] + packet.size - 1) * period
                    if g != r:
                        offer_ahead(packet, at, index)
                    elif soonest.get(packet, at) >= at:
                        soonest[packet] = at
        head_ps, body_ps = self.head_stages * period, self.body_stages * period
        router_inputs = self.router_inputs
        for arrival, words in self.r_wheel.items():
            for r, p, flit, _ in words:
                if flit is not None:
                    packet = flit.packet
                    g = terminal_router[packet.dest]
                    at = (arrival + (head_ps if flit.head else body_ps)
                          + (reach[flit.head, r][g] + packet.size - 1 - flit.index) * period)
                    if g != r or router_inputs[r][p]:
                        offer_ahead(packet, at, flit.index)
                    elif soonest.get(packet, at) >= at:
                        soonest[packet] = at
        for arrival, words in self.n_wheel.items():
            for _, (flit, _) in words:
                if flit is not None:
                    packet = flit.packet
                    at = arrival + (packet.size - 1 - flit.index) * period
                    if soonest.get(packet, at) >= at:
                        soonest[packet] = at
        excess = self._credit_excess
        for packet, (at, index) in ahead.items():
            at += excess(packet.size - 1 - index) * period
            if soonest.get(packet, at) <= at:
                soonest[packet] = at
        return soonest.items()

    def _credit_excess(self, behind: int) -> int:
        """The cycles more than one a flit that the ``behind`` flits following a flit yet to
        cross the last link into its destination's router take to cross it: every
        ``buffer_depth`` of them wait a credit round trip (see :meth:`_tail_ps`); 0 when the
        credits keep up (a round trip of no more than ``buffer_depth`` cycles). The same
        behind the head as behind any other flit: the routing and VC allocation the head
        takes in the destination's router and its tail skips delay the head's credit, the
        first the flits a buffer's depth behind it wait for, by as much as its arrival."""
        extra = (behind // self.credit_depth) * (self.credit_cycles - self.credit_depth)
        return extra if extra > 0 else 0

    def _tail_ps(self, u: int, t: int, flits: int) -> int:
        """The least time from the soonest arrival at terminal t of the head of a packet of
        ``flits`` flits from terminal u (as one flit: :meth:`Noc.min_latency`) to its tail's.
        The flits follow one a cycle at the most; and between routers, on the last link of
        any route (into t's router), a flit reaches the input buffer there no sooner than
        the credit of the flit ``buffer_depth`` ahead of it came back (the link's latency
        both ways, the least of any link, switch allocation and traversal upstream, switch
        allocation downstream and the upstream router's credit_delay), so every
        ``buffer_depth`` flits take that round trip at the least; the tail then needs
        switch allocation and traversal only, not the head's routing and VC allocation,
        but those delay the head's credit, the first the flits behind it wait for, as much
        (:meth:`_credit_excess`). With links of 8 cycles and buffers of 4 flits (a round trip of 19 cycles) a 1 KiB
        response (16 flits of 512 bits) has its tail 60 cycles behind its head at the least
        over a link, not 15 (51 with the round trip as the links both ways alone)."""
        behind = flits - 1
        if self.terminal_router[u] == self.terminal_router[t]:
            return behind * self.period
        return (behind + self._credit_excess(behind)) * self.period

    def _queue_starts(self, ni, now: int):
        """Per packet waiting at interface ``ni``, in its queue's order, the soonest (ps) its
        head can be sent: the interface sends one packet at a time, one flit an edge at the
        most, so not before the flits ahead of it (the rest of the packet being sent, then
        those waiting before it) have gone, one an edge from ``now`` on, nor before the
        edge after the tail of the one being sent (:meth:`_sending_tail_ps`). A DRAM
        channel's interface sending a 1 KiB response over links of 8 cycles waits for
        credits, and the response queued behind it starts that much later at the least."""
        if not ni.queue:
            return ()
        period = self.period
        start = now + self._flits_to_send(ni) * period
        if ni.sending is not None:
            sent = self._sending_tail_ps(ni, now)
            if sent + period > start:
                start = sent + period
        starts = []
        for packet in ni.queue:
            starts.append((packet, start))
            start += packet.size * period
        return starts

    def _sending_tail_ps(self, ni, now: int) -> int:
        """The soonest (ps) interface ``ni`` can send the tail of the packet it is sending,
        from the credits of its flits not yet through the switch of its router (in the
        router's input buffer, on the link there, or still to send: the i0-th on). With
        ``D`` the buffers' depth, flit i goes through the switch at y_i, no sooner than the
        credit of flit i - D over the link out came back (those D flits hold the buffer
        downstream on the packet's VC, whose credits come back in order): y_i >= y_(i-D) +
        the credit round trip (:meth:`_credit_excess`'s), and one a cycle, from ``now``
        on; and the interface sends flit i on the credit of flit i - D in the router's
        input buffer, back ``credit_back`` cycles after y_(i-D). A packet for a terminal of
        the same router crosses no link between routers: its tail one a cycle. With links
        of 8 cycles and buffers of 4 flits, a 1 KiB response with 6 flits to send and 4 in
        its router's buffer sends its tail 22 cycles on at the soonest, not 5."""
        packet = ni.sending
        period = self.period
        left = self._flits_to_send(ni)
        soonest = now + (left - 1) * period
        if self.terminal_router[ni.terminal] == self.terminal_router[packet.dest]:
            return soonest
        depth, trip = self.credit_depth, self.credit_cycles
        first = packet.size - left - self._flits_entering(ni)  # i0
        k = packet.size - 1 - depth - first  # the tail goes on the credit of flit i0 + k
        if k < 0:
            return soonest
        through = k if trip < depth else (k // depth) * trip + k % depth
        at = now + (through + self.credit_back) * period
        return at if at > soonest else soonest

    def _flits_to_send(self, ni) -> int:
        """The flits of the packet interface ``ni`` is sending not sent yet (0: none)."""
        packet = ni.sending
        return 0 if packet is None else packet.size - ni.send_index

    def _flits_entering(self, ni) -> int:
        """The flits of the packet interface ``ni`` is sending on the link into its router
        or in the router's input buffer (not through its switch yet)."""
        packet = ni.sending
        r, p = self.injection[ni.terminal]
        router = self.parent.routers[r]
        entering = sum(1 for flit in router.buf[p * router.vcs + ni.send_vc] if flit.packet is packet)
        for words in self.r_wheel.values():
            for at_router, port, flit, _ in words:
                if flit is not None and flit.packet is packet and at_router == r and port == p:
                    entering += 1
        return entering
