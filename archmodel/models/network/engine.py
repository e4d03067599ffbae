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
engine at the other end of its port. What it tells the kernel's lookahead about those ports
is in :mod:`.engine_bounds`.

Choose it with ``Noc(engine="fast")`` for sweeps and benchmarks; keep the default
``engine="components"`` for waveforms (routers' occupancy registers and per-port handshakes are
not traced here) and for interfaces fed by other models' generic ``inp``/``out`` ports.
"""

from __future__ import annotations

from itertools import compress

from archmodel.kernel import Component, DeadlockError, In, Out, Param, at_least, component_rng, model

from .address_map import ForwardsFunctionalAccess
from .engine_bounds import MemoryPortBounds
from .router import ASKING, WON


@model(catalogue=False)
class NocEngine(ForwardsFunctionalAccess, MemoryPortBounds, Component):
    """Steps all routers and interfaces of its parent :class:`Noc` each cycle, moving link
    words with their link latencies, and checks the network when :class:`NocMonitor` would
    (stop when every measured packet has arrived, ``unstable`` after the drain limit, a
    DeadlockError when flits are buffered and none moved since the previous check). Owns the
    memory ports of ``memory_terminals`` terminals (see the module docstring)."""

    memory_terminals = Param(int, 0, "terminals with memory ports (0 unless the Noc has an address map)",
                             check=at_least(0))
    mem_req = In("per terminal: a requester's MemRequests", count="memory_terminals", required=False,
                 pair="mem_rsp", carries="requests")
    mem_rsp = Out("per terminal: MemResponses to the requester", count="memory_terminals", required=False,
                  pair="mem_req", carries="answers")
    to_memory = Out("per terminal: MemRequests to the memory there", count="memory_terminals", required=False,
                    pair="from_memory")
    from_memory = In("per terminal: that memory's MemResponses", count="memory_terminals", required=False,
                     pair="to_memory")

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
        self.port_polls: list = []
        self.poll_flights: list = []
        self.polled_ports: list = []  # the ports of port_polls, in the same order
        self.blocked_terminals: set = set()  # interfaces with a message waiting to leave on a served port
        self._reactions: dict = {}  # (input port, output port) -> reaction_ps
        self._reaction_table: dict = {}  # input port -> reactions(input port)
        self._answers: dict = {}  # (memory terminal, requester) -> _answer_after_ps
        self.steps = 0  # edges this engine has ticked (the lookahead bounds are cached per edge)
        self.bounds_at = None
        self.bounds: dict = {}
        self.heading: dict = {}  # requester -> its requests on their way to a memory (engine_bounds)
        self.answers: dict = {}
        self.on_its_way: dict = {}  # (requester, order) -> where its answer is (engine_bounds)

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
        # Where each router port's words go (per port of router u, row holds (to a router,
        # target, target port, delay in ps)).
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
            # Deadlock reports name the input each output port feeds, as the channels would.
            noc.routers[u].downstream = [self._fed_port(link) for link in row]
            # for _send: per port, (to a router, its key on the wheel, delay): a router's
            # (router, input port), which a link word (flit, credit) extends to a wheel entry
            self.links.append([None if link is None else
                               (link[0], (link[1], link[2]) if link[0] else link[1], link[3]) for link in row])
        # per router, the delays after a switch win at which its words are due (flits, credits)
        self.send_delays = [(router.st_total, *router.credit_times) for router in noc.routers]
        # the delays when every router has the same (the routers of a Noc share their
        # parameters; with a credit_delay those with terminals have one credit time more)
        self.shared_send_delays = self.send_delays[0] if len(set(self.send_delays)) == 1 else None
        self.injection = [(pm.terminal_router[t], pm.terminal_port[t]) for t in range(pm.terminals)]
        self.injection_delay = noc.injection_cycles * period
        self.measuring = noc.measurement is not None and noc.stop_when_measured
        self.check_ps = self.domain.phase_ps  # the monitor ticks at the first edge
        self.busy_terminals = set(range(pm.terminals))  # every interface ticks at the first edge
        # Interfaces whose ports carry memory traffic: checked every edge the engine is woken,
        # since a message or credit on their ports wakes the engine, not them.
        self.port_terminals = [t for t in range(self.memory_terminals) if noc.interfaces[t].memory_ports_in_use()]
        # what _step_terminals polls of them: the messages on their way in on each input
        # channel (a channel keeps one deque of them for its life)
        polled = [(t, port) for t in self.port_terminals
                  for port in (self.mem_req[t], self.from_memory[t], noc.interfaces[t].inp) if port.connected]
        self.port_polls = [(t, port.channel.flight) for t, port in polled]
        self.polled_ports = [port for _, port in polled]
        # their deques alone, in the same order: most are empty at most edges, and
        # itertools.compress skips those without a step of Python
        self.poll_flights = [flight for _, flight in self.port_polls]
        self.port_terminal_set = set(self.port_terminals)
        # What _step_terminals asks of each interface after its step: whether it has work
        # next edge. A message waiting on a port polled above makes it due then anyway (the
        # poll finds every message the port's ``valid`` would), so of those interfaces only
        # the network side is asked.
        self.busy_checks = [ni.network_busy if t in self.port_terminal_set else ni.busy
                            for t, ni in enumerate(noc.interfaces)]
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
        self.forget_bounds()  # a packet created between edges changes the lookahead bounds
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
        buffered = self.buffered_flits()
        return f"{buffered} flits" if buffered else None

    def buffered_flits(self) -> int:
        """The flits buffered in the routers."""
        return sum(r.buffered for r in self.parent.routers)

    def deadlock_report(self, now: int) -> str:
        """What the DeadlockError of a stalled network says (:meth:`Noc.deadlock_report`)."""
        return self.parent.deadlock_report(now)

    def write_back_statistics(self) -> None:
        """Bring the statistics of the routers and interfaces up to date for a report: they
        are, here, where the engine steps the objects that keep them (an engine keeping them
        elsewhere writes them back)."""

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
                # A credit alone gives a router something to allocate only when it wakes a
                # parked input VC or frees an output VC a head waits for (with 16 clusters on 4
                # DRAM channels one arbitration in six was of a router with nothing to
                # allocate); an arbitration without requests changes nothing, so such a
                # router is not stepped (take says which).
                if routers[r].take(p, flit, credit, now):
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
        buffered = self.buffered_flits() > 0
        if buffered and not self.moved:
            raise DeadlockError(self.deadlock_report(now))
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
        # Not stepped since it was last idle (else it is due already), an interface can have
        # work only from its served ports: a message waiting to leave (blocked_terminals,
        # kept at its steps, the only place the messages come and go) or one that has
        # arrived (a word from the router, a packet or a credit puts it in due instead).
        # Only the engine takes from these channels, in the steps below, so a message whose
        # time has come is still there; one on its way gives no work yet (a DRAM controller
        # sends its responses ahead, due many edges later).
        if self.blocked_terminals:
            self._add_unblocked(due)
        for t, flight in compress(self.port_polls, self.poll_flights):
            if flight[0][0] <= now:
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
        served = self.port_terminal_set
        blocked = self.blocked_terminals
        ni_wakes = self.ni_wakes
        busy_checks = self.busy_checks
        injection = self.injection  # per terminal, its (router, input port): a word's key on the wheel
        for t in due:
            ni = interfaces[t]
            word = ni.step(now, words.get(t) if words is not None else None)
            if t in served:
                if ni.to_requester or ni.for_memory:
                    blocked.add(t)
                else:
                    blocked.discard(t)
            if word is not None:
                moved = True
                queue = r_wheel.get(at)
                if queue is None:
                    r_wheel[at] = [injection[t] + word]
                else:
                    queue.append(injection[t] + word)
            if busy_checks[t]():
                still.add(t)
            else:
                # step it again when its next synthetic or trace packet is due
                when = ni.next_packet_ps
                if when is not None:
                    wakes = ni_wakes.get(when)
                    if wakes is None:
                        ni_wakes[when] = {t}
                    else:
                        wakes.add(t)
                if ni.trace_queue:
                    when = ni.trace_queue[0][0]
                    wakes = ni_wakes.get(when)
                    if wakes is None:
                        ni_wakes[when] = {t}
                    else:
                        wakes.add(t)
        return moved

    def _add_unblocked(self, due: set) -> None:
        """Add to ``due`` the interfaces with a message waiting to leave whose port may take it
        now. A message waits only after a ``try_send`` on its port failed at the interface's
        last step (it tries until a queue is empty or the port refuses), which marked the
        channel blocked; until the port is ``ready`` (a credit back, the link free) another
        try fails and changes nothing, and an interface that was not busy at its last step
        has no other work (else it is due already): with 16 clusters on 4 DRAM channels the
        memories' request queues are full and such steps were 38% of all. The port's
        ``ready`` marks it blocked again as that try would; a traced channel is tried at every
        edge as before, since a refused try shows in the waveform."""
        interfaces = self.parent.interfaces
        mem_rsp, to_memory = self.mem_rsp, self.to_memory
        for t in self.blocked_terminals:
            if t in due:
                continue
            ni = interfaces[t]
            if ni.to_requester:
                port = mem_rsp[t]
                if port.channel.traced or port.ready:
                    due.add(t)
                    continue
            if ni.for_memory:
                port = to_memory[t]
                if port.channel.traced or port.ready:
                    due.add(t)

    def _allocate(self, now: int) -> None:
        """VC and switch allocation in every router that has requests; a router whose
        switch moved flits sends their words (and the credits) when their delays pass."""
        routers = self.parent.routers
        sends = self.sends
        send_delays = self.send_delays
        shared = self.shared_send_delays
        won = [] if shared is not None else None  # with shared delays, the winners in order
        idle = None
        for r in self.busy_routers:
            state = routers[r].arbitrate_and_ask(now)
            if state & WON:
                if won is not None:
                    won.append(r)
                else:
                    for delay in send_delays[r]:
                        senders = sends.get(now + delay)
                        if senders is None:
                            sends[now + delay] = {r}
                        else:
                            senders.add(r)
            if not state & ASKING:
                if idle is None:
                    idle = [r]
                else:
                    idle.append(r)
        if won:
            # each time's senders get the winners in the order the loop above would have
            # added them one by one (a set built by the same insertions in the same order
            # iterates in the same order, and _send's order is the order of the words on
            # the wheels)
            for delay in shared:
                senders = sends.get(now + delay)
                if senders is None:
                    sends[now + delay] = set(won)
                else:
                    senders.update(won)
        if idle is not None:
            self.busy_routers.difference_update(idle)

    def _send(self, now: int, senders) -> None:
        """The link words of ``senders`` due now go on their links."""
        routers = self.parent.routers
        links = self.links
        r_wheel, n_wheel = self.r_wheel, self.n_wheel
        for r in senders:
            # (words_due's pop, without its call: about 70,000 of them in a run of 16
            # clusters on 4 DRAM channels)
            words = routers[r].outbox.pop(now, None)
            if words is None:  # a credit time no winner of that edge used
                continue
            row = links[r]
            for p, word in words.items():
                to_router, key, delay = row[p]
                at = now + delay
                if to_router:
                    queue = r_wheel.get(at)
                    if queue is None:
                        r_wheel[at] = [key + word]
                    else:
                        queue.append(key + word)
                else:
                    queue = n_wheel.get(at)
                    if queue is None:
                        n_wheel[at] = [(key, word)]
                    else:
                        queue.append((key, word))

    def working(self) -> bool:
        """Whether the next edge has work in the network (words on their way, routers with
        requests, interfaces with something to send or a credit to return)."""
        return bool(self.busy_routers or self.busy_terminals or self.r_wheel or self.n_wheel or self.sends)

    def _rest(self, now: int) -> None:
        """Tick next edge while anything is in flight or busy, else sleep until the next
        packet is due or the next check."""
        if self.working():
            return
        # A message waiting on a polled port (one its interface could not take yet) is seen
        # at the next edge (_step_terminals' poll); the kernel wakes a sleeper only for
        # messages still to arrive.
        for port in compress(self.polled_ports, self.poll_flights):
            if port.valid:
                return
        soonest = min(self.ni_wakes) if self.ni_wakes else None
        for check in (self.check_ps, self.parent.measurement.next_check_ps if self.measuring else None):
            if check is not None and (soonest is None or check < soonest):
                soonest = check
        self.sleep()
        if soonest is not None:
            self.wake_at(soonest)
