"""Expressions of the ``.arch`` language: arithmetic with units, comparisons, logic, lists and
the built-in functions.

Values are exact: integers stay integers, other numbers are Fractions, dimensioned numbers are
:class:`~archmodel.lang.units.Quantity`. Errors go through the elaborator's ``fail`` so they carry
the expression's span and a hint.
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil, floor, log2

from ..kernel import ArchError
from . import ast, units
from .scope import (POISON, AddressRangeValue, Cascade, ClockBinding, InstanceBinding, ModelRef, Scope, describe,
                    did_you_mean)
from .structure import ElaboratorParts
from .units import Quantity

BUILTINS = ("abs", "ceil", "floor", "log2", "max", "min", "range")

MAX_RANGE = 1 << 16
"""The longest list ``range`` builds (a port array holds at most as many ports)."""

MAX_STRING = 1 << 20
"""The longest string an expression may build."""

MAX_BITS = 1100
"""The most bits a value's numerator or denominator may take (a double reaches 2**1024)."""

_INT_OPS = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b, ">=": lambda a, b: a >= b,
}


class Expressions(ElaboratorParts):
    """Expression evaluation, mixed into the elaborator.

    The host class provides ``fail(message, span, hint=None)`` (raises), ``_int(value, what,
    span)``, ``_peek(scope, name)``, and the ``modules`` and ``models`` namespaces that model-typed
    parameters may name.
    """

    def evaluate(self, expr, scope: Scope, expected: ast.TypeRef | None = None):
        """The value of an expression: int, Fraction, Quantity, bool, str, list or ModelRef."""
        kind = type(expr)
        if kind is ast.Number:
            return expr.value
        if kind is ast.Quantity:
            return units.quantity(expr.value, expr.unit)
        if kind is ast.Var:
            return self._variable(expr, scope, expected)
        if kind is ast.BinOp:
            return self._binary(expr, scope)
        if kind is ast.String or kind is ast.Bool:
            return expr.value
        if kind is ast.UnaryOp:
            value = self.evaluate(expr.operand, scope)
            if expr.op == "not":
                if not isinstance(value, bool):
                    self.fail(f"'not' needs true or false, got {describe(value)}", expr.span)
                return not value
            if isinstance(value, Quantity):
                return Quantity(-value.value, value.dim)
            if isinstance(value, (int, Fraction)) and not isinstance(value, bool):
                return -value
            self.fail(f"cannot negate {describe(value)}", expr.span)
        if kind is ast.Call:
            return self._call(expr, scope)
        if kind is ast.ListLit:
            values = [self.evaluate(item, scope) for item in expr.items]
            if any(isinstance(v, AddressRangeValue) for v in values):
                self._check_address_map(expr, values)
            return values
        if kind is ast.AddressRange:
            return self._address_range(expr, scope)
        if kind is ast.Index:
            base = self.evaluate(expr.base, scope)
            index = self._int(self.evaluate(expr.index, scope), "an index", expr.index.span)
            if not isinstance(base, list):
                self.fail(f"only lists can be indexed, not {describe(base)}", expr.base.span)
            if not 0 <= index < len(base):
                self.fail(f"index {index} is out of range for a list of {len(base)}", expr.index.span)
            return base[index]
        raise ArchError(f"cannot evaluate {type(expr).__name__}", span=getattr(expr, "span", None))

    def _variable(self, expr: ast.Var, scope: Scope, expected):
        try:
            value = scope.lookup(expr.name)
        except KeyError:
            if expected is not None and expected.name == "enum" and expr.name in expected.members:
                return expr.name
            if expected is not None and expected.name == "model" and (expr.name in self.modules
                                                                       or expr.name in self.models):
                return ModelRef(expr.name)
            if expr.name in self.modules or expr.name in self.models:
                self.fail(f"'{expr.name}' is a model, not a value", expr.span,
                          hint="only parameters of type 'model' take model names")
            names = [n for n in scope.visible() if not isinstance(self._peek(scope, n), (InstanceBinding,
                                                                                          ClockBinding))]
            hint = did_you_mean(expr.name, names) or (f"one of: {', '.join(expected.members)}"
                                                      if expected is not None and expected.members else None)
            if expected is not None and expected.name == "string":
                quoted = f"'\"{expr.name}\"'" if expr.span.file.startswith("-p ") else f'"{expr.name}"'
                hint = f"a string is written in quotes: {quoted}"
            self.fail(f"'{expr.name}' is not defined", expr.span, hint=hint)
        if value is POISON:
            raise Cascade()
        if isinstance(value, InstanceBinding):
            self.fail(f"'{expr.name}' is an instance, not a value", expr.span)
        if isinstance(value, ClockBinding):
            self.fail(f"'{expr.name}' is a clock, not a value", expr.span,
                      hint="clocks are used with 'in', as in 'x : Model() in clk'")
        return value

    def _binary(self, expr: ast.BinOp, scope: Scope):
        op = expr.op
        left = self.evaluate(expr.left, scope)
        if op in ("and", "or"):
            if not isinstance(left, bool):
                self.fail(f"'{op}' needs true or false, got {describe(left)}", expr.left.span)
            if (op == "and" and not left) or (op == "or" and left):
                return left
            right = self.evaluate(expr.right, scope)
            if not isinstance(right, bool):
                self.fail(f"'{op}' needs true or false, got {describe(right)}", expr.right.span)
            return right
        right = self.evaluate(expr.right, scope)
        if type(left) is int and type(right) is int and op in _INT_OPS:
            result = _INT_OPS[op](left, right)  # the common case (indices, counts) without Fractions
            return self._bounded(result, expr) if op == "*" else result
        if op in ("==", "!="):
            if isinstance(left, (str, bool, list, ModelRef)) or isinstance(right, (str, bool, list, ModelRef)):
                return (left == right) == (op == "==")
        numeric = (int, Fraction, Quantity)
        for value, side in ((left, expr.left), (right, expr.right)):
            if not isinstance(value, numeric) or isinstance(value, bool):
                if op == "+" and isinstance(left, str) and isinstance(right, str):
                    if len(left) + len(right) > MAX_STRING:  # doubling a string 40 times takes 10 GB
                        self.fail(f"the string would be {len(left) + len(right):,} characters long", expr.span,
                                  hint=f"strings are at most {MAX_STRING:,} characters")
                    return left + right
                self.fail(f"'{op}' cannot take {describe(value)}", side.span)
        ldim, rdim = units.dim_of(left), units.dim_of(right)
        lval, rval = units.magnitude(left), units.magnitude(right)
        if op in ("+", "-", "%", "==", "!=", "<", "<=", ">", ">="):
            if ldim != rdim:
                verb = {"+": "add", "-": "subtract", "%": "take the remainder of"}.get(op, "compare")
                self.fail(f"cannot {verb} {units.dimension_name(ldim)} and {units.dimension_name(rdim)}", expr.span,
                          hint=f"left is {describe(units.normalise(left))}, right is "
                               f"{describe(units.normalise(right))}")
            if op == "+":
                return units.make(lval + rval, ldim)
            if op == "-":
                return units.make(lval - rval, ldim)
            if op == "%":
                if rval == 0:
                    self.fail("division by zero", expr.span, hint="the right side of '%' is 0")
                return units.make(lval % rval, ldim)
            return {"==": lval == rval, "!=": lval != rval, "<": lval < rval, "<=": lval <= rval,
                    ">": lval > rval, ">=": lval >= rval}[op]
        if op == "*":
            return units.make(self._bounded(lval * rval, expr), (ldim[0] + rdim[0], ldim[1] + rdim[1]))
        if op == "/":
            if rval == 0:
                self.fail("division by zero", expr.span, hint="the divisor evaluates to 0")
            return units.make(self._bounded(lval / rval, expr), (ldim[0] - rdim[0], ldim[1] - rdim[1]))
        if op == "**":
            if ldim != units.NUMBER or rdim != units.NUMBER or not isinstance(right, int):
                self.fail("'**' takes a plain number and an integer exponent", expr.span)
            if abs(right) > 256 or abs(lval) > 2**64:
                self.fail("exponent too large", expr.span)
            if lval == 0 and right < 0:
                self.fail("division by zero", expr.span, hint="0 to a negative power")
            return units.normalise(self._bounded(lval ** right, expr))
        self.fail(f"unknown operator '{op}'", expr.span)

    def _bounded(self, value, expr: ast.BinOp):
        """``value``, if its magnitude (and, for a fraction, its precision) stays within a
        double's range: products of products would otherwise double in size each step."""
        numerator, denominator = (value.numerator, value.denominator) if isinstance(value, Fraction) else (value, 1)
        if numerator.bit_length() > MAX_BITS or denominator.bit_length() > MAX_BITS:
            self.fail("the result is out of range", expr.span,
                      hint=f"values stay within 2**{MAX_BITS} in magnitude and precision")
        return value

    def _address_range(self, expr: ast.AddressRange, scope: Scope) -> AddressRangeValue:
        start, end = (self._address(self.evaluate(e, scope), what, e.span)
                      for e, what in ((expr.start, "an address range's start"), (expr.end, "an address range's end")))
        target = self.evaluate(expr.target, scope)
        # one terminal, or a list of them for a range interleaved over several memories
        owners = target if isinstance(target, list) else [target]
        if not owners:
            self.fail("an address range's terminal list is empty", expr.target.span,
                      hint="name one terminal, or the terminals to interleave over: [1, 5]")
        terminals = []
        for owner in owners:
            terminal = self._int(owner, "an address range's terminal", expr.target.span)
            if terminal < 0:
                self.fail(f"an address range's terminal must be at least 0, got {terminal}", expr.target.span)
            terminals.append(terminal)
        value = AddressRangeValue(start, end, terminals[0] if len(terminals) == 1 else tuple(terminals), expr.span)
        if end <= start:
            self.fail(f"address range {value} is empty", expr.span, hint="its end (exclusive) must lie above its start")
        return value

    def _address(self, value, what: str, span) -> int:
        """A byte address: a plain integer, or a data size (``8 GiB``) counted in bytes."""
        if isinstance(value, Quantity):
            units.check_dimension(value, units.DATA, what, span)
            value = units.whole(units.in_unit(value, "B"), what, "B", span)
        address = self._int(value, what, span)
        if address < 0:
            self.fail(f"{what} must be at least 0, got {address}", span)
        return address

    def _check_address_map(self, expr: ast.ListLit, values: list) -> None:
        """A list holding address ranges is an address map: ranges only, and no byte in two."""
        for item, value in zip(expr.items, values):
            if not isinstance(value, AddressRangeValue):
                self.fail(f"an address map holds address ranges (start .. end -> terminal), not {describe(value)}",
                          item.span)
        ordered = sorted(values, key=lambda v: v.start)
        for before, after in zip(ordered, ordered[1:]):
            if after.start < before.end:
                later, earlier = (after, before) if (after.span.line, after.span.col) > \
                    (before.span.line, before.span.col) else (before, after)
                self.fail(f"address range {later} overlaps {earlier}", later.span,
                          hint=f"every byte belongs to one memory; the other range is at line {earlier.span.line}, "
                               f"column {earlier.span.col}")

    def _call(self, expr: ast.Call, scope: Scope):
        name = expr.name
        if name not in BUILTINS:
            self.fail(f"unknown function '{name}'", expr.name_span,
                      hint=did_you_mean(name, BUILTINS) or "built-ins: " + ", ".join(BUILTINS))
        if expr.kwargs:
            self.fail(f"'{name}' takes no named arguments", expr.kwargs[0].name_span)
        args = [self.evaluate(a, scope) for a in expr.args]
        for arg, node in zip(args, expr.args):
            if not isinstance(arg, (int, Fraction, Quantity)) or isinstance(arg, bool):
                self.fail(f"'{name}' takes numbers, got {describe(arg)}", node.span)
        if name in ("min", "max"):
            if not args:
                self.fail(f"'{name}' needs at least one argument", expr.span)
            dims = {units.dim_of(a) for a in args}
            if len(dims) > 1:
                self.fail(f"'{name}' cannot compare values of different dimensions", expr.span)
            pick = min if name == "min" else max
            return pick(args, key=units.magnitude)
        if name == "range":
            return self._range(expr, args)
        if len(args) != 1:
            self.fail(f"'{name}' takes one argument, got {len(args)}", expr.span)
        (arg,) = args
        if name == "abs":
            return units.make(abs(units.magnitude(arg)), units.dim_of(arg))
        if units.dim_of(arg) != units.NUMBER:
            self.fail(f"'{name}' takes a plain number, got {describe(arg)}", expr.args[0].span,
                      hint=f"divide by a unit first, e.g. {name}(x / 1 {unit_example(arg)})")
        value = Fraction(arg)
        if name == "ceil":
            return ceil(value)
        if name == "floor":
            return floor(value)
        if value <= 0:
            self.fail(f"log2 of {units.format_number(units.normalise(value))} is undefined", expr.args[0].span,
                      hint="log2 takes a positive number")
        if value.denominator == 1 and value.numerator & (value.numerator - 1) == 0:
            return value.numerator.bit_length() - 1
        return Fraction(log2(value))

    def _range(self, expr: ast.Call, args: list) -> list:
        """``range(a, b)``: the list of whole numbers a, a + 1, ..., b - 1 (an interleave's
        terminals, say: ``0 .. 32 GiB -> range(0, 4)``)."""
        if len(args) != 2:
            self.fail(f"'range' takes two arguments (first, end exclusive), got {len(args)}", expr.span)
        first, end = (self._int(a, "an argument of 'range'", node.span) for a, node in zip(args, expr.args))
        if end - first > MAX_RANGE:
            self.fail(f"range({first}, {end}) would hold {end - first:,} numbers, more than {MAX_RANGE:,}", expr.span)
        return list(range(first, end))


def unit_example(value) -> str:
    """A unit of the value's dimension for hints such as 'divide by 1 ns'."""
    return {units.TIME: "ns", units.FREQUENCY: "GHz", units.DATA: "B", units.BANDWIDTH: "GB/s"}.get(
        units.dim_of(value), "ns")
