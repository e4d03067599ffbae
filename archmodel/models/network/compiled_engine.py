"""A compiled network loop (numba) for :class:`~.network.Noc` in BookSim's reference configuration.

``Noc(engine="compiled")`` runs the whole network (injection, lookahead routing, VC allocation,
iSLIP switch allocation, traversal, credits, ejection and the measurement) in one ``@njit``
function over preallocated int64 arrays, with the decisions of the routers and interfaces that
``engine="fast"`` steps in Python, so a run gives the same packets at the same times (a test
compares the per-packet logs). The random draws are those of the interfaces' own streams: each
interface's generator is seeded from its kernel stream exactly as :meth:`NetworkInterface.begin`
seeds it, and the packets (creation time, destination) are drawn from it in Python, in the
interface's order, a chunk of cycles ahead of the compiled loop.

Supported: packets of any number of flits (``packet_size``, wormhole: a packet holds its output
VC from its head to its tail), iSLIP with any number of iterations, ``wait_for_tail_credit``,
routing with a table form (:attr:`.routing.Routing.table_form`) and one output port per hop
(``dor`` on a mesh, ``dateline`` on a torus or ring, its VC classes and its ties at k/2: the
loop looks the route up in :meth:`.routing.Routing.table` and tosses the router's coin for the
packet as :meth:`NocRouter.route_coin` does, with :func:`.routing.tie_coin` compiled), injection
on every VC, Bernoulli injection of a synthetic pattern, ``stop_when_measured``, both stability
rules. The loop itself is in :mod:`.compiled_loop`. Anything else raises ParameterError naming
why; use ``engine="fast"``. Leaves out: deadlock reports naming the wait cycle (a stall is
reported without it), packets sent with ``send_packet``, traces, continuing a run after it
stopped.

Memory traffic (a Noc with an ``address_map``) runs on
:class:`~.compiled_memory_engine.CompiledMemoryEngine` instead, the fast engine with its flit
level in numba, under the same routing, router and delay limits (:func:`refusal`).
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from archmodel.kernel import Component, DeadlockError, ModelAssertion, ParameterError, compiled, component_rng, model

from .compiled_loop import (C_CR, C_DEPTH, C_DRAIN, C_END, C_INJ, C_ITERS, C_LATENCY_RULE, C_P, C_PERIOD,
                            C_PHASE, C_R, C_RANGED, C_RC, C_SAMPLE, C_SIZE, C_START, C_ST, C_SW, C_T, C_THRESHOLD,
                            C_V, C_VA, C_WAIT, C_WARMUP, C_WATCHDOG, CONFIG_SIZE, FAILED, MAX_PACKET_FLITS, RUNNING, S_ACCEPTED, S_CHECK,
                            S_CYCLE, S_DONE_LAT, S_DONE_N, S_EXCEEDED, S_FLIGHT, S_FLIGHT_CREATED, S_MEASURED,
                            S_MOVED, S_NEXT_STABLE, S_OFFERED, S_OUTSTANDING, S_UNMEASURED, STALLED, STATE_SIZE,
                            UNSTABLE)
from .compiled_loop import run as synthetic_loop
from .flit import NetPacket
from .routing import vc_class_range

_WHEEL = 16  # cycles of the event wheel: more than the longest link + pipeline delay
_CHUNK = 1000  # cycles of packets drawn ahead of the compiled loop
BATCH_SECONDS = 0.25
"""The longest a batch of chunks runs before the engine hands back to the kernel (so a stop
asked meanwhile, by Ctrl-C or SIGTERM, takes effect within about this long)."""
_USE_FAST = "engine='fast' runs every configuration with the same results"

def refusal(noc) -> str | None:
    """Why ``noc`` cannot run on the compiled engine (its configuration, its routing or its
    delays), or None when it can: what ``engine="compiled"`` refuses with, and what
    ``engine="auto"`` asks before choosing it."""
    why = compiled.unavailable_reason() or unsupported_reason(noc)
    if why is not None:
        return why
    route = noc.route
    one_port = (f"routing {noc.routing!r} on {noc.topology!r} (only routing with one output port per hop given by "
                "the router, input port and VC class, destination and coin: dor, dateline)")
    if not route.table_form:
        return one_port
    for r in noc.port_map.routers:
        for sets in route.table(r).values():
            for heads, tails in sets:
                if len(heads) != 1 or (tails is not None and len(tails) != 1):
                    return one_port
    if tuple(route.injection_vcs(NetPacket(0, 0, 0, 1))) != (0, noc.vcs):
        return "injection on some VCs only (it needs every VC)"
    pm = noc.port_map
    links = [pm.latency(u, v) for u in pm.routers for v in pm.neighbour[u] if v is not None]
    widest = max(links + [noc.ejection_latency])
    longest = max(noc.sw_alloc_delay + noc.st_delay + widest, noc.sw_alloc_delay + noc.credit_delay + widest,
                  noc.credit_delay + noc.injection_cycles)
    if longest >= _WHEEL:
        return f"delays of {longest} cycles (only below {_WHEEL})"
    return None


def unsupported_reason(noc) -> str | None:
    """Why ``noc`` cannot run on the compiled engine, or None when it can (with an address map,
    on :class:`~.compiled_memory_engine.CompiledMemoryEngine`)."""
    if noc.address_map:
        checks: tuple = (
            (noc.traffic == "none", "synthetic traffic beside memory traffic"),
            (not noc.trace_file, "trace_file beside memory traffic"),
        )
    else:
        checks = (
            (noc.packet_size < MAX_PACKET_FLITS, f"packet_size {noc.packet_size} (only below {MAX_PACKET_FLITS} flits)"),
            (noc.traffic != "none", "no synthetic traffic (traces and driven interfaces are not supported)"),
            (noc.injection == "bernoulli", f"injection {noc.injection!r} (only bernoulli)"),
            (not noc.trace_file, "trace_file (traces are not supported)"),
            (noc.stop_when_measured, "stop_when_measured=False (the run must end with its measurement)"),
            (noc.sample_periods >= 1, "no sample period"),
        )
    checks = (
        (noc.router == "NocRouter", f"router {noc.router!r} (only NocRouter)"),
        (noc.port_map.terminals <= 1 << 16, f"{noc.port_map.terminals} terminals (only up to {1 << 16})"),
        (noc.allocator == "islip", f"allocator {noc.allocator!r} (only islip)"),
    ) + checks
    for ok, why in checks:
        if not ok:
            return why
    return None


def network_tables(noc) -> SimpleNamespace:
    """The wiring and the routing of ``noc`` as the compiled loops read them: ``shape`` (routers,
    ports, VCs, terminals), per router port where its words go (``out_kind`` 1 a router, 2 a
    terminal; ``out_target``, ``out_tport``, ``out_lat``), the routing table ``route`` and
    whether it is ``ranged``, ``vc_class``, and each terminal's router and port."""
    tables = SimpleNamespace()
    pm = noc.port_map
    R, T, V = len(pm.routers), pm.terminals, noc.vcs
    P = max(pm.ports(r) for r in pm.routers)
    tables.shape = (R, P, V, T)
    tables.nports = np.array([pm.ports(r) for r in pm.routers], np.int64)
    tables.out_kind = np.zeros((R, P), np.int64)
    tables.out_target = np.zeros((R, P), np.int64)
    tables.out_tport = np.zeros((R, P), np.int64)
    tables.out_lat = np.zeros((R, P), np.int64)
    terminal_at = {(pm.terminal_router[t], pm.terminal_port[t]): t for t in range(T)}
    for u in pm.routers:
        for p, v in enumerate(pm.neighbour[u]):
            if v is not None:
                tables.out_kind[u, p] = 1
                tables.out_target[u, p] = v
                tables.out_tport[u, p] = pm.in_port_from[v][u]
                tables.out_lat[u, p] = pm.latency(u, v)
            elif (u, p) in terminal_at:
                tables.out_kind[u, p] = 2
                tables.out_target[u, p] = terminal_at[(u, p)]
                tables.out_lat[u, p] = noc.ejection_latency
    # The routing as a table (Routing.table), one row of 7 per (router, input port, input
    # VC class, destination): output port, first and end VC at coin 0, the same at coin 1,
    # and whether the coin counts; one input port and class where the routing reads neither
    # (a small table stays in cache).
    route = noc.route
    inputs, classes = (P, route.classes) if route.reads_input else (1, 1)
    tables.route = np.zeros((R, inputs, classes, T, 7), np.int64)
    tables.ranged = False  # some head may take only part of its output port's VCs
    for r in pm.routers:
        for (p, c), sets in route.table(r).items():
            if p < inputs and c < classes:
                rows = [(*h[0], *(h[0] if t is None else t[0]), t is not None) for h, t in sets]
                tables.route[r, p, c] = rows
                tables.ranged = tables.ranged or any(row[1:3] != (0, V) or row[4:6] != (0, V) for row in rows)
    tables.vc_class = np.zeros(V, np.int64)
    for c in range(route.classes):
        first, end = vc_class_range(c, route.classes, V)
        tables.vc_class[first:end] = c
    tables.term_router = np.array(pm.terminal_router[:T], np.int64)
    tables.term_port = np.array(pm.terminal_port[:T], np.int64)
    return tables


