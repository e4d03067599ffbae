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

The :class:`Elaborator` is this module (loading, the top, module bodies, clocks) and two
parts of its own: :mod:`.instancing` (instances and their parameters) and :mod:`.wiring`
(topologies, connections, paths); :mod:`.structure` holds what they share and
:mod:`.port_checks` the checks of the built tree.
"""

from __future__ import annotations

import gc
import os
from fractions import Fraction
from pathlib import Path

import attrs

from ..kernel import ArchError, ClockDomain, Component, Span, catalogue, instance_budget, read_source
from ..paths import data_path
from . import ast, units
from .errors import LanguageErrors, SourceText
from .expressions import Expressions, unit_example
from .instancing import Instancing
from .parser import parse, parse_expression
from .port_checks import check_required_ports, exposed_ports
from .scope import POISON, Cascade, ClockBinding, ModelRef, Scope, describe, did_you_mean
from .structure import DEFAULT_CLOCK_PS, TYPE_DIMS, TYPES, Abort, Limits, ModuleComponent, module_class
from .units import Quantity
from .wiring import Wiring

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
    trace_spans: dict = attrs.Factory(dict)
    """Where each of ``traces`` was written (a ``trace`` statement), for diagnostics."""


class Elaborator(Instancing, Wiring, Expressions):
    """Loads files and builds one top component; collects diagnostics as it goes."""

    def __init__(self, limits: Limits = Limits(), search_path: list[Path] | None = None):
        self.limits = limits
        self.sources = SourceText()
        self.errors: list[ArchError] = []
        self._seen_errors: set = set()
        self.files: dict[Path, ast.File | None] = {}  # None: it failed to parse
        self.modules: dict[str, ast.ModuleDef] = {}
        self.global_scope = Scope()
        self.instances = 0
        self.iterations = 0  # of every for loop, nested ones multiplied
        self.origins: dict[int, Span] = {}
        # id of a model call's Python arguments -> those arguments (kept, so the id is not
        # reused), where each value was written and where the call passes it on: for a
        # ParameterError the model raises while it builds (Instancing._make_model)
        self.argument_spans: dict[int, tuple[dict, dict[str, Span], dict[str, Span]]] = {}
        self.traces: list[str] = []
        self.trace_spans: dict[str, Span] = {}
        self.domains: dict[tuple, ClockDomain] = {}
        self.runs: list = []
        self.depth_stack: list[str] = []
        self.load_failed = False
        library = data_path("library")
        self.library = library
        # Imports resolve beside the importing file, then in the bundled library, then in the
        # folders the user allows (--import-path); never anywhere else.
        self.search_path = [library] + [Path(p) for p in search_path or []]
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
            raise Abort()

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
        text, digest = read_source(path, "file", shown)
        self.sources.add(shown, text)
        self.sources.digests[shown] = digest
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
        where = ("imports are looked up beside the importing file, then in the bundled library, then in "
                 "folders given with --import-path DIR")
        if not imp.path.endswith(".arch"):
            self.load_failed = True
            self.error(ArchError(f"import '{imp.path}' does not name a .arch file", hint=where, span=imp.span))
            return None
        outside = None
        for root in [importer.parent] + self.search_path:
            candidate = root / imp.path
            # a file never imports itself: topologies/manticore.arch imports library/manticore.arch
            if not candidate.is_file() or candidate.resolve() == importer.resolve():
                continue
            if candidate.resolve().is_relative_to(root.resolve()):
                return candidate
            outside = outside or candidate
        self.load_failed = True
        if outside is not None:  # say nothing of the file itself: it may be anything
            self.error(ArchError(f"import '{imp.path}' leaves the folders imports may come from",
                                 hint=f"{where}; to use it, import \"{outside.resolve().name}\" and give "
                                      f"--import-path {outside.resolve().parent}",
                                 span=imp.span))
            return None
        nearby = []
        folder = importer.parent
        if folder.is_dir():
            nearby = [p.name for p in folder.glob("*.arch")]
        library = [p.name for p in self.library.glob("*.arch")] if self.library.is_dir() else []
        hint = did_you_mean(Path(imp.path).name, nearby + library)
        if hint is None:
            hint = f"{where}; the library has: " + (", ".join(sorted(library)) or "(nothing)")
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
            if param.type.name != "enum" and param.type.name not in TYPES:
                self.error(ArchError(f"unknown type '{param.type.name}'",
                                     hint=did_you_mean(param.type.name, TYPES) or "types: " + ", ".join(TYPES)
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
        declared = {p.name: p for p in module.params}
        for name, (expr, text) in overrides.items():
            if name not in declared:
                raise ArchError(f"-p {name}: '{module.name}' has no parameter '{name}'",
                                hint=did_you_mean(name, list(declared))
                                or "parameters: " + (", ".join(declared) or "none"))
            values[name] = (self.evaluate(expr, self.global_scope, expected=declared[name].type), expr.span)
        klass = module_class(module)
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
            scope.origins[param.name] = span
        return scope

    def _type_text(self, type_ref: ast.TypeRef) -> str:
        if type_ref.name == "enum":
            return "enum(" + ", ".join(type_ref.members) + ")"
        return type_ref.name

    def _check_type(self, value, param: ast.ParamDecl, module: ast.ModuleDef, span: Span):
        kind = param.type.name
        what = f"parameter '{param.name}' of '{module.name}'"
        value = units.normalise(value)
        if kind in TYPE_DIMS:
            units.check_dimension(value, TYPE_DIMS[kind], what, span)
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

    def _elaborate_module(self, comp: ModuleComponent, module: ast.ModuleDef, given: dict, call_span: Span,
                          placed: ClockDomain | None) -> None:
        if len(self.depth_stack) >= self.limits.max_depth:
            chain = " -> ".join(self.depth_stack[-4:] + [module.name])
            self.error(ArchError(f"modules nested more than {self.limits.max_depth} deep (... {chain})",
                                 hint=f"does '{module.name}' instantiate itself without an 'if' that ends it?",
                                 span=call_span))
            raise Abort()
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
            pattern = f"{prefix}.{stmt.glob}" if stmt.glob else prefix
            self.traces.append(pattern)
            self.trace_spans.setdefault(pattern, stmt.span)

    def _for(self, stmt: ast.For, scope: Scope, comp: Component, clock, deferred: list):
        start = self._int(self.evaluate(stmt.start, scope), "a loop start", stmt.start.span)
        stop = self._int(self.evaluate(stmt.stop, scope), "a loop end", stmt.stop.span)
        # Nested loops multiply: the limit is on the iterations of every loop together.
        self.iterations += max(0, stop - start)
        if self.iterations > self.limits.max_instances:
            alone = stop - start > self.limits.max_instances
            self.error(ArchError(f"loop of {stop - start:,} iterations" + ("" if alone else ", with the loops before "
                                 f"it and around it {self.iterations:,},") + f" exceeds the limit of "
                                 f"{self.limits.max_instances:,}",
                                 hint="raise the limit with --max-instances if this is intended", span=stmt.span))
            raise Abort()
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
        # every component counts against the limit, those models build inside them included
        with instance_budget(limits.max_instances):
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
                    check_required_ports(elab, root, exposed_ports(root) if interface_open else ())
                # a workload placed on a system with errors would mostly report their echo
                for binder, targets, args, kwargs, span in (elab.runs if not elab.errors else ()):
                    try:
                        binder(targets, *args, **kwargs)
                    except ArchError as err:
                        elab.error(err, span)
                result = Elaborated(root, shown, elab.traces, elab.sources, elab.instances, elab.origins, module,
                                    elab.trace_spans)
        except ArchError as err:
            elab.error(err)
        except Abort:
            pass
        except RecursionError:
            elab.error(ArchError("the description is nested too deeply to elaborate", span=Span(shown, 1, 1)))
    except Abort:
        pass
    if elab.errors:
        raise LanguageErrors(elab.errors, elab.sources)
    assert result is not None  # every way of not building the top records an error
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
    names = [m.name for m in parse(read_source(main_path)[0], str(path)).modules]
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
        modules = parse(read_source(Path(path))[0], str(path)).modules
    except ArchError:
        return False
    return bool(modules) and not any(m.kind == "system" for m in modules)

