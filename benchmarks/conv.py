"""Lowered input sizes and Snitch-cluster cycles per layer per method (direct, im2col, MEC,
CPO, CPS) for a network, the density where CPO/CPS overtake im2col, and the time it all takes.

    python benchmarks/conv.py [--network resnet50] [--density 0.4] [--seed 0] [--slice 16]
                              [--skip-sizes] [--skip-network] [--skip-crossover] [--skip-slices]
                              [--arch topologies/conv_network_hbm.arch] [--json out.json] [--indirect]

Tables, each measured in one run:

* **Per layer.** Every convolution of the network (batch 1, channels as published) with
  random ReLU-like activations of the given density: the KiB of each lowered input (FP64
  values, int32 indices and pointers), CPO's and CPS's compression against im2col, and the
  method with the smallest lowered input.
* **Density sweep.** The whole network's compression against im2col for MEC, CPO and CPS at
  densities from 1 to 0.05, for every bundled network.
* **The network on the cluster.** Every layer under every lowering on an 8-core cluster with
  a 64 B/cycle, 50-cycle memory, a slice of ``--slice`` steps scaled to the layer
  (:mod:`archmodel.workloads.conv.timing`, every run back to back in one simulation), the
  fastest method per layer and the totals; the CPU and wall time of the whole network.
* **Through a .arch file** (``--arch``). The same network by ``archmodel run FILE`` on the
  cluster and memory the file binds (``topologies/conv_network_hbm.arch``: an HBM2E
  pseudo-channel); its table, and the CPU and wall time.
* **Crossover.** For ResNet-50's 3x3 and 1x1 layer shapes, cycles of im2col, CPO and CPS and
  their FPU utilisation across densities, the share of CPO's and CPS's cycles the cores spend
  compacting the input (the rest is the SpMV, and DMA waits), and the density below which the
  faster of CPO/CPS beats im2col (interpolated between the densities measured).
* **Slices against whole layers.** The scaled cycles of a slice beside a whole-layer run.

``--indirect`` has CPO gather through the SSRs' indirection (:mod:`archmodel.workloads.conv.indirect`)
in the cluster tables.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from archmodel.workloads.conv import NETWORKS, activations, network, weights  # noqa: E402
from archmodel.workloads.conv.sizes import format_sizes, network_sizes, totals  # noqa: E402
from archmodel.workloads.conv.timing import format_timing, time_layer, time_network  # noqa: E402
from archmodel.workloads.conv.timing import totals as cycle_totals  # noqa: E402

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


CROSSOVER_LAYERS = ("res2a_2", "res3a_2", "res4a_2", "res5a_2", "res2a_1", "res3a_1", "res4b_1")
CROSSOVER_DENSITIES = (1.0, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1, 0.05)
SLICE_LAYERS = ("res3a_2", "res4b_1")


def crossover(seed: int, slice_steps: int, indirect: bool = False) -> tuple[list, str]:
    """Rows (layer, density, im2col, cpo, cps cycles and FPU %) and the table with each layer's
    crossover density."""
    layers = {l.name: l for l in network("resnet50")}
    rows, lines = [], [f"{'layer':<10}{'density':>8}{'im2col Mcyc':>13}{'cpo Mcyc':>10}{'cps Mcyc':>10}"
                       f"{'im2col FPU%':>13}{'cpo FPU%':>10}{'cps FPU%':>10}{'cpo cmp%':>10}{'cps cmp%':>10}"]
    found = []
    for name in CROSSOVER_LAYERS:
        layer = layers[name]
        w = weights(layer, seed)
        sweep_rows = []
        for density in CROSSOVER_DENSITIES:
            t = time_layer(layer, activations(layer, density, seed), w, ("im2col", "cpo", "cps"),
                           slice_steps=slice_steps, indirect=indirect)
            sweep_rows.append((name, density, *(t[m].cycles for m in ("im2col", "cpo", "cps")),
                               *(t[m].fpu_utilisation for m in ("im2col", "cpo", "cps")),
                               *(100 * t[m].compact_cycles / t[m].cycles for m in ("cpo", "cps"))))
            r = sweep_rows[-1]
            lines.append(f"{name:<10}{density:>8.2f}{r[2] / 1e6:>13.2f}{r[3] / 1e6:>10.2f}{r[4] / 1e6:>10.2f}"
                         f"{r[5]:>13.1f}{r[6]:>10.1f}{r[7]:>10.1f}{r[8]:>10.1f}{r[9]:>10.1f}")
        found.append((name, layer, _crossing(sweep_rows)))
        rows += sweep_rows
    lines.append("")
    for name, layer, density in found:
        shape = f"{layer.height}x{layer.width}x{layer.channels}, {layer.kernel_h}x{layer.kernel_w}x{layer.filters}"
        where = f"below density {density:.2f}" if density is not None else "at no density measured"
        lines.append(f"{name:<10} ({shape}): the faster of CPO/CPS beats im2col {where}")
    return rows, "\n".join(lines)


def _crossing(rows: list) -> float | None:
    """The density (interpolated) where min(cpo, cps) falls to im2col's cycles, sweeping down."""
    for hi, lo in zip(rows, rows[1:]):
        gap_hi, gap_lo = min(hi[3], hi[4]) - hi[2], min(lo[3], lo[4]) - lo[2]
        if gap_hi > 0 >= gap_lo:
            return lo[1] + (hi[1] - lo[1]) * (-gap_lo) / (gap_hi - gap_lo)
    if rows and min(rows[0][3], rows[0][4]) <= rows[0][2]:
        return rows[0][1]
    return None


