"""The numba edges of :class:`~.compiled_memory_engine.CompiledMemoryEngine`: a network carrying
memory traffic, below the message level, an edge (or a run of quiet edges and the next) per
``@njit`` call.

Per edge, in the order :meth:`NocEngine.tick <.engine.NocEngine.tick>` keeps: the words on
the wheel reach the routers (credits, flits: :func:`~.compiled_loop` ``router_arrival``) and
the interfaces (credits; flits ejected with the order checks of
:meth:`~.interface.NetworkInterface.step`, their credits back ``credit_delay`` edges on, a packet
delivered at its tail); then each interface starts its oldest queued packet on a free VC with a
credit and sends one flit while that VC has credits; then the routers allocate and traverse
(``step_routers``, the routers' code the synthetic loop runs). Packets are slots: their
destination, id (the routing's coin) and size in arrays, their flits ``slot | index <<
FLIT_SHIFT | TAIL`` on the last. What Python needs of the edge comes back as events (a packet
started, its tail sent, a packet delivered); the message level (making packets of requests and
responses, handing on the delivered) stays in Python. Only a packet delivered changes what
Python does at its edge; a packet started and a tail sent change what the lookahead reads,
which catches up first, and how many packets wait at an interface, which the engine brings up
to date before the interface takes a request (while fewer than two wait), so those come back
with later edges, each with its cycle (:func:`quiet_until` bounds the deliveries, and no call
spans more than ``QUIET_SPAN`` edges, so the events fit).

:func:`packet_tails` answers the lookahead from the same arrays: per packet slot the soonest
its tail can reach its destination, the value the fast engine's walk over its routers and
wheels gives (:meth:`~.engine_bounds.MemoryPortBounds._port_bounds`).
"""

from __future__ import annotations

from archmodel.kernel.compiled import jit

from .compiled_loop import (C_CR, C_DEPTH, C_INJ, C_P, C_PERIOD, C_PHASE, C_R, C_RC, C_ST, C_T, C_V, C_VA,
                            CREDIT_TO_ROUTER, CREDIT_TO_TERMINAL, FLIT_SHIFT, FLIT_TO_ROUTER, FLIT_TO_TERMINAL,
                            INDEX_MASK, PACKET_MASK, TAIL, arrivals, inject_flit, routers_due, schedule, start_packet,
                            step_routers)

# What an edge reports (its return value's bits).
MOVED = 1  # a link word moved (arrived, or an interface sent one)
WORKING = 2  # the next edge has work: words on the wheel, flits buffered, packets queued or being sent
FAILED = 4  # a model check failed (see the engine's message)
EVENTS_SHIFT = 3  # and above these bits, how many events it reports
# Events for Python: (kind, terminal, packet slot, cycle).
STARTED, TAIL_SENT, DELIVERED = range(3)
QUIET_SPAN = 64  # the most edges quiet_until lets pass without a call (their events fill the room)


