"""Smoke test of the graph benchmark: its quick run prints the cache-speed table (the tag
store and pycachesim agreed on the hits, or it stops; the compiled pair and the Python models
agreed on the timed runs, or it stops, and the compiled rows carry the speed-up over Python)
and the Cagra table for every algorithm and variant."""

import subprocess
import sys
from pathlib import Path

GRAPH = Path(__file__).resolve().parents[2] / "benchmarks" / "graph.py"


def test_quick_run_prints_both_tables():
    done = subprocess.run([sys.executable, str(GRAPH), "--quick"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("pycachesim (C backend), LRU") for line in lines)
    timed = [line for line in lines if line.startswith("core + Cache + ")]
    engines = [line.split("(timed, ")[1].split(")")[0] for line in timed]
    assert engines == ["python", "compiled", "compiled, memory outside", "python", "compiled"]
    figures = [line.split(")", 1)[1].split() for line in timed]  # the columns after the row's label
    python = None
    for engine, row in zip(engines, figures):  # a compiled row adds its speed-up over Python
        if engine == "python":
            python = row
        else:
            assert python is not None and len(row) == len(python) + 1 and row[-1].endswith("x")
    rows = [line.split() for line in lines if line.strip().startswith(("pagerank", "label_propag", "betweenness"))]
    assert [(r[0], r[1]) for r in rows] == [
        ("pagerank", "baseline"), ("pagerank", "clustering"), ("pagerank", "segmenting"), ("pagerank", "both"),
        ("label_propag", "baseline"), ("label_propag", "clustering"), ("label_propag", "segmenting"),
        ("label_propag", "both"), ("betweenness", "baseline"), ("betweenness", "clustering")]
