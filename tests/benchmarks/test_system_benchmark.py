"""Smoke test of the composed-systems benchmark: its quick run prints both tables, and every
row's compiled and Python runs agreed on the cycle count (the benchmark stops otherwise);
each mesh row ends with its ratio to the ideal cluster and that cluster's rate."""

import subprocess
import sys
from pathlib import Path

SYSTEM = Path(__file__).resolve().parents[2] / "benchmarks" / "system.py"


def test_quick_run_prints_both_tables():
    done = subprocess.run([sys.executable, str(SYSTEM), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    for memory in ("ideal", "HBM2E pseudo-channel", "HBM2E 8 channels"):
        assert any(line.startswith(memory + " ") for line in lines), memory
    mesh = [line for line in lines if line.startswith(("compiled ", "fast ", "components "))]
    assert [line.split()[0] for line in mesh] == ["compiled", "compiled", "fast", "components"]
    # the ratio to the ideal cluster, then that cluster's rate, measured in turn with the row
    assert all(line.split()[-2].endswith("x") and int(line.split()[-1].replace(",", "")) > 0 for line in mesh)
