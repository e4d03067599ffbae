"""Front-end speed: parse + elaborate throughput of the .arch language.

Two generated inputs: a 5,000-line file of many small modules, constants, instances and
connections (lines/s), and a system of 100,000 model instances built from arrays and loops
(instances/s). Targets from issue 3: at least 10,000 lines/s and 50,000 instances/s.

Run: python benchmarks/lang.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import archmodel.models  # noqa: F401  (fills the catalogue)
from archmodel.lang import Limits, load, parse


def many_lines(target_lines: int = 5000) -> str:
    """Modules of a chain of stages, each instantiated once by the system: ~10 lines each."""
    lines, count = [], 0
    while len(lines) < target_lines - 10:
        lines += [f"// stage group {count}",
                  f"const DEPTH{count} = {count % 7 + 1} * 2",
                  f"module Group{count}(depth: int = DEPTH{count}, hop: time = {count % 5 + 1} ns) {{",
                  "    q : Fifo(depth = depth)",
                  "    d : DelayLine(latency_cycles = max(1, depth / 2))",
                  "    q.out -> d.inp with link(latency = hop, capacity = 4)",
                  "    expose q.inp as inp",
                  "    expose d.out as out",
                  "}",
                  ""]
        count += 1
    body = [f"    g{i} : Group{i}()" for i in range(count)]
    body += [f"    g{i}.out -> g{i + 1}.inp" for i in range(count - 1)]
    lines += ["system Big {", "    clock clk = 1 GHz", "    src : Source(count = 10)", "    snk : Sink()"]
    lines += body + ["    src.out -> g0.inp", f"    g{count - 1}.out -> snk.inp", "}"]
    return "\n".join(lines) + "\n"


def many_instances(n: int = 100_000) -> str:
    """``n`` Fifos in arrays of 1,000 wired into rings by loops (plus n channels)."""
    per = 1000
    groups = n // per
    return f"""
module Ring(n: int = {per}) {{
    q[n] : Fifo(depth = 2)
    for i in 0 .. n - 1 {{ q[i].out -> q[i + 1].inp }}
    q[n - 1].out -> q[0].inp
}}
system Huge {{
    clock clk = 1 GHz
    ring[{groups}] : Ring()
}}
"""


def measure(text: str, name: str, repeat: int = 3):
    best_parse, best_total, result = float("inf"), float("inf"), None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        for _ in range(repeat):
            started = time.perf_counter()
            parse(text, name)
            best_parse = min(best_parse, time.perf_counter() - started)
            started = time.perf_counter()
            result = load(path, limits=Limits(max_instances=10_000_000))
            best_total = min(best_total, time.perf_counter() - started)
    return best_parse, best_total, result


def main() -> None:
    rows = []
    text = many_lines()
    lines = text.count("\n")
    parse_s, total_s, result = measure(text, "lines.arch")
    rows.append(("5,000-line file", f"{lines:,} lines", parse_s, total_s, f"{lines / total_s:,.0f} lines/s",
                 "10,000 lines/s", lines / total_s >= 10_000))
    text = many_instances()
    parse_s, total_s, result = measure(text, "instances.arch", repeat=2)
    n = result.instances
    rows.append(("100,000-instance system", f"{n:,} instances", parse_s, total_s, f"{n / total_s:,.0f} instances/s",
                 "50,000 instances/s", n / total_s >= 50_000))
    header = ("input", "size", "parse s", "parse+elaborate s", "throughput", "target", "met")
    table = [header] + [(r[0], r[1], f"{r[2]:.3f}", f"{r[3]:.3f}", r[4], r[5], "yes" if r[6] else "NO") for r in rows]
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
