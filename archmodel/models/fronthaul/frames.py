"""TDD slot timing and the frames that carry one chunk of a slot over the fronthaul.

A **slot** (``slot_ps``, 1 ms in 5G NR numerology 0) is uplink or downlink by its letter in a
repeating TDD pattern (``"U"``: every slot uplink; ``"DDDU"``: one in four). The uplink
samples of a slot reach an AP over the slot's air time; the AP handles them in ``chunks``
equal parts (14: one per OFDM symbol), chunk c being complete at
``slot_start + (c + 1) * slot_ps // chunks``.

**Budgets.** A fronthaul link of C bit/s carries ``floor(C * chunk_ps)`` bits in one chunk's
time; a frame spends ``header_bits`` of it on its header. With in-network processing each AP
sends one frame per chunk filling its link: payload ``floor(C * chunk_ps) - header``. Without
it the L APs of a stripe share the CP-side link: each gets ``(floor(C * chunk_ps) - L * header)
// L``. A payload never exceeds the raw samples, ``sample_bits`` per complex dimension and
channel use (K dimensions for a combined estimate, N antennas for an AP's own samples): with
ample capacity the link carries raw samples and idles the rest of the time. So the compressed
stream of a slot is produced at the rate its links drain it, and the compression rate in bits
per channel use is the slot's payload over its ``bandwidth_hz * slot_ps`` samples
(:meth:`SlotPlan.rate_bits`).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, floor
from typing import Any

import attrs

from archmodel.kernel import ParameterError

PS_PER_S = 10 ** 12


@attrs.frozen(eq=False)
class Frame:
    """One chunk of one slot from one AP (or, with in-network processing, from everything
    upstream of it, combined): ``bits`` on the wire (header included), and on the first chunk of
    the slot the signal the receiver decompresses (an
    :class:`~archmodel.models.fronthaul.signal.Description` with in-network processing, an
    :class:`~archmodel.models.fronthaul.signal.Observation` without). ``source`` is the AP that made
    it, ``created_ps`` when it left that AP."""

    slot: int
    chunk: int
    source: int
    stripe: int
    bits: int
    signal: Any = None
    created_ps: int = 0

    @property
    def size_bits(self) -> int:
        """The frame's length on a link."""
        return self.bits


NEVER_PS = 1 << 62
"""A time no run reaches: the promise of a sender that will send nothing more."""


@attrs.frozen(eq=False)
class FrameTrain:
    """Frames sent ahead of their time, as one message (the ``trains`` engine of
    :class:`~archmodel.models.fronthaul.network.FronthaulNetwork`): ``frames`` holds
    ``(frame, arrival_ps)`` pairs in the order the receiver takes them, ``arrival_ps`` the edge
    at which the frame-by-frame model would deliver it there; ``until_ps`` is the sender's
    promise that every frame it sends later arrives at ``until_ps`` or after (a null message
    of conservative parallel simulation when ``frames`` is empty)."""

    frames: tuple
    until_ps: int

    @property
    def size_bits(self) -> int:
        """The bits of all its frames."""
        return sum(frame.bits for frame, _ in self.frames)


def exact_rate(capacity_bps: float) -> Fraction:
    """A link rate as an exact fraction, so budgets and serialisation times agree to the bit."""
    return Fraction(capacity_bps)


def serialisation_ps(bits: int, capacity_bps: float) -> int:
    """Picoseconds a link of ``capacity_bps`` takes to put ``bits`` on the wire (rounded up)."""
    return ceil(Fraction(bits * PS_PER_S) / exact_rate(capacity_bps))


@attrs.frozen
class SlotPlan:
    """The TDD timing every AP and the CP share (see the module docstring)."""

    slot_ps: int
    chunks: int
    pattern: str
    slots: int
    bandwidth_hz: float
    header_bits: int
    sample_bits: int = 32

    def __attrs_post_init__(self):
        if not self.pattern or set(self.pattern) - {"U", "D"}:
            raise ParameterError(f"tdd_pattern must be a string of 'U' and 'D' slots, got {self.pattern!r}",
                                 hint='for example "U" (every slot uplink) or "DDDU"', param="tdd_pattern")
        if not self.uplink_slots():
            raise ParameterError(f"tdd_pattern {self.pattern!r} has no uplink slot in {self.slots} slots",
                                 hint="the fronthaul carries uplink slots ('U'); add one or run more slots",
                                 param="tdd_pattern")

    def is_uplink(self, slot: int) -> bool:
        """Whether ``slot`` carries uplink samples."""
        return self.pattern[slot % len(self.pattern)] == "U"

    def uplink_slots(self) -> list[int]:
        """The uplink slots of the run, in order."""
        return [s for s in range(self.slots) if self.is_uplink(s)]

    def chunk_end_ps(self, slot: int, chunk: int) -> int:
        """When the samples of ``chunk`` of ``slot`` are complete at every AP."""
        return slot * self.slot_ps + (chunk + 1) * self.slot_ps // self.chunks

    def chunk_ps(self, chunk: int) -> int:
        """The air time of ``chunk``."""
        return (chunk + 1) * self.slot_ps // self.chunks - chunk * self.slot_ps // self.chunks

    def slot_end_ps(self, slot: int) -> int:
        """The end of ``slot``'s air time: slot latency is measured from here."""
        return (slot + 1) * self.slot_ps

    def samples(self, chunk: int) -> Fraction:
        """Channel uses (complex samples per antenna) in ``chunk``."""
        return exact_rate(self.bandwidth_hz) * self.chunk_ps(chunk) / PS_PER_S

    def payload_bits(self, chunk: int, capacity_bps: float, share: int, dims: int) -> int:
        """The payload of one AP's frame for ``chunk`` on a link of ``capacity_bps`` shared by
        ``share`` APs' frames (1 with in-network processing, L without), for a signal of
        ``dims`` complex dimensions: what the link leaves after the headers, but never more than
        the samples themselves at ``sample_bits`` each (I and Q together), as a link of ample
        capacity carries the raw samples."""
        budget = floor(exact_rate(capacity_bps) * self.chunk_ps(chunk) / PS_PER_S)
        raw = ceil(dims * self.sample_bits * self.samples(chunk))
        return min((budget - share * self.header_bits) // share, raw)

    def check_budget(self, capacity_bps: float, share: int) -> None:
        """A ParameterError naming the capacity when a chunk's frame would have no payload."""
        for chunk in range(self.chunks):
            if self.payload_bits(chunk, capacity_bps, share, 1) < 1:
                need = (share * (self.header_bits + 1)) * PS_PER_S / self.chunk_ps(chunk)
                raise ParameterError(f"capacity_bps {capacity_bps:g} bit/s leaves no payload in a "
                                     f"{self.chunk_ps(chunk) / 1e6:g} us chunk after {share} frame header"
                                     f"{'s' if share > 1 else ''} of {self.header_bits} bits",
                                     hint=f"give at least {need:.4g} bit/s, fewer chunks or a smaller header_bits",
                                     param="capacity_bps")

    def rate_bits(self, capacity_bps: float, share: int, dims: int) -> float:
        """Bits per channel use one AP's compressed signal of ``dims`` dimensions may take: the
        slot's payload over its samples."""
        payload = sum(self.payload_bits(c, capacity_bps, share, dims) for c in range(self.chunks))
        return payload / float(sum(self.samples(c) for c in range(self.chunks)))
