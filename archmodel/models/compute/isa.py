"""The Snitch FP computations, each written once: mnemonic, operands, latency, flops, semantics.

:data:`FP_OPS` is the one table the assembler (operand pattern, latency, flop count, the
Python function an instruction computes with), the Python core (the expressions its
generated FREP replay functions inline) and the compiled cluster loop (opcodes and the
numba dispatch :func:`dispatch_source` writes) read. Adding an FP computation is one
:class:`FpOp` row here plus its test; nothing else names it.

A row's semantics is one expression over its operands ``{0}``, ``{1}``, ``{2}`` that may
call the primitives in :data:`PRIMITIVES`. Each engine supplies its own implementation of
the primitives (this module the Python ones, ``compiled_cluster`` the numba ones), and
building an engine's functions fails at import when it lacks one: there is no default
branch an unknown operation could fall into.

The integer wrap-arounds :func:`s32` and :func:`u32` live here too, for every engine.
"""

from __future__ import annotations

import math
import re
import struct


def s32(v: int) -> int:
    """``v`` wrapped to a signed 32-bit integer (plain arithmetic, so numba compiles it too)."""
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def u32(v: int) -> int:
    """The low 32 bits of ``v`` read as unsigned."""
    return v & 0xFFFFFFFF


# -- the primitives of the semantics, as the Python model computes them ----------------------------
def round32(v: float) -> float:
    """``v`` rounded to FP32 by ``struct`` (which, on the Pythons we run, rounds a value
    beyond FP32's range to an infinity; where it raises OverflowError instead, the value
    stays unrounded)."""
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return v


def fdiv(a: float, b: float) -> float:
    """IEEE division: a zero divisor gives a signed infinity (NaN for 0/0 or NaN/0)."""
    try:
        return a / b
    except ZeroDivisionError:
        return float("nan") if a == 0 or a != a else (float("inf") if (a > 0) == (str(b)[0] != "-") else float("-inf"))


def fsqrt(a: float) -> float:
    """Square root; NaN below zero."""
    return a ** 0.5 if a >= 0 else float("nan")


def copysign(a: float, b: float) -> float:
    """The magnitude of ``a`` with the sign of ``b``."""
    return math.copysign(abs(a), b)


def fmin(a, b):
    """RISC-V fmin: a NaN operand yields the other one (both NaN: the canonical NaN), and
    -0.0 counts as less than +0.0."""
    if a != a:
        return b if b == b else math.nan
    if b != b:
        return a
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def fmax(a, b):
    """RISC-V fmax, the mirror of :func:`fmin`."""
    if a != a:
        return b if b == b else math.nan
    if b != b:
        return a
    if a == b:
        return a if math.copysign(1.0, a) > 0 else b
    return a if a > b else b


PRIMITIVES = ("round32", "fdiv", "fsqrt", "copysign", "fmin", "fmax")
"""The functions a semantics expression may call (``abs`` is Python's and numba's own)."""

_PYTHON = {name: globals()[name] for name in PRIMITIVES}
_BUILTINS = {**_PYTHON, "abs": abs}
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_OPERAND = re.compile(r"\{(\d)\}")
_ARGS = ("a", "b", "c")


class IsaError(Exception):
    """A row of the ISA table that cannot be built (raised at import)."""


