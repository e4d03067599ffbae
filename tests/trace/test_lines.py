"""The tracer's own value-change lines are the lines pyvcd would write, and its memos stay bounded."""

import io
from types import SimpleNamespace

import pytest
from vcd import VCDWriter
from vcd.common import VarType

from archmodel.trace import lines
from archmodel.trace.lines import (RUN_AHEAD, BitsMemo, Memo, RealTexts, TextMemo, commit_changes, commit_ordered,
                                  commit_watched, escaped_text, in_handle_order, summarize_payload, text_of, wire_line)


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


# (what the tracer keeps of its watched registers, by the tail of their lines)
HANDLES: dict = {}
MAKES: dict = {}


def watched(handle, value, next_value, mask=0xFF):
    memo = BitsMemo(mask)
    tail = f" {handle}\n"
    HANDLES[tail], MAKES[tail] = handle, memo.make
    return SimpleNamespace(var=(memo.texts, tail), value=value, next=next_value, queued=True)


def looked_up(memo, value):
    return text_of(memo.texts, memo.make, value)


def lines_of(regs):
    given = []
    return joined(given) if commit_changes(regs, given, HANDLES, MAKES) is None else None


def joined(parts):
    return [first + second for first, second in zip(parts[::2], parts[1::2])]


def committed(reg):
    return reg.value is reg.next and reg.queued is False


def test_changed_lines_skip_unchanged_and_unwatched_registers_and_truncate_to_the_width():
    regs = [watched(0, 1, 2), SimpleNamespace(var=None, value=0, next=5, queued=True), watched(1, 7, 7),
            watched(2, 0, -1)]
    assert lines_of(regs) == ["b10 0\n", "b11111111 2\n"]
    assert all(committed(reg) for reg in regs)


def test_changed_lines_refuse_a_list_out_of_handle_order():
    regs = [watched(2, 0, 1), watched(1, 0, 1)]
    given = []
    assert commit_changes(regs, given, HANDLES, MAKES) is regs[1]
    assert joined(given) == ["b1 2\n"] and committed(regs[0]) and not committed(regs[1])
    # an unchanged register out of order does not count: it writes nothing
    assert lines_of([watched(2, 0, 1), watched(1, 1, 1), watched(3, 0, 1)]) == ["b1 2\n", "b1 3\n"]


def test_changed_lines_stop_before_a_value_no_memo_takes():
    regs = [watched(0, 0, 1), watched(1, 0, 0.5), watched(2, 0, 1)]
    given = []
    assert commit_changes(regs, given, HANDLES, MAKES) is regs[1]
    assert joined(given) == ["b1 0\n"] and committed(regs[0]) and not any(committed(reg) for reg in regs[1:])


def test_ordered_lines_are_the_checked_lines_of_a_list_in_handle_order():
    def design():
        return [watched(0, 1, 2), SimpleNamespace(var=None, value=0, next=5, queued=True), watched(1, 7, 7),
                watched(2, 0, -1)]
    checked, ordered, given = design(), design(), []
    assert in_handle_order(ordered, HANDLES)
    assert commit_ordered(ordered, given, MAKES) is None
    assert joined(given) == lines_of(checked) == ["b10 0\n", "b11111111 2\n"]
    assert all(committed(reg) for reg in ordered)


def test_ordered_lines_stop_before_a_value_no_memo_takes():
    regs = [watched(0, 0, 1), watched(1, 0, 0.5), watched(2, 0, 1)]
    given = []
    assert commit_ordered(regs, given, MAKES) is regs[1]
    assert joined(given) == ["b1 0\n"] and committed(regs[0]) and not any(committed(reg) for reg in regs[1:])


def test_watched_lines_are_the_ordered_lines_of_a_list_of_watched_registers():
    def design():
        return [watched(0, 1, 2), watched(1, 7, 7), watched(2, 0, -1), watched(3, 5, 300)]
    ordered, watched_only, given, given_watched = design(), design(), [], []
    assert commit_ordered(ordered, given, MAKES) is None and commit_watched(watched_only, given_watched, MAKES) is None
    assert joined(given_watched) == joined(given) == ["b10 0\n", "b11111111 2\n", "b101100 3\n"]
    assert all(committed(reg) for reg in watched_only)


def test_watched_lines_stop_at_an_unwatched_register_as_at_a_value_no_memo_takes():
    unwatched = SimpleNamespace(var=None, value=0, next=5, queued=True)
    regs = [watched(0, 0, 1), unwatched, watched(2, 0, 1)]
    given = []
    assert commit_watched(regs, given, MAKES) is unwatched
    assert joined(given) == ["b1 0\n"] and committed(regs[0]) and not any(committed(reg) for reg in regs[1:])
    regs = [watched(0, 0, 1), watched(1, 0, 0.5)]
    assert commit_watched(regs, [], MAKES) is regs[1] and not committed(regs[1])


