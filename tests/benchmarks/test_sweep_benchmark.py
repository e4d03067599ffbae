"""Smoke test of the sweep benchmark: its quick run prints both tables, the 2-worker row has
its ratio, and 1 and 2 workers gave identical rows (the benchmark stops otherwise)."""

import subprocess
import sys
from pathlib import Path

SWEEP = Path(__file__).resolve().parents[2] / "benchmarks" / "sweep.py"


def test_quick_run_prints_both_tables():
    done = subprocess.run([sys.executable, str(SWEEP), "--quick"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [line.split() for line in done.stdout.splitlines()]
    scaling = [line for line in lines if len(line) > 1 and line[0] in ("1", "2") and line[1] != "Dask"]
    assert [line[0] for line in scaling] == ["1", "2"] and scaling[1][-1].endswith("x")
    assert "rows of 1 and 2 workers: identical (timing columns aside)" in done.stdout
    assert "the host gave 2 processes " in done.stdout
    for where in ("this process", "1 Dask worker", "2 Dask workers"):
        assert any(" ".join(line).startswith(where + " ") for line in lines), where
    assert "Dask's cost per point: " in done.stdout