class FpOp:
    """One FP computation (an F_COMP instruction) of the table.

    ``mnemonic`` as the assembler takes it; ``operands`` FP sources (1..3, rs1 rs2 rs3);
    ``semantics`` the expression computing the result; ``latency`` result cycles;
    ``flops`` floating-point operations counted (an FMA 2); ``fp32`` the result is rounded
    to FP32; ``compiled``: the compiled loop computes it (False: the loop hands the cycle
    to Python, e.g. a square root whose libm result we have not checked bit for bit).
    """

    __slots__ = ("mnemonic", "operands", "semantics", "latency", "flops", "fp32", "compiled", "python", "code")

    def __init__(self, mnemonic: str, operands: int, semantics: str, latency: int, flops: int, *,
                 fp32: bool = False, compiled: bool = True):
        if not semantics:
            raise IsaError(f"FP operation '{mnemonic}' has no semantics")
        used = {int(k) for k in _OPERAND.findall(semantics)}
        if used != set(range(operands)):
            raise IsaError(f"FP operation '{mnemonic}' reads {operands} operand(s) but its semantics "
                           f"'{semantics}' uses {sorted(used)}")
        unknown = sorted(set(_CALL.findall(semantics)) - set(PRIMITIVES) - {"abs"})
        if unknown:
            raise IsaError(f"FP operation '{mnemonic}': semantics '{semantics}' calls {unknown}, "
                           f"which is not one of the primitives {PRIMITIVES}")
        self.mnemonic = mnemonic
        self.operands = operands
        self.semantics = semantics
        self.latency = latency
        self.flops = flops
        self.fp32 = fp32
        self.compiled = compiled
        self.python = _python_function(semantics, operands, fp32)
        self.code = -1  # the compiled loop's opcode, numbered by :func:`_number`

    @property
    def pattern(self) -> str:
        """The assembler's operand pattern: an FP destination and the FP sources."""
        return "D" + "STR"[:self.operands]

    def expression(self, *names: str) -> str:
        """The semantics with the operands named ``names``."""
        return self.semantics.format(*names)

    @property
    def inline(self) -> str | None:
        """The semantics as an expression generated code may write in place of a call
        (plain arithmetic of an FP64 result), or None."""
        return None if self.fp32 or _CALL.search(self.semantics) else self.semantics

    def __repr__(self) -> str:
        return f"<FpOp {self.mnemonic}: {self.semantics}>"


def _python_function(semantics: str, operands: int, fp32: bool):
    """The function the Python model computes ``semantics`` with: the primitive itself when
    the semantics is one call of it with the operands in order (one call fewer per issue)."""
    args = ", ".join(_ARGS[:operands])
    body = semantics.format(*_ARGS)
    match = re.fullmatch(r"(\w+)\((.*)\)", body)
    if match and match.group(1) in _BUILTINS and match.group(2) == args:
        fn = _BUILTINS[match.group(1)]
    else:
        fn = eval(f"lambda {args}: {body}", dict(_PYTHON))  # noqa: S307 (the table's own text)
    if fp32:
        inner = fn
        return lambda *a: round32(inner(*a))
    return fn


def _pair(base: str, operands: int, semantics: str, latency: int, flops: int, latency32: int | None = None,
          compiled: bool = True) -> list:
    """The ``.d`` and ``.s`` rows of one operation (``.s`` rounds its result to FP32)."""
    return [FpOp(base + ".d", operands, semantics, latency, flops, compiled=compiled),
            FpOp(base + ".s", operands, semantics, latency if latency32 is None else latency32, flops, fp32=True,
                 compiled=compiled)]


