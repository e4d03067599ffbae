"""The Snitch instructions that compute, each written once: mnemonic, operands, latency, flops, semantics.

:data:`OPS` is the one table the assembler (operand pattern, kind, latency, flop count, the
Python function an instruction computes with), the Python core (the expressions its
generated FREP replay functions inline) and the compiled cluster loop (opcodes and the
numba dispatches :func:`dispatch_source` writes) read: the RV32I register and immediate
operations, RV32M, the branches, and the FP computations and conversions. Adding one is a
:class:`Op` row here plus its test; nothing else names it. (Loads, stores, jumps, CSRs,
FREP and the DMA have no semantics to share: the assembler and each engine handle them.)

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
    """``v`` rounded to FP32 as IEEE 754 rounds to nearest: a value beyond FP32's range
    becomes an infinity of its sign (``struct`` does so on some Pythons and raises
    OverflowError on others)."""
    try:
        return struct.unpack("f", struct.pack("f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


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

def div(a: int, b: int) -> int:
    """RV32M div: truncating; by zero -1, the one overflow (-2^31 / -1) gives -2^31."""
    if b == 0:
        return -1
    if a == -0x80000000 and b == -1:
        return a
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def rem(a: int, b: int) -> int:
    """RV32M rem: the remainder of :func:`div` (by zero: the dividend; the overflow: 0)."""
    if b == 0:
        return a
    if a == -0x80000000 and b == -1:
        return 0
    q = abs(a) // abs(b)  # div's quotient, written out so numba compiles this alone
    return a - b * (q if (a >= 0) == (b >= 0) else -q)


def mulhu(a: int, b: int) -> int:
    """The high 32 bits of the unsigned 64-bit product."""
    return (u32(a) * u32(b)) >> 32


def fcvt_w(a: float) -> int:
    """RISC-V fcvt.w.d: round to nearest even, saturate to 32 bits; NaN gives 2^31 - 1."""
    if a != a or a >= 2**31 - 0.5:
        return 2**31 - 1
    if a <= -2**31 - 0.5:
        return -2**31
    return round(a)


def fcvt_wu(a: float) -> int:
    """RISC-V fcvt.wu.d: round to nearest even, saturate to 0 .. 2^32 - 1 (NaN: the top);
    the register holds the 32-bit pattern, read as signed like every other result."""
    if a != a or a >= 2**32 - 0.5:
        return s32(2**32 - 1)
    if a <= -0.5:
        return 0
    return s32(round(a))


PRIMITIVES = ("round32", "fdiv", "fsqrt", "copysign", "fmin", "fmax", "u32", "div", "rem", "mulhu", "fcvt_w",
              "fcvt_wu")
"""The functions a semantics expression may call (``abs`` and ``float`` are Python's and numba's own)."""

_PYTHON = {name: globals()[name] for name in PRIMITIVES}
_BUILTINS = {**_PYTHON, "abs": abs, "float": float}
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_OPERAND = re.compile(r"\{(\d)\}")
_ARGS = ("a", "b", "c")

# Instruction kinds: the core dispatches on these.
(K_ALU, K_MUL, K_BRANCH, K_JAL, K_JALR, K_LOAD, K_STORE, K_CSR, K_HALT, K_FENCE, K_BARRIER,
 K_FP, K_FREP, K_DMA, K_NOP) = range(15)
# FP kinds (executed by the FP subsystem).
F_COMP, F_LOAD, F_STORE, F_TOINT, F_FROMINT, F_SSR_ENABLE = range(6)
# What a load/store queue entry does (a core's LSU and the compiled loop's queue rows).
LSU_LOAD, LSU_STORE, LSU_FP_LOAD, LSU_FP_STORE = range(4)

GROUPS = {
    # group: (kind, FP kind, arguments of its semantics, the compiled dispatch's parameters)
    "alu": (K_ALU, -1, 2, "op, a, b"),
    "mul": (K_MUL, -1, 2, "op, a, b"),
    "branch": (K_BRANCH, -1, 2, "op, a, b"),
    "fp": (K_FP, F_COMP, 3, "op, a, b, c, fp32"),
    "toint": (K_FP, F_TOINT, 2, "op, a, b"),
    "fromint": (K_FP, F_FROMINT, 1, "op, a"),
}
"""The instruction groups whose rows carry semantics. ``fp`` computes FP from FP registers,
``toint`` an integer from FP registers, ``fromint`` FP from an integer register; ``alu``,
``mul`` and ``branch`` read two integers (register or immediate)."""


class IsaError(Exception):
    """A row of the ISA table that cannot be built (raised at import)."""


class Op:
    """One instruction of the table.

    ``group`` one of :data:`GROUPS` (which gives ``kind`` and ``fkind``); ``mnemonic`` as the
    assembler takes it; ``pattern`` its operands (the assembler's letters: d/s/t integer
    destination and sources, D/S/T/R FP destination and sources, i an immediate);
    ``semantics`` the expression of its result over the operands ``{0}`` ``{1}`` ``{2}``
    (the integer core's two operands, or the FP sources in order); ``latency`` result cycles;
    ``flops`` floating-point operations counted (an FMA 2); ``fp32`` the result is rounded
    to FP32; ``compiled``: the compiled loop computes it (False: the loop hands the cycle
    to Python, e.g. a square root whose libm result we have not checked bit for bit).
    """

    __slots__ = ("group", "mnemonic", "pattern", "semantics", "latency", "flops", "fp32", "compiled", "kind", "fkind",
                 "operands", "python", "code")

    def __init__(self, group: str, mnemonic: str, pattern: str, semantics: str, latency: int = 1, flops: int = 0, *,
                 fp32: bool = False, compiled: bool = True):
        if group not in GROUPS:
            raise IsaError(f"'{mnemonic}': unknown group '{group}' (one of {sorted(GROUPS)})")
        if not semantics:
            raise IsaError(f"'{mnemonic}' has no semantics")
        self.kind, self.fkind, arity, _ = GROUPS[group]
        self.operands = sum(pattern.count(letter) for letter in "STR")  # the FP registers read
        used = {int(k) for k in _OPERAND.findall(semantics)}
        if group in ("fp", "toint"):
            arity = self.operands
        if not used <= set(range(arity)) or (group == "fp" and used != set(range(arity))):
            raise IsaError(f"'{mnemonic}' reads {arity} operand(s) but its semantics '{semantics}' uses {sorted(used)}")
        unknown = sorted(set(_CALL.findall(semantics)) - set(_BUILTINS))
        if unknown:
            raise IsaError(f"'{mnemonic}': semantics '{semantics}' calls {unknown}, which is not one of the "
                           f"primitives {PRIMITIVES}")
        self.group = group
        self.mnemonic = mnemonic
        self.pattern = pattern
        self.semantics = semantics
        self.latency = latency
        self.flops = flops
        self.fp32 = fp32
        self.compiled = compiled
        self.python = _python_function(semantics, arity, fp32)
        self.code = -1  # the compiled loop's opcode within its group, numbered by _number

    def expression(self, *names: str) -> str:
        """The semantics with the operands named ``names``."""
        return self.semantics.format(*names)

    @property
    def inline(self) -> str | None:
        """The semantics as an expression generated code may write in place of a call
        (plain arithmetic of an FP64 result), or None."""
        return None if self.fp32 or _CALL.search(self.semantics) else self.semantics

    def __repr__(self) -> str:
        return f"<Op {self.mnemonic}: {self.semantics}>"


def _python_function(semantics: str, arity: int, fp32: bool):
    """The function the Python model computes ``semantics`` with: the primitive itself when
    the semantics is one call of it with the operands in order (one call fewer per issue)."""
    args = ", ".join(_ARGS[:arity])
    body = semantics.format(*_ARGS)
    match = re.fullmatch(r"(\w+)\((.*)\)", body)
    if match and match.group(1) in _BUILTINS and match.group(2) == args:
        fn = _BUILTINS[match.group(1)]
    else:
        fn = eval(f"lambda {args}: {body}", dict(_BUILTINS))  # noqa: S307 (the table's own text)
    if fp32:
        inner = fn
        return lambda *a: round32(inner(*a))
    return fn


def _fp(mnemonic: str, semantics: str, latency: int = 1, flops: int = 0, **options) -> Op:
    operands = len(set(_OPERAND.findall(semantics)))
    return Op("fp", mnemonic, "D" + "STR"[:operands], semantics, latency, flops, **options)


def _pair(base: str, semantics: str, latency: int, flops: int, latency32: int | None = None, **options) -> list:
    """The ``.d`` and ``.s`` rows of one FP operation (``.s`` rounds its result to FP32)."""
    return [_fp(base + ".d", semantics, latency, flops, **options),
            _fp(base + ".s", semantics, latency if latency32 is None else latency32, flops, fp32=True, **options)]


def _alu(mnemonic: str, semantics: str, immediate: str | None = None) -> list:
    """An RV32I register-register operation and its immediate form (``addi`` ...)."""
    return [Op("alu", mnemonic, "dst", semantics)] + ([Op("alu", immediate, "dsi", semantics)] if immediate else [])


# The order within a group is the compiled loop's dispatch order: the common operations first.
# Latencies: multiplies 2 cycles, the iterative divider 16 (assumptions); FP64 FMA-class 3,
# FP32 2 (Zaruba et al., IEEE Micro 2021); the FP divider's 21 is an assumption (an
# iterative unit); comparisons, sign injection, moves and conversions 1.
_ROWS = [
    *_alu("add", "{0} + {1}", "addi"), *_alu("sub", "{0} - {1}"), *_alu("and", "{0} & {1}", "andi"),
    *_alu("or", "{0} | {1}", "ori"), *_alu("xor", "{0} ^ {1}", "xori"), *_alu("sll", "{0} << ({1} & 31)", "slli"),
    *_alu("srl", "u32({0}) >> ({1} & 31)", "srli"), *_alu("sra", "{0} >> ({1} & 31)", "srai"),
    *_alu("slt", "1 if {0} < {1} else 0", "slti"), *_alu("sltu", "1 if u32({0}) < u32({1}) else 0", "sltiu"),
    Op("alu", "lui", "di", "{1}"),  # the immediate, shifted by 12 when assembled
    Op("mul", "mul", "dst", "{0} * {1}", 2), Op("mul", "mulh", "dst", "({0} * {1}) >> 32", 2),
    Op("mul", "mulhu", "dst", "mulhu({0}, {1})", 2), Op("mul", "mulhsu", "dst", "({0} * u32({1})) >> 32", 2),
    Op("mul", "div", "dst", "div({0}, {1})", 16), Op("mul", "divu", "dst", "u32({0}) // u32({1}) if {1} else -1", 16),
    Op("mul", "rem", "dst", "rem({0}, {1})", 16), Op("mul", "remu", "dst", "u32({0}) % u32({1}) if {1} else {0}", 16),
    Op("branch", "beq", "stl", "{0} == {1}"), Op("branch", "bne", "stl", "{0} != {1}"),
    Op("branch", "blt", "stl", "{0} < {1}"), Op("branch", "bge", "stl", "{0} >= {1}"),
    Op("branch", "bltu", "stl", "u32({0}) < u32({1})"), Op("branch", "bgeu", "stl", "u32({0}) >= u32({1})"),
    *_pair("fmadd", "{0} * {1} + {2}", 3, 2, 2),
    *_pair("fmsub", "{0} * {1} - {2}", 3, 2, 2),
    *_pair("fnmadd", "-({0} * {1}) - {2}", 3, 2, 2),
    *_pair("fnmsub", "-({0} * {1}) + {2}", 3, 2, 2),
    *_pair("fadd", "{0} + {1}", 3, 1, 2),
    *_pair("fsub", "{0} - {1}", 3, 1, 2),
    *_pair("fmul", "{0} * {1}", 3, 1, 2),
    _fp("fmv.d", "{0}"),
    _fp("fneg.d", "-{0}"),
    _fp("fabs.d", "abs({0})"),
    *_pair("fdiv", "fdiv({0}, {1})", 21, 1),
    *_pair("fmin", "fmin({0}, {1})", 1, 1),
    *_pair("fmax", "fmax({0}, {1})", 1, 1),
    *_pair("fsgnj", "copysign({0}, {1})", 1, 0),
    *_pair("fsgnjn", "copysign({0}, -{1} if {1} == {1} else {1})", 1, 0),
    *_pair("fsgnjx", "copysign({0}, {1}) if {0} * {1} >= 0 or {0} == 0 else -abs({0})", 1, 0),
    _fp("fcvt.s.d", "round32({0})"),
    # the conversion's ``.s`` suffix makes it an FP32 result, as the assembler always treated it
    _fp("fcvt.d.s", "{0}", fp32=True),
    *_pair("fsqrt", "fsqrt({0})", 21, 1, compiled=False),
    Op("toint", "fcvt.w.d", "dS", "fcvt_w({0})"),
    Op("toint", "feq.d", "dST", "1 if {0} == {1} else 0"),
    Op("toint", "flt.d", "dST", "1 if {0} < {1} else 0"),
    Op("toint", "fle.d", "dST", "1 if {0} <= {1} else 0"),
    Op("toint", "fcvt.wu.d", "dS", "fcvt_wu({0})"),
    Op("fromint", "fcvt.d.w", "Ds", "float({0})"),
    Op("fromint", "fcvt.d.wu", "Ds", "float(u32({0}))"),
]


def _number(rows: list) -> dict:
    """The table by mnemonic, with opcodes: within each group one per distinct semantics
    (``add`` and ``addi``, ``.d`` and ``.s`` share one; the loop rounds by the fp32 flag),
    numbered densely in table order."""
    table: dict = {}
    codes: dict = {}
    for row in rows:
        if row.mnemonic in table:
            raise IsaError(f"'{row.mnemonic}' is in the table twice")
        if row.compiled:
            group = codes.setdefault(row.group, {})
            row.code = group.setdefault(row.semantics, len(group))
        table[row.mnemonic] = row
    return table


OPS: dict = _number(_ROWS)
"""Every instruction with semantics, by mnemonic (``add``, ``fmadd.d`` ...)."""

FP_OPS: dict = {m: row for m, row in OPS.items() if row.group == "fp"}
"""The FP computations (F_COMP) of :data:`OPS`."""


def code(mnemonic: str) -> int:
    """The compiled loop's opcode of ``mnemonic`` within its group (-1: left to Python)."""
    return OPS[mnemonic].code



def dispatch_source(name: str, group: str, rows=None) -> str:
    """Source of the compiled loop's function ``name`` for ``group`` (parameters as
    :data:`GROUPS` says): the result of opcode ``op`` on the operands, one branch per opcode
    of the group's rows (the last unconditional, since the opcodes are exactly those
    numbered); ``fp`` rounds to FP32 when ``fp32``. The caller runs it where the
    primitives are its own."""
    rows = [row for row in (OPS.values() if rows is None else rows) if row.group == group and row.compiled]
    branches: dict = {}
    for row in rows:
        branches.setdefault(row.code, row.expression(*_ARGS))
    if sorted(branches) != list(range(len(branches))) or not branches:
        raise IsaError(f"the compiled opcodes of '{group}' {sorted(branches)} are not numbered 0 .. "
                       f"{len(branches) - 1}")
    fp = group == "fp"
    lines = [f"def {name}({GROUPS[group][3]}):"]
    last = len(branches) - 1
    for k in range(len(branches)):
        result = f"r = {branches[k]}" if fp else f"return {branches[k]}"
        if k == last:
            lines += (["    else:", f"        {result}"] if k else [f"    {result}"]) if fp else [f"    {result}"]
        else:
            lines += [f"    {'if' if k == 0 else 'elif' if fp else 'if'} op == {k}:", f"        {result}"]
    if fp:
        lines += ["    if fp32:", "        r = round32(r)", "    return r"]
    return "\n".join(lines) + "\n"


def define_dispatch(name: str, namespace: dict, group: str = "fp", rows=None):
    """Define the dispatch :func:`dispatch_source` writes in ``namespace`` (a module's
    globals, whose primitives it calls) and return it; every primitive the compiled rows
    call must be there, or this raises :class:`IsaError` (at the caller's import)."""
    chosen = [row for row in (OPS.values() if rows is None else rows) if row.group == group and row.compiled]
    needed = {call for row in chosen for call in _CALL.findall(row.semantics)} | ({"round32"} if group == "fp" else set())
    missing = sorted(needed - {"abs", "float"} - set(namespace))
    if missing:
        raise IsaError(f"{namespace.get('__name__', 'the engine')} has no implementation of {missing}")
    exec(compile(dispatch_source(name, group, chosen), f"<{name}: the ISA table>", "exec"), namespace)  # noqa: S102
    return namespace[name]


# -- the SSR configuration registers ---------------------------------------------------------------
class SsrReg:
    """One configuration register of a Snitch SSR streamer, as a CSR ``ssrN_<name>[K]``.

    ``name`` the field (``bound`` ...); ``dims`` how many there are (4: one per loop
    dimension K, named ``<name>K``; 1: no suffix); ``code`` the number both engines dispatch
    on; ``job``: writing it starts a job (``"read"`` or ``"write"``, None for a plain
    register); ``indirect``: the job is indirect (an ISSR job, see :mod:`.ssr`)."""

    __slots__ = ("name", "dims", "code", "job", "indirect")

    def __init__(self, name: str, dims: int, code: int, job: str | None = None, indirect: bool = False):
        self.name, self.dims, self.code, self.job, self.indirect = name, dims, code, job, indirect

    def __repr__(self) -> str:
        return f"<SsrReg {self.name}>"


# codes: the plain registers first, then those that start a job (the engines test ``code >= SSR_RPTR``)
(SSR_REPEAT, SSR_BOUND, SSR_STRIDE, SSR_IDX_CFG, SSR_IDX_BASE, SSR_RPTR, SSR_WPTR, SSR_IRPTR,
 SSR_IWPTR) = range(9)
SSR_REGS = (
    SsrReg("repeat", 1, SSR_REPEAT), SsrReg("bound", 4, SSR_BOUND), SsrReg("stride", 4, SSR_STRIDE),
    SsrReg("rptr", 4, SSR_RPTR, "read"), SsrReg("wptr", 4, SSR_WPTR, "write"),
    # the indirection extension (Snitch's ISSR): index size and shift, the base the indices
    # are added to, and the two registers that start an indirect read / write job
    SsrReg("idx_cfg", 1, SSR_IDX_CFG), SsrReg("idx_base", 1, SSR_IDX_BASE),
    SsrReg("irptr", 1, SSR_IRPTR, "read", True), SsrReg("iwptr", 1, SSR_IWPTR, "write", True),
)
"""Every SSR configuration register, in CSR order: ``ssrN_<field>`` is CSR ``0x800 + 0x20*N +
k`` for the k-th name :func:`ssr_csrs` lists. The assembler, the Python core and the
compiled loop all read this table; adding a register is a row here plus its behaviour in
:mod:`.ssr` and the loop."""

SSR_STREAMS = 3
"""Streamers per core (ft0, ft1, ft2)."""
SSR_INDIRECT = (0, 1)
"""The streamers with the indirection extension, as the Snitch cluster's default
configuration has it (SSR 0 and 1; SSR 2 is an intersection slave only, not modelled)."""
SSR_INDEX_CREDITS = 3
"""Index words an ISSR fetches ahead (the RTL's ``IndexCredits``, default 3)."""
SSR_SHIFT_MAX = 7
"""The largest index shift (the RTL's ``ShiftWidth`` of 3 bits)."""


def ssr_csrs() -> dict:
    """{CSR name: (streamer, register, dimension)} for every streamer's registers, in CSR order."""
    table = {}
    for n in range(SSR_STREAMS):
        for reg in SSR_REGS:
            for k in range(reg.dims):
                table[f"ssr{n}_{reg.name}{k if reg.dims > 1 else ''}"] = (n, reg, k)
    return table


SSR_CSRS: dict = ssr_csrs()
"""{``ssrN_field``: (N, :class:`SsrReg`, K)}."""
