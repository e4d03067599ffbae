"""The tracer's own value-change lines are the lines pyvcd would write, and its memos stay bounded."""

import io
from types import SimpleNamespace

import pytest
from vcd import VCDWriter
from vcd.common import VarType

from archmodel.trace import lines
from archmodel.trace.lines import Memo, changed_lines, escaped_text, summarize_payload, wire_line


def variables(**specs):
    writer = VCDWriter(io.StringIO(), timescale="1 ps", date="")
    return {name: writer.register_var("top", name, kind, **args) for name, (kind, args) in specs.items()}


def test_string_texts_are_escaped_as_pyvcd_escapes_them():
    var = variables(data=(VarType.string, {"init": ""}))["data"]
    for text in ["", "plain", "two words", "tab\there", "line\nbreak\r", "back\\slash", "  lead"]:
        assert escaped_text(var, text) + f" {var.ident}" == var.format_value(text, False), text


@pytest.mark.parametrize("size", [1, 3, 10, 12])
def test_wire_lines_are_pyvcd_lines(size):
    var = variables(w=(VarType.wire, {"size": size, "init": 0}))["w"]
    line = wire_line(var)
    for value in sorted({0, 1, (1 << size) - 1, (1 << size) // 3}):
        assert line(value) == var.format_value(value, True) + "\n", value


def watched(handle, value, next_value, mask=0xFF):
    return SimpleNamespace(var=(handle, mask, lines.vector_memo(), f" {handle}\n"), value=value, next=next_value)


def test_changed_lines_skip_unchanged_and_unwatched_registers_and_truncate_to_the_width():
    regs = [watched(0, 1, 2), SimpleNamespace(var=None, value=0, next=5), watched(1, 7, 7), watched(2, 0, -1)]
    assert changed_lines(regs) == ["b10 0\n", "b11111111 2\n"]


def test_changed_lines_refuse_a_list_out_of_handle_order():
    assert changed_lines([watched(2, 0, 1), watched(1, 0, 1)]) is None
    # an unchanged register out of order does not count: it writes nothing
    assert changed_lines([watched(2, 0, 1), watched(1, 1, 1), watched(3, 0, 1)]) == ["b1 2\n", "b1 3\n"]


def test_a_memo_forgets_everything_past_its_limit(monkeypatch):
    monkeypatch.setattr(lines, "MEMO_LIMIT", 3)
    made = []
    memo = Memo(lambda value: made.append(value) or str(value))
    assert [memo[v] for v in (1, 2, 1, 3, 4, 5)] == ["1", "2", "1", "3", "4", "5"]
    assert made == [1, 2, 3, 4, 5] and len(memo) <= 4
    assert memo[1] == "1" and made[-1] == 1  # forgotten, made again


def test_numbers_are_summarized_as_their_text_and_cut_at_40_characters():
    assert summarize_payload(7) == "7" and summarize_payload(-0.5) == "-0.5"
    assert summarize_payload(10 ** 50) == "1" + "0" * 36 + "..."
    assert summarize_payload(True) == "True" and summarize_payload(None) == "None"
