"""Writing the files a run produces (statistics, waveforms, graphs, sweep tables) so that no
result is lost or half-written: each is checked before the run (exit 2 if it cannot be
written), written under a hidden name of this process's own and renamed into place whole."""

from __future__ import annotations

import os
from pathlib import Path

from .kernel import ArchError


def partial_path(path: Path) -> Path:
    """Where a file being written to ``path`` lives until it is complete: beside it, under a
    hidden name of this process's own."""
    return path.with_name(f".{path.name}.{os.getpid()}.partial")


def check_writable(what: str, path: Path) -> None:
    """Before the run: ``path`` can be written as an output (bad input, exit 2, if not): it is
    a regular file or nothing yet (never a folder, or a device that a rename into place would
    replace), and a file can be made beside it (its folder is created if missing)."""
    if path.exists() and not path.is_file():
        kind = "a folder" if path.is_dir() else "not a regular file"
        raise ArchError(f"{what} {path} is {kind}", hint="give the path of a file to write")
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise ArchError(f"cannot write {what} {path}: {folder} is a file, not a folder",
                                hint="give a path in a folder you can write")
            break
    probe = partial_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(probe, "x"):
            pass
        probe.unlink()
    except OSError as err:
        raise ArchError(f"cannot write {what} {path}: {err.strerror or err}",
                        hint="give a path in a folder you can write") from None


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` under a temporary name beside it and rename it into place,
    so a reader (or an earlier file of that name) never sees a half-written file."""
    partial = partial_path(path)
    try:
        partial.write_text(text)
        os.replace(partial, path)
    except OSError:
        partial.unlink(missing_ok=True)  # no truncated file, under any name
        raise
