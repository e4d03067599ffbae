"""A compiled network loop (numba) for :class:`~.network.Noc` in BookSim's reference configuration.

``Noc(engine="compiled")`` runs the whole network (injection, lookahead routing, VC allocation,
iSLIP switch allocation, traversal, credits, ejection and the measurement) in one ``@njit``
function over preallocated int64 arrays, with the decisions of the routers and interfaces that
``engine="fast"`` steps in Python, so a run gives the same packets at the same times (a test
compares the per-packet logs). The random draws are those of the interfaces' own streams: each
interface's generator is seeded from its kernel stream exactly as :meth:`NetworkInterface.begin`
seeds it, and the packets (creation time, destination) are drawn from it in Python, in the
interface's order, a chunk of cycles ahead of the compiled loop.

Supported: single-flit packets, iSLIP with one iteration, routing with one output port per hop
and every VC of it allowed (``dor`` on a mesh), Bernoulli injection of a synthetic pattern,
``stop_when_measured``. Anything else raises ParameterError naming why; use ``engine="fast"``.
Leaves out: deadlock reports naming the wait cycle (a stall is reported without it), packets
sent with ``send_packet``, traces, continuing a run after it stopped.
"""

from __future__ import annotations

import time

import numpy as np

from archmodel.kernel import Component, DeadlockError, ModelAssertion, ParameterError, component_rng, model

from .flit import NetPacket

_WHEEL = 16  # cycles of the event wheel: more than the longest link + pipeline delay
_CHUNK = 1000  # cycles of packets drawn ahead of the compiled loop
BATCH_SECONDS = 0.25
"""The longest a batch of chunks runs before the engine hands back to the kernel (so a stop
asked meanwhile, by Ctrl-C or SIGTERM, takes effect within about this long)."""
_USE_FAST = "engine='fast' runs every configuration with the same results"

# Scalar configuration, at these indices of one int64 array.
(C_R, C_P, C_V, C_DEPTH, C_T, C_VA, C_ST, C_CR, C_RC, C_INJ, C_PERIOD, C_PHASE, C_START, C_END,
 C_DRAIN, C_WATCHDOG, C_SW, CONFIG_SIZE) = range(18)
# Scalar state.
(S_CYCLE, S_CHECK, S_OUTSTANDING, S_MEASURED, S_UNMEASURED, S_ACCEPTED, S_OFFERED, S_MOVED, S_EVENTS,
 STATE_SIZE) = range(10)
# What one call ended with.
RUNNING, MEASURED, UNSTABLE, STALLED, FAILED = range(5)
# Event kinds on the wheel.
FLIT_TO_ROUTER, CREDIT_TO_ROUTER, FLIT_TO_TERMINAL, CREDIT_TO_TERMINAL = range(4)


