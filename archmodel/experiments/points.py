"""The points of a design-space sweep: axes parsed from ``--sweep`` specs, combined as a grid,
zipped, or sampled at random.

A value is kept as ``.arch`` expression text, exactly what ``archmodel run -p NAME=VALUE``
takes (``4``, ``0.25``, ``2 ns``, ``"uniform"``); :func:`display_value` is its form in a
result row (a number where the text is one, a quoted string without its quotes). Points are
generated in the driver only, so the same specs and seed give the same points whatever runs
them.
"""

from __future__ import annotations

import itertools
import math
import re

import attrs
import numpy as np

from ..kernel import ArchError
from ..lang.overrides import parse_overrides as parse_fixed  # noqa: F401 (re-exported: -p pairs of a sweep)

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
_QUOTED = re.compile(r'"([^"\\]*)"')
SPEC_HINT = 'for example: --sweep rate=0.05:0.5:0.05, --sweep depth=2,4,8 or --sweep \'traffic="uniform","transpose"\''


def display_value(text: str):
    """A value's form in a result row (and a builder's keyword argument): an int or float where
    the text is a plain number, a bool for ``true``/``false``, the contents of a plain quoted
    string, otherwise the expression text itself (``2 ns``)."""
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    if text in ("true", "false"):
        return text == "true"
    quoted = _QUOTED.fullmatch(text)
    return quoted.group(1) if quoted else text


