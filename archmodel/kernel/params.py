"""Component parameters: typed, documented, with a unit and a check, in one declaration.

A model declares its parameters as class attributes::

    depth = Param(int, 2, "entries the buffer holds", unit="messages", check=at_least(1))

``Param`` is the one authority on a parameter: its name, type, default, unit and check. The
kernel validates every component's parameters through it when the component is built
(:meth:`~.component.Component.check_params`), and the ``.arch`` language asks the same
declaration for the unit a quantity such as ``2 ns`` converts to and for the same check, so a
wrong type or an out-of-range value is one ``ParameterError`` whatever built the component;
the language only adds where in the source it was written. ``@model`` turns the declarations
into an attrs class (``Model.Params``) holding the validated values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

import attrs

from .vocabulary import Problem, Registry, choice_problem

_MISSING = attrs.NOTHING

Check = Callable[[Any], "str | None"]

UNIT_SUFFIXES = (("_bytes", "bytes"), ("_bits", "bits"), ("_ps", "ps"), ("_ns", "ns"), ("_us", "us"),
                 ("_hz", "Hz"), ("_mhz", "MHz"), ("_ghz", "GHz"), ("_cycles", "cycles"))
"""The unit a parameter's name implies by its suffix (STYLE: units in the name), used when
its declaration names none: ``size_bytes`` is in bytes, ``latency_cycles`` in cycles."""


def unit_from_name(name: str) -> str | None:
    """The unit implied by ``name``'s suffix (see :data:`UNIT_SUFFIXES`), or None."""
    lowered = name.lower()
    for suffix, unit in UNIT_SUFFIXES:
        if lowered.endswith(suffix):
            return unit
    return None


def accepts(type_: type | tuple, value: Any) -> bool:
    """Whether ``value`` is of a parameter's type ``type_`` (a type or a tuple of them): an
    int passes for a float, a bool only where ``bool`` is named."""
    types = type_ if isinstance(type_, tuple) else (type_,)
    if isinstance(value, bool) and bool not in types:
        return False  # True is an int in Python, never a parameter's intended int
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    try:
        return isinstance(value, types)
    except TypeError:  # a declaration naming something that is not a type
        return False


@attrs.frozen
class Spelling:
    """How an error message writes a value given for a parameter: ``value`` the value alone
    (``got 0``), ``typed`` with its kind (``got str '4'``). The kernel spells Python values
    as Python does; the language passes its own, so a message quotes ``.arch`` syntax."""

    value: Callable[[Any], str] = repr
    typed: Callable[[Any], str] = lambda v: f"{type(v).__name__} {v!r}"


PYTHON = Spelling()
"""Values as Python writes them (``'four'``, ``True``)."""


