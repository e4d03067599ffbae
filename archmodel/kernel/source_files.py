"""Reading the text files users hand to archmodel (``.arch`` sources, traces, assembly, edge
lists) so that a file that cannot be read, or is not UTF-8 text, is bad input with a location
(the line and column of the first bad byte) and not a crash, and nothing of a file that may
not be text at all is echoed back."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterator

from .errors import ArchError, Span

_BOM = b"\xef\xbb\xbf"


def _not_utf8(shown: str, line: int, col: int, byte: int) -> ArchError:
    return ArchError(f"the file is not UTF-8 text: byte 0x{byte:02x} here is not a character",
                     hint="save the file as UTF-8", span=Span(shown, line, col))


def _cannot_read(what: str, shown: str, err: OSError) -> ArchError:
    return ArchError(f"cannot read {what} '{shown}': {err.strerror or err}")


def read_source(path: str | Path, what: str = "file", shown: str | None = None) -> tuple[str, str]:
    """The whole text of a file and the SHA-256 of its bytes. A leading byte-order mark is
    dropped; ``what`` names the kind of file in errors, ``shown`` its name (default: the path)."""
    shown = str(path) if shown is None else shown
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise _cannot_read(what, shown, err) from None
    digest = hashlib.sha256(data).hexdigest()
    try:
        return data.decode("utf-8-sig"), digest
    except UnicodeDecodeError as err:
        offset = err.start + (len(_BOM) if data.startswith(_BOM) else 0)
        line_start = data.rfind(b"\n", 0, offset) + 1
        raise _not_utf8(shown, data.count(b"\n", 0, offset) + 1, offset - line_start + 1, data[offset]) from None


def read_lines(path: str | Path, what: str = "file") -> Iterator[tuple[int, str]]:
    """The lines of a file as ``(line number, text without the newline)``, read as they are
    needed (a trace may be large), with the same errors as :func:`read_source`."""
    shown = str(path)
    try:
        handle = open(path, "rb")
    except OSError as err:
        raise _cannot_read(what, shown, err) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM):]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise _not_utf8(shown, number, err.start + 1, raw[err.start]) from None
            yield number, text.rstrip("\r\n")
