"""Lowered input sizes per layer per method (direct, im2col, MEC, CPO, CPS) for a network.

    python benchmarks/conv.py [--network resnet50] [--density 0.4] [--seed 0] [--json out.json]

Two tables, each measured in one run:

* **Per layer.** Every convolution of the network (batch 1, channels as published) with
  random ReLU-like activations of the given density: the KiB of each lowered input (FP64
  values, int32 indices and pointers), CPO's and CPS's compression against im2col, and the
  method with the smallest lowered input. Sizes only: the Snitch-cluster timing of the
  lowerings is not modelled yet (issue 16, item 3).
* **Density sweep.** The whole network's compression against im2col for MEC, CPO and CPS at
  densities from 1 to 0.05, for every bundled network.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archmodel.workloads.conv import NETWORKS, network  # noqa: E402
from archmodel.workloads.conv.sizes import format_sizes, network_sizes, totals  # noqa: E402

SWEEP = (1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)


def sweep(seed: int) -> tuple[list, list]:
    """Rows (network, density, MEC x, CPO x, CPS x) and the text table."""
    rows = []
    for name in NETWORKS:
        for density in SWEEP:
            total = totals(network_sizes(network(name), density, seed=seed))
            rows.append((name, density, *(total["im2col"] / total[m] for m in ("mec", "cpo", "cps"))))
    lines = [f"{'network':<14}{'density':>8}{'MEC x':>8}{'CPO x':>8}{'CPS x':>8}"]
    lines += [f"{n:<14}{d:>8.2f}{a:>8.2f}{b:>8.2f}{c:>8.2f}" for n, d, a, b, c in rows]
    return rows, "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="resnet50", choices=sorted(NETWORKS))
    parser.add_argument("--density", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    start = time.process_time()
    rows = network_sizes(network(args.network), args.density, seed=args.seed)
    print(f"{args.network}, density {args.density}, seed {args.seed}\n")
    print(format_sizes(rows))
    sweep_rows, sweep_text = sweep(args.seed)
    print("\nwhole-network compression against im2col\n")
    print(sweep_text)
    print(f"\n{time.process_time() - start:.1f} s of CPU time")
    if args.json:
        args.json.write_text(json.dumps({
            "network": args.network, "density": args.density, "seed": args.seed,
            "layers": [{"layer": r.layer.name, **{m: s.bytes for m, s in r.sizes.items()}, "smallest": r.smallest()}
                       for r in rows],
            "sweep": [dict(zip(("network", "density", "mec", "cpo", "cps"), row)) for row in sweep_rows]}, indent=1))


if __name__ == "__main__":
    main()
