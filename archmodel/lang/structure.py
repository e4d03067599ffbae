"""What the parts of the elaborator share: its limits, the structural component a module
becomes, and how a language value becomes a model parameter's Python value."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, NoReturn

import attrs

from ..kernel import ArchError, ClockDomain, Component, Param, Span
from . import ast, units
from .scope import AddressRangeValue, ModelRef

DEFAULT_CLOCK_PS = 1000


@attrs.frozen
class Limits:
    """Guards against runaway descriptions: instances created, module nesting depth, and how
    many errors to collect before giving up."""

    max_instances: int = 1_000_000
    max_depth: int = 64
    max_errors: int = 50


class ModuleComponent(Component):
    """A structural component made by a ``module`` or ``system`` of a ``.arch`` file.

    ``arch_params`` holds the resolved module parameters; ``namespace`` its instances and
    exposed ports, so paths like ``cluster.dma.ext`` resolve through it.
    """

    arch_params: dict = {}
    namespace: dict
    """The module body's names (instances, exposed ports), set when it is elaborated."""
    exposed: dict
    """The ports the body exposes by their outside names (``expose inner.port as name``)."""
    module_def: ast.ModuleDef
    """The definition this class was made from (see :func:`module_class`)."""


MODULE_CLASSES: dict[int, type[ModuleComponent]] = {}


def module_class(module: ast.ModuleDef) -> type[ModuleComponent]:
    """The component class a module's instances are made of (one per module definition)."""
    klass = MODULE_CLASSES.get(id(module))
    if klass is None or klass.module_def is not module:
        klass = type(module.name, (ModuleComponent,), {
            "model_name": module.name, "module_def": module,
            "__doc__": f"The .arch {module.kind} {module.name} ({module.file})."})
        MODULE_CLASSES[id(module)] = klass
    return klass


class Abort(Exception):
    """A limit was hit: stop elaborating (the error is already recorded)."""


# -- parameter units ------------------------------------------------------------------------------
# How the units a model declares (Param.unit) are written in the language. Any other unit
# ("messages", "requests") counts things: the parameter takes a plain number.
_UNIT_WORDS = {
    "bytes": "B", "byte": "B", "B": "B", "bits": "bit", "bit": "bit",
    "ps": "ps", "ns": "ns", "us": "us", "ms": "ms", "s": "s",
    "Hz": "Hz", "kHz": "kHz", "MHz": "MHz", "GHz": "GHz",
    "B/s": "B/s", "GB/s": "GB/s", "MB/s": "MB/s", "bit/s": "bit/s", "Gbit/s": "Gbit/s",
    "cycles": "cycles",
}


def param_unit(param: Param) -> str | None:
    """The language unit a model parameter's number is in, from its declaration's unit
    (:attr:`Param.unit <archmodel.kernel.Param.unit>`): ``B`` for bytes, ``cycles`` for a
    count of the receiving clock's cycles, ..., or None for a plain number."""
    unit = param.unit
    return _UNIT_WORDS.get(unit) if unit is not None else None


def plain_value(value):
    """A language value as the Python value a model receives."""
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, ModelRef):
        return value.name
    if isinstance(value, AddressRangeValue):
        terminal = list(value.terminal) if isinstance(value.terminal, tuple) else value.terminal
        return (value.start, value.end, terminal)
    return value


TYPES = ("int", "float", "bool", "string", "time", "frequency", "bytes", "bits", "bandwidth", "model")
TYPE_DIMS = {"time": units.TIME, "frequency": units.FREQUENCY, "bytes": units.DATA, "bits": units.DATA,
              "bandwidth": units.BANDWIDTH}


TOPOLOGY_MODULE = ast.ModuleDef("module", "Topology", (), (), Span("<builtin>", 1, 1), Span("<builtin>", 1, 1),
                                 "<builtin>")


if TYPE_CHECKING:
    from .scope import Scope

    class ElaboratorParts:
        """What the parts of the :class:`~.elaborate.Elaborator` (its mixins: instancing,
        wiring, expressions) use of one another, declared for the type checker; at run time
        the Elaborator combines them and this is ``object``."""

        limits: Limits
        instances: int
        iterations: int
        modules: dict[str, ast.ModuleDef]
        models: dict[str, type[Component]]
        origins: dict[int, Span]
        argument_spans: dict[int, tuple[dict, dict[str, Span], dict[str, Span]]]
        runs: list

        def error(self, err: ArchError, span: Span | None = None) -> None: ...
        def fail(self, message: str, span: Span, hint: str | None = None) -> NoReturn: ...
        def evaluate(self, expr: Any, scope: Scope, expected: ast.TypeRef | None = None) -> Any: ...
        def _int(self, value: Any, what: str, span: Span) -> int: ...
        def _lookup_clock(self, name: str, scope: Scope, span: Span) -> ClockDomain: ...
        @staticmethod
        def _peek(scope: Scope, name: str) -> Any: ...
        def _elaborate_module(self, comp: ModuleComponent, module: ast.ModuleDef, given: dict, call_span: Span,
                              placed: ClockDomain | None) -> None: ...
        def _statements(self, body: Any, scope: Scope, comp: Component, clock: Any, deferred: list,
                        top_level: bool = False) -> None: ...
        def _resolve_model(self, call: ast.ModelCall, scope: Scope) -> Any: ...
        def _count_instance(self, span: Span) -> None: ...
        def _make_model(self, klass: Any, name: str, parent: Component, kwargs: dict, stmt: Any,
                        placed: ClockDomain | None) -> Component: ...
        def _model_args(self, call: ast.ModelCall, klass: Any, scope: Scope, clock: ClockDomain | None) -> dict: ...
        def _clock_of(self, comp: Component) -> ClockDomain | None: ...
        def resolve(self, endpoint: ast.Endpoint, scope: Scope) -> list: ...
else:
    ElaboratorParts = object
