"""The central processor at the end of every radio stripe."""

from __future__ import annotations

import heapq
from typing import Any

import attrs
import numpy as np

from archmodel.kernel import ArchError, Component, Counter, Distribution, Formula, In, Param, at_least, model

from . import signal
from .frames import SlotPlan


@attrs.frozen(eq=False)
class CpRole:
    """What the CP must know, set by the network: the TDD ``plan``, the radio ``scene``, the
    ``frames_per_slot`` that make a slot complete, each stripe's AP indices (far end first),
    and the compression rates (bits per channel use) of the two schemes (by place along a
    stripe with INP, per AP without), for the reference sum rates; ``trains``: frames come in
    :class:`~.frames.FrameTrain` messages, ahead of their time."""

    plan: SlotPlan
    scene: Any
    frames_per_slot: int
    stripes: tuple
    inp_bits: tuple
    no_inp_bits: Any
    trains: bool = False


def _gain(c) -> float | None:
    inp, base = c.sum_rate_inp.mean, c.sum_rate_no_inp.mean
    return None if inp is None or not base else 100.0 * (inp / base - 1.0)


@model
class CentralProcessor(Component):
    """The CP of a cell-free uplink: receives every stripe on its own port, decodes each slot
    once all of its frames are in, and reports when.

    A slot is complete when the last of its frames (one per stripe and chunk with in-network
    processing, one per AP and chunk without) arrives; its latency is measured from the end of
    the slot's air time, and a slot later than ``deadline_ps`` misses its deadline (the HARQ
    or scheduling budget). Decoding: the information of every decompressed signal received is
    summed and each user detected with the LMMSE filter
    (:func:`~archmodel.models.fronthaul.signal.sum_rate`): ``sum_rate``. For the same channels
    the CP also computes, from the network's radio scene, the reference sum rates of sequential
    in-network processing, of per-AP compression without it, and of unlimited fronthaul
    (every sample), so one run compares the schemes; ``inp_gain`` is the first over the second.

    With trains, frames come ahead of their time, each with the edge it would arrive at: the
    CP counts them as they come, and completes a slot at the edge its last frame would arrive,
    summing the slot's information in the order the frame-by-frame CP would (by arrival, then
    port).

    Built by :class:`~archmodel.models.fronthaul.network.FronthaulNetwork` (:meth:`attach`).
    """

    stripes = Param(int, 1, "stripes ending here (one port each)", check=at_least(1))
    deadline_ps = Param(int, 1_000_000_000, "a slot must be complete this long after its air time", unit="ps",
                        check=at_least(1))
    inp = In("frames from each stripe's CP-side AP", count="stripes")
    slots_done = Counter("slots", "uplink slots complete")
    deadline_misses = Counter("slots", "slots complete later than deadline_ps")
    miss_rate = Formula("%", "share of the slots that missed their deadline",
                        lambda c: 100.0 * c.deadline_misses.value / c.slots_done.value)
    slot_latency = Distribution("us", "end of a slot's air time to its last frame at the CP")
    ingress_bits = Counter("bits", "bits received from all stripes")
    ingress = Formula("Mbit/s", "bits received per elapsed time", lambda c: c.ingress_bits.value * 1e6 / c.elapsed_ps)
    sum_rate = Distribution("bit/s/Hz", "sum rate per slot decoded from the frames received")
    sum_rate_inp = Distribution("bit/s/Hz", "reference: sequential in-network processing, same channels")
    sum_rate_no_inp = Distribution("bit/s/Hz", "reference: each AP compresses its own samples, same channels")
    sum_rate_unlimited = Distribution("bit/s/Hz", "reference: unlimited fronthaul (all samples at the CP)")
    inp_gain = Formula("%", "mean INP sum rate over the no-INP baseline", _gain)

    def setup(self) -> None:
        self.role: CpRole | None = None
        self.port_bits = [self.add_stat(f"ingress_bits[{i}]", Counter("bits", f"bits received from stripe {i}"))
                          for i in range(self.stripes)]
        self.pending: dict = {}  # slot -> [frames received, information so far (with trains: its parts)]
        self.due: list = []  # with trains: heap of (arrival_ps, port, slot, parts) of complete slots
        self.remaining = 0
        self.completed = self.register("completed", 0, width=32)

    def attach(self, role: CpRole) -> None:
        """Tell the CP what a complete slot is (before the run)."""
        self.role = role
        self.remaining = len(role.plan.uplink_slots())

    def start(self) -> None:
        if self.role is None:
            raise ArchError(f"{self.path}: a CentralProcessor is built by FronthaulNetwork, which tells it "
                            "what a complete slot is", hint="use FronthaulNetwork(aps = ..., stripes = ...)")

    def holding(self) -> str | None:
        # With trains a slot's frames come early and the slot completes at a requested time:
        # nothing waits on the CP.
        if self.role is not None and self.role.trains:
            return None
        return f"{len(self.pending)} incomplete slots" if self.pending else None

    def waiting_for(self) -> list:
        return [port.channel.src_owner for port in self.inp]

    def tick(self) -> None:
        if self.role.trains:
            self._tick_trains()
            return
        for number, port in enumerate(self.inp):
            if port.valid:
                self._receive(number, port.recv())
        self.sleep()

    def _tick_trains(self) -> None:
        now = self.sim.now
        for number, port in enumerate(self.inp):
            if port.valid:
                for frame, arrival in port.recv().frames:
                    self._take(number, frame, arrival)
        due = self.due
        while due and due[0][0] <= now:
            arrival, _, slot, parts = heapq.heappop(due)
            if arrival < now:
                self.fail(f"slot {slot} was complete at {arrival} ps, but its last frame came only now")
            information = 0.0
            for _, _, part in sorted(parts, key=lambda p: p[:2]):
                information = information + part.information()
            self._complete(slot, information)
            if self.sim.stopped is not None:
                return
        self.sleep()
        if due:
            self.wake_at(due[0][0])

    def _take(self, number: int, frame, arrival: int) -> None:
        """Count a frame that came in a train, due at ``arrival``; a slot whose frames are all
        in is due when its last one would arrive."""
        self.port_bits[number].value += frame.bits
        self.ingress_bits.value += frame.bits
        entry = self.pending.get(frame.slot)
        if entry is None:
            entry = self.pending[frame.slot] = [0, [], (-1, -1)]
        entry[0] += 1
        if frame.signal is not None:
            entry[1].append((arrival, number, frame.signal))
        if (arrival, number) > entry[2]:
            entry[2] = (arrival, number)
        if entry[0] == self.role.frames_per_slot:
            del self.pending[frame.slot]
            heapq.heappush(self.due, (*entry[2], frame.slot, entry[1]))

    def _receive(self, number: int, frame) -> None:
        self.port_bits[number].value += frame.bits
        self.ingress_bits.value += frame.bits
        entry = self.pending.get(frame.slot)
        if entry is None:
            entry = self.pending[frame.slot] = [0, 0.0]
        entry[0] += 1
        if frame.signal is not None:
            entry[1] = entry[1] + frame.signal.information()
        if entry[0] == self.role.frames_per_slot:
            del self.pending[frame.slot]
            self._complete(frame.slot, entry[1])

    def _complete(self, slot: int, information) -> None:
        role = self.role
        latency = self.sim.now - role.plan.slot_end_ps(slot)
        self.slot_latency.samples.append(latency / 1e6)
        if latency > self.deadline_ps:
            self.deadline_misses.value += 1
        self.slots_done.value += 1
        self.completed.set(self.slots_done.value)
        if np.ndim(information) == 2:
            self.sum_rate.samples.append(float(signal.sum_rate(information)))
        rates = role.scene.references(slot, role.stripes, role.inp_bits, role.no_inp_bits)
        self.sum_rate_inp.samples.append(rates["inp"])
        self.sum_rate_no_inp.samples.append(rates["no_inp"])
        self.sum_rate_unlimited.samples.append(rates["unlimited"])
        self.remaining -= 1
        if self.remaining == 0:
            self.sim.stop("all slots decoded")