def value_text(value) -> str:
    """The ``.arch`` expression text of a Python value given to :func:`sweep`: numbers and
    booleans as literals, strings as they are (they are expressions, as after ``-p``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = value.item() if isinstance(value, np.generic) else value
        if isinstance(number, float) and not math.isfinite(number):
            raise ArchError(f"{value!r} is not a finite number")
        return repr(number)
    if isinstance(value, str):
        return value
    raise ArchError(f"{value!r} ({type(value).__name__}) is not a parameter value",
                    hint="give numbers, booleans or .arch expression text such as '2 ns' or '\"uniform\"'")


@attrs.frozen
class Axis:
    """One swept parameter: a list of values, or a numeric range ``low .. high``.

    ``values`` is the list to enumerate (for a stepped range, its points, ``high`` included);
    a range without a step has ``values`` None and can only be sampled (``--samples``).
    ``integer`` says a sampled range draws whole numbers.
    """

    name: str
    values: tuple | None
    low: float | None = None
    high: float | None = None
    integer: bool = False

    def sample(self, rng: np.random.Generator) -> str:
        """One value drawn at random: uniformly from the list, or uniformly in the range
        (whole numbers for an integer range; floats rounded to 6 significant digits, so the
        rows stay readable and the value reads back the same from the CSV)."""
        if self.values is not None:
            return self.values[int(rng.integers(len(self.values)))]
        low, high = self.low, self.high
        assert low is not None and high is not None  # parse_axis gives a range without values both ends
        if self.integer:
            return repr(int(rng.integers(int(low), int(high) + 1)))
        return repr(float(f"{rng.uniform(low, high):.6g}"))


def _split_list(text: str) -> list[str]:
    """Split at commas outside quotes, parentheses and brackets (``"a,b", f(1, 2)`` is two)."""
    items, depth, quoted, start = [], 0, False, 0
    for i, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif not quoted and char in "([":
            depth += 1
        elif not quoted and char in ")]":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def _number(text: str) -> int | float:
    text = text.strip()
    if _INTEGER.fullmatch(text):
        return int(text)
    if _NUMBER.fullmatch(text):
        return float(text)
    raise ValueError(text)


MAX_POINTS = 1_000_000
"""The most points one sweep may have: counted before any is made (``rate=0:1:1e-12`` would
otherwise build 10^12 of them)."""


def _stepped(start: float, stop: float, step: float, spec: str = "") -> tuple[str, ...]:
    """START, START + STEP, ... up to STOP inclusive, as expression text: integers when all
    three are integers, else floats rounded to 10 decimals (so 0.1 + 2 x 0.05 is 0.2)."""
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > MAX_POINTS:
        raise ArchError(f"--sweep '{spec}' has {count:,} values, more than a sweep may have ({MAX_POINTS:,})",
                        hint="take a larger step, or draw random points from the range with --samples N")
    if all(isinstance(x, int) for x in (start, stop, step)):
        return tuple(repr(start + i * step) for i in range(count))
    return tuple(repr(round(start + i * step, 10)) for i in range(count))


def parse_axis(spec: str) -> Axis:
    """``NAME=START:STOP:STEP`` (STOP inclusive), ``NAME=LOW:HIGH`` (a range to sample) or
    ``NAME=V1,V2,...`` (``.arch`` expressions) -> :class:`Axis`."""
    name, sep, body = spec.partition("=")
    name = name.strip()
    if not sep or not name.isidentifier() or not body.strip():
        raise ArchError(f"--sweep '{spec}' is not NAME=START:STOP:STEP, NAME=LOW:HIGH or NAME=V1,V2,...",
                        hint=SPEC_HINT)
    if ":" in body and '"' not in body:
        parts = body.split(":")
        try:
            numbers = [_number(p) for p in parts]
        except ValueError:
            numbers = None
        if numbers is None or len(parts) not in (2, 3):
            raise ArchError(f"--sweep '{spec}': a range is START:STOP:STEP or LOW:HIGH of plain numbers",
                            hint=SPEC_HINT)
        low, high = numbers[0], numbers[1]
        if high < low:
            raise ArchError(f"--sweep '{spec}': the range ends ({high}) before it starts ({low})")
        if len(numbers) == 3:
            if numbers[2] <= 0:
                raise ArchError(f"--sweep '{spec}': the step must be positive, got {numbers[2]}")
            return Axis(name, _stepped(low, high, numbers[2], spec=spec), low, high)
        return Axis(name, None, low, high, integer=isinstance(low, int) and isinstance(high, int))
    items = _split_list(body)
    if any(not item for item in items):
        raise ArchError(f"--sweep '{spec}' has an empty value", hint=SPEC_HINT)
    return Axis(name, tuple(items))


def axis_from_values(name: str, values) -> Axis:
    """An :class:`Axis` from Python values (:func:`sweep`'s ``axes`` mapping): a list, or a
    spec string as after ``--sweep NAME=``."""
    if not name.isidentifier():
        raise ArchError(f"'{name}' is not a parameter name")
    if isinstance(values, str):
        return parse_axis(f"{name}={values}")
    values = list(values)
    if not values:
        raise ArchError(f"the values of '{name}' are empty")
    return Axis(name, tuple(value_text(v) for v in values))


@attrs.frozen
class Point:
    """One point of a sweep: every parameter override (fixed and swept, name -> expression
    text) and the simulation seed. ``key`` identifies it in a results file."""

    params: tuple  # ((name, text), ...) in column order
    seed: int

    @property
    def overrides(self) -> dict[str, str]:
        """The parameters as ``load(params=...)`` takes them."""
        return dict(self.params)

    @property
    def values(self) -> dict:
        """The parameters as a result row shows them (:func:`display_value`)."""
        return {name: display_value(text) for name, text in self.params}

    def key(self, input_sha256: str) -> tuple:
        """(the shown parameter values as CSV text, seed, input hash): what a row read back
        from the CSV must match for the point to count as done."""
        return (tuple(str(v) for v in self.values.values()), str(self.seed), input_sha256)


def generate(axes: list[Axis], *, fixed: dict[str, str] | None = None, mode: str = "grid",
             samples: int | None = None, seed: int = 0, seeds: int = 1) -> list[Point]:
    """The points of a sweep, without duplicates, in a fixed order.

    ``mode`` is ``grid`` (every combination, the first axis outermost), ``zip`` (the i-th
    value of every axis together; the lists must be equally long) or ``random`` (``samples``
    points, each axis drawn independently from a ``numpy`` generator seeded with ``seed``).
    Each combination runs with the simulation seeds ``seed .. seed + seeds - 1``. ``fixed``
    parameters (``-p``) are the same in every point. A random draw that repeats an earlier
    point is dropped (the simulation is deterministic: it would give the same row).
    """
    fixed = dict(fixed or {})
    names = [a.name for a in axes]
    for name in names:
        if names.count(name) > 1:
            raise ArchError(f"--sweep {name} is given twice", hint="give all of a parameter's values in one --sweep")
        if name in fixed:
            raise ArchError(f"'{name}' is both swept (--sweep) and fixed (-p)", hint="drop one of them")
    if seeds < 1:
        raise ArchError(f"--seeds must be at least 1, got {seeds}")
    if mode == "random":
        if samples is None or samples < 1:
            raise ArchError("random points need --samples N (at least 1)")
        if samples * seeds > MAX_POINTS:
            raise ArchError(f"--samples {samples:,} makes more points than a sweep may have ({MAX_POINTS:,})")
        rng = np.random.default_rng(seed)
        combos = [tuple(a.sample(rng) for a in axes) for _ in range(samples)]
    else:
        if samples is not None:
            raise ArchError("--samples draws random points; it cannot be combined with --zip")
        ranged = [a.name for a in axes if a.values is None]
        value_lists = [a.values for a in axes if a.values is not None]
        if ranged:
            raise ArchError(f"--sweep {ranged[0]} is a range without a step: a grid needs "
                            "NAME=START:STOP:STEP or NAME=V1,V2,...",
                            hint="give a step, or draw random points from the range with --samples N")
        if mode == "zip":
            lengths = {a.name: len(values) for a, values in zip(axes, value_lists)}
            if len(set(lengths.values())) > 1:
                raise ArchError("--zip pairs the i-th values of every --sweep, so they must be equally long: "
                                + ", ".join(f"{n} has {k}" for n, k in lengths.items()))
            combos = list(zip(*value_lists))
        elif mode == "grid":
            count = math.prod(len(values) for values in value_lists) * seeds
            if count > MAX_POINTS:
                raise ArchError(f"the grid has {count:,} points, more than a sweep may have ({MAX_POINTS:,})",
                                hint="sweep fewer values, or draw random points with --samples N")
            combos = list(itertools.product(*value_lists))
        else:
            raise ValueError(f"unknown mode {mode!r}")
    points, seen = [], set()
    for combo in combos:
        for replica in range(seeds):
            point = Point(tuple(fixed.items()) + tuple(zip(names, combo)), seed + replica)
            identity = (tuple(str(v) for v in point.values.values()), point.seed)
            if identity not in seen:
                seen.add(identity)
                points.append(point)
    return points
