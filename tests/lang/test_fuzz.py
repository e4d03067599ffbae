"""Mutation fuzzing: seeded random token edits of every bundled .arch file must load cleanly or
fail with ArchErrors whose spans point into the text, never with another exception."""

import random
import re

import archmodel.models  # noqa: F401  (fills the catalogue)
from archmodel.kernel import ArchError, Simulator
from archmodel.lang import LanguageErrors, Limits, load
from archmodel.paths import data_path

EDITS = 2000
TOKEN = re.compile(r'"[^"\n]*"|\d+(?:\.\d+)?(?:[ \t]*[A-Za-z/]+)?|[A-Za-z_]\w*|->|\.\.|\*\*|[<>=!]=|\S')
VOCABULARY = ["{", "}", "(", ")", "[", "]", ":", ",", ".", "..", "->", "=", "+", "-", "*", "/", "%", "**",
              "<", ">=", "==", "and", "not", "if", "else", "for", "in", "module", "system", "const", "clock",
              "expose", "as", "with", "link", "topology", "of", "run", "on", "trace", "import", "0", "1", "7",
              "-1", "2.5", "1e9", "4 GHz", "2 ns", "64 B", "8 GB/s", '"x"', "true", "Fifo", "Sink", "Source",
              "latency", "depth", "x", "inp", "out", "*", "999999999"]


# The whole Manticore package elaborates 4096 cores per edit, half the test's time; its text is
# fuzzed the same, with one chiplet of one quadrant as the defaults.
SCALED_DOWN = {"topologies/manticore.arch": (("chiplets: int = 4", "chiplets: int = 1"), ("quadrants: int = 4", "quadrants: int = 1"))}


def bundled_files():
    return sorted(data_path("library").glob("*.arch")) + sorted(data_path("topologies").glob("*.arch"))


def fuzzed_text(path) -> str:
    """The text of ``path`` whose edits the test makes: as bundled, or scaled down (see SCALED_DOWN)."""
    text = path.read_text()
    for old, new in SCALED_DOWN.get(f"{path.parent.name}/{path.name}", ()):
        assert old in text, f"{path.name} no longer has {old!r}: update SCALED_DOWN"
        text = text.replace(old, new)
    return text


def mutate(text: str, rng: random.Random) -> str:
    spans = [m.span() for m in TOKEN.finditer(text)]
    kind = rng.choice(("delete", "duplicate", "swap", "insert"))
    i = rng.randrange(len(spans))
    start, end = spans[i]
    if kind == "delete":
        return text[:start] + text[end:]
    if kind == "duplicate":
        return text[:end] + " " + text[start:end] + text[end:]
    if kind == "swap" and i + 1 < len(spans):
        s2, e2 = spans[i + 1]
        return text[:start] + text[s2:e2] + text[end:s2] + text[start:end] + text[e2:]
    return text[:start] + rng.choice(VOCABULARY) + " " + text[start:]


def assert_valid_span(error: ArchError, texts: dict):
    span = error.span
    assert span is not None, f"no span: {error.message}"
    assert span.file in texts, f"span in unknown file {span.file}: {error.message}"
    lines = texts[span.file].splitlines()
    assert 1 <= span.line <= len(lines) + 1, (span, error.message)
    assert span.col >= 1, (span, error.message)
    assert error.message


def test_2000_seeded_token_edits_give_success_or_spanned_arch_errors(tmp_path):
    files = bundled_files()
    assert len(files) >= 4
    rng = random.Random(20240601)
    outcomes = {"ok": 0, "errors": 0}
    limits = Limits(max_instances=100_000, max_depth=16)
    for n in range(EDITS):
        original = files[n % len(files)]
        mutated = mutate(fuzzed_text(original), rng)
        path = tmp_path / original.name
        path.write_text(mutated)
        try:
            elaborated = load(path, limits=limits, search_path=[data_path("library")])
            Simulator(elaborated.top)
            outcomes["ok"] += 1
        except LanguageErrors as errors:
            for error in errors.errors:
                assert_valid_span(error, {name: "\n".join(lines) for name, lines in errors.sources.files.items()})
            outcomes["errors"] += 1
        except ArchError as error:  # raised by the kernel after elaboration, or a file-level problem
            assert error.message
            outcomes["errors"] += 1
    # The edits must exercise both paths, or the test proves nothing.
    assert outcomes["ok"] > 100 and outcomes["errors"] > 500, outcomes
