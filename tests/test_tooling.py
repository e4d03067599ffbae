"""The tree passes the linter and the type checker configured in pyproject.toml (ruff's
pyflakes and pycodestyle error rules everywhere; mypy on the kernel, fully typed, and the
command line), so CI, which runs the test suite, runs them too."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = _tool("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "All checks passed!\n"


def test_mypy_finds_nothing_in_the_typed_part():
    done = _tool("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found in ")
