"""Speed of Manticore systems (topologies/manticore_quadrant.arch, topologies/manticore.arch).

    python benchmarks/manticore.py [--quick] [--repeats N] [--json out.json]
    python benchmarks/manticore.py --package [--window N] [--start N] [--chiplets 1 2 4]
    python benchmarks/manticore.py --split [--chiplets 2 4] [--processes 2] [--gemm-k 128]

Two tables:

* **One quadrant running GEMM.** The 32 clusters of a quadrant (256 compute + 32 DMA cores)
  on their chiplet's HBM2E share one streamed GEMM, with the compiled cluster loop and with
  the Python model side by side in this process: core-cycles (every core, DMA cores included,
  times the cycles of the run) per second of process CPU time, the ratio compiled / Python,
  the mean compiled batch (simulated cycles per batch: how far the lookahead horizon reaches)
  and the issue's target (5M core-cycles per CPU second). The compiled run is repeated
  (``--repeats``, 5 by default; every run the same cycles) and its row is the run of median
  CPU time, the target judged on it, every run's rate printed below: the machine is shared and
  one run's CPU time drifts 10-20% from the next. ``--quick`` runs 8 clusters.
* **What one more chiplet costs.** The package with 1, 2 (and 4) chiplets of one small quadrant
  each (a fixed GEMM share per cluster, so the work grows with the chiplets), each in a fresh
  process: elaboration and run CPU time, peak resident memory, and the ratios to one chiplet.

With ``--package``, the issue's GEMM instead (1024 x 1024 x 1024 FP64, ``kernel =
"gemm_tiled"``: tiles of 32 x 64 x 64, one per cluster, each die's HBM holding its band of A
and C and a copy of B) on 1, 2 and 4 full chiplets (128 clusters each), each die with the same
share as in the whole package (256 rows of C: m = 256 x chiplets), each in a fresh process: the CPU time of elaboration, of a first
``--window`` of simulated cycles (from cycle ``--start``, 0 by default: the first tiles take
about 26,000 cycles to arrive on one chiplet, so later windows see the cores computing) and of the next
``--window``, the CPU time per simulated cycle in the second, the clusters' compiled batches (one
tick each), the lookahead questions and why the batches ended in the second, and the peak resident memory. Those runs stop at the window's end (the
whole GEMM takes hours of CPU there); what the whole run would take is an extrapolation from
the per-cycle figure, printed as one.

With ``--split``, the issue's GEMM with a shorter k (``--gemm-k``, 128 by default: an eighth of
the work per die) on 2 and 4 full chiplets, to the end, once in one process and once split into
``--processes`` processes (``archmodel run --processes``, :mod:`archmodel.kernel.partition`: the
dies exchange nothing, each reads its own HBM), each in a fresh process: wall-clock time, the CPU
time of every process (the forked parts included), the wall-clock ratio and whether every
statistic came out the same.

Every run checks its results against numpy in the modelled HBM. The machine is shared: CPU
time and ratios within one run are what to compare.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
from pathlib import Path

from archmodel.experiments.hierarchy import run_clusters
from archmodel.models.compute import SnitchCluster
from archmodel.paths import data_path

TARGET = 5e6  # core-cycles per CPU second, issue 14


def run(path: str, params: dict, engine: str) -> dict:
    """Elaborate ``path`` with ``params``, run it with every cluster on ``engine``, and measure."""
    # the runs before this one left their systems behind in reference cycles: collected now,
    # or a full collection of them may fall inside this run's time
    gc.collect()
    done = run_clusters(path, params, engine)  # each cluster checked against numpy
    clusters = done.clusters
    cycles = max(c.run_cycles() for c in clusters)
    cores = sum(len(c.core_list) for c in clusters)
    batches = sum(c.n_compiled_batches for c in clusters)
    return {"clusters": len(clusters), "cores": cores, "cycles": cycles, "elaborate_s": done.elaborate_cpu_s,
            "run_s": done.run_cpu_s, "rate": cores * cycles / done.run_cpu_s,
            "batch": sum(c.n_compiled_cycles for c in clusters) / batches if batches else 0.0,
            "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


WARM_UP = {"kernel": '"gemm"', "rows": "16", "clusters": "2", "n": "16", "k": "16", "l1_radix": "2", "l2_radix": "1"}
"""A quadrant of two clusters and a small GEMM (1,223 cycles), run before the measured runs: it
loads the compiled cluster loop and DRAM core from numba's cache (about 0.5 s of CPU, once per
process), which the simulation rate leaves out, as benchmarks/system.py does."""


def quadrant_table(clusters: int, repeats: int = 1) -> tuple[list, list]:
    """The quadrant's rows (compiled: the run of median CPU time of ``repeats``; Python:
    one run) and every compiled run."""
    params = {"kernel": '"gemm"', "rows": "64", "clusters": str(clusters), "n": "64", "k": "128"}
    if clusters < 16:
        params.update(l1_radix=str(min(4, clusters)), l2_radix=str(max(1, clusters // 4)))
    path = str(data_path("topologies") / "manticore_quadrant.arch")
    run(path, WARM_UP, "compiled")
    compiled = [run(path, params, "compiled") for _ in range(repeats)]
    median = sorted(compiled, key=lambda r: r["run_s"])[len(compiled) // 2]
    rows = [("compiled", median), ("python", run(path, params, "python"))]
    if any(r["cycles"] != rows[1][1]["cycles"] for r in compiled):
        raise SystemExit("compiled and Python runs ended in different cycles")
    return rows, compiled


def _child(chiplets: int) -> dict:
    """One package run in a fresh process, so its peak memory is its own."""
    params = {"kernel": '"gemm"', "rows": "64", "chiplets": str(chiplets), "quadrants": "1", "l1_radix": "2",
              "l2_radix": "1", "l3_radix": "1", "n": "64", "k": "64"}
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"from manticore import run; "
            f"print(json.dumps(run({str(data_path('topologies') / 'manticore.arch')!r}, {params!r}, 'compiled')))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def package_window(chiplets: int, window: int, start: int = 0) -> dict:
    """The issue's GEMM (its rows of C for ``chiplets`` dies) on ``chiplets`` full chiplets,
    elaborated, run ``start`` cycles, then two windows of ``window`` cycles (not to the end):
    CPU seconds of each window and the peak RSS."""
    import time

    from archmodel.kernel import Simulator
    from archmodel.lang.elaborate import load

    started = time.process_time()
    top = load(data_path("topologies") / "manticore.arch",
               params={"kernel": '"gemm_tiled"', "chiplets": str(chiplets), "gemm_m": str(256 * chiplets)}).top
    sim = Simulator(top)
    built = time.process_time()
    if start:
        sim.run(cycles=start)
    clusters = [part for part in top.walk() if isinstance(part, SnitchCluster)]
    graph = sim.connection_graph
    marks = [time.process_time()]
    counts = [(sum(c.n_compiled_batches for c in clusters), graph.questions)]
    for end in (start + window, start + 2 * window):
        if end == start + 2 * window:
            ended = _exits(clusters)
        sim.run(cycles=end)
        marks.append(time.process_time())
        counts.append((sum(c.n_compiled_batches for c in clusters), graph.questions))
    ended = {reason: n - ended.get(reason, 0) for reason, n in sorted(_exits(clusters).items())
             if n > ended.get(reason, 0)}
    fmas = 256 * chiplets * 1024 * 1024  # m x n x k: one FMA per core and cycle at best
    return {"chiplets": chiplets, "clusters": len(clusters), "elaborate_s": built - started,
            "least_cycles": fmas // sum(c.cores for c in clusters),
            "first_s": marks[1] - marks[0], "next_s": marks[2] - marks[1], "window": window, "start": start,
            "batches": counts[2][0] - counts[1][0], "questions": counts[2][1] - counts[1][1], "ended": ended,
            "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def split_run(chiplets: int, processes: int, gemm_k: int) -> dict:
    """The issue's GEMM with ``gemm_k`` on ``chiplets`` full chiplets, to the end, in one
    process (``processes`` 1) or split into ``processes``: wall and CPU seconds (this process
    and its forked parts), cycles, and a digest of every statistic."""
    import hashlib
    import time

    from archmodel.kernel import Simulator
    from archmodel.kernel.partition import Declined, run_partitioned, split

    top = load_package(chiplets, gemm_k)
    wall, cpu = time.perf_counter(), time.process_time()
    if processes == 1:
        sim = Simulator(top)
        end_ps = sim.run().time_ps
        figures = {stat.path: stat.summary() for stat in sim.all_stats()}
    else:
        run = run_partitioned(top, split(top, processes), lambda tree, part: Simulator(tree, partition=part))
        if isinstance(run, Declined):
            raise SystemExit(f"the split run declined: {run.why}")
        end_ps = run.time_ps
        figures = {path: stat.summary() for path, stat in run.statistics.items()}
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    digest = hashlib.sha256(json.dumps(figures, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return {"chiplets": chiplets, "processes": processes, "cycles": end_ps // 1000 + 1,
            "wall_s": time.perf_counter() - wall,
            "cpu_s": time.process_time() - cpu + children.ru_utime + children.ru_stime, "statistics": digest}


def load_package(chiplets: int, gemm_k: int):
    """The package of ``chiplets`` full chiplets with the issue's GEMM (its 256 rows of C per die) of depth ``gemm_k``."""
    from archmodel.lang.elaborate import load

    return load(data_path("topologies") / "manticore.arch",
                params={"kernel": '"gemm_tiled"', "chiplets": str(chiplets), "gemm_m": str(256 * chiplets),
                        "gemm_k": str(gemm_k)}).top