class Param:
    """The declaration of one parameter: type, default (omit for required), doc, unit, check.

    ``unit`` is what the number means (``"bytes"``, ``"cycles"``, ``"ps"``, ``"messages"``);
    without one, the name's suffix gives it (:func:`unit_from_name`). ``check`` returns
    ``None`` when a value is acceptable and otherwise a phrase saying what is required
    (``"must be at least 1"``), used verbatim in the error; a :class:`~.vocabulary.Registry`'s
    ``check`` makes the parameter one of a closed vocabulary.
    """

    def __init__(self, type_: type | tuple, default: Any = _MISSING, doc: str = "", *,
                 unit: str | None = None, check: Check | None = None):
        self.type = type_
        self.default = default
        self.doc = doc
        self.declared_unit = unit
        self.check = check
        self.name = ""

    @property
    def required(self) -> bool:
        """Whether the parameter has no default and must be given."""
        return self.default is _MISSING

    @property
    def unit(self) -> str | None:
        """The declared unit, else the one the name's suffix implies, else None."""
        return self.declared_unit if self.declared_unit is not None else unit_from_name(self.name)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    if TYPE_CHECKING:
        # On a component a parameter reads as its value (``@model`` stores the validated
        # values); this tells a type checker so, where the class attribute is a declaration.
        def __get__(self, instance: Any, owner: type | None = None) -> Any: ...

    def copy(self, **changes: Any) -> "Param":
        """This declaration again (for another model that takes the same parameter), with
        ``changes`` among ``default``, ``doc``, ``check``."""
        param = Param(self.type, changes.pop("default", self.default), changes.pop("doc", self.doc),
                      unit=self.declared_unit, check=changes.pop("check", self.check))
        if changes:
            raise TypeError(f"Param.copy() got unexpected changes: {', '.join(changes)}")
        param.name = self.name
        return param

    @property
    def choices(self) -> list | None:
        """The values a closed vocabulary admits (a :class:`~.vocabulary.Registry`'s names, at
        the time of asking, or :func:`one_of`'s), or None when the check is not one."""
        registry = getattr(self.check, "__self__", None)
        if isinstance(registry, Registry):
            return registry.names()
        return getattr(self.check, "choices", None)

    def type_name(self) -> str:
        """``int``, or ``list or tuple`` for a parameter of several types."""
        types = self.type if isinstance(self.type, tuple) else (self.type,)
        return " or ".join(t.__name__ for t in types)

    def describe(self) -> str:
        """One catalogue line: ``depth: int = 2 [messages] -- entries the buffer holds``."""
        default = "required" if self.required else f"= {self.default!r}"
        unit = f" [{self.unit}]" if self.unit else ""
        return f"{self.name}: {self.type_name()} {default}{unit} -- {self.doc}"

    def problem(self, value: Any, spelling: Spelling = PYTHON) -> Problem | None:
        """None when ``value`` is acceptable; else what is wrong, as the end of a sentence
        about the parameter (``expects int, got str '4'``, ``must be at least 1, got 0``),
        with the check's hint if it gave one (``did you mean 'frfcfs'?``)."""
        if self.default is None and value is None:
            return None
        if not accepts(self.type, value):
            return Problem(f"expects {self.type_name()}, got {spelling.typed(value)}")
        if self.check is None:
            return None
        try:
            problem = self.check(value)
        except (TypeError, ValueError):  # a check that cannot compare this value: say so, not crash
            problem = Problem("has an unusable value")
        if not problem:
            return None
        return Problem(f"{problem}, got {spelling.value(value)}", getattr(problem, "hint", None))


class ParamGroup:
    """Parameters a model takes on behalf of a part it builds, derived from that part's own
    declarations rather than declared again (a network's router parameters are the router's).

    ``ParamGroup(NocRouter, "vcs", "buffer_depth", ...)`` in a class body declares those
    parameters on the model (same type, default, unit, check and doc, in that order, where
    the group stands); on a component, the group reads as a dict of their values, ready to be
    passed to the part: ``NocRouter(name, parent, **self.router_params)``.
    """

    def __init__(self, source: Any, *names: str):
        self.source = source
        self.params = [source.param_declaration(name).copy() for name in names]

    @property
    def names(self) -> list[str]:
        """The parameters of the group, in order."""
        return [p.name for p in self.params]

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        return {p.name: getattr(instance, p.name) for p in self.params}


def make_params_class(model_name: str, params: list[Param]) -> type:
    """Build the frozen attrs class holding one model's parameter values (validated by
    :meth:`~.component.Component.check_params` before they are stored)."""
    fields = {p.name: attrs.field(default=p.default, kw_only=True) for p in params}
    return attrs.make_class(f"{model_name}Params", fields, frozen=True, slots=True)


def at_least(low: Any) -> Check:
    """Check that a value is >= ``low``."""
    return lambda v: None if v >= low else f"must be at least {low}"


def in_range(low: Any, high: Any) -> Check:
    """Check that ``low <= value <= high``."""
    return lambda v: None if low <= v <= high else f"must be between {low} and {high}"


class _OneOf:
    """The check :func:`one_of` makes; ``choices`` lists what it admits."""

    def __init__(self, choices: tuple):
        self.choices = list(choices)

    def __call__(self, value: Any) -> Problem | None:
        return choice_problem(value, self.choices)


def one_of(*choices: Any) -> Check:
    """Check that a value is one of ``choices`` (for a vocabulary of a few words; a
    vocabulary others extend or look up is a :class:`~.vocabulary.Registry`)."""
    return _OneOf(choices)
