"""Simulated time and clock domains.

Time is an integer number of picoseconds everywhere in the kernel; there are no floats in
time. A clock domain has an integer period in ps and an optional phase, so domains with
rational frequency ratios (1 GHz cluster, 1.6 GHz DRAM, 800 MHz NoC) coexist exactly.
"""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import ArchError

PS_PER = {"ps": 1, "ns": 1_000, "us": 1_000_000, "ms": 1_000_000_000, "s": 1_000_000_000_000}
HZ_PER = {"Hz": 1, "kHz": 1_000, "MHz": 1_000_000, "GHz": 1_000_000_000}

_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]+)\s*$")


def parse_time(text: str) -> int:
    """Parse ``"10us"``, ``"2.5 ns"`` or ``"625ps"`` into integer picoseconds.

    A value that is not a whole number of picoseconds is an error rather than silently rounded.
    """
    match = _QUANTITY.match(text)
    if not match or match.group(2) not in PS_PER:
        raise ArchError(f"'{text}' is not a time", hint="write a number and a unit: ps, ns, us, ms or s, e.g. 10us")
    ps = Fraction(match.group(1)) * PS_PER[match.group(2)]
    if ps.denominator != 1:
        raise ArchError(f"'{text}' is not a whole number of picoseconds", hint="time resolution is 1 ps")
    return int(ps)


def period_from_frequency(hz: Fraction | int | float) -> int:
    """The integer clock period in ps of a frequency in Hz, which must divide 10^12 ps evenly
    to within rounding to the nearest picosecond (3 GHz becomes 333 ps)."""
    if hz <= 0:
        raise ArchError(f"clock frequency must be positive, got {hz} Hz")
    period = Fraction(10**12) / Fraction(hz)
    if period < 1:
        raise ArchError(f"clock frequency {hz} Hz is above 1 THz", hint="time resolution is 1 ps")
    return round(period)


def format_time(ps: int) -> str:
    """A compact human form of a time in ps: ``1.5 us``, ``625 ps``."""
    for unit in ("s", "ms", "us", "ns"):
        if abs(ps) >= PS_PER[unit]:
            value = ps / PS_PER[unit]
            return f"{value:.6g} {unit}"
    return f"{ps} ps"


class ClockDomain:
    """A clock: rising edges at ``phase_ps + k * period_ps`` for k = 0, 1, 2, ...

    Components belong to exactly one domain and tick only on its edges. Crossing between
    domains happens only through channels, whose latency counts receiver cycles.
    """

    __slots__ = ("name", "period_ps", "phase_ps")

    def __init__(self, name: str, period_ps: int, phase_ps: int = 0):
        if not isinstance(period_ps, int) or isinstance(period_ps, bool) or period_ps < 1:
            raise ArchError(f"clock '{name}': period must be a positive integer number of ps, got {period_ps!r}")
        if not isinstance(phase_ps, int) or not 0 <= phase_ps < period_ps:
            raise ArchError(f"clock '{name}': phase must be an integer in [0, {period_ps}) ps, got {phase_ps!r}")
        self.name = name
        self.period_ps = period_ps
        self.phase_ps = phase_ps

    @classmethod
    def from_frequency(cls, name: str, hz: Fraction | int | float, phase_ps: int = 0) -> "ClockDomain":
        """A domain from a frequency in Hz, e.g. ``ClockDomain.from_frequency("dram", 1.6e9)``."""
        return cls(name, period_from_frequency(hz), phase_ps)

    @property
    def frequency_hz(self) -> float:
        """The clock frequency in Hz (for display; time itself stays integer ps)."""
        return 1e12 / self.period_ps

    def edge_at_or_after(self, t: int) -> int:
        """The first rising edge at time ``t`` or later."""
        k = -((self.phase_ps - t) // self.period_ps)
        return self.phase_ps + max(k, 0) * self.period_ps

    def edge_after(self, t: int) -> int:
        """The first rising edge strictly after time ``t``."""
        return self.edge_at_or_after(t + 1)

    def cycle_of(self, t: int) -> int:
        """The index of the last edge at or before ``t`` (cycle 0 is the first edge)."""
        return (t - self.phase_ps) // self.period_ps

    def __repr__(self) -> str:
        return f"ClockDomain({self.name!r}, period_ps={self.period_ps}, phase_ps={self.phase_ps})"
