"""Cell-free fronthaul on radio stripes: speed of the timing and signal level, and a sweep of the
sum rate and slot latency over link capacity C and the number of stripes M.

    python benchmarks/fronthaul.py [--quick] [--no-gains] [--no-frames] [--sweep [--no-speed]] [--slots N] [--png FILE] [--csv FILE]

**Speed.** ``topologies/radio_stripes.arch`` with 64 APs x 4 antennas and 16 users on 8
stripes of 8, 1000 TDD slots of 1 ms (14 frames per AP and slot), timing and signal level in
one run, with and without in-network processing: build time and run time in process CPU
seconds, component ticks, frames carried by the links, and the sum rates as a check (the
decoded INP rate must equal the scene's reference). Each scheme runs twice: frames sent ahead
in trains (``engine = "auto"``) and every frame a message on every link (``engine =
"frames"``, the reference); their summaries must be equal, and the ratio of their CPU times is
printed. ``--no-frames`` skips the reference runs.

**INP gain against capacity** (unless ``--no-gains``). 16 APs x 4 antennas, 8 users, on 4
stripes of 4, 2 of 8 and the bus, C from 25 Mbit/s to 12.8 Gbit/s, six user drops (seeds 0 to
5) of 3 slots each: INP's gain over the no-INP baseline (mean, least and most over the drops)
beside the mean sum rates. One run per point and drop: the CP computes both schemes' rates for
the same channels, each budgeted as its APs would be (frame headers included). Then, at the
signal level, where the gain comes from (:func:`low_capacity`): INP beside the equal-split
baseline, a baseline whose CP-side link's bits are water-filled over the stripe, and the
cut-set bound M c, on the 400 m square and a sparse 2 km one, with the gain's limit as c -> 0.

**Sweep** (``--sweep``). 16 APs, 8 users, the star (M = 16), 4 stripes of 4 and the bus
(M = 1), C from 25 Mbit/s to 3.2 Gbit/s (20 MHz: 1.25 to 160 bit/s/Hz per link): per point
the sum rate with and without INP beside the unlimited-fronthaul rate, INP's gain, and the
slot latency (mean, p99) of each scheme; the table is printed, written as CSV, and plotted.
Each point is two runs of the same ``.arch`` file with ``-p`` style parameters, what a generic
``archmodel sweep`` over C and M would do.
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

from archmodel.kernel import Simulator
from archmodel.lang import load
from archmodel.paths import data_path

SYSTEM = data_path("topologies") / "radio_stripes.arch"


def run_point(params: dict, seed: int = 0) -> tuple[dict, dict]:
    """Build and run ``radio_stripes.arch`` with ``params`` (name -> .arch expression); the
    network's summary and the run's cost."""
    started = time.process_time()
    top = load(SYSTEM, params={k: str(v) for k, v in params.items()}).top
    sim = Simulator(top, seed=seed)
    built = time.process_time()
    sim.run()
    ran = time.process_time()
    network = next(c for c in top.walk() if c.model_name == "FronthaulNetwork")
    frames = sum(link.frames.value for link in network.links)
    return network.summary(), {"build_s": built - started, "run_s": ran - built, "ticks": sim.ticks, "frames": frames}


def speed(slots: int, frames: bool = True) -> None:
    """The speed table: INP and no INP with frames sent ahead in trains (engine auto), each
    beside the frame-by-frame engine on the same system (unless not ``frames``), whose
    figures must be the same."""
    print(f"64 APs x 4 antennas, 16 users, 8 stripes of 8, {slots} slots of 1 ms (timing and signal level)")
    print(f"{'scheme':<16} {'build s':>8} {'run s':>8} {'ticks':>10} {'frames':>10} {'slots/s':>8} "
          f"{'sum rate':>9} {'no-INP':>8} {'unlimited':>9} {'latency us':>10}")
    runs = {}
    schemes = [("INP trains", "true", '"auto"'), ("INP frames", "true", '"frames"'),
               ("no INP trains", "false", '"auto"'), ("no INP frames", "false", '"frames"')]
    for label, inp, engine in schemes if frames else schemes[::2]:
        params = dict(aps=64, M=8, L=8, users=16, antennas=4, slots=slots, inp=inp, engine=engine)
        summary, cost = run_point(params)
        if inp == "true":
            assert abs(summary["sum_rate"] - summary["sum_rate_inp"]) < 1e-9 * summary["sum_rate_inp"]
        total = cost["build_s"] + cost["run_s"]
        runs[label] = summary, total
        print(f"{label:<16} {cost['build_s']:8.2f} {cost['run_s']:8.2f} "
              f"{cost['ticks']:10d} {cost['frames']:10d} {summary['slots'] / total:8.1f} "
              f"{summary['sum_rate']:9.2f} {summary['sum_rate_no_inp']:8.2f} {summary['sum_rate_unlimited']:9.2f} "
              f"{summary['latency_us']:10.1f}", flush=True)
    for scheme in ("INP", "no INP") if frames else ():
        (trains, fast), (each, slow) = runs[f"{scheme} trains"], runs[f"{scheme} frames"]
        assert trains == each, f"{scheme}: the trains engine must give the frame-by-frame figures"
        print(f"{scheme}: frames / trains CPU time {slow / fast:.2f}x (same figures)")


def gains(slots: int, seeds=range(6), capacities=(25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800),
          layouts=((4, 4), (2, 8), (1, 16))) -> None:
    """INP's gain over the no-INP baseline against C, per layout, over user drops ``seeds``."""
    print(f"INP gain over no INP, 16 APs x 4 antennas, 8 users, {len(seeds)} user drops x {slots} slots per point")
    print(f"{'M':>3} {'L':>3} {'C Mbit/s':>9} {'gain %':>7} {'least':>7} {'most':>7} "
          f"{'INP':>7} {'no INP':>7} {'unlim.':>7}")
    for m, l in layouts:
        for c in capacities:
            points = [run_point(dict(aps=m * l, M=m, L=l, slots=slots, C=f"{c} Mbit/s"), seed=seed)[0]
                      for seed in seeds]
            gain = [p["inp_gain"] for p in points]
            mean = {key: sum(p[key] for p in points) / len(points)
                    for key in ("sum_rate_inp", "sum_rate_no_inp", "sum_rate_unlimited")}
            print(f"{m:3d} {l:3d} {c:9d} {sum(gain) / len(gain):7.1f} {min(gain):7.1f} {max(gain):7.1f} "
                  f"{mean['sum_rate_inp']:7.2f} {mean['sum_rate_no_inp']:7.2f} {mean['sum_rate_unlimited']:7.2f}",
                  flush=True)


