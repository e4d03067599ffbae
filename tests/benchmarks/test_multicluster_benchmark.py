"""Smoke test of the kernels-across-clusters benchmark: its quick run prints the GEMM with the
slave ports connected and unconnected, in the same number of cycles."""

import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "multicluster.py"


def test_quick_run_prints_the_gemm_with_and_without_slave_ports():
    done = subprocess.run([sys.executable, str(BENCHMARK), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["case", "cycles", "min", "FPU", "%", "compiled", "cycles/batch", "Python", "speed-up"]
    connected, unconnected = lines[1], lines[2]
    assert connected.startswith("gemm_clusters m=32, n=32, k=64 ") and unconnected.startswith("  the same, slave ports")
    assert connected[44:52].split() == unconnected[44:52].split()  # the same cycles
    assert len(lines) == 3
