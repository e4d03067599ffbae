"""The header and initial values of a VCD, written byte for byte as pyvcd's ``VCDWriter`` writes them.

pyvcd's ``register_var`` checks and records each variable through several dicts, sets and
an enum lookup: on a design of a thousand queues (6,144 signals) registering cost about as
much as a tenth of the untraced run. :class:`VcdHeader` makes the same pyvcd variables
(``ScalarVariable`` and the others: their ``ident`` and ``format_value`` are what the value
lines are made of) and writes the same text: the keywords sorted, the scopes sorted with
their variables in registration order, then the initial timestamp and ``$dumpvars``.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import Any, Iterator

from vcd.common import VarType
from vcd.writer import RealVariable, ScalarVariable, StringVariable, Variable, VectorVariable


def identifier(number: int) -> str:
    """The identifier pyvcd gives its ``number``-th variable (from 1): base 94, printable ASCII."""
    encoded = ""
    while number:
        number -= 1
        encoded += chr(number % 94 + 33)
        number //= 94
    return encoded


# The identifiers made so far, by number: every VCD of a process numbers its variables from 1.
_IDENTIFIERS = [""]
# How pyvcd names each type in a $var line (f"{var_type}", as there).
_TYPE_NAMES = {kind: f"{kind}" for kind in VarType}


class VcdHeader:
    """The variables of one VCD, registered before anything is written, and their header.

    ``comment`` and ``version`` are the header's ``$comment`` and ``$version`` (left out when
    empty); the timescale is 1 ps and no date is written."""

    def __init__(self, comment: str = "", version: str = ""):
        self._keywords = {"$comment": comment, "$date": "", "$timescale": "1 ps", "$version": version}
        self.vars: list[Variable] = []  # in registration order: the order of $dumpvars
        self._scopes: dict[str, dict[str, str]] = {}  # scope path -> variable name -> its $var line

    def add(self, scope: str, name: str, var_type: VarType, size: int | None, init: Any) -> Variable:
        """A new variable ``name`` of ``scope`` (a dotted path), as pyvcd's ``register_var``
        makes it for these types (``reg``/``wire`` of ``size`` bits, ``real``, ``string``)
        from a valid ``init``; a name given twice in one scope raises KeyError, as there."""
        lines = self._scopes.get(scope)
        if lines is None:
            lines = self._scopes[scope] = {}
        elif name in lines:
            raise KeyError(f"Duplicate var {name} in scope {scope}")
        number = len(self.vars) + 1
        if number >= len(_IDENTIFIERS):
            _IDENTIFIERS.extend(identifier(n) for n in range(len(_IDENTIFIERS), 2 * number))
        ident = _IDENTIFIERS[number]
        var: Variable
        if var_type is VarType.string:
            size = 1
            var = StringVariable(ident, var_type, size, init)
        elif var_type is VarType.real:
            size = 64
            var = RealVariable(ident, var_type, size, init)
        elif size == 1:
            var = ScalarVariable(ident, var_type, size, init)
        else:
            assert size is not None, "a vector has a size"
            var = VectorVariable(ident, var_type, size, init)
        lines[name] = f"$var {_TYPE_NAMES[var_type]} {size} {ident} {name} $end"
        self.vars.append(var)
        return var

    def text(self, timestamp: int | None) -> str:
        """The header, and, if any variable was added, ``#timestamp`` and the ``$dumpvars`` of
        every variable's value now; each line ends with a newline."""
        lines = list(self._definitions())
        if self.vars:
            lines.append(f"#{timestamp}")
            lines.append("$dumpvars")
            lines.extend(var.format_value(var.value, False) for var in self.vars)
            lines.append("$end")
        lines.append("")
        return "\n".join(lines)

    def _definitions(self) -> Iterator[str]:
        # (as pyvcd's _gen_header: a multi-line keyword value goes on lines of its own)
        for keyword, value in sorted(self._keywords.items()):
            if not value:
                continue
            parts = value.split("\n")
            if len(parts) == 1:
                yield f"{keyword} {parts[0]} $end"
            else:
                yield keyword
                for part in parts:
                    yield "\t" + part
                yield "$end"
        previous: tuple[str, ...] = ()
        for scope, var_lines in sorted((tuple(path.split(".")), lines) for path, lines in self._scopes.items()):
            for i, (before, this) in enumerate(zip_longest(previous, scope)):
                if before != this:
                    for _ in previous[i:]:
                        yield "$upscope $end"
                    for name in scope[i:]:
                        yield f"$scope module {name} $end"
                    break
            yield from var_lines.values()
            previous = scope
        for _ in previous:
            yield "$upscope $end"
        yield "$enddefinitions $end"
