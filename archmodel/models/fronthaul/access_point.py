"""An access point of a cell-free massive MIMO uplink on a radio stripe."""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from typing import Any

import attrs

from archmodel.kernel import (ArchError, Component, Counter, Distribution, In, Out, Param, Utilisation,
                              at_least, model)

from .frames import NEVER_PS, Frame, FrameTrain, SlotPlan

_NEVER = NEVER_PS


@attrs.frozen(eq=False)
class ApRole:
    """Where an AP sits and what it shares, set by the network that builds it: ``index`` in the
    scene, its ``stripe``, ``dims`` (complex dimensions of the signal it sends: its antennas, or
    with INP the users, at most the antennas at and upstream of it), ``share`` (APs whose frames share
    the CP-side link: 1 with in-network processing, the stripe's length without),
    ``capacity_bps`` of its outgoing link, the TDD ``plan`` and the radio ``scene``; ``trains``:
    send frames ahead of their time in :class:`~.frames.FrameTrain` messages (see
    :class:`~.network.FronthaulNetwork`'s ``engine``)."""

    index: int
    stripe: int
    dims: int
    share: int
    capacity_bps: float
    plan: SlotPlan
    scene: Any
    trains: bool = False


@model
class AccessPoint(Component):
    """An access point with ``antennas`` antennas on a radio stripe (Jo, Lee and Park, arXiv
    2412.07582): every uplink slot it receives its samples chunk by chunk (see
    :mod:`~archmodel.models.fronthaul.frames`) and sends one frame per chunk toward the CP.

    With ``inp`` (in-network processing) it waits for the upstream AP's frame of the same chunk,
    joins its own samples to the decompressed upstream signal, either refining the upstream
    description with its own or recompressing the LMMSE-combined estimate, whichever decodes
    to more, into its link's budget (:func:`~archmodel.models.fronthaul.signal.inp_step`; the
    scene computes the steps of a slot's APs in one batch and an AP takes its own when the
    upstream frame carried the batch's description, :meth:`~.scene.RadioScene.inp_forwarded`)
    and, ``processing_ps`` after both were there, sends a frame that fills its link. Without it, it
    compresses its own samples to its share of the CP-side link (``processing_ps`` after they
    are complete) and forwards every upstream frame at the edge it arrives. Frames leave in the
    order they become ready, one per cycle.

    With ``trains`` (no waveforms) it computes what it would send ahead. With INP an own frame
    depends only on its chunk's end, the frame before it and its upstream frame's arrival:
    the far end forms a slot's frames at the slot's first chunk, every other AP forms its own
    as soon as a train brings the upstream ones (processing from the first edge at or after
    all three), and sends them in one train at the edges the frame-by-frame model sends
    them. Without INP, at the first
    chunk of each uplink slot it forms the slot's own frames (their processing times follow
    from the chunk ends and ``processing_ps``), merges them with the upstream frames that came
    in trains, in the order and at the edges the frame-by-frame model sends them (by ready
    time, then by when they became known, one per cycle), and sends every frame no later
    frame could precede in one :class:`~.frames.FrameTrain`, with its promise of the earliest
    edge anything it sends later reaches the link (from its next own frame and the upstream
    promise): the statistics are the frame-by-frame model's to the bit, with a few messages
    per slot instead of one per frame and hop.

    It is built by :class:`~archmodel.models.fronthaul.network.FronthaulNetwork`, which tells
    it its place (:meth:`attach`). Statistics: frames of its own and forwarded, bits sent, how
    long its own chunks waited for upstream, processing utilisation. Waveforms: ``state``
    (idle, waiting for upstream, processing) and ``backlog`` (frames ready to leave). Leaves
    out: channel estimation (channels are known, as in the paper), its own fronthaul of CSI.
    """

    antennas = Param(int, 4, "receive antennas", check=at_least(1))
    inp = Param(bool, True, "in-network processing: combine with upstream and recompress")
    processing_ps = Param(int, 10_000_000, "combining and compression time per chunk", unit="ps", check=at_least(0))
    upstream = In("frames from the AP upstream (unconnected at a stripe's far end)", required=False)
    out = Out("frames toward the CP")
    own_frames = Counter("frames", "frames of this AP's own chunks")
    forwarded = Counter("frames", "upstream frames forwarded unchanged (without INP)")
    bits_sent = Counter("bits", "bits sent toward the CP")
    processing_busy = Counter("cycles", "cycles spent combining and compressing")
    processing = Utilisation("processing_busy", "share of the time spent combining and compressing")
    upstream_wait = Distribution("ns", "time an own chunk waited for the upstream frame (INP)")

    def setup(self) -> None:
        self.role: ApRole | None = None
        self.state = self.register("state", "idle")
        self.backlog = self.register("backlog", 0, width=16)
        self.arrived: dict = {}  # (slot, chunk) -> upstream Frame, for INP
        self.ready: deque = deque()  # own (slot, chunk) whose samples are complete
        self.outbox: list = []  # heap of (ready_ps, seq, Frame)
        self.seq = itertools.count()
        self.busy_until = 0

    def attach(self, role: ApRole) -> None:
        """Give this AP its place in the network (before the run)."""
        self.role = role
        self.rate_bits = role.plan.rate_bits(role.capacity_bps, role.share, role.dims)
        self.payload = [role.plan.payload_bits(c, role.capacity_bps, role.share, role.dims) + role.plan.header_bits
                        for c in range(role.plan.chunks)]

    def start(self) -> None:
        if self.role is None:
            raise ArchError(f"{self.path}: an AccessPoint is built by FronthaulNetwork, which gives it its "
                            "channel and place", hint="use FronthaulNetwork(aps = ..., stripes = ...)")
        self.slots = iter(self.role.plan.uplink_slots())
        self.gated = self.inp and self.upstream.connected
        self.tracing = self.sim.tracing
        self.relaying = not self.inp and self.upstream.connected and not self.tracing
        self.asked_ps = -1  # the wake-up last asked for (the kernel keeps it until it comes)
        self._advance(None)
        if self.role.trains:
            self._start_trains()

    def _advance(self, current) -> None:
        """Make the own chunk after ``current`` (None: the first) the next one, and remember
        when its samples are complete (never, when the run has no more)."""
        if current is not None and current[1] + 1 < self.role.plan.chunks:
            self.next_chunk = current[0], current[1] + 1
        else:
            slot = next(self.slots, None)
            self.next_chunk = None if slot is None else (slot, 0)
        self.next_end = _NEVER if self.next_chunk is None else self.role.plan.chunk_end_ps(*self.next_chunk)

    def holding(self) -> str | None:
        # Frames to send and a chunk in processing are work; an own chunk waiting for its
        # upstream frame is not (the AP waits for input, as a sink does): the frame may be a
        # whole stripe away, longer than a watchdog window, without anything being stuck.
        # With trains the frames held wait for the upstream promise, input too.
        if self.role is not None and self.role.trains:
            return None
        held = len(self.outbox) + (1 if self.busy_until > self.sim.now else 0)
        return f"{held} frames" if held else None

    def waiting_for(self) -> list:
        upstream = self.upstream.channel.src_owner if self.upstream.connected else None
        return [c for c in (upstream, self.out.channel.dst_owner) if c is not None]

    def tick(self) -> None:
        if self.role.trains:
            self._tick_trains()
            return
        now = self.sim.now
        upstream = self.upstream
        if self.relaying and upstream.valid and not self.outbox and not self.ready and self.next_end > now:
            # Without INP most edges only pass an upstream frame on: do just that. The wake-up
            # for the next own chunk is usually asked already (_schedule would ask nothing).
            frame = upstream.recv()
            self.forwarded.value += 1
            if self.out.try_send(frame):
                self.bits_sent.value += frame.bits
            else:
                heapq.heappush(self.outbox, (now, next(self.seq), frame))
            self.sleep()
            if self.outbox or (self.next_end != self.asked_ps and self.next_end != _NEVER):
                self._schedule()
            return
        plan = self.role.plan
        if self.upstream.connected and self.upstream.valid:
            frame = self.upstream.recv()
            if self.inp:
                self.arrived[frame.slot, frame.chunk] = frame
            else:
                heapq.heappush(self.outbox, (now, next(self.seq), frame))
                self.forwarded.value += 1
        while self.next_end <= now:
            self.ready.append(self.next_chunk)
            self._advance(self.next_chunk)
        waiting = False
        while self.ready and self.busy_until <= now:
            key = self.ready[0]
            upstream = None
            if self.inp and self.upstream.connected:
                upstream = self.arrived.pop(key, None)
                if upstream is None:
                    waiting = True
                    break
                self.upstream_wait.samples.append((now - plan.chunk_end_ps(*key)) / 1000)
            self.ready.popleft()
            self._process(key, upstream, now)
        if self.outbox and self.outbox[0][0] <= now and self.out.ready:
            frame = heapq.heappop(self.outbox)[2]
            self.out.send(frame)
            self.bits_sent.value += frame.bits
        if self.tracing:
            self.state.set("processing" if self.busy_until > now else "waiting" if waiting else "idle")
            self.backlog.set(len(self.outbox))
        self.sleep()
        self._schedule()

    def _process(self, key, upstream: Frame | None, now: int) -> None:
        """Combine (with INP) and compress one own chunk; its frame is ready when done."""
        slot, chunk = key
        role = self.role
        done = now + self.processing_ps
        self.busy_until = done
        self.processing_busy.value += -(-self.processing_ps // self.domain.period_ps)
        carried = None
        if chunk == 0:
            if self.inp:
                upstream_signal = upstream.signal if upstream is not None else None
                carried = role.scene.inp_forwarded(slot, role.index, upstream_signal, self.rate_bits)
            else:
                carried = role.scene.own_compressed(slot, role.index, self.rate_bits)
        frame = Frame(slot, chunk, role.index, role.stripe, self.payload[chunk], carried, done)
        heapq.heappush(self.outbox, (done, next(self.seq), frame))
        self.own_frames.value += 1
        # New work from the air, not from a channel: tell the watchdog, whose window may have
        # run through a downlink slot in which nothing moved.
        self.progress()

    def _schedule(self) -> None:
        """Wake at the next own chunk, the end of processing, or when a frame may leave
        (arrivals and returning credits wake it anyway). An AP gated by its upstream (INP, not
        at the far end) need not wake for its own chunk: the upstream frame of that chunk
        leaves the upstream AP only after the same chunk ended there, so its arrival comes
        later and wakes it."""
        now = self.sim.now
        times = []
        if self.next_end != _NEVER and not self.gated:
            times.append(self.next_end)
        if self.busy_until > now and (self.ready or self.tracing):
            times.append(self.busy_until)
        if self.outbox:
            times.append(self.outbox[0][0])
        if times:
            wake = max(min(times), now + 1)
            if wake != self.asked_ps or wake <= now:
                self.asked_ps = wake
                self.wake_at(wake)

    # -- trains: the frames of a slot computed ahead (no INP) --------------------------------
    def _start_trains(self) -> None:
        self.held: list = []  # heap of (ready_ps, known_ps, own, seq, Frame) not yet sent
        self.up_until = 0 if self.upstream.connected else _NEVER  # upstream promise: nothing known yet
        self.sent_ps = -_NEVER  # the edge the last frame leaves (as the frame-by-frame model sends it)
        self.promised = -1

    def _own_slot(self, slot: int) -> None:
        """Form the own frames of ``slot`` as the frame-by-frame model processes them: chunk c
        from the first edge at or after both its end and the previous chunk's processing."""
        role, plan, domain = self.role, self.role.plan, self.domain
        cycles = -(-self.processing_ps // domain.period_ps)
        for chunk in range(plan.chunks):
            start = domain.edge_at_or_after(max(plan.chunk_end_ps(slot, chunk), self.busy_until))
            done = self.busy_until = start + self.processing_ps
            self.processing_busy.value += cycles
            carried = role.scene.own_compressed(slot, role.index, self.rate_bits) if chunk == 0 else None
            frame = Frame(slot, chunk, role.index, role.stripe, self.payload[chunk], carried, done)
            # known at its processing start, after an upstream frame arriving at the same edge
            heapq.heappush(self.held, (done, start, 1, next(self.seq), frame))
            self.own_frames.value += 1

    def _tick_trains(self) -> None:
        if self.inp:
            self._tick_inp_trains()
            return
        now = self.sim.now
        held = self.held
        if self.upstream.connected and self.upstream.valid:
            train = self.upstream.recv()
            for frame, arrival in train.frames:
                heapq.heappush(held, (arrival, arrival, 0, next(self.seq), frame))
            self.forwarded.value += len(train.frames)
            self.up_until = train.until_ps
        formed = False
        while self.next_end <= now:
            self._own_slot(self.next_chunk[0])
            self._advance((self.next_chunk[0], self.role.plan.chunks - 1))
            formed = True
        if formed:
            self.progress()  # new work from the air (see _process)
        # Send, in the frame-by-frame model's order and at its edges, every frame that no
        # frame not yet known could precede: one ready before the upstream promise and before
        # the next own frame (processing takes at least processing_ps from its chunk's end).
        period, edge = self.domain.period_ps, self.domain.edge_at_or_after
        own = self.next_end + self.processing_ps if self.next_end != _NEVER else _NEVER
        limit = min(self.up_until, own)
        sent, out, bits, phase = self.sent_ps, [], 0, self.domain.phase_ps
        while held and held[0][0] < limit:
            ready, _, _, _, frame = heapq.heappop(held)
            leave = ready + (phase - ready) % period  # edge(ready), inlined: ready is past the phase
            sent = leave if leave > sent + period else sent + period
            out.append((frame, sent + period))
            bits += frame.bits
        self.sent_ps = sent
        self.bits_sent.value += bits
        # What it sends later leaves no earlier than the earliest of: a frame held, its next
        # own frame (processing takes at least processing_ps from the chunk's end), anything
        # upstream may still send.
        low = min(held[0][0] if held else _NEVER, limit)
        until = _NEVER if low >= _NEVER else max(edge(low), sent + period) + period
        if out or until != self.promised:
            self.out.send(FrameTrain(tuple(out), until))
            self.promised = until
        self.sleep()
        if self.next_end != _NEVER and self.asked_ps != self.next_end:
            self.asked_ps = self.next_end
            self.wake_at(self.next_end)

    # -- trains with in-network processing ----------------------------------------------
    def _tick_inp_trains(self) -> None:
        """Form every own frame whose inputs are known and send them as one train."""
        now = self.sim.now
        out: list = []
        if self.gated:
            if self.upstream.valid:
                self._inp_frames(self.upstream.recv().frames, out)
        else:
            chunks = [(None, 0)] * self.role.plan.chunks
            while self.next_end <= now:  # the far end: a slot's chunks, from its first
                self._inp_frames(chunks, out)
        if out:
            self.progress()  # new work (see _process)
            self.out.send(FrameTrain(tuple(out), self._inp_promise()))
        self.sleep()
        if not self.gated and self.next_end != _NEVER and self.asked_ps != self.next_end:
            self.asked_ps = self.next_end
            self.wake_at(self.next_end)

    def _inp_frames(self, inputs, out: list) -> None:
        """Process the next own chunks as the frame-by-frame model does, one per ``(upstream
        frame, its arrival)`` of ``inputs`` (``(None, 0)`` at the far end), and append each
        frame and its arrival at the link to ``out``: a chunk is processed from the first edge
        at or after its end, the end of the previous chunk's processing and the arrival; its
        frame leaves at the first edge after that, one per cycle."""
        role, domain = self.role, self.domain
        period, phase = domain.period_ps, domain.phase_ps
        processing, payload, waits = self.processing_ps, self.payload, self.upstream_wait.samples
        busy, sent, bits = self.busy_until, self.sent_ps, 0
        for upstream, arrival in inputs:
            key = self.next_chunk
            if key is None or (upstream is not None and (upstream.slot, upstream.chunk) != key):
                got = None if upstream is None else (upstream.slot, upstream.chunk)
                self.fail(f"upstream frame {got} came while own chunk {key} was next")
            slot, chunk = key
            end = self.next_end
            start = max(end, busy, arrival, phase)
            start += (phase - start) % period  # (ClockDomain.edge_at_or_after, inlined: a loop per frame)
            if upstream is not None:
                waits.append((start - end) / 1000)
            done = busy = start + processing
            carried = None
            if chunk == 0:
                carried = role.scene.inp_forwarded(slot, role.index, None if upstream is None else upstream.signal,
                                                   self.rate_bits)
            frame = Frame(slot, chunk, role.index, role.stripe, payload[chunk], carried, done)
            leave = done + (phase - done) % period
            sent = leave if leave > sent + period else sent + period
            out.append((frame, sent + period))
            bits += frame.bits
            self._advance(key)
        self.busy_until, self.sent_ps = busy, sent
        self.own_frames.value += len(inputs)
        self.processing_busy.value += len(inputs) * -(-processing // period)
        self.bits_sent.value += bits

    def _inp_promise(self) -> int:
        """The earliest edge the next own frame can reach the link: its processing starts no
        earlier than its chunk's end and the end of the last, and it leaves after the last
        frame sent."""
        if self.next_chunk is None:
            return _NEVER
        edge, period = self.domain.edge_at_or_after, self.domain.period_ps
        start = edge(max(self.next_end, self.busy_until))
        return max(edge(start + self.processing_ps), self.sent_ps + period) + period