def slices(seed: int, density: float, slice_steps: int) -> str:
    """Scaled slice cycles beside whole-layer cycles."""
    layers = {l.name: l for l in network("resnet50")}
    lines = [f"{'layer':<10}{'method':>8}{'slice Mcyc':>12}{'whole Mcyc':>12}{'error %':>9}{'CPU s':>8}"]
    for name in SLICE_LAYERS:
        layer = layers[name]
        x, w = activations(layer, density, seed), weights(layer, seed)
        for method in ("im2col", "cpo"):
            part = time_layer(layer, x, w, (method,), slice_steps=slice_steps)[method].cycles
            start = time.process_time()
            whole = time_layer(layer, x, w, (method,), slice_steps=None)[method].cycles
            lines.append(f"{name:<10}{method:>8}{part / 1e6:>12.2f}{whole / 1e6:>12.2f}"
                         f"{100 * (part - whole) / whole:>9.1f}{time.process_time() - start:>8.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--network", default="resnet50", choices=sorted(NETWORKS))
    parser.add_argument("--density", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--slice", type=int, default=16, help="steps per slice (0: whole layers)")
    parser.add_argument("--skip-sizes", action="store_true", help="leave out the size tables")
    parser.add_argument("--skip-network", action="store_true", help="leave out the network on the cluster")
    parser.add_argument("--skip-crossover", action="store_true", help="leave out the crossover sweep")
    parser.add_argument("--skip-slices", action="store_true", help="leave out slices against whole layers")
    parser.add_argument("--arch", type=Path, help="also run the network through this .arch file (archmodel run)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument("--indirect", action="store_true", help="CPO gathers through indirect streams")
    args = parser.parse_args()
    figures = {}
    if not args.skip_sizes:
        start = time.process_time()
        rows = network_sizes(network(args.network), args.density, seed=args.seed)
        print(f"{args.network}, density {args.density}, seed {args.seed}\n")
        print(format_sizes(rows), flush=True)
        sweep_rows, sweep_text = sweep(args.seed)
        print("\nwhole-network compression against im2col\n")
        print(sweep_text)
        print(f"\n{time.process_time() - start:.1f} s of CPU time", flush=True)
        figures["layers"] = [{"layer": r.layer.name, **{m: s.bytes for m, s in r.sizes.items()},
                              "smallest": r.smallest()} for r in rows]
        figures["sweep"] = [dict(zip(("network", "density", "mec", "cpo", "cps"), row)) for row in sweep_rows]
    if not args.skip_network:
        start, wall = time.process_time(), time.perf_counter()
        timed = time_network(network(args.network), args.density, seed=args.seed, slice_steps=args.slice or None,
                             progress=True, indirect=args.indirect)
        spent, wall = time.process_time() - start, time.perf_counter() - wall
        print(f"\n{args.network} on the cluster, density {args.density}, slices of {args.slice} steps\n")
        print(format_timing(timed), flush=True)
        print(f"\n{spent:.1f} s of CPU time, {wall:.0f} s of wall time for the network ({len(timed)} layers x 5 "
              "lowerings)")
        figures["cluster"] = {"cpu_s": spent, "totals": cycle_totals(timed),
                              "layers": [{"layer": r.layer.name, "chosen": r.chosen,
                                          **{m: t.cycles for m, t in r.methods.items()}} for r in timed]}
    if not args.skip_crossover:
        start = time.process_time()
        cross_rows, cross_text = crossover(args.seed, args.slice or None, args.indirect)
        print("\ncrossover: im2col against CPO/CPS on ResNet-50 layer shapes\n")
        print(cross_text, flush=True)
        print(f"\n{time.process_time() - start:.1f} s of CPU time")
        figures["crossover"] = [dict(zip(("layer", "density", "im2col", "cpo", "cps", "im2col_fpu", "cpo_fpu",
                                          "cps_fpu", "cpo_compact_pct", "cps_compact_pct"), row)) for row in cross_rows]
    if not args.skip_slices:
        print(f"\nslices of {args.slice} steps against whole layers, density {args.density}\n")
        print(slices(args.seed, args.density, args.slice), flush=True)
    if args.arch:
        from archmodel.cli import main as archmodel
        start, wall = time.process_time(), time.perf_counter()
        code = archmodel(["run", str(args.arch), "-q", "-p", f'network="{args.network}"', "-p", 'layers=""', "-p",
                          f"density={args.density}", "-p", f"seed={args.seed}", "-p", f"slice={args.slice}", "-p",
                          'plot=""'])
        spent, wall = time.process_time() - start, time.perf_counter() - wall
        print(f"\narchmodel run {args.arch}: exit {code}, {spent:.1f} s of CPU time, {wall:.0f} s of wall time",
              flush=True)
        figures["arch"] = {"file": str(args.arch), "exit": code, "cpu_s": spent, "wall_s": wall}
    if args.json:
        args.json.write_text(json.dumps({"network": args.network, "density": args.density, "seed": args.seed,
                                         **figures}, indent=1))


if __name__ == "__main__":
    main()
