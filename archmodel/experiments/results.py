"""A sweep's results file: CSV (or rows kept in memory, without a path), one row per finished point, written as points finish.

The file is valid CSV at every moment a sweep can be stopped: a row is one ``write`` of a
whole line, flushed; when a row brings columns the header lacks (a point whose system has
more components, or a statistic that only some runs report), the whole file is rewritten
under a temporary name and renamed into place. At the end the rows are put in the sweep's
point order. Reading it back gives the rows a re-run skips (resume).
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import TextIO

from ..kernel import ArchError
from ..outputs import partial_path
from .points import display_value
from .runner import RUN_COLUMNS

# Columns read back as text whatever they look like (a hash may be all digits).
TEXT_COLUMNS = ("outcome", "message", "input_sha256")


def parse_cell(text: str):
    """A CSV cell as the Python value that was written: empty -> None, True/False, numbers
    (nan and inf too), else as :func:`~.points.display_value` reads a value."""
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text in ("nan", "inf", "-inf"):
        return float(text)
    return display_value(text)


def row_key(row: dict, names: list[str]) -> tuple:
    """A row's identity as :meth:`Point.key` gives it: parameter cells, seed, input hash."""
    return (tuple("" if row.get(n) is None else str(row[n]) for n in names), str(row.get("seed")),
            str(row.get("input_sha256")))


class ResultsFile:
    """The CSV of a sweep whose parameter columns are ``names``.

    An existing file is read first (unless ``fresh``): it must hold the same parameter columns
    (else it is another sweep and this one refuses to mix in). Its rows are kept, typed with
    :func:`parse_cell`, and :meth:`done` tells which points they cover.
    """

    def __init__(self, path: str | os.PathLike | None, names: list[str], fresh: bool = False):
        self.path = Path(path) if path is not None else None  # None: rows kept in memory only
        self.names = list(names)
        self.columns = self.names + list(RUN_COLUMNS)
        self.rows: list[dict] = []
        self._handle: TextIO | None = None
        if self.path is not None:
            if self.path.exists() and not fresh:
                self._read()
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def _read(self) -> None:
        assert self.path is not None  # only a results file with a path is read back
        with self.path.open(newline="") as handle:
            reader = csv.DictReader(handle)
            header = list(reader.fieldnames or [])
            if not header:
                return
            shown = header[:header.index("seed")] if "seed" in header else header
            if shown != self.names or not set(RUN_COLUMNS) <= set(header):
                raise ArchError(f"{self.path} holds another sweep (parameter columns: {', '.join(shown) or 'none'}; "
                                f"this one has: {', '.join(self.names) or 'none'})",
                                hint="give another --csv, or --fresh to replace it")
            self.columns = header
            self.rows = [{name: cell if name in TEXT_COLUMNS else parse_cell(cell)
                          for name, cell in row.items() if name is not None} for row in reader]

    def done(self, retry_failed: bool = False, failed=()) -> set:
        """The keys of the rows already there (without failed rows when ``retry_failed``)."""
        return {row_key(r, self.names) for r in self.rows if not (retry_failed and r.get("outcome") in failed)}

    def drop(self, keys: set) -> None:
        """Forget the rows of these keys (points about to run again)."""
        if keys:
            self.rows = [r for r in self.rows if row_key(r, self.names) not in keys]
            self._rewrite()

    def _line(self, row: dict) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(["" if row.get(c) is None else row[c] for c in self.columns])
        return out.getvalue()

    def _rewrite(self) -> None:
        self.close()
        if self.path is None:
            return
        partial = partial_path(self.path)
        with partial.open("w", newline="") as handle:
            handle.write(self._line({c: c for c in self.columns}))
            for row in self.rows:
                handle.write(self._line(row))
        os.replace(partial, self.path)

    def add(self, row: dict) -> None:
        """Append one finished point's row (rewriting the file if it brings new columns);
        :meth:`start` comes first."""
        self.rows.append(row)
        new = [c for c in row if c not in self.columns]
        if new:
            self.columns += new
            self._rewrite()
            return
        if self.path is None:
            return
        if self._handle is None:
            self._handle = self.path.open("a", newline="")
        self._handle.write(self._line(row))
        self._handle.flush()

    def start(self) -> None:
        """Make the file exist with its header (and any rows read), before points finish."""
        self._rewrite()

    def finish(self, order: list[tuple]) -> None:
        """Put the rows in the sweep's order (``order``: point keys); rows of points not in
        this sweep (an earlier, larger one) stay, after them."""
        rank = {key: i for i, key in enumerate(order)}
        self.rows.sort(key=lambda r: rank.get(row_key(r, self.names), len(rank)))
        self._rewrite()

    def close(self) -> None:
        """Close the append handle (the file stays valid)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