def low_capacity(seeds=range(4), slots: int = 2, sides=(400.0, 2000.0), layouts=((4, 4), (1, 16)),
                 capacities=(0.125, 0.5, 2.0, 8.0, 32.0, 128.0, 512.0)) -> None:
    """Where INP's gain comes from, at the signal level (no headers), c in bit/s/Hz per link:
    INP, the equal-split baseline (c / L per AP), the same per-AP compression with the
    CP-side link's bits water-filled over the stripe, the cut-set bound M c, both gains, and
    the gain's limit as c -> 0 (the ratio of the first-bit slopes s / (1 + s) of each
    stripe's best AP and of its mean AP), on the network's 400 m square and a sparse 2 km one."""
    import numpy as np

    from archmodel.models.fronthaul import RadioScene, radio_stripes, signal, stripe_layout
    from archmodel.models.fronthaul.stripes import place

    print(f"Signal level, 16 APs x 4 antennas, 8 users, {len(seeds)} user drops x {slots} slots; "
          "gain over the equal split (c / L per AP) and over the water-filled split")
    print(f"{'side m':>6} {'M':>3} {'L':>3} {'c b/s/Hz':>8} {'INP':>7} {'equal':>7} {'filled':>7} {'M c':>7} "
          f"{'gain %':>7} {'vs filled':>9}")
    for side in sides:
        for m, l in layouts:
            positions, _ = place(stripe_layout(radio_stripes(m, l)), side)
            total = np.zeros((3, len(capacities)))
            slopes_best = slopes_mean = 0.0
            for seed in seeds:
                scene = RadioScene(positions, users=8, antennas=4, side_m=side, height_m=10.0, power_dbm=20.0,
                                   noise_dbm=signal.noise_dbm(20e6, 7.0), seed=seed, name="fh")
                for slot in range(slots):
                    channels = scene.channels(slot)
                    stripes = channels.reshape(m, l, *channels.shape[1:])
                    strongest = np.linalg.eigvalsh(stripes @ signal.hermitian(stripes))[..., -1]
                    first_bit = strongest / (1 + strongest)
                    slopes_best += first_bit.max(axis=1).sum()
                    slopes_mean += first_bit.mean(axis=1).sum()
                    for i, c in enumerate(capacities):
                        total[:, i] += [
                            signal.sum_rate(signal.stripe_sequential(stripes, c).information().sum(axis=0)),
                            signal.sum_rate(signal.per_ap_compressed(channels, c / l).information().sum(axis=0)),
                            signal.sum_rate(signal.per_ap_routed_jointly(stripes, c).information().sum(axis=0))]
            inp, equal, filled = total / (len(seeds) * slots)
            for i, c in enumerate(capacities):
                print(f"{side:6.0f} {m:3d} {l:3d} {c:8g} {inp[i]:7.3f} {equal[i]:7.3f} {filled[i]:7.3f} {m * c:7.2f} "
                      f"{100 * (inp[i] / equal[i] - 1):7.1f} {100 * (inp[i] / filled[i] - 1):9.1f}")
            print(f"{side:6.0f} {m:3d} {l:3d} {'c -> 0':>8}: gain over the equal split tends to "
                  f"{100 * (slopes_best / slopes_mean - 1):.1f}%", flush=True)


CAPACITIES_MBPS = (25, 50, 100, 200, 400, 800, 1600, 3200)
LAYOUTS = ((16, 1), (4, 4), (1, 16))
FIELDS = ("M", "L", "C_mbps", "sum_rate_inp", "sum_rate_no_inp", "sum_rate_unlimited", "inp_gain",
          "latency_inp_us", "latency_inp_p99_us", "latency_no_inp_us", "latency_no_inp_p99_us", "misses_inp",
          "misses_no_inp")


