"""Parse ``.arch`` text into the syntax tree of :mod:`archmodel.lang.ast`.

The grammar is ``dsl/arch.lark`` (LALR(1)); the transformer runs inside the parser, so no
intermediate parse tree is built. Syntax errors become :class:`~archmodel.kernel.ArchError`
with the span of the offending token, labelled by Lark's ``match_examples`` against the
malformed snippets in :data:`SYNTAX_EXAMPLES`.
"""

from __future__ import annotations

import attrs

import difflib
import functools
import re
from decimal import Decimal
from fractions import Fraction

import lark
from lark import Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..kernel import ArchError, Span, did_you_mean
from ..paths import data_path
from . import ast
from .units import UNIT_NAMES

KEYWORDS = ("and", "as", "clock", "const", "else", "enum", "expose", "false", "for", "if", "import",
            "in", "link", "module", "not", "of", "on", "or", "run", "system", "topology", "trace", "true",
            "with")


def _tok_span(file: str, tok: Token) -> Span:
    # Tokens the lexer made always have a position; one made by hand would point at the start.
    return Span(file, tok.line or 1, tok.column or 1, tok.end_line, tok.end_column)


def _start(item, file):
    if isinstance(item, Token):
        return _tok_span(file, item)
    return item.span


def _join(first: Span, last: Span) -> Span:
    return Span(first.file, first.line, first.col, last.end_line, last.end_col)


MAX_EXPONENT = 308
"""The largest power of ten a number may reach, as for a double: a literal beyond it is an
error before it is computed (``1e100000000`` would take minutes and gigabytes as a fraction)."""


def _number(text: str, span: Span):
    if text[:2] in ("0x", "0X"):
        digits = text[2:].replace("_", "").lstrip("0")
        if len(digits) * 4 > 1024:
            raise ArchError(f"the number {text[:20]}... is too large (more than 1024 bits)", span=span)
        return int(text, 16)
    plain = text.replace("_", "")
    magnitude = Decimal(plain)  # holds any exponent cheaply, so it can be checked first
    if magnitude and not -MAX_EXPONENT <= magnitude.adjusted() <= MAX_EXPONENT:
        shown = text if len(text) <= 24 else text[:20] + "..."
        raise ArchError(f"the number {shown} is out of range", span=span,
                        hint=f"numbers lie between 1e-{MAX_EXPONENT} and 1e{MAX_EXPONENT} in magnitude")
    if "." in plain or "e" in plain or "E" in plain:
        value = Fraction(plain)
        return int(value) if value.denominator == 1 else value
    return int(plain)


def _unescape(token: Token) -> str:
    body = token[1:-1]
    if "\\" not in body:
        return body
    out, i = [], 0
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body):
            out.append(escapes.get(body[i + 1], body[i + 1]))
            i += 2
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _present(items):
    return [item for item in items if item is not None]


