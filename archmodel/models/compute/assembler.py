"""A small assembler for the RISC-V subset the Snitch core model executes.

Programs are text, one instruction per line, as a RISC-V assembler takes them::

    # dot product with SSRs and FREP: ft0, ft1 stream x and y
    li      t0, 1023
    csrwi   ssr, 1            # reads of ft0/ft1 now pop the streams
    frep.o  t0, 1, 3, 0b1001  # repeat the next instruction t0 + 1 times, rotating fa0..fa3
    fmadd.d fa0, ft0, ft1, fa0
    ecall                     # this core is done

Syntax: ``label:`` (also numeric local labels ``1:`` referenced as ``1b``/``1f``); comments
start with ``#``, ``//`` or ``;``; registers by number (``x5``, ``f10``) or ABI name (``t0``,
``fa0``); immediates in decimal, hex (``0x``) or binary (``0b``), or names set with
``.equ NAME, value``. ``.text .globl .global .align .p2align .section .type .size`` are
accepted and ignored; data directives are not (workloads place data in memory).

The subset:

* RV32I: ``add sub and or xor sll srl sra slt sltu``, their immediate forms ``addi andi ori
  xori slli srli srai slti sltiu``, ``lui auipc``, loads ``lb lbu lh lhu lw``, stores ``sb sh
  sw``, branches ``beq bne blt bge bltu bgeu``, ``jal jalr``, ``ecall`` (this core is done;
  so is ``wfi``), ``fence`` (wait until this core's FP subsystem, loads/stores and SSR
  writes have drained), ``nop``.
* RV32M: ``mul mulh mulhu mulhsu div divu rem remu``.
* Pseudo-instructions: ``li la mv not neg j jr ret call beqz bnez blez bgez bltz bgtz bgt ble
  bgtu bleu seqz snez csrr csrw csrs csrc csrwi csrsi csrci``.
* D extension (and the FP32 arithmetic of F): ``fld fsd flw fsw``, ``fadd fsub fmul fdiv
  fmin fmax fsqrt fsgnj fsgnjn fsgnjx fmadd fmsub fnmadd fnmsub`` with ``.d`` or ``.s``,
  ``fmv.d fneg.d fabs.d``, ``fcvt.d.w fcvt.d.wu fcvt.w.d fcvt.wu.d fcvt.s.d fcvt.d.s``,
  ``feq.d flt.d fle.d``. As RISC-V specifies, ``fcvt.w.d``/``fcvt.wu.d`` round to nearest
  even and saturate (NaN gives the largest value), and ``fmin``/``fmax`` return the other
  operand when one is NaN and order -0.0 below +0.0; rounding modes other than
  round-to-nearest-even and the FP exception flags are not modelled.
* CSRs (``csrrw csrrs csrrc csrrwi csrrsi csrrci`` and the pseudo forms): ``mhartid``
  (core index in the cluster), ``mcycle``, ``minstret``, ``ssr`` (bit 0 enables the stream
  semantic registers: ft0, ft1, ft2 then read/write streamers 0, 1, 2; the write is ordered
  with the FP instructions before it), ``barrier`` (reading it waits, after a ``fence``,
  until every core of the cluster has read it or finished), and the streamer configuration
  ``ssrN_repeat`` (each element is used repeat + 1 times), ``ssrN_boundK`` (dimension K has
  bound + 1 iterations), ``ssrN_strideK`` (bytes added per step of dimension K: plain affine
  strides, unlike Snitch's hardware which takes strides relative to the lower dimensions),
  ``ssrN_rptrK`` / ``ssrN_wptrK`` (writing the base address starts a read / write job over
  dimensions 0..K; one job may wait behind the running one), for N = 0, 1, 2 and K = 0..3;
  and the indirection extension of SSRs 0 and 1 (Snitch's ISSRs, :mod:`.ssr`):
  ``ssrN_idx_cfg`` (bits 0-7 the index size, log2 of 1, 2, 4 or 8 bytes; bits 8-15 the
  shift), ``ssrN_idx_base`` and ``ssrN_irptr`` / ``ssrN_iwptr`` (writing the address of
  ``bound0 + 1`` indices starts an indirect read / write job: element k is at ``idx_base +
  (index_k << (3 + shift))``). The registers are the rows of :data:`.isa.SSR_REGS`.
* Snitch's FREP: ``frep.o rs1, n, [stagger_max, stagger_mask]`` repeats the next ``n`` FP
  instructions (1..16, the sequencer's buffer) ``rs1 + 1`` times as a block; ``frep.i``
  repeats each of them ``rs1 + 1`` times. Stagger adds ``k mod (stagger_max + 1)`` to the
  register fields selected by the mask (bit 0 rd, 1 rs1, 2 rs2, 3 rs3) in repetition ``k``.
  ``frep`` means ``frep.o``. The body must be FP computations (no loads, stores or
  conversions that read integer registers).
* Snitch's DMA (the cluster's DMA core only): ``dmsrc rs1[, rs2]``, ``dmdst rs1[, rs2]`` (the
  high half ``rs2`` must be zero), ``dmstr rs1, rs2`` (source and destination strides of a 2D
  transfer), ``dmrep rs1`` (2D rows), ``dmcpyi rd, rs1, cfg`` / ``dmcpy rd, rs1, rs2`` (start
  a transfer of rs1 bytes per row, 2D when bit 1 of the configuration is set; rd receives its
  id), ``dmstati rd, k`` / ``dmstat rd, rs1`` (k = 0 last completed id, 1 next id, 2 busy,
  3 queue full).

Errors are :class:`AssemblyError` (an ArchError): ``file:line:col: error: ...``, the line and
a caret under the offending token, with a hint where one helps.
"""

