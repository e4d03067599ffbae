"""What the compiled Snitch cluster loop costs per call and per cycle.

    python benchmarks/cluster_loop.py [--cycles N] [--repeats R] [--json out.json]

The package GEMM runs its 512 clusters in short batches (7-8 cycles on average: the memory
tree and the HBM, shared by 128 clusters a chiplet, bound each cluster's horizon), so the
loop's cost per call weighs as much as its cost per cycle. This benchmark takes one
cluster of a small quadrant running the package's tiled GEMM (``manticore_quadrant.arch``,
4 clusters, ``kernel = "gemm_tiled"``) at three points of its run: waiting for its first
tiles (cores at the barrier, the DMA streaming), computing while the DMA streams the next
tiles, and computing alone (8 cores in FREP with SSR streams). At each it copies the
cluster's state into the loop's arrays (:class:`~archmodel.models.compute.compiled_state.Resident`)
and times, in process CPU time, the best of ``--repeats`` rounds (the state put back before
each):

* ``empty call``: a call that runs no cycle (``run(c, c)``): the entry, its arguments and the
  loop's setup;
* ``1 x N``: one call of N cycles, per cycle;
* ``N/8 x 8`` and ``N x 1``: calls of 8 cycles (about a package batch) and of 1, per cycle.

A cycle's DMA port part stays the loop's (a burst waiting to go out waits, as in a batch
the cluster sleeps through), so every call runs all its cycles; the table says so, with the
FPU operations the cycles issued, and a digest of the arrays after the cycles, which is the
same for the three ways of calling.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time

import numpy as np

from archmodel.kernel import Simulator
from archmodel.lang.elaborate import load
from archmodel.models.compute import SnitchCluster
from archmodel.models.compute.compiled_layout import C_N_FPU, D_SEND_FROM
from archmodel.models.compute.compiled_state import Resident
from archmodel.paths import data_path

POINTS = [("waiting for tiles", 1500), ("computing + DMA", 3500), ("computing", 10000)]
"""(what the cores do, the cycle) where the cluster's state is taken."""
NEVER_SEND = 1 << 62  # a D_SEND_FROM no cycle reaches: a burst waiting to go out stays waiting


def _quadrant():
    params = {"kernel": '"gemm_tiled"', "clusters": "4", "l1_radix": "4", "l2_radix": "1", "gemm_m": "64",
              "gemm_n": "128", "gemm_k": "512"}
    top = load(data_path("topologies") / "manticore_quadrant.arch", params=params).top
    return top, Simulator(top)


def _arrays(resident) -> list:
    """Every array of the resident state (the loop's arguments among them), TCDM included."""
    return [value for value in vars(resident).values() if isinstance(value, np.ndarray)]


def _digest(arrays: list) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()[:12]


def _timed(resident, start: int, cycles: int, step: int) -> tuple:
    """CPU seconds to run ``cycles`` cycles from ``start`` in calls of ``step`` (0: calls that
    run no cycle, ``cycles`` of them), and the cycles run."""
    ran = 0
    begun = time.process_time()
    if step == 0:
        for k in range(cycles):
            resident.run(start, start)
    else:
        for c in range(start, start + cycles, step):
            ran += resident.run(c, c + step)
    return time.process_time() - begun, ran


def measure(cycles: int, repeats: int) -> list:
    top, sim = _quadrant()
    cluster = next(p for p in top.walk() if isinstance(p, SnitchCluster))
    rows = []
    for name, at in POINTS:
        sim.run(cycles=at)
        start = cluster.domain.cycle_of(sim.now) + 1
        resident = Resident(cluster)
        resident.dm[D_SEND_FROM] = NEVER_SEND
        arrays = _arrays(resident)
        saved = [array.copy() for array in arrays]
        resident.run(start, start + 1)  # (compiles or loads the loop, finds its entry)
        row = {"point": name, "cycle": start}
        for label, step in (("empty call", 0), ("1 x N", cycles), ("N/8 x 8", 8), ("N x 1", 1)):
            best = None
            for _ in range(repeats):
                for array, copy in zip(arrays, saved):
                    np.copyto(array, copy)
                fpu = int(resident.cs[:, C_N_FPU].sum())
                cpu, ran = _timed(resident, start, cycles, step)
                best = cpu if best is None else min(best, cpu)
            if step:
                row[label] = {"us_per_cycle": 1e6 * best / cycles, "ran": ran,
                              "fpu": int(resident.cs[:, C_N_FPU].sum()) - fpu, "digest": _digest(arrays)}
            else:
                row[label] = {"us_per_call": 1e6 * best / cycles}
        for array, copy in zip(arrays, saved):
            np.copyto(array, copy)  # the simulation goes on from the state it left
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    rows = measure(args.cycles, args.repeats)
    print(f"One cluster of the tiled GEMM (8 compute cores + the DMA core), N = {args.cycles}, "
          f"best of {args.repeats}, process CPU time:")
    print(f"{'cores':<20} {'cycle':>6} {'empty call':>11} {'1 x N':>9} {'N/8 x 8':>9} {'N x 1':>9} "
          f"{'FPU ops':>8}  digest")
    for row in rows:
        figures = [row[label]["us_per_cycle"] for label in ("1 x N", "N/8 x 8", "N x 1")]
        digests = {row[label]["digest"] for label in ("1 x N", "N/8 x 8", "N x 1")}
        short = [label for label in ("1 x N", "N/8 x 8", "N x 1") if row[label]["ran"] != args.cycles]
        print(f"{row['point']:<20} {row['cycle']:>6} {row['empty call']['us_per_call']:>8.2f} us "
              + " ".join(f"{f:>6.2f} us" for f in figures)
              + f" {row['1 x N']['fpu']:>8}  {'/'.join(sorted(digests))}"
              + (f"  (ran fewer cycles: {', '.join(short)})" if short else ""))
    print("(empty call: per call; the others: per cluster-cycle)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
