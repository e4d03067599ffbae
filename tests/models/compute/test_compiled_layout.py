"""How the compiled cluster loop lays out its state: each column of a row is one field, and a
program's instruction table holds its instructions' fields."""

import pytest

from archmodel.models.compute import assemble, compiled_layout
from archmodel.models.compute.isa import OPS, code

WIDE = {"S_IDX": 4, "S_BOUNDS": 4, "S_ADJ": 4, "S_CFGB": 4, "S_CFGS": 4, "S_JB": 4, "S_JS": 4,
        "S_IQ_READY": compiled_layout.S_IQ_DEPTH, "S_IQ_WORD": compiled_layout.S_IQ_DEPTH}
"""The columns that are groups (their first column is named)."""


@pytest.mark.parametrize("prefix", ["I_", "C_", "S_", "G_", "D_"])
def test_each_column_of_a_row_is_one_field_and_lies_inside_the_row(prefix):
    names = [name for name in vars(compiled_layout) if name.startswith(prefix) and name != prefix + "WIDTH"
             and isinstance(getattr(compiled_layout, name), int) and not name.startswith("S_IQ_DEPTH")]
    width = getattr(compiled_layout, prefix + "WIDTH")
    taken: dict = {}
    for name in names:
        first = getattr(compiled_layout, name)
        for column in range(first, first + WIDE.get(name, 1)):
            assert column not in taken, f"{name} and {taken.get(column)} share column {column}"
            taken[column] = name
    assert len(names) > 10 and min(taken) == 0 and max(taken) < width, (min(taken), max(taken), width)


LINES = ["addi a0, a0, -5", "add a0, a1, a2", "div a0, a1, a2", "mulh a0, a1, a2", "lw a1, -4(a0)", "sb a1, 3(a0)",
         "lbu a2, 1(a0)", "jalr ra, a1, 0", "csrr a0, mhartid", "csrw ssr, a0", "csrrsi a0, mcycle, 0", "beq a0, a1, 1b",
         "fld f8, 0(a0)", "fsd f8, 8(a0)", "flw f8, 4(a0)", "fmadd.d f8, ft0, ft1, f8", "fadd.s f8, f9, f10",
         "fdiv.d f8, ft0, ft1", "fcvt.w.d a0, f8", "fcvt.d.w f8, a0", "frep.o a0, 1, 3, 5", "fmul.d f8, f9, f10",
         "nop", "fence", "ecall", "j 1b", "auipc a0, 1", "dmsrc a0, zero", "dmstr a0, a1", "dmcpyi a0, a1, 2",
         "dmstati a0, 2"]
COLUMNS = {"I_KIND": "kind", "I_FKIND": "fkind", "I_RD": "rd", "I_RS1": "rs1", "I_RS2": "rs2", "I_RS3": "rs3",
           "I_XS1": "xs1", "I_XS2": "xs2", "I_IMM": "imm", "I_USES_IMM": "uses_imm", "I_TARGET": "target",
           "I_LAT": "latency", "I_FLOPS": "flops", "I_SIZE": "size", "I_SIGNED": "signed", "I_FP32": "fp32",
           "I_INNER": "frep_inner", "I_SMAX": "stagger_max", "I_SMASK": "stagger_mask"}
"""The instruction table's columns that hold an instruction's attribute as it is."""


def test_a_programs_rows_hold_its_instructions_fields_in_their_columns():
    # (compiled_layout._encode packs each instruction's fields as bytes; a column out of its
    # place, or a field packed into its neighbour's, shows here)
    instructions = assemble("1:\n" + "\n".join(LINES), "t.S").instructions
    table, objects, bases = compiled_layout.encode_programs([type("Core", (), {"instrs": instructions})] * 2)
    assert objects == instructions and bases == [0, 0] and table.shape == (len(LINES), compiled_layout.I_WIDTH)
    for row, ins in zip(table.tolist(), instructions):
        for column, field in COLUMNS.items():
            assert row[getattr(compiled_layout, column)] == int(getattr(ins, field)), (ins, column)
        assert row[compiled_layout.I_NSRC] == len(ins.fsrc), ins
        assert row[compiled_layout.I_OP] == (OPS[ins.op].code if ins.op in OPS else row[compiled_layout.I_OP]), ins
    op, csr_op, which = (table[:, getattr(compiled_layout, name)].tolist() for name in ("I_OP", "I_CSR_OP", "I_CSR"))
    assert [op[k] for k in (2, 3, 26, 27, 28, 29, 30)] == [code("div"), code("mulh"), compiled_layout._AUIPC,
                                                          compiled_layout._DMSRC, compiled_layout._DMSTR,
                                                          compiled_layout._DMCPY, compiled_layout._DMSTAT]
    assert [csr_op[k] for k in (8, 9, 10)] == [compiled_layout._CSR_SET, compiled_layout._CSR_WRITE,
                                               compiled_layout._CSR_SET]
    assert [which[k] for k in (8, 10)] == [compiled_layout._MHARTID, compiled_layout._MCYCLE]


def test_clusters_loading_the_same_program_encode_it_once(monkeypatch):
    # (the clusters of a system running one kernel load the same compute program and each
    # its own DMA program: the shared one is encoded for the first cluster only)
    encodings = []
    encode = compiled_layout._encode
    monkeypatch.setattr(compiled_layout, "_encode", lambda instructions: encodings.append(len(instructions)) or
                        encode(instructions))
    compute = assemble("1:\n" + "\n".join(LINES), "t.S").instructions
    dma_a, dma_b = (assemble(f"li a0, {address}\ndmsrc a0, zero\necall\n", "dma.S").instructions
                    for address in (64, 128))
    first = compiled_layout.encode_programs([type("Core", (), {"instrs": ins}) for ins in (compute, compute, dma_a)])
    second = compiled_layout.encode_programs([type("Core", (), {"instrs": ins}) for ins in (compute, compute, dma_b)])
    assert encodings == [len(compute), len(dma_a), len(dma_b)]
    assert first[2] == second[2] == [0, 0, len(compute)]
    assert (first[0][:len(compute)] == second[0][:len(compute)]).all()
    assert (first[0][len(compute):] != second[0][len(compute):]).any()  # (the DMA programs' addresses differ)
    assert compiled_layout.encoded(compute) is compiled_layout.encoded(compute)


def test_the_compiled_loop_leaves_a_shared_encoding_as_it_was():
    # (the rows of a program are shared by every cluster that loads it: no batch may write them)
    from archmodel.workloads.snitch import run_kernel

    _, cluster = run_kernel("gemm", m=16, n=16, k=8, streamed=True, cluster_params={"engine": "compiled"})
    assert cluster.n_compiled_cycles > 0
    for core in cluster.core_list:
        fresh = compiled_layout._encode(core.instrs)
        compiled_layout._quiet(fresh)
        assert (compiled_layout.encoded(core.instrs) == fresh).all()


def test_the_shared_encodings_kept_are_bounded_the_least_recently_used_going_first():
    lists = [assemble(f"li a0, {k}\necall\n", "t.S").instructions for k in range(compiled_layout.ENCODED_KEPT + 1)]
    first = compiled_layout.encoded(lists[0])
    for instructions in lists[1:]:
        compiled_layout.encoded(lists[0])  # (used again: it stays)
        compiled_layout.encoded(instructions)
    assert len(compiled_layout._ENCODED) == compiled_layout.ENCODED_KEPT
    assert compiled_layout.encoded(lists[0]) is first
    assert id(lists[1]) not in compiled_layout._ENCODED
