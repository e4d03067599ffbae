"""A fronthaul link: a fibre or cable of finite capacity between two APs or an AP and the CP."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import (Component, Counter, Distribution, Formula, In, Out, Param, at_least, model)

from .frames import NEVER_PS, FrameTrain, serialisation_ps


def _positive(value) -> str | None:
    return None if value > 0 else "must be greater than 0 (a link of no capacity carries nothing)"


@model
class FronthaulLink(Component):
    """One direction of a fronthaul link (uplink, toward the CP) of ``capacity_bps``: a frame of
    S bits is serialised in ``ceil(S / capacity)``, frames one after another in arrival order,
    then travels ``length_m * ps_per_m + fixed_ps`` (5 ns/m: light in silica fibre, refractive
    index about 1.47; a copper cable is nearer 4.3 ns/m). The link takes every frame its sender
    offers (the sender's egress queue is the link's queue), so its backlog shows overload as
    queueing delay rather than as back-pressure. It carries anything with ``size_bits``.

    Statistics: bits carried, busy time, load (Mbit/s over the elapsed time), utilisation
    (busy share of the elapsed time), the queueing delay of each frame before its first bit
    left. Waveforms: ``busy`` (serialising) and ``queued`` (frames accepted but not yet
    delivered). With trains (:meth:`carry_trains`) it takes a
    :class:`~archmodel.models.fronthaul.frames.FrameTrain` whole, serialises its frames in closed
    form (the same FIFO, to the picosecond), and sends on at once one train of the same frames
    with the edges the frame-by-frame link would deliver them at, one per cycle, and a promise
    derived from its sender's. Leaves out: bit errors and retransmission, the protocol's framing beyond a
    header per frame (see ``header_bits`` of the network), power.
    """

    capacity_bps = Param(float, 10e9, "link rate", unit="bit/s", check=_positive)
    length_m = Param(float, 0.0, "cable length in metres", check=at_least(0.0))
    ps_per_m = Param(int, 5000, "propagation delay per metre", unit="ps", check=at_least(0))
    fixed_ps = Param(int, 0, "fixed latency (transceivers, switching)", unit="ps", check=at_least(0))
    inp = In("frames from the AP upstream")
    out = Out("frames toward the CP")
    frames = Counter("frames", "frames carried")
    bits = Counter("bits", "bits carried, headers included")
    busy_ps = Counter("ps", "time spent serialising")
    load = Formula("Mbit/s", "bits carried per elapsed time", lambda c: c.bits.value * 1e6 / c.elapsed_ps)
    utilisation = Formula("%", "share of the elapsed time spent serialising",
                          lambda c: 100.0 * c.busy_ps.value / c.elapsed_ps)
    queueing = Distribution("ns", "wait of a frame behind earlier ones before its first bit leaves")

    def setup(self) -> None:
        self.flight_ps = self.fixed_ps + round(self.length_m * self.ps_per_m)
        self.wire: deque = deque()  # (delivered_ps, frame), in order
        self.serialising: dict = {}  # frame bits -> serialisation ps
        self.free_ps = 0
        self.busy = self.register("busy", False)
        self.queued = self.register("queued", 0, width=16)
        self.trains = False
        self.sent_ps = -NEVER_PS  # with trains: the edge the last frame leaves

    def carry_trains(self) -> None:
        """Take and send :class:`~archmodel.models.fronthaul.frames.FrameTrain` messages instead
        of frames (before the run; its sender and receiver must do the same)."""
        self.trains = True

    def holding(self) -> str | None:
        return f"{len(self.wire)} frames" if self.wire else None

    def waiting_for(self) -> list:
        return [self.out.channel.dst_owner] if self.wire else []

    def start(self) -> None:
        self.tracing = self.sim.tracing
        self.period = self.domain.period_ps

    def _serialise_ps(self, bits: int) -> int:
        # A stripe's frames come in a few sizes (one per chunk length): compute each once.
        took = self.serialising[bits] = serialisation_ps(bits, self.capacity_bps)
        return took

    def tick(self) -> None:
        # The hot path of a run without in-network processing (every frame crosses up to L
        # links): attribute lookups are hoisted and the kernel is asked for a wake-up only
        # when the head of the wire changes.
        if self.trains:
            self._carry()
            return
        sim = self.sim
        now = sim.now
        wire = self.wire
        inp = self.inp
        if inp.valid:
            frame = inp.recv()
            free = self.free_ps
            start = now if now > free else free
            bits = frame.bits
            took = self.serialising.get(bits)
            if took is None:
                took = self._serialise_ps(bits)
            free = self.free_ps = start + took
            wire.append((free + self.flight_ps, frame))
            self.frames.value += 1
            self.bits.value += bits
            self.busy_ps.value += took
            self.queueing.samples.append((start - now) / 1000)
        if wire and wire[0][0] <= now and self.out.try_send(wire[0][1]):
            wire.popleft()
        if self.tracing:
            self.busy.set(now < self.free_ps)
            self.queued.set(len(wire))
        self.sleep()
        if wire:
            wake = wire[0][0]
            if self.tracing and now < self.free_ps < wake:
                wake = self.free_ps  # show the end of serialisation on the waveform
            sim.wake_at(self, wake if wake > now else now + self.period)

    def _carry(self) -> None:
        """A train in, the same frames out: each starts when it arrives or the link is free,
        takes its serialisation, flies, and leaves at the first edge after that, one per
        cycle; the receiver takes it one edge later (the channel's latency)."""
        if not self.inp.valid:
            self.sleep()
            return
        train = self.inp.recv()
        period, phase = self.period, self.domain.phase_ps
        free, sent, flight = self.free_ps, self.sent_ps, self.flight_ps
        serialising, samples = self.serialising, self.queueing.samples
        out, bits, busy = [], 0, 0
        for frame, arrival in train.frames:
            start = arrival if arrival > free else free
            size = frame.bits
            took = serialising.get(size)
            if took is None:
                took = self._serialise_ps(size)
            free = start + took
            leave = free + flight  # to the first edge at or after it (ClockDomain.edge_at_or_after, inlined)
            leave += (phase - leave) % period
            sent = leave if leave > sent + period else sent + period
            out.append((frame, sent + period))
            bits += size
            busy += took
            samples.append((start - arrival) / 1000)
        self.free_ps, self.sent_ps = free, sent
        self.frames.value += len(out)
        self.bits.value += bits
        self.busy_ps.value += busy
        until = train.until_ps
        if until < NEVER_PS:
            # a later frame arrives at until or after, starts no earlier, takes at least a picosecond
            leave = self.domain.edge_at_or_after((until if until > free else free) + 1 + flight)
            until = (leave if leave > sent + period else sent + period) + period
        self.out.send(FrameTrain(tuple(out), until))
        self.sleep()