def router_config(noc, shape: tuple, ranged: bool, period: int, phase: int) -> np.ndarray:
    """The loops' configuration array with the routers' and interfaces' part filled in."""
    R, P, V, T = shape
    cfg = np.zeros(CONFIG_SIZE, np.int64)
    cfg[[C_R, C_P, C_V, C_DEPTH, C_T]] = R, P, V, noc.buffer_depth, T
    cfg[C_VA], cfg[C_ST], cfg[C_CR], cfg[C_RC] = (noc.vc_alloc_delay, noc.sw_alloc_delay + noc.st_delay,
                                                  noc.credit_delay, noc.routing_delay)
    cfg[C_INJ], cfg[C_PERIOD], cfg[C_PHASE], cfg[C_SW] = noc.injection_cycles, period, phase, noc.sw_alloc_delay
    cfg[C_ITERS], cfg[C_WAIT] = noc.alloc_iterations, noc.wait_for_tail_credit
    cfg[C_RANGED] = ranged
    return cfg


def router_state(run, shape: tuple, depth: int):
    """``run`` with the arrays of the routers (buffers, VC and allocator state, statistics),
    of the interfaces' flow control and of the event wheel, as at the start of a run."""
    R, P, V, T = shape
    n = R * P * V

    def ivc(init: int) -> np.ndarray:
        return np.full(n, init, np.int64)

    run.buf_id, run.buf_arr = np.zeros((n, depth), np.int64), np.zeros((n, depth), np.int64)
    (run.buf_head, run.buf_count, run.ivc_state, run.ivc_out, run.ivc_ready,
     run.ivc_dest_port, run.ivc_lo, run.ivc_hi) = ivc(0), ivc(0), ivc(0), ivc(-1), ivc(0), ivc(0), ivc(0), ivc(0)
    run.ovc_free = np.ones(n, np.bool_)
    # the tail left (wait_for_tail_credit): the input VC that sent it, until the VC frees when
    # its credits are back (-1: not waiting); a deadlock report names it as the VC's holder
    run.ovc_wait = ivc(-1)
    run.ovc_credits = ivc(depth)
    run.va_in_ptr, run.va_out_ptr = ivc(0), ivc(0)
    run.sa_in_ptr, run.sa_out_ptr, run.sa_vc_ptr = (np.zeros(R * P, np.int64) for _ in range(3))
    run.buffered, run.r_flits, run.r_packets, run.r_va_stalls = (np.zeros(R, np.int64) for _ in range(4))
    run.r_next = np.zeros(R, np.int64)  # the first cycle to step each router at (see compiled_loop.step_routers)
    run.ni_credits = np.full((T, V), depth, np.int64)
    run.ni_busy = np.zeros((T, V), np.bool_)  # a packet is being sent on the VC, or its tail's credit awaited
    run.ni_wait = np.zeros((T, V), np.bool_)  # the tail left; the VC frees when its credits are back
    run.ni_vc_ptr, run.ni_ejected, run.ni_flits, run.ni_send_vc = (np.zeros(T, np.int64) for _ in range(4))
    run.ni_send = np.full(T, -1, np.int64)  # the index of the next flit of the packet being sent, or -1
    cap = 2 * R * P + 2 * T + 8
    run.ev_kind, run.ev_a, run.ev_b = (np.zeros((_WHEEL, cap), np.int64) for _ in range(3))
    run.ev_n = np.zeros(_WHEEL, np.int64)
    run.scratch = (np.zeros(P * V, np.int64), np.zeros(P, np.int64), np.zeros((P, P * V), np.int64),
                   np.zeros(P * V, np.int64), np.zeros((P, P), np.int64), np.zeros(P, np.int64),
                   np.zeros(P, np.int64), np.zeros(P * V, np.int64), np.zeros(P * V, np.int64),
                   np.zeros(P, np.int64), np.zeros(P, np.int64),
                   np.zeros((T, 2), np.int64))  # (the last: the flits reaching interfaces at a cycle)
    return run


