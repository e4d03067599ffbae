"""Value-change lines of a VCD, formatted as pyvcd formats them, and payload summaries.

pyvcd writes the header and the initial values. After that one ``VCDWriter.change()`` call
per change costs several times the simulation, so the tracer writes the lines itself: the
parts of each signal's line are made once, when it is selected, and the bits or text of a
value seen before are looked up rather than formatted again.
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable

from vcd.writer import Variable

DATA_CHARS = 40
# Texts remembered per value: designs mostly hold recurring values (counters, states, tokens).
MEMO_LIMIT = 1 << 16

_short_repr = reprlib.Repr()
_short_repr.maxstring = DATA_CHARS
_short_repr.maxother = DATA_CHARS
_short_repr.maxlist = _short_repr.maxtuple = _short_repr.maxdict = 4
_short_repr.maxlevel = 2


def summarize_payload(message: Any) -> str:
    """A short text for a channel payload (at most 40 characters), for the ``data`` signal."""
    kind = type(message)
    if kind is int or kind is float:
        # The commonest payload of small designs, and its digits are ASCII already.
        text = str(message)
        return text if len(text) <= DATA_CHARS else text[:DATA_CHARS - 3] + "..."
    if isinstance(message, str):
        text = message
    elif isinstance(message, (int, float)) or message is None:
        text = str(message)
    else:
        text = _short_repr.repr(message)
    if len(text) > DATA_CHARS:
        text = text[:DATA_CHARS - 3] + "..."
    return ascii_text(text)


def ascii_text(text: str) -> str:
    """``text`` with anything outside ASCII escaped (VCD is ASCII: pyvcd's reader decodes it so)."""
    return text if text.isascii() else text.encode("ascii", "backslashreplace").decode("ascii")


class Memo(dict):
    """Texts by value, made by ``make`` the first time a value is looked up, and forgotten
    all at once past :data:`MEMO_LIMIT` entries so that ever new values do not grow it."""

    def __init__(self, make: Callable[[Any], str]):
        super().__init__()
        self.make = make

    def __missing__(self, key: Any) -> str:
        if len(self) > MEMO_LIMIT:
            self.clear()
        text = self[key] = self.make(key)
        return text


SCALAR_BITS = {0: "0", 1: "1"}


def vector_memo() -> Memo:
    """``b`` and the binary digits of a value, for vector variables."""
    return Memo(lambda value: f"b{value:b}")


def text_line(var: Variable, mask: int | None) -> Callable[[Any], str]:
    """The value-change line of a real (``mask`` None) or string register for a value; values
    of the wrong type raise TypeError or ValueError."""
    format_value = var.format_value
    if mask is None:
        return lambda value: format_value(value, True) + "\n"
    return lambda value: format_value(ascii_text(str(value)), True) + "\n"


def escaped_text(var: Variable, text: str) -> str:
    """``s`` and ``text`` escaped as pyvcd escapes the value of the string variable ``var``
    (the same for every string variable: the line is this, a space and the identifier)."""
    line = var.format_value(text, False)
    return line[:len(line) - len(var.ident) - 1]


def wire_line(var: Variable) -> Callable[[int], str]:
    """The value-change line of the scalar or vector wire ``var`` for a non-negative value;
    a small vector's lines are made once and looked up."""
    ident, size = var.ident, var.size
    assert isinstance(size, int), "a wire of one size"
    if size == 1:
        return (f"0{ident}\n", f"1{ident}\n").__getitem__
    if size <= 10:
        return [f"b{value:b} {ident}\n" for value in range(1 << size)].__getitem__
    return lambda value: f"b{value:b} {ident}\n"


def changed_lines(regs: list) -> list[str] | None:
    """The value-change lines of the watched registers in ``regs`` whose next value differs
    from their value, in ``regs`` order; None if that is not the order of their handles.

    A watched register's ``var`` is ``(handle, mask, text, tail)``: for an integer register
    (``mask`` > 0) its line is ``text[value & mask] + tail``; otherwise ``text(value)`` is the
    line. Wrongly typed values raise TypeError or ValueError.
    """
    lines: list[str] = []
    add = lines.append
    last = -1
    for reg in regs:
        watched = reg.var
        if watched is None:
            continue
        value = reg.next
        # Registers are often set to the value they already hold: only changes are written.
        if value == reg.value:
            continue
        handle, mask, text, tail = watched
        if handle < last:
            return None
        last = handle
        if mask:
            add(text[value & mask] + tail)
        else:
            add(text(value))
    return lines


def handle_of(reg) -> int:
    """The handle of a watched register: its place in the VCD's order of registers."""
    return reg.var[0]