def split_table(counts: list, processes: int, gemm_k: int) -> list:
    """Print the table of ``--split`` and return its rows."""
    rows = []
    print(f"The issue's GEMM with k = {gemm_k} on full chiplets, to the end: one process, then split into "
          f"{processes} (a fresh process each; CPU: every process of the run)")
    print(f"{'chiplets':>8} {'processes':>9} {'cycles':>8} {'wall s':>8} {'CPU s':>8} {'wall x':>7} {'statistics':>12}")
    for count in counts:
        one = _fresh(f"split_run({count}, 1, {gemm_k})")
        parts = _fresh(f"split_run({count}, {processes}, {gemm_k})")
        for r in (one, parts):
            print(f"{r['chiplets']:>8} {r['processes']:>9} {r['cycles']:>8} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} "
                  f"{one['wall_s'] / r['wall_s']:>7.2f} {r['statistics']:>12}")
        if (one["cycles"], one["statistics"]) != (parts["cycles"], parts["statistics"]):
            raise SystemExit("the split run's cycles or statistics differ from the one-process run's")
        rows += [one, parts]
    return rows


def _exits(clusters: list) -> dict:
    """Why the clusters' compiled batches ended so far, added up (``SnitchCluster.compiled_exits``)."""
    total: dict = {}
    for cluster in clusters:
        for reason, n in cluster.compiled_exits.items():
            total[reason] = total.get(reason, 0) + n
    return total


