"""A whole network built from a topology graph, measured the way BookSim 2 measures."""

from __future__ import annotations

import networkx as nx

from archmodel.kernel import (ENGINES, Component, DeadlockError, Distribution, Formula, Param, ParameterError, at_least,
                              ParamGroup, Registry, connect, in_range, model)

from .compiled_engine import CompiledNocEngine, refusal
from .compiled_memory_engine import CompiledMemoryEngine
from .engine import NocEngine
from .address_map import AddressMap
from .interface import NetworkInterface
from .measurement import STABILITY_RULES, NetworkMeasurement
from .memory_interface import MemoryMappedInterface
from .router import NocRouter
from .simple_router import ROUTER_MODELS, SimpleRouter
from .routing import PortMap
from .routing_functions import make_routing
from .topology import build_topology
from .trace import by_source, read_trace
from .traffic import INJECTION_PROCESSES, TRAFFIC_PATTERNS


NOC_ENGINES = Registry("network engine", {
    "components": "every router and interface a kernel component (the reference; waveforms)",
    "python": "the same as 'components', the name every model with a compiled form takes",
    "fast": "one engine component steps every router and interface: the same results",
    "compiled": ENGINES["compiled"],
    "auto": "compiled where the configuration allows it, else fast",
})
"""What a Noc's ``engine`` parameter takes: the shared vocabulary (:data:`~archmodel.kernel.ENGINES`)
and the network's own fast engine."""


@model(catalogue=False)
class NocMonitor(Component):
    """Watches a :class:`Noc`: ends the measurement when the window closes with nothing
    outstanding, gives up after the drain limit (saturated), and reports a deadlock, with the
    wait cycle among VCs, when flits are buffered and nothing has moved for a watchdog period.
    It checks at the first edge, then every ``watchdog`` cycles, when the window closes and at
    every sample boundary (the stability rule, :class:`~.measurement.NetworkMeasurement`), and is
    idle (until an interface creates a packet) only when no flit is buffered or queued and no
    measured packet is outstanding: a measured flit on a link keeps the checks on schedule."""

    def setup(self) -> None:
        self.last_transfers = -1
        self.unstable = False
        self.idle = False
        self.check_ps = None  # the next watchdog and drain check (None: at the next tick)

    def wake_for_work(self) -> None:
        """An interface created a packet: resume watching if idle."""
        if self.idle:
            self.idle = False
            self.check_ps = None
            self.wake_in(1)

    def _sleep_until(self, check_ps: int) -> None:
        """Sleep until the next check, or the next sample boundary if sooner."""
        meas = self.parent.measurement
        self.check_ps = wake = check_ps
        if meas is not None and self.parent.stop_when_measured and meas.next_check_ps is not None:
            # a sample boundary is judged at its edge, whatever else ticks then
            wake = min(wake, meas.next_check_ps)
        self.sleep()
        self.wake_at(wake)

    def tick(self) -> None:
        noc = self.parent
        meas = noc.measurement
        now = self.sim.now
        period = self.domain.period_ps
        if meas is not None:
            meas.reach(now)
            if meas.latency_unstable:
                return  # the run stops at this edge, unstable
        if self.check_ps is not None and now < self.check_ps:
            self._sleep_until(self.check_ps)  # woken for a sample boundary only
            return
        if meas is not None and now >= meas.end_ps and noc.stop_when_measured:
            if meas.outstanding == 0:
                self.sim.stop("measured")
                return
            if now >= meas.end_ps + noc.drain_limit * period:
                self.unstable = True
                self.sim.stop("unstable")
                return
        transfers = self.sim.transfers
        buffered = any(r.buffered for r in noc.routers)
        if transfers == self.last_transfers and buffered:
            raise DeadlockError(noc.deadlock_report(now))
        self.last_transfers = transfers
        measuring = meas is not None and noc.stop_when_measured
        window_open = measuring and now < meas.end_ps
        waiting = buffered or (measuring and meas.outstanding) or any(ni.queue or ni.sending for ni in noc.interfaces)
        if not waiting and not window_open:
            self.idle = True  # an interface's next packet wakes us
            self.check_ps = None
            self.sleep()
            return
        wake = now + noc.watchdog * period
        if window_open and meas.end_ps < wake:
            wake = meas.end_ps
        self._sleep_until(wake)


