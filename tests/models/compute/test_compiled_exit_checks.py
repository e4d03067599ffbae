"""The compiled cluster loop's exit checks (does a cycle need Python?) answer most cycles from
an instruction's encoded columns (compiled_layout._quiet); they must answer exactly as the
full checks would, in every state."""

import random

import numpy as np

from archmodel.models.compute import TCDM_BASE, assemble, compiled_cluster, compiled_fp
from archmodel.models.compute.compiled_layout import (C_CBASE, C_HALTED, C_IBASE, C_IP, C_IS_DMA, C_LDEPTH,
                                                      C_L_COUNT, C_NINS, C_Q_COUNT, C_SEQ_IT, C_SEQ_MASK,
                                                      C_SEQ_ON, C_SEQ_POS, C_SEQ_SMAX, C_SSR_ON, C_WIDTH, D_QDEPTH,
                                                      D_QLEN, D_WIDTH, G_TCDM_BASE, G_TCDM_END, G_WIDTH, I_FP_QUIET,
                                                      I_INT_QUIET, I_STREAMS_READ, S_ACTIVE, S_COUNT, S_DEPTH, S_HEAD,
                                                      S_WIDTH, S_WRITES, encode_programs)

FP_LINES = ["fmadd.d f8, ft0, ft1, f8", "fmadd.d ft2, ft0, ft1, f8", "fadd.d f8, ft0, ft0", "fdiv.d f8, f9, f10",
            "fdiv.d f8, ft0, ft1", "fsqrt.d f8, f9", "fld f8, 0(a0)", "fmul.d f8, f9, ft1", "fcvt.w.d a0, f8",
            "fadd.d f8, f9, f10", "fmsub.d f9, ft2, f3, ft0", "fmul.d ft1, ft2, f8", "fsgnj.d f4, ft1, ft2",
            "fadd.d f3, ft2, f3", "fmadd.d ft0, ft1, ft1, ft2", "fmadd.d f31, f30, f31, f29", "fadd.d f30, ft0, f31"]
# (the last two meet the stream registers in stagger copies: (register + copy) % 32)
INT_LINES = ["addi a0, a0, 1", "add a0, a1, a2", "div a0, a1, a2", "mulh a0, a1, a2", "mul a0, a1, a2", "lw a1, 0(a0)",
             "sw a1, 4(a0)", "jalr ra, a1, 0", "csrr a0, mhartid", "csrw mcycle, a0", "beq a0, a1, 1b",
             "fld f8, 0(a0)", "fsd f8, 8(a0)", "fadd.d f8, f9, f10", "frep.o a0, 1", "fmul.d f8, f9, f10", "nop",
             "fence", "ecall", "j 1b", "auipc a0, 1", "dmsrc a0, zero", "dmcpyi a0, a1, 0", "dmstati a0, 2"]


def _table(lines: list) -> np.ndarray:
    return encode_programs([type("Core", (), {"instrs": assemble("1:\n" + "\n".join(lines), "t.S").instructions})])[0]


def _python(function):
    return getattr(function, "py_func", function)  # (numba's dispatcher once the loop was compiled)


