"""Value-change lines of a VCD, formatted as pyvcd formats them, and payload summaries.

The tracer writes the header and the initial values as pyvcd does (see :mod:`.header`); one
``VCDWriter.change()`` call per change would cost several times the simulation, so it writes
the value-change lines itself too, as pyvcd formats them: the
parts of each signal's line are made once, when it is selected, and the bits or text of a
value seen before are looked up, by the value as the model set it, rather than formatted
again (an integer register's memo truncates to its width when it makes the bits).
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable, Generic, TypeVar

from vcd.writer import Variable

DATA_CHARS = 40
T = TypeVar("T")
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


class Memo(Generic[T]):
    """Texts by value: ``texts`` holds those made so far (a plain dict, see :class:`BitsMemo`
    for why) and :meth:`make` makes a missing one with ``make_text`` and keeps it, forgetting
    everything at once past :data:`MEMO_LIMIT` entries so that ever new values do not grow it.
    (A text may be any value made from the key: the handshake's int payloads keep a pair.)"""

    __slots__ = ("texts", "make_text")

    def __init__(self, make_text: Callable[[Any], T]):
        self.texts: dict[Any, T] = {}
        self.make_text = make_text

    def make(self, key: Any) -> T:
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


# Widths of up to this many bits get a table of every value's bits (a list indexed by the
# value): looking a value up there costs a third of a dict lookup, which hashes the int and
# compares it with the key made earlier (a different object). Up to TABLE_NOW bits the table
# is made at once; wider, once the memo has made a 64th of the values (a design that
# shows few values of a 16-bit register does not pay for 65,536 texts).
TABLE_BITS = 16
TABLE_NOW = 8


class BitsMemo:
    """The bits of an integer register's values, keyed by the value as set: ``0``/``1`` for a
    1-bit register (``mask`` 1), ``b`` and the binary digits otherwise, truncated to ``mask``
    (two's complement for negatives, as hardware would). A value that is not an int raises
    TypeError when first looked up; an integral float equal to a value already made (``3.0``
    after ``3``) is found as that value, as Python's ``==`` says.

    ``texts`` holds the bits made so far and :meth:`make` makes a missing one: the tracer's
    loops look values up in ``texts`` themselves, because ``[]`` on a plain dict costs CPython
    a fraction of what it costs on a dict subclass (whose ``__getitem__`` it looks up and
    calls at every lookup, found or not).

    For a mask of up to :data:`TABLE_BITS` bits ``texts`` becomes a table (a list of the bits
    of every value from 0 to ``mask``; at once up to :data:`TABLE_NOW` bits, otherwise once a
    64th of them were made), and ``made_table`` is called with this memo then: whoever
    holds the dict looks values up in the table from then on. A table gives the bits of a
    negative value too (``table[-1]`` is the bits of ``mask``, as ``-1 & mask``); a value
    beyond it raises IndexError and a value that is not an int TypeError, both looked up
    with :func:`text_of`, which makes them (every value of the width having been made, an
    integral float is found as the int it equals)."""

    __slots__ = ("texts", "mask", "made_table", "_next_miss", "_table_at")

    def __init__(self, mask: int, made_table: Callable[["BitsMemo"], Any] | None = None):
        self.texts: dict[Any, str] | list[str] = {}
        self.mask = mask
        self.made_table = made_table
        self._next_miss: int | None = None  # the value after the last one missed
        # (dict entries at which the table is made; None: never)
        self._table_at = (mask + 1) >> 6 if mask < 1 << TABLE_BITS else None
        if mask < 1 << TABLE_NOW:
            self._make_table()

    def make(self, value: Any) -> str:
        """The bits of ``value``, kept in ``texts`` (with the next values, in a run)."""
        mask, texts = self.mask, self.texts
        if isinstance(texts, list):
            return self._beyond_table(value)
        if len(texts) > MEMO_LIMIT:
            texts.clear()
        if mask == 1:
            text = texts[value] = "01"[value & 1]
        elif value == self._next_miss and type(value) is int:
            # (a run: made together, one comprehension rather than a miss per value)
            texts.update({v: f"b{v & mask:b}" for v in range(value, value + RUN_AHEAD)})
            self._next_miss = value + RUN_AHEAD
            text = texts[value]
        else:
            text = texts[value] = f"b{value & mask:b}"
            self._next_miss = value + 1
        if self._table_at is not None and len(texts) >= self._table_at:
            self._make_table()
        return text

    def _make_table(self) -> None:
        self.texts = bit_table(self.mask.bit_length())
        self._table_at = None
        if self.made_table is not None:
            self.made_table(self)

    def _beyond_table(self, value: Any) -> str:
        # A value the table does not hold: wider than the mask, or not an int.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return "01"[value & 1] if self.mask == 1 else f"b{value & self.mask:b}"


def bit_table(bits: int) -> list[str]:
    """The bits of every value of ``bits`` bits, as a register of that width shows them
    (``0``/``1`` for one bit, ``b`` and the digits otherwise), in value order."""
    if bits == 1:
        return ["0", "1"]
    # (built by doubling, each value's digits a concatenation: a third cheaper than formatting each)
    texts = ["b0", "b1"]
    padded = ["0", "1"]  # every value of k bits, k digits each
    for k in range(1, bits):
        texts += ["b1" + digits for digits in padded]
        if k + 1 < bits:
            padded = ["0" + digits for digits in padded] + ["1" + digits for digits in padded]
    return texts


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


def register_texts(var: Variable, mask: int | None, bits: dict[int, BitsMemo], texts: TextMemo | None,
                   made_table: Callable[[BitsMemo], Any] | None = None) -> tuple[dict | list, Callable[[Any], str], str]:
    """What a watched register's line is made of: (texts by value, make, tail), the line
    being ``texts[value] + tail``, or ``make(value) + tail`` when ``texts`` has no ``value``.
    ``mask`` is 1 for a 1-bit, more for a vector, None for a real and 0 for a string
    register; ``bits`` holds the memo of each mask (shared by registers of one width; a new
    one is given ``made_table``, see :class:`BitsMemo`) and ``texts`` the strings' memo (any
    string variable's escapes are the same)."""
    memo: BitsMemo | RealTexts | TextMemo
    if mask:
        found = bits.get(mask)
        if found is None:
            found = bits[mask] = BitsMemo(mask, made_table)
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
    lines = wire_lines(var)
    if lines is not None:
        return lines.__getitem__
    return lambda value: f"b{value:b} {ident}\n"


def wire_lines(var: Variable) -> list[str] | None:
    """The value-change lines of the scalar or vector wire ``var``, indexed by the value, for
    a wire of up to 10 bits (None for a wider one: see :func:`wire_line`)."""
    ident, size = var.ident, var.size
    assert isinstance(size, int), "a wire of one size"
    if size == 1:
        return [f"0{ident}\n", f"1{ident}\n"]
    if size <= 10:
        return [f"b{value:b} {ident}\n" for value in range(1 << size)]
    return None


def text_of(texts: dict | list, make: Callable[[Any], str], value: Any) -> str:
    """The text of ``value`` in a register's ``texts``, made by ``make`` if it is not there
    (see :func:`register_texts`; a table, see :class:`BitsMemo`, holds ints only)."""
    try:
        return texts[value]
    except LookupError:
        return make(value)
    except TypeError:
        if type(texts) is list:
            return make(value)
        raise


def commit_changes(regs: list, pending: list, handles: dict[str, int], makes: dict[str, Callable[[Any], str]]) -> Any:
    """Commit the registers in ``regs`` (``value = next``, ``queued = False``, as the kernel's
    commit does) and append to ``pending`` the value-change lines of the watched ones whose
    next value differs from their value, in ``regs`` order, each as its two parts (its text,
    then ``tail``: joined later, they cost no string of their own). Returns None when every
    register is committed; otherwise the first one that is not (the rest after it are not
    either): a changed register found out of handle order, or one whose value raised
    TypeError or ValueError (of the wrong type, or unhashable).

    A watched register's ``var`` is ``(texts, tail)`` (see :func:`register_texts`): its line
    is ``texts[value] + tail``, or ``makes[tail](value) + tail`` for a value ``texts`` does not
    hold yet; ``handles[tail]`` is its handle (its place in the VCD's order: a tail names
    its variable, so it is the register's own). The pair is all the loops read at every
    change: a tuple of two unpacks faster than a longer one, and ``pending.append`` written
    out is a call CPython makes inline. The commit is done here, in the pass that reads the
    registers anyway, so that a traced edge costs one pass over its registers, not two.
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
                    texts, tail = watched
                    handle = handles[tail]
                    if handle < last:
                        return reg
                    last = handle
                    try:
                        pending.append(texts[value])
                    except LookupError:
                        pending.append(makes[tail](value))
                    pending.append(tail)
            reg.value = value
            reg.queued = False
    except (TypeError, ValueError):
        return reg
    return None


def commit_ordered(regs: list, pending: list, makes: dict[str, Callable[[Any], str]]) -> Any:
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
                    texts, tail = watched
                    try:
                        pending.append(texts[value])
                    except LookupError:
                        pending.append(makes[tail](value))
                    pending.append(tail)
            reg.value = value
            reg.queued = False
    except (TypeError, ValueError):
        return reg
    return None


def commit_watched(regs: list, pending: list, makes: dict[str, Callable[[Any], str]]) -> Any:
    """:func:`commit_ordered` for registers that are all watched (the commonest list when
    everything is traced), which need no check of it either: a register found unwatched
    stops the loop, as a value of the wrong type does."""
    reg = None
    try:
        for reg in regs:
            value = reg.next
            if value != reg.value:
                texts, tail = reg.var
                try:
                    pending.append(texts[value])
                except LookupError:
                    pending.append(makes[tail](value))
                pending.append(tail)
            reg.value = value
            reg.queued = False
    except (TypeError, ValueError):
        return reg
    return None


def in_handle_order(regs: list, handles: dict[str, int]) -> bool:
    """Whether the watched registers of ``regs`` come in handle order (their lines may be
    written in ``regs`` order, whichever of them change); ``handles`` as for
    :func:`commit_changes`."""
    order = [handles[watched[1]] for reg in regs if (watched := reg.var) is not None]
    return all(map(int.__lt__, order, order[1:]))


def commit(regs: list) -> None:
    """Commit the registers in ``regs`` as the kernel does, writing nothing."""
    for reg in regs:
        reg.value = reg.next
        reg.queued = False


def order_of(handles: dict[str, int]) -> Callable[[Any], int]:
    """Where a register's line goes among an edge's lines: its handle (its place in the
    VCD's order of registers), or -1 for a register not watched (it has no line); a key
    for ``sorted``, ``handles`` as for :func:`commit_changes`."""
    def order(reg) -> int:
        watched = reg.var
        return -1 if watched is None else handles[watched[1]]
    return order
