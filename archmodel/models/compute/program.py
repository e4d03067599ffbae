"""The assembled form of a Snitch program: :class:`Instruction` (an instruction's kind,
operands, latency, semantics and source position, with what the FP subsystem would otherwise
work out at every issue) and :class:`Program` (the instructions in order, the labels and the
source text). :mod:`.assembler` builds them from text; the cores, the cluster and the
compiled loop's layout read them."""

from __future__ import annotations


class Instruction:
    """One assembled instruction: its kind, operands and where it came from.

    ``xs1``/``xs2`` are the integer registers the integer core reads (0 when none);
    ``fsrc`` the FP registers the FP subsystem reads; ``fn`` computes the result.
    """

    __slots__ = ("op", "kind", "fkind", "rd", "rs1", "rs2", "rs3", "xs1", "xs2", "imm", "target", "csr",
                 "fn", "fsrc", "fdst", "latency", "flops", "fp32", "size", "signed", "uses_imm",
                 "frep_inner", "stagger_max", "stagger_mask", "index", "line", "col", "text", "file",
                 "fregs", "ssr_path", "dup_stream")

    def __init__(self, op: str, kind: int, *, line: int, col: int, text: str, file: str):
        self.op = op
        self.kind = kind
        self.fkind = -1
        self.rd = self.rs1 = self.rs2 = self.rs3 = 0
        self.xs1 = self.xs2 = 0
        self.imm = 0
        self.target = -1
        self.csr = ""
        self.fn = None
        self.fsrc: tuple = ()
        self.fdst = -1
        self.latency = 1
        self.flops = 0
        self.fp32 = False
        self.size = 0
        self.signed = False
        self.uses_imm = False
        self.frep_inner = False
        self.stagger_max = 0
        self.stagger_mask = 0
        self.index = 0
        self.line = line
        self.col = col
        self.text = text
        self.file = file
        self.derive()

    def derive(self) -> None:
        """Work out once, at assembly, what the FP subsystem would otherwise work out at
        every issue: the FP registers whose scoreboard an issue checks (``fregs``), whether
        the instruction names a stream register when SSRs are on (``ssr_path``: any of rd,
        rs1, rs2, rs3 below 3, as the core decides), and whether it reads one stream twice
        (``dup_stream``, the rare case that takes the general operand path)."""
        self.fregs = self.fsrc + (self.rd,)
        self.ssr_path = self.rs1 < 3 or self.rs2 < 3 or self.rs3 < 3 or self.rd < 3
        streams = [r for r in self.fsrc if r < 3]
        self.dup_stream = len(streams) != len(set(streams))

    def where(self) -> str:
        """``file:line: source text`` for runtime messages."""
        return f"{self.file}:{self.line}: {self.text.strip()}"

    def stagger_copy(self, k: int, mask: int) -> "Instruction":
        """This FP instruction with ``k`` added to the fields selected by ``mask``."""
        if k == 0 or mask == 0:
            return self
        copy = Instruction.__new__(Instruction)
        for slot in Instruction.__slots__:
            setattr(copy, slot, getattr(self, slot))
        fields = ["rd", "rs1", "rs2", "rs3"]
        for bit, field in enumerate(fields):
            if mask >> bit & 1:
                setattr(copy, field, (getattr(self, field) + k) % 32)
        copy.fsrc = tuple(getattr(copy, f) for f in ("rs1", "rs2", "rs3")[:len(self.fsrc)])
        copy.fdst = copy.rd if self.fdst >= 0 else -1
        copy.derive()
        return copy

    def __repr__(self) -> str:
        return f"<{self.op} @{self.index} {self.file}:{self.line}>"


class Program:
    """An assembled program: the instructions in order, the labels, the source text."""

    def __init__(self, name: str, instructions: list[Instruction], labels: dict[str, int], lines: list[str]):
        self.name = name
        self.instructions = instructions
        self.labels = labels
        self.lines = lines

    @property
    def size_bytes(self) -> int:
        return 4 * len(self.instructions)

    def __len__(self) -> int:
        return len(self.instructions)
