"""The network-level engine: one component steps every router and interface of a :class:`Noc`.

In the per-component network each router and interface is a kernel component and every link
word crosses a kernel channel, so a flit hop costs a channel send, a receive, a wake-up and a
tick of each end. The engine keeps the same router and interface objects (their allocation,
routing and packetisation code runs unchanged, see :meth:`NocRouter.begin` and
:meth:`NetworkInterface.step`) but moves link words itself through a timing wheel and visits
only routers with work, so a run gives the same packets with the same latencies (a randomized
test checks it cycle for cycle) at a fraction of the cost. Links between components are pure
delays here: with the default channel capacity of latency + 1 credits a network link never
blocks, so nothing is lost by not simulating their credits.

The engine also does the :class:`~.network.NocMonitor`'s checks, at the times the monitor
makes them (every ``watchdog`` cycles, at the window's end, idle while the network is empty), so
a run ends the same way at the same edge: measured, unstable after the drain limit, or with
the same DeadlockError naming the cycle of waiting VCs. The routers' and interfaces'
statistics are reported under the Noc as the per-component network reports them.

Memory traffic (a Noc with an ``address_map``) runs here too: the engine owns the memory ports
of every terminal (``mem_req``, ``mem_rsp``, ``to_memory``, ``from_memory``), because a port's
arrivals and returning credits wake its owner and only kernel components are woken; each
:class:`~.memory_interface.MemoryMappedInterface` serves the engine's ports of its terminal in
its own :meth:`step`, so the messages cross them at the edges the per-component network
crosses its interfaces' ports. The engine also forwards the functional path
(``backdoor_read``/``backdoor_write``) through the address map, since a requester finds the
engine at the other end of its port.

Choose it with ``Noc(engine="fast")`` for sweeps and benchmarks; keep the default
``engine="components"`` for waveforms (routers' occupancy registers and per-port handshakes are
not traced here) and for interfaces fed by other models' generic ``inp``/``out`` ports.
"""

from __future__ import annotations

from archmodel.kernel import Component, DeadlockError, In, Out, Param, at_least, component_rng, model

import networkx as nx

from .address_map import ForwardsFunctionalAccess
from .memory_interface import RequestTrip, ResponseTrip


