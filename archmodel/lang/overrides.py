"""``-p NAME=VALUE``: a parameter of the top given on the command line, its value the text of
a ``.arch`` expression (``8``, ``2 ns``, ``"uniform"``) that elaboration evaluates."""

from __future__ import annotations

from ..kernel import ArchError


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    """``["cores=8", "lat=2 ns"]`` -> ``{"cores": "8", "lat": "2 ns"}`` (a later pair of the
    same name wins); a pair that is not ``NAME=VALUE`` with NAME an identifier is bad input."""
    overrides = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.isidentifier():
            raise ArchError(f"--param '{pair}' is not NAME=VALUE", hint="for example: -p cores=8 or -p 'lat=2 ns'")
        overrides[name] = text
    return overrides


__all__ = ["parse_overrides"]
