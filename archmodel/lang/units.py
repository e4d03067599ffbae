"""Physical quantities of the language: exact values with a dimension.

A dimension is a pair of exponents (seconds, bits): time is (1, 0), frequency (-1, 0), a data
size (0, 1), a bandwidth (-1, 1); (0, 0) is a plain number. Values are exact rationals in
seconds and bits, so ``1 GHz`` times ``1 ns`` is exactly 1 and ``3 GHz`` is exactly a third of
a nanosecond until it becomes an integer number of picoseconds (see :func:`to_ps`).
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, floor

import attrs

from ..kernel import ArchError

TIME, FREQUENCY, DATA, BANDWIDTH, NUMBER = (1, 0), (-1, 0), (0, 1), (-1, 1), (0, 0)

UNITS: dict[str, tuple[Fraction, tuple[int, int]]] = {
    "ps": (Fraction(1, 10**12), TIME), "ns": (Fraction(1, 10**9), TIME), "us": (Fraction(1, 10**6), TIME),
    "ms": (Fraction(1, 10**3), TIME), "s": (Fraction(1), TIME),
    "Hz": (Fraction(1), FREQUENCY), "kHz": (Fraction(10**3), FREQUENCY), "MHz": (Fraction(10**6), FREQUENCY),
    "GHz": (Fraction(10**9), FREQUENCY),
    "bit": (Fraction(1), DATA), "B": (Fraction(8), DATA),
    "KiB": (Fraction(8 * 2**10), DATA), "MiB": (Fraction(8 * 2**20), DATA), "GiB": (Fraction(8 * 2**30), DATA),
    "KB": (Fraction(8 * 10**3), DATA), "kB": (Fraction(8 * 10**3), DATA), "MB": (Fraction(8 * 10**6), DATA),
    "GB": (Fraction(8 * 10**9), DATA),
    "B/s": (Fraction(8), BANDWIDTH), "KB/s": (Fraction(8 * 10**3), BANDWIDTH),
    "kB/s": (Fraction(8 * 10**3), BANDWIDTH), "MB/s": (Fraction(8 * 10**6), BANDWIDTH),
    "GB/s": (Fraction(8 * 10**9), BANDWIDTH),
    "bit/s": (Fraction(1), BANDWIDTH), "kbit/s": (Fraction(10**3), BANDWIDTH),
    "Mbit/s": (Fraction(10**6), BANDWIDTH), "Gbit/s": (Fraction(10**9), BANDWIDTH),
}
UNIT_NAMES = tuple(UNITS)

DIMENSION_NAMES = {TIME: "a time", FREQUENCY: "a frequency", DATA: "a data size", BANDWIDTH: "a bandwidth",
                   NUMBER: "a plain number"}
EXAMPLES = {TIME: "2 ns", FREQUENCY: "1 GHz", DATA: "64 B", BANDWIDTH: "64 GB/s", NUMBER: "4"}


def dimension_name(dim: tuple[int, int]) -> str:
    """``a time``, ``a frequency``, ... or ``a quantity in s^a bit^b``."""
    return DIMENSION_NAMES.get(dim, f"a quantity in s^{dim[0]} bit^{dim[1]}")


@attrs.frozen(slots=True)
class Quantity:
    """An exact value in seconds and bits with its dimension; never dimensionless (a plain
    number is an ``int`` or a ``Fraction``)."""

    value: Fraction
    dim: tuple[int, int]

    def __str__(self) -> str:
        return format_quantity(self)


def quantity(number, unit: str):
    """``number unit`` as a Quantity."""
    scale, dim = UNITS[unit]
    return Quantity(Fraction(number) * scale, dim)


def normalise(value):
    """A Fraction with denominator 1 becomes an int; a dimensionless Quantity a number."""
    if isinstance(value, Quantity) and value.dim == NUMBER:
        value = value.value
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    return value


def dim_of(value) -> tuple[int, int]:
    return value.dim if isinstance(value, Quantity) else NUMBER


def magnitude(value) -> Fraction:
    return value.value if isinstance(value, Quantity) else Fraction(value)


def make(value: Fraction, dim: tuple[int, int]):
    """A value of dimension ``dim``: a Quantity, or a plain number when dimensionless."""
    if dim == NUMBER:
        return normalise(value)
    return Quantity(value, dim)


def in_unit(value, unit: str) -> Fraction:
    """The number of ``unit`` in ``value`` (dimensions must agree)."""
    scale, _ = UNITS[unit]
    return magnitude(value) / scale


def to_ps(value) -> int:
    """A time as integer picoseconds: rounded to the nearest ps, an exact half to the even
    neighbour (the rule of Python's ``round`` and of the kernel's clock periods)."""
    return round(magnitude(value) * 10**12)


def period_ps(frequency_or_time) -> int:
    """A clock period in integer ps from a frequency (1/f) or a period, rounded as ``to_ps``."""
    if dim_of(frequency_or_time) == FREQUENCY:
        return round(Fraction(10**12) / magnitude(frequency_or_time))
    return to_ps(frequency_or_time)


def cycles_ceil(time, period: int) -> int:
    """How many receiver cycles of ``period`` ps cover ``time``: rounded up, never below 1."""
    return max(1, ceil(magnitude(time) * 10**12 / period))


def _pretty_number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    as_float = float(value)
    text = f"{as_float:.6g}"
    return text


def format_number(value) -> str:
    """An int, or a Fraction as a short decimal."""
    if isinstance(value, Fraction):
        return _pretty_number(value)
    return str(value)


_DISPLAY = {
    TIME: ("s", "ms", "us", "ns", "ps"),
    FREQUENCY: ("GHz", "MHz", "kHz", "Hz"),
    BANDWIDTH: ("GB/s", "MB/s", "KB/s", "B/s", "bit/s"),
}


def format_quantity(q: Quantity) -> str:
    """A readable form: ``1 GHz``, ``625 ps``, ``128 KiB``, ``64 GB/s``."""
    if q.dim == DATA:
        bits = q.value
        if bits % 8 == 0 and bits != 0:
            nbytes = bits / 8
            for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
                if nbytes % size == 0:
                    return f"{_pretty_number(nbytes / size)} {unit}"
            return f"{_pretty_number(nbytes)} B"
        return f"{_pretty_number(bits)} bit"
    units = _DISPLAY.get(q.dim)
    if units is None:
        return f"{_pretty_number(q.value)} s^{q.dim[0]} bit^{q.dim[1]}"
    for unit in units:
        scaled = q.value / UNITS[unit][0]
        if abs(scaled) >= 1:
            return f"{_pretty_number(scaled)} {unit}"
    return f"{_pretty_number(q.value / UNITS[units[-1]][0])} {units[-1]}"


def check_dimension(value, expected: tuple[int, int], what: str, span) -> None:
    """Raise an ArchError naming ``what`` if ``value`` is not of dimension ``expected``."""
    got = dim_of(value)
    if got != expected:
        shown = format_quantity(value) if isinstance(value, Quantity) else format_number(value)
        raise ArchError(f"{what} expects {dimension_name(expected)}, got {dimension_name(got)} ({shown})",
                        hint=f"write {dimension_name(expected)} such as {EXAMPLES.get(expected, '...')}",
                        span=span)


def whole(value: Fraction, what: str, unit: str, span) -> int:
    """An exact integer, or an ArchError saying ``what`` is not a whole number of ``unit``."""
    if value.denominator != 1:
        plural = {"bit": "bits", "B": "bytes"}.get(unit, unit)
        raise ArchError(f"{what} is not a whole number of {plural} ({format_number(value)} {unit})",
                        hint=f"use a multiple of 1 {unit}", span=span)
    return int(value)


__all__ = ["BANDWIDTH", "DATA", "FREQUENCY", "NUMBER", "TIME", "Quantity", "UNITS", "UNIT_NAMES", "ceil",
           "check_dimension", "cycles_ceil", "dim_of", "dimension_name", "floor", "format_number",
           "format_quantity", "in_unit", "magnitude", "make", "normalise", "period_ps", "quantity", "to_ps",
           "whole"]