@jit
def edge(cfg, first, last, quiet_to, events, nports, out_kind, out_target, out_tport, out_lat, route, vc_class,
         route_key, term_router, term_port, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo,
         ivc_hi, ovc_free, ovc_wait, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr, sa_vc_ptr,
         buffered, r_next, r_flits, r_packets, r_va_stalls, ni_credits, ni_busy, ni_wait, ni_vc_ptr, ni_send,
         ni_send_vc, ni_send_slot, ni_flits, ni_ejected, queue, q_head, q_count, arr_slot, arr_next, pk_dest, pk_id, pk_size,
         pk_from, ev_kind, ev_a, ev_b, ev_n, req, nreq, reqs, offer_to, wants, granted, winners, got, vtaken, in_match,
         out_taken, ejected):
    """Cycles ``first`` to ``last`` of the network (see the module docstring), their events
    in ``events[1:]`` in their order (kind, terminal, packet slot, cycle); those to
    ``quiet_to`` may have no packet delivered (:func:`quiet_until` said so: one there is
    FAILED, as is an event past the room of ``events``), and a queued packet starts no
    sooner than its ``pk_from`` cycle. Returns MOVED | WORKING | FAILED bits and the number
    of events << EVENTS_SHIFT."""
    P = cfg[C_P]
    V = cfg[C_V]
    T = cfg[C_T]
    W = ev_n.shape[0]
    Q = queue.shape[1]
    n_events = 0
    delivered = 0  # the events Python must see at their edge (see the module docstring)
    room = events.shape[0] - 1
    flags = 0
    R = cfg[C_R]
    for c in range(first, last + 1):
        m = 0
        if ev_n[c % W]:  # (a slot without words spares the call)
            flags |= MOVED
            m = arrivals(cfg, c, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port,
                         ivc_lo, ivc_hi, ovc_free, ovc_wait, ovc_credits, buffered, r_next, pk_dest, pk_id, route,
                         vc_class, route_key, ni_credits, ni_busy, ni_wait, ev_kind, ev_a, ev_b, ev_n, ejected)
            if m < 0:
                return FAILED
        for e in range(m):
            a = ejected[e, 0]
            b = ejected[e, 1]
            t = a // V
            w = a - t * V
            s = b & PACKET_MASK
            index = (b >> FLIT_SHIFT) & INDEX_MASK
            ni_ejected[t] += 1
            # The credit goes back with the interface's word credit_delay edges on.
            schedule(ev_kind, ev_a, ev_b, ev_n, (c + cfg[C_CR] + cfg[C_INJ]) % W, CREDIT_TO_ROUTER,
                     (term_router[t] * P + term_port[t]) * V + w, 0)
            if pk_dest[0, s] != t:
                return FAILED
            if index == 0:
                if arr_slot[t, w] >= 0:
                    return FAILED
            elif arr_slot[t, w] != s or arr_next[t, w] != index:
                return FAILED
            if not b & TAIL:
                arr_slot[t, w] = s
                arr_next[t, w] = index + 1
                continue
            arr_slot[t, w] = -1
            if n_events == room:
                return FAILED
            n_events += 1
            delivered += 1
            events[n_events, 0] = DELIVERED
            events[n_events, 1] = t
            events[n_events, 2] = s
            events[n_events, 3] = c
        # Interfaces: start the oldest queued packet on a free VC with a credit, then send its
        # next flit while that VC has a credit.
        for t in range(T):
            if (ni_send[t] < 0 and q_count[t] > 0 and pk_from[queue[t, q_head[t]]] <= c
                    and start_packet(t, V, ni_credits, ni_busy, ni_vc_ptr, ni_send, ni_send_vc)):
                s = queue[t, q_head[t]]
                q_head[t] = (q_head[t] + 1) % Q
                q_count[t] -= 1
                ni_send_slot[t] = s
                if n_events == room:
                    return FAILED
                n_events += 1
                events[n_events, 0] = STARTED
                events[n_events, 1] = t
                events[n_events, 2] = s
                events[n_events, 3] = c
            i = ni_send[t]
            if i >= 0 and ni_credits[t, ni_send_vc[t]] > 0:
                s = ni_send_slot[t]
                tail = i == pk_size[s] - 1
                inject_flit(cfg, c, t, (i << FLIT_SHIFT) | s, tail, ni_credits, ni_busy, ni_wait, ni_send,
                            ni_send_vc, ni_flits, term_router, term_port, ev_kind, ev_a, ev_b, ev_n)
                flags |= MOVED
                if tail:
                    if n_events == room:
                        return FAILED
                    n_events += 1
                    events[n_events, 0] = TAIL_SENT
                    events[n_events, 1] = t
                    events[n_events, 2] = s
                    events[n_events, 3] = c
        if routers_due(R, buffered, r_next, c):
            step_routers(cfg, c, nports, out_kind, out_target, out_tport, out_lat, route, vc_class, route_key,
                         buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo,
                         ivc_hi, ovc_free, ovc_wait, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr,
                         sa_vc_ptr, buffered, r_next, r_flits, r_packets, r_va_stalls, pk_dest, pk_id, ev_kind, ev_a,
                         ev_b, ev_n, req, nreq, reqs, offer_to, wants, granted, winners, got, vtaken, in_match,
                         out_taken)
        if delivered and c <= quiet_to:
            return FAILED
    flags |= n_events << EVENTS_SHIFT
    for x in range(W):
        if ev_n[x]:
            return flags | WORKING
    for r in range(cfg[C_R]):
        if buffered[r]:
            return flags | WORKING
    for t in range(T):
        if q_count[t] or ni_send[t] >= 0:
            return flags | WORKING
    return flags