@model(catalogue=False)
class NocEngine(ForwardsFunctionalAccess, Component):
    """Steps all routers and interfaces of its parent :class:`Noc` each cycle, moving link
    words with their link latencies, and checks the network when :class:`NocMonitor` would
    (stop when every measured packet has arrived, ``unstable`` after the drain limit, a
    DeadlockError when flits are buffered and none moved since the previous check). Owns the
    memory ports of ``memory_terminals`` terminals (see the module docstring)."""

    memory_terminals = Param(int, 0, "terminals with memory ports (0 unless the Noc has an address map)",
                             check=at_least(0))
    mem_req = In("per terminal: a requester's MemRequests", count="memory_terminals", required=False)
    mem_rsp = Out("per terminal: MemResponses to the requester", count="memory_terminals", required=False)
    to_memory = Out("per terminal: MemRequests to the memory there", count="memory_terminals", required=False)
    from_memory = In("per terminal: that memory's MemResponses", count="memory_terminals", required=False)

    def setup(self) -> None:
        self.unstable = False
        self.r_wheel: dict = {}  # time -> [(router, port, flit, credit)] arriving then
        self.n_wheel: dict = {}  # time -> [(terminal, word)] arriving then
        self.ni_wakes: dict = {}  # time -> {terminal} with packets due then
        self.busy_routers: set = set()  # routers with heads to allocate or flits to switch
        self.sends: dict = {}  # time -> {router} with link words to send then
        self.busy_terminals: set = set()
        self.check_ps = None  # the monitor's next check, None while it would be idle
        self.moved = True  # a link word moved since the previous check (the first finds none before it)
        self.port_terminals: list = []
        self._reactions: dict = {}  # (input port, output port) -> reaction_ps
        self._reaction_table: dict = {}  # input port -> reactions(input port)
        self._answers: dict = {}  # (memory terminal, requester) -> _answer_after_ps
        self.steps = 0  # edges this engine has ticked (the lookahead bounds are cached per edge)
        self.bounds_at = None
        self.bounds: dict = {}
        self.answers: dict = {}

    def start(self) -> None:
        noc = self.parent
        period = self.period = self.domain.period_ps
        seed = self.sim.seed
        for router in noc.routers:
            router.sim = self.sim  # for the time in its errors; it is never scheduled
            router.begin(period, component_rng(seed, router.path), False)
        pm = noc.port_map
        for ni in noc.interfaces:
            ni.sim = self.sim  # for the time in its errors; it is never scheduled
            ni.begin(self.now, period, self.domain.phase_ps, component_rng(seed, ni.path))
        # Where each router port's words go: (is_router, target, target port, delay in ps).
        self.links = []
        terminal_at = {(pm.terminal_router[t], pm.terminal_port[t]): t for t in range(pm.terminals)}
        for u in pm.routers:
            row = []
            for p, v in enumerate(pm.neighbour[u]):
                if v is not None:
                    row.append((True, v, pm.in_port_from[v][u], pm.latency(u, v) * period))
                elif (u, p) in terminal_at:
                    row.append((False, terminal_at[(u, p)], 0, noc.ejection_latency * period))
                else:
                    row.append(None)
            self.links.append(row)
            # Deadlock reports name the input each output port feeds, as the channels would.
            noc.routers[u].downstream = [self._fed_port(link) for link in row]
        self.injection = [(pm.terminal_router[t], pm.terminal_port[t]) for t in range(pm.terminals)]
        self.injection_delay = noc.injection_cycles * period
        self.measuring = noc.measurement is not None and noc.stop_when_measured
        self.check_ps = self.domain.phase_ps  # the monitor ticks at the first edge
        self.busy_terminals = set(range(pm.terminals))  # every interface ticks at the first edge
        # Interfaces whose ports carry memory traffic: checked every edge the engine is woken,
        # since a message or credit on their ports wakes the engine, not them.
        self.port_terminals = [t for t in range(self.memory_terminals) if noc.interfaces[t].memory_ports_in_use()]
        self.port_terminal = {}  # memory port -> its terminal
        for t in range(self.memory_terminals):
            for port in (self.mem_req[t], self.mem_rsp[t], self.to_memory[t], self.from_memory[t]):
                self.port_terminal[port] = t
        self._plan_bounds()

    def send_packet(self, ni, dest: int, size: int, payload):
        """:meth:`NetworkInterface.send_packet` for an interface this engine steps: the packet
        is created when the per-component network would create it (time 0 before the first
        run, else at the first edge after the simulator's time) and the engine steps the
        interface then."""
        sim = self.sim
        started = sim is not None and sim.started
        when = self.domain.edge_after(sim.now) if started else 0
        packet = ni.create_packet(dest, size, payload, when)
        self.bounds_at = None  # a packet created between edges changes the lookahead bounds
        if started:
            edge = self._edge_at_or_after(when)
            wakes = self.ni_wakes.get(edge)
            if wakes is None:
                self.ni_wakes[edge] = {ni.terminal}
            else:
                wakes.add(ni.terminal)
            self.wake_at(edge)
        return packet

    def _edge_at_or_after(self, time_ps: int) -> int:
        period, phase = self.domain.period_ps, self.domain.phase_ps
        return phase + max(0, -(-(time_ps - phase) // period)) * period

    def _fed_port(self, link) -> str | None:
        if link is None:
            return None
        to_router, target, port, _ = link
        noc = self.parent
        return noc.routers[target].inp[port].path if to_router else noc.interfaces[target].from_router.path

    def holding(self) -> str | None:
        """Flits buffered in the routers (for the kernel's deadlock check when all sleep)."""
        buffered = sum(r.buffered for r in self.parent.routers)
        return f"{buffered} flits" if buffered else None

    # -- lookahead (archmodel.kernel.lookahead) --------------------------------------------
    # A message leaves on mem_rsp[t] only when the tail of a response packet for t arrives
    # there, on to_memory[t] when a request's does. So a port's earliest send is the soonest
    # any such flit can reach terminal t from where it is now (a router's pipeline, a link, a
    # source queue), each leg at its least time; and a message arriving on a memory port
    # reaches the other terminal's port no sooner than the network's least latency.

    def _plan_bounds(self) -> None:
        """The least cycles from a flit leaving each router to its arrival at each router's
        terminals, for heads (every stage at every router) and other flits (switch
        allocation and traversal only, their head having routed and allocated)."""
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

    def _port_bounds(self) -> dict:
        """Per memory port in use, the soonest time (ps) a message can leave on it from what
        the network holds now (see the comment above); cached for the current edge."""
        now = self.sim.now
        key = (now, self.steps)
        if self.bounds_at == key:
            return self.bounds
        noc = self.parent
        pm = noc.port_map
        period = self.period
        bounds: dict = {}

        def offer(packet, at: int) -> None:
            payload = packet.payload
            if isinstance(payload, ResponseTrip):
                port = self.mem_rsp[packet.dest]
            elif isinstance(payload, RequestTrip):
                port = self.to_memory[packet.dest]
                # and its answer, through the memory there, back to the requester
                answer = self.mem_rsp[payload.requester]
                answered = at + self._answer_after_ps(packet.dest, payload.requester)
                if answer not in bounds or answered < bounds[answer]:
                    bounds[answer] = answered
            else:
                return
            if port not in bounds or at < bounds[port]:
                bounds[port] = at

        def offer_flit(flit, at_router: int, leave: int) -> None:
            # leaves router at_router at `leave`; the tail follows one cycle per flit
            packet = flit.packet
            reach = self.reach[flit.head, at_router][pm.terminal_router[packet.dest]]
            offer(packet, leave + (reach + packet.size - 1 - flit.index) * period)

        for r, router in enumerate(noc.routers):
            for flit, _, leave, _, _ in router.departures(now):
                offer_flit(flit, r, leave)
        for at, words in self.r_wheel.items():
            for r, _, flit, _ in words:
                if flit is not None:
                    stages = self.head_stages if flit.head else self.body_stages
                    offer_flit(flit, r, at + stages * period)
        for at, words in self.n_wheel.items():
            for _, (flit, _) in words:
                if flit is not None:
                    offer(flit.packet, at + (flit.packet.size - 1 - flit.index) * period)
        for u, ni in enumerate(noc.interfaces):
            for packet in ni.queue:
                offer(packet, now + noc.min_latency(u, packet.dest, packet.size) * period)
            packet = ni.sending
            if packet is not None:
                offer(packet, max(now, packet.injected_ps + noc.min_latency(u, packet.dest, packet.size) * period))
            _, mem_rsp, to_memory, _ = ni.io
            if ni.to_requester:
                bounds[mem_rsp] = now
            if ni.for_memory:
                bounds[to_memory] = now
        self.bounds_at, self.bounds = key, bounds
        self.answers = {}  # requester -> _answer_bound, for the same edge
        return bounds

    def _answer_bound(self, t: int) -> int | None:
        """The soonest answer to a request of terminal t's at a memory (see
        :meth:`_memory_side_bounds`), cached with :meth:`_port_bounds`: only the requesters
        asked about are worked out (a question about one cluster asks for its own port)."""
        self._port_bounds()
        known = self.answers.get(t, False)
        if known is False:
            found: dict = {}
            for u in self.port_terminals:
                self._memory_side_bounds(u, self.sim.now, found, t)
            known = self.answers[t] = found.get(self.mem_rsp[t])
        return known

    def _memory_side_bounds(self, u: int, now: int, bounds: dict, only: int) -> None:
        """Into ``bounds``: the soonest answer to requester ``only``'s requests at terminal
        u's memory (waiting to be passed on, on their way to it, held by it) and to its
        responses on their way back from it, as its ``mem_rsp``. A memory that can say when
        it answers one client (``earliest_answer_ps``, the DRAM controllers and the
        interleaved memory) is asked about the requester's own; another, when it answers
        anyone."""
        forward, back = self.to_memory[u].channel, self.from_memory[u].channel
        if forward is None or back is None:
            return
        ni = self.parent.interfaces[u]
        noc, period = self.parent, self.period
        back_ps = back.delay if back.same_domain else back.tail_delay

        def answer(requester: int, leaves: int) -> None:
            # a response leaving the memory at `leaves` reaches mem_rsp[requester] then at the soonest
            port = self.mem_rsp[requester]
            at = leaves + back_ps + noc.min_latency(u, requester) * period
            if port not in bounds or at < bounds[port]:
                bounds[port] = at

        for arrival, response in back.flight:
            trip = ni.at_memory.get(response.tag)
            if trip is not None and trip.requester == only:
                port = self.mem_rsp[only]
                at = max(arrival, now) + noc.min_latency(u, only) * period
                if port not in bounds or at < bounds[port]:
                    bounds[port] = at
        react = self._memory_reaction_ps(u)
        if (any(trip.requester == only for trip in ni.early_requests.values())
                or any(request.source[0] == only for request in ni.for_memory)):
            # passed on now at the soonest, over the link to the memory
            answer(only, now + (forward.delay if forward.same_domain else forward.tail_delay) + react)
        memory = forward.dst_owner
        for arrival, request in forward.flight:
            if request.source[0] == only:
                answer(only, max(arrival, now) + react)
        clients = {(only, trip.request.source) for trip in ni.at_memory.values() if trip.requester == only}
        per_client = getattr(memory, "earliest_answer_ps", None)
        if per_client is None:
            if clients:
                leaves = memory.earliest_send_ps(back.src)
                if leaves is not None:
                    answer(only, max(leaves, now))
            return
        for client in clients:
            leaves = per_client(client)
            if leaves is not None:
                answer(client[0], max(leaves, now))

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
        requester that asked. None: only a new request can make one."""
        bound = self._port_bounds().get(port)
        t = self.port_terminal.get(port)
        if t is None:
            return bound
        now = self.sim.now
        to_memory = port is self.to_memory[t]
        if not to_memory:
            answer = self._answer_bound(t)
            if answer is not None and (bound is None or answer < bound):
                bound = answer
        # requests on their way to mem_req (sent since the bounds were cached, too)
        for u in (self.port_terminals if to_memory else (t,)):
            channel = self.mem_req[u].channel
            if channel is None:
                continue
            for arrival, request in channel.flight:
                dest = self._destination(u, request)
                if dest is None or (to_memory and dest != t):
                    continue
                at = max(arrival, now) + (self.parent.min_latency(u, t) * self.period if to_memory
                                          else self._trip_ps(u, dest))
                if bound is None or at < bound:
                    bound = at
        return bound

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

    def tick(self) -> None:
        self.steps += 1
        now = self.sim.now
        noc = self.parent
        if self.measuring:
            noc.measurement.reach(now)  # a sample boundary is judged before this edge's moves
        routers = noc.routers
        busy = self.busy_routers
        moved = False
        words = self.r_wheel.pop(now, None)
        if words is not None:
            moved = True
            for r, p, flit, credit in words:
                routers[r].take(p, flit, credit, now)
                busy.add(r)
        if self._step_terminals(now):
            moved = True
        if busy:
            self._allocate(now)
        senders = self.sends.pop(now, None)
        if senders is not None:
            self._send(now, senders)
            moved = True
        if moved:
            self.moved = True
            # Flits move inside this one component, on no kernel channel: tell the kernel's
            # watchdog, or a busy network looks stuck to it after one window.
            self.progress()
        if now == self.check_ps and self._check(now):
            return
        self._rest(now)

    def _check(self, now: int) -> bool:
        """What :meth:`NocMonitor.tick` does, after this edge's moves: stop when the measurement
        is done or past the drain limit (then return True), raise DeadlockError when flits are
        buffered and nothing moved since the previous check, and set the next check."""
        noc = self.parent
        meas = noc.measurement
        period = self.period
        if self.measuring and meas.latency_unstable:
            return True  # the stability rule stopped the run at this edge
        if self.measuring and now >= meas.end_ps:
            if meas.outstanding == 0:
                self.sim.stop("measured")
                return True
            if now >= meas.end_ps + noc.drain_limit * period:
                self.unstable = True
                self.sim.stop("unstable")
                return True
        buffered = any(r.buffered for r in noc.routers)
        if buffered and not self.moved:
            raise DeadlockError(noc.deadlock_report(now))
        self.moved = False
        window_open = self.measuring and now < meas.end_ps
        if not (buffered or window_open or (self.measuring and meas.outstanding)
                or any(ni.queue or ni.sending for ni in noc.interfaces)):
            # Idle until an interface creates a packet, as the monitor.
            self.check_ps = None
            for ni in noc.interfaces:
                ni.monitor_hook = self._wake_for_work
            return False
        self.check_ps = now + noc.watchdog * period
        if window_open and meas.end_ps < self.check_ps:
            self.check_ps = meas.end_ps
        return False

    def _wake_for_work(self) -> None:
        """An interface created a packet while the checks were idle: check next edge."""
        # From a send_packet between runs the time may lie between edges.
        self.check_ps = self._edge_at_or_after(self.sim.now + self.period)
        for ni in self.parent.interfaces:
            ni.monitor_hook = None

    def _step_terminals(self, now: int) -> bool:
        """Step the interfaces with words arriving or work to do; returns whether a link word
        moved (arrived at an interface or left one)."""
        interfaces = self.parent.interfaces
        arriving = self.n_wheel.pop(now, None)
        due = self.busy_terminals
        woken = self.ni_wakes.pop(now, None)
        if woken is not None:
            due |= woken
        for t in self.port_terminals:
            if interfaces[t].port_work():
                due.add(t)
        if arriving is not None:
            words = dict(arriving)
            due.update(words)
        else:
            words = None
        if not due:
            return False
        moved = words is not None
        self.busy_terminals = still = set()
        r_wheel = self.r_wheel
        at = now + self.injection_delay
        for t in due:
            ni = interfaces[t]
            word = ni.step(now, words.get(t) if words is not None else None)
            if word is not None:
                moved = True
                r, p = self.injection[t]
                queue = r_wheel.get(at)
                if queue is None:
                    r_wheel[at] = [(r, p, word[0], word[1])]
                else:
                    queue.append((r, p, word[0], word[1]))
            if ni.busy():
                still.add(t)
            else:
                for when in (ni.next_packet_ps, ni.trace_queue[0][0] if ni.trace_queue else None):
                    if when is not None:
                        wakes = self.ni_wakes.get(when)
                        if wakes is None:
                            self.ni_wakes[when] = {t}
                        else:
                            wakes.add(t)
        return moved

    def _allocate(self, now: int) -> None:
        """VC and switch allocation in every router that has requests; a router whose
        switch moved flits sends their words (and the credits) when their delays pass."""
        routers = self.parent.routers
        sends = self.sends
        idle = None
        for r in self.busy_routers:
            router = routers[r]
            if router.arbitrate(now):
                for at in (now + router.st_total, *[now + d for d in router.credit_times]):
                    senders = sends.get(at)
                    if senders is None:
                        sends[at] = {r}
                    else:
                        senders.add(r)
            if not router.has_requests():
                if idle is None:
                    idle = [r]
                else:
                    idle.append(r)
        if idle is not None:
            self.busy_routers.difference_update(idle)

    def _send(self, now: int, senders) -> None:
        """The link words of ``senders`` due now go on their links."""
        routers = self.parent.routers
        links = self.links
        r_wheel, n_wheel = self.r_wheel, self.n_wheel
        for r in senders:
            words = routers[r].words_due(now)
            if words is None:  # a credit time no winner of that edge used
                continue
            row = links[r]
            for p, (flit, credit) in words.items():
                to_router, target, port, delay = row[p]
                at = now + delay
                if to_router:
                    queue = r_wheel.get(at)
                    if queue is None:
                        r_wheel[at] = [(target, port, flit, credit)]
                    else:
                        queue.append((target, port, flit, credit))
                else:
                    queue = n_wheel.get(at)
                    if queue is None:
                        n_wheel[at] = [(target, (flit, credit))]
                    else:
                        queue.append((target, (flit, credit)))

    def _rest(self, now: int) -> None:
        """Tick next edge while anything is in flight or busy, else sleep until the next
        packet is due or the next check."""
        if self.busy_routers or self.busy_terminals or self.r_wheel or self.n_wheel or self.sends:
            return
        soonest = min(self.ni_wakes) if self.ni_wakes else None
        for check in (self.check_ps, self.parent.measurement.next_check_ps if self.measuring else None):
            if check is not None and (soonest is None or check < soonest):
                soonest = check
        self.sleep()
        if soonest is not None:
            self.wake_at(soonest)