def _fresh(call: str) -> dict:
    """``call`` (an expression of this module) evaluated in a fresh process, so its peak memory is its own."""
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import manticore; print(json.dumps(manticore.{call}))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def package_table(counts: list, window: int, start: int = 0) -> list:
    """Print the table of ``--package`` and return its rows."""
    rows = [_fresh(f"package_window({count}, {window}, {start})") for count in counts]
    print(f"The issue's GEMM (1024^3 FP64, gemm_tiled) on full chiplets: two windows of {window} cycles each "
          f"from cycle {start}, CPU time, a fresh process each")
    print(f"{'chiplets':>8} {'clusters':>8} {'elab CPU s':>10} {'first CPU s':>11} {'next CPU s':>10} "
          f"{'ms/cycle':>8} {'batches':>8} {'questions':>9} {'max RSS MiB':>11}")
    for r in rows:
        print(f"{r['chiplets']:>8} {r['clusters']:>8} {r['elaborate_s']:>10.2f} {r['first_s']:>11.2f} "
              f"{r['next_s']:>10.2f} {1e3 * r['next_s'] / window:>8.2f} {r['batches']:>8} {r['questions']:>9} "
              f"{r['maxrss_mib']:>11.0f}")
    print("(batches: the clusters' compiled batches, each a tick, and questions: lookahead questions, both in "
          "the second window)")
    for r in rows:
        print(f"{r['chiplets']} chiplet(s), why the second window's batches ended: " +
              ", ".join(f"{reason} {n:,}" for reason, n in r["ended"].items()) +
              " (dma: at the port's take bound, the DMA's next burst waiting; end: at the lookahead horizon or "
              "the window's end; fp, integer: a core needing the Python model)")
    for r in rows:
        hours = r["least_cycles"] * r["next_s"] / window / 3600
        print(f"extrapolation, not a measurement: {r['chiplets']} chiplet(s), the whole GEMM at least "
              f"{r['least_cycles']:,} cycles (every core an FMA per cycle), so at least {hours:.1f} h of CPU "
              "at the second window's rate")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="8 clusters, and 1 and 2 chiplets only")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--repeats", type=int, default=5, help="compiled quadrant runs (the median is reported)")
    parser.add_argument("--package", action="store_true", help="the issue's GEMM on full chiplets, in windows")
    parser.add_argument("--window", type=int, default=1000, help="cycles per window of --package")
    parser.add_argument("--chiplets", type=int, nargs="+", default=[1, 2, 4], help="chiplet counts of --package")
    parser.add_argument("--start", type=int, default=0, help="cycles --package runs before its windows (the first "
                        "tiles take about 26,000 cycles to arrive on one chiplet)")
    parser.add_argument("--split", action="store_true", help="the GEMM to the end in one process and split")
    parser.add_argument("--processes", type=int, default=2, help="processes of --split")
    parser.add_argument("--gemm-k", type=int, default=128, help="the GEMM's k in --split")
    args = parser.parse_args()
    if args.split:
        rows = split_table(args.chiplets if args.chiplets != [1, 2, 4] else [2, 4], args.processes, args.gemm_k)
        if args.json:
            with open(args.json, "w") as out:
                json.dump({"split": rows}, out, indent=2)
        return
    if args.package:
        rows = package_table(args.chiplets, args.window, args.start)
        if args.json:
            with open(args.json, "w") as out:
                json.dump({"package": rows}, out, indent=2)
        return
    quadrant, compiled = quadrant_table(8 if args.quick else 32, args.repeats)
    print(f"One quadrant running GEMM (n = 64, k = 128, 64 rows of C per cluster), target {TARGET / 1e6:.0f}M")
    print(f"{'engine':<10} {'clusters':>8} {'cores':>6} {'cycles':>8} {'CPU s':>7} {'Mcore-cycles/CPU s':>19} "
          f"{'ratio':>6} {'mean batch':>10} {'target':>7}")
    python_rate = quadrant[1][1]["rate"]
    for engine, r in quadrant:
        print(f"{engine:<10} {r['clusters']:>8} {r['cores']:>6} {r['cycles']:>8} {r['run_s']:>7.2f} "
              f"{r['rate'] / 1e6:>19.2f} {r['rate'] / python_rate:>6.2f} {r['batch']:>10.1f} "
              f"{'met' if r['rate'] >= TARGET else 'unmet':>7}")
    print(f"(compiled: the run of median CPU time of {len(compiled)}; every run's Mcore-cycles/CPU s: " +
          ", ".join(f"{r['rate'] / 1e6:.2f}" for r in compiled) + ")")
    counts = (1, 2) if args.quick else (1, 2, 4)
    chiplets = [(c, _child(c)) for c in counts]
    base = chiplets[0][1]
    print("\nWhat one more chiplet costs (2 clusters per chiplet, compiled, a fresh process each)")
    print(f"{'chiplets':>8} {'clusters':>8} {'cycles':>8} {'elab CPU s':>10} {'run CPU s':>10} {'max RSS MiB':>11} "
          f"{'run x':>6} {'RSS x':>6}")
    for count, r in chiplets:
        print(f"{count:>8} {r['clusters']:>8} {r['cycles']:>8} {r['elaborate_s']:>10.2f} {r['run_s']:>10.2f} "
              f"{r['maxrss_mib']:>11.0f} {r['run_s'] / base['run_s']:>6.2f} {r['maxrss_mib'] / base['maxrss_mib']:>6.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"quadrant": quadrant, "compiled_runs": compiled, "chiplets": chiplets}, out, indent=2)


if __name__ == "__main__":
    main()
