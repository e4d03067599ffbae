"""The ISA table is the one source of every instruction that computes.

Every mnemonic of ``isa.OPS`` is assembled with the table's kind, latency, flops and
function and encoded with the table's opcode; the compiled dispatches compute every opcode
as the Python model does, bit for bit, on random operands; every FP mnemonic runs on a
whole cluster with the same results on either engine; a row without semantics, or an engine
without one of the primitives, is refused when it is built.
"""

import hashlib
import math
import random
import struct

import pytest

from archmodel.kernel import Simulator
from archmodel.models import messages
from archmodel.models.compute import TCDM_BASE, SnitchCluster, assemble
from archmodel.models.compute import (assembler, compiled_cluster, compiled_cluster_memory, compiled_dma,
                                     compiled_fp, compiled_layout, compiled_ops, isa)
from archmodel.models.compute.compiled_layout import I_OP, _encode
from archmodel.models.compute.isa import FP_OPS, OPS, IsaError, Op, s32

SPECIALS = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, math.nan]
EXTREMES = [1e300, 3.4e38, 1e39, -3e-310, 1e-40]  # FP32 overflows and underflows, FP64 subnormals


def operand_triples(seed: int, count: int, fp32_range: bool = False) -> list:
    """Random operands with the IEEE special values among them; ``fp32_range``: no result
    of an operation on them leaves FP32's range, else of every FP64 magnitude."""
    rng = random.Random(seed)
    specials = SPECIALS if fp32_range else SPECIALS + EXTREMES
    exponent = 15 if fp32_range else 300
    out = []
    for _ in range(count):
        out.append(tuple(rng.choice(specials) if rng.random() < 0.3
                         else rng.choice([-1, 1]) * rng.uniform(0.5, 2.0) * 10.0 ** rng.randint(-exponent, exponent)
                         for _ in range(3)))
    return out


def rounds(row: Op) -> bool:
    return row.fp32 or "round32" in row.semantics


