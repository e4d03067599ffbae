import pytest

from archmodel.kernel import ArchError
from archmodel.models.compute import AssemblyError, assemble
from archmodel.models.compute.assembler import F_COMP, F_LOAD, K_BRANCH, K_CSR, K_FP, K_FREP


def error_text(source: str) -> str:
    with pytest.raises(AssemblyError) as info:
        assemble(source, "k.S")
    assert isinstance(info.value, ArchError)
    return str(info.value)


def test_labels_local_labels_and_pseudo_instructions_resolve():
    program = assemble("start:\n  li t0, 3\n1: addi t0, t0, -1\n  bnez t0, 1b\n  j start\n  ecall\n", "k.S")
    ops = [(i.op, i.target) for i in program.instructions]
    assert ops == [("addi", -1), ("addi", -1), ("bne", 1), ("jal", 0), ("ecall", -1)]
    assert program.labels == {"start": 0}
    assert program.instructions[2].kind == K_BRANCH


def test_li_of_a_large_constant_becomes_lui_and_addi():
    program = assemble("li a0, 0x10000804\n", "k.S")
    lui, addi = program.instructions
    assert (lui.op, lui.imm, addi.op, addi.imm) == ("lui", 0x10001000, "addi", -2044)


def test_fp_instructions_and_csrs_are_classified():
    program = assemble("fld ft3, 8(a0)\nfmadd.d fa0, ft0, ft1, fa0\ncsrw ssr0_bound0, t0\nfrep.o t0, 1, 3, 0b1001\n"
                       "fadd.d fa0, ft0, fa0\n.equ N, 4\naddi t0, zero, N\n", "k.S")
    fld, fmadd, csr, frep, _, addi = program.instructions
    assert (fld.kind, fld.fkind, fld.imm, fld.rs1) == (K_FP, F_LOAD, 8, 10)
    assert (fmadd.fkind, fmadd.fsrc, fmadd.latency, fmadd.flops) == (F_COMP, (0, 1, 10), 3, 2)
    assert (csr.kind, csr.csr) == (K_CSR, "ssr0_bound0")
    assert (frep.kind, frep.imm, frep.stagger_max, frep.stagger_mask) == (K_FREP, 1, 3, 9)
    assert addi.imm == 4


def test_unknown_instruction_points_at_it_with_a_suggestion():
    assert error_text("  li t0, 1\n  fmad.d fa0, ft0, ft1, fa0\n") == (
        "k.S:2:3: error: unknown instruction 'fmad.d'\n"
        "  fmad.d fa0, ft0, ft1, fa0\n"
        "  ^^^^^^\n"
        "hint: did you mean 'fmadd.d'?")


def test_immediate_out_of_range_is_underlined():
    assert error_text("addi a0, a0, 5000\n") == (
        "k.S:1:14: error: immediate 5000 does not fit in 12 bits (-2048 .. 2047)\n"
        "addi a0, a0, 5000\n"
        "             ^^^^\n"
        "hint: load a large constant with li into a register")


def test_wrong_register_class_and_undefined_label():
    assert error_text("fadd.d fa0, t0, fa1\n").splitlines()[0] == "k.S:1:13: error: 't0' is not an FP register"
    assert "hint: that is an integer register" in error_text("fadd.d fa0, t0, fa1\n")
    assert error_text("loop:\n  bnez t0, lop\n").splitlines()[::3] == [
        "k.S:2:12: error: undefined label 'lop'", "hint: did you mean 'loop'?"]


def test_frep_body_must_be_fp_computations_within_the_buffer():
    text = error_text("frep.o t0, 2\nfmadd.d fa0, ft0, ft1, fa0\naddi t0, t0, 1\n")
    assert text.splitlines()[0] == "k.S:3:1: error: 'addi' cannot be repeated by frep (the body must be FP computations)"
    assert error_text("frep.o t0, 17\n").splitlines()[0] == (
        "k.S:1:12: error: frep repeats 1 to 16 instructions (the sequencer's buffer), got 17")


def test_operand_count_unknown_csr_and_data_directives():
    assert error_text("add a0, a1\n").splitlines()[0] == "k.S:1:1: error: 'add' takes 3 operands, got 2"
    assert error_text("csrw ssr3_bound0, t0\n").splitlines()[0] == "k.S:1:6: error: unknown CSR 'ssr3_bound0'"
    assert error_text(".word 5\n").splitlines()[0] == "k.S:1:1: error: directive '.word' is not supported"
