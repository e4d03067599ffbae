"""What a :class:`~.router.NocRouter` tells the kernel about itself (a mixin of the router,
which holds the state): the bounds of the conservative lookahead (``earliest_send_ps`` per
output, ``reaction_ps`` per input and output, from each held flit's place in the pipeline),
and for the deadlock watchdog what it holds and whom it waits on."""

from __future__ import annotations

from archmodel.kernel import Component


class RouterReports:
    """The router's lookahead bounds and deadlock reports (see the module docstring)."""

    # -- lookahead (archmodel.kernel.lookahead) --------------------------------------------
    # Every link word a router sends is charged to one flit: the flit it carries, or the one
    # whose freed buffer slot its credit reports. A flit held now bounds its words by its place
    # in the pipeline (departures); a flit that arrives later bounds them by its arrival plus
    # the pipeline it still has to pass (reaction_ps). A returning credit is never the cause
    # of a word: what it unblocks is charged to the unblocked flit, whose bound ignores
    # blocking. So the bounds hold whatever the allocators and credits do.

    def departures(self, now: int) -> list:
        """Every flit this router holds, as ``(flit, ports, leave_ps, in_port, credit_ps)``: the
        output ports it may leave on (None: any, for a packet queued behind another, not routed
        yet), the soonest time it can go on that link, and for a flit still in the buffer of
        input ``in_port`` the soonest its credit can go back on output ``in_port`` (both None
        once it has left its buffer). From the pipeline alone (routing, VC
        and switch allocation, traversal), as though no flit competed and every credit were
        there, so never later than the truth."""
        held = []
        period = self.period
        for when, words in self.outbox.items():
            for o, (flit, _) in words.items():
                if flit is not None:
                    held.append((flit, (o,), when, None, None))
        if not self.buffered:
            return held
        head_wait = self.va_ready_delay  # from winning an output VC to asking for the switch
        for ivc, q in enumerate(self.buf):
            if not q:
                continue
            p = self.port_of[ivc]
            ready = max(self.ivc_ready[ivc], now)
            ovc = self.ivc_out[ivc]
            if ovc >= 0:
                switch, ports = ready, (self.out_port_of[ovc],)
            else:
                switch, ports = ready + head_wait, tuple(port for port, _, _ in self.ivc_route[ivc])
            for k, flit in enumerate(q):
                if k:
                    switch += period  # one flit per VC per cycle
                    if flit.head:  # routed when it reaches the front, the cycle after the tail left
                        switch = max(switch, flit.arrived_ps + self.rc_delay) + head_wait
                        ports = None
                held.append((flit, ports, switch + self.st_total, p, switch + self.credit_after[p]))
        return held

    def packet_leads(self, now: int) -> dict:
        """Per ``(packet, head)`` of the flits this router holds, ``(lead, index)``: the least
        ``leave_ps - index * period`` over those flits (``leave_ps`` as :meth:`departures`
        gives it, ``index`` the flit's place in its packet) and the greatest index: what the
        network engine's lookahead needs to bound each packet's tail, ``leave_ps + (cycles to
        go + flits behind) * period`` (and the credits the flits behind the rearmost still
        need), worked out per packet instead of per flit. A packet's body flits following
        each other in a buffer share one lead (each leaves a cycle after the one before), so
        a run of them is compared once, at its end (its greatest index)."""
        leads: dict = {}
        period = self.period
        for when, words in self.outbox.items():
            for flit, _ in words.values():
                if flit is not None:
                    self._merge_lead(leads, (flit.packet, flit.head), when - flit.index * period, flit.index)
        if not self.buffered:
            return leads
        head_wait = self.va_ready_delay
        st_total = self.st_total
        rc_delay = self.rc_delay
        ivc_ready, ivc_out = self.ivc_ready, self.ivc_out
        for ivc, q in enumerate(self.buf):
            if not q:
                continue
            ready = ivc_ready[ivc]
            if ready < now:
                ready = now
            switch = ready if ivc_out[ivc] >= 0 else ready + head_wait
            # the run being compared: its key, least lead and greatest index so far
            key, least, last = None, 0, 0
            first = True
            for flit in q:
                if first:
                    first = False
                else:
                    switch += period  # one flit per VC per cycle
                    if flit.head:  # routed when it reaches the front, the cycle after the tail left
                        routed = flit.arrived_ps + rc_delay
                        switch = (switch if switch > routed else routed) + head_wait
                index = flit.index
                lead = switch + st_total - index * period
                packet, head = flit.packet, flit.head
                if key is not None and key[0] is packet and key[1] == head:
                    if lead < least:
                        least = lead
                    last = index
                    continue
                if key is not None:
                    self._merge_lead(leads, key, least, last)
                key, least, last = (packet, head), lead, index
            self._merge_lead(leads, key, least, last)
        return leads

    @staticmethod
    def _merge_lead(leads: dict, key, lead: int, index: int) -> None:
        """Fold a run's least lead and greatest index into ``leads[key]``."""
        known = leads.get(key)
        if known is None:
            leads[key] = (lead, index)
        elif lead < known[0] or index > known[1]:
            leads[key] = (lead if lead < known[0] else known[0], index if index > known[1] else known[1])

    def earliest_send_ps(self, port) -> int | None:
        """The soonest link word on output ``port``: a flit held for it (or not routed yet),
        or the credit of a flit held in the input buffer of the same port number (see
        :meth:`departures`); None when it holds neither (only an arrival can make one)."""
        o = self.out_index[port]
        soonest = None
        for when, words in self.outbox.items():
            if o in words and (soonest is None or when < soonest):
                soonest = when
        if not self.buffered and soonest is None:
            return None
        for _, ports, leave, p, credit in self.departures(self.sim.now):
            if ports is None or o in ports:
                if soonest is None or leave < soonest:
                    soonest = leave
            if p == o and (soonest is None or credit < soonest):
                soonest = credit
        return soonest

    def reaction_ps(self, inp, out) -> int | None:
        """The soonest a flit arriving on ``inp`` makes a word on ``out``: its own flit word
        after switch allocation and traversal (plus routing and VC allocation for a head, which
        every flit on ``inp`` belongs to unless a packet already in progress there may take
        ``out``), or, when ``out`` has the same port number, its credit (see ``credit_after``;
        plus routing and VC allocation for a head). A credit arriving causes nothing of its
        own (see the comment above :meth:`departures`)."""
        p = self.in_index[inp]
        o = self.out_index[out]
        head = self.rc_delay + self.va_ready_delay
        flit = self.st_total + (0 if self._in_progress(p, o) else head)
        if o != p:
            return flit
        return min(flit, self.credit_after[p] + (0 if self._in_progress(p, None) else head))

    def reactions(self, inp) -> list:
        """:meth:`reaction_ps` for every connected output at once, from one look at the VCs
        of ``inp`` (the lookahead asks after every arrival it follows, once per output
        otherwise)."""
        p = self.in_index[inp]
        head = self.rc_delay + self.va_ready_delay
        flit_ps = self.st_total
        wild, ports, any_vc = self._ports_in_progress(p)
        credit_ps = self.credit_after[p] + (0 if any_vc else head)
        found = []
        for o, port in enumerate(self.out):
            channel = port.channel
            if channel is None:
                continue
            reaction = flit_ps if wild or o in ports else flit_ps + head
            if o == p and credit_ps < reaction:
                reaction = credit_ps
            found.append((channel, reaction))
        return found

    def _ports_in_progress(self, p: int) -> tuple:
        """The packets in progress on input port ``p`` (head arrived, tail not; see
        :meth:`_in_progress`): whether one may take any output (not routed yet, queued behind
        another), the outputs the others may take, and whether there is one at all."""
        v = self.vcs
        wild, ports, any_vc = False, set(), False
        for ivc in range(p * v, p * v + v):
            q = self.buf[ivc]
            ovc = self.ivc_out[ivc]
            if q:
                last = q[-1]
                if last.tail:
                    continue
                if last.packet is not q[0].packet:
                    wild = True
                elif ovc >= 0:
                    ports.add(self.out_port_of[ovc])
                else:
                    ports.update(port for port, _, _ in self.ivc_route[ivc])
            elif ovc >= 0:
                ports.add(self.out_port_of[ovc])
            else:
                continue
            any_vc = True
        return wild, ports, any_vc

    def _in_progress(self, p: int, o: int | None) -> bool:
        """Whether a VC of input port ``p`` has a packet whose head arrived and tail did not,
        that may leave on output ``o`` (None: on any): only such a packet's body flits skip
        routing and VC allocation."""
        wild, ports, any_vc = self._ports_in_progress(p)
        return any_vc if o is None else wild or o in ports

    # -- inspection -----------------------------------------------------------------------
    def holding(self) -> str | None:
        """Flits in the input buffers (for the kernel's deadlock watchdog)."""
        return f"{self.buffered} flits" if self.buffered else None

    def waiting_for(self) -> list[Component]:
        """The neighbours this router waits on: behind each output port that a buffered VC
        needs a credit from (it holds the output VC) or a free VC of (its head waits)."""
        v = self.vcs
        needed = set()
        for ivc, q in enumerate(self.buf):
            if not q:
                continue
            ovc = self.ivc_out[ivc]
            if ovc >= 0:
                if self.ovc_credits[ovc] == 0:
                    needed.add(ovc // v)
            elif self.ivc_route[ivc]:
                needed.update(port for port, _, _ in self.ivc_route[ivc])
        return [self.out[port].channel.dst_owner for port in sorted(needed) if self.out[port].connected]

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
                    fed = self.downstream[ovc // v] if self.downstream else self.out[ovc // v].channel.dst.path
                    edges.append((me, f"{fed}.vc{ovc % v}"))
            elif self.ivc_route[ivc]:
                for port, first, end in self.ivc_route[ivc]:
                    for w in range(first, end):
                        holder = self.ovc_owner[port * v + w]
                        if holder >= 0 and holder != ivc:
                            edges.append((me, f"{self.inp[holder // v].path}.vc{holder % v}"))
        return edges