class _Builder(Transformer):
    """Builds AST nodes bottom-up while the parser reduces rules (an inline transformer).

    A node's span runs from its first to its last child, so it starts at the first name or
    value of the construct (inline transformers get no position metadata from Lark).
    """

    def __init__(self):
        super().__init__(visit_tokens=False)
        self.file = "<string>"

    def _span(self, first, last) -> Span:
        start = _start(first, self.file)
        end = _start(last, self.file)
        return _join(start, end)

    def _tspan(self, tok: Token) -> Span:
        return _tok_span(self.file, tok)

    # -- top level ------------------------------------------------------------------------
    def start(self, items):
        return list(items)

    def import_stmt(self, items):
        (path,) = items
        return ast.Import(_unescape(path), self._tspan(path))

    def const_def(self, items):
        name, value = items
        return ast.Const(str(name), value, self._span(name, value), self._tspan(name))

    def param_list(self, items):
        return tuple(_present(items))

    def param_decl(self, items):
        name, type_ref, default = items
        return ast.ParamDecl(str(name), type_ref, default, self._span(name, default or type_ref),
                             self._tspan(name))

    def simple_type(self, items):
        (name,) = items
        return ast.TypeRef(str(name), (), self._tspan(name))

    def enum_type(self, items):
        members = _present(items)
        return ast.TypeRef("enum", tuple(str(m) for m in members), self._span(members[0], members[-1]))

    def block(self, items):
        return tuple(items)

    def module_def(self, items):
        name, params, body = items
        return ast.ModuleDef("module", str(name), params, body, self._tspan(name), self._tspan(name), self.file)

    def system_def(self, items):
        name, params, body = items
        return ast.ModuleDef("system", str(name), params or (), body, self._tspan(name), self._tspan(name),
                             self.file)

    # -- statements -------------------------------------------------------------------------
    def clock_def(self, items):
        name, value = items
        return ast.ClockDef(str(name), value, self._span(name, value), self._tspan(name))

    def instance(self, items):
        name, count, call, clock = items
        last = clock if clock is not None else call
        return ast.Instance(str(name), count, call, str(clock) if clock is not None else None,
                            self._span(name, last), self._tspan(name),
                            self._tspan(clock) if clock is not None else None)

    def indexed_instance(self, items):
        name, index, count, call, clock = items
        instance = self.instance([name, ast.Selector("index", count, None, count.span), call, clock])
        return attrs.evolve(instance, index=str(index))

    def model_call(self, items):
        name, args = items
        last = args[-1] if args else name
        return ast.ModelCall(str(name), args, self._span(name, last), self._tspan(name))

    def placement(self, items):
        return items[0]

    def arg_list(self, items):
        return tuple(_present(items))

    def arg(self, items):
        name, value = items
        return ast.Arg(str(name), value, self._span(name, value), self._tspan(name))

    def topology_def(self, items):
        name, count, generator, (args, kwargs), call, link, clock = items
        last = clock if clock is not None else (link or call)
        return ast.TopologyDef(str(name), count, str(generator), args, kwargs, call, link,
                               str(clock) if clock is not None else None, self._span(name, last),
                               self._tspan(name), self._tspan(generator),
                               self._tspan(clock) if clock is not None else None)

    def connection(self, items):
        src, dst, link = items
        span = self._span(src, link or dst)
        return ast.Connection(src, dst, link, span, span)

    def link_clause(self, items):
        (args,) = items
        if args:
            return ast.Link(args, self._span(args[0], args[-1]))
        return ast.Link((), Span(self.file, 0, 0))

    def endpoint(self, items):
        segments = []
        for i in range(0, len(items), 2):
            name, selector = items[i], items[i + 1]
            span = self._span(name, selector) if selector is not None else self._tspan(name)
            segments.append(ast.Segment(str(name), selector, span, self._tspan(name)))
        return ast.Endpoint(tuple(segments), _join(segments[0].span, segments[-1].span))

    def opt_selector(self, items):
        return items[0]

    def sel_index(self, items):
        (index,) = items
        return ast.Selector("index", index, None, index.span)

    def sel_range(self, items):
        start, stop = items
        return ast.Selector("range", start, stop, _join(start.span, stop.span))

    def sel_all(self, items):
        (star,) = items
        return ast.Selector("all", None, None, self._tspan(star))

    def expose(self, items):
        *targets, name = items
        return ast.Expose(tuple(targets), str(name), self._span(targets[0], name), self._tspan(name))

    def for_stmt(self, items):
        var, start, stop, body = items
        return ast.For(str(var), start, stop, body, _join(start.span, stop.span), self._tspan(var))

    def if_stmt(self, items):
        cond, then, otherwise = items
        if isinstance(otherwise, ast.If):
            otherwise = (otherwise,)
        return ast.If(cond, then, otherwise or (), cond.span)

    def in_block(self, items):
        clock, body = items
        return ast.InBlock(str(clock), body, self._tspan(clock), self._tspan(clock))

    def run_stmt(self, items):
        name, (args, kwargs), *targets = items
        return ast.Run(str(name), args, kwargs, tuple(targets), self._span(name, targets[-1]), self._tspan(name))

    def trace_stmt(self, items):
        (glob,) = items
        return ast.Trace(_unescape(glob), self._tspan(glob))

    def call_args(self, items):
        args, kwargs = [], []
        for item in _present(items):
            (kwargs if isinstance(item, ast.KwArg) else args).append(item)
        return tuple(args), tuple(kwargs)

    def call_arg(self, items):
        return items[0]

    def kw_arg(self, items):
        name, value = items
        return ast.KwArg(str(name), value, self._span(name, value), self._tspan(name))

    # -- expressions --------------------------------------------------------------------------
    def number(self, items):
        (tok,) = items
        return ast.Number(_number(tok, self._tspan(tok)), self._tspan(tok))

    def quantity(self, items):
        (tok,) = items
        text = str(tok)
        split = len(text)
        while split > 0 and (text[split - 1].isalpha() or text[split - 1] == "/"):
            split -= 1
        return ast.Quantity(_number(text[:split].strip(), self._tspan(tok)), text[split:], self._tspan(tok))

    def string(self, items):
        (tok,) = items
        return ast.String(_unescape(tok), self._tspan(tok))

    def bool_lit(self, items):
        (tok,) = items
        return ast.Bool(tok == "true", self._tspan(tok))

    def var(self, items):
        (tok,) = items
        return ast.Var(str(tok), self._tspan(tok))

    def call(self, items):
        name, (args, kwargs) = items
        everything = list(args) + list(kwargs)
        last = max(everything, key=lambda n: (n.span.end_line, n.span.end_col)) if everything else name
        return ast.Call(str(name), args, kwargs, self._span(name, last), self._tspan(name))

    def list_lit(self, items):
        values = tuple(_present(items))
        if values:
            return ast.ListLit(values, _join(values[0].span, values[-1].span))
        return ast.ListLit((), Span(self.file, 0, 0))

    def address_range(self, items):
        start, end, target = items
        return ast.AddressRange(start, end, target, _join(start.span, target.span))

    def index(self, items):
        base, index = items
        return ast.Index(base, index, _join(base.span, index.span))

    # The operator's token is kept (``!`` rules in the grammar) so the span starts at it:
    # an error about ``-1`` points at the minus sign.
    def neg(self, items):
        sign, operand = items
        return ast.UnaryOp("-", operand, _join(self._tspan(sign), operand.span))

    def not_(self, items):
        word, operand = items
        return ast.UnaryOp("not", operand, _join(self._tspan(word), operand.span))