def _kernel():
    from numba import njit

    @njit(cache=True, nogil=True, _nrt=False)
    def run(cfg, st, nports, out_kind, out_target, out_tport, out_lat, route_port, term_router, term_port,
            buf_id, buf_arr, buf_head, buf_count, ivc_state, ivc_out, ivc_ready, ivc_dest_port,
            ovc_free, ovc_credits, va_in_ptr, va_out_ptr, sa_in_ptr, sa_out_ptr, sa_vc_ptr, buffered,
            r_flits, r_va_stalls, ni_credits, ni_vc_ptr, ni_next, ni_created, gen_created, gen_dest, n_gen,
            injected, arrived, ni_ejected, ev_kind, ev_a, ev_b, ev_n, req, nreq, reqs, offer_to, wants,
            granted, winners, until):
        R = cfg[C_R]
        P = cfg[C_P]
        V = cfg[C_V]
        depth = cfg[C_DEPTH]
        T = cfg[C_T]
        period = cfg[C_PERIOD]
        phase = cfg[C_PHASE]
        start_ps = cfg[C_START]
        end_ps = cfg[C_END]
        W = ev_n.shape[0]
        c = st[S_CYCLE]
        while c < until:
            now = phase + c * period
            slot = c % W
            stop_measured = False
            moved = False
            n = ev_n[slot]
            if n:
                moved = True
            for e in range(n):
                kind = ev_kind[slot, e]
                a = ev_a[slot, e]
                b = ev_b[slot, e]
                if kind == CREDIT_TO_ROUTER:
                    ovc_credits[a] += 1
                elif kind == FLIT_TO_ROUTER:
                    r = a // (P * V)
                    k = buf_count[a]
                    if k >= depth:
                        st[S_CYCLE] = c
                        return FAILED
                    pos = (buf_head[a] + k) % depth
                    buf_id[a, pos] = b
                    buf_arr[a, pos] = c
                    buf_count[a] = k + 1
                    buffered[r] += 1
                    if k == 0:
                        ivc_state[a] = 1
                        ivc_ready[a] = c + cfg[C_RC]
                        ivc_dest_port[a] = route_port[r, gen_dest[b >> 32, b & 0xFFFFFFFF]]
                elif kind == CREDIT_TO_TERMINAL:
                    ni_credits[a, b] += 1
                else:
                    t = a // V
                    src = b >> 32
                    idx = b & 0xFFFFFFFF
                    if gen_dest[src, idx] != t:
                        st[S_CYCLE] = c
                        return FAILED
                    ni_ejected[t] += 1
                    if start_ps <= now < end_ps:
                        st[S_ACCEPTED] += 1
                    arrived[src, idx] = now
                    created = gen_created[src, idx]
                    if start_ps <= created < end_ps:
                        st[S_OUTSTANDING] -= 1
                        if st[S_OUTSTANDING] == 0 and now >= end_ps:
                            stop_measured = True
                    # The credit goes back with the interface's word credit_delay edges on.
                    at = (c + cfg[C_CR] + cfg[C_INJ]) % W
                    m = ev_n[at]
                    ev_kind[at, m] = CREDIT_TO_ROUTER
                    ev_a[at, m] = (term_router[t] * P + term_port[t]) * V + a % V
                    ev_n[at] = m + 1
            ev_n[slot] = 0
            # Interfaces: create the packets due, inject the oldest when a VC has a credit.
            for t in range(T):
                k = ni_created[t]
                while k < n_gen[t] and gen_created[t, k] <= now:
                    created = gen_created[t, k]
                    if start_ps <= created < end_ps:
                        st[S_OUTSTANDING] += 1
                        st[S_MEASURED] += 1
                        st[S_OFFERED] += 1
                    else:
                        st[S_UNMEASURED] += 1
                    k += 1
                ni_created[t] = k
                q = ni_next[t]
                if q < k:
                    ptr = ni_vc_ptr[t]
                    for j in range(V):
                        w = (ptr + j) % V
                        if ni_credits[t, w] > 0:
                            ni_credits[t, w] -= 1
                            ni_vc_ptr[t] = w + 1
                            injected[t, q] = now
                            ni_next[t] = q + 1
                            at = (c + cfg[C_INJ]) % W
                            m = ev_n[at]
                            ev_kind[at, m] = FLIT_TO_ROUTER
                            ev_a[at, m] = (term_router[t] * P + term_port[t]) * V + w
                            ev_b[at, m] = (t << 32) | q
                            ev_n[at] = m + 1
                            moved = True
                            break
            # Routers: VC allocation, then switch allocation and traversal.
            for r in range(R):
                if buffered[r] == 0:
                    continue
                np_ = nports[r]
                n_in = np_ * V
                base = r * P * V
                stalled = 0
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
                    if nfree == 0:
                        continue
                    if cnt == 1:
                        i = reqs[o, 0]
                        ptr = va_in_ptr[base + i]
                        ovc = req[0]
                        for j in range(nfree):
                            if req[j] >= ptr:
                                ovc = req[j]
                                break
                        va_in_ptr[base + i] = (ovc + 1) % n_in
                        va_out_ptr[base + ovc] = (i + 1) % n_in
                        g = base + i
                        ovc_free[base + ovc] = False
                        ivc_out[g] = ovc
                        stalled += c - ivc_ready[g]
                        ivc_ready[g] = c + cfg[C_VA]
                        ivc_state[g] = 2
                        continue
                    # One iSLIP round, every requester asking for the same free VCs.
                    for j in range(nfree):
                        ovc = req[j]
                        ptr = va_out_ptr[base + ovc]
                        pick = reqs[o, 0]
                        for x in range(cnt):
                            if reqs[o, x] >= ptr:
                                pick = reqs[o, x]
                                break
                        offer_to[j] = pick
                    for x in range(cnt):
                        i = reqs[o, x]
                        ptr = va_in_ptr[base + i]
                        first = -1
                        chosen = -1
                        for j in range(nfree):
                            if offer_to[j] == i:
                                if first < 0:
                                    first = req[j]
                                if chosen < 0 and req[j] >= ptr:
                                    chosen = req[j]
                        if first < 0:
                            continue
                        ovc = chosen if chosen >= 0 else first
                        va_out_ptr[base + ovc] = (i + 1) % n_in
                        va_in_ptr[base + i] = (ovc + 1) % n_in
                        g = base + i
                        ovc_free[base + ovc] = False
                        ivc_out[g] = ovc
                        stalled += c - ivc_ready[g]
                        ivc_ready[g] = c + cfg[C_VA]
                        ivc_state[g] = 2
                r_va_stalls[r] += stalled
                # Switch allocation: one iSLIP round over input ports and output ports.
                any_ready = False
                for p in range(np_):
                    for o in range(np_):
                        wants[p, o] = 0
                for i in range(n_in):
                    g = base + i
                    if ivc_state[g] == 2 and ivc_ready[g] <= c and ovc_credits[base + ivc_out[g]] > 0:
                        wants[i // V, ivc_out[g] // V] = 1
                        any_ready = True
                if not any_ready:
                    continue
                for p in range(np_):
                    granted[p] = 0
                    winners[p] = -1
                for o in range(np_):
                    ptr = sa_out_ptr[r * P + o]
                    pick = -1
                    for x in range(np_):
                        p = (ptr + x) % np_
                        if wants[p, o]:
                            pick = p
                            break
                    if pick >= 0:
                        granted[pick] |= 1 << o
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
                    sa_out_ptr[r * P + o] = (p + 1) % np_
                    sa_in_ptr[r * P + p] = (o + 1) % np_
                    vptr = sa_vc_ptr[r * P + p]
                    for x in range(V):
                        w = (vptr + x) % V
                        g = base + p * V + w
                        if (ivc_state[g] == 2 and ivc_ready[g] <= c and ivc_out[g] // V == o
                                and ovc_credits[base + ivc_out[g]] > 0):
                            winners[p] = w
                            sa_vc_ptr[r * P + p] = (w + 1) % V
                            break
                for p in range(np_):
                    w = winners[p]
                    if w < 0:
                        continue
                    g = base + p * V + w
                    h = buf_head[g]
                    pid = buf_id[g, h]
                    buf_head[g] = (h + 1) % depth
                    buf_count[g] -= 1
                    buffered[r] -= 1
                    r_flits[r] += 1
                    ovc = ivc_out[g]
                    ovc_credits[base + ovc] -= 1
                    o = ovc // V
                    ow = ovc - o * V
                    ovc_free[base + ovc] = True
                    ivc_out[g] = -1
                    if buf_count[g]:
                        ivc_state[g] = 1
                        nxt = buf_head[g]
                        ready = buf_arr[g, nxt] + cfg[C_RC]
                        ivc_ready[g] = ready if ready > c + 1 else c + 1
                        ivc_dest_port[g] = route_port[r, gen_dest[buf_id[g, nxt] >> 32, buf_id[g, nxt] & 0xFFFFFFFF]]
                    else:
                        ivc_state[g] = 0
                    at = (c + cfg[C_ST] + out_lat[r, o]) % W
                    m = ev_n[at]
                    if out_kind[r, o] == 1:
                        ev_kind[at, m] = FLIT_TO_ROUTER
                        ev_a[at, m] = (out_target[r, o] * P + out_tport[r, o]) * V + ow
                    else:
                        ev_kind[at, m] = FLIT_TO_TERMINAL
                        ev_a[at, m] = out_target[r, o] * V + ow
                    ev_b[at, m] = pid
                    ev_n[at] = m + 1
                    # The freed slot's credit goes upstream on the link leaving port p when
                    # switch allocation completes, credit_delay later for a router to process.
                    if out_kind[r, p] == 1:
                        at = (c + cfg[C_SW] + cfg[C_CR] + out_lat[r, p]) % W
                    else:
                        at = (c + cfg[C_SW] + out_lat[r, p]) % W
                    m = ev_n[at]
                    if out_kind[r, p] == 1:
                        ev_kind[at, m] = CREDIT_TO_ROUTER
                        ev_a[at, m] = (out_target[r, p] * P + out_tport[r, p]) * V + w
                    else:
                        ev_kind[at, m] = CREDIT_TO_TERMINAL
                        ev_a[at, m] = out_target[r, p]
                        ev_b[at, m] = w
                    ev_n[at] = m + 1
            if moved:
                st[S_MOVED] = 1
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

    return run


_RUN = None


def _compiled_run():
    global _RUN
    if _RUN is None:
        _RUN = _kernel()
    return _RUN


def refusal(noc) -> str | None:
    """Why ``noc`` cannot run on the compiled engine (its configuration, its routing or its
    delays), or None when it can: what ``engine="compiled"`` refuses with, and what
    ``engine="auto"`` asks before choosing it."""
    why = unsupported_reason(noc)
    if why is not None:
        return why
    pm = noc.port_map
    vcs = noc.vcs
    for r in pm.routers:
        route_fn = noc.routers[r].route_fn
        for t in range(pm.terminals):
            packet = NetPacket(0, 0, t, 1)
            hops = list(route_fn(0, 0, packet))
            if len(hops) != 1 or tuple(hops[0][1:]) != (0, vcs) or list(route_fn(0, vcs - 1, packet)) != hops:
                return (f"routing {noc.routing!r} on {noc.topology!r} (only routing with one output port and every "
                        "VC per hop, dor on a mesh)")
    if tuple(noc.route.injection_vcs(NetPacket(0, 0, 0, 1))) != (0, vcs):
        return "injection on some VCs only (it needs every VC)"
    links = [pm.latency(u, v) for u in pm.routers for v in pm.neighbour[u] if v is not None]
    widest = max(links + [noc.ejection_latency])
    longest = max(noc.sw_alloc_delay + noc.st_delay + widest, noc.sw_alloc_delay + noc.credit_delay + widest,
                  noc.credit_delay + noc.injection_cycles)
    if longest >= _WHEEL:
        return f"delays of {longest} cycles (only below {_WHEEL})"
    return None


def unsupported_reason(noc) -> str | None:
    """Why ``noc`` cannot run on the compiled engine, or None when it can."""
    checks = (
        (not noc.address_map, "memory traffic (address_map): the loop carries only synthetic packets"),
        (noc.router == "NocRouter", f"router {noc.router!r} (only NocRouter)"),
        (noc.packet_size == 1, f"packet_size {noc.packet_size} (only single-flit packets)"),
        (noc.allocator == "islip" and noc.alloc_iterations == 1,
         f"allocator {noc.allocator!r} with {noc.alloc_iterations} iterations (only islip with 1)"),
        (not noc.wait_for_tail_credit, "wait_for_tail_credit (not modelled)"),
        (noc.traffic != "none", "no synthetic traffic (traces and driven interfaces are not supported)"),
        (noc.injection == "bernoulli", f"injection {noc.injection!r} (only bernoulli)"),
        (not noc.trace_file, "trace_file (traces are not supported)"),
        (noc.stop_when_measured, "stop_when_measured=False (the run must end with its measurement)"),
        (noc.sample_periods >= 1, "no sample period"),
    )
    for ok, why in checks:
        if not ok:
            return why
    return None


class _LoopState:
    """The compiled loop's arrays and scalars between batches (plain attributes)."""


@model(catalogue=False)
class CompiledNocEngine(Component):
    """Runs its parent :class:`Noc` in one compiled loop (see the module docstring), in batches
    of chunks that end at the run's limit, when a stop is asked (Ctrl-C, SIGTERM) or after
    ``BATCH_SECONDS``: after each, the statistics of the cycles simulated are written back to
    the Noc, its routers and its interfaces and simulated time catches up. When the
    measurement ends it sleeps until the edge at which the Python engine would stop and stops
    there, with the same statistics."""

    def setup(self) -> None:
        self.unstable = False
        self.done = None  # (stop time in ps, reason) once the compiled loop has run
        self._run = None  # the loop's arrays (_LoopState), from the first edge on
        if self.parent.address_map:
            # Refused at once: the memory ports would belong to interfaces no kernel schedules.
            self._refuse_unsupported()

    def start(self) -> None:
        self._refuse_unsupported()
        noc = self.parent
        self._tables()
        seed = self.sim.seed
        period = self.domain.period_ps
        for ni in noc.interfaces:
            ni.begin(self.now, period, self.domain.phase_ps, component_rng(seed, ni.path))

    def _refuse_unsupported(self) -> None:
        noc = self.parent
        why = refusal(noc)
        if why is not None:
            raise ParameterError(f"{noc.path}: engine='compiled' does not support {why}", hint=_USE_FAST)

    def _tables(self) -> None:
        noc = self.parent
        pm = noc.port_map
        R, T, V = len(pm.routers), pm.terminals, noc.vcs
        P = max(pm.ports(r) for r in pm.routers)
        self.shape = (R, P, V, T)
        self.nports = np.array([pm.ports(r) for r in pm.routers], np.int64)
        self.out_kind = np.zeros((R, P), np.int64)
        self.out_target = np.zeros((R, P), np.int64)
        self.out_tport = np.zeros((R, P), np.int64)
        self.out_lat = np.zeros((R, P), np.int64)
        terminal_at = {(pm.terminal_router[t], pm.terminal_port[t]): t for t in range(T)}
        for u in pm.routers:
            for p, v in enumerate(pm.neighbour[u]):
                if v is not None:
                    self.out_kind[u, p] = 1
                    self.out_target[u, p] = v
                    self.out_tport[u, p] = pm.in_port_from[v][u]
                    self.out_lat[u, p] = pm.latency(u, v)
                elif (u, p) in terminal_at:
                    self.out_kind[u, p] = 2
                    self.out_target[u, p] = terminal_at[(u, p)]
                    self.out_lat[u, p] = noc.ejection_latency
        self.route_port = np.zeros((R, T), np.int64)
        for r in pm.routers:
            route_fn = noc.routers[r].route_fn
            for t in range(T):
                self.route_port[r, t] = next(iter(route_fn(0, 0, NetPacket(0, 0, t, 1))))[0]
        self.term_router = np.array(pm.terminal_router[:T], np.int64)
        self.term_port = np.array(pm.terminal_port[:T], np.int64)

    def send_packet(self, ni, dest: int, size: int, payload):
        """Not supported: the compiled engine draws only synthetic traffic."""
        raise ParameterError(f"{ni.path}: send_packet is not supported under engine='compiled'", hint=_USE_FAST)

    def holding(self) -> str | None:
        """Nothing: the compiled loop has finished its work before the kernel could ask."""
        return None

    def tick(self) -> None:
        if self.done is None:
            if self._run is None:
                self._prepare()
            status = RUNNING if self.sim.stopped is not None else self._advance()
            self._write_back(status)
            if status == RUNNING:
                # A batch of bounded length ended (a stop may be asked, the run's limit may be
                # near): simulated time comes to the first cycle not simulated yet.
                self.sleep()
                self.wake_at(self._run.phase + int(self._run.st[S_CYCLE]) * self._run.period)
                return
            stop_ps, _ = self.done
            if stop_ps > self.sim.now:
                self.sleep()
                self.wake_at(stop_ps)
                return
        if self.sim.now >= self.done[0]:
            self.sim.stop(self.done[1])
        else:
            self.sleep()
            self.wake_at(self.done[0])

    def _prepare(self) -> None:
        """The compiled loop's arrays, at the state of this first edge."""
        noc = self.parent
        meas = noc.measurement
        R, P, V, T = self.shape
        D = noc.buffer_depth
        period, phase = self.domain.period_ps, self.domain.phase_ps
        cfg = np.zeros(CONFIG_SIZE, np.int64)
        cfg[[C_R, C_P, C_V, C_DEPTH, C_T]] = R, P, V, D, T
        cfg[C_VA], cfg[C_ST], cfg[C_CR], cfg[C_RC] = (noc.vc_alloc_delay, noc.sw_alloc_delay + noc.st_delay,
                                                      noc.credit_delay, noc.routing_delay)
        cfg[C_INJ], cfg[C_PERIOD], cfg[C_PHASE], cfg[C_SW] = noc.injection_cycles, period, phase, noc.sw_alloc_delay
        cfg[C_START], cfg[C_END], cfg[C_DRAIN], cfg[C_WATCHDOG] = meas.start_ps, meas.end_ps, noc.drain_limit, noc.watchdog
        st = np.zeros(STATE_SIZE, np.int64)
        st[S_CYCLE] = self.domain.cycle_of(self.sim.now)
        st[S_CHECK] = st[S_CYCLE]
        st[S_MOVED] = 1
        n = R * P * V

        def ivc(init: int) -> np.ndarray:
            return np.full(n, init, np.int64)

        run = _LoopState()
        run.cfg, run.st, run.period, run.phase, run.K = cfg, st, period, phase, 256
        run.buf_id, run.buf_arr = np.zeros((n, D), np.int64), np.zeros((n, D), np.int64)
        (run.buf_head, run.buf_count, run.ivc_state, run.ivc_out, run.ivc_ready,
         run.ivc_dest_port) = ivc(0), ivc(0), ivc(0), ivc(-1), ivc(0), ivc(0)
        run.ovc_free = np.ones(n, np.bool_)
        run.ovc_credits = ivc(D)
        run.va_in_ptr, run.va_out_ptr = ivc(0), ivc(0)
        run.sa_in_ptr, run.sa_out_ptr, run.sa_vc_ptr = (np.zeros(R * P, np.int64) for _ in range(3))
        run.buffered, run.r_flits, run.r_va_stalls = (np.zeros(R, np.int64) for _ in range(3))
        run.ni_credits = np.full((T, V), D, np.int64)
        run.ni_vc_ptr, run.ni_next, run.ni_created, run.n_gen, run.ni_ejected = (np.zeros(T, np.int64) for _ in range(5))
        run.gen_created = np.zeros((T, run.K), np.int64)
        run.gen_dest = np.zeros((T, run.K), np.int64)
        run.injected = np.full((T, run.K), -1, np.int64)
        run.arrived = np.full((T, run.K), -1, np.int64)
        cap = 2 * R * P + 2 * T + 8
        run.ev_kind, run.ev_a, run.ev_b = (np.zeros((_WHEEL, cap), np.int64) for _ in range(3))
        run.ev_n = np.zeros(_WHEEL, np.int64)
        run.scratch = (np.zeros(P * V, np.int64), np.zeros(P, np.int64), np.zeros((P, P * V), np.int64),
                       np.zeros(P * V, np.int64), np.zeros((P, P), np.int64), np.zeros(P, np.int64),
                       np.zeros(P, np.int64))
        run.next_ps = [ni.next_packet_ps for ni in noc.interfaces]
        # What the Noc's latency distributions and the interfaces' logs held before this run:
        # each write-back replaces what this run added, so it can be repeated after every batch.
        run.latency_base = (len(noc.packet_latency.samples), len(noc.network_latency.samples))
        run.log_base = [None if ni.log is None else len(ni.log) for ni in noc.interfaces]
        run.loop = _compiled_run()
        self._run = run

    def _advance(self) -> int:
        """Run the compiled loop in chunks until the measurement ends, a stop is asked, the
        run's limit is reached or a batch has taken BATCH_SECONDS: what the last chunk ended with."""
        run, noc = self._run, self.parent
        st, period, phase = run.st, run.period, run.phase
        _, _, _, T = self.shape
        interfaces = noc.interfaces
        limit = self.sim.limit_ps
        last = None if limit is None else (limit - phase) // period  # the last cycle this run may simulate
        began = time.perf_counter()
        status = RUNNING
        while status == RUNNING:
            until = int(st[S_CYCLE]) + _CHUNK
            if last is not None:
                if st[S_CYCLE] > last:
                    break
                until = min(until, last + 1)
            horizon = phase + (until - 1) * period
            drawn = []
            for t, ni in enumerate(interfaces):
                times, dests = [], []
                nx = run.next_ps[t]
                if nx is not None:
                    pattern, gap, rnd, me = ni.pattern, ni.process.gap, ni.random, ni.terminal
                    while nx <= horizon:
                        times.append(nx)
                        dests.append(pattern(me, rnd))
                        nx += gap(rnd) * period
                    run.next_ps[t] = nx
                drawn.append((times, dests))
            need = max(int(run.n_gen[t]) + len(drawn[t][0]) for t in range(T))
            if need > run.K:
                K2 = max(need, 2 * run.K)
                extra = K2 - run.K
                run.gen_created, run.gen_dest, run.injected, run.arrived = (
                    np.concatenate([a, np.full((T, extra), fill, np.int64)], axis=1)
                    for a, fill in ((run.gen_created, 0), (run.gen_dest, 0), (run.injected, -1), (run.arrived, -1)))
                run.K = K2
            for t, (times, dests) in enumerate(drawn):
                if times:
                    k = int(run.n_gen[t])
                    run.gen_created[t, k:k + len(times)] = times
                    run.gen_dest[t, k:k + len(dests)] = dests
                    run.n_gen[t] = k + len(times)
            status = run.loop(run.cfg, st, self.nports, self.out_kind, self.out_target, self.out_tport, self.out_lat,
                              self.route_port, self.term_router, self.term_port, run.buf_id, run.buf_arr,
                              run.buf_head, run.buf_count, run.ivc_state, run.ivc_out, run.ivc_ready,
                              run.ivc_dest_port, run.ovc_free, run.ovc_credits, run.va_in_ptr, run.va_out_ptr,
                              run.sa_in_ptr, run.sa_out_ptr, run.sa_vc_ptr, run.buffered, run.r_flits,
                              run.r_va_stalls, run.ni_credits, run.ni_vc_ptr, run.ni_next, run.ni_created,
                              run.gen_created, run.gen_dest, run.n_gen, run.injected, run.arrived, run.ni_ejected,
                              run.ev_kind, run.ev_a, run.ev_b, run.ev_n, *run.scratch, until)
            # Between chunks Python runs: a Ctrl-C or SIGTERM handler has had its chance to ask
            # the simulator to stop, and a batch never outlasts BATCH_SECONDS by more than a chunk.
            if self.sim.stopped is not None or time.perf_counter() - began > BATCH_SECONDS:
                break
        return status

    def _write_back(self, status: int) -> None:
        """The Noc's, routers' and interfaces' statistics as of the cycles simulated so far
        (every measured packet that has arrived); when the loop has ended (status not
        RUNNING), also how and when the run stops."""
        run, noc = self._run, self.parent
        meas = noc.measurement
        st, period = run.st, run.period
        buffered, interfaces = run.buffered, noc.interfaces
        stop_cycle = int(st[S_CYCLE]) - 1
        stop_ps = run.phase + stop_cycle * period
        if status == STALLED:
            raise DeadlockError(f"deadlock at {stop_ps} ps: {int(buffered.sum())} flits buffered in {noc.path} and "
                                f"none moved for {noc.watchdog} cycles (engine='compiled' does not name the wait cycle)")
        if status == FAILED:
            raise ModelAssertion(f"{noc.path}: a flit overflowed a buffer or reached the wrong terminal at "
                                 f"{stop_ps} ps (engine='compiled')")
        if status != RUNNING:
            self.unstable = status == UNSTABLE
            self.done = (stop_ps, "unstable" if self.unstable else "measured")
        meas.outstanding, meas.measured, meas.unmeasured = int(st[S_OUTSTANDING]), int(st[S_MEASURED]), int(st[S_UNMEASURED])
        meas.accepted_flits, meas.offered_flits = int(st[S_ACCEPTED]), int(st[S_OFFERED])
        for r, router in enumerate(noc.routers):
            router.flits.value = router.packets.value = int(run.r_flits[r])
            router.va_stalls.value = int(run.r_va_stalls[r])
        for t, ni in enumerate(interfaces):
            ni.created.value = ni.packet_ids = int(run.ni_created[t])
            ni.injected_flits.value = int(run.ni_next[t])
            ni.ejected_flits.value = ni.delivered.value = int(run.ni_ejected[t])
        arrived, gen_created, injected, gen_dest = run.arrived, run.gen_created, run.injected, run.gen_dest
        del noc.packet_latency.samples[run.latency_base[0]:]
        del noc.network_latency.samples[run.latency_base[1]:]
        for ni, base in zip(interfaces, run.log_base):
            if base is not None:
                del ni.log[base:]
        src, idx = np.nonzero(arrived >= 0)
        at = arrived[src, idx]
        order = np.argsort(at, kind="stable")
        src, idx, at = src[order], idx[order], at[order]
        created = gen_created[src, idx]
        inj = injected[src, idx]
        measured = (created >= meas.start_ps) & (created < meas.end_ps)
        noc.packet_latency.samples.extend(((at - created)[measured] // period).tolist())
        noc.network_latency.samples.extend(((at - inj)[measured] // period).tolist())
        if any(ni.log is not None for ni in interfaces):
            dest = gen_dest[src, idx]
            for s, k, d, c, i, a, m in zip(src.tolist(), idx.tolist(), dest.tolist(), created.tolist(), inj.tolist(),
                                           at.tolist(), measured.tolist()):
                log = interfaces[d].log
                if log is not None:
                    packet = NetPacket((s << 32) | k, s, d, 1, c, None, m)
                    packet.injected_ps = i
                    log.append((packet, a))