from __future__ import annotations

import difflib
import re

from archmodel.kernel import ArchError, Span, read_source

from .isa import (F_COMP, F_FROMINT, F_LOAD, F_SSR_ENABLE, F_STORE, F_TOINT,  # noqa: F401 (the kinds, re-exported)
                  K_ALU, K_BARRIER, K_BRANCH, K_CSR, K_DMA, K_FENCE, K_FP, K_FREP, K_HALT, K_JAL, K_JALR, K_LOAD,
                  K_MUL, K_NOP, K_STORE, OPS, SSR_CSRS, s32 as _s32, u32 as _u32)

from .program import Instruction, Program  # noqa: F401 (re-exported: the assembler's output)

FREP_BUFFER_ENTRIES = 16
"""Instructions the FREP sequencer's buffer holds (Snitch, IEEE TC 2021)."""


class AssemblyError(ArchError):
    """An error in an assembly program; renders with its source line and a caret."""

    def __init__(self, message: str, *, span: Span, source_line: str, hint: str | None = None):
        super().__init__(message, hint=hint, span=span)
        self.source_line = source_line

    def render(self, source_line: str | None = None) -> str:
        return super().render(self.source_line if source_line is None else source_line)


_ABI_X = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1"] + [f"a{i}" for i in range(8)] + \
    [f"s{i}" for i in range(2, 12)] + ["t3", "t4", "t5", "t6"]
_ABI_F = [f"ft{i}" for i in range(8)] + ["fs0", "fs1"] + [f"fa{i}" for i in range(8)] + \
    [f"fs{i}" for i in range(2, 12)] + [f"ft{i}" for i in range(8, 12)]
X_REGS = {**{f"x{i}": i for i in range(32)}, **{n: i for i, n in enumerate(_ABI_X)}, "fp": 8}
F_REGS = {**{f"f{i}": i for i in range(32)}, **{n: i for i, n in enumerate(_ABI_F)}}

CSRS = {"mhartid": 0xF14, "mcycle": 0xB00, "minstret": 0xB02, "ssr": 0x7C0, "barrier": 0x7C2}
_per_stream: dict = {}
for _name, (_n, _reg, _k) in SSR_CSRS.items():  # the ISA table's SSR registers, in its order
    CSRS[_name] = 0x800 + 0x20 * _n + _per_stream.setdefault(_n, [0])[0]
    _per_stream[_n][0] += 1
CSR_NAMES = {number: name for name, number in CSRS.items()}

_LOADS = {"lb": (1, True), "lbu": (1, False), "lh": (2, True), "lhu": (2, False), "lw": (4, True)}
_STORES = {"sb": 1, "sh": 2, "sw": 4}


