"""Conservative lookahead over the connection graph (the Chandy-Misra-Bryant rule).

A model that computes several of its cycles at once (a compiled loop) may run ahead up to the
earliest time anything from outside can reach it. That time comes from the wiring, as in SST's
partitioned runs, never from "is anyone else awake": a busy memory next door, or a thousand
other clusters, matter only through the channels that lead to the model.

The earliest time a message can arrive on a channel is the earliest time its sender can send
plus the channel's latency, where

* a sender can send on its own (from the state it already holds) no earlier than
  :meth:`Component.earliest_send_ps` says: by default its next tick (its next edge while
  awake, its earliest requested wake-up while asleep, never while asleep with nothing
  requested); a model may declare a later bound (a memory holding no request cannot answer
  before one arrives);
* a message arriving at time ``a`` on input ``inp`` lets its receiver send on output ``out``
  no earlier than ``a + reaction_ps(inp, out)`` (by default at that edge itself; never when
  the receiver says None, its declared earliest send already counting what comes that way;
  the receiver lists the outputs that may react in :meth:`Component.reactions`),
  and lets it take the message at ``a``, which returns a credit that wakes the sender at its
  next edge if the sender is blocked on that channel now (a sender that is not blocked sends
  again only after something else activates it, and that activation is counted on its own);
  woken so, it may send on all its outputs, or only on that channel when it declares
  ``Component.sends_hold_through_credits`` (its other bounds do not depend on credits);
* messages already in flight arrive when the channel says (a message waiting since before
  now is taken from now), unless their receiver's declared earliest send already counts
  them (``Component.bounds_inputs_in_flight``).

The earliest arrival over every channel is a shortest-path problem with non-negative delays,
seeded by the senders' own earliest sends and the messages in flight, and searched as A*:
:meth:`ConnectionGraph.remaining` bounds the time from each channel to the asker by the least
reactions (:meth:`Component.least_reaction_ps`) and link latencies on the way, once per
asker; the search takes arrivals in the order of the soonest each can lead to the asker, and
leaves out one from which nothing can reach the asker before the soonest arrival found so far
(or the caller's limit), so a question about one cluster on a mesh does not follow every
other cluster's requests to the memories and back. A sender that declares its
sends is asked about an output only once the search comes to the soonest a message sent on it
now could arrive: one whose answer could not beat the horizon found by then is never asked
(a memory's question meets every node of a tree above it, whose bounds walk the tree again,
and is mostly answered by a piece waiting for it). The model
computing ahead is left out as a sender: by the protocol it sends nothing during a batch, so
its own earlier messages reach others only as messages in flight. Credits returning to its
own outputs are left out too: they matter only to a send.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .channel import Channel
    from .component import Component
    from .simulator import Simulator

_FOREVER = 1 << 62


class QuestionBackoff:
    """When to ask the lookahead again, for a model whose answers keep coming back too short
    to use: a question walks the wiring, so after a useless answer the model skips 1, then 2,
    4 ... up to ``most`` chances to ask (not running ahead is always right), and a useful
    answer resets it. The models that compute ahead (a Snitch cluster, a DRAM controller)
    keep one each."""

    __slots__ = ("most", "skip", "backoff")

    def __init__(self, most: int = 64):
        self.most = most
        self.skip = 0  # chances still to pass
        self.backoff = 0  # how many the last useless answer set

    def should_ask(self) -> bool:
        """Whether to ask now (else one chance passes)."""
        if self.skip:
            self.skip -= 1
            return False
        return True

    def reset(self) -> None:
        """What the answers depend on changed (the model took a response or sent a request):
        ask at the next chance, and start backing off afresh."""
        self.skip = self.backoff = 0

    def answered(self, useful: bool) -> None:
        """The answer was long enough to use, or not."""
        if useful:
            self.backoff = 0
        else:
            self.backoff = min(self.most, 2 * self.backoff or 1)
            self.skip = self.backoff


class KeptHorizon:
    """A horizon a question found, kept for the asker's later batches (a model computing
    ahead: a Snitch cluster): nothing reaches the asker before it for as long as the asker
    sends nothing (the question assumed it sends nothing) and time has not reached it (the
    first arrival since the question comes no sooner). A later batch that must end before
    it anyway (the cluster's DMA waiting for its port) then needs no question. A fresh
    question might reach further, but not past a batch's end that comes sooner."""

    __slots__ = ("until_ps", "sends")

    def __init__(self) -> None:
        self.until_ps = -1  # nothing kept
        self.sends = 0

    @staticmethod
    def _sends(comp: Component) -> int:
        return sum(channel.sent for channel in comp._out_channels)

    def keep(self, comp: Component, until_ps: int) -> None:
        """Keep the answer of a question about ``comp`` just asked (``until_ps``; the
        question's limit when it found nothing before that)."""
        self.until_ps = until_ps
        self.sends = self._sends(comp)

    def forget(self) -> None:
        """Drop what is kept (the asker changed what the question assumed about it)."""
        self.until_ps = -1

    def holds_through(self, comp: Component, at_ps: int) -> bool:
        """Whether what is kept shows that nothing reaches ``comp`` before ``at_ps``."""
        return at_ps <= self.until_ps and comp.sim.now < self.until_ps and self._sends(comp) == self.sends


class ConnectionGraph:
    """The wiring as the lookahead reads it, built once per simulator: for each component
    asked about, the components whose activity can reach it (over channels either way:
    messages one way, credits the other), so a run of many separate systems (clusters with
    memories of their own) looks at one system per question."""

    def __init__(self, sim: Simulator):
        self.sim = sim
        self.questions = 0
        """Questions asked so far (:func:`earliest_arrival_ps` calls that walked the graph),
        for benchmarks that count what a run's lookahead costs."""
        self._reach: dict = {}
        self._remaining: dict = {}
        self._into: dict | None = None  # see _causes
        self._plans: dict = {}
        self._senders: dict = {}
        self._reaching: dict = {}
        self._waking: dict = {}
        # (sender phase, sender period, receiver phase, receiver period, latency - 1 receiver
        # periods, number) per channel, for the arrival times of the hot loop below (the
        # number breaks ties in its heap, channels being unordered).
        self.timing = {ch: (ch.src_owner.domain.phase_ps, ch.src_owner.domain.period_ps, ch.dst_domain.phase_ps,
                            ch.dst_domain.period_ps, ch.tail_delay, number)
                       for number, ch in enumerate(sim.channels)}

    def reach(self, comp: Component) -> tuple:
        """The components (other than ``comp``) that can influence ``comp`` by sending, and
        the channels among those that can: connected to ``comp`` by channels, in either
        direction."""
        cached = self._reach.get(comp)
        if cached is None:
            seen = {comp}
            frontier = [comp]
            while frontier:
                node = frontier.pop()
                for channel in node._in_channels + node._out_channels:
                    for other in (channel.src_owner, channel.dst_owner):
                        if other not in seen:
                            seen.add(other)
                            frontier.append(other)
            # (a component without outputs sends nothing: only the senders are kept)
            others = [c for c in self.sim.components if c in seen and c is not comp and c._out_channels]
            channels = [ch for ch in self.sim.channels if ch.src_owner in seen and ch.dst_owner in seen]
            cached = self._reach[comp] = (others, channels)
        return cached

    def remaining(self, comp: Component) -> dict:
        """Per channel, a lower bound on the time from a message arriving on it to anything
        it can lead to arriving on one of ``comp``'s inputs (channels from which nothing can
        reach ``comp`` are absent): the least reactions (:meth:`Component.least_reaction_ps`)
        and link latencies on the way, a returning credit counted as waking its sender at
        once. A search for ``comp``'s horizon takes arrivals in the order of their time plus
        this (it never shrinks along a path: the least reaction and latency of each step), and
        drops one whose time plus this is past the best horizon found so far: nothing it
        leads to can come sooner. Built at the first
        question (every model has started by then) from the wiring alone, and kept."""
        cached = self._remaining.get(comp)
        if cached is not None:
            return cached
        into = self._into
        if into is None:
            into = self._into = self._causes()
        timing = self.timing
        cached = {channel: 0 for channel in comp._in_channels}
        heap = [(0, timing[channel][5], channel) for channel in comp._in_channels]
        while heap:
            left, _, out = heapq.heappop(heap)
            if left > cached[out]:
                continue
            # the least time from a send on out to its arrival
            left += out.delay if out.same_domain else out.tail_delay
            for channel, reaction, by in into.get(out, ()):
                if by is comp:
                    continue  # (comp reacts to nothing, nor is woken by credits: it sends nothing)
                sooner = left + reaction
                if sooner < cached.get(channel, _FOREVER):
                    cached[channel] = sooner
                    heapq.heappush(heap, (sooner, timing[channel][5], channel))
        self._remaining[comp] = cached
        return cached

    def _causes(self) -> dict:
        """For :meth:`remaining`, from the wiring alone and once for every asker: per output
        channel, ``(channel, least, by)`` for each channel whose arrival may cause a send on
        it no sooner than ``least`` later: its receiver ``by`` reacting
        (:meth:`Component.least_reaction_ps`), or its taking waking its blocked sender ``by``
        (0). An asker leaves out those ``by`` itself: it sends nothing while it asks."""
        into: dict = {}
        for channel in self.sim.channels:
            receiver, sender = channel.dst_owner, channel.src_owner
            for out in receiver._out_channels:
                reaction = receiver.least_reaction_ps(channel.dst, out.src)
                if reaction is not None:
                    into.setdefault(out, []).append((channel, reaction, receiver))
            # taking a message from the channel may wake its blocked sender
            for out in ((channel,) if sender.sends_hold_through_credits else sender._out_channels):
                into.setdefault(out, []).append((channel, 0, sender))
        return into

    def reaching(self, comp: Component) -> list:
        """The channels of :meth:`reach` from which something can reach ``comp``
        (:meth:`remaining` holds them), in the simulator's channel order: the only ones
        whose messages in flight a question about ``comp`` looks at."""
        cached = self._reaching.get(comp)
        if cached is None:
            remaining = self.remaining(comp)
            cached = self._reaching[comp] = [ch for ch in self.reach(comp)[1] if ch in remaining]
        return cached

    def waking(self, comp: Component) -> frozenset:
        """The channels whose returning credit can lead to something reaching ``comp``: their
        sender (not ``comp``) may then send on an output :meth:`remaining` holds (on that
        channel only, when it declares ``sends_hold_through_credits``). A question looks at
        the credits freed at its time point on these alone: a mesh frees many every edge."""
        cached = self._waking.get(comp)
        if cached is None:
            remaining = self.remaining(comp)
            cached = self._waking[comp] = frozenset(
                ch for ch in self.reach(comp)[1] if ch.src_owner is not comp and (
                    ch in remaining if ch.src_owner.sends_hold_through_credits
                    else any(out in remaining for out in ch.src_owner._out_channels)))
        return cached

    def senders(self, comp: Component) -> list:
        """The senders that can reach ``comp`` as ``(sender, least, outputs)``: each output
        channel from which something can reach ``comp`` with the least time from a send on
        it to that arrival (``least``: the smallest of them), so a search skips a sender or
        an output that cannot send in time without asking it."""
        cached = self._senders.get(comp)
        if cached is None:
            remaining = self.remaining(comp)
            cached = []
            for other in self.reach(comp)[0]:
                outs = [(channel, (channel.delay if channel.same_domain else channel.tail_delay) + remaining[channel])
                        for channel in other._out_channels if channel in remaining]
                if outs:
                    cached.append((other, min(least for _, least in outs), outs))
            self._senders[comp] = cached
        return cached


    def plan(self, comp: Component) -> tuple:
        """What a question about ``comp`` walks, in one lookup (a cluster asks every few
        dozen cycles): :meth:`remaining`, :meth:`reaching`, the outputs of the senders that
        declare their sends (:meth:`asks`), the other :meth:`senders`, and the channels of
        :meth:`waking` in the simulator's channel order."""
        cached = self._plans.get(comp)
        if cached is None:
            waking = self.waking(comp)
            cached = self._plans[comp] = (
                self.remaining(comp), self.reaching(comp), self.asks(comp),
                [entry for entry in self.senders(comp) if not entry[0]._declares_sends],
                tuple(ch for ch in self.reach(comp)[1] if ch in waking))
        return cached

    def asks(self, comp: Component) -> list:
        """The outputs of :meth:`senders` that declare their sends, as ``(least, left, number,
        channel)``: the least time from a send on the channel to an arrival at ``comp`` it
        leads to, the part of it after the channel (:meth:`remaining`), and the channel's
        number (:attr:`timing`); least first (those nearer ``comp`` first among equals): the
        order a question asks them in, each only once the search comes to the soonest a
        send on it now could lead to comp."""
        remaining = self.remaining(comp)
        return sorted((floor, remaining[channel], self.timing[channel][5], channel)
                      for other, _, outs in self.senders(comp) if other._declares_sends for channel, floor in outs)


def arrival_in_flight_ps(sim: Simulator, comp: Component) -> int | None:
    """The earliest time a message can arrive on one of ``comp``'s inputs when every one of
    them holds a message on its way (None when one holds none, or ``comp`` has no input):
    a channel delivers in the order it was sent, so nothing can reach ``comp`` before the
    soonest of those messages (a message waiting since before now counts from now). Exact
    and cheap: no sender is asked."""
    soonest = None
    for channel in comp._in_channels:
        flight = channel.flight
        if not flight:
            return None
        head = flight[0][0]
        if soonest is None or head < soonest:
            soonest = head
    if soonest is None:
        return None
    return soonest if soonest > sim.now else sim.now


def earliest_arrival_ps(sim: Simulator, comp: Component, within_ps: int | None = None) -> int | None:
    """The earliest time a message can arrive on one of ``comp``'s inputs (None: never, as
    things stand): see the module docstring. With ``within_ps`` the search stops there: any
    time at or after it comes back as None (a caller that cannot use a later horizon)."""
    if not comp._in_channels:
        return None
    now = sim.now
    held = arrival_in_flight_ps(sim, comp)
    if held is not None:
        return held if within_ps is None or held < within_ps else None
    wake_times = None  # built when a sleeping sender that declares no sends is first met
    best: dict = {}  # channel -> earliest arrival found so far
    heap: list = []
    graph = sim.connection_graph
    graph.questions += 1
    timing = graph.timing
    heappush = heapq.heappush
    # Arrivals at or after the earliest one already offered on comp's own inputs cannot make
    # it earlier (delays only add), nor can anything beyond within_ps: they are not explored,
    # nor is an arrival from which nothing can reach comp before them (graph.remaining).
    cap = within_ps if within_ps is not None else _FOREVER
    remaining, reaching, asks, undeclared, waking = graph.plan(comp)

    def reach(channel: Channel, send_ps: int, beats: int = 1) -> None:
        # A message sent on channel at send_ps at the soonest arrives at the sender's edge at
        # or after send_ps, plus its beats but the first (a wider message arrives later), then
        # the receiver's first edge strictly after it, then latency - 1 more receiver edges;
        # the soonest is kept.
        nonlocal cap
        src_phase, src_period, dst_phase, dst_period, tail, number = timing[channel]
        k = -((src_phase - send_ps) // src_period)
        send = src_phase + (k if k > 0 else 0) * src_period + (beats - 1) * src_period
        k = -((dst_phase - send - 1) // dst_period)
        time_ps = dst_phase + (k if k > 0 else 0) * dst_period + tail
        soonest = time_ps + remaining.get(channel, _FOREVER)
        if soonest >= cap:
            return
        known = best.get(channel)
        if known is None or time_ps < known:
            best[channel] = time_ps
            heappush(heap, (soonest, number, time_ps, channel))
            if channel.dst_owner is comp:
                cap = time_ps

    def offer(channel: Channel, time_ps: int) -> None:
        # a message already on its way, arriving at time_ps
        nonlocal cap
        soonest = time_ps + remaining.get(channel, _FOREVER)
        if soonest >= cap:
            return
        known = best.get(channel)
        if known is None or time_ps < known:
            best[channel] = time_ps
            heappush(heap, (soonest, timing[channel][5], time_ps, channel))
            if channel.dst_owner is comp:
                cap = time_ps

    def credit_frees(channel: Channel, taken_ps: int) -> None:
        # the receiver takes a message at taken_ps: a sender blocked on the channel is
        # woken at its next edge by the returning credit (and, if its declared sends hold
        # whatever credits return, sends sooner only on that channel)
        sender = channel.src_owner
        if sender is not comp and channel.blocked:
            woken = sender.domain.edge_after(taken_ps)
            if sender.sends_hold_through_credits:
                reach(channel, woken)
            else:
                for out in sender._out_channels:
                    reach(out, woken)

    # (a channel absent from remaining leads to nothing that can reach comp, by its arrival
    # or by the credit its taking returns: its messages need no look)
    for channel in reaching:
        if channel.flight:
            # nobody acts in the past: a message waiting since before now is taken from now
            head = max(channel.flight[0][0], now)
            receiver = channel.dst_owner
            if receiver is not comp and receiver.bounds_inputs_in_flight:
                credit_frees(channel, head)
            else:
                offer(channel, head)
    for other, least, outs in undeclared:
        if now + least >= cap:
            continue  # nothing it sends can reach comp in time
        if other._awake:
            send = now
        else:
            if wake_times is None:
                # (not before: a question on a network of memories and clusters meets only
                # senders that declare their sends, and the table is rebuilt whenever a
                # wake-up is asked, many times per time point)
                wake_times = sim._wake_table()
            wakes = wake_times.get(other)
            if wakes is None or wakes + least >= cap:
                continue
            send = wakes
        for channel, _ in outs:
            reach(channel, send)
    # Credits freed at this time point reach their senders at the senders' next edges (only
    # those whose senders can then send towards comp: graph.waking). A channel holds the
    # credits its receiver freed at this time point until the commit (``returning``): its
    # own look costs less than going through every channel that freed one (a package frees
    # many per edge, and a cluster's question can be woken through one channel).
    for channel in waking:
        if channel.returning:
            credit_frees(channel, now)

    # A* (Dijkstra guided by graph.remaining, a lower bound on the time from each channel to
    # comp that never shrinks along a path): the heap pops arrivals by the soonest each can
    # lead to an arrival at comp, so the first of comp's inputs popped is the soonest; an
    # entry whose time is no longer the best known for its channel is stale, and the first
    # entry popped for a channel settles it. A declared send is asked before anything that
    # could lead to comp later than a send on it now could is popped: any arrival it leads
    # to is then in the heap in time.
    heappop = heapq.heappop
    asked, unasked = 0, len(asks)
    while True:
        if asked < unasked and (not heap or now + asks[asked][0] < heap[0][0]):
            soonest, _, _, channel = asks[asked]
            asked += 1
            if now + soonest >= cap:
                asked = unasked  # (nor can any later one: a sooner arrival at comp is known)
            else:
                sender = channel.src_owner
                send = sender.earliest_send_ps(channel.src)
                if send is not None:
                    width = channel.width_bits
                    bits = sender.least_message_bits(channel.src) if width else 0
                    reach(channel, send if send > now else now, -(-bits // width) if width and bits > width else 1)
            continue
        if not heap:
            return None
        soonest, _, time_ps, channel = heappop(heap)
        if best[channel] != time_ps:
            continue
        best[channel] = -1  # settled
        receiver = channel.dst_owner
        if receiver is comp:
            return time_ps  # the first of comp's inputs to be reached
        if soonest >= cap:
            continue  # (an arrival at comp offered since is sooner than anything this leads to)
        for out, reaction in receiver.reactions(channel.dst):
            reach(out, time_ps + reaction)
        credit_frees(channel, time_ps)
