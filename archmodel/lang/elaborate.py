"""Elaboration: from parsed ``.arch`` files to a tree of kernel components.

Loading resolves imports (relative to the importing file, then the bundled ``library/``),
collects the modules and constants of every file into one namespace, picks the top
(the file's ``system``, or ``--top``), and builds it: module instances become structural
components, model instances become the Python models of the catalogue, connections become
kernel channels, clocks become :class:`~archmodel.kernel.ClockDomain` values.

Within a module body, definitions are order independent: constants and clocks are evaluated
first (in source order), then instances (including those in ``for``/``if``/``in`` blocks),
then connections and ``expose`` statements. Problems are collected rather than raised one at
a time, so ``archmodel check`` reports every independent error of a file in one pass; a
failed instance is remembered so that later uses of it do not repeat the same error.
"""

from __future__ import annotations

import gc
import inspect
import os
from fractions import Fraction
from math import floor
from pathlib import Path

import attrs

from ..kernel import ArchError, ClockDomain, Component, Span, catalogue, connect, unpaired_port
from ..paths import data_path
from . import ast, units
from .errors import LanguageErrors, SourceText
from .expressions import Expressions, unit_example
from .parser import parse, parse_expression
from .scope import (POISON, AddressRangeValue, Cascade, ClockBinding, InstanceBinding, ModelRef, Scope, describe,
                    did_you_mean, format_value)
from .topology import topology_generators
from .units import Quantity
from .workloads import workloads

DEFAULT_CLOCK_PS = 1000


@attrs.frozen
class Limits:
    """Guards against runaway descriptions: instances created, module nesting depth, and how
    many errors to collect before giving up."""

    max_instances: int = 10_000_000
    max_depth: int = 64
    max_errors: int = 50


class ModuleComponent(Component):
    """A structural component made by a ``module`` or ``system`` of a ``.arch`` file.

    ``arch_params`` holds the resolved module parameters; ``namespace`` its instances and
    exposed ports, so paths like ``cluster.dma.ext`` resolve through it.
    """

    arch_params: dict = {}


_MODULE_CLASSES: dict[int, type] = {}


def _module_class(module: ast.ModuleDef) -> type:
    klass = _MODULE_CLASSES.get(id(module))
    if klass is None or klass.module_def is not module:
        klass = type(module.name, (ModuleComponent,), {
            "model_name": module.name, "module_def": module,
            "__doc__": f"The .arch {module.kind} {module.name} ({module.file})."})
        _MODULE_CLASSES[id(module)] = klass
    return klass


class _Abort(Exception):
    """A limit was hit: stop elaborating (the error is already recorded)."""


@attrs.define
class Elaborated:
    """The result of loading a ``.arch`` file: the top component and what surrounds it."""

    top: Component
    file: str
    traces: list[str]
    sources: SourceText
    instances: int
    origins: dict
    top_module: ast.ModuleDef


# -- parameter unit rules ----------------------------------------------------------------------
_UNIT_WORDS = {
    "bytes": "B", "byte": "B", "B": "B", "bits": "bit", "bit": "bit",
    "ps": "ps", "ns": "ns", "us": "us", "ms": "ms", "s": "s",
    "Hz": "Hz", "kHz": "kHz", "MHz": "MHz", "GHz": "GHz",
    "B/s": "B/s", "GB/s": "GB/s", "MB/s": "MB/s", "bit/s": "bit/s", "Gbit/s": "Gbit/s",
}
_SUFFIX_UNITS = (("_bytes", "B"), ("_bits", "bit"), ("_ps", "ps"), ("_ns", "ns"), ("_us", "us"),
                 ("_hz", "Hz"), ("_mhz", "MHz"), ("_ghz", "GHz"), ("_cycles", "cycles"))


def param_unit(param) -> str | None:
    """The unit a model parameter is measured in: its declared ``unit`` if the language knows
    it, else one implied by its name's suffix (``size_bytes``, ``latency_cycles``, ``delay_ps``),
    else None (a plain number)."""
    if param.unit in _UNIT_WORDS:
        return _UNIT_WORDS[param.unit]
    if param.unit == "cycles":
        return "cycles"
    for suffix, unit in _SUFFIX_UNITS:
        if param.name.lower().endswith(suffix):
            return unit
    return None


def _accepts(types, value) -> bool:
    types = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in types:
        return False
    if float in types and isinstance(value, int) and not isinstance(value, bool):
        return True
    try:
        return isinstance(value, types)
    except TypeError:
        return False


def _plain(value):
    """A language value as the Python value a model receives."""
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, ModelRef):
        return value.name
    if isinstance(value, AddressRangeValue):
        terminal = list(value.terminal) if isinstance(value.terminal, tuple) else value.terminal
        return (value.start, value.end, terminal)
    return value


_TYPES = ("int", "float", "bool", "string", "time", "frequency", "bytes", "bits", "bandwidth", "model")
_TYPE_DIMS = {"time": units.TIME, "frequency": units.FREQUENCY, "bytes": units.DATA, "bits": units.DATA,
              "bandwidth": units.BANDWIDTH}