def sweep(slots: int, capacities=CAPACITIES_MBPS, layouts=LAYOUTS) -> list[dict]:
    """One row per (M, L, C): both schemes' sum rates and slot latencies."""
    print(f"16 APs x 4 antennas, 8 users, {slots} slots per point")
    print(f"{'M':>3} {'L':>3} {'C Mbit/s':>9} {'INP':>7} {'no INP':>7} {'unlim.':>7} {'gain %':>7} "
          f"{'lat INP us':>10} {'p99':>7} {'lat no-INP':>10} {'p99':>7}")
    rows = []
    for m, l in layouts:
        for c in capacities:
            base = dict(aps=m * l, M=m, L=l, slots=slots, C=f"{c} Mbit/s")
            inp, _ = run_point({**base, "inp": "true"})
            plain, _ = run_point({**base, "inp": "false"})
            row = dict(M=m, L=l, C_mbps=c, sum_rate_inp=inp["sum_rate"], sum_rate_no_inp=plain["sum_rate"],
                       sum_rate_unlimited=inp["sum_rate_unlimited"], inp_gain=100 * (inp["sum_rate"] / plain["sum_rate"] - 1),
                       latency_inp_us=inp["latency_us"], latency_inp_p99_us=inp["latency_p99_us"],
                       latency_no_inp_us=plain["latency_us"], latency_no_inp_p99_us=plain["latency_p99_us"],
                       misses_inp=inp["deadline_misses"], misses_no_inp=plain["deadline_misses"])
            rows.append(row)
            print(f"{m:3d} {l:3d} {c:9d} {row['sum_rate_inp']:7.2f} {row['sum_rate_no_inp']:7.2f} "
                  f"{row['sum_rate_unlimited']:7.2f} {row['inp_gain']:7.1f} {row['latency_inp_us']:10.1f} "
                  f"{row['latency_inp_p99_us']:7.1f} {row['latency_no_inp_us']:10.1f} {row['latency_no_inp_p99_us']:7.1f}",
                  flush=True)
    return rows


def plot(rows: list[dict], path: Path) -> None:
    """Sum rate and slot latency against C, one colour per M."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rates, latency) = plt.subplots(1, 2, figsize=(11, 4.2))
    for (m, l), colour in zip(sorted({(r["M"], r["L"]) for r in rows}, reverse=True), ("C0", "C1", "C2", "C3")):
        mine = [r for r in rows if (r["M"], r["L"]) == (m, l)]
        c = [r["C_mbps"] for r in mine]
        label = f"M={m}, L={l}"
        rates.plot(c, [r["sum_rate_inp"] for r in mine], "o-", color=colour, label=f"{label} INP")
        rates.plot(c, [r["sum_rate_no_inp"] for r in mine], "s--", color=colour, label=f"{label} no INP")
        latency.plot(c, [r["latency_inp_us"] for r in mine], "o-", color=colour, label=f"{label} INP")
        latency.plot(c, [r["latency_no_inp_us"] for r in mine], "s--", color=colour, label=f"{label} no INP")
    rates.plot(c, [r["sum_rate_unlimited"] for r in mine], ":", color="grey", label="unlimited fronthaul")
    for axis in (rates, latency):
        axis.set_xscale("log")
        axis.set_xlabel("link capacity C (Mbit/s)")
    rates.set_ylabel("sum rate (bit/s/Hz)")
    latency.set_ylabel("slot latency (us)")
    latency.set_yscale("log")
    rates.legend(fontsize=7)
    fig.suptitle("cell-free uplink, 16 APs: radio stripes between star and bus")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few slots (a smoke test)")
    parser.add_argument("--slots", type=int, help="slots of the speed run (default 1000; --quick 20)")
    parser.add_argument("--sweep", action="store_true", help="also sweep C and M, print, write CSV and PNG")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed table")
    parser.add_argument("--no-frames", action="store_true", help="speed table without the frame-by-frame runs")
    parser.add_argument("--no-gains", action="store_true", help="skip the table of INP gain against capacity")
    parser.add_argument("--csv", default="waves/fronthaul-sweep.csv")
    parser.add_argument("--png", default="waves/fronthaul-sweep.png")
    args = parser.parse_args()
    if not args.no_speed:
        speed(args.slots or (20 if args.quick else 1000), frames=not args.no_frames)
    if not args.no_gains:
        if args.quick:
            gains(2, seeds=range(2), capacities=(50, 800, 12800), layouts=((4, 4), (1, 16)))
            low_capacity(seeds=range(1), slots=1, capacities=(0.5, 32.0))
        else:
            gains(3)
            low_capacity()
    if args.sweep:
        rows = sweep(3 if args.quick else 20, capacities=(50, 400, 3200) if args.quick else CAPACITIES_MBPS)
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        plot(rows, Path(args.png))
        print(f"sweep: {args.csv} and {args.png}")


if __name__ == "__main__":
    main()
