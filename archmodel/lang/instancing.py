"""Instances: arrays, model and module instances, and their parameters as Python values.

A mixin of the elaborator, which holds the state (the scope, the limits, the diagnostics)."""

from __future__ import annotations

from typing import Any, Callable

from ..kernel import ArchError, ClockDomain, Component, Param, ParameterError, Span, Spelling
from . import ast, units
from .scope import POISON, InstanceBinding, ModelRef, Scope, describe, did_you_mean, format_value
from .structure import DEFAULT_CLOCK_PS, Abort, ElaboratorParts, module_class, param_unit, plain_value
from .units import Quantity

def _typed(value) -> str:
    """A model argument with its kind as the language writes it (``string "four"``, ``int 3``,
    ``number 2.5``)."""
    if isinstance(value, float):
        return f"number {value:.6g}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"int {units.format_number(value)}"
    return describe(value)


LANGUAGE_SPELLING = Spelling(value=format_value, typed=_typed)
"""Model arguments in error messages as ``.arch`` source writes them."""


class Instancing(ElaboratorParts):
    """A part of :class:`~.elaborate.Elaborator`: its instances (see the module docstring)."""

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
            raise Abort()
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
        placed = self._lookup_clock(stmt.clock, scope, stmt.clock_span or stmt.span) if stmt.clock else clock
        def maker(args_scope: Scope) -> Callable[[str], Any]:
            # the arguments, evaluated once for the elements that share them
            if isinstance(target, ast.ModuleDef):
                given = self._module_args(stmt.model, target, args_scope)

                def make_module(name: str) -> Any:
                    return self._make_module(target, name, comp, given, stmt, placed)
                return make_module
            kwargs = self._model_args(stmt.model, target, args_scope, placed or self._clock_of(comp))

            def make_model(name: str) -> Any:
                return self._make_model(target, name, comp, kwargs, stmt, placed)
            return make_model

        if count is None:
            items = [maker(scope)(stmt.name)]
        elif stmt.index is None:
            make = maker(scope)
            items = [make(f"{stmt.name}[{i}]") for i in range(count)]
        else:
            items = []
            for i in range(count):
                inner = Scope(scope, scope.module)
                inner.names[stmt.index] = i
                items.append(maker(inner)(f"{stmt.name}[{i}]"))
        module_scope.names[stmt.name] = InstanceBinding(items, count is not None, stmt.name_span)

    def _count_instance(self, span: Span):
        self.instances += 1
        if self.instances > self.limits.max_instances:
            self.error(ArchError(f"the system would have more than {self.limits.max_instances} instances",
                                 hint="raise the limit with --max-instances if this is intended", span=span))
            raise Abort()

    def _make_model(self, klass, name, parent, kwargs, stmt, placed):
        self._count_instance(stmt.span)
        try:
            child = klass(name, parent, clock=placed, **kwargs)
        except ArchError as err:
            given, written, arguments = self.argument_spans.get(id(kwargs), (None, {}, {}))
            param = err.param if isinstance(err, ParameterError) and given is kwargs else None
            if err.span is None and param in written:
                # a check across parameters that the model makes as it builds, naming the one
                # to change: point where the user wrote that value, as check_params does
                err.span = written[param]
                raise _passed_on(err, arguments[param])
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
        klass = module_class(module)
        child = klass(name, parent, clock=placed)
        self.origins[id(child)] = stmt.span
        self._elaborate_module(child, module, given, stmt.model.span, placed)
        return child

    def _module_args(self, call: ast.ModelCall, module: ast.ModuleDef, scope: Scope) -> dict:
        params = {p.name: p for p in module.params}
        given = {}
        for arg in self._named_args(call, params, module.name):
            value = self.evaluate(arg.value, scope, expected=params[arg.name].type)
            given[arg.name] = (value, self._written_at(arg.value, scope))
        return given

    @staticmethod
    def _written_at(expr, scope: Scope) -> Span:
        """Where the value of argument ``expr`` was written: a module parameter passed on
        as it is (``queue = queue``) is the value its caller wrote, so an error about the
        value points there, in the user's file, rather than at the library's line."""
        if isinstance(expr, ast.Var):
            origin = scope.origin(expr.name)
            if origin is not None:
                return origin
        return expr.span

    def _named_args(self, call: ast.ModelCall, names, owner: str) -> tuple:
        """The call's arguments, each checked to name one of ``names`` (the parameters of
        ``owner``) and to be given once."""
        seen = set()
        for arg in call.args:
            if arg.name not in names:
                self.fail(f"'{owner}' has no parameter '{arg.name}'", arg.name_span,
                          hint=did_you_mean(arg.name, names) or
                          ("parameters: " + ", ".join(names) if names else "it takes no parameters"))
            if arg.name in seen:
                self.fail(f"parameter '{arg.name}' is given twice", arg.name_span)
            seen.add(arg.name)
        return call.args

    def _model_args(self, call: ast.ModelCall, klass, scope: Scope, clock: ClockDomain | None) -> dict:
        """The call's arguments as the Python values of ``klass``'s parameters. The model's
        declarations decide (its own :meth:`~archmodel.kernel.Component.check_params`); this
        only converts quantities to the declared units and says where an argument was written."""
        kwargs: dict = {}
        spans: dict[str, Span] = {}  # where each value was written
        arguments: dict[str, Span] = {}  # where each argument passes it to the model
        for arg in call.args:
            if arg.name in spans:
                self.fail(f"parameter '{arg.name}' is given twice", arg.name_span)
            try:
                param = klass.param_declaration(arg.name)
            except ArchError as err:
                err.span = arg.name_span
                raise
            value = self.evaluate(arg.value, scope)
            spans[arg.name] = written = self._written_at(arg.value, scope)
            arguments[arg.name] = arg.value.span
            try:
                kwargs[arg.name] = self.to_python(value, param, klass, clock, written)
            except ArchError as err:
                raise _passed_on(err, arg.value.span)
        try:
            klass.check_params(kwargs, spelling=LANGUAGE_SPELLING)
        except ParameterError as err:
            err.span = spans.get(err.param or "", call.name_span)
            raise _passed_on(err, arguments.get(err.param or "", err.span))
        self.argument_spans[id(kwargs)] = kwargs, spans, arguments
        return kwargs

    def to_python(self, value, param: Param, klass, clock: ClockDomain | None, span: Span):
        """Convert a language value to the Python value of a model parameter (see REFERENCE.md,
        'Parameters of Python models'): a quantity to a number in the parameter's declared unit,
        a number that is not whole to a float, a list to a tuple where a tuple is taken.
        Whether the result is acceptable is the declaration's to say (``check_params``)."""
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
        value = plain_value(value)
        if isinstance(value, list) and tuple in types and list not in types:
            value = tuple(value)
        return value

    def _clock_of(self, comp: Component) -> ClockDomain | None:
        node: Component | None = comp
        while node is not None:
            if node.clock is not None:
                return node.clock
            node = node.parent
        return None


def _passed_on(err: ArchError, argument: Span) -> ArchError:
    """``err``, located where its value was written, with a note on its hint line naming
    the argument that passed the value on to the model when that is elsewhere (a library
    module's ``DramController(queue = queue)``)."""
    if err.span is not None and err.span != argument:
        note = f"the value reaches the model at {argument}"
        err.hint = f"{err.hint}; {note}" if err.hint else note
    return err
