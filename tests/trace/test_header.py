"""The tracer's VCD header is pyvcd's, byte for byte: the same variables registered with
pyvcd's VCDWriter and with VcdHeader give the same text, identifiers and initial values."""

import io

import pytest
from vcd import VCDWriter
from vcd.common import VarType

from archmodel.trace.header import VcdHeader, identifier

# (scope, name, type, size, init): nested scopes given out of order, a scope next to a
# longer one of the same prefix, every kind of variable the tracer registers.
SIGNALS = [
    ("top.b", "count", VarType.reg, 3, 5),
    ("top", "flag", VarType.reg, 1, 1),
    ("top.a.out", "valid", VarType.wire, 1, 0),
    ("top.a.out", "occupancy", VarType.wire, 2, 3),
    ("top.a.out", "data", VarType.string, None, "a b\\c"),
    ("top.a", "level", VarType.real, None, 0.25),
    ("top.ab", "state", VarType.string, None, ""),
    ("other", "x", VarType.reg, 16, 40000),
]


def pyvcd_text(comment: str, signals, changes=(), final=None) -> str:
    stream = io.StringIO()
    writer = VCDWriter(stream, timescale="1 ps", date="", check_values=False, version="archmodel 9",
                       comment=comment, init_timestamp=7)
    made = [writer.register_var(scope, name, kind, size=size, init=init) for scope, name, kind, size, init in signals]
    for index, value in changes:
        writer.change(made[index], 7, value)
    writer.flush()
    if final is not None:
        writer.close(final)
    return stream.getvalue()


@pytest.mark.parametrize("comment", ["top top, seed 3", "two\nlines", ""])
def test_the_header_is_pyvcds(comment):
    header = VcdHeader(comment=comment, version="archmodel 9")
    made = [header.add(*signal) for signal in SIGNALS]
    # (a value given before the header is dumped, as pyvcd's change() at the first timestamp)
    made[0].value = 6
    made[4].value = "new"
    assert header.text(7) == pyvcd_text(comment, SIGNALS, [(0, 6), (4, "new")])
    assert [var.ident for var in made] == [identifier(n) for n in range(1, len(SIGNALS) + 1)]


def test_identifiers_are_pyvcds():
    stream = io.StringIO()
    writer = VCDWriter(stream, timescale="1 ps", date="")
    idents = [writer.register_var("top", f"v{n}", VarType.wire, size=1).ident for n in range(9000)]
    assert idents == [identifier(n) for n in range(1, 9001)]
    assert identifier(1) == "!" and identifier(94) == "~" and identifier(95) == "!!"


def test_a_header_without_variables_is_pyvcds():
    assert VcdHeader(version="archmodel 9").text(None) == pyvcd_text("", [])
    assert VcdHeader(version="archmodel 9").text(None) == (
        "$timescale 1 ps $end\n$version archmodel 9 $end\n$enddefinitions $end\n")


def test_a_name_twice_in_a_scope_is_refused_as_by_pyvcd():
    header = VcdHeader()
    header.add("top", "count", VarType.reg, 4, 0)
    header.add("top.count", "count", VarType.reg, 4, 0)  # (a scope of that name is another one)
    with pytest.raises(KeyError, match="Duplicate var count in scope top"):
        header.add("top", "count", VarType.wire, 1, 0)