_TOKEN = re.compile(r"\s*([^,\s()]+|\(|\)|,)")
_LABEL = re.compile(r"^\s*([A-Za-z_.$][\w.$]*|\d+)\s*:")
_NUMBER = re.compile(r"^[-+]?(0x[0-9a-fA-F_]+|0b[01_]+|\d+)$")
_IGNORED_DIRECTIVES = {".text", ".globl", ".global", ".align", ".p2align", ".section", ".type", ".size", ".option"}

# Operand patterns: d/s/t x-dest/src1/src2, D/S/T/R f-dest/src1/src2/src3, i imm, m imm(rs1), l label, c csr.
_PATTERNS: dict[str, str] = {op: row.pattern for op, row in OPS.items()}
_PATTERNS.update({"auipc": "di", "jal": "dl", "jalr": "dsi", "ecall": "", "wfi": "", "ebreak": "",
                  "fence": "", "nop": "", "csrrw": "dcs", "csrrs": "dcs", "csrrc": "dcs", "csrrwi": "dci",
                  "csrrsi": "dci", "csrrci": "dci"})
for _op in _LOADS:
    _PATTERNS[_op] = "dm"
for _op in _STORES:
    _PATTERNS[_op] = "tm"
_PATTERNS.update({"fld": "Dm", "flw": "Dm", "fsd": "Tm", "fsw": "Tm",
                  "frep.o": "si", "frep.i": "si", "dmsrc": "s", "dmdst": "s", "dmstr": "st", "dmrep": "s",
                  "dmcpyi": "dsi", "dmcpy": "dst", "dmstati": "di", "dmstat": "ds"})
_PSEUDO = {"li": "di", "la": "dl", "mv": "ds", "not": "ds", "neg": "ds", "j": "l", "jr": "s", "ret": "",
           "call": "l", "beqz": "sl", "bnez": "sl", "blez": "sl", "bgez": "sl", "bltz": "sl", "bgtz": "sl",
           "bgt": "stl", "ble": "stl", "bgtu": "stl", "bleu": "stl", "seqz": "ds", "snez": "ds", "csrr": "dc",
           "csrw": "cs", "csrs": "cs", "csrc": "cs", "csrwi": "ci", "csrsi": "ci", "csrci": "ci", "frep": "si"}
_ALL_OPS = sorted(set(_PATTERNS) | set(_PSEUDO))


class _Line:
    def __init__(self, file: str, number: int, text: str):
        self.file = file
        self.number = number
        self.text = text

    def error(self, message: str, col: int, width: int = 1, hint: str | None = None) -> AssemblyError:
        return AssemblyError(message, span=Span(self.file, self.number, col, self.number, col + max(width, 1)),
                             source_line=self.text, hint=hint)


class _Operand:
    def __init__(self, text: str, col: int):
        self.text = text
        self.col = col


def _split_operands(line: _Line, rest: str, start_col: int) -> list:
    """Operands separated by commas; ``imm(reg)`` stays one operand."""
    operands = []
    current, col, depth, i = "", None, 0, 0
    for i, ch in enumerate(rest):
        if ch == "," and depth == 0:
            if not current.strip():
                raise line.error("missing operand before ','", start_col + i)
            operands.append(_Operand(current.strip(), col))
            current, col = "", None
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if col is None and not ch.isspace():
            col = start_col + i
        current += ch
    if current.strip():
        operands.append(_Operand(current.strip(), col))
    elif operands:
        raise line.error("missing operand after ','", start_col + len(rest.rstrip()))
    return operands