# FP64 latencies: FMA-class 3 cycles, FP32 2 (Zaruba et al., IEEE Micro 2021); comparisons,
# sign injection, moves and conversions 1. The divider's 21 is an assumption (an iterative
# unit). The order is the compiled loop's dispatch order: the common operations first.
_ROWS = [
    *_pair("fmadd", 3, "{0} * {1} + {2}", 3, 2, 2),
    *_pair("fmsub", 3, "{0} * {1} - {2}", 3, 2, 2),
    *_pair("fnmadd", 3, "-({0} * {1}) - {2}", 3, 2, 2),
    *_pair("fnmsub", 3, "-({0} * {1}) + {2}", 3, 2, 2),
    *_pair("fadd", 2, "{0} + {1}", 3, 1, 2),
    *_pair("fsub", 2, "{0} - {1}", 3, 1, 2),
    *_pair("fmul", 2, "{0} * {1}", 3, 1, 2),
    FpOp("fmv.d", 1, "{0}", 1, 0),
    FpOp("fneg.d", 1, "-{0}", 1, 0),
    FpOp("fabs.d", 1, "abs({0})", 1, 0),
    *_pair("fdiv", 2, "fdiv({0}, {1})", 21, 1),
    *_pair("fmin", 2, "fmin({0}, {1})", 1, 1),
    *_pair("fmax", 2, "fmax({0}, {1})", 1, 1),
    *_pair("fsgnj", 2, "copysign({0}, {1})", 1, 0),
    *_pair("fsgnjn", 2, "copysign({0}, -{1} if {1} == {1} else {1})", 1, 0),
    *_pair("fsgnjx", 2, "copysign({0}, {1}) if {0} * {1} >= 0 or {0} == 0 else -abs({0})", 1, 0),
    FpOp("fcvt.s.d", 1, "round32({0})", 1, 0),
    # the conversion's ``.s`` suffix makes it an FP32 result, as the assembler always treated it
    FpOp("fcvt.d.s", 1, "{0}", 1, 0, fp32=True),
    *_pair("fsqrt", 1, "fsqrt({0})", 21, 1, compiled=False),
]


def _number(rows: list) -> dict:
    """The table by mnemonic, with opcodes: one per distinct semantics (``.d`` and ``.s``
    share it; the loop rounds by the fp32 flag), numbered densely in table order."""
    table: dict = {}
    codes: dict = {}
    for row in rows:
        if row.mnemonic in table:
            raise IsaError(f"FP operation '{row.mnemonic}' is in the table twice")
        if row.compiled:
            row.code = codes.setdefault(row.semantics, len(codes))
        table[row.mnemonic] = row
    return table


FP_OPS: dict = _number(_ROWS)
"""Every FP computation by mnemonic (``fmadd.d`` ...)."""


def fp_code(mnemonic: str) -> int:
    """The compiled loop's opcode of ``mnemonic`` (-1: the loop leaves it to Python)."""
    return FP_OPS[mnemonic].code


def dispatch_source(name: str, rows=None) -> str:
    """Source of ``name(op, a, b, c, fp32)``: the result of opcode ``op`` on operands
    ``a, b, c``, rounded to FP32 when ``fp32``; one branch per opcode of ``rows`` (the
    table), the last one the ``else``, since the opcodes are exactly those numbered. The
    caller runs it where the primitives are its own (``round32`` included)."""
    rows = list(FP_OPS.values()) if rows is None else rows
    branches: dict = {}
    for row in rows:
        if row.compiled:
            branches.setdefault(row.code, row.expression(*_ARGS))
    if sorted(branches) != list(range(len(branches))):
        raise IsaError(f"the compiled opcodes {sorted(branches)} are not numbered 0 .. {len(branches) - 1}")
    lines = [f"def {name}(op, a, b, c, fp32):"]
    last = len(branches) - 1
    for code in range(len(branches)):
        if code == last:
            lines.append("    else:" if code else "    if True:")
        else:
            lines.append(f"    {'if' if code == 0 else 'elif'} op == {code}:")
        lines.append(f"        r = {branches[code]}")
    lines += ["    if fp32:", "        r = round32(r)", "    return r", ""]
    return "\n".join(lines)


def define_dispatch(name: str, namespace: dict, rows=None):
    """Define the dispatch :func:`dispatch_source` writes in ``namespace`` (a module's
    globals, whose primitives it calls) and return it; every primitive the compiled rows
    call must be there, or this raises :class:`IsaError` (at the caller's import)."""
    rows = list(FP_OPS.values()) if rows is None else rows
    needed = {"round32"} | {call for row in rows if row.compiled for call in _CALL.findall(row.semantics)}
    missing = sorted(needed - {"abs"} - set(namespace))
    if missing:
        raise IsaError(f"{namespace.get('__name__', 'the engine')} has no implementation of {missing}")
    exec(compile(dispatch_source(name, rows), f"<{name}: the ISA table>", "exec"), namespace)  # noqa: S102
    return namespace[name]
