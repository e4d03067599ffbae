"""Simulation speed and memory of one Snitch cluster running GEMM.

    python benchmarks/cluster.py [--quick] [--compare] [--json out.json]

Prints, per run: simulated cycles, wall time, core-cycles per second (compute cores x
cycles / seconds, the figure that decides whether the 4096-core Manticore package is
practical) by the wall clock and by the process's CPU time (steadier on a shared machine),
the share of cycles the compiled cluster loop ran and in how many batches, and the Python
memory one cluster takes (tracemalloc) after building it and loading the kernel, and after
running it (caches the cluster keeps: encoded programs, replay functions). The memory is
measured in a run of its own after a warm-up, so one-time allocations of the first build
(and loading the compiled loop) do not count; the speed is the fastest of 3 timed runs.
``--compare`` runs the Python model alone (``SnitchCluster(engine="python")``) on the same
cases in the same minutes, checks that it ends in the same cycle count, and prints the
speed-up.
"""

from __future__ import annotations

import argparse
import json
import time
import tracemalloc

from archmodel.kernel import Simulator
from archmodel.workloads.snitch import SETUPS, build_system, report

CASES = [
    ("gemm resident 32x32x32", dict(m=32, n=32, k=32)),
    ("gemm resident 64x64x64", dict(m=64, n=64, k=64)),
    ("gemm streamed 128x32x32", dict(m=128, n=32, k=32, streamed=True)),
]


def _build(params: dict, engine: str = "auto"):
    top = build_system(engine=engine)
    cluster = top.child("cluster")
    SETUPS["gemm"](cluster, top.child("memory"), **params)
    return top, cluster


def measure(params: dict, repeats: int, engine: str = "auto") -> dict:
    _build(params, engine)  # warm-up: one-time allocations (imports, caches) are not the cluster's
    tracemalloc.start()
    top, cluster = _build(params, engine)
    # the outside memory's data array is not part of the cluster
    outside = top.child("memory").size_bytes
    built = tracemalloc.get_traced_memory()[0] - outside
    Simulator(top).run()
    after_run = tracemalloc.get_traced_memory()[0] - outside
    tracemalloc.stop()
    best = None
    for _ in range(repeats):
        top, cluster = _build(params, engine)
        sim = Simulator(top)
        started, started_cpu = time.perf_counter(), time.process_time()
        sim.run()
        wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
        figures = report(cluster, "gemm")
        if best is None or wall < best["wall_s"]:
            best = {"cycles": figures.cycles, "wall_s": wall, "fpu_utilisation": figures.fpu_utilisation,
                    "core_cycles_per_s": cluster.cores * figures.cycles / wall,
                    "cluster_cycles_per_s": figures.cycles / wall,
                    "compiled_share": cluster.n_compiled_cycles / figures.cycles,
                    "batches": cluster.n_compiled_batches}
        cpu_rate = cluster.cores * figures.cycles / cpu
        best["core_cycles_per_cpu_s"] = max(best.get("core_cycles_per_cpu_s", 0.0), cpu_rate)
    best["memory_bytes"] = built
    best["memory_after_run_bytes"] = after_run
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one run of the smallest case")
    parser.add_argument("--compare", action="store_true", help="also run the Python model alone")
    parser.add_argument("--json", help="write the results as JSON")
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    repeats = 1 if args.quick else 3
    top, _ = _build(dict(m=16, n=16, k=8))
    Simulator(top).run()  # loads the compiled cluster loop (numba) outside every measurement
    rows = []
    for name, params in cases:
        row = measure(params, repeats)
        if args.compare:
            plain = measure(params, repeats, engine="python")
            if plain["cycles"] != row["cycles"]:
                raise SystemExit(f"{name}: the Python model ends at cycle {plain['cycles']}, the compiled loop "
                                 f"at {row['cycles']}")
            row["python_core_cycles_per_cpu_s"] = plain["core_cycles_per_cpu_s"]
        rows.append((name, row))
    header = (f"{'case':<26} {'cycles':>8} {'FPU %':>6} {'wall s':>7} {'core-cycles/s':>14} {'per CPU s':>11} "
              f"{'compiled':>9} {'batches':>8} {'memory/cluster':>15} {'after run':>10}")
    if args.compare:
        header += f" {'Python per CPU s':>17} {'speed-up':>9}"
    print(header)
    print("-" * len(header))
    for name, r in rows:
        line = (f"{name:<26} {r['cycles']:>8} {r['fpu_utilisation']:>6.1f} {r['wall_s']:>7.2f} "
                f"{r['core_cycles_per_s']:>14,.0f} {r['core_cycles_per_cpu_s']:>11,.0f} "
                f"{100 * r['compiled_share']:>8.1f}% {r['batches']:>8} "
                f"{r['memory_bytes'] / 2**20:>11.2f} MiB {r['memory_after_run_bytes'] / 2**20:>6.2f} MiB")
        if args.compare:
            python = r["python_core_cycles_per_cpu_s"]
            line += f" {python:>17,.0f} {r['core_cycles_per_cpu_s'] / python:>8.1f}x"
        print(line)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump({name: r for name, r in rows}, stream, indent=2)


if __name__ == "__main__":
    main()