@jit
def _offer(soonest, ahead, s, at, index, crossing):
    """Offer slot ``s``'s tail at ``at`` (ps) from its flit ``index``: in ``ahead`` (the
    least such time, the greatest index) when the flit is yet to cross the last link into
    its destination's router, else in ``soonest``."""
    if crossing:
        if ahead[0, s] < 0 or at < ahead[0, s]:
            ahead[0, s] = at
        if index > ahead[1, s]:
            ahead[1, s] = index
    elif soonest[s] < 0 or at < soonest[s]:
        soonest[s] = at


@jit
def packet_tails(cfg, now, last, soonest, ahead, credit, reach, in_lat, out_kind, out_target, term_router, buf_id,
                 buf_arr, buf_head, buf_count, ivc_state, ivc_ready, buffered, pk_dest, pk_size, ev_kind, ev_a, ev_b,
                 ev_n):
    """Per packet slot, the soonest (ps) its tail can reach its destination terminal from
    where its flits are (-1: none in the network) at time ``now``, the engine's last edge
    being cycle ``last``: each flit at its least time, ``reach[head, router, terminal]``
    cycles from leaving a router (every stage at every router for a head, switch
    allocation and traversal for the others), one cycle per flit behind it. A flit on the
    wheel whose link is not entered yet (``leave`` after the last edge) is where the fast
    engine keeps it, in the outbox of the router it leaves; a flit in a buffer leaves as
    :meth:`~.router_reports.RouterReports.packet_leads` says. The flits yet to cross a link
    into the destination's router (in another router, or on a link from a router) add the
    credits' excess for the flits behind the rearmost of them (``ahead``, a scratch array of
    2 x slots; ``credit``: buffer depth and credit round trip in cycles first), and the later
    of the least over those and over the others counts, as
    :meth:`~.tail_bounds.PacketTailBounds.network_tails` does. ``ahead[2]``: per slot, its
    flits on the link from their interface or in their router's input buffer from it
    (:meth:`~.tail_bounds.PacketTailBounds._flits_entering`)."""
    P = cfg[C_P]
    V = cfg[C_V]
    depth = cfg[C_DEPTH]
    period = cfg[C_PERIOD]
    phase = cfg[C_PHASE]
    st_total = cfg[C_ST] * period
    head_wait = cfg[C_VA] * period
    rc = cfg[C_RC] * period
    body_ps = st_total
    head_ps = rc + head_wait + st_total
    last_ps = phase + last * period
    W = ev_n.shape[0]
    for s in range(soonest.shape[0]):
        soonest[s] = -1
        ahead[0, s] = -1
        ahead[1, s] = -1
        ahead[2, s] = 0
    for x in range(W):
        d = (x - last) % W
        arrival = last_ps + d * period
        for e in range(ev_n[x]):
            kind = ev_kind[x, e]
            if kind == FLIT_TO_ROUTER:
                a = ev_a[x, e]
                b = ev_b[x, e]
                s = b & PACKET_MASK
                index = (b >> FLIT_SHIFT) & INDEX_MASK
                head = 1 if index == 0 else 0
                dest = pk_dest[0, s]
                v = a // (P * V)
                p = (a // V) % P
                if in_lat[v, p] == 0:  # on the link from its interface
                    ahead[2, s] += 1
                at = -1
                g = term_router[dest]
                if out_kind[v, p] == 1:
                    leave = arrival - in_lat[v, p] * period
                    if leave > last_ps:
                        u = out_target[v, p]
                        at = leave - index * period + (reach[head, u, dest] + pk_size[s] - 1) * period
                        _offer(soonest, ahead, s, at, index, u != g)
                if at < 0:
                    at = (arrival + (head_ps if head else body_ps)
                          + (reach[head, v, dest] + pk_size[s] - 1 - index) * period)
                    _offer(soonest, ahead, s, at, index, v != g or out_kind[v, p] == 1)
            elif kind == FLIT_TO_TERMINAL:
                b = ev_b[x, e]
                s = b & PACKET_MASK
                at = arrival + (pk_size[s] - 1 - ((b >> FLIT_SHIFT) & INDEX_MASK)) * period
                if soonest[s] < 0 or at < soonest[s]:
                    soonest[s] = at
    for r in range(buffered.shape[0]):
        if buffered[r] == 0:
            continue
        for g in range(r * P * V, (r + 1) * P * V):
            k = buf_count[g]
            if k == 0:
                continue
            ready = phase + ivc_ready[g] * period
            if ready < now:
                ready = now
            switch = ready if ivc_state[g] == 2 else ready + head_wait
            h = buf_head[g]
            entering = in_lat[r, (g // V) % P] == 0  # (a buffer of the input from a terminal)
            for j in range(k):
                pos = (h + j) % depth
                b = buf_id[g, pos]
                if entering:
                    ahead[2, b & PACKET_MASK] += 1
                index = (b >> FLIT_SHIFT) & INDEX_MASK
                if j:
                    switch += period  # one flit per VC per cycle
                    if index == 0:  # routed when it reaches the front, the cycle after the tail left
                        routed = phase + buf_arr[g, pos] * period + rc
                        switch = (switch if switch > routed else routed) + head_wait
                s = b & PACKET_MASK
                head = 1 if index == 0 else 0
                dest = pk_dest[0, s]
                at = (switch + st_total - index * period
                      + (reach[head, r, dest] + pk_size[s] - 1) * period)
                _offer(soonest, ahead, s, at, index, r != term_router[dest])
    for s in range(soonest.shape[0]):
        if ahead[0, s] < 0:
            continue
        at = ahead[0, s] + _credit_excess(pk_size[s] - 1 - ahead[1, s], credit) * period
        if at > soonest[s]:  # (-1: no flit past the last link)
            soonest[s] = at


@jit
def interface_tail(t, soon, last, credit, sent, ni_send, ni_send_vc, ni_send_slot, ni_credits, pk_size, ev_kind,
                    ev_a, ev_b, ev_n):
    """The soonest cycle interface ``t`` can send the tail of the packet it is sending, one
    flit a cycle from cycle ``soon``, each on a credit of its VC: those it holds, then those
    on the wheel (all sooner than any other), then one per flit now between it and its
    router's buffer (that flit leaving at ``soon`` at the soonest), then one per flit it sends
    itself, back a round trip after it (``credit[2]``: switch allocation and the link back;
    ``credit[3]``: the link in). Every credit's time is a lower bound, so the k-th to come
    back is no sooner than the k-th least of them. ``sent``: a scratch of ``credit[0]`` (the
    buffer depth) cycles."""
    depth = credit[0]
    back = credit[2]
    trip = credit[3] + back
    w = ni_send_vc[t]
    held = ni_credits[t, w]
    left = pk_size[ni_send_slot[t]] - ni_send[t]  # flits to send, the tail last
    if left <= held:
        return soon + left - 1
    W = ev_n.shape[0]
    # sent[j % depth]: the cycle of the j-th flit sent, for the last depth of them
    at = soon - 1
    j = 0
    while j < held:
        at += 1
        sent[j % depth] = at
        j += 1
    for d in range(1, W + 1):  # the credits on the wheel, soonest first
        x = (last + d) % W
        for e in range(ev_n[x]):
            if ev_kind[x, e] == CREDIT_TO_TERMINAL and ev_a[x, e] == t and ev_b[x, e] == w:
                at = at + 1 if at + 1 > last + d else last + d
                sent[j % depth] = at
                j += 1
                if j == left:
                    return at
    while j < depth:  # the flits on their way to the router's buffer, or in it
        at = at + 1 if at + 1 > soon + back else soon + back
        sent[j % depth] = at
        j += 1
        if j == left:
            return at
    while j < left:  # its own, each back a round trip after it went
        free = sent[j % depth] + trip
        at = at + 1 if at + 1 > free else free
        sent[j % depth] = at
        j += 1
    return at


@jit(inline=True)
def _credit_excess(behind, credit):
    """The cycles beyond one a flit that ``behind`` flits following one yet to cross into its
    destination's router take to cross (:meth:`~.tail_bounds.PacketTailBounds._credit_excess`):
    a credit round trip per buffer's depth of them (``credit``: depth, round trip); 0 when
    the credits keep up."""
    extra = (behind // credit[0]) * (credit[1] - credit[0])
    return extra if extra > 0 else 0


@jit
def _behind(size, u, t, credit, term_router):
    """The least cycles from the head of a packet of ``size`` flits from terminal u reaching
    terminal t to its tail's (:meth:`~.tail_bounds.PacketTailBounds._tail_ps`): one a flit,
    and where the route crosses into t's router the credits' excess (:func:`_credit_excess`)."""
    behind = size - 1
    if term_router[u] == term_router[t]:
        return behind
    return behind + _credit_excess(behind, credit)


@jit
def quiet_until(cfg, last, soonest, ahead, credit, reach, in_lat, out_kind, out_target, term_router, buf_id,
                buf_arr, buf_head, buf_count, ivc_state, ivc_ready, buffered, pk_dest, pk_size, pk_from, ev_kind, ev_a,
                ev_b, ev_n, ni_send, ni_send_vc, ni_send_slot, ni_credits, queue, q_head, q_count, least, sent):
    """The first cycle after ``last`` at which the edge may report a packet delivered, no
    later than ``QUIET_SPAN`` cycles on: a lower bound, from each packet's soonest tail
    arrival (:func:`packet_tails`), and for each packet queued at an interface, the soonest
    it can start (one flit a cycle, the first the cycle after the soonest the interface can
    send the tail of the packet it sends on the credits it can have: :func:`interface_tail`),
    then cross to its destination (``least``: the least cycles of a head, per pair of
    terminals, then :func:`_behind`); with no flit in the network and none queued, the last
    cycle a credit is on the wheel (the network may then fall idle). A packet started or a
    tail sent is no such event (see the module docstring)."""
    period = cfg[C_PERIOD]
    phase = cfg[C_PHASE]
    soon = last + 1
    quiet = last + QUIET_SPAN
    packet_tails(cfg, phase + last * period, last, soonest, ahead, credit, reach, in_lat, out_kind, out_target,
                 term_router, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_ready, buffered, pk_dest, pk_size,
                 ev_kind, ev_a, ev_b, ev_n)
    idle = True
    for s in range(soonest.shape[0]):
        if soonest[s] >= 0:
            idle = False
            at = (soonest[s] - phase) // period
            if at < quiet:
                quiet = at
    Q = queue.shape[1]
    for t in range(q_count.shape[0]):
        if q_count[t] == 0:
            continue  # (a packet being sent has a flit in the network from its first edge: bounded above)
        idle = False
        start = soon
        if ni_send[t] >= 0:
            start = interface_tail(t, soon, last, credit, sent, ni_send, ni_send_vc, ni_send_slot, ni_credits,
                                   pk_size, ev_kind, ev_a, ev_b, ev_n) + 1
        for k in range(q_count[t]):
            s = queue[t, (q_head[t] + k) % Q]
            if pk_from[s] > start:
                start = pk_from[s]
            dest = pk_dest[0, s]
            at = start + least[t, dest] + _behind(pk_size[s], t, dest, credit, term_router)
            if at < quiet:
                quiet = at
            start += pk_size[s]
    if idle:
        # No flit in the network and none queued: no packet can be delivered before Python
        # queues one (a tick of its own); words on the wheel are credits, and after the last
        # of them the network falls idle.
        W = ev_n.shape[0]
        for d in range(W, 0, -1):
            if ev_n[(last + d) % W]:
                return last + d
        return soon
    return quiet if quiet > soon else soon
