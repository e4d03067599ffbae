"""Where the data that travels with archmodel lives: the grammar (``dsl/``), the reusable
``.arch`` modules (``library/``) and the runnable systems (``topologies/``, by name
:func:`bundled_systems`).

One function answers for a source checkout and for an installed wheel alike. A wheel carries
the three folders inside the package as ``archmodel/_data/<name>`` (``setup.py`` copies them
there at build time); a checkout has them beside the package.
"""

from __future__ import annotations

from pathlib import Path

from .kernel import ArchError

DATA_FOLDERS = ("dsl", "library", "topologies")

_PACKAGE = Path(__file__).resolve().parent


def data_path(folder: str) -> Path:
    """The directory ``folder`` (one of ``dsl``, ``library``, ``topologies``), from the
    installed package's ``_data`` if present, else from the source checkout."""
    if folder not in DATA_FOLDERS:
        raise ValueError(f"unknown data folder {folder!r}; expected one of {DATA_FOLDERS}")
    for candidate in (_PACKAGE / "_data" / folder, _PACKAGE.parent / folder):
        if candidate.is_dir():
            return candidate
    raise ArchError(f"cannot find archmodel's '{folder}' folder",
                    hint=f"looked in {_PACKAGE / '_data'} and {_PACKAGE.parent}; reinstall archmodel")


def bundled_systems() -> dict[str, Path]:
    """The runnable systems that travel with archmodel (``topologies/*.arch``) by name, the
    file's name without ``.arch``: what ``archmodel run NAME`` takes."""
    return {path.stem: path for path in sorted(data_path("topologies").glob("*.arch"))}