@model
class Noc(Component):
    """A network on chip built from a topology generator: one router per graph node, one
    network interface per terminal, links along the graph's edges, a routing function, and
    BookSim 2's measurement (Jiang et al., ISPASS 2013).

    ``topology`` is a generator call (``mesh(8, 8)``, ``torus(4, 2)``, ``fat_tree(2, 3)``,
    ``dragonfly(2)``, ...); ``routing`` names a routing function; the router parameters are those
    of :class:`NocRouter` (``router = "SimpleRouter"`` for the single-cycle router). Link
    latency is ``link_latency`` unless the graph's edge says otherwise; injection and ejection
    links take ``injection_latency`` and ``ejection_latency`` cycles, and the interface's output
    register one more on the way in (:attr:`injection_cycles`, BookSim's channel timing).

    With ``trace_file`` set, the interfaces create the packets of that trace (format in
    :mod:`archmodel.models.network.trace`); without synthetic traffic every trace packet is
    measured and the run stops when the last has arrived.

    With ``traffic`` set, every interface generates synthetic traffic at ``rate`` flits per
    cycle. The run warms up for ``warmup_periods`` x ``sample_period`` cycles, then measures the
    packets created during ``sample_periods`` x ``sample_period`` cycles and, with
    ``stop_when_measured``, stops when all of them have arrived (injection continues meanwhile)
    or, unstable (past saturation), after ``drain_limit`` more cycles or, with
    ``stability = "latency"`` (BookSim's rule, the default), at the first sample boundary where
    the running average latency of the packets delivered and in flight passes
    ``latency_threshold`` (:class:`~.measurement.NetworkMeasurement`); ``stability = "drain"``
    leaves only the drain limit, recording the crossing (``measurement.exceeded_ps``).
    ``packet_latency`` (creation to tail arrival, source queueing included) and
    ``network_latency`` (head injection to tail arrival) are in cycles; ``accepted`` is
    flits per terminal per cycle arriving during the window. Every ``watchdog`` cycles a
    monitor checks that something moved while flits are buffered, else raises DeadlockError
    naming the cycle of waiting VCs.

    ``engine = "fast"`` steps the same routers and interfaces from one engine component
    (:mod:`archmodel.models.network.engine`): the same packets with the same latencies, several
    times faster, without waveforms of the routers. ``engine`` takes the vocabulary every
    model with a compiled form shares: ``"python"`` is the reference (``"components"``),
    ``"compiled"`` the numba loop (refused with the reason where the configuration needs
    more), ``"auto"`` the compiled loop where it applies and the fast engine elsewhere;
    ``stepping`` says which one runs.

    With ``address_map`` set (``[(start, end, terminal), ...]``, byte ranges ``[start, end)``,
    disjoint) the network carries memory traffic: every interface is a
    :class:`~.memory_interface.MemoryMappedInterface`, and the Noc offers per terminal the port
    arrays ``mem_req``/``mem_rsp`` (a requester's MemRequests in, its MemResponses out) and
    ``to_memory``/``from_memory`` (to the memory owning that terminal's ranges), in ``.arch`` as
    ``net.mem_req[0]``, in Python as :meth:`memory_port`. The ports are the interfaces' own
    under ``engine="components"`` and the engine's under ``engine="fast"`` and
    ``engine="compiled"`` (:mod:`.compiled_memory_engine`: the fast engine with the routers, links
    and interfaces' flit level in numba); all give the same responses at the same times.
    """

    topology = Param(str, "mesh(4, 4)", "topology generator call")
    routing = NocRouter.param_declaration("routing").copy()
    router = Param(str, "NocRouter", "router model", check=ROUTER_MODELS.check)
    # Every router takes these as the Noc is given them: declared once, by NocRouter.
    router_params = ParamGroup(NocRouter, "vcs", "buffer_depth", "routing_delay", "vc_alloc_delay",
                               "sw_alloc_delay", "st_delay", "credit_delay", "allocator", "alloc_iterations",
                               "wait_for_tail_credit", "occupancy_registers")
    link_latency = Param(int, 1, "router-to-router link latency", unit="cycles", check=at_least(1))
    injection_latency = Param(int, 1, "interface-to-router link latency", unit="cycles", check=at_least(1))
    ejection_latency = Param(int, 1, "router-to-interface link latency", unit="cycles", check=at_least(1))
    traffic = Param(str, "none", "synthetic traffic pattern (uniform, transpose, bitcomp, ...) or none",
                    check=TRAFFIC_PATTERNS.check_also("none"))
    rate = Param(float, 0.0, "offered load in flits per terminal per cycle", check=in_range(0.0, 1.0))
    packet_size = Param(int, 1, "flits per synthetic packet", check=at_least(1))
    injection = Param(str, "bernoulli", "injection process", check=INJECTION_PROCESSES.check)
    burst_alpha = Param(float, 0.1, "on/off: probability per cycle of turning on")
    burst_beta = Param(float, 0.1, "on/off: probability per cycle of turning off")
    hotspots = Param(str, "0", "hotspot traffic: comma-separated hot terminals")
    hotspot_fraction = Param(float, 0.5, "hotspot traffic: share of packets sent to a hotspot")
    trace_file = Param(str, "", "packet trace to inject: lines 'cycle source dest size_flits' ('' for none)")
    warmup_periods = Param(int, 3, "warm-up periods before measuring", check=at_least(0))
    sample_period = Param(int, 1000, "cycles per sample period", unit="cycles", check=at_least(1))
    sample_periods = Param(int, 1, "sample periods measured", check=at_least(1))
    drain_limit = Param(int, 20000, "cycles after the window to wait for measured packets", unit="cycles",
                        check=at_least(1))
    stability = Param(str, "latency", "unstable when the running average latency passes latency_threshold at a "
                      "sample boundary ('latency', BookSim's rule) or only at the drain limit ('drain')",
                      check=STABILITY_RULES.check)
    latency_threshold = Param(int, 500, "the stability rule's running average latency limit (BookSim's "
                              "latency_thres)", unit="cycles", check=at_least(1))
    stop_when_measured = Param(bool, True, "stop the run once every measured packet has arrived")
    watchdog = Param(int, 2000, "cycles without progress while flits are buffered before a deadlock is reported",
                     unit="cycles", check=at_least(1))
    flit_bits = Param(int, 128, "bits per flit when interfaces packetise messages (memory traffic)", unit="bits",
                      check=at_least(1))
    interleave_bytes = Param(int, 4096, "memory traffic: block size of a range interleaved over several "
                             "terminals", unit="bytes", check=at_least(1))
    address_map = Param((list, tuple), (), "memory traffic: (start, end, terminal) byte ranges [start, end), "
                        "each owned by the memory at that terminal's to_memory port")
    engine = Param(str, "components", "'components' (or 'python', the reference): every router and interface a "
                   "kernel component (waveforms); 'fast': one engine steps them all, same results; 'compiled': one "
                   "numba loop, or for memory traffic the fast engine's flit level in numba (reference "
                   "configurations only, others refused with the reason); 'auto': compiled "
                   "where the configuration allows, else fast", check=NOC_ENGINES.check)

    packet_latency = Distribution("cycles", "measured packets: creation to tail arrival")
    network_latency = Distribution("cycles", "measured packets: head injection to tail arrival")
    measured_packets = Formula("packets", "packets created in the measurement window",
                               lambda c: c.measurement.measured if c.measurement else 0)
    # Without traffic or a trace (memory traffic only) there is no window: both are 0.
    offered = Formula("flits/terminal/cycle", "flits created per terminal per cycle in the window",
                      lambda c: c.measurement.offered_flits / c.window_terminal_cycles() if c.measurement else 0.0)
    accepted = Formula("flits/terminal/cycle", "flits arriving per terminal per cycle in the window",
                       lambda c: c.measurement.accepted_flits / c.window_terminal_cycles() if c.measurement else 0.0)

    def setup(self) -> None:
        self.graph: nx.Graph = build_topology(self.topology)
        self.port_map = PortMap(self.graph, self.link_latency)
        self._router_distances: dict = {}  # router -> least cycles to every router (min_latency)
        self.route = make_routing(self.routing, self.port_map, self.vcs)
        pm = self.port_map
        kind = ROUTER_MODELS.lookup(self.router)
        router_params = self.router_params
        if kind is SimpleRouter:
            # single cycle by construction: its own zero stage delays and round-robin allocation
            for key in ("vc_alloc_delay", "sw_alloc_delay", "st_delay", "allocator"):
                del router_params[key]
        # With the fast engine, routers and interfaces are objects it steps: not children, so
        # the kernel does not schedule them, but named under this Noc (errors, random streams).
        fast = self.engine not in ("components", "python")
        owner = None if fast else self
        self.routers = []
        for r in pm.routers:
            ports = pm.ports(r)
            router = kind(f"router[{r}]", owner, node=r, inputs=ports, outputs=ports, **router_params)
            router.attach_routing(self.route)
            if fast:
                router.parent = self
            self.routers.append(router)
        dims = self.graph.graph.get("dims") if all(n == 1 for n in pm.local_ports) else None
        self.interfaces = []
        self.measurement = None
        trace = read_trace(self.trace_file, pm.terminals) if self.trace_file else []
        self.trace_window = 0
        if self.traffic != "none":
            start = self.warmup_periods * self.sample_period
            end = start + self.sample_periods * self.sample_period
            # in cycles until start() scales them
            self.measurement = NetworkMeasurement(self, start, end, self.sample_period, self.warmup_periods,
                                                  self.latency_threshold, self.stability)
        elif trace:
            # A trace alone: every packet is measured, and the run ends when the last arrives.
            self.trace_window = max(p.cycle for p in trace) + 1
            self.measurement = NetworkMeasurement(self, 0, self.trace_window)
        trace_by_source = by_source(trace, pm.terminals)
        self.memory_map = (AddressMap(self.address_map, pm.terminals, self.path, self.interleave_bytes)
                           if self.address_map else None)
        interface_class = NetworkInterface if self.memory_map is None else MemoryMappedInterface
        for t in range(pm.terminals):
            ni = interface_class(f"ni[{t}]", owner, terminal=t, terminals=pm.terminals, vcs=self.vcs,
                                 buffer_depth=self.buffer_depth, credit_delay=self.credit_delay,
                                 wait_for_tail_credit=self.wait_for_tail_credit, flit_bits=self.flit_bits,
                                 traffic=self.traffic,
                                 rate=self.rate, packet_size=self.packet_size, injection=self.injection,
                                 burst_alpha=self.burst_alpha, burst_beta=self.burst_beta, hotspots=self.hotspots,
                                 hotspot_fraction=self.hotspot_fraction)
            ni.attach(self.measurement, self.route, dims)
            ni.load_trace(trace_by_source[t])
            if self.memory_map is not None:
                ni.share_memory_map(self.memory_map)
                ni.round_trip_cycles = self._least_round_trip(t)
            self.interfaces.append(ni)
            if fast:
                ni.parent = self
                continue
            ni.monitor_hook = self._wake_monitor
            r, p = pm.terminal_router[t], pm.terminal_port[t]
            connect(ni.to_router, self.routers[r].inp[p], latency=self.injection_cycles)
            connect(self.routers[r].out[p], ni.from_router, latency=self.ejection_latency)
        if fast:
            compiled = self.engine == "compiled" or (self.engine == "auto" and refusal(self) is None)
            self.stepping = "compiled" if compiled else "fast"
            if compiled and self.memory_map is None:
                self.monitor = CompiledNocEngine("engine", self)
            else:
                memory_terminals = 0 if self.memory_map is None else pm.terminals
                kind = CompiledMemoryEngine if compiled else NocEngine
                self.monitor = kind("engine", self, memory_terminals=memory_terminals)
            for ni in self.interfaces:
                ni.engine = self.monitor
            self._expose_memory_ports()
            return
        for u in pm.routers:
            for p, v in enumerate(pm.neighbour[u]):
                if v is None:
                    continue
                connect(self.routers[u].out[p], self.routers[v].inp[pm.in_port_from[v][u]], latency=pm.latency(u, v))
        self.monitor = NocMonitor("monitor", self)
        self.stepping = "components"
        self._expose_memory_ports()

    def _least_round_trip(self, t: int) -> int:
        """The least cycles from terminal ``t`` sending a request to its response arriving
        back, the network's part only (a one-flit request and response, the memory taking no
        time): the bound its interface declares to the lookahead."""
        owners = self.memory_map.owners()
        return min(self.min_latency(t, d) + self.min_latency(d, t) for d in owners)

    MEMORY_PORTS = ("mem_req", "mem_rsp", "to_memory", "from_memory")
    """The per-terminal port arrays of a memory-mapped Noc."""

    def _expose_memory_ports(self) -> None:
        """With an address map, name the ports that carry memory traffic as this Noc's own
        (``exposed``, as a module's, so ``.arch`` paths reach them): the interfaces', or under
        the fast engine the engine's, which the interfaces then serve."""
        if self.memory_map is None:
            return
        if isinstance(self.monitor, NocEngine):
            engine = self.monitor
            for t, ni in enumerate(self.interfaces):
                ni.use_ports(*(getattr(engine, name)[t] for name in self.MEMORY_PORTS))
            engine.memory_map = self.memory_map
        self.exposed = {name: [ni.io[k] for ni in self.interfaces] for k, name in enumerate(self.MEMORY_PORTS)}
        self.memory_map.memory_ports = dict(enumerate(self.exposed["to_memory"]))

    def memory_port(self, name: str, terminal: int):
        """Port ``name`` (one of :attr:`MEMORY_PORTS`) of ``terminal``, for connecting a
        requester or a memory from Python."""
        if self.memory_map is None:
            raise ParameterError(f"{self.path} has no address_map, so no memory ports",
                                 hint="give address_map = [(start, end, terminal), ...]")
        return self.exposed[name][terminal]

    def start(self) -> None:
        if self.measurement is not None:
            period = self.domain.period_ps
            self.measurement.scale(self.domain.phase_ps, period)

    @property
    def stats(self) -> list:
        """The Noc's statistics; under the fast engine also those of the routers and interfaces
        it steps (they are not children, so the simulator would not list them), in the order
        and with the names the per-component network reports them."""
        own = super().stats
        if self.stepping == "components":
            return own
        if isinstance(self.monitor, NocEngine):
            self.monitor.write_back_statistics()
        return own + [stat for part in (*self.routers, *self.interfaces) for stat in part.stats]

    def _wake_monitor(self) -> None:
        self.monitor.wake_for_work()

    def window_terminal_cycles(self) -> int:
        """Terminal-cycles in the measurement window (the denominator of throughput)."""
        cycles = self.trace_window or self.sample_periods * self.sample_period
        return cycles * self.port_map.terminals

    def zero_load_latency(self, source: int, dest: int, size: int = 1) -> int:
        """The analytic latency in cycles of a lone packet along the route the routing function
        gives (the first choice at each router): injection link, per router the pipeline
        stages, per link its latency, ejection link, and one cycle per further flit."""
        pm = self.port_map
        stages = self._router_stages()
        r, target = pm.terminal_router[source], pm.terminal_router[dest]
        latency = self.injection_cycles + self.ejection_latency + (size - 1)
        in_port, in_vc = pm.terminal_port[source], 0
        from .flit import NetPacket
        packet = NetPacket(0, source, dest, size)
        while True:
            latency += stages
            if r == target:
                return latency
            port, first, _ = self.route.next_hops(r, in_port, in_vc, packet)[0]
            nxt = pm.neighbour[r][port]
            latency += pm.latency(r, nxt)
            in_port, in_vc, r = pm.in_port_from[nxt][r], first, nxt

    def min_latency(self, source: int, dest: int, size: int = 1) -> int:
        """The least latency in cycles any packet of ``size`` flits can have from terminal
        ``source`` to ``dest``, over every route the topology offers (whatever the routing
        function picks): :meth:`zero_load_latency` along a shortest path, so never more than
        any packet takes (equal to it for minimal routing). The network's lookahead bounds
        rest on it."""
        pm = self.port_map
        stages = self._router_stages()
        distances = self._router_distances.get(pm.terminal_router[source])
        if distances is None:
            distances = self._router_distances[pm.terminal_router[source]] = nx.single_source_dijkstra_path_length(
                self.graph, pm.terminal_router[source],
                weight=lambda u, v, _: pm.latency(u, v) + stages)
        return self.injection_cycles + stages + distances[pm.terminal_router[dest]] + self.ejection_latency + size - 1

    @property
    def injection_cycles(self) -> int:
        """Cycles from an interface sending a link word to its router taking it:
        ``injection_latency + 1``, the extra cycle being the interface's output register.

        This is where BookSim 2 spends the cycle a hop count leaves over. Its channels deliver a
        word written in cycle t to the reader in cycle t + latency + 1 (the channel reads its
        input in the cycle after the write), and its router's VA, SA and ST take 2 cycles from
        reading a flit to writing it out; each of our routers counts its output channel's extra
        cycle in its 3 stages, which leaves only the injection channel's to count here. So a
        0-hop packet takes 1 + 1 (injection) + 3 (router) + 1 (ejection) = 6 cycles and every
        hop 3 + the link latency more (4 on the mesh, 5 on the torus with 2-cycle links), as
        the reference's do. Both the flits and the ejection credits the interface returns
        take this path."""
        return self.injection_latency + 1

    def _router_stages(self) -> int:
        model = self.routers[0]
        return model.routing_delay + model.vc_alloc_delay + model.sw_alloc_delay + model.st_delay

    def deadlock_report(self, now: int, waits: list | None = None, buffered: int | None = None) -> str:
        """Buffered flits, and the cycle of input VCs waiting on each other if there is one:
        who waits on whom as the routers say (:meth:`NocRouter.waits`), or as an engine that
        holds their state elsewhere gives it (``waits``, the pairs in the routers' order, and
        the flits ``buffered``)."""
        if waits is None:
            waits = [pair for router in self.routers for pair in router.waits()]
        if buffered is None:
            buffered = sum(r.buffered for r in self.routers)
        graph = nx.DiGraph()
        graph.add_edges_from(waits)
        lines = [f"deadlock at {now} ps: {buffered} flits buffered in {self.path} and none moved for "
                 f"{self.watchdog} cycles"]
        try:
            cycle = nx.find_cycle(graph)
            names = [u for u, _ in cycle]
            lines.append("  wait cycle: " + " -> ".join(names + names[:1]))
        except nx.NetworkXNoCycle:
            lines.append(f"  no wait cycle among {graph.number_of_nodes()} waiting VCs")
        return "\n".join(lines)
