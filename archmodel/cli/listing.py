"""``archmodel list``: the model catalogue, one model's datasheet, the parts models build
inside themselves, and the bundled systems, as plain text for a terminal."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

from ..kernel import ArchError, catalogue, did_you_mean, parts
from ..paths import bundled_systems, data_path
from .codes import EXIT_OK
from .targets import load_models

# The reStructuredText of docstrings: ``depth`` reads as depth, :class:`~.network.Noc` as Noc,
# :class:`.network.Noc` as network.Noc, :func:`text <target>` as text (as Sphinx renders them).
_ROLE = re.compile(r":[a-z]+:`([^`]*)`")
_LITERAL = re.compile(r"``([^`]+)``")


def _role(match: re.Match) -> str:
    content = match.group(1)
    if "<" in content:
        return content.split("<", 1)[0].strip()
    if content.startswith("~"):
        return content.rsplit(".", 1)[-1]
    return content.lstrip(".")


def plain(text: str) -> str:
    """A docstring's text without reStructuredText markup, as a terminal should show it."""
    return _LITERAL.sub(r"\1", _ROLE.sub(_role, text))


PART = "a part that a model, a workload or the test harness builds: not instanced by name in a .arch file"
"""What ``archmodel list NAME`` says of a part under its title."""


def system_summary(path: Path) -> str:
    """The one-line description of a bundled system: the first line of its file, a comment."""
    with open(path, encoding="utf-8") as stream:
        first = stream.readline().strip()
    return first[2:].strip() if first.startswith("//") else ""


def _table(rows: dict[str, str]) -> list[str]:
    width = max((len(name) for name in rows), default=0)
    return [f"{name.ljust(width)}  {text}".rstrip() for name, text in rows.items()]


def cmd_list(args) -> int:
    """Print the model catalogue and the parts, one model's datasheet, or the bundled systems."""
    if args.systems:
        if args.model:
            raise ArchError("--systems lists the bundled systems: give it no model name",
                            hint=f"archmodel list {args.model} documents the model")
        systems = bundled_systems()
        print("\n".join(_table({name: system_summary(path) for name, path in systems.items()})))
        print(f"run one with: archmodel run NAME (the files are in {data_path('topologies')})", file=sys.stderr)
        return EXIT_OK
    load_models(args.plugin)
    # the parts workloads add (their reports) and the unit-test harness's sources and sinks
    importlib.import_module("archmodel.lang")
    importlib.import_module("archmodel.testing")
    models, inside = catalogue(), parts()
    if args.model:
        klass = models.get(args.model) or inside.get(args.model)
        if klass is None:
            raise ArchError(f"no model named '{args.model}'",
                            hint=did_you_mean(args.model, list(models) + list(inside))
                            or "run 'archmodel list' for the catalogue")
        text = plain(klass.documentation())
        if args.model not in models:
            title, _, rest = text.partition("\n")
            text = f"{title}\n  {PART}\n{rest}"
        print(text)
        return EXIT_OK
    print("\n".join(_table({name: plain(klass.summary_line()) for name, klass in models.items()})))
    print("\nparts, built by models, workloads and the test harness (show prints them; list NAME documents one):")
    print("\n".join("  " + line for line in _table({name: plain(klass.summary_line()) for name, klass in inside.items()})))
    return EXIT_OK
