"""The names an ``.arch`` module body sees while it is elaborated, and the values bound to them.

A :class:`Scope` is a chain of frames (a ``for`` body inside a module inside the global
frame). Names are bound to language values (int, Fraction, Quantity, bool, str, list,
:class:`ModelRef`), to instances (:class:`InstanceBinding`), to clocks (:class:`ClockBinding`),
or to :data:`POISON` when the statement that defined them failed, so later uses stay quiet.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import attrs

from ..kernel import ClockDomain, Span, did_you_mean
from . import units
from .units import Quantity

__all__ = ["AddressRangeValue", "Cascade", "ClockBinding", "InstanceBinding", "ModelRef", "POISON", "Poison", "Scope",
           "describe", "did_you_mean", "format_value"]


@attrs.frozen
class ModelRef:
    """A model or module name used as a value (a parameter of type ``model``)."""

    name: str


@attrs.frozen
class AddressRangeValue:
    """An address map entry as a language value: bytes ``[start, end)`` owned by network
    terminal ``terminal`` (or interleaved over a tuple of terminals); ``span`` is where it was
    written (for overlap errors)."""

    start: int
    end: int
    terminal: int | tuple
    span: Span = attrs.field(eq=False)

    def __str__(self) -> str:
        owner = list(self.terminal) if isinstance(self.terminal, tuple) else self.terminal
        return f"{self.start:#_x} .. {self.end:#_x} -> {owner}"


class Cascade(Exception):
    """A use of something that already failed: stay silent, the first error was reported."""


class Poison:
    """Stands in for an instance whose statement failed."""


POISON = Poison()


@attrs.define
class InstanceBinding:
    """An instance or instance array bound to a name in a module body."""

    items: list
    is_array: bool
    span: Span


@attrs.define
class ClockBinding:
    """A clock domain bound to a name in a module body."""

    domain: ClockDomain
    span: Span


class Scope:
    """Names visible at one point: a chain of frames ending in the global frame."""

    __slots__ = ("names", "origins", "parent", "module")

    def __init__(self, parent: "Scope | None" = None, module: "Scope | None" = None):
        self.names: dict[str, Any] = {}
        self.origins: dict[str, Span] = {}  # where a module parameter's value was written
        self.parent = parent
        self.module = module if module is not None else self

    def origin(self, name: str) -> Span | None:
        """Where the value bound to module parameter ``name`` was written (the caller's
        argument, or the default), or None for any other name."""
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.origins.get(name)
            scope = scope.parent
        return None

    def lookup(self, name: str):
        scope: Scope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        raise KeyError(name)

    def visible(self) -> list[str]:
        seen: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            seen.extend(scope.names)
            scope = scope.parent
        return seen


def describe(value) -> str:
    """A language value with its kind, for error messages (``int 3``, ``time (2 ns)``)."""
    if isinstance(value, bool):
        return f"bool {'true' if value else 'false'}"
    if isinstance(value, str):
        return f'string "{value}"'
    if isinstance(value, int):
        return f"int {value}"
    if isinstance(value, Fraction):
        return f"number {units.format_number(value)}"
    if isinstance(value, Quantity):
        return f"{units.dimension_name(value.dim)} ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, ModelRef):
        return f"model {value.name}"
    if isinstance(value, AddressRangeValue):
        return f"address range {value}"
    return type(value).__name__


def format_value(value) -> str:
    """A resolved value as .arch source would write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (int, Fraction)):
        return units.format_number(value)
    if isinstance(value, Quantity):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, ModelRef):
        return value.name
    if isinstance(value, AddressRangeValue):
        return str(value)
    return repr(value)
