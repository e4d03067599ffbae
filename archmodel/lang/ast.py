"""The syntax tree of a ``.arch`` file: frozen attrs nodes, each carrying its source span.

The parser's transformer builds these; the elaborator walks them. Nodes never change after
parsing, so one parsed file can be elaborated many times (an imported module, an array of
module instances) without copying.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol, Union

import attrs

from ..kernel import Span

class Expression(Protocol):
    """Any expression node (a literal, a name, an operation, a call ...): each carries its span."""

    @property
    def span(self) -> Span: ...


# Every node is frozen, slotted and compared by identity (eq=False): two equal-looking nodes from
# different places are different nodes. Written out on each class so that type checkers see attrs.


@attrs.frozen(slots=True, eq=False)
class Number:
    """An integer or exact decimal literal (``4``, ``2.5``, ``1e3``)."""

    value: Union[int, Fraction]
    span: Span


@attrs.frozen(slots=True, eq=False)
class Quantity:
    """A number with a unit written on one line: ``4 GHz``, ``128 KiB``, ``64 GB/s``."""

    value: Union[int, Fraction]
    unit: str
    span: Span


@attrs.frozen(slots=True, eq=False)
class String:
    """A double-quoted string literal, escapes resolved."""

    value: str
    span: Span


@attrs.frozen(slots=True, eq=False)
class Bool:
    """``true`` or ``false``."""

    value: bool
    span: Span


@attrs.frozen(slots=True, eq=False)
class Var:
    """A name used as a value: a constant, parameter, loop variable or enum member."""

    name: str
    span: Span


@attrs.frozen(slots=True, eq=False)
class Call:
    """A built-in function call: ``max(a, b)``, ``log2(n)``."""

    name: str
    args: tuple
    kwargs: tuple  # of KwArg
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class KwArg:
    """``name = value`` inside a generator or workload call."""

    name: str
    value: Expression
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class BinOp:
    """``left op right`` for arithmetic, comparison and logic."""

    op: str
    left: Expression
    right: Expression
    span: Span
    op_span: Span


@attrs.frozen(slots=True, eq=False)
class UnaryOp:
    """``-x`` or ``not x``."""

    op: str
    operand: Expression
    span: Span


@attrs.frozen(slots=True, eq=False)
class ListLit:
    """``[a, b, c]``."""

    items: tuple
    span: Span


@attrs.frozen(slots=True, eq=False)
class AddressRange:
    """``start .. end -> target`` in a list: the bytes ``[start, end)`` owned by terminal ``target``."""

    start: Expression
    end: Expression
    target: Expression
    span: Span


@attrs.frozen(slots=True, eq=False)
class Index:
    """``list[i]``."""

    base: Expression
    index: Expression
    span: Span


@attrs.frozen(slots=True, eq=False)
class Arg:
    """``name = value`` in a model call or link clause."""

    name: str
    value: Expression
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class ModelCall:
    """``Model(args)``: the model or module an instance is made of."""

    name: str
    args: tuple  # of Arg
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class Selector:
    """What ``[...]`` selects: one index, a range ``a .. b`` (end exclusive) or ``*`` (all)."""

    kind: str  # "index", "range" or "all"
    start: Expression
    stop: Expression
    span: Span


@attrs.frozen(slots=True, eq=False)
class Segment:
    """One step of an endpoint path: ``core[3]`` or ``out``."""

    name: str
    selector: Selector | None
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class Endpoint:
    """A path to instances or ports: ``core[i].mem``, ``tcdm.port[0 .. 4]``, ``chiplet[*]``."""

    segments: tuple
    span: Span


@attrs.frozen(slots=True, eq=False)
class Import:
    """``import "path.arch"``."""

    path: str
    span: Span


@attrs.frozen(slots=True, eq=False)
class Const:
    """``const name = expr``."""

    name: str
    value: Expression
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class TypeRef:
    """A parameter type: ``int``, ``time``, ``bytes``, ``model``, ``enum(a, b)``."""

    name: str
    members: tuple  # enum members, else empty
    span: Span


@attrs.frozen(slots=True, eq=False)
class ParamDecl:
    """``name: type = default`` in a module header."""

    name: str
    type: TypeRef
    default: Expression | None  # None when required
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class ModuleDef:
    """``module Name(params) { body }`` or ``system Name { body }``."""

    kind: str  # "module" or "system"
    name: str
    params: tuple
    body: tuple
    span: Span
    name_span: Span
    file: str


@attrs.frozen(slots=True, eq=False)
class ClockDef:
    """``clock name = 1 GHz`` (or a period, ``clock slow = 2 ns``)."""

    name: str
    value: Expression
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class Instance:
    """``name : Model(args)``, ``name[count] : Model(args)``, optionally ``in clock``;
    ``name[i in count] : Model(args)`` evaluates the arguments per element with ``index``
    (``i``) bound to the element's number."""

    name: str
    count: Selector | None
    model: ModelCall
    clock: str | None
    span: Span
    name_span: Span
    clock_span: Span | None
    index: str | None = None


@attrs.frozen(slots=True, eq=False)
class Link:
    """``with link(latency = 2 ns, capacity = 4, width = 512 bit, bandwidth = 64 GB/s)``."""

    args: tuple
    span: Span


@attrs.frozen(slots=True, eq=False)
class TopologyDef:
    """``name : topology gen(args) of Model(args) with link(...) in clock``."""

    name: str
    count: Selector | None
    generator: str
    gen_args: tuple
    gen_kwargs: tuple
    node_model: ModelCall
    link: Link | None
    clock: str | None
    span: Span
    name_span: Span
    generator_span: Span
    clock_span: Span | None


@attrs.frozen(slots=True, eq=False)
class Connection:
    """``src -> dst with link(...)``."""

    src: Endpoint
    dst: Endpoint
    link: Link | None
    span: Span
    arrow_span: Span


@attrs.frozen(slots=True, eq=False)
class Expose:
    """``expose inner.port as name``: makes an inner port a port of the enclosing module;
    several endpoints (``expose a.inp, b.inp as inp``) join into one port array."""

    targets: tuple
    name: str
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class For:
    """``for i in a .. b { body }`` (``b`` exclusive)."""

    var: str
    start: Expression
    stop: Expression
    body: tuple
    span: Span
    var_span: Span


@attrs.frozen(slots=True, eq=False)
class If:
    """``if cond { body } else { body }``."""

    cond: Expression
    then: tuple
    otherwise: tuple
    span: Span


@attrs.frozen(slots=True, eq=False)
class InBlock:
    """``in clock { body }``: instances in the body run in ``clock`` unless placed otherwise."""

    clock: str
    body: tuple
    span: Span
    clock_span: Span


@attrs.frozen(slots=True, eq=False)
class Run:
    """``run workload(args) on target, target``."""

    workload: str
    args: tuple
    kwargs: tuple
    targets: tuple
    span: Span
    name_span: Span


@attrs.frozen(slots=True, eq=False)
class Trace:
    """``trace "glob"``: signals to put in the waveform."""

    glob: str
    span: Span


@attrs.frozen(slots=True, eq=False)
class File:
    """One parsed ``.arch`` file."""

    path: str
    imports: tuple
    consts: tuple
    modules: tuple