def test_handle_order_counts_every_watched_register_changed_or_not():
    assert not in_handle_order([watched(2, 0, 1), watched(1, 1, 1)], HANDLES)  # (1 unchanged now, not always)
    unwatched = SimpleNamespace(var=None, value=0, next=0, queued=True)
    assert in_handle_order([watched(1, 0, 0), unwatched, watched(4, 0, 0)], HANDLES) and in_handle_order([unwatched], HANDLES)


@pytest.mark.parametrize("size", [1, 5, 32, 70])
def test_register_bits_are_pyvcd_lines_also_in_runs_of_new_values(size):
    var = variables(r=(VarType.reg, {"size": size, "init": 0}))["r"]
    memo, mask = BitsMemo((1 << size) - 1), (1 << size) - 1
    tail = f"{var.ident}" if size == 1 else f" {var.ident}"
    # counting up (runs made ahead), wrapping past the width, negative, then jumping about
    values = list(range(3 * RUN_AHEAD)) + [mask, mask + 1, -1, -5, 1 << 80, 12345, 7, True, False]
    for value in values:
        assert looked_up(memo, value) + tail == var.format_value(value & mask, True), value
    with pytest.raises(TypeError):
        looked_up(memo, 0.5)
    with pytest.raises(TypeError):
        looked_up(memo, "idle")


def test_string_and_real_texts_are_pyvcd_lines_and_never_mix_equal_values():
    found = variables(s=(VarType.string, {"init": ""}), r=(VarType.real, {"init": 0.0}))
    strings, reals = TextMemo(found["s"]), RealTexts(found["r"])
    for value in ["idle", "two words", "tab\there", 1, True, 1.0, None, (1, "a")]:
        line = looked_up(strings, value) + f" {found['s'].ident}"
        assert line == found["s"].format_value(lines.ascii_text(str(value)), True)
    assert list(strings.texts) == ["idle", "two words", "tab\there"]  # only str values are kept
    for value in [0.0, -0.0, 1, True, 2.5, 1e-300]:
        assert looked_up(reals, value) + f" {found['r'].ident}" == found["r"].format_value(value, True), value
        assert reals.texts[value] == looked_up(reals, value)  # (never a KeyError)
    assert not reals
    with pytest.raises(ValueError):
        looked_up(reals, "busy")


def test_a_memo_forgets_everything_past_its_limit(monkeypatch):
    monkeypatch.setattr(lines, "MEMO_LIMIT", 3)
    made = []
    memo = Memo(lambda value: made.append(value) or str(value))
    assert [looked_up(memo, v) for v in (1, 2, 1, 3, 4, 5)] == ["1", "2", "1", "3", "4", "5"]
    assert made == [1, 2, 3, 4, 5] and len(memo.texts) <= 4
    assert looked_up(memo, 1) == "1" and made[-1] == 1  # forgotten, made again


def test_numbers_are_summarized_as_their_text_and_cut_at_40_characters():
    assert summarize_payload(7) == "7" and summarize_payload(-0.5) == "-0.5"
    assert summarize_payload(10 ** 50) == "1" + "0" * 36 + "..."
    assert summarize_payload(True) == "True" and summarize_payload(None) == "None"


@pytest.mark.parametrize("size", [9, 16])
def test_register_bits_become_a_table_once_a_64th_of_the_values_were_made(size):
    var = variables(r=(VarType.reg, {"size": size, "init": 0}))["r"]
    mask = (1 << size) - 1
    tables = []
    memo = BitsMemo(mask, tables.append)
    held = memo.texts
    made = [value * 7 for value in range((mask + 1) >> 6)]  # (no runs: one miss each)
    for value in made[:-1]:
        looked_up(memo, value)
    assert tables == [] and isinstance(memo.texts, dict)
    looked_up(memo, made[-1])
    assert tables == [memo] and isinstance(memo.texts, list) and len(memo.texts) == mask + 1
    # a table gives negative values their two's complement, makes values beyond it, and finds
    # an integral float as the int it equals (every value of the width being made)
    for value in [0, 1, mask, mask + 1, -1, -mask - 1, -mask - 2, 1 << 80, True, 3.0, -2.0]:
        assert looked_up(memo, value) + f" {var.ident}" == var.format_value(int(value) & mask, True), value
    with pytest.raises(TypeError):
        looked_up(memo, 0.5)
    with pytest.raises(TypeError):
        looked_up(memo, "idle")
    # whoever still holds the dict (a loop, to the end of its edge) finds the values it held
    assert held[made[1]] == f"b{made[1]:b}" and memo.make(made[1] + 1) == f"b{made[1] + 1:b}"


@pytest.mark.parametrize("bits", [1, 2, 8, 13])
def test_a_table_holds_the_bits_of_every_value_in_order(bits):
    table = lines.bit_table(bits)
    assert table == ([f"b{value:b}" for value in range(1 << bits)] if bits > 1 else ["0", "1"])


def test_narrow_registers_have_a_table_at_once():
    assert BitsMemo(1).texts == ["0", "1"] and len(BitsMemo(0xFF).texts) == 256
    assert BitsMemo(0x1FF).texts == {} and BitsMemo((1 << 17) - 1).texts == {}
