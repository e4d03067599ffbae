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
    assert [line.split("(timed, ")[1].split(")")[0] for line in timed] == ["python", "compiled"] * 2
    for python, compiled in zip(timed[::2], timed[1::2]):  # the compiled row adds its speed-up over Python
        assert len(compiled.split()) == len(python.split()) + 1 and compiled.split()[-1].endswith("x")
    rows = [line.split() for line in lines if line.strip().startswith(("pagerank", "label_propag", "betweenness"))]
    assert [(r[0], r[1]) for r in rows] == [
        ("pagerank", "baseline"), ("pagerank", "clustering"), ("pagerank", "segmenting"), ("pagerank", "both"),
        ("label_propag", "baseline"), ("label_propag", "clustering"), ("label_propag", "segmenting"),
        ("label_propag", "both"), ("betweenness", "baseline"), ("betweenness", "clustering")]
