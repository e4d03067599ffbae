"""The numba loop that :class:`~.compiled_engine.CompiledNocEngine` runs: a whole network in one
``@njit`` function over int64 arrays (their layout is the engine's), with the decisions of the
routers and interfaces that ``Noc(engine="fast")`` steps in Python.

One call simulates cycles ``[st[S_CYCLE], until)`` or fewer: it returns RUNNING at ``until``,
or how the measurement ended (MEASURED, UNSTABLE), or STALLED (the watchdog found buffered flits
and nothing moved) or FAILED (a model check). Per cycle, as the Python engines order an edge:
the stability check of a sample boundary (the running average latency, see
:class:`~.network.NetworkMeasurement`), the link words arriving (credits and flits), the
interfaces (packets due, injection), then per router VC allocation, switch allocation and
traversal, then the watchdog's and the drain limit's check. A head is routed when it reaches the
front of its buffer, from the routing's table and, where the route tosses it, the router's coin
for the packet (:func:`.routing.tie_coin`, the Python function compiled as it is).

Its per-cycle parts (the words arriving, an interface starting a packet and sending a flit,
the routers' allocation and traversal) are functions :mod:`.compiled_edge` calls too, with what
differs passed in: a flit carries its packet's key and a tail bit, and the packet's destination
and routing coin are looked up by the key (``route_head``).

Every function is a module-level :func:`~archmodel.kernel.compiled.jit` function calling the
others by name (as :mod:`.compiled_edge`'s do), so numba keeps them in its on-disk cache and
a process after the first loads them compiled; the engines take the entries they call with
``bind()``.
"""

from __future__ import annotations

from archmodel.kernel.compiled import jit

from . import routing

# Scalar configuration, at these indices of one int64 array.
# RANGED: some route allows a head only part of an output port's VCs (VC classes).
(C_R, C_P, C_V, C_DEPTH, C_T, C_VA, C_ST, C_CR, C_RC, C_INJ, C_PERIOD, C_PHASE, C_START, C_END,
 C_DRAIN, C_WATCHDOG, C_SW, C_ITERS, C_WAIT, C_SAMPLE, C_WARMUP, C_THRESHOLD, C_LATENCY_RULE, C_RANGED,
 C_SIZE, CONFIG_SIZE) = range(26)
# Scalar state. FLIGHT/FLIGHT_CREATED: packets created and not delivered, and the sum of their
# creation times (ps); DONE_LAT/DONE_N: the latencies (ps) and count of the packets delivered
# in the stability statistics since their last clear; NEXT_STABLE: the next sample boundary
# (cycle); EXCEEDED: the first boundary whose running average passed the threshold, or -1.
(S_CYCLE, S_CHECK, S_OUTSTANDING, S_MEASURED, S_UNMEASURED, S_ACCEPTED, S_OFFERED, S_MOVED, S_EVENTS,
 S_FLIGHT, S_FLIGHT_CREATED, S_DONE_LAT, S_DONE_N, S_NEXT_STABLE, S_EXCEEDED, STATE_SIZE) = range(16)
# What one call ended with.
RUNNING, MEASURED, UNSTABLE, STALLED, FAILED = range(5)
# Event kinds on the wheel.
FLIT_TO_ROUTER, CREDIT_TO_ROUTER, FLIT_TO_TERMINAL, CREDIT_TO_TERMINAL = range(4)
# A flit is its packet's key (here source terminal << 32 | the packet's number there; a packet
# slot in :mod:`.compiled_edge`) with the flit's index in the packet above FLIT_SHIFT (index 0 is
# the head) and TAIL set on its last flit.
FLIT_SHIFT = 48
PACKET_MASK = (1 << FLIT_SHIFT) - 1
MAX_PACKET_FLITS = 1 << 14
INDEX_MASK = MAX_PACKET_FLITS - 1
TAIL = 1 << 62
NEVER_CYCLE = 1 << 62  # (r_next of a router only a word reaching it can wake)

tie_coin = jit(routing.tie_coin)
"""The routers' coin for a packet (:func:`.routing.tie_coin`), compiled as it is for the loops."""


@jit
def schedule(ev_kind, ev_a, ev_b, ev_n, at, kind, a, b):
    """An event of ``kind`` (with its operands) on the wheel's slot ``at``."""
    m = ev_n[at]
    ev_kind[at, m] = kind
    ev_a[at, m] = a
    ev_b[at, m] = b
    ev_n[at] = m + 1