class _Assembler:
    def __init__(self, text: str, file: str):
        self.file = file
        self.lines = text.splitlines()
        self.symbols: dict[str, int] = {}
        self.labels: dict[str, int] = {}
        self.local_labels: dict[str, list[int]] = {}
        self.pending: list = []  # (line, op, operands, op_col, index)

    def number(self, line: _Line, operand: _Operand) -> int:
        text = operand.text.replace("_", "") if _NUMBER.match(operand.text) else operand.text
        if _NUMBER.match(operand.text):
            sign = -1 if text.startswith("-") else 1
            body = text.lstrip("+-")
            if body.startswith(("0x", "0X")):
                return sign * int(body, 16)
            if body.startswith(("0b", "0B")):
                return sign * int(body, 2)
            return sign * int(body, 10)
        name = text.lstrip("-")
        if name in self.symbols:
            return -self.symbols[name] if text.startswith("-") else self.symbols[name]
        close = difflib.get_close_matches(name, list(self.symbols), n=1)
        raise line.error(f"'{operand.text}' is not a number", operand.col, len(operand.text),
                         hint=f"did you mean '{close[0]}'?" if close else "write a decimal, 0x hex or 0b binary number")

    def run(self) -> Program:
        instructions: list = []
        for number, text in enumerate(self.lines, start=1):
            line = _Line(self.file, number, text)
            code = text
            for marker in ("#", "//", ";"):
                cut = code.find(marker)
                if cut >= 0:
                    code = code[:cut]
            offset = 0
            while True:
                match = _LABEL.match(code[offset:])
                if not match:
                    break
                label = match.group(1)
                col = offset + match.start(1) + 1
                if label.isdigit():
                    self.local_labels.setdefault(label, []).append(len(self.pending))
                else:
                    if label in self.labels:
                        raise line.error(f"label '{label}' is defined twice", col, len(label))
                    self.labels[label] = len(self.pending)
                offset += match.end()
            rest = code[offset:]
            stripped = rest.strip()
            if not stripped:
                continue
            op_col = offset + (len(rest) - len(rest.lstrip())) + 1
            parts = stripped.split(None, 1)
            op = parts[0].lower()
            args_text = parts[1] if len(parts) > 1 else ""
            args_col = op_col + len(stripped) - len(args_text) if args_text else op_col + len(op)
            operands = _split_operands(line, args_text, args_col) if args_text else []
            if op.startswith("."):
                self.directive(line, op, operands, op_col)
                continue
            if op not in _PATTERNS and op not in _PSEUDO:
                close = difflib.get_close_matches(op, _ALL_OPS, n=1)
                raise line.error(f"unknown instruction '{parts[0]}'", op_col, len(parts[0]),
                                 hint=f"did you mean '{close[0]}'?" if close else "see the subset in archmodel.models.compute.assembler")
            for expanded in self.expand(line, op, operands, op_col):
                self.pending.append(expanded)
        for index, (line, op, operands, op_col) in enumerate(self.pending):
            ins = self.build(line, op, operands, op_col, index)
            ins.index = index
            instructions.append(ins)
        self.check_freps(instructions)
        return Program(self.file, instructions, dict(self.labels), self.lines)

    def directive(self, line: _Line, op: str, operands: list, col: int) -> None:
        if op in (".equ", ".set"):
            if len(operands) != 2:
                raise line.error(f"'{op}' takes a name and a value", col, len(op))
            self.symbols[operands[0].text] = self.number(line, operands[1])
        elif op not in _IGNORED_DIRECTIVES:
            raise line.error(f"directive '{op}' is not supported", col, len(op),
                             hint="programs hold instructions only; workloads place data in memory")

    def expand(self, line: _Line, op: str, operands: list, col: int) -> list:
        """Pseudo-instructions become real ones (li may become lui + addi)."""
        if op == "li":
            self.arity(line, op, operands, 2, col)
            value = _s32(self.number(line, operands[1]))
            if -2048 <= value < 2048:
                return [(line, "addi", [operands[0], _Operand("zero", 0), _Operand(str(value), operands[1].col)], col)]
            low = ((value & 0xFFF) ^ 0x800) - 0x800
            high = _u32(value - low) >> 12
            out = [(line, "lui", [operands[0], _Operand(str(high), operands[1].col)], col)]
            if low:
                out.append((line, "addi", [operands[0], operands[0], _Operand(str(low), operands[1].col)], col))
            return out
        return [(line, op, operands, col)]

    @staticmethod
    def arity(line: _Line, op: str, operands: list, count, col: int) -> None:
        counts = count if isinstance(count, tuple) else (count,)
        if len(operands) not in counts:
            want = " or ".join(str(c) for c in counts)
            raise line.error(f"'{op}' takes {want} operand{'s' if counts[-1] != 1 else ''}, got {len(operands)}",
                             col, len(op))

    def xreg(self, line: _Line, operand: _Operand) -> int:
        reg = X_REGS.get(operand.text.lower())
        if reg is None:
            hint = "that is an FP register; this operand is an integer register" if operand.text.lower() in F_REGS else None
            close = difflib.get_close_matches(operand.text.lower(), list(X_REGS), n=1)
            raise line.error(f"'{operand.text}' is not an integer register", operand.col, len(operand.text),
                             hint=hint or (f"did you mean '{close[0]}'?" if close else None))
        return reg

    def freg(self, line: _Line, operand: _Operand) -> int:
        reg = F_REGS.get(operand.text.lower())
        if reg is None:
            hint = "that is an integer register; this operand is an FP register" if operand.text.lower() in X_REGS else None
            close = difflib.get_close_matches(operand.text.lower(), list(F_REGS), n=1)
            raise line.error(f"'{operand.text}' is not an FP register", operand.col, len(operand.text),
                             hint=hint or (f"did you mean '{close[0]}'?" if close else None))
        return reg

    def memory(self, line: _Line, operand: _Operand) -> tuple[int, int]:
        match = re.fullmatch(r"\s*([^()]*?)\s*\(\s*([^()\s]+)\s*\)\s*", operand.text)
        if not match:
            raise line.error(f"'{operand.text}' is not a memory operand", operand.col, len(operand.text),
                             hint="write offset(register), e.g. 8(a0)")
        offset = self.number(line, _Operand(match.group(1), operand.col)) if match.group(1) else 0
        base_col = operand.col + operand.text.index("(") + 1
        base = self.xreg(line, _Operand(match.group(2), base_col))
        self.check_imm(line, _Operand(operand.text, operand.col), offset, 12)
        return offset, base

    def csr(self, line: _Line, operand: _Operand) -> str:
        name = operand.text.lower()
        if name in CSRS:
            return name
        if _NUMBER.match(name):
            number = self.number(line, operand)
            if number in CSR_NAMES:
                return CSR_NAMES[number]
        close = difflib.get_close_matches(name, list(CSRS), n=1)
        raise line.error(f"unknown CSR '{operand.text}'", operand.col, len(operand.text),
                         hint=f"did you mean '{close[0]}'?" if close else "known: mhartid, mcycle, minstret, ssr, barrier, ssrN_*")

    @staticmethod
    def check_imm(line: _Line, operand: _Operand, value: int, bits: int, unsigned: bool = False) -> None:
        low, high = (0, (1 << bits) - 1) if unsigned else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
        if not low <= value <= high:
            raise line.error(f"immediate {value} does not fit in {bits} {'unsigned ' if unsigned else ''}bits "
                             f"({low} .. {high})", operand.col, len(operand.text),
                             hint="load a large constant with li into a register" if bits == 12 else None)

    def label(self, line: _Line, operand: _Operand, index: int) -> int:
        name = operand.text
        local = re.fullmatch(r"(\d+)([bf])", name)
        if local:
            places = self.local_labels.get(local.group(1), [])
            if local.group(2) == "b":
                found = [p for p in places if p <= index]
                if found:
                    return found[-1]
            else:
                found = [p for p in places if p > index]
                if found:
                    return found[0]
            raise line.error(f"no local label '{local.group(1)}' {'before' if local.group(2) == 'b' else 'after'} this line",
                             operand.col, len(name))
        if name in self.labels:
            return self.labels[name]
        close = difflib.get_close_matches(name, list(self.labels), n=1)
        raise line.error(f"undefined label '{name}'", operand.col, len(name),
                         hint=f"did you mean '{close[0]}'?" if close else None)

    def build(self, line: _Line, op: str, operands: list, col: int, index: int) -> Instruction:
        if op in _PSEUDO:
            op, operands = self.desugar(line, op, operands, col)
        pattern = _PATTERNS[op]
        if op in ("jal", "jalr") and len(operands) == 1:
            operands = [_Operand("ra", col)] + operands
            if op == "jalr":
                operands.append(_Operand("0", col))
        if op in ("dmsrc", "dmdst") and len(operands) == 2:
            operands = operands[:1] if operands[1].text.lower() in ("zero", "x0") else operands
            if len(operands) == 2:
                raise line.error(f"'{op}': the high address half must be zero (addresses are 32-bit)",
                                 operands[1].col, len(operands[1].text))
        if op in ("frep.o", "frep.i") and len(operands) in (3, 4):
            extra = operands[2:]
            operands = operands[:2]
        else:
            extra = []
        self.arity(line, op, operands, len(pattern), col)
        ins = Instruction(op, K_NOP, line=line.number, col=col, text=line.text, file=line.file)
        for letter, operand in zip(pattern, operands):
            if letter == "d":
                ins.rd = self.xreg(line, operand)
            elif letter == "s":
                ins.rs1 = ins.xs1 = self.xreg(line, operand)
            elif letter == "t":
                ins.rs2 = ins.xs2 = self.xreg(line, operand)
            elif letter == "D":
                ins.rd = self.freg(line, operand)
            elif letter == "S":
                ins.rs1 = self.freg(line, operand)
            elif letter == "T":
                ins.rs2 = self.freg(line, operand)
            elif letter == "R":
                ins.rs3 = self.freg(line, operand)
            elif letter == "i":
                ins.imm = self.number(line, operand)
                ins.uses_imm = True
                self.imm_range(line, op, operand, ins.imm)
            elif letter == "m":
                ins.imm, ins.rs1 = self.memory(line, operand)
                ins.xs1 = ins.rs1
            elif letter == "l":
                ins.target = self.label(line, operand, index)
            elif letter == "c":
                ins.csr = self.csr(line, operand)
        self.classify(line, ins, pattern, extra, col)
        ins.derive()
        return ins

    def imm_range(self, line: _Line, op: str, operand: _Operand, value: int) -> None:
        if op in ("slli", "srli", "srai"):
            self.check_imm(line, operand, value, 5, unsigned=True)
        elif op in ("lui", "auipc"):
            self.check_imm(line, operand, value, 20, unsigned=True)
        elif op in ("csrrwi", "csrrsi", "csrrci"):
            self.check_imm(line, operand, value, 5, unsigned=True)
        elif op in ("frep.o", "frep.i"):
            if not 1 <= value <= FREP_BUFFER_ENTRIES:
                raise line.error(f"frep repeats 1 to {FREP_BUFFER_ENTRIES} instructions (the sequencer's buffer), got {value}",
                                 operand.col, len(operand.text))
        elif op in ("dmstati",):
            self.check_imm(line, operand, value, 2, unsigned=True)
        elif op != "dmcpyi":
            self.check_imm(line, operand, value, 12)

    def desugar(self, line: _Line, op: str, operands: list, col: int) -> tuple[str, list]:
        zero = _Operand("zero", col)
        self.arity(line, op, operands, len(_PSEUDO[op]), col)
        o = operands
        table = {
            "la": lambda: ("auipc_label", o), "mv": lambda: ("addi", [o[0], o[1], _Operand("0", col)]),
            "not": lambda: ("xori", [o[0], o[1], _Operand("-1", col)]),
            "neg": lambda: ("sub", [o[0], zero, o[1]]), "j": lambda: ("jal", [zero, o[0]]),
            "jr": lambda: ("jalr", [zero, o[0], _Operand("0", col)]),
            "ret": lambda: ("jalr", [zero, _Operand("ra", col), _Operand("0", col)]),
            "call": lambda: ("jal", [_Operand("ra", col), o[0]]),
            "beqz": lambda: ("beq", [o[0], zero, o[1]]), "bnez": lambda: ("bne", [o[0], zero, o[1]]),
            "blez": lambda: ("bge", [zero, o[0], o[1]]), "bgez": lambda: ("bge", [o[0], zero, o[1]]),
            "bltz": lambda: ("blt", [o[0], zero, o[1]]), "bgtz": lambda: ("blt", [zero, o[0], o[1]]),
            "bgt": lambda: ("blt", [o[1], o[0], o[2]]), "ble": lambda: ("bge", [o[1], o[0], o[2]]),
            "bgtu": lambda: ("bltu", [o[1], o[0], o[2]]), "bleu": lambda: ("bgeu", [o[1], o[0], o[2]]),
            "seqz": lambda: ("sltiu", [o[0], o[1], _Operand("1", col)]),
            "snez": lambda: ("sltu", [o[0], zero, o[1]]),
            "csrr": lambda: ("csrrs", [o[0], o[1], zero]), "csrw": lambda: ("csrrw", [zero, o[0], o[1]]),
            "csrs": lambda: ("csrrs", [zero, o[0], o[1]]), "csrc": lambda: ("csrrc", [zero, o[0], o[1]]),
            "csrwi": lambda: ("csrrwi", [zero, o[0], o[1]]), "csrsi": lambda: ("csrrsi", [zero, o[0], o[1]]),
            "csrci": lambda: ("csrrci", [zero, o[0], o[1]]), "frep": lambda: ("frep.o", o),
        }
        op, operands = table[op]()
        if op == "auipc_label":
            raise line.error("'la' is not supported: programs have no data labels", col, 2,
                             hint="pass addresses in with li")
        return op, operands

    def classify(self, line: _Line, ins: Instruction, pattern: str, extra: list, col: int) -> None:
        op = ins.op
        row = OPS.get(op)
        if row is not None:  # the instructions the ISA table computes
            ins.kind, ins.fkind, ins.fn = row.kind, row.fkind, row.python
            ins.latency, ins.flops, ins.fp32 = row.latency, row.flops, row.fp32
            if row.kind == K_FP:
                ins.fsrc = (ins.rs1, ins.rs2, ins.rs3)[:row.operands]
                if row.fkind != F_TOINT:
                    ins.fdst = ins.rd
            elif op == "lui":
                ins.imm <<= 12
        elif op == "auipc":
            ins.kind, ins.imm = K_JAL, ins.imm << 12  # needs the pc: handled with jal (rd = pc + imm, no jump)
        elif op == "jal":
            ins.kind = K_JAL
        elif op == "jalr":
            ins.kind = K_JALR
        elif op in _LOADS:
            ins.kind = K_LOAD
            ins.size, ins.signed = _LOADS[op]
        elif op in _STORES:
            ins.kind = K_STORE
            ins.size = _STORES[op]
        elif op in ("ecall", "wfi", "ebreak"):
            ins.kind = K_HALT
        elif op == "fence":
            ins.kind = K_FENCE
        elif op == "nop":
            ins.kind = K_NOP
        elif op.startswith("csr"):
            ins.kind = K_CSR
            if ins.csr == "barrier":
                ins.kind = K_BARRIER
            elif ins.csr == "ssr":
                if op not in ("csrrw", "csrrwi", "csrrs", "csrrsi", "csrrc", "csrrci") or ins.rd != 0:
                    raise line.error("the ssr CSR can be written but not read", col, len(op))
                ins.kind, ins.fkind = K_FP, F_SSR_ENABLE
        elif op.startswith("frep"):
            ins.kind = K_FREP
            ins.frep_inner = op == "frep.i"
            if extra:
                ins.stagger_max = self.number(line, extra[0])
                ins.stagger_mask = self.number(line, extra[1]) if len(extra) > 1 else 0
                if not 0 <= ins.stagger_max <= 7:
                    raise line.error("frep stagger_max is 0 to 7", extra[0].col, len(extra[0].text))
                if not 0 <= ins.stagger_mask <= 15:
                    raise line.error("frep stagger_mask is 4 bits (rd, rs1, rs2, rs3)", extra[-1].col, len(extra[-1].text))
        elif op.startswith("dm"):
            ins.kind = K_DMA
        elif op in ("fld", "flw"):
            ins.kind, ins.fkind, ins.size = K_FP, F_LOAD, 8 if op == "fld" else 4
            ins.fdst = ins.rd
        elif op in ("fsd", "fsw"):
            ins.kind, ins.fkind, ins.size = K_FP, F_STORE, 8 if op == "fsd" else 4
            ins.fsrc = (ins.rs2,)

    @staticmethod
    def check_freps(instructions: list) -> None:
        for ins in instructions:
            if ins.kind != K_FREP:
                continue
            body = instructions[ins.index + 1: ins.index + 1 + ins.imm]
            line = _Line(ins.file, ins.line, ins.text)
            if len(body) < ins.imm:
                raise line.error(f"frep repeats {ins.imm} instructions but only {len(body)} follow", ins.col, len(ins.op))
            for member in body:
                if member.kind != K_FP or member.fkind not in (F_COMP,):
                    raise _Line(member.file, member.line, member.text).error(
                        f"'{member.op}' cannot be repeated by frep (the body must be FP computations)",
                        member.col, len(member.op), hint=f"the frep at line {ins.line} repeats {ins.imm} instructions")


def assemble(text: str, file: str = "<program>") -> Program:
    """Assemble ``text`` (from ``file``, named in errors) into a :class:`Program`."""
    return _Assembler(text, file).run()


def assemble_file(path) -> Program:
    """Assemble a ``.S`` file."""
    return assemble(read_source(path, "assembly file")[0], str(path))
