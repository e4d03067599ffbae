"""The network interface: packetise, inject with credits, eject and reassemble."""

from __future__ import annotations

import math
import random
import re
from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, ParamGroup, at_least, in_range, model

from .flit import NO_CREDIT, Flit, NetPacket
from .router import NocRouter
from .traffic import INJECTION_PROCESSES, TRAFFIC_PATTERNS, make_pattern, make_process

_INDEX = re.compile(r"\[(\d+)\]$")


@model
class NetworkInterface(Component):
    """A terminal's network interface: turns messages into packets of flits, keeps them in an
    unbounded source queue, injects them into its router's local input port under credit flow
    control, and reassembles the packets that arrive for it.

    Messages come from ``inp`` (any message with an integer ``dest`` terminal; its
    ``size_bits``, default 64, sets the flit count as ``ceil(size_bits / flit_bits)``), from
    the built-in synthetic traffic generator (``traffic``, ``rate`` in flits per cycle,
    ``injection`` bernoulli or onoff, as BookSim 2 defines them), or from a packet trace
    (:meth:`load_trace`; :class:`~.network.Noc` reads the file). Delivered messages leave on
    ``out`` when it is connected. The interface picks a free VC of the router's input port for
    each packet (round robin) and sends one flit per cycle when it holds that VC's credit; it
    consumes arriving flits at once and returns their credits ``credit_delay`` cycles later
    (the router's credit processing delay, which BookSim charges to the router receiving a
    credit and which this model charges here, on the way). Credits from the router count the
    edge they arrive. With ``wait_for_tail_credit`` a VC takes a new packet only once the
    previous tail's credit is back, as the routers' output VCs (and BookSim's source buffer
    state) do.

    Packet latency is measured from creation (source queueing included) to the tail's
    arrival here, network latency from the head's injection. A flit that arrives out of order
    within its packet, or with no packet in progress, stops the run (ModelAssertion).
    """

    terminal = Param(int, -1, "this terminal's id (-1: the index of the instance name)")
    terminals = Param(int, 1, "terminals in the network (for traffic patterns)", check=at_least(1))
    # The router's own declarations: the interface speaks its local port's flow control (two
    # groups, so the parameters keep their places in listings).
    router_buffers = ParamGroup(NocRouter, "vcs", "buffer_depth")
    flit_bits = Param(int, 128, "bits per flit when packetising messages", unit="bits", check=at_least(1))
    traffic = Param(str, "none", "synthetic destination pattern, or 'none'", check=TRAFFIC_PATTERNS.check_also("none"))
    rate = Param(float, 0.0, "offered load in flits per cycle", check=in_range(0.0, 1.0))
    packet_size = Param(int, 1, "flits per synthetic packet", check=at_least(1))
    packets = Param(int, 0, "synthetic packets to create before stopping (0: no limit)", check=at_least(0))
    injection = Param(str, "bernoulli", "injection process", check=INJECTION_PROCESSES.check)
    burst_alpha = Param(float, 0.1, "on/off: probability per cycle of turning on")
    burst_beta = Param(float, 0.1, "on/off: probability per cycle of turning off")
    hotspots = Param(str, "0", "hotspot traffic: comma-separated hot terminals")
    hotspot_fraction = Param(float, 0.5, "hotspot traffic: share of packets sent to a hotspot",
                             check=in_range(0.0, 1.0))
    router_credits = ParamGroup(NocRouter, "credit_delay", "wait_for_tail_credit")
    inp = In("messages to send (with an integer dest attribute)", required=False)
    out = Out("messages delivered to this terminal", required=False)
    to_router = Out("link words (flit, returned credit) to the router")
    from_router = In("link words (flit, returned credit) from the router")

    created = Counter("packets", "packets created")
    injected_flits = Counter("flits", "flits injected into the network")
    ejected_flits = Counter("flits", "flits that arrived here")
    delivered = Counter("packets", "packets reassembled here")

    def setup(self) -> None:
        if self.terminal < 0:
            match = _INDEX.search(self.name)
            self.terminal = int(match.group(1)) if match else 0
        self.queue: deque = deque()
        self.credits = [self.buffer_depth] * self.vcs
        self.vc_busy = [False] * self.vcs
        self.tail_wait = [False] * self.vcs  # the tail went; the VC frees when its credit is back
        self.vc_pointer = 0
        self.sending: NetPacket | None = None
        self.send_index = 0
        self.send_vc = 0
        self.credit_back: deque = deque()  # (time in ps the credit goes, vc)
        self.arriving: dict = {}  # vc -> (packet, next flit index)
        self.delivering: deque = deque()
        self.measurement = None
        self.routing = None
        self.next_packet_ps = None
        self.log: list | None = None
        self.dims = None
        self.packet_ids = 0
        self.monitor_hook = None
        self.engine = None  # the NocEngine that steps this interface, under Noc(engine="fast")
        self.trace_packets: list = []
        self.trace_queue: deque = deque()

    def attach(self, measurement=None, routing=None, dims=None, log: list | None = None) -> None:
        """Report to ``measurement`` (a NetworkMeasurement), ask ``routing`` which VCs a packet
        may be injected on, use ``dims`` for per-dimension patterns, append delivered packets
        to ``log``."""
        self.measurement = measurement
        self.routing = routing
        self.dims = dims
        self.log = log

    def load_trace(self, packets) -> None:
        """Create these packets (:class:`~.trace.TracePacket` records of this source, in
        creation order) at their cycles, besides any synthetic traffic."""
        self.trace_packets = list(packets)

    def start(self) -> None:
        self.begin(self.now, self.domain.period_ps, self.domain.phase_ps, self.rng)

    def begin(self, now: int, period: int, phase: int, rng) -> None:
        """Prepare to run from ``now``: clock ``period`` and ``phase`` in ps, ``rng`` this
        interface's numpy stream (the kernel's, or the same stream in the engine)."""
        self.period = period
        self.trace_queue = deque((phase + p.cycle * period, p.dest, p.size) for p in self.trace_packets)
        self.random = random.Random(int(rng.integers(1 << 62)))
        if self.traffic != "none" and self.rate > 0:
            spots = tuple(int(h) for h in self.hotspots.split(",") if h.strip())
            self.pattern = make_pattern(self.traffic, self.terminals, self.dims, spots, self.hotspot_fraction)
            self.process = make_process(self.injection, self.rate / self.packet_size, self.burst_alpha, self.burst_beta)
            self.next_packet_ps = now + (self.process.gap(self.random) - 1) * period

    def send_packet(self, dest: int, size: int = 1, payload=None) -> NetPacket:
        """Create a packet to terminal ``dest`` and queue it: for tests and drivers that call it
        between runs (before the first, or after ``run`` returned). It is created at the next
        edge, when this interface first sees it."""
        if self.engine is not None:
            # Under the fast engine this interface is no kernel component: the engine knows
            # the time and steps it.
            return self.engine.send_packet(self, dest, size, payload)
        started = self.sim is not None and self.sim.started
        when = self.domain.edge_after(self.sim.now) if started else 0
        packet = self.create_packet(dest, size, payload, when)
        if started:
            self.wake_at(when)
        return packet

    def create_packet(self, dest: int, size: int, payload, now: int) -> NetPacket:
        """Create a packet of ``size`` flits to terminal ``dest`` carrying ``payload``, made at
        ``now`` (ps), and queue it for injection: its id is the next of this source, the
        measurement counts it, and a monitor idle for want of work is told. What this
        interface's traffic, its trace and its ``inp`` port do each edge, and what an engine
        stepping it does for :meth:`send_packet`."""
        meas = self.measurement
        measured = meas is not None and meas.start_ps <= now < meas.end_ps
        packet = NetPacket((self.terminal << 32) | self.packet_ids, self.terminal, dest, size, now, payload, measured)
        self.packet_ids += 1
        self.created.value += 1
        if meas is not None:
            meas.created(packet)
        self.queue.append(packet)
        if self.monitor_hook is not None:
            self.monitor_hook()
        return packet

    def tick(self) -> None:
        now = self.sim.now
        port = self.from_router
        word = self.step(now, port.recv() if port.valid else None)
        if word is not None:
            self.to_router.send(word)
        if self.delivering:
            while self.delivering and self.out.try_send(self.delivering[0]):
                self.delivering.popleft()
        if not self.busy():
            self.sleep()
            if self.next_packet_ps is not None:
                self.wake_at(self.next_packet_ps)
            if self.trace_queue:
                self.wake_at(self.trace_queue[0][0])

    def step(self, now: int, word):
        """One edge of the interface: take ``word`` (the link word from the router, or None),
        create the packets due, and return the link word to send to the router (or None).
        Shared by :meth:`tick` and the network-level engine (:mod:`.engine`)."""
        if word is not None:
            flit, credit = word
            if credit != NO_CREDIT:
                self.credits[credit] += 1
                if self.tail_wait[credit] and self.credits[credit] == self.buffer_depth:
                    self.tail_wait[credit] = False
                    self.vc_busy[credit] = False
            if flit is not None:
                self._eject(flit, now)
        if self.next_packet_ps is not None:
            while self.next_packet_ps <= now:
                self.create_packet(self.pattern(self.terminal, self.random), self.packet_size, None, self.next_packet_ps)
                self.next_packet_ps += self.process.gap(self.random) * self.period
                if self.packets and self.created.value >= self.packets:
                    self.next_packet_ps = None
                    break
        trace = self.trace_queue
        if trace:
            while trace and trace[0][0] <= now:
                when, dest, size = trace.popleft()
                self.create_packet(dest, size, None, when)
        if self.inp.channel is not None and len(self.queue) < 2 and self.inp.valid:
            msg = self.inp.recv()
            self.create_packet(msg.dest, self.flits_for(msg), msg, now)
        flit = None
        if self.sending is None and self.queue:
            self._start_packet()
        if self.sending is not None and self.credits[self.send_vc] > 0:
            flit = self._next_flit(now)
        back = self.credit_back
        credit = back.popleft()[1] if back and back[0][0] <= now else NO_CREDIT
        if flit is not None or credit != NO_CREDIT:
            return (flit, credit)
        return None

    def earliest_send_ps(self, port) -> int | None:
        """Lookahead: on ``to_router`` the next edge while a credit is to go back or a flit can
        go (see :meth:`busy`), else when the next synthetic or trace packet is due (a flit
        waiting for a credit goes when one arrives); on ``out`` the next edge while a message
        waits to leave. None: only an arrival can make one."""
        if port is self.to_router:
            if self.busy():
                return self.sim.now
            due = [t for t in (self.next_packet_ps, self.trace_queue[0][0] if self.trace_queue else None)
                   if t is not None]
            return min(due) if due else None
        if port is self.out:
            return self.sim.now if self.delivering else None
        return None

    def reaction_ps(self, inp, out) -> int | None:
        """A word from the router acts at the edge it arrives (its credit lets a flit go, its
        flit's credit goes back, a completed packet is delivered), and a message taken becomes
        a packet whose first flit may go at once; a message taken causes nothing on the other
        outputs directly (None): it reaches them only through the
        network, as flits that arrive from the router."""
        if inp is self.from_router or out is self.to_router:
            return 0
        return None

    def flits_for(self, message) -> int:
        """Flits of the packet carrying ``message``: ``ceil(size_bits / flit_bits)``, at least one
        (a message without ``size_bits`` is one 64-bit word)."""
        return max(1, math.ceil(getattr(message, "size_bits", 64) / self.flit_bits))

    def busy(self) -> bool:
        """Whether the next edge has work even if no word arrives and no packet is due."""
        return self.network_busy() or (self.inp.channel is not None and self.inp.valid)

    def network_busy(self) -> bool:
        """:meth:`busy` but for messages waiting on this interface's ports: whether a credit is
        to go back or a flit can go. For the network engine, which looks at the ports of the
        interfaces it steps itself (one test of a channel's queue rather than a port's
        ``valid`` per port and step)."""
        sending = self.sending
        return bool(self.credit_back or (sending is not None and self.credits[self.send_vc] > 0)
                    or (sending is None and self.queue and self._free_vc() >= 0))

    def _free_vc(self) -> int:
        first, end = self.routing.injection_vcs(self.queue[0]) if self.routing else (0, self.vcs)
        span = end - first
        for k in range(span):
            w = first + (self.vc_pointer + k) % span
            if not self.vc_busy[w] and self.credits[w] > 0:
                return w
        return -1

    def _start_packet(self) -> None:
        w = self._free_vc()
        if w < 0:
            return
        self.sending = self.queue.popleft()
        self.send_index = 0
        self.send_vc = w
        self.vc_busy[w] = True
        self.vc_pointer = w + 1

    def _next_flit(self, now: int) -> Flit:
        packet = self.sending
        i = self.send_index
        flit = Flit(packet, i, i == 0, i == packet.size - 1)
        flit.vc = self.send_vc
        self.credits[self.send_vc] -= 1
        self.injected_flits.value += 1
        if i == 0:
            packet.injected_ps = now
        if flit.tail:
            if self.wait_for_tail_credit:
                self.tail_wait[self.send_vc] = True
            else:
                self.vc_busy[self.send_vc] = False
            self.sending = None
        else:
            self.send_index = i + 1
        return flit

    def _eject(self, flit: Flit, now: int) -> None:
        self.ejected_flits.value += 1
        self.credit_back.append((now + self.credit_delay * self.period, flit.vc))
        packet = flit.packet
        meas = self.measurement
        if meas is not None and meas.start_ps <= now < meas.end_ps:
            meas.accepted_flits += 1
        if packet.dest != self.terminal:
            self.fail(f"{flit!r} for terminal {packet.dest} arrived at terminal {self.terminal}")
        expected = self.arriving.get(flit.vc)
        if flit.head:
            if expected is not None:
                self.fail(f"vc{flit.vc}: head {flit!r} arrived while packet {expected[0].id} is incomplete")
        elif expected is None or expected[0] is not packet or expected[1] != flit.index:
            self.fail(f"vc{flit.vc}: {flit!r} arrived out of order (expected "
                      f"{'a head' if expected is None else f'flit {expected[1]} of packet {expected[0].id}'})")
        if not flit.tail:
            self.arriving[flit.vc] = (packet, flit.index + 1)
            return
        self.arriving.pop(flit.vc, None)
        self.packet_arrived(packet, now)

    def packet_arrived(self, packet: NetPacket, now: int) -> None:
        """The tail of ``packet`` arrived here at ``now``: count it, measure it, log it and hand
        it on. What ejecting its tail does, and what an engine that ejects flits itself
        (:mod:`.compiled_memory_engine`) calls."""
        self.delivered.value += 1
        meas = self.measurement
        if meas is not None:
            meas.delivered(packet, now, self.period)
        if self.log is not None:
            self.log.append((packet, now))
        self._deliver(packet, now)

    def _deliver(self, packet: NetPacket, now: int) -> None:
        """Hand on a packet whose tail arrived: its message leaves on ``out`` (when connected)."""
        if packet.payload is not None and self.out.connected:
            self.delivering.append(packet.payload)