@jit(inline=True)
def route_head(r, a, key, P, V, dests, coin_ids, route, vc_class, route_key, ivc_dest_port, ivc_lo, ivc_hi):
    """Route the head of packet ``key`` at the front of input VC ``a`` of router r: its output
    port and the VCs [lo, hi) of it the head may take, from the routing's table (one input
    port and class in it where the routing reads neither) at the router's coin for the packet
    (tossed only where the route tosses it). The packet's destination is ``dests[key >> 32,
    key & 0xFFFFFFFF]``, its id (the coin's) ``coin_ids[key]``, or the key itself where
    ``coin_ids`` is empty (the synthetic loop's keys are the ids)."""
    p = (a // V) % P if route.shape[1] > 1 else 0
    cls = vc_class[a % V] if route.shape[2] > 1 else 0
    t = dests[key >> 32, key & 0xFFFFFFFF]
    pid = key if coin_ids.shape[0] == 0 else coin_ids[key]
    k = 3 if route[r, p, cls, t, 6] and tie_coin(route_key[r], pid) else 0
    ivc_dest_port[a] = route[r, p, cls, t, k]
    ivc_lo[a] = route[r, p, cls, t, k + 1]
    ivc_hi[a] = route[r, p, cls, t, k + 2]


@jit
def allocate_vcs(cfg, c, base, o, cnt, nfree, n_in, reqs, req, va_in_ptr, va_out_ptr, ovc_free, ivc_out,
                 ivc_ready, ivc_state, ivc_lo, ivc_hi, offer_to, got, vtaken):
    """iSLIP with cfg[C_ITERS] rounds between the heads reqs[o, :cnt] (ascending) and the free
    output VCs req[:nfree] (ascending) of output port o, each head asking for those in its
    range [ivc_lo, ivc_hi) of the port's VCs; pointers move on the first round's accepts.
    Returns the head-cycles stalled."""
    V = cfg[C_V]
    ranged = cfg[C_RANGED] == 1
    stalled = 0
    for x in range(cnt):
        got[x] = -1
    for j in range(nfree):
        vtaken[j] = 0
    for it in range(cfg[C_ITERS]):
        offered = False
        for j in range(nfree):
            offer_to[j] = -1
            if vtaken[j]:
                continue
            ptr = va_out_ptr[base + req[j]]
            w = req[j] - o * V
            pick = -1
            for x in range(cnt):
                if got[x] < 0 and (not ranged or ivc_lo[base + reqs[o, x]] <= w < ivc_hi[base + reqs[o, x]]):
                    if pick < 0:
                        pick = x  # the lowest, should none be at or past the pointer
                    if reqs[o, x] >= ptr:
                        pick = x
                        break
            if pick >= 0:
                offer_to[j] = pick
                offered = True
        if not offered:
            break
        for x in range(cnt):
            if got[x] >= 0:
                continue
            i = reqs[o, x]
            ptr = va_in_ptr[base + i]
            first = -1
            chosen = -1
            for j in range(nfree):
                if offer_to[j] == x:
                    if first < 0:
                        first = j
                    if chosen < 0 and req[j] >= ptr:
                        chosen = j
            if first < 0:
                continue
            j = chosen if chosen >= 0 else first
            got[x] = j
            vtaken[j] = 1
            ovc = req[j]
            if it == 0:
                va_out_ptr[base + ovc] = (i + 1) % n_in
                va_in_ptr[base + i] = (ovc + 1) % n_in
            g = base + i
            ovc_free[base + ovc] = False
            ivc_out[g] = ovc
            stalled += c - ivc_ready[g]
            ivc_ready[g] = c + cfg[C_VA]
            ivc_state[g] = 2
    return stalled


@jit
def allocate_switch(cfg, c, r, base, np_, ivc_state, ivc_ready, ivc_out, ovc_credits, buf_count, sa_in_ptr,
                    sa_out_ptr, sa_vc_ptr, wants, granted, winners, in_match, out_taken):
    """iSLIP with cfg[C_ITERS] rounds over input and output ports (wants[p, o]: an input VC
    of port p holds an output VC of port o, a flit and a credit), pointers moving on the
    first round's accepts, then each matched input's VC arbiter picks its VC: winners[p]."""
    V = cfg[C_V]
    P = cfg[C_P]
    for p in range(np_):
        in_match[p] = -1
        out_taken[p] = 0
        winners[p] = -1
    for it in range(cfg[C_ITERS]):
        for p in range(np_):
            granted[p] = 0
        offered = False
        for o in range(np_):
            if out_taken[o]:
                continue
            ptr = sa_out_ptr[r * P + o]
            for x in range(np_):
                p = (ptr + x) % np_
                if in_match[p] < 0 and wants[p, o]:
                    granted[p] |= 1 << o
                    offered = True
                    break
        if not offered:
            break
        for p in range(np_):
            mask = granted[p]
            if mask == 0:
                continue
            ptr = sa_in_ptr[r * P + p]
            o = -1
            for x in range(np_):
                y = (ptr + x) % np_
                if mask >> y & 1:
                    o = y
                    break
            in_match[p] = o
            out_taken[o] = 1
            if it == 0:
                sa_out_ptr[r * P + o] = (p + 1) % np_
                sa_in_ptr[r * P + p] = (o + 1) % np_
    for p in range(np_):
        o = in_match[p]
        if o < 0:
            continue
        vptr = sa_vc_ptr[r * P + p]
        for x in range(V):
            w = (vptr + x) % V
            g = base + p * V + w
            if (ivc_state[g] == 2 and buf_count[g] > 0 and ivc_ready[g] <= c and ivc_out[g] // V == o
                    and ovc_credits[base + ivc_out[g]] > 0):
                winners[p] = w
                sa_vc_ptr[r * P + p] = (w + 1) % V
                break


@jit
def stability_check(cfg, st, c):
    """The sample boundary at cycle c, before its events: the running average latency of
    the delivered packets in the statistics and of every packet in flight (aged to now)
    against the threshold, then the statistics cleared where a period starts afresh.
    Returns whether the latency rule ends the run here."""
    period = cfg[C_PERIOD]
    now = cfg[C_PHASE] + c * period
    n = st[S_DONE_N] + st[S_FLIGHT]
    total = st[S_DONE_LAT] + st[S_FLIGHT] * now - st[S_FLIGHT_CREATED]
    unstable = False
    if n > 0 and total > cfg[C_THRESHOLD] * n * period:
        if st[S_EXCEEDED] < 0:
            st[S_EXCEEDED] = c
        unstable = cfg[C_LATENCY_RULE] == 1
    k = c // cfg[C_SAMPLE]
    if (k < cfg[C_WARMUP] and k % 2 == 0) or k == cfg[C_WARMUP]:
        st[S_DONE_LAT] = 0
        st[S_DONE_N] = 0
    st[S_NEXT_STABLE] = c + cfg[C_SAMPLE]
    return unstable


@jit(inline=True)
def terminal_credit(ni_credits, ni_busy, ni_wait, t, w, depth):
    """A credit for VC w reaches interface t; a VC whose tail left under
    ``wait_for_tail_credit`` frees once all its credits are back."""
    ni_credits[t, w] += 1
    if ni_wait[t, w] and ni_credits[t, w] == depth:
        ni_wait[t, w] = False
        ni_busy[t, w] = False


@jit(inline=True)
def start_packet(t, V, ni_credits, ni_busy, ni_vc_ptr, ni_send, ni_send_vc):
    """Interface t starts its oldest packet on the first VC from its round-robin pointer
    that is free and holds a credit; returns whether one was."""
    ptr = ni_vc_ptr[t]
    for j in range(V):
        w = (ptr + j) % V
        if ni_credits[t, w] > 0 and not ni_busy[t, w]:
            ni_busy[t, w] = True
            ni_vc_ptr[t] = w + 1
            ni_send[t] = 0
            ni_send_vc[t] = w
            return True
    return False


@jit(inline=True)
def inject_flit(cfg, c, t, flit, tail, ni_credits, ni_busy, ni_wait, ni_send, ni_send_vc, ni_flits, term_router,
                term_port, ev_kind, ev_a, ev_b, ev_n):
    """Interface t sends ``flit`` of the packet it is sending (its last if ``tail``) on the
    packet's VC, spending a credit; after the tail the VC is free for the next packet, or
    once its credits are back under ``wait_for_tail_credit``."""
    P = cfg[C_P]
    V = cfg[C_V]
    w = ni_send_vc[t]
    ni_credits[t, w] -= 1
    ni_flits[t] += 1
    schedule(ev_kind, ev_a, ev_b, ev_n, (c + cfg[C_INJ]) % ev_n.shape[0], FLIT_TO_ROUTER,
             (term_router[t] * P + term_port[t]) * V + w, flit | TAIL if tail else flit)
    if tail:
        if cfg[C_WAIT] == 1:
            ni_wait[t, w] = True
        else:
            ni_busy[t, w] = False
        ni_send[t] = -1
    else:
        ni_send[t] += 1


@jit(inline=True)
def router_arrival(cfg, c, kind, a, b, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready,
                   ivc_dest_port, ivc_lo, ivc_hi, ovc_free, ovc_wait, ovc_credits, buffered, r_next, dests, coin_ids,
                   route, vc_class, route_key):
    """A word reaching a router at cycle c: a credit (CREDIT_TO_ROUTER) for output VC ``a``,
    or flit ``b`` (FLIT_TO_ROUTER) into input VC ``a``'s buffer, a head reaching the front
    routed at once; the router is stepped at c (``r_next``, see :func:`step_routers`).
    Returns False when the flit overflows the buffer or reaches an idle VC without being a
    head (a model check)."""
    depth = cfg[C_DEPTH]
    r_next[a // (cfg[C_P] * cfg[C_V])] = c  # (the VC's router, for a credit as for a flit)
    if kind == CREDIT_TO_ROUTER:
        ovc_credits[a] += 1
        if ovc_wait[a] >= 0 and ovc_credits[a] == depth:
            ovc_wait[a] = -1
            ovc_free[a] = True
        return True
    P = cfg[C_P]
    V = cfg[C_V]
    r = a // (P * V)
    k = buf_count[a]
    if k >= depth:
        return False
    pos = (buf_head[a] + k) % depth
    buf_id[a, pos] = b
    buf_arr[a, pos] = c
    buf_count[a] = k + 1
    buffered[r] += 1
    # A flit reaching an empty buffer whose VC holds no output VC must be a head (it is
    # routed); else it follows its packet's earlier flits.
    if k == 0 and ivc_out[a] < 0:
        if (b >> FLIT_SHIFT) & INDEX_MASK:
            return False
        ivc_state[a] = 1
        ivc_ready[a] = c + cfg[C_RC]
        route_head(r, a, b & PACKET_MASK, P, V, dests, coin_ids, route, vc_class, route_key, ivc_dest_port,
                   ivc_lo, ivc_hi)
    return True


@jit
def arrivals(cfg, c, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo,
             ivc_hi, ovc_free, ovc_wait, ovc_credits, buffered, r_next, dests, coin_ids, route, vc_class, route_key,
             ni_credits, ni_busy, ni_wait, ev_kind, ev_a, ev_b, ev_n, ejected):
    """The words due at cycle c, in the order they were sent: credits and flits reach the
    routers (``router_arrival``), credits the interfaces; the flits reaching interfaces
    are listed in ``ejected`` (interface VC ``t * V + w``, flit) for the caller, which
    ejects them. Returns how many, or -1 when a router's model check failed."""
    slot = c % ev_n.shape[0]
    m = 0
    for e in range(ev_n[slot]):
        kind = ev_kind[slot, e]
        a = ev_a[slot, e]
        b = ev_b[slot, e]
        if kind == CREDIT_TO_ROUTER or kind == FLIT_TO_ROUTER:
            if not router_arrival(cfg, c, kind, a, b, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out,
                                  ivc_ready, ivc_dest_port, ivc_lo, ivc_hi, ovc_free, ovc_wait, ovc_credits,
                                  buffered, r_next, dests, coin_ids, route, vc_class, route_key):
                return -1
        elif kind == CREDIT_TO_TERMINAL:
            terminal_credit(ni_credits, ni_busy, ni_wait, a, b, cfg[C_DEPTH])
        else:
            ejected[m, 0] = a
            ejected[m, 1] = b
            m += 1
    ev_n[slot] = 0
    return m


@jit(inline=True)
def routers_due(R, buffered, r_next, c):
    """Whether :func:`step_routers` has a router to step at cycle c (one holding flits whose
    ``r_next`` has come): a cycle with none spares the call, whose arguments cost more than
    a glance at the routers."""
    for r in range(R):
        if buffered[r] and r_next[r] <= c:
            return True
    return False


@jit
def step_routers(cfg, c, nports, out_kind, out_target, out_tport, out_lat, route, vc_class, route_key,
                 buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo,
                 ivc_hi, ovc_free, ovc_wait, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr, sa_vc_ptr,
                 buffered, r_next, r_flits, r_packets, r_va_stalls, dests, coin_ids, ev_kind, ev_a, ev_b, ev_n, req,
                 nreq, reqs, offer_to, wants, granted, winners, got, vtaken, in_match, out_taken):
    """Cycle c of every router holding flits: VC allocation, then switch allocation and
    traversal; the flits won and their credits go on the wheel (``schedule``) with their
    delays. A packet's destination and coin are looked up as :func:`route_head` says.

    A router with no head ready for an output port that has a free VC and no flit ready to
    go (a VC, a buffered flit and a credit) changes nothing at a cycle, and the same holds at
    every later cycle until a word reaches it (``router_arrival``) or one of its input VCs
    becomes ready (``ivc_ready``): what it reads changes only so, and a VC's stall is counted
    when it is granted. It is not stepped before then (``r_next[r]``, the first cycle to
    step it at): with links of 8 cycles most routers holding flits wait for credits."""
    R = cfg[C_R]
    P = cfg[C_P]
    V = cfg[C_V]
    depth = cfg[C_DEPTH]
    wait_tail = cfg[C_WAIT] == 1
    W = ev_n.shape[0]
    for r in range(R):
        if buffered[r] == 0 or r_next[r] > c:
            continue
        np_ = nports[r]
        n_in = np_ * V
        base = r * P * V
        stalled = 0
        allocating = False  # (a call of allocate_vcs may change its pointers: a step at the next cycle)
        for o in range(np_):
            nreq[o] = 0
        for i in range(n_in):
            g = base + i
            if ivc_state[g] == 1 and ivc_ready[g] <= c:
                o = ivc_dest_port[g]
                reqs[o, nreq[o]] = i
                nreq[o] += 1
        for o in range(np_):
            cnt = nreq[o]
            if cnt == 0:
                continue
            nfree = 0
            for w in range(V):
                if ovc_free[base + o * V + w]:
                    req[nfree] = o * V + w
                    nfree += 1
            if nfree > 0:
                allocating = True
                stalled += allocate_vcs(cfg, c, base, o, cnt, nfree, n_in, reqs, req, va_in_ptr, va_out_ptr,
                                        ovc_free, ivc_out, ivc_ready, ivc_state, ivc_lo, ivc_hi, offer_to,
                                        got, vtaken)
        r_va_stalls[r] += stalled
        any_ready = False
        for p in range(np_):
            for o in range(np_):
                wants[p, o] = 0
        for i in range(n_in):
            g = base + i
            if (ivc_state[g] == 2 and buf_count[g] > 0 and ivc_ready[g] <= c
                    and ovc_credits[base + ivc_out[g]] > 0):
                wants[i // V, ivc_out[g] // V] = 1
                any_ready = True
        if not any_ready:
            if not allocating:
                # nothing changed: step it next when one of its VCs becomes ready, or a word comes
                soonest = NEVER_CYCLE
                for i in range(n_in):
                    g = base + i
                    if ivc_state[g] != 0 and c < ivc_ready[g] < soonest:
                        soonest = ivc_ready[g]
                r_next[r] = soonest
            continue
        allocate_switch(cfg, c, r, base, np_, ivc_state, ivc_ready, ivc_out, ovc_credits, buf_count, sa_in_ptr,
                        sa_out_ptr, sa_vc_ptr, wants, granted, winners, in_match, out_taken)
        for p in range(np_):
            w = winners[p]
            if w < 0:
                continue
            g = base + p * V + w
            h = buf_head[g]
            flit = buf_id[g, h]
            buf_head[g] = (h + 1) % depth
            buf_count[g] -= 1
            buffered[r] -= 1
            r_flits[r] += 1
            ovc = ivc_out[g]
            ovc_credits[base + ovc] -= 1
            o = ovc // V
            ow = ovc - o * V
            # A packet's flits before its tail keep the output VC (wormhole): the input VC
            # stays allocated, waiting for the next flit if none is here.
            if flit & TAIL:
                r_packets[r] += 1
                if wait_tail:
                    ovc_wait[base + ovc] = g - base  # (its last holder, until its credits are back)
                else:
                    ovc_free[base + ovc] = True
                ivc_out[g] = -1
                if buf_count[g]:
                    ivc_state[g] = 1
                    nxt = buf_head[g]
                    ready = buf_arr[g, nxt] + cfg[C_RC]
                    ivc_ready[g] = ready if ready > c + 1 else c + 1
                    route_head(r, g, buf_id[g, nxt] & PACKET_MASK, P, V, dests, coin_ids, route, vc_class,
                               route_key, ivc_dest_port, ivc_lo, ivc_hi)
                else:
                    ivc_state[g] = 0
            at = (c + cfg[C_ST] + out_lat[r, o]) % W
            if out_kind[r, o] == 1:
                schedule(ev_kind, ev_a, ev_b, ev_n, at, FLIT_TO_ROUTER,
                         (out_target[r, o] * P + out_tport[r, o]) * V + ow, flit)
            else:
                schedule(ev_kind, ev_a, ev_b, ev_n, at, FLIT_TO_TERMINAL, out_target[r, o] * V + ow, flit)
            # The freed slot's credit goes upstream on the link leaving port p when switch
            # allocation completes, credit_delay later for a router to process.
            if out_kind[r, p] == 1:
                schedule(ev_kind, ev_a, ev_b, ev_n, (c + cfg[C_SW] + cfg[C_CR] + out_lat[r, p]) % W,
                         CREDIT_TO_ROUTER, (out_target[r, p] * P + out_tport[r, p]) * V + w, 0)
            else:
                schedule(ev_kind, ev_a, ev_b, ev_n, (c + cfg[C_SW] + out_lat[r, p]) % W, CREDIT_TO_TERMINAL,
                         out_target[r, p], w)


@jit
def run(cfg, st, nports, out_kind, out_target, out_tport, out_lat, route, vc_class, route_key, term_router,
        term_port,
        buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo, ivc_hi,
        ovc_free, ovc_wait, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr, sa_vc_ptr, buffered,
        r_next, r_flits, r_packets, r_va_stalls, ni_credits, ni_busy, ni_wait, ni_vc_ptr, ni_next, ni_send,
        ni_send_vc, ni_flits, ni_created, gen_created, gen_dest, n_gen, injected, arrived, ni_ejected,
        ni_delivered, ev_kind, ev_a, ev_b, ev_n, req, nreq, reqs, offer_to, wants,
        granted, winners, got, vtaken, in_match, out_taken, ejected, until):
    """The synthetic loop: cycles ``[st[S_CYCLE], until)`` of the whole network, or fewer (see the
    module docstring); returns RUNNING, MEASURED, UNSTABLE, STALLED or FAILED."""
    R = cfg[C_R]
    P = cfg[C_P]
    V = cfg[C_V]
    T = cfg[C_T]
    period = cfg[C_PERIOD]
    phase = cfg[C_PHASE]
    start_ps = cfg[C_START]
    end_ps = cfg[C_END]
    last_flit = cfg[C_SIZE] - 1
    W = ev_n.shape[0]
    ids = ev_n[:0]  # no coin ids: a synthetic packet's key is its id
    c = st[S_CYCLE]
    while c < until:
        now = phase + c * period
        slot = c % W
        stop_measured = False
        stop_unstable = False
        if c == st[S_NEXT_STABLE]:
            stop_unstable = stability_check(cfg, st, c)
        moved = ev_n[slot] > 0
        m = 0
        if moved:  # (a slot without words spares the call)
            m = arrivals(cfg, c, buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port,
                         ivc_lo, ivc_hi, ovc_free, ovc_wait, ovc_credits, buffered, r_next, gen_dest, ids, route,
                         vc_class, route_key, ni_credits, ni_busy, ni_wait, ev_kind, ev_a, ev_b, ev_n, ejected)
            if m < 0:
                st[S_CYCLE] = c
                return FAILED
        for e in range(m):
            a = ejected[e, 0]
            b = ejected[e, 1]
            t = a // V
            pid = b & PACKET_MASK
            src = pid >> 32
            idx = pid & 0xFFFFFFFF
            if gen_dest[src, idx] != t:
                st[S_CYCLE] = c
                return FAILED
            ni_ejected[t] += 1
            if start_ps <= now < end_ps:
                st[S_ACCEPTED] += 1
            # The credit goes back with the interface's word credit_delay edges on.
            schedule(ev_kind, ev_a, ev_b, ev_n, (c + cfg[C_CR] + cfg[C_INJ]) % W, CREDIT_TO_ROUTER,
                     (term_router[t] * P + term_port[t]) * V + a % V, 0)
            if not b & TAIL:
                continue
            # the tail: the packet is delivered
            ni_delivered[t] += 1
            arrived[src, idx] = now
            created = gen_created[src, idx]
            st[S_FLIGHT] -= 1
            st[S_FLIGHT_CREATED] -= created
            measured = start_ps <= created < end_ps
            if measured or now < start_ps:
                st[S_DONE_LAT] += now - created
                st[S_DONE_N] += 1
            if measured:
                st[S_OUTSTANDING] -= 1
                if st[S_OUTSTANDING] == 0 and now >= end_ps:
                    stop_measured = True
        # Interfaces: create the packets due; start the oldest on a free VC with a credit,
        # then send its next flit while that VC has a credit.
        for t in range(T):
            k = ni_created[t]
            while k < n_gen[t] and gen_created[t, k] <= now:
                created = gen_created[t, k]
                st[S_FLIGHT] += 1
                st[S_FLIGHT_CREATED] += created
                if start_ps <= created < end_ps:
                    st[S_OUTSTANDING] += 1
                    st[S_MEASURED] += 1
                    st[S_OFFERED] += last_flit + 1
                else:
                    st[S_UNMEASURED] += 1
                k += 1
            ni_created[t] = k
            q = ni_next[t]
            if ni_send[t] < 0 and q < k:
                start_packet(t, V, ni_credits, ni_busy, ni_vc_ptr, ni_send, ni_send_vc)
            i = ni_send[t]
            if i >= 0 and ni_credits[t, ni_send_vc[t]] > 0:
                if i == 0:
                    injected[t, q] = now
                inject_flit(cfg, c, t, (i << FLIT_SHIFT) | (t << 32) | q, i == last_flit, ni_credits, ni_busy,
                            ni_wait, ni_send, ni_send_vc, ni_flits, term_router, term_port, ev_kind, ev_a, ev_b,
                            ev_n)
                moved = True
                if i == last_flit:
                    ni_next[t] = q + 1
        if routers_due(R, buffered, r_next, c):
            step_routers(cfg, c, nports, out_kind, out_target, out_tport, out_lat, route, vc_class, route_key,
                         buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port, ivc_lo,
                         ivc_hi, ovc_free, ovc_wait, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr,
                         sa_vc_ptr, buffered, r_next, r_flits, r_packets, r_va_stalls, gen_dest, ids, ev_kind, ev_a,
                         ev_b, ev_n, req, nreq, reqs, offer_to, wants, granted, winners, got, vtaken, in_match,
                         out_taken)
        if moved:
            st[S_MOVED] = 1
        if stop_unstable:
            st[S_CYCLE] = c + 1
            return UNSTABLE
        if stop_measured:
            st[S_CYCLE] = c + 1
            return MEASURED
        if c == st[S_CHECK]:
            if now >= end_ps:
                if st[S_OUTSTANDING] == 0:
                    st[S_CYCLE] = c + 1
                    return MEASURED
                if now >= end_ps + cfg[C_DRAIN] * period:
                    st[S_CYCLE] = c + 1
                    return UNSTABLE
            held = 0
            for r in range(R):
                held += buffered[r]
            if held and st[S_MOVED] == 0:
                st[S_CYCLE] = c + 1
                return STALLED
            st[S_MOVED] = 0
            nxt = c + cfg[C_WATCHDOG]
            if now < end_ps and end_ps < phase + nxt * period:
                nxt = (end_ps - phase) // period
            st[S_CHECK] = nxt
        c += 1
    st[S_CYCLE] = c
    return RUNNING