def write_back_routers(noc, run) -> None:
    """The routers' statistics from the loops' arrays."""
    for r, router in enumerate(noc.routers):
        router.flits.value, router.packets.value = int(run.r_flits[r]), int(run.r_packets[r])
        router.va_stalls.value = int(run.r_va_stalls[r])


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

    def start(self) -> None:
        self._refuse_unsupported()
        noc = self.parent
        self._tables()
        seed = self.sim.seed
        period = self.domain.period_ps
        for ni in noc.interfaces:
            ni.begin(self.now, period, self.domain.phase_ps, component_rng(seed, ni.path))
        # The routers are begun as the fast engine begins them, for their tie keys: the loop
        # tosses each router's coin for a packet as NocRouter.route_coin does.
        self.route_key = np.zeros(len(noc.routers), np.int64)
        for r, router in enumerate(noc.routers):
            router.begin(period, component_rng(seed, router.path), False)
            self.route_key[r] = router.route_key

    def _refuse_unsupported(self) -> None:
        noc = self.parent
        why = refusal(noc)
        if why is not None:
            raise ParameterError(f"{noc.path}: engine='compiled' does not support {why}", hint=_USE_FAST)

    def _tables(self) -> None:
        # (the engine's attributes: the loop's arguments are looked up on it)
        vars(self).update(vars(network_tables(self.parent)))

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
        T = self.shape[3]
        period, phase = self.domain.period_ps, self.domain.phase_ps
        cfg = router_config(noc, self.shape, self.ranged, period, phase)
        cfg[C_START], cfg[C_END], cfg[C_DRAIN], cfg[C_WATCHDOG] = meas.start_ps, meas.end_ps, noc.drain_limit, noc.watchdog
        cfg[C_SAMPLE], cfg[C_WARMUP], cfg[C_THRESHOLD] = meas.sample_cycles, meas.warmup_periods, meas.threshold_cycles
        cfg[C_LATENCY_RULE] = meas.rule == "latency"
        cfg[C_SIZE] = noc.packet_size
        st = np.zeros(STATE_SIZE, np.int64)
        st[S_CYCLE] = self.domain.cycle_of(self.sim.now)
        st[S_CHECK] = st[S_CYCLE]
        st[S_MOVED] = 1
        st[S_NEXT_STABLE] = self.domain.cycle_of(meas.next_check_ps)
        st[S_EXCEEDED] = -1
        run = router_state(_LoopState(), self.shape, noc.buffer_depth)
        run.cfg, run.st, run.period, run.phase, run.K = cfg, st, period, phase, 256
        (run.ni_next, run.ni_created, run.n_gen, run.ni_delivered) = (np.zeros(T, np.int64) for _ in range(4))
        run.gen_created = np.zeros((T, run.K), np.int64)
        run.gen_dest = np.zeros((T, run.K), np.int64)
        run.injected = np.full((T, run.K), -1, np.int64)
        run.arrived = np.full((T, run.K), -1, np.int64)
        run.next_ps = [ni.next_packet_ps for ni in noc.interfaces]
        # What the Noc's latency distributions and the interfaces' logs held before this run:
        # each write-back replaces what this run added, so it can be repeated after every batch.
        run.latency_base = (len(noc.packet_latency.samples), len(noc.network_latency.samples))
        run.log_base = [None if ni.log is None else len(ni.log) for ni in noc.interfaces]
        run.loop = synthetic_loop.bind()  # compiled, or loaded from numba's cache, at the first run
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
                              self.route, self.vc_class, self.route_key, self.term_router, self.term_port, run.buf_id, run.buf_arr,
                              run.buf_head, run.buf_count, run.ivc_state, run.ivc_out, run.ivc_ready,
                              run.ivc_dest_port, run.ivc_lo, run.ivc_hi, run.ovc_free, run.ovc_wait,
                              run.ovc_credits, run.va_in_ptr, run.va_out_ptr,
                              run.sa_in_ptr, run.sa_out_ptr, run.sa_vc_ptr, run.buffered, run.r_next, run.r_flits,
                              run.r_packets, run.r_va_stalls, run.ni_credits, run.ni_busy, run.ni_wait,
                              run.ni_vc_ptr, run.ni_next, run.ni_send, run.ni_send_vc, run.ni_flits, run.ni_created,
                              run.gen_created, run.gen_dest, run.n_gen, run.injected, run.arrived, run.ni_ejected,
                              run.ni_delivered, run.ev_kind, run.ev_a, run.ev_b, run.ev_n, *run.scratch, until)
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
        meas.flight, meas.flight_created_ps = int(st[S_FLIGHT]), int(st[S_FLIGHT_CREATED])
        meas.done_ps, meas.done = int(st[S_DONE_LAT]), int(st[S_DONE_N])
        meas.next_check_ps = run.phase + int(st[S_NEXT_STABLE]) * period
        if st[S_EXCEEDED] >= 0:
            meas.exceeded_ps = run.phase + int(st[S_EXCEEDED]) * period
        meas.latency_unstable = status == UNSTABLE and meas.rule == "latency" and meas.exceeded_ps == stop_ps
        write_back_routers(noc, run)
        for t, ni in enumerate(interfaces):
            ni.created.value = ni.packet_ids = int(run.ni_created[t])
            ni.injected_flits.value = int(run.ni_flits[t])
            ni.ejected_flits.value, ni.delivered.value = int(run.ni_ejected[t]), int(run.ni_delivered[t])
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
                    packet = NetPacket((s << 32) | k, s, d, noc.packet_size, c, None, m)
                    packet.injected_ps = i
                    log.append((packet, a))
