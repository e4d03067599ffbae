"""What the parts of the elaborator share: its limits, the structural component a module
becomes, and how a language value becomes a model parameter's Python value."""

from __future__ import annotations

from fractions import Fraction

import attrs

from ..kernel import Component, Param, Span
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


MODULE_CLASSES: dict[int, type] = {}


def module_class(module: ast.ModuleDef) -> type:
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