def _binary(op):
    def build(self, items):
        left, right = items
        span = _join(left.span, right.span)
        return ast.BinOp(op, left, right, span, span)
    build.__name__ = op
    return build


for _name, _op in (("or_", "or"), ("and_", "and"), ("eq", "=="), ("ne", "!="), ("lt", "<"), ("le", "<="),
                   ("gt", ">"), ("ge", ">="), ("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"),
                   ("mod", "%"), ("pow", "**")):
    setattr(_Builder, _name, _binary(_op))


def grammar_text() -> str:
    """The grammar, read from ``dsl/arch.lark``."""
    return (data_path("dsl") / "arch.lark").read_text()


@functools.lru_cache(maxsize=None)
def _parsers():
    builder = _Builder()
    text = grammar_text()
    common = dict(parser="lalr", lexer="contextual", maybe_placeholders=True, transformer=builder)
    return builder, lark.Lark(text, start="start", **common), lark.Lark(text, start="expr", **common)


def parse(text: str, file: str = "<string>") -> ast.File:
    """Parse the text of one ``.arch`` file; raises ArchError on a syntax error."""
    builder, parser, _ = _parsers()
    builder.file = file
    try:
        items = parser.parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, text, file) from None
    imports = tuple(i for i in items if isinstance(i, ast.Import))
    consts = tuple(i for i in items if isinstance(i, ast.Const))
    modules = tuple(i for i in items if isinstance(i, ast.ModuleDef))
    return ast.File(file, imports, consts, modules)


def parse_expression(text: str, file: str = "<command line>"):
    """Parse one expression (a ``-p NAME=VALUE`` value on the command line)."""
    builder, _, parser = _parsers()
    builder.file = file
    try:
        return parser.parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, text, file) from None


# Malformed snippets whose parser state (and, where given, offending token) identifies a
# mistake; the first label whose example fails in the same state as the input wins.
SYNTAX_EXAMPLES = [
    (("expected ':' between the instance name and its model",
      "an instance is 'name : Model(...)', an array 'name[count] : Model(...)'"),
     ["system S { a Fifo() }", "system S { a[2] Fifo() }", "module M() { a Fifo() }"]),
    (("expected '->' between the two ends of a connection",
      "a connection is 'source.port -> destination.port'"),
     ["system S { a.out > b.inp }", "system S { a.out - > b.inp }", "system S { a.out => b.inp }",
      "system S { a.out b.inp }", "system S { a.out <- b.inp }", "system S { a > b }",
      "system S { a[0].out > b.inp }", "system S { a.out[0] > b.inp }"]),
    (("'=' cannot follow a name here", "declare a constant with 'const name = value'"),
     ["system S { x = 3 }"]),
    (("unexpected '{token}' at the top level of a file",
      "a file holds 'import', 'const', 'module' and 'system' definitions"),
     ["sytem S {}", "modul M() {}"]),
    (("stray '{token}'", "remove it, or check the brackets before it"),
     ["system S { a : F() ) }", "system S { a : F() ] }", "system S { a.b -> c.d ) }",
     "system S { const x = 1 ) }", "system S ) { }", "module M() { a : F() ) }", ") system S {}",
     "system S { a : F() } }", "system S { a : F(x = 1)) }"]),
]

_TERMINAL_WORDS = {
    "NAME": "a name", "NUMBER": "a number", "QUANTITY": "a number with a unit", "STRING": "a string",
    "$END": "end of file",
}


def _describe_terminal(name: str, parser) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    return f"'{pattern.value}'" if pattern.type == "str" else name.lower()


def _expected(err, parser) -> str:
    names = sorted(getattr(err, "accepts", None) or getattr(err, "expected", None) or ())
    words = sorted({_describe_terminal(n, parser) for n in names if not n.startswith("__")})
    if len(words) > 8:
        words = words[:8] + ["..."]
    return ", ".join(words)


