"""How the compiled cluster loop lays out its state: columns that do not overlap, the two
blocks a Resident packs its arrays into, and the division-free ring helpers (which must be
Python's ``%`` for every value)."""

import pytest

from archmodel.kernel import Simulator
from archmodel.models.compute import compiled_cluster, compiled_layout, compiled_ops
from archmodel.models.compute.compiled_state import _PARTS, Resident
from archmodel.workloads.snitch import SETUPS, build_system

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


def test_rows_of_the_instruction_table_and_the_streamers_are_whole_cache_lines():
    assert compiled_layout.I_WIDTH % compiled_layout.LINE == 0
    assert compiled_layout.S_WIDTH % compiled_layout.LINE == 0
    # what every cycle asks of a streamer lies in its row's first line
    for name in ("S_WRITES", "S_ACTIVE", "S_JOB_WRITES", "S_IND", "S_COUNT", "S_HEAD", "S_DEPTH", "S_RID"):
        assert getattr(compiled_layout, name) < compiled_layout.LINE, name


def _resident() -> Resident:
    top = build_system()
    cluster = top.child("cluster")
    SETUPS["gemm"](cluster, top.child("memory"), m=16, n=16, k=16)
    Simulator(top).run(cycles=300)  # (settled at the run's end: the objects hold the state)
    return Resident(cluster)


def test_a_residents_arrays_are_views_of_its_two_blocks_each_on_lines_of_its_own():
    resident = _resident()
    ints, floats = resident.ints, resident.floats
    assert ints.ctypes.data % 64 == 0 and floats.ctypes.data % 64 == 0
    assert resident.programs.table.ctypes.data % 64 == 0
    spans = {0: [], 1: []}
    for p, name in enumerate(_PARTS):
        part = getattr(resident, name)
        block = floats if p >= compiled_layout.P_FLOATS else ints
        assert part.dtype == block.dtype and part.flags.c_contiguous, name
        offset = (part.ctypes.data - block.ctypes.data) // 8
        assert part.ctypes.data % 64 == 0 and 0 <= offset and offset + part.size <= block.size, name
        assert ints[4 * p:4 * p + 1 + part.ndim].tolist() == [offset, *part.shape], name
        spans[int(block is floats)].append((offset, offset + part.size, name))
    for which, found in spans.items():
        found.sort()
        if which == 0:
            assert found[0][0] >= compiled_layout.P_HEADER  # (the head holds the offsets and shapes)
        for (_, end, name), (start, _, after) in zip(found, found[1:]):
            assert end <= start, f"{name} overlaps {after}"
    # a write through an attribute is a write into the block the loop gets
    resident.cs[0, compiled_layout.C_S_RAW] += 12345
    offset = ints[4 * compiled_layout.P_CS]
    assert ints[offset + compiled_layout.C_S_RAW] == resident.cs[0, compiled_layout.C_S_RAW]
    resident.f[1, 2] = 0.5
    assert floats[ints[4 * compiled_layout.P_F] + 32 + 2] == 0.5


def test_the_loop_takes_the_state_in_two_blocks():
    resident = _resident()
    arguments = resident._arrays()[4]
    assert arguments[0] is resident.ints and arguments[1] is resident.floats and len(arguments) == 13


@pytest.mark.parametrize("compiled", [False, True])
def test_the_ring_helpers_are_pythons_modulo_for_every_value(compiled):
    if compiled:
        compiled_cluster._compiled_cluster_cycles()  # the helpers are numba's now
    wrap, stagger, bank = compiled_ops._wrap, compiled_ops._stagger_copy, compiled_ops._bank
    for n in (1, 2, 3, 5, 8, 44):
        for v in list(range(-3 * n - 2, 3 * n + 3)) + [10**12 + 7, -10**12 - 7]:
            assert wrap(v, n) == v % n, (v, n)
    for smax in range(4):
        for it in (0, 1, 2, 3, 7, 10**9 + 1):
            assert stagger(it, smax) == it % (smax + 1), (it, smax)
    for banks in (1, 2, 3, 12, 32, 48, 64):
        mask = banks - 1 if banks & (banks - 1) == 0 else -1
        for offset in list(range(-64, 600, 8)) + [2**20 + 8, 2**31 - 8]:
            assert bank(offset, banks, mask) == (offset >> 3) % banks, (offset, banks)