class Elaborator(Expressions):
    """Loads files and builds one top component; collects diagnostics as it goes."""

    def __init__(self, limits: Limits = Limits(), search_path: list[Path] | None = None):
        self.limits = limits
        self.sources = SourceText()
        self.errors: list[ArchError] = []
        self._seen_errors: set = set()
        self.files: dict[Path, ast.File] = {}
        self.modules: dict[str, ast.ModuleDef] = {}
        self.global_scope = Scope()
        self.instances = 0
        self.origins: dict[int, Span] = {}
        self.traces: list[str] = []
        self.domains: dict[tuple, ClockDomain] = {}
        self.runs: list = []
        self.depth_stack: list[str] = []
        self.load_failed = False
        library = data_path("library")
        self.search_path = list(search_path or []) + [library, library.parent]
        self.models = catalogue()

    # -- diagnostics --------------------------------------------------------------------------
    def error(self, err: ArchError, span: Span | None = None) -> None:
        if err.span is None:
            err.span = span
        key = (err.span, err.message)
        if key in self._seen_errors:
            return
        self._seen_errors.add(key)
        self.errors.append(err)
        if len(self.errors) >= self.limits.max_errors:
            raise _Abort()

    def fail(self, message: str, span: Span, hint: str | None = None):
        raise ArchError(message, hint=hint, span=span)

    # -- loading ------------------------------------------------------------------------------
    def _display(self, path: Path) -> str:
        try:
            rel = os.path.relpath(path)
        except ValueError:
            return str(path)
        return str(path) if rel.startswith("..") else rel

    def load_file(self, path: Path, shown: str, stack: list[Path]) -> ast.File | None:
        resolved = path.resolve()
        if resolved in self.files:
            return self.files[resolved]
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as err:
            raise ArchError(f"cannot read {shown}: {getattr(err, 'strerror', None) or err}") from None
        self.sources.add(shown, text)
        try:
            parsed = parse(text, shown)
        except ArchError as err:
            self.load_failed = True
            self.error(err)
            self.files[resolved] = None
            return None
        self.files[resolved] = parsed
        stack = stack + [resolved]
        for imp in parsed.imports:
            target = self._find_import(imp, path)
            if target is None:
                continue
            if target.resolve() in stack:
                cycle = [self._display(p) for p in stack[stack.index(target.resolve()):]] + [self._display(target)]
                self.load_failed = True
                self.error(ArchError(f"import cycle: {' -> '.join(cycle)}",
                                     hint="move the shared definitions into a file both can import", span=imp.span))
                continue
            self.load_file(target, self._display(target), stack)
        for module in parsed.modules:
            self._define_module(module)
        for const in parsed.consts:
            self._define_const(const, self.global_scope)
        return parsed

    def _find_import(self, imp: ast.Import, importer: Path) -> Path | None:
        candidates = [importer.parent / imp.path] + [base / imp.path for base in self.search_path]
        for candidate in candidates:
            if candidate.is_file():
                return candidate
        nearby = []
        folder = importer.parent
        if folder.is_dir():
            nearby = [p.name for p in folder.glob("*.arch")]
        library = [p.name for p in self.search_path[-2].glob("*.arch")] if self.search_path[-2].is_dir() else []
        self.load_failed = True
        hint = did_you_mean(Path(imp.path).name, nearby + library)
        if hint is None:
            hint = ("imports are looked up beside the importing file, then in the bundled library: "
                    + (", ".join(sorted(library)) or "(empty)"))
        self.error(ArchError(f"cannot find import '{imp.path}'", hint=hint, span=imp.span))
        return None

    def _define_module(self, module: ast.ModuleDef) -> None:
        if module.name in self.modules:
            first = self.modules[module.name]
            self.error(ArchError(f"'{module.name}' is defined twice", hint=f"first defined at {first.name_span}",
                                 span=module.name_span))
            return
        if module.name in self.models:
            self.error(ArchError(f"module '{module.name}' has the name of a built-in model",
                                 hint="choose another name", span=module.name_span))
            return
        self.modules[module.name] = module
        seen = {}
        for param in module.params:
            if param.name in seen:
                self.error(ArchError(f"parameter '{param.name}' is declared twice", span=param.name_span))
            seen[param.name] = param
            if param.type.name != "enum" and param.type.name not in _TYPES:
                self.error(ArchError(f"unknown type '{param.type.name}'",
                                     hint=did_you_mean(param.type.name, _TYPES) or "types: " + ", ".join(_TYPES)
                                     + ", enum(a, b, ...)", span=param.type.span))

    def _define_const(self, const: ast.Const, scope: Scope) -> None:
        try:
            self._declare(scope, const.name, self.evaluate(const.value, scope), const.name_span)
        except Cascade:
            scope.names[const.name] = POISON
        except ArchError as err:
            scope.names[const.name] = POISON
            self.error(err, const.span)

    def _declare(self, scope: Scope, name: str, value, span: Span) -> None:
        if name in scope.names:
            previous = scope.names[name]
            where = getattr(previous, "span", None)
            raise ArchError(f"'{name}' is already defined in this scope",
                            hint=f"first defined at {where}" if where else "choose another name", span=span)
        scope.names[name] = value

    # -- the top ---------------------------------------------------------------------------------
    def choose_top(self, main: ast.File, top: str | None, span: Span) -> ast.ModuleDef:
        if top is not None:
            if top in self.modules:
                return self.modules[top]
            raise ArchError(f"--top: no module or system named '{top}'",
                            hint=did_you_mean(top, self.modules) or "defined: " + (", ".join(self.modules) or "none"))
        systems = [m for m in main.modules if m.kind == "system"]
        if len(systems) == 1:
            return systems[0]
        if not systems:
            raise ArchError(f"{main.path} has no system", span=span,
                            hint="declare 'system Name { ... }', or pick a module with --top NAME")
        names = ", ".join(s.name for s in systems)
        raise ArchError(f"{main.path} has {len(systems)} systems: {names}", span=systems[1].name_span,
                        hint="pick one with --top NAME")

    def build(self, module: ast.ModuleDef, overrides: dict) -> Component:
        values = {}
        for name, (expr, text) in overrides.items():
            if name not in {p.name for p in module.params}:
                raise ArchError(f"-p {name}: '{module.name}' has no parameter '{name}'",
                                hint=did_you_mean(name, [p.name for p in module.params])
                                or "parameters: " + (", ".join(p.name for p in module.params) or "none"))
            values[name] = (self.evaluate(expr, self.global_scope), expr.span)
        klass = _module_class(module)
        top = klass(module.name, None)
        self.instances += 1
        self.origins[id(top)] = module.name_span
        self._elaborate_module(top, module, values, module.name_span, placed=None)
        return top

    # -- modules ---------------------------------------------------------------------------------
    def _module_params(self, module: ast.ModuleDef, given: dict, call_span: Span) -> Scope:
        scope = Scope(self.global_scope)
        for param in module.params:
            if param.name in given:
                value, span = given[param.name]
            elif param.default is not None:
                value, span = self.evaluate(param.default, scope, expected=param.type), param.default.span
            else:
                self.fail(f"'{module.name}' is missing required parameter '{param.name}'", call_span,
                          hint=f"{param.name}: {self._type_text(param.type)}")
            scope.names[param.name] = self._check_type(value, param, module, span)
        return scope

    def _type_text(self, type_ref: ast.TypeRef) -> str:
        if type_ref.name == "enum":
            return "enum(" + ", ".join(type_ref.members) + ")"
        return type_ref.name

    def _check_type(self, value, param: ast.ParamDecl, module: ast.ModuleDef, span: Span):
        kind = param.type.name
        what = f"parameter '{param.name}' of '{module.name}'"
        value = units.normalise(value)
        if kind in _TYPE_DIMS:
            units.check_dimension(value, _TYPE_DIMS[kind], what, span)
            return value
        ok = {
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "float": lambda v: isinstance(v, (int, Fraction)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "string": lambda v: isinstance(v, str),
            "model": lambda v: isinstance(v, ModelRef),
            "enum": lambda v: isinstance(v, str) and v in param.type.members,
        }.get(kind, lambda v: True)
        if not ok(value):
            if isinstance(value, Quantity) and kind in ("int", "float"):
                raise ArchError(f"{what} expects a plain {kind}, got {describe(value)}",
                                hint=f"divide by a unit to get a number, e.g. x / 1 {unit_example(value)}", span=span)
            raise ArchError(f"{what} expects {self._type_text(param.type)}, got {describe(value)}", span=span,
                            hint="one of: " + ", ".join(param.type.members) if kind == "enum" else None)
        return value

    def _elaborate_module(self, comp: Component, module: ast.ModuleDef, given: dict, call_span: Span,
                          placed: ClockDomain | None) -> None:
        if len(self.depth_stack) >= self.limits.max_depth:
            chain = " -> ".join(self.depth_stack[-4:] + [module.name])
            self.error(ArchError(f"modules nested more than {self.limits.max_depth} deep (... {chain})",
                                 hint=f"does '{module.name}' instantiate itself without an 'if' that ends it?",
                                 span=call_span))
            raise _Abort()
        self.depth_stack.append(module.name)
        try:
            scope = self._module_params(module, given, call_span)
            comp.arch_params = dict(scope.names)
            body_scope = Scope(scope)
            comp.namespace = body_scope.names
            deferred: list = []
            # Pass 1: constants and clocks, in source order, so instances may use them anywhere.
            first_clock = None
            for stmt in module.body:
                if isinstance(stmt, ast.Const):
                    self._define_const(stmt, body_scope)
                elif isinstance(stmt, ast.ClockDef):
                    domain = self._clock(stmt, body_scope, comp)
                    if first_clock is None and domain is not None:
                        first_clock = domain
            if placed is None and first_clock is not None:
                comp.clock = first_clock
            if comp.parent is None and comp.clock is None:
                comp.clock = self._domain("clk", DEFAULT_CLOCK_PS)
            # Pass 2: instances, generation blocks; connections wait for pass 3.
            self._statements(module.body, body_scope, comp, None, deferred, top_level=True)
            for stmt, scope_at, clock in deferred:
                self._guard(self._deferred, stmt, scope_at, comp, stmt.span)
        finally:
            self.depth_stack.pop()

    def _guard(self, fn, stmt, *args):
        span = args[-1]
        try:
            fn(stmt, *args[:-1])
        except Cascade:
            pass
        except ArchError as err:
            self.error(err, span)

    def _clock(self, stmt: ast.ClockDef, scope: Scope, comp: Component) -> ClockDomain | None:
        try:
            value = self.evaluate(stmt.value, scope)
            if units.dim_of(value) not in (units.FREQUENCY, units.TIME):
                units.check_dimension(value, units.FREQUENCY, f"clock '{stmt.name}'", stmt.value.span)
            if units.magnitude(value) <= 0:
                self.fail(f"clock '{stmt.name}' must be positive, got {value}", stmt.value.span)
            period = units.period_ps(value)
            if period < 1:
                self.fail(f"clock '{stmt.name}' is faster than 1 THz ({value})", stmt.value.span,
                          hint="time resolution is 1 ps")
            domain = self._domain(stmt.name, period)
            self._declare(scope, stmt.name, ClockBinding(domain, stmt.name_span), stmt.name_span)
            return domain
        except Cascade:
            return None
        except ArchError as err:
            scope.names.setdefault(stmt.name, POISON)
            self.error(err, stmt.span)
            return None

    def _domain(self, name: str, period: int) -> ClockDomain:
        key = (name, period)
        domain = self.domains.get(key)
        if domain is None:
            domain = self.domains[key] = ClockDomain(name, period)
        return domain

    def _statements(self, body, scope: Scope, comp: Component, clock, deferred: list, top_level=False):
        for stmt in body:
            try:
                self._statement(stmt, scope, comp, clock, deferred, top_level)
            except Cascade:
                pass
            except ArchError as err:
                self.error(err, stmt.span)

    def _statement(self, stmt, scope: Scope, comp: Component, clock, deferred: list, top_level: bool):
        if isinstance(stmt, ast.Instance):
            self._instance(stmt, scope, comp, clock)
        elif isinstance(stmt, ast.TopologyDef):
            self._topology(stmt, scope, comp, clock, deferred)
        elif isinstance(stmt, (ast.Connection, ast.Expose, ast.Run)):
            deferred.append((stmt, scope, clock))
        elif isinstance(stmt, ast.Const):
            if not top_level:
                self._define_const(stmt, scope)
        elif isinstance(stmt, ast.ClockDef):
            if not top_level:
                self.fail("clocks are declared at the top of a module body, not inside 'for', 'if' or 'in'",
                          stmt.name_span)
        elif isinstance(stmt, ast.For):
            self._for(stmt, scope, comp, clock, deferred)
        elif isinstance(stmt, ast.If):
            cond = self.evaluate(stmt.cond, scope)
            if not isinstance(cond, bool):
                self.fail(f"an 'if' condition must be true or false, got {describe(cond)}", stmt.cond.span,
                          hint="compare it: 'if n > 0 { ... }'")
            self._statements(stmt.then if cond else stmt.otherwise, Scope(scope, scope.module), comp, clock,
                             deferred)
        elif isinstance(stmt, ast.InBlock):
            domain = self._lookup_clock(stmt.clock, scope, stmt.clock_span)
            self._statements(stmt.body, Scope(scope, scope.module), comp, domain, deferred)
        elif isinstance(stmt, ast.Trace):
            prefix = comp.path
            self.traces.append(f"{prefix}.{stmt.glob}" if stmt.glob else prefix)

    def _for(self, stmt: ast.For, scope: Scope, comp: Component, clock, deferred: list):
        start = self._int(self.evaluate(stmt.start, scope), "a loop start", stmt.start.span)
        stop = self._int(self.evaluate(stmt.stop, scope), "a loop end", stmt.stop.span)
        if stop - start > self.limits.max_instances:
            self.error(ArchError(f"loop of {stop - start} iterations exceeds the limit of "
                                 f"{self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended", span=stmt.span))
            raise _Abort()
        for i in range(start, stop):
            inner = Scope(scope, scope.module)
            inner.names[stmt.var] = i
            self._statements(stmt.body, inner, comp, clock, deferred)

    def _int(self, value, what: str, span: Span) -> int:
        value = units.normalise(value)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(f"{what} must be an integer, got {describe(value)}", span)
        return value

    def _lookup_clock(self, name: str, scope: Scope, span: Span) -> ClockDomain:
        try:
            binding = scope.lookup(name)
        except KeyError:
            clocks = [n for n in scope.visible() if isinstance(self._peek(scope, n), ClockBinding)]
            self.fail(f"no clock named '{name}'", span,
                      hint=did_you_mean(name, clocks) or ("clocks here: " + ", ".join(clocks) if clocks else
                                                          "declare one: clock name = 1 GHz"))
        if binding is POISON:
            raise Cascade()
        if not isinstance(binding, ClockBinding):
            self.fail(f"'{name}' is not a clock", span)
        return binding.domain

    @staticmethod
    def _peek(scope: Scope, name: str):
        try:
            return scope.lookup(name)
        except KeyError:
            return None

    # -- instances --------------------------------------------------------------------------------
    def _array_count(self, selector: ast.Selector | None, scope: Scope, name: str) -> int | None:
        if selector is None:
            return None
        if selector.kind != "index":
            self.fail(f"an instance array takes a count, as in '{name}[8]'", selector.span)
        count = self._int(self.evaluate(selector.start, scope), "an array size", selector.span)
        if count < 0:
            self.fail(f"an array size must not be negative, got {count}", selector.span)
        if self.instances + count > self.limits.max_instances:
            self.error(ArchError(f"array '{name}' of {count} instances would exceed the limit of "
                                 f"{self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended", span=selector.span))
            raise _Abort()
        return count

    def _resolve_model(self, call: ast.ModelCall, scope: Scope):
        name = call.name
        binding = self._peek(scope, name)
        if isinstance(binding, ModelRef):
            name = binding.name
        if name in self.modules:
            return self.modules[name]
        if name in self.models:
            return self.models[name]
        options = list(self.modules) + list(self.models)
        self.fail(f"unknown model '{name}'", call.name_span,
                  hint=did_you_mean(name, options) or "run 'archmodel list' for the catalogue")

    def _instance(self, stmt: ast.Instance, scope: Scope, comp: Component, clock):
        module_scope = scope.module
        if stmt.name in module_scope.names:
            previous = module_scope.names[stmt.name]
            where = getattr(previous, "span", None)
            self.fail(f"'{stmt.name}' is already defined in this module", stmt.name_span,
                      hint=f"first defined at {where}" if where else "choose another name")
        module_scope.names[stmt.name] = POISON
        count = self._array_count(stmt.count, scope, stmt.name)
        target = self._resolve_model(stmt.model, scope)
        placed = self._lookup_clock(stmt.clock, scope, stmt.clock_span) if stmt.clock else clock
        if isinstance(target, ast.ModuleDef):
            given = self._module_args(stmt.model, target, scope)
            make = lambda name: self._make_module(target, name, comp, given, stmt, placed)
        else:
            kwargs = self._model_args(stmt.model, target, scope, placed or self._clock_of(comp))
            make = lambda name: self._make_model(target, name, comp, kwargs, stmt, placed)
        if count is None:
            items = [make(stmt.name)]
        else:
            items = [make(f"{stmt.name}[{i}]") for i in range(count)]
        module_scope.names[stmt.name] = InstanceBinding(items, count is not None, stmt.name_span)

    def _count_instance(self, span: Span):
        self.instances += 1
        if self.instances > self.limits.max_instances:
            self.error(ArchError(f"the system would have more than {self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended", span=span))
            raise _Abort()

    def _make_model(self, klass, name, parent, kwargs, stmt, placed):
        self._count_instance(stmt.span)
        try:
            child = klass(name, parent, clock=placed, **kwargs)
        except ArchError as err:
            err.span = err.span or stmt.model.span
            raise
        except Exception as exc:  # a model that raises on odd input must not crash 'check'
            raise ArchError(f"model '{klass.model_name}' failed to build {parent.path}.{name}: "
                            f"{type(exc).__name__}: {exc}", hint="a bug in the model, or a parameter value it "
                            "does not handle", span=stmt.model.span) from None
        self.origins[id(child)] = stmt.span
        return child

    def _make_module(self, module, name, parent, given, stmt, placed):
        self._count_instance(stmt.span)
        klass = _module_class(module)
        child = klass(name, parent, clock=placed)
        self.origins[id(child)] = stmt.span
        self._elaborate_module(child, module, given, stmt.model.span, placed)
        return child

    def _module_args(self, call: ast.ModelCall, module: ast.ModuleDef, scope: Scope) -> dict:
        params = {p.name: p for p in module.params}
        given = {}
        for arg in call.args:
            if arg.name not in params:
                self.fail(f"'{module.name}' has no parameter '{arg.name}'", arg.name_span,
                          hint=did_you_mean(arg.name, params) or
                          ("parameters: " + ", ".join(params) if params else "it takes no parameters"))
            if arg.name in given:
                self.fail(f"parameter '{arg.name}' is given twice", arg.name_span)
            given[arg.name] = (self.evaluate(arg.value, scope, expected=params[arg.name].type), arg.value.span)
        return given

    def _model_args(self, call: ast.ModelCall, klass, scope: Scope, clock: ClockDomain | None) -> dict:
        decls = klass._param_decls
        kwargs = {}
        for arg in call.args:
            if arg.name not in decls:
                self.fail(f"'{klass.model_name}' has no parameter '{arg.name}'", arg.name_span,
                          hint=did_you_mean(arg.name, decls) or
                          ("parameters: " + ", ".join(decls) if decls else "it takes no parameters"))
            if arg.name in kwargs:
                self.fail(f"parameter '{arg.name}' is given twice", arg.name_span)
            value = self.evaluate(arg.value, scope)
            kwargs[arg.name] = self.to_python(value, decls[arg.name], klass, clock, arg.value.span)
        missing = [k for k, p in decls.items() if p.required and k not in kwargs]
        if missing:
            self.fail(f"'{klass.model_name}' is missing required parameter '{missing[0]}'", call.name_span,
                      hint=decls[missing[0]].describe())
        return kwargs

    def to_python(self, value, param, klass, clock: ClockDomain | None, span: Span):
        """Convert a language value to the Python value of a model parameter (see REFERENCE.md,
        'Parameters of Python models')."""
        what = f"parameter '{param.name}' of '{klass.model_name}'"
        unit = param_unit(param)
        types = param.type if isinstance(param.type, tuple) else (param.type,)
        value = units.normalise(value)
        if isinstance(value, Quantity):
            if unit is None:
                raise ArchError(f"{what} takes a plain number, got {describe(value)}",
                                hint=param.describe(), span=span)
            if unit == "cycles":
                units.check_dimension(value, units.TIME, what, span)
                period = (clock.period_ps if clock else DEFAULT_CLOCK_PS)
                value = units.cycles_ceil(value, period)
            else:
                units.check_dimension(value, units.UNITS[unit][1], what, span)
                number = units.in_unit(value, unit)
                if int in types and float not in types:
                    value = round(number) if units.UNITS[unit][1] == units.TIME else \
                        units.whole(number, what, unit, span)
                else:
                    value = float(number) if number.denominator != 1 else int(number)
        elif isinstance(value, Fraction):
            if float in types:
                value = float(value)
            else:
                raise ArchError(f"{what} expects {param.type_name()}, got {describe(value)}",
                                hint=param.describe(), span=span)
        value = _plain(value)
        if isinstance(value, list) and tuple in types and list not in types:
            value = tuple(value)
        if not _accepts(param.type, value) and not (value is None and param.default is None):
            shown = units.format_number(value) if isinstance(value, (int, Fraction)) else None
            got = describe(value) if shown is None or isinstance(value, bool) else f"{type(value).__name__} {shown}"
            raise ArchError(f"{what} expects {param.type_name()}, got {got}", hint=param.describe(), span=span)
        if param.check is not None:
            try:
                problem = param.check(value)
            except TypeError:
                problem = "has an unusable value"
            if problem:
                raise ArchError(f"{what} {problem}, got {format_value(value)}", hint=param.describe(), span=span)
        return value

    def _clock_of(self, comp: Component) -> ClockDomain | None:
        while comp is not None:
            if comp.clock is not None:
                return comp.clock
            comp = comp.parent
        return None

    # -- topologies ------------------------------------------------------------------------------
    def _topology(self, stmt: ast.TopologyDef, scope: Scope, comp: Component, clock, deferred: list):
        module_scope = scope.module
        if stmt.name in module_scope.names:
            self.fail(f"'{stmt.name}' is already defined in this module", stmt.name_span)
        module_scope.names[stmt.name] = POISON
        if stmt.count is not None:
            self.fail("a topology is not an array; put it in a module and make an array of that", stmt.count.span)
        generators = topology_generators()
        generator = generators.get(stmt.generator)
        if generator is None:
            self.fail(f"unknown topology '{stmt.generator}'", stmt.generator_span,
                      hint=did_you_mean(stmt.generator, generators) or "topologies: " + ", ".join(generators))
        args = [_plain(units.normalise(self.evaluate(a, scope))) for a in stmt.gen_args]
        kwargs = {k.name: _plain(units.normalise(self.evaluate(k.value, scope))) for k in stmt.gen_kwargs}
        local = kwargs.pop("local_ports", 0)
        if not isinstance(local, int) or isinstance(local, bool) or local < 0:
            self.fail(f"local_ports must be a non-negative integer, got {local!r}", stmt.generator_span)

        try:
            inspect.signature(generator).bind(*args, **kwargs)
        except TypeError as err:
            self.fail(f"topology '{stmt.generator}': {err}", stmt.generator_span,
                      hint=f"{stmt.generator}{inspect.signature(generator)}")
        size = getattr(generator, "node_count", None)
        try:
            estimate = size(*args, **kwargs) if size is not None else 0
        except TypeError:
            estimate = 0
        if isinstance(estimate, int) and self.instances + estimate > self.limits.max_instances:
            self.error(ArchError(f"topology '{stmt.name}' of {estimate} nodes (or links) would exceed the limit of "
                                 f"{self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended",
                                 span=stmt.generator_span))
            raise _Abort()
        try:
            graph = generator(*args, **kwargs)
        except ArchError as err:
            raise ArchError(f"topology '{stmt.generator}': {err.message}", hint=err.hint,
                            span=stmt.generator_span) from None
        except Exception as exc:  # a generator handed arguments it cannot use
            raise ArchError(f"topology '{stmt.generator}' failed: {type(exc).__name__}: {exc}",
                            span=stmt.generator_span) from None
        nodes = sorted(graph.nodes)
        if self.instances + len(nodes) > self.limits.max_instances:
            self.error(ArchError(f"topology '{stmt.name}' of {len(nodes)} nodes would exceed the limit of "
                                 f"{self.limits.max_instances} instances", span=stmt.generator_span))
            raise _Abort()
        target = self._resolve_model(stmt.node_model, scope)
        placed = self._lookup_clock(stmt.clock, scope, stmt.clock_span) if stmt.clock else clock
        directed = graph.is_directed()
        succ = {n: sorted(graph.successors(n) if directed else graph.neighbors(n)) for n in nodes}
        pred = {n: sorted(graph.predecessors(n) if directed else graph.neighbors(n)) for n in nodes}
        net = _module_class(_TOPOLOGY_MODULE)(stmt.name, comp, clock=placed)
        self._count_instance(stmt.span)
        self.origins[id(net)] = stmt.span
        net.arch_params = {"generator": f"{stmt.generator}({', '.join(format_value(a) for a in args)})",
                           "nodes": len(nodes), "edges": graph.number_of_edges()}
        items = []
        if isinstance(target, ast.ModuleDef):
            self.fail("topology nodes must be Python models with port arrays", stmt.node_model.name_span,
                      hint="wrap the module's ports in a model, or wire the module instances with 'for'")
        out_decl, in_decl = target._port_decls.get("out"), target._port_decls.get("inp")
        if out_decl is None or in_decl is None:
            self.fail(f"'{target.model_name}' cannot be a topology node: it needs ports 'out' and 'inp'",
                      stmt.node_model.name_span)
        base_kwargs = self._model_args(stmt.node_model, target, scope, placed or self._clock_of(comp))
        for n in nodes:
            kwargs = dict(base_kwargs)
            for decl, degree in ((out_decl, len(succ[n])), (in_decl, len(pred[n]))):
                if isinstance(decl.count, str):
                    kwargs[decl.count] = degree + local
                elif decl.count is None and degree + local > 1:
                    self.fail(f"'{target.model_name}' has a single '{decl.name}' port but node {n} of "
                              f"{stmt.generator} needs {degree + local}", stmt.node_model.name_span,
                              hint="use a model whose port count is a parameter")
            items.append(self._make_model(target, f"node[{n}]", net, kwargs, stmt, None))
        net.namespace = {"node": InstanceBinding(items, True, stmt.name_span)}
        module_scope.names[stmt.name] = InstanceBinding([net], False, stmt.name_span)
        link = self._link_values(stmt.link, scope)
        index = {n: i for i, n in enumerate(nodes)}
        for u in nodes:
            for v in succ[u]:
                src = items[index[u]].out
                dst = items[index[v]].inp
                src = src[local + succ[u].index(v)] if isinstance(src, list) else src
                dst = dst[local + pred[v].index(u)] if isinstance(dst, list) else dst
                self._connect(src, dst, link, stmt.span)

    # -- connections ------------------------------------------------------------------------------
    def _deferred(self, stmt, scope: Scope, comp: Component):
        if isinstance(stmt, ast.Connection):
            sources = self.resolve(stmt.src, scope)
            sinks = self.resolve(stmt.dst, scope)
            for items, end in ((sources, stmt.src), (sinks, stmt.dst)):
                for item in items:
                    if isinstance(item, Component):
                        ports = [p.name for p in item.ports]
                        self.fail(f"'{end.segments[-1].name}' is an instance, not a port", end.span,
                                  hint=f"name one of its ports: {', '.join(ports)}" if ports else "it has no ports")
            if len(sources) != len(sinks):
                self.fail(f"cannot connect {len(sources)} port{'s' if len(sources) != 1 else ''} to "
                          f"{len(sinks)} port{'s' if len(sinks) != 1 else ''}", stmt.span,
                          hint="both ends must select the same number of ports; connections are point to point")
            link = self._link_values(stmt.link, scope)
            for src, dst in zip(sources, sinks):
                self._connect(src, dst, link, stmt.span)
        elif isinstance(stmt, ast.Expose):
            items = []
            for target in stmt.targets:
                resolved = self.resolve(target, scope)
                for item in resolved:
                    if isinstance(item, Component):
                        self.fail(f"only ports can be exposed; '{target.segments[-1].name}' is an instance",
                                  target.span)
                items.extend(resolved)
            if not hasattr(comp, "exposed"):
                comp.exposed = {}
            if stmt.name in comp.exposed or stmt.name in comp.namespace:
                self.fail(f"'{stmt.name}' is already defined in this module", stmt.name_span)
            last = stmt.targets[0].segments[-1]
            single = (len(stmt.targets) == 1 and len(items) == 1 and last.selector is None
                      and not self._is_port_array(items[0]))
            comp.exposed[stmt.name] = items[0] if single else list(items)
        elif isinstance(stmt, ast.Run):
            self._run(stmt, scope)

    @staticmethod
    def _is_port_array(port) -> bool:
        return isinstance(getattr(port.owner, port.name.split("[")[0], None), list)

    def _run(self, stmt: ast.Run, scope: Scope):
        args = [_plain(units.normalise(self.evaluate(a, scope))) for a in stmt.args]
        kwargs = {k.name: _plain(units.normalise(self.evaluate(k.value, scope))) for k in stmt.kwargs}
        known = workloads()
        binder = known.get(stmt.workload)
        if binder is None:
            self.fail(f"unknown workload '{stmt.workload}'", stmt.name_span,
                      hint=did_you_mean(stmt.workload, known) or "known workloads: " +
                      (", ".join(known) if known else "none yet"))
        targets = []
        for end in stmt.targets:
            targets.extend(self.resolve(end, scope))
        self.runs.append((binder, targets, args, kwargs, stmt.span))

    def _link_values(self, link: ast.Link | None, scope: Scope) -> dict:
        values = {}
        if link is None:
            return values
        allowed = ("latency", "capacity", "width", "bandwidth")
        for arg in link.args:
            if arg.name not in allowed:
                self.fail(f"a link has no attribute '{arg.name}'", arg.name_span,
                          hint=did_you_mean(arg.name, allowed) or "attributes: " + ", ".join(allowed))
            if arg.name in values:
                self.fail(f"link attribute '{arg.name}' is given twice", arg.name_span)
            value = units.normalise(self.evaluate(arg.value, scope))
            what = f"link {arg.name}"
            if arg.name == "latency":
                if isinstance(value, Quantity):
                    units.check_dimension(value, units.TIME, what, arg.value.span)
                    if units.magnitude(value) <= 0:
                        self.fail(f"link latency must be positive, got {value}", arg.value.span,
                                  hint="every connection is registered: at least one receiver cycle")
                else:
                    value = self._whole_at_least(value, 1, what, arg.value.span, "cycles")
            elif arg.name == "capacity":
                value = self._whole_at_least(value, 1, what, arg.value.span, "messages")
            elif arg.name == "width":
                if isinstance(value, Quantity):
                    units.check_dimension(value, units.DATA, what, arg.value.span)
                    value = units.whole(value.value, what, "bit", arg.value.span)
                value = self._whole_at_least(value, 1, what, arg.value.span, "bits")
            elif arg.name == "bandwidth":
                units.check_dimension(value, units.BANDWIDTH, what, arg.value.span)
                if units.magnitude(value) <= 0:
                    self.fail("link bandwidth must be positive", arg.value.span)
            values[arg.name] = (value, arg.value.span)
        if "width" in values and "bandwidth" in values:
            self.fail("give a link either a width or a bandwidth, not both", values["bandwidth"][1])
        return values

    def _whole_at_least(self, value, low: int, what: str, span: Span, unit: str) -> int:
        if isinstance(value, Quantity):
            units.check_dimension(value, units.NUMBER, what, span)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(f"{what} must be a whole number of {unit}, got {describe(value)}", span)
        if value < low:
            self.fail(f"{what} must be at least {low}, got {value}", span)
        return value

    def _connect(self, src, dst, link: dict, span: Span):
        kwargs = {}
        if "latency" in link:
            latency = link["latency"][0]
            if isinstance(latency, Quantity):
                receiver = self._clock_of(dst.owner)
                latency = units.cycles_ceil(latency, receiver.period_ps if receiver else DEFAULT_CLOCK_PS)
            kwargs["latency"] = latency
        if "capacity" in link:
            kwargs["capacity"] = link["capacity"][0]
        if "width" in link:
            kwargs["width_bits"] = link["width"][0]
        elif "bandwidth" in link:
            sender = self._clock_of(src.owner)
            period = sender.period_ps if sender else DEFAULT_CLOCK_PS
            kwargs["width_bits"] = max(1, floor(units.magnitude(link["bandwidth"][0]) * period / 10**12))
        try:
            connect(src, dst, **kwargs)
        except ArchError as err:
            raise ArchError(err.message, hint=err.hint, span=span) from None

    # -- paths ------------------------------------------------------------------------------------
    def resolve(self, endpoint: ast.Endpoint, scope: Scope) -> list:
        """The components or ports an endpoint path names, in order."""
        first = endpoint.segments[0]
        try:
            binding = scope.lookup(first.name)
        except KeyError:
            names = [n for n in scope.module.names if isinstance(scope.module.names[n], InstanceBinding)]
            self.fail(f"no instance named '{first.name}'", first.name_span,
                      hint=did_you_mean(first.name, names) or ("instances here: " + ", ".join(names) if names
                                                                 else "declare it: name : Model(...)"))
        if binding is POISON:
            raise Cascade()
        if not isinstance(binding, InstanceBinding):
            self.fail(f"'{first.name}' is not an instance", first.name_span)
        items = self._select(binding.items, binding.is_array, first, scope, first.name)
        for segment in endpoint.segments[1:]:
            selected = []
            for item in items:
                if not isinstance(item, Component):
                    self.fail(f"'{item.name}' is a port and has no part '{segment.name}'", segment.name_span)
                member, is_array = self._member(item, segment)
                selected.extend(self._select(member, is_array, segment, scope, f"{item.name}.{segment.name}"))
            items = selected
        return items

    def _member(self, comp: Component, segment: ast.Segment):
        name = segment.name
        exposed = getattr(comp, "exposed", None) or {}
        if name in exposed:
            value = exposed[name]
            return (value, True) if isinstance(value, list) else ([value], False)
        namespace = getattr(comp, "namespace", None)
        if namespace is not None and name in namespace:
            binding = namespace[name]
            if binding is POISON:
                raise Cascade()
            if isinstance(binding, InstanceBinding):
                return binding.items, binding.is_array
        if name in comp._port_decls:
            value = getattr(comp, name)
            return (value, True) if isinstance(value, list) else ([value], False)
        if not isinstance(comp, ModuleComponent) and name in comp._children_by_name:
            return [comp._children_by_name[name]], False
        ports = list(comp._port_decls) + list(exposed)
        if isinstance(comp, ModuleComponent):
            parts = [n for n, b in (namespace or {}).items() if isinstance(b, InstanceBinding)]
            self.fail(f"'{comp.model_name}' instance '{comp.name}' has no port or part '{name}'", segment.name_span,
                      hint=did_you_mean(name, ports + parts) or
                      ("exposed ports: " + ", ".join(exposed) if exposed else
                       "a module's ports are the ones it exposes with 'expose inner.port as name'"))
        self.fail(f"'{comp.model_name}' has no port '{name}'", segment.name_span,
                  hint=did_you_mean(name, ports) or ("ports: " + ", ".join(ports) if ports else "it has no ports"))

    def _select(self, items: list, is_array: bool, segment: ast.Segment, scope: Scope, shown: str) -> list:
        selector = segment.selector
        if selector is None:
            return list(items)
        if not is_array:
            self.fail(f"'{shown}' is not an array and cannot be indexed", selector.span)
        size = len(items)
        if selector.kind == "all":
            return list(items)
        if selector.kind == "index":
            index = self._int(self.evaluate(selector.start, scope), "an index", selector.span)
            if not 0 <= index < size:
                self.fail(f"index {index} is out of range for '{shown}'", selector.span,
                          hint=f"'{shown}' has {size} element{'s' if size != 1 else ''}" +
                          (f", indices 0 .. {size - 1}" if size else ""))
            return [items[index]]
        start = self._int(self.evaluate(selector.start, scope), "a range start", selector.start.span)
        stop = self._int(self.evaluate(selector.stop, scope), "a range end", selector.stop.span)
        if not 0 <= start <= stop <= size:
            self.fail(f"range {start} .. {stop} is out of range for '{shown}'", selector.span,
                      hint=f"'{shown}' has {size} elements; a range a .. b takes a up to b - 1")
        return items[start:stop]

_TOPOLOGY_MODULE = ast.ModuleDef("module", "Topology", (), (), Span("<builtin>", 1, 1), Span("<builtin>", 1, 1),
                                 "<builtin>")


def _origin_span(elab: Elaborator, comp: Component):
    """The span of the instance statement that made ``comp`` (or its nearest ancestor)."""
    owner = comp
    while owner is not None and id(owner) not in elab.origins:
        owner = owner.parent
    return elab.origins.get(id(owner)) if owner is not None else None


def _exposed_ports(comp: Component) -> set:
    """The ports ``comp`` exposes (port arrays and nested lists flattened), by identity."""
    found: set = set()
    pending = list((getattr(comp, "exposed", None) or {}).values())
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        else:
            found.add(id(item))
    return found


def check_required_ports(elab: Elaborator, top: Component, interface=()) -> None:
    """Report every required port left unconnected, one error per instance statement and port,
    and every request port connected without the port its answers come back on. Ports in
    ``interface`` (ids of the top's exposed ports, for a module checked on its own) may stay
    unconnected."""
    groups: dict = {}
    for comp in top.walk():
        for port in comp.ports:
            if id(port) in interface:
                continue
            unpaired = unpaired_port(port)
            if unpaired is not None and port.decl.direction == "out":
                elab.error(ArchError(unpaired[0], hint=unpaired[1], span=_origin_span(elab, comp)))
            if port.channel is None and port.decl.required:
                span = _origin_span(elab, comp)
                groups.setdefault((span, port.decl.name, port.decl.direction), []).append(port)
    for (span, name, direction), ports in groups.items():
        kind = "input" if direction == "in" else "output"
        if len(ports) == 1:
            message = f"required {kind} port {ports[0].path} is not connected"
        else:
            message = (f"required {kind} port '{name}' is not connected on {len(ports)} ports "
                       f"({ports[0].path} .. {ports[-1].path})")
        hint = ("connect it: ... -> " if direction == "in" else "connect it: ") + \
            (f"{ports[0].owner.name}.{ports[0].name}" + (" -> ..." if direction == "out" else ""))
        elab.error(ArchError(message, hint=hint, span=span))


def load(path: str | os.PathLike, *, top: str | None = None, params: dict[str, str] | None = None,
         limits: Limits = Limits(), search_path: list[Path] | None = None,
         interface_open: bool = False) -> Elaborated:
    """Parse and elaborate a ``.arch`` file into a component tree ready for a Simulator.

    ``params`` overrides parameters of the top (``NAME -> expression text``). With
    ``interface_open`` the ports the top exposes are its interface and may stay unconnected
    (a module of a library checked on its own). Raises
    :class:`LanguageErrors` holding every diagnostic found.
    """
    # The tree and the components are many small objects that all stay alive; the cyclic
    # garbage collector would rescan them repeatedly while they are built.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _load(path, top, params, limits, search_path, interface_open)
    finally:
        if collecting:
            gc.enable()


def _load(path, top, params, limits, search_path, interface_open=False) -> Elaborated:
    shown = str(path)
    elab = Elaborator(limits, search_path)
    main_path = Path(path)
    if not main_path.is_file():
        raise ArchError(f"no such file: {shown}")
    result = None
    try:
        try:
            main = elab.load_file(main_path, shown, [])
            # A file that failed to parse or import would make every later error a cascade.
            if main is not None and not elab.load_failed:
                overrides = {}
                for name, text in (params or {}).items():
                    elab.sources.add(f"-p {name}", text)
                    overrides[name] = (parse_expression(text, f"-p {name}"), text)
                module = elab.choose_top(main, top, Span(shown, 1, 1, 1, 2))
                root = elab.build(module, overrides)
                if not elab.errors:  # after another error, unconnected ports are mostly its echo
                    check_required_ports(elab, root, _exposed_ports(root) if interface_open else ())
                for binder, targets, args, kwargs, span in elab.runs:
                    try:
                        binder(targets, *args, **kwargs)
                    except ArchError as err:
                        elab.error(err, span)
                result = Elaborated(root, shown, elab.traces, elab.sources, elab.instances, elab.origins, module)
        except ArchError as err:
            elab.error(err)
        except _Abort:
            pass
        except RecursionError:
            elab.error(ArchError("the description is nested too deeply to elaborate", span=Span(shown, 1, 1)))
    except _Abort:
        pass
    if elab.errors:
        raise LanguageErrors(elab.errors, elab.sources)
    return result


def check_library(path: str | os.PathLike, *, limits: Limits = Limits(),
                  search_path: list[Path] | None = None) -> list[Elaborated]:
    """Check a ``.arch`` file of modules and no system (a library): every module it defines is
    elaborated on its own with its default parameters, its exposed ports its interface.
    Returns each module's :class:`Elaborated`; raises :class:`LanguageErrors` with the
    diagnostics of every module that fails."""
    main_path = Path(path)
    if not main_path.is_file():
        raise ArchError(f"no such file: {path}")
    names = [m.name for m in parse(main_path.read_text(encoding="utf-8"), str(path)).modules]
    checked, errors, sources, seen = [], [], SourceText(), set()
    for name in names:
        try:
            checked.append(load(path, top=name, limits=limits, search_path=search_path, interface_open=True))
        except LanguageErrors as failed:
            for err in failed.errors:
                key = (str(err.span), err.message)
                if key not in seen:  # a module instanced by another fails in both checks
                    seen.add(key)
                    errors.append(err)
            sources.files.update(failed.sources.files)
    if errors:
        raise LanguageErrors(errors, sources)
    return checked


def is_library(path: str | os.PathLike) -> bool:
    """Whether a ``.arch`` file parses and defines modules but no system (False when it does
    not parse: loading it then reports why)."""
    try:
        modules = parse(Path(path).read_text(encoding="utf-8"), str(path)).modules
    except (ArchError, OSError, UnicodeDecodeError):
        return False
    return bool(modules) and not any(m.kind == "system" for m in modules)

