"""Smoke test of the fronthaul benchmark: a few slots of the speed table, the table of INP gain
against capacity, and a small sweep, whose CSV and plot are written."""

import csv
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "fronthaul.py"


def test_quick_run_prints_the_speed_table_and_writes_the_sweep(tmp_path):
    table, plot = tmp_path / "sweep.csv", tmp_path / "sweep.png"
    done = subprocess.run([sys.executable, str(BENCHMARK), "--quick", "--slots", "3", "--sweep",
                           "--csv", str(table), "--png", str(plot)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("INP ") for line in lines) and any(line.startswith("no INP ") for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("INP gain over no INP"))
    gains = [line.split() for line in lines[start + 2:start + 8]]
    assert [(g[0], g[1], g[2]) for g in gains] == [("4", "4", c) for c in ("50", "800", "12800")] + \
        [("1", "16", c) for c in ("50", "800", "12800")]
    for m, l, c, gain, least, most, inp, no_inp, unlimited in gains:
        assert float(least) <= float(gain) <= float(most) and float(inp) <= float(unlimited) + 0.01
    start = next(i for i, line in enumerate(lines) if line.startswith("Signal level"))
    signal_rows = [line.split() for line in lines[start + 2:] if line.split()[:1] in (["400"], ["2000"])]
    limits = [row for row in signal_rows if "->" in row]
    assert len(limits) == 4 and len(signal_rows) == 4 * 3  # 400 m and 2 km, 4 x 4 and the bus, 2 capacities
    for side, m, l, c, inp, equal, filled, cut, *_ in (row for row in signal_rows if "->" not in row):
        assert float(equal) <= float(filled) + 1e-3 and float(inp) <= float(cut) + 1e-3  # the cut-set M c
    rows = list(csv.DictReader(table.open()))
    assert {(r["M"], r["L"]) for r in rows} == {("16", "1"), ("4", "4"), ("1", "16")}
    for row in rows:  # the star has nothing to combine; nothing beats unlimited fronthaul
        if row["L"] == "1":
            assert abs(float(row["inp_gain"])) < 1e-6
        assert float(row["sum_rate_inp"]) <= float(row["sum_rate_unlimited"]) + 1e-9
    assert plot.stat().st_size > 10_000
