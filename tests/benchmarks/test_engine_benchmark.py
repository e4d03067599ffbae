"""Smoke test of the engine benchmark: its quick run without peers prints the full table."""

import os
import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "benchmarks" / "engine.py"


def test_quick_run_prints_the_table(tmp_path):
    done = subprocess.run([sys.executable, str(ENGINE), "--quick", "--no-peers"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    out = done.stdout
    header = next(line for line in out.splitlines() if line.startswith("design"))
    assert header.split() == ["design", "engine", "elab", "s", "cycles", "run", "s", "rate", "VCD",
                              "rate", "VCD", "cost", "archmodel", "/"]
    for design in ("pipeline 17", "chain 64", "chain 1024", "queue ring 64", "queue ring 1024"):
        assert any(line.startswith(design) and "archmodel" in line for line in out.splitlines()), design
    assert sum("plain Python loop" in line for line in out.splitlines()) == 2
    assert "elaboration: 20,001 components in" in out
    assert "targets:" in out
    assert "PyMTL3" not in out and "Amaranth" not in out  # --no-peers runs no peer
    assert list(tmp_path.iterdir()) == []  # its scratch folder for waveforms is gone
