"""The comment headers of the bundled .arch files: a one-line description first (what
``archmodel list --systems`` prints), and every option their commands give is one the file
takes."""

import re
import shlex

import pytest

from archmodel.cli import main
from archmodel.paths import data_path

SYSTEMS = sorted(data_path("topologies").glob("*.arch"))
FILES = SYSTEMS + sorted(data_path("library").glob("*.arch"))
_OPTION = re.compile(r"(-p|--top|--sweep)\s+('[^']*'|\"[^\"]*\"|[^\s;,)]+)")


def header(path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return lines


@pytest.mark.parametrize("path", SYSTEMS, ids=lambda p: p.stem)
def test_a_system_begins_with_a_one_line_description(path):
    first = path.read_text().splitlines()[0]
    assert first.startswith("// ") and first.endswith(".") and len(first) <= 96, first


def _options(line: str) -> list[str]:
    """The options a header line gives, as a shell would pass them; a --sweep becomes -p of its
    first value (the same name must be a parameter)."""
    options = []
    for flag, value in _OPTION.findall(line):
        value = shlex.split(value)[0]
        if flag == "--sweep":
            flag, value = "-p", re.split(r"[:,]", value)[0]
        options += [flag, value]
    return options


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_option_a_header_suggests_checks(path, capsys, monkeypatch):
    monkeypatch.chdir(path.parent)
    suggested = [options for options in map(_options, header(path)) if options]
    for options in suggested:
        assert main(["check", path.name, *options]) == 0, (options, capsys.readouterr().err)
    capsys.readouterr()


def test_the_headers_suggest_options_to_check():
    # the pattern finds what the headers say (a change of their wording must not leave nothing checked)
    assert _options("// Faster:   add -p 'engine=\"fast\"' (one engine steps all routers)") == ["-p", 'engine="fast"']
    assert _options("// --sweep rate=0.1:0.8:0.1 -p routing='\"valiant\"'") == ["-p", "rate=0.1", "-p", 'routing="valiant"']
    assert _options("// -p M=16   (or -p M=1; L follows)") == ["-p", "M=16", "-p", "M=1"]
    assert sum(1 for path in FILES for line in header(path) if _options(line)) >= 25
