"""Component parameters: typed, documented, validated by attrs.

A model declares its parameters as class attributes::

    depth = Param(int, 2, "entries the buffer holds", check=at_least(1))

``@model`` turns those declarations into an attrs class (``Model.Params``) whose validators
run when the component is built, so a wrong type or an out-of-range value is one
``ParameterError`` that names the component, the parameter and the reason.
"""

from __future__ import annotations

import difflib

from typing import Any, Callable

import attrs

from .errors import ParameterError

_MISSING = attrs.NOTHING

Check = Callable[[Any], "str | None"]


class Param:
    """The declaration of one parameter: type, default (omit for required), doc, unit, check.

    ``check`` returns ``None`` when a value is acceptable and otherwise a phrase saying what
    is required (``"must be at least 1"``), used verbatim in the error.
    """

    def __init__(self, type_: type | tuple, default: Any = _MISSING, doc: str = "", *,
                 unit: str | None = None, check: Check | None = None):
        self.type = type_
        self.default = default
        self.doc = doc
        self.unit = unit
        self.check = check
        self.name = ""

    @property
    def required(self) -> bool:
        return self.default is _MISSING

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def type_name(self) -> str:
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        return " or ".join(t.__name__ for t in types)

    def describe(self) -> str:
        """One catalogue line: ``depth: int = 2 -- entries the buffer holds``."""
        default = "required" if self.required else f"= {self.default!r}"
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{self.name}: {self.type_name()} {default}{unit} -- {self.doc}"


def _accepts(type_: type | tuple, value: Any) -> bool:
    types = type_ if isinstance(type_, tuple) else (type_,)
    if isinstance(value, bool) and bool not in types:
        return False  # True is an int in Python, never a parameter's intended int
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    return isinstance(value, types)


def _validator(param: Param) -> Callable[[Any, Any, Any], None]:
    def validate(_instance: Any, attribute: Any, value: Any) -> None:
        if param.default is None and value is None:
            return
        if not _accepts(param.type, value):
            raise ParameterError(
                f"parameter '{attribute.name}' must be {param.type_name()}, got {type(value).__name__} {value!r}")
        if param.check is not None:
            problem = param.check(value)
            if problem:
                raise ParameterError(f"parameter '{attribute.name}' {problem}, got {value!r}")
    return validate


def make_params_class(model_name: str, params: list[Param]) -> type:
    """Build the attrs class holding one model's validated parameter values."""
    fields = {
        p.name: attrs.field(default=p.default, validator=_validator(p), kw_only=True)
        for p in params
    }
    return attrs.make_class(f"{model_name}Params", fields, frozen=True, slots=True)


def at_least(low: Any) -> Check:
    """Check that a value is >= ``low``."""
    return lambda v: None if v >= low else f"must be at least {low}"


def in_range(low: Any, high: Any) -> Check:
    """Check that ``low <= value <= high``."""
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


def one_of(*choices: Any) -> Check:
    """Check that a value is one of ``choices``."""
    listed = ", ".join(repr(c) for c in choices)
    words = [c for c in choices if isinstance(c, str)]

    def check(value: Any) -> str | None:
        if value in choices:
            return None
        close = difflib.get_close_matches(value, words, n=1) if isinstance(value, str) else []
        return f"must be one of {listed}" + (f" (did you mean {close[0]!r}?)" if close else "")
    return check