def bits(v: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", v))[0]


def same(a: float, b: float) -> bool:
    """Bit for bit, except that any NaN equals any NaN (the model keeps no NaN payloads)."""
    return (a != a and b != b) or bits(a) == bits(b)


OPERAND_TEXT = {"d": "a3", "s": "a0", "t": "a1", "D": "fa3", "S": "fa0", "T": "fa1", "R": "fa2", "i": "5", "l": "here"}


@pytest.mark.parametrize("mnemonic", sorted(OPS))
def test_the_assembler_and_the_encoder_take_everything_from_the_table(mnemonic):
    row = OPS[mnemonic]
    operands = ", ".join(OPERAND_TEXT[letter] for letter in row.pattern)
    ins = assemble(f"here: {mnemonic} {operands}\n").instructions[0]
    assert (ins.kind, ins.fkind, ins.latency, ins.flops, ins.fp32, ins.fn, len(ins.fsrc)) == \
        (row.kind, row.fkind, row.latency, row.flops, row.fp32, row.python, row.operands)
    assert _encode([ins])[0, I_OP] == row.code


def integer_operands(seed: int, count: int) -> list:
    """Pairs of register values: 32-bit edges and random words (signed, as registers hold them)."""
    rng = random.Random(seed)
    edges = [0, 1, -1, 2, 31, 32, 33, -2**31, 2**31 - 1, 0x1234_5678, -7]
    return [tuple(rng.choice(edges) if rng.random() < 0.4 else s32(rng.getrandbits(32)) for _ in range(2))
            for _ in range(count)]


@pytest.mark.parametrize("group, dispatch", [("alu", "_alu"), ("mul", "_mul"), ("branch", "_branch")])
def test_the_compiled_integer_dispatches_compute_every_opcode_as_the_python_model_does(group, dispatch):
    compiled_cluster._compiled_cluster_cycles()  # the helpers are numba's now
    fn = getattr(compiled_ops, dispatch)
    assert hasattr(fn, "signatures"), "the dispatch was not compiled by numba"
    for mnemonic, row in OPS.items():
        if row.group != group:
            continue
        for a, b in integer_operands(sum(map(ord, mnemonic)), 300):
            want, got = row.python(a, b), fn(row.code, a, b)
            if group != "branch":  # the core keeps the low 32 bits
                want, got = s32(want), s32(int(got))
            assert want == got, f"{mnemonic}({a}, {b}): compiled {got}, Python {want}"


def test_the_compiled_conversions_compute_every_opcode_as_the_python_model_does():
    compiled_cluster._compiled_cluster_cycles()
    for mnemonic, row in OPS.items():
        if row.group == "toint":
            for a, b, _ in operand_triples(sum(map(ord, mnemonic)), 300) + [(2.5, 0, 0), (-3.5, 0, 0), (4e9, 0, 0)]:
                want = row.python(*(a, b)[:row.operands])
                assert want == compiled_ops._to_int(row.code, a, b), f"{mnemonic}({a!r}, {b!r})"
        elif row.group == "fromint":
            for a, _ in integer_operands(sum(map(ord, mnemonic)), 300):
                assert same(row.python(a), compiled_ops._from_int(row.code, a)), f"{mnemonic}({a})"


def test_the_compiled_dispatch_computes_every_opcode_as_the_python_model_does():
    compiled_cluster._compiled_cluster_cycles()  # the helpers, _fp among them, are numba's now
    fp = compiled_ops._fp
    assert hasattr(fp, "signatures"), "the dispatch was not compiled by numba"
    for mnemonic, row in FP_OPS.items():
        if not row.compiled:
            continue
        for a, b, c in operand_triples(sum(map(ord, mnemonic)), 300, rounds(row)):
            if mnemonic.startswith("fdiv") and b == 0:
                continue  # the loop hands a zero divisor to Python (_fp_would_exit)
            want = row.python(*(a, b, c)[:row.operands])
            got = fp(row.code, a, b, c, row.fp32)
            assert same(got, want), f"{mnemonic}({a!r}, {b!r}, {c!r}): compiled {got!r}, Python {want!r}"


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_every_fp_mnemonic_runs_on_a_cluster_as_the_table_says(engine):
    triples = operand_triples(7, 6, fp32_range=True)
    mnemonics = sorted(FP_OPS)
    lines = [f"li a0, {TCDM_BASE}", f"li a1, {TCDM_BASE + 1024}"]
    for m, mnemonic in enumerate(mnemonics):
        row = FP_OPS[mnemonic]
        for k in range(len(triples)):
            lines += [f"fld fa0, {24 * k}(a0)", f"fld fa1, {24 * k + 8}(a0)", f"fld fa2, {24 * k + 16}(a0)",
                      f"{mnemonic} fa3, " + ", ".join(["fa0", "fa1", "fa2"][:row.operands]),
                      f"fsd fa3, {8 * (m * len(triples) + k)}(a1)"]
    cluster = SnitchCluster("cl", cores=1, icache_miss_cycles=0, engine=engine)
    cluster.tcdm_array(TCDM_BASE, (len(triples), 3))[:] = triples
    cluster.load_programs([assemble("\n".join(lines + ["fence", "ecall"]) + "\n", "isa.S")])
    Simulator(cluster).run()
    got = cluster.tcdm_array(TCDM_BASE + 1024, (len(mnemonics), len(triples))).tolist()
    for m, mnemonic in enumerate(mnemonics):
        row = FP_OPS[mnemonic]
        for k, operands in enumerate(triples):
            want = row.python(*operands[:row.operands])
            assert same(got[m][k], want), f"{engine} {mnemonic}{operands[:row.operands]}: {got[m][k]!r}, not {want!r}"
    if engine == "compiled":
        assert cluster.n_compiled_cycles > 0


def test_an_fp32_overflow_rounds_the_same_in_both_engines():
    # IEEE round to nearest: 1e60 is beyond FP32's range, so the product is an infinity
    compiled_cluster._compiled_cluster_cycles()
    row = FP_OPS["fmul.s"]
    assert same(compiled_ops._fp(row.code, 1e30, 1e30, 0.0, True), row.python(1e30, 1e30))
    assert row.python(1e30, 1e30) == float("inf") and row.python(-1e30, 1e30) == float("-inf")


def test_a_row_without_semantics_is_refused():
    with pytest.raises(IsaError, match="'fnew.d' has no semantics"):
        Op("fp", "fnew.d", "DST", "", 1, 1)
    with pytest.raises(IsaError, match=r"reads 2 operand\(s\) but its semantics '\{0\} \* 2.0' uses \[0\]"):
        Op("fp", "fnew.d", "DST", "{0} * 2.0", 1, 1)
    with pytest.raises(IsaError, match=r"reads 2 operand\(s\) but its semantics '\{0\} \+ \{2\}' uses \[0, 2\]"):
        Op("alu", "new", "dst", "{0} + {2}")
    with pytest.raises(IsaError, match=r"calls \['fhypot'\], which is not one of the primitives"):
        Op("fp", "fnew.d", "DST", "fhypot({0}, {1})", 1, 1)
    with pytest.raises(IsaError, match=r"'new': unknown group 'vector'"):
        Op("vector", "new", "dst", "{0} + {1}")
    with pytest.raises(IsaError, match="'fadd.d' is in the table twice"):
        isa._number([Op("fp", "fadd.d", "DST", "{0} + {1}", 3, 1), Op("fp", "fadd.d", "DST", "{0} + {1}", 3, 1)])


def test_a_new_row_is_all_an_engine_needs_and_a_missing_primitive_is_refused():
    rows = list(isa._number([*OPS.values(), Op("fp", "fhalf.d", "DS", "{0} * 0.5", 1, 1)]).values())
    new = rows[-1]
    assert new.code == max(row.code for row in rows[:-1] if row.group == "fp") + 1
    assert new.python(3.0) == 1.5 and new.inline == "{0} * 0.5"
    namespace = {name: getattr(isa, name) for name in isa.PRIMITIVES}
    dispatch = isa.define_dispatch("fp", namespace, "fp", rows)
    assert dispatch(new.code, 3.0, 0.0, 0.0, False) == 1.5
    assert dispatch(FP_OPS["fmadd.s"].code, 1.1, 1.3, 0.7, True) == FP_OPS["fmadd.s"].python(1.1, 1.3, 0.7)
    del namespace["copysign"]
    with pytest.raises(IsaError, match=r"has no implementation of \['copysign'\]"):
        isa.define_dispatch("fp", namespace, "fp", rows)


def test_the_compiled_loop_is_cached_under_the_table_it_was_built_from():
    # the table, the instruction kinds and the loop's parts outside compiled_cluster.py (whose
    # own source numba keys the cache by), and the messages (a request's control bits)
    digest = hashlib.sha256()
    for module in (isa, assembler, compiled_layout, messages, compiled_ops, compiled_fp, compiled_cluster_memory,
                   compiled_dma):
        digest.update(open(module.__file__, "rb").read())
    entry = compiled_cluster._compiled_cluster_cycles().py_func
    assert [cell.cell_contents for cell in entry.__closure__] == [digest.hexdigest()]