def _end_span(text: str, file: str) -> Span:
    lines = text.splitlines() or [""]
    last = len(lines)
    while last > 1 and not lines[last - 1].strip():
        last -= 1
    return Span(file, last, len(lines[last - 1]) + 1, last, len(lines[last - 1]) + 2)


def syntax_error(err: UnexpectedInput, text: str, file: str) -> ArchError:
    """Turn a Lark parse error into a labelled ArchError at the offending token."""
    _, parser, _ = _parsers()
    if isinstance(err, UnexpectedCharacters):
        span = Span(file, err.line, err.column, err.line, err.column + 1)
        pos = err.pos_in_stream
        char = text[pos] if pos is not None and 0 <= pos < len(text) else "?"
        hint = None
        if char == '"':
            hint = "a string ends on the line it starts on"
        elif char == "#":
            hint = "comments start with //"
        elif not char.isascii():
            return ArchError(f"unexpected character {char!r}: names are ASCII letters, digits and '_'",
                             hint="non-ASCII text may appear in strings and comments only", span=span)
        expected = _expected(err, parser)
        return ArchError(f"unexpected character {char!r}", hint=hint or (f"expected {expected}" if expected else None),
                         span=span)
    if not isinstance(err, UnexpectedToken):
        return ArchError(f"syntax error: {err}", span=Span(file, 1, 1))
    token = err.token
    if text.startswith("/*", token.start_pos or 0) and "*/" not in text[token.start_pos:]:
        return ArchError("a '/*' comment is never closed", hint="end it with '*/'", span=_tok_span(file, token))
    if token.type == "$END":
        names = set(err.accepts or err.expected)
        hint = "a '}' is missing" if "RBRACE" in names else f"expected {_expected(err, parser)}"
        return ArchError("unexpected end of file", hint=hint, span=_end_span(text, file))
    span = _tok_span(file, token)
    previous = err.token_history[-1] if err.token_history else None
    if previous is not None and previous.type == "NAME" and str(previous) in ("module", "system", "import"):
        # Inside a block a top-level keyword lexes as a name, so the error surfaces one token late.
        return ArchError(f"missing '}}' before '{previous}'", hint="close the block above with '}'",
                         span=_tok_span(file, previous))
    unit = None
    if previous is not None and previous.type == "NUMBER" and token.type == "NAME":
        unit = token
    elif previous is not None and previous.type == "NAME" and str(previous) not in KEYWORDS and _follows_number(text, previous):
        unit = previous  # '10 THz' then a newline: the unknown unit parsed as the next statement's first name
    if unit is not None:
        return ArchError(f"unknown unit '{unit}'",
                         hint=did_you_mean(str(unit), UNIT_NAMES) or "units: " + ", ".join(UNIT_NAMES),
                         span=_tok_span(file, unit))
    label = None
    _normalise_state(err)
    try:
        label = err.match_examples(_example_parse, SYNTAX_EXAMPLES, use_accepts=True)
    except Exception:  # an example that does not fail the way it should must not hide the real error
        label = None
    shown = str(token)
    if label is not None:
        message, hint = label
        if token.type == "NAME" and "top level" in message:
            close = difflib.get_close_matches(shown, ("import", "const", "module", "system"), n=1)
            hint = f"did you mean '{close[0]}'?" if close else hint
        return ArchError(message.replace("{token}", shown), hint=hint, span=span)
    if shown in (")", "]", "}"):
        return ArchError(f"stray '{shown}'", hint="remove it, or check the brackets before it", span=span)
    if token.type == "NAME" and shown in KEYWORDS:
        return ArchError(f"'{shown}' is a keyword and cannot be used here", hint=f"expected {_expected(err, parser)}",
                         span=span)
    hint = f"expected {_expected(err, parser)}"
    if token.type == "NAME":
        close = difflib.get_close_matches(shown, KEYWORDS, n=1)
        if close and f"'{close[0]}'" in hint:
            hint = f"did you mean '{close[0]}'?"
    return ArchError(f"unexpected '{shown}'", hint=hint, span=span)


def _follows_number(text: str, token: Token) -> bool:
    """Whether ``token`` follows a number on its line, as a unit would."""
    line_start = text.rfind("\n", 0, token.start_pos) + 1
    return re.search(r"(^|[^\w.])\d[\d_]*(\.\d+)?([eE][+-]?\d+)?[ \t]*$", text[line_start:token.start_pos]) is not None


def _normalise_state(err: UnexpectedInput) -> None:
    # An error found by the contextual lexer carries the whole parser state object; the
    # examples are matched by LALR state number, so reduce it to that.
    position = getattr(err.state, "position", None)
    if position is not None:
        err.state = position


def _example_parse(text: str):
    builder, parser, _ = _parsers()
    saved = builder.file
    try:
        return parser.parse(text)
    except UnexpectedInput as err:
        _normalise_state(err)
        raise
    finally:
        builder.file = saved
