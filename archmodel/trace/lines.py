"""Value-change lines of a VCD, formatted as pyvcd formats them, and payload summaries.

pyvcd writes the header and the initial values. After that one ``VCDWriter.change()`` call
per change costs several times the simulation, so the tracer writes the lines itself: the
parts of each signal's line are made once, when it is selected, and the bits or text of a
value seen before are looked up, by the value as the model set it, rather than formatted
again (an integer register's memo truncates to its width when it makes the bits).
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


class Memo:
    """Texts by value: ``texts`` holds those made so far (a plain dict, see :class:`BitsMemo`
    for why) and :meth:`make` makes a missing one with ``make_text`` and keeps it, forgetting
    everything at once past :data:`MEMO_LIMIT` entries so that ever new values do not grow it."""

    __slots__ = ("texts", "make_text")

    def __init__(self, make_text: Callable[[Any], str]):
        self.texts: dict[Any, str] = {}
        self.make_text = make_text

    def make(self, key: Any) -> str:
        """The text of ``key``, made and kept in ``texts``."""
        texts = self.texts
        if len(texts) > MEMO_LIMIT:
            texts.clear()
        text = texts[key] = self.make_text(key)
        return text


# A miss of the value after the last one missed starts a run of this many values made at
# once: counters and chains meet each new value once, and one comprehension makes them far
# cheaper than one lookup miss each.
RUN_AHEAD = 256


class BitsMemo:
    """The bits of an integer register's values, keyed by the value as set: ``0``/``1`` for a
    1-bit register (``mask`` 1), ``b`` and the binary digits otherwise, truncated to ``mask``
    (two's complement for negatives, as hardware would). A value that is not an int raises
    TypeError when first looked up; an integral float equal to a value already made (``3.0``
    after ``3``) is found as that value, as Python's ``==`` says.

    ``texts`` holds the bits made so far and :meth:`make` makes a missing one: the tracer's
    loops look values up in ``texts`` themselves, because ``[]`` on a plain dict costs CPython
    a fraction of what it costs on a dict subclass (whose ``__getitem__`` it looks up and
    calls at every lookup, found or not)."""

    __slots__ = ("texts", "mask", "_next_miss")

    def __init__(self, mask: int):
        self.texts: dict[Any, str] = {}
        self.mask = mask
        self._next_miss: int | None = None  # the value after the last one missed

    def make(self, value: Any) -> str:
        """The bits of ``value``, kept in ``texts`` (with the next values, in a run)."""
        mask, texts = self.mask, self.texts
        if len(texts) > MEMO_LIMIT:
            texts.clear()
        if mask == 1:
            text = texts[value] = "01"[value & 1]
            return text
        if value == self._next_miss and type(value) is int:
            # (a run: made together, one comprehension rather than a miss per value)
            texts.update({v: f"b{v & mask:b}" for v in range(value, value + RUN_AHEAD)})
            self._next_miss = value + RUN_AHEAD
            return texts[value]
        text = texts[value] = f"b{value & mask:b}"
        self._next_miss = value + 1
        return text


class TextMemo:
    """The ``s`` and escaped text of a string register's values (any value shows as its
    ``str``): ``texts`` keeps those of str values only, so that ``1``, ``True`` and ``1.0``
    never share a text, and :meth:`make` makes any (see :class:`BitsMemo` for why the two)."""

    __slots__ = ("texts", "var")

    def __init__(self, var: Variable):
        self.texts: dict[Any, str] = {}
        self.var = var

    def make(self, value: Any) -> str:
        """The text of ``value``, kept in ``texts`` if ``value`` is a str."""
        text = escaped_text(self.var, ascii_text(str(value)))
        if type(value) is str:
            texts = self.texts
            if len(texts) > MEMO_LIMIT:
                texts.clear()
            texts[value] = text
        return text


class RealTexts(dict):
    """The ``r`` and digits of a real register's values, made at every lookup (never kept:
    ``0.0`` and ``-0.0`` are equal keys with different texts); a value that is not a number
    raises ValueError. It is its own ``texts`` (always empty, so never a KeyError: a missing
    value is made by ``__missing__``), and ``make`` is that too."""

    def __init__(self, var: Variable):
        super().__init__()
        self.format_value = var.format_value
        self.cut = len(var.ident) + 1

    @property
    def texts(self) -> "RealTexts":
        """Where the tracer looks values up: here."""
        return self

    def make(self, value: Any) -> str:
        """The text of ``value``."""
        line = self.format_value(value, True)
        return line[:len(line) - self.cut]

    __missing__ = make


def register_texts(var: Variable, mask: int | None, bits: dict[int, BitsMemo],
                   texts: TextMemo | None) -> tuple[dict, Callable[[Any], str], str]:
    """What a watched register's line is made of: (texts by value, make, tail), the line
    being ``texts[value] + tail``, or ``make(value) + tail`` when ``texts`` has no ``value``.
    ``mask`` is 1 for a 1-bit, more for a vector, None for a real and 0 for a string
    register; ``bits`` holds the memo of each mask (shared by registers of one width) and
    ``texts`` the strings' memo (any string variable's escapes are the same)."""
    memo: BitsMemo | RealTexts | TextMemo
    if mask:
        found = bits.get(mask)
        if found is None:
            found = bits[mask] = BitsMemo(mask)
        memo, tail = found, (f"{var.ident}\n" if mask == 1 else f" {var.ident}\n")
    elif mask is None:
        memo, tail = RealTexts(var), f" {var.ident}\n"
    else:
        assert texts is not None, "a string register's texts are given"
        memo, tail = texts, f" {var.ident}\n"
    return memo.texts, memo.make, tail


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


def text_of(texts: dict, make: Callable[[Any], str], value: Any) -> str:
    """The text of ``value`` in a register's ``texts``, made by ``make`` if it is not there
    (see :func:`register_texts`)."""
    return texts[value] if value in texts else make(value)


def commit_changes(regs: list, add: Callable[[str], Any]) -> Any:
    """Commit the registers in ``regs`` (``value = next``, ``queued = False``, as the kernel's
    commit does) and give ``add`` the value-change lines of the watched ones whose next value
    differs from their value, in ``regs`` order, each as its two parts (its text, then
    ``tail``: joined later, they cost no string of their own). Returns None when every
    register is committed; otherwise the first one that is not (the rest after it are not
    either): a changed register found out of handle order, or one whose value raised
    TypeError or ValueError (of the wrong type, or unhashable).

    A watched register's ``var`` is ``(handle, texts, tail, make)`` (see
    :func:`register_texts`): its line is ``texts[value] + tail``, or ``make(value) + tail``
    for a value ``texts`` does not hold yet. The commit is done here, in the pass that reads
    the registers anyway, so that a traced edge costs one pass over its registers, not two.
    """
    last = -1
    reg = None
    try:
        for reg in regs:
            value = reg.next
            # Registers are often set to the value they already hold: only changes are written.
            if value != reg.value:
                watched = reg.var
                if watched is not None:
                    handle, texts, tail, make = watched
                    if handle < last:
                        return reg
                    last = handle
                    try:
                        add(texts[value])
                    except KeyError:
                        add(make(value))
                    add(tail)
            reg.value = value
            reg.queued = False
    except (TypeError, ValueError):
        return reg
    return None


def commit_ordered(regs: list, add: Callable[[str], Any]) -> Any:
    """:func:`commit_changes` for registers known to be in handle order (see
    :func:`in_handle_order`), which need no check of it: the commonest edge, the same
    registers set in the same order as at the edges before."""
    reg = None
    try:
        for reg in regs:
            value = reg.next
            if value != reg.value:
                watched = reg.var
                if watched is not None:
                    _, texts, tail, make = watched
                    try:
                        add(texts[value])
                    except KeyError:
                        add(make(value))
                    add(tail)
            reg.value = value
            reg.queued = False
    except (TypeError, ValueError):
        return reg
    return None


def in_handle_order(regs: list) -> bool:
    """Whether the watched registers of ``regs`` come in handle order (their lines may be
    written in ``regs`` order, whichever of them change)."""
    handles = [watched[0] for reg in regs if (watched := reg.var) is not None]
    return all(map(int.__lt__, handles, handles[1:]))


def commit(regs: list) -> None:
    """Commit the registers in ``regs`` as the kernel does, writing nothing."""
    for reg in regs:
        reg.value = reg.next
        reg.queued = False


def order_of(reg) -> int:
    """Where a register's line goes among an edge's lines: its handle (its place in the
    VCD's order of registers), or -1 for a register not watched (it has no line)."""
    watched = reg.var
    return -1 if watched is None else watched[0]