def test_the_quiet_columns_say_what_an_instruction_alone_tells_the_exit_checks():
    table = _table(FP_LINES[:10] + ["lw a1, 0(a0)", "frep.o a0, 1", "fadd.d f8, f8, f8", "ecall", "nop",
                                    "div a0, a0, a1", "addi a0, a0, 1"])
    assert table[:, I_FP_QUIET].tolist() == [1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    assert table[:, I_STREAMS_READ].tolist() == [3, 3, 1, 0, 3, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    assert table[:, I_INT_QUIET].tolist() == [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1]


def _fp_state(rng: random.Random, ninstr: int) -> tuple:
    cs = np.zeros((1, C_WIDTH), np.int64)
    replaying = rng.random() < 0.6
    cs[0, C_SEQ_ON] = replaying or rng.random() < 0.2
    cs[0, C_SEQ_IT] = rng.randrange(1, 5) if replaying else 0
    cs[0, C_SEQ_POS] = 0
    cs[0, C_SEQ_MASK] = rng.choice([0, 0, 0, 0b1001, 0b0110, 0b0001, 0b1111])
    cs[0, C_SEQ_SMAX] = rng.randrange(4)
    cs[0, C_Q_COUNT] = rng.randrange(2)
    cs[0, C_SSR_ON] = rng.random() < 0.8
    cs[0, C_HALTED] = rng.random() < 0.3
    body = np.array([[rng.randrange(ninstr)]], np.int64)
    oq = np.array([[[rng.randrange(ninstr), 0]]], np.int64)
    ss = np.zeros((3, S_WIDTH), np.int64)
    fq_ready = np.zeros((3, 4), np.int64)
    for s in range(3):
        ss[s, S_WRITES] = rng.random() < 0.3
        ss[s, S_ACTIVE] = rng.random() < 0.5
        ss[s, S_COUNT] = rng.randrange(3)
        ss[s, S_DEPTH] = 4
        ss[s, S_HEAD] = rng.randrange(4)
        fq_ready[s] = [rng.randrange(8) for _ in range(4)]
    f = np.array([[rng.choice([0.0, 1.5]) for _ in range(32)]])
    f_ready = np.array([[rng.randrange(8) for _ in range(32)]], np.int64)
    return cs, f, f_ready, body, oq, ss, fq_ready


def test_the_fp_exit_check_answers_as_its_full_checks_in_random_states():
    code = _table(["frep.o a0, 1"] + FP_LINES)
    full = code.copy()
    full[:, I_FP_QUIET] = 0  # every instruction through the full checks
    check = _python(compiled_fp._fp_would_exit)
    rng = random.Random(20)
    answers = []
    for _ in range(4000):
        cs, f, f_ready, body, oq, ss, fq_ready = _fp_state(rng, len(code))
        cycle = rng.randrange(8)
        quick = check(0, cycle, cs, code, f, f_ready, body, oq, ss, fq_ready)
        assert quick == check(0, cycle, cs, full, f, f_ready, body, oq, ss, fq_ready), (cs[0].tolist(), body, oq)
        answers.append(quick)
    assert 0.1 < sum(answers) / len(answers) < 0.9  # (both answers are asked)


def test_the_integer_exit_check_answers_as_its_full_checks_in_random_states():
    code = _table(INT_LINES)
    full = code.copy()
    full[:, I_INT_QUIET] = 0
    check = _python(compiled_cluster._int_would_exit)
    g = np.zeros(G_WIDTH, np.int64)
    g[G_TCDM_BASE], g[G_TCDM_END] = TCDM_BASE, TCDM_BASE + 0x2_0000
    rng = random.Random(20)
    answers = []
    for _ in range(3000):
        cs = np.zeros((1, C_WIDTH), np.int64)
        cs[0, C_IP], cs[0, C_NINS], cs[0, C_CBASE] = rng.randrange(len(code) + 1), len(code), 0
        cs[0, C_IBASE], cs[0, C_IS_DMA] = 0x100, rng.random() < 0.5
        cs[0, C_L_COUNT], cs[0, C_LDEPTH] = rng.randrange(3), 2
        x = np.array([[0] + [rng.choice([0, 4, 0x102, TCDM_BASE + 8, TCDM_BASE + 3, 2**40]) for _ in range(31)]],
                     np.int64)
        x_ready = np.array([[rng.randrange(4) for _ in range(32)]], np.int64)
        dm = np.zeros(D_WIDTH, np.int64)
        dm[D_QLEN], dm[D_QDEPTH] = rng.randrange(3), 2
        ss = np.zeros((3, S_WIDTH), np.int64)
        cycle = rng.randrange(4)
        quick = check(0, cycle, g, cs, code, x, x_ready, ss, dm)
        assert quick == check(0, cycle, g, cs, full, x, x_ready, ss, dm), (cs[0, C_IP], x[0].tolist())
        answers.append(quick)
    assert 0.1 < sum(answers) / len(answers) < 0.9


def test_the_table_holds_each_instructions_fields_in_their_columns():
    from archmodel.models.compute.compiled_layout import (I_FKIND, I_FLOPS, I_FP32, I_IMM, I_INNER, I_KIND, I_LAT,
                                                          I_NSRC, I_RD, I_RS1, I_RS2, I_RS3, I_SIGNED, I_SIZE, I_SMASK,
                                                          I_SMAX, I_TARGET, I_USES_IMM, I_XS1, I_XS2)
    lines = FP_LINES + INT_LINES + ["lb a0, -3(a1)", "lhu a0, 2(a1)", "csrw ssr0_bound1, a0", "frep.o a0, 1, 3, 0b1001",
                                    "fmadd.d f8, f9, f10, f8",
                                    "csrr a1, ssr0_stride0", "bne a0, zero, 1b", "fcvt.d.w f8, a0", "flw f8, 4(a0)"]
    instructions = assemble("1:\n" + "\n".join(lines), "t.S").instructions
    table = _table(lines)
    columns = {I_KIND: "kind", I_FKIND: "fkind", I_RD: "rd", I_RS1: "rs1", I_RS2: "rs2", I_RS3: "rs3", I_XS1: "xs1",
               I_XS2: "xs2", I_IMM: "imm", I_USES_IMM: "uses_imm", I_TARGET: "target", I_LAT: "latency",
               I_FLOPS: "flops", I_SIZE: "size", I_SIGNED: "signed", I_FP32: "fp32", I_INNER: "frep_inner",
               I_SMAX: "stagger_max", I_SMASK: "stagger_mask"}
    for k, ins in enumerate(instructions):
        assert {column: int(table[k, column]) for column in columns} == \
            {column: int(getattr(ins, name)) for column, name in columns.items()}, ins.text
        assert table[k, I_NSRC] == len(ins.fsrc)
