"""Smoke test of the training benchmark: its quick run prints the 2 x 4 table with FCDP ahead
of ZeRO-3 at 10 GbE, and writes the step-time curve and its plot."""

import csv
import subprocess
import sys
from pathlib import Path

TRAINING = Path(__file__).resolve().parents[2] / "benchmarks" / "training.py"


def test_quick_run_prints_the_table_and_plots_the_curve(tmp_path):
    curve = tmp_path / "curve.csv"
    done = subprocess.run([sys.executable, str(TRAINING), "--quick", "--csv", str(curve)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.split()[:2] in (["10", "Gbit/s"],
                                                                                    ["25", "Gbit/s"],
                                                                                    ["100", "Gbit/s"])]
    assert len(rows) == 3
    assert float(rows[0][5].rstrip("x")) > 1  # ZeRO-3 over FCDP at 10 GbE
    with curve.open() as stream:
        table = list(csv.DictReader(stream))
    assert [row["inter_gbit_s"] for row in table] == ["10", "25", "100"]
    assert curve.with_suffix(".png").stat().st_size > 1000
