"""Training traffic: one step of a GPT-style model under ZeRO-3, FCDP and FCDP+PEFT.

    python benchmarks/training.py [--quick] [--png FILE] [--csv FILE]

Three tables, all from ``topologies/training_cluster.arch`` (every number is simulated):

* **Speed.** 7B on 8 nodes x 8 GPUs (NVSwitch nodes, 80 GB GPUs, a 200 Gbit/s NIC per GPU
  on eight rails), each schedule: simulated step time, component ticks and process CPU time to
  elaborate and simulate it (the issue's target: all three under 30 s).
* **2 x 4 GPUs at 10, 25 and 100 GbE.** The commodity cluster (A100-PCIe-40GB behind a
  PCIe 4.0 switch, 25 GB/s between GPUs): step time per schedule, ZeRO-3 over FCDP, and
  the bytes each moves across nodes.
* **Step time against inter-node bandwidth** on the same 2 x 4 cluster for the three
  schedules, written as CSV and plotted to a PNG (log-log).

``--quick`` runs the 1.3B model, 2 x 4 only, three bandwidths (the smoke test).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from archmodel.kernel import Simulator
from archmodel.lang import load
from archmodel.paths import data_path

CLUSTER = data_path("topologies") / "training_cluster.arch"
SCHEDULES = ("zero3", "fcdp", "fcdp_peft")
DGX = {"nodes": "8", "gpus": "8", "intra_bandwidth": "300 GB/s", "gpu_memory": "80 GiB",
       "inter_bandwidth": "200 Gbit/s", "host_memory": "1024 GiB", "rails": "true"}


def step(model: str, schedule: str, **params) -> tuple:
    """(StepResult, ticks, CPU seconds) of one step on the cluster with ``params``."""
    started = time.process_time()
    given = {"model": f'"{model}"', "schedule": f'"{schedule}"', **params}
    top = load(CLUSTER, params=given).top
    sim = Simulator(top)
    outcome = sim.run()
    cpu = time.process_time() - started
    result = top.child("step").result()
    if outcome.reason != "quiescent" or not result.finished:
        raise SystemExit(f"{model} {schedule} {params}: the step did not finish ({outcome.reason})")
    return result, sim.ticks, cpu


def speed_table(model: str) -> None:
    print(f"\n{model} on 8 x 8 GPUs (NVSwitch nodes, a 200 Gbit/s NIC per GPU on 8 rails)")
    print(f"{'schedule':<10} {'step (ms)':>10} {'inter-node GB':>14} {'ticks':>9} {'CPU s':>7}")
    total = 0.0
    for schedule in SCHEDULES:
        result, ticks, cpu = step(model, schedule, **DGX)
        total += cpu
        print(f"{schedule:<10} {result.step_ps / 1e9:>10.1f} {result.link_bytes['inter-node'] / 1e9:>14.1f} "
              f"{ticks:>9,} {cpu:>7.2f}")
    print(f"{'all three':<10} {'':>10} {'':>14} {'':>9} {total:>7.2f}")


def bandwidth_sweep(model: str, rates: list[int]) -> dict:
    """Step time (ms) per schedule per inter-node rate (Gbit/s) on 2 x 4 GPUs."""
    table = {}
    for rate in rates:
        for schedule in SCHEDULES:
            result, _, _ = step(model, schedule, inter_bandwidth=f"{rate} Gbit/s")
            table[(rate, schedule)] = result
    return table


def print_gbe(model: str, table: dict, rates: list[int]) -> None:
    print(f"\n{model} on 2 x 4 GPUs (PCIe 4.0 switch, 25 GB/s between GPUs)")
    print(f"{'link':<9} {'ZeRO-3 ms':>10} {'FCDP ms':>9} {'PEFT ms':>9} {'ZeRO-3/FCDP':>12} "
          f"{'ZeRO-3 inter GB':>16} {'FCDP inter GB':>14} {'PEFT inter GB':>14}")
    for rate in rates:
        z, f, p = (table[(rate, s)] for s in SCHEDULES)
        print(f"{rate:>3} Gbit/s {z.step_ps / 1e9:>10.1f} {f.step_ps / 1e9:>9.1f} {p.step_ps / 1e9:>9.1f} "
              f"{z.step_ps / f.step_ps:>11.2f}x {z.link_bytes['inter-node'] / 1e9:>16.2f} "
              f"{f.link_bytes['inter-node'] / 1e9:>14.2f} {p.link_bytes['inter-node'] / 1e9:>14.3f}")


def write_curve(model: str, table: dict, rates: list[int], csv_path: Path, png_path: Path) -> None:
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["inter_gbit_s"] + [f"{s}_step_ms" for s in SCHEDULES])
        for rate in rates:
            writer.writerow([rate] + [f"{table[(rate, s)].step_ps / 1e9:.3f}" for s in SCHEDULES])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    labels = {"zero3": "ZeRO-3", "fcdp": "FCDP", "fcdp_peft": "FCDP + PEFT (1%)"}
    for schedule in SCHEDULES:
        axes.plot(rates, [table[(r, schedule)].step_ps / 1e9 for r in rates], marker="o", label=labels[schedule])
    compute = table[(rates[0], "zero3")].compute_ps / 1e9
    axes.axhline(compute, color="grey", linestyle=":", label="compute alone")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("inter-node bandwidth (Gbit/s)")
    axes.set_ylabel("step time (ms)")
    axes.set_title(f"{model}, 2 nodes x 4 GPUs: one training step")
    axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(png_path, dpi=120)
    plt.close(figure)
    print(f"\ncurve: {csv_path}  plot: {png_path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1.3B, 2 x 4 only, three bandwidths")
    parser.add_argument("--csv", default="waves/training_bandwidth.csv", help="where to write the curve")
    parser.add_argument("--png", default=None, help="where to plot it (default: the CSV path with .png)")
    args = parser.parse_args()
    model = "1.3b" if args.quick else "7b"
    if not args.quick:
        speed_table(model)
    gbe = [10, 25, 100]
    table = bandwidth_sweep(model, gbe)
    print_gbe(model, table, gbe)
    rates = gbe if args.quick else [10, 25, 50, 100, 200, 400]
    table.update(bandwidth_sweep(model, [r for r in rates if r not in gbe]))
    csv_path = Path(args.csv)
    write_curve(model, table, rates, csv_path, Path(args.png) if args.png else csv_path.with_suffix(".png"))


if __name__ == "__main__":
    main()
