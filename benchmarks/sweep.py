"""Design-space sweeps on Dask: what a second worker process buys, and what Dask costs a point.

    python benchmarks/sweep.py            # 40 points of topologies/mesh8x8.arch, 400 trivial points
    python benchmarks/sweep.py --quick    # 6 short mesh points, 60 trivial points (the smoke test)

1. The same 40 points of ``topologies/mesh8x8.arch`` (offered rate 0.01 .. 0.40, BookSim's
   uniform traffic, the per-component network) on 1 and on 2 local Dask worker processes, in
   one run: points per second of wall time, the ratio, how many points were running at a
   time on average (the points' own wall time over the sweep's: what Dask keeps busy), the
   CPU time of the points (summed
   over the workers, from each row's ``cpu_s``), how many CPUs the workers kept busy (point
   CPU time over wall time: on a host that other jobs load, a second worker only helps as
   far as it gets a second CPU) and the CPU time of this driver process. Each cluster is
   started and its workers have loaded the models and elaborated the system once before the
   clock starts (the start-up is printed apart). The two runs must give the same rows (timing columns aside), or the
   benchmark stops.
2. The scheduling overhead per point: a trivial system (one message from a source to a sink)
   swept over a parameter it ignores, in this process (no Dask), on 1 worker and on 2: the
   difference of wall time per point between 1 worker and this process is what Dask adds to
   each point (submission, a round trip to the scheduler and a worker, the row coming back).

The host is shared (its load average is printed), so wall-time ratios carry its noise; the
CPU columns do not, and after part 1 the benchmark measures what the host gives two
processes at that moment (the same fixed loop in two processes at once against one).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from archmodel.experiments import TIMING_COLUMNS, Executor, Sweep, parse_axis  # noqa: E402

TRIVIAL = """// One message from a source to a sink; 'point' is only there to be swept.
system Trivial(point: int = 0) {
    src  : Source(count = 1)
    sink : Sink(stop_after = 1)
    src.out -> sink.inp
}
"""


def warm(spec: Sweep) -> None:
    """What a worker does once before its first point: check (and so elaborate) the sweep."""
    spec.plan()


def timed_run(spec: Sweep, workers: int) -> dict:
    """Run the sweep on ``workers`` local worker processes (0: in this process), the cluster
    started and warm before timing; returns the rows and the measurements."""
    plan = spec.plan()
    started = time.perf_counter()
    with Executor(workers=workers) as cluster:
        if cluster.client is not None:
            # every worker loads the models and builds the .arch parser now, not in its first point
            cluster.client.run(warm, spec)
        startup = time.perf_counter() - started
        wall, cpu = time.perf_counter(), time.process_time()
        result = spec.run(None, executor=Executor(client=cluster.client) if cluster.client else cluster, plan=plan)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if len(result.rows) != len(plan.points):
        raise SystemExit(f"{len(result.rows)} rows for {len(plan.points)} points")
    return {"rows": result.rows, "wall": wall, "driver_cpu": cpu, "startup": startup,
            "point_cpu": sum(r["cpu_s"] for r in result.rows), "point_wall": sum(r["wall_s"] for r in result.rows)}


def spin(count: int) -> float:
    """A fixed amount of pure-Python work; returns the wall seconds it took."""
    started = time.perf_counter()
    total = 0
    for i in range(count):
        total += i * i
    return time.perf_counter() - started


def host_parallelism(count: int) -> float:
    """What the host gives two processes now: the throughput of two processes doing the same
    fixed work at once over that of one alone (2.0 on two idle cores)."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(spin, [1000, 1000])  # both processes started before the clock
        alone = pool.apply(spin, (count,))
        started = time.perf_counter()
        pool.map(spin, [count, count], chunksize=1)
        together = time.perf_counter() - started
    return 2 * alone / together


def untimed(rows: list[dict]) -> list[dict]:
    """The rows without the columns that differ between two runs of the same point."""
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


def scaling(points: int, sample: int) -> None:
    """Part 1: the same mesh points on 1 and 2 workers."""
    rates = f"rate=0.01:{points / 100:.2f}:0.01"
    spec = Sweep(str(ROOT / "topologies" / "mesh8x8.arch"), [parse_axis(rates)], {"sample": str(sample)})
    print(f"{points} points of topologies/mesh8x8.arch ({rates}, sample={sample})")
    print(f"{'workers':>7} {'start s':>8} {'wall s':>8} {'points/s':>9} {'in flight':>10} {'point CPU s':>12} "
          f"{'CPUs busy':>10} {'driver CPU s':>13} {'ratio':>6}")
    runs = {}
    for workers in (1, 2):
        run = runs[workers] = timed_run(spec, workers)
        ratio = f"{runs[1]['wall'] / run['wall']:.2f}x" if workers == 2 else ""
        print(f"{workers:>7} {run['startup']:8.1f} {run['wall']:8.2f} {points / run['wall']:9.2f} "
              f"{run['point_wall'] / run['wall']:10.2f} "
              f"{run['point_cpu']:12.2f} {run['point_cpu'] / run['wall']:10.2f} {run['driver_cpu']:13.2f} {ratio:>6}",
              flush=True)
    if untimed(runs[1]["rows"]) != untimed(runs[2]["rows"]):
        raise SystemExit("1 and 2 workers gave different rows")
    print("rows of 1 and 2 workers: identical (timing columns aside)")
    print(f"the host gave 2 processes {host_parallelism(5_000_000 if points < 40 else 30_000_000):.2f}x the "
          "throughput of 1 just after (a fixed Python loop in each)")


def overhead(points: int) -> None:
    """Part 2: per-point cost of Dask with a system that costs almost nothing to run."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trivial.arch"
        path.write_text(TRIVIAL)
        spec = Sweep(str(path), [parse_axis(f"point=1:{points}:1")])
        print(f"\n{points} points of a trivial system (one message, source to sink)")
        print(f"{'where':>16} {'wall s':>8} {'ms/point':>9} {'in-point ms':>12} {'driver CPU ms/point':>20}")
        per_point = {}
        for workers, where in ((0, "this process"), (1, "1 Dask worker"), (2, "2 Dask workers")):
            run = timed_run(spec, workers)
            per_point[workers] = 1000 * run["wall"] / points
            print(f"{where:>16} {run['wall']:8.2f} {per_point[workers]:9.2f} {1000 * run['point_wall'] / points:12.2f} "
                  f"{1000 * run['driver_cpu'] / points:20.2f}", flush=True)
        print(f"Dask's cost per point: {per_point[1] - per_point[0]:.2f} ms (1 worker against this process)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 short mesh points and 60 trivial ones")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.quick:
        scaling(6, 100)
        overhead(60)
    else:
        scaling(40, 300)
        overhead(400)


if __name__ == "__main__":
    main()
