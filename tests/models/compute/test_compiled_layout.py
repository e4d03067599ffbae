"""How the compiled cluster loop lays out its state: each column of a row is one field."""

import pytest

from archmodel.models.compute import compiled_layout

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
