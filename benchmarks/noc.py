"""On-chip network reference configurations of BookSim 2 (Jiang et al., ISPASS 2013), measured
the way BookSim measures (see /work/shared/VALIDATION.md): latency and accepted throughput
from 0.01 flits/node/cycle to past saturation, the saturation rate (average packet latency at
twice the zero-load latency), and the simulator's speed in router-cycles per second of processor
time (so that other work on a shared machine does not count against it).

    python benchmarks/noc.py            # all configurations (several minutes)
    python benchmarks/noc.py --quick    # fewer points, shorter windows
    python benchmarks/noc.py --only mesh8x8-2vc --pattern uniform --csv out.csv --png out.png
    python benchmarks/noc.py --engine components   # the per-component network (same numbers, slower)

Router as BookSim's reference: input queued, lookahead routing, VC allocation 1 cycle, switch
allocation 1, switch traversal 1, credit processing 2, iSLIP allocators, links 1 cycle (torus
2), injection and ejection 1 each, single-flit packets, Bernoulli injection, 3 warm-up periods,
then a sample period of 1000 cycles whose packets are tracked until they arrive. The network runs
on the network-level engine (``Noc(engine="fast")``), which a randomized test holds cycle-exact
to the per-component network.
Ideal DOR saturation on the 8x8 mesh: uniform 0.5, transpose 1/7 (0.143), bit-complement 0.25.
"""

from __future__ import annotations

import argparse
import time

from archmodel.models.network.measure import plot_png, run_point, saturation_rate, write_csv

ROUTER = dict(routing_delay=0, vc_alloc_delay=1, sw_alloc_delay=1, st_delay=1, credit_delay=2, allocator="islip",
              injection_latency=1, ejection_latency=1, packet_size=1, warmup_periods=3, sample_period=1000,
              occupancy_registers=False)

CONFIGS = {
    "mesh8x8-16vc": dict(topology="mesh(8, 8)", routing="dor", vcs=16, buffer_depth=8, link_latency=1),
    "mesh8x8-2vc": dict(topology="mesh(8, 8)", routing="dor", vcs=2, buffer_depth=4, link_latency=1),
    "torus4x4": dict(topology="torus(4, 2)", routing="dateline", vcs=2, buffer_depth=8, link_latency=2),
}
IDEAL = {("mesh8x8", "uniform"): 0.5, ("mesh8x8", "transpose"): 1 / 7, ("mesh8x8", "bitcomp"): 0.25}


def show(name: str, pattern: str, p: dict) -> None:
    print(f"{name:14} {pattern:10} {p['rate']:8.3f} {p['accepted']:9.4f} {p['packet_latency']:8.1f} "
          f"{p['network_latency']:8.1f} {str(p['stable']):>6} {p['router_cycles_per_s']:16,.0f}", flush=True)


def curve(name: str, pattern: str, step: float, drain: int, seed: int,
          engine: str = "fast") -> tuple[list[dict], float, float | None]:
    """Points from 0.01 upwards in ``step`` until two points are unstable or above 3x zero-load."""
    config = dict(CONFIGS[name], engine=engine)
    points = [run_point(0.01, seed=seed, traffic=pattern, drain_limit=drain, **config, **ROUTER)]
    show(name, pattern, points[0])
    zero = points[0]["packet_latency"]
    rate = step
    while rate < 1.0:
        point = run_point(round(rate, 4), seed=seed, traffic=pattern, drain_limit=drain, **config, **ROUTER)
        show(name, pattern, point)
        points.append(point)
        past = [p for p in points if not p["stable"] or p["packet_latency"] > 3 * zero]
        if len(past) >= 2:
            break
        rate += step
    return points, zero, saturation_rate(points, zero)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="coarser steps and a shorter drain limit")
    parser.add_argument("--only", choices=sorted(CONFIGS), action="append", help="configurations to run")
    parser.add_argument("--pattern", action="append", choices=["uniform", "transpose", "bitcomp"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=["fast", "components"], default="fast",
                        help="network-level engine (default) or one kernel component per router")
    parser.add_argument("--csv", help="write the last curve as CSV")
    parser.add_argument("--png", help="plot the last curve as PNG")
    args = parser.parse_args(argv)
    step = 0.05 if args.quick else 0.025
    drain = 3000 if args.quick else 10000
    print(f"{'config':14} {'pattern':10} {'offered':>8} {'accepted':>9} {'pkt lat':>8} {'net lat':>8} "
          f"{'stable':>6} {'router-cycles/s':>16}")
    summary = []
    for name in args.only or CONFIGS:
        for pattern in args.pattern or ["uniform", "transpose", "bitcomp"]:
            started = time.perf_counter()
            points, zero, saturation = curve(name, pattern, step, drain, args.seed, args.engine)
            ideal = IDEAL.get((name.split("-")[0], pattern))
            peak = max(p["accepted"] for p in points)
            speeds = [p["router_cycles_per_s"] for p in points]
            summary.append((name, pattern, zero, saturation, peak, ideal, min(speeds), max(speeds),
                            time.perf_counter() - started))
            if args.csv:
                write_csv(points, args.csv)
            if args.png:
                plot_png(points, args.png, f"{name} {pattern}", zero)
    print()
    print(f"{'config':14} {'pattern':10} {'zero-load':>9} {'saturation':>10} {'peak accepted':>13} {'ideal':>6} "
          f"{'router-cycles/s (min..max)':>27} {'wall s':>7}")
    for name, pattern, zero, saturation, peak, ideal, low, high, wall in summary:
        sat = f"{saturation:.3f}" if saturation is not None else "-"
        print(f"{name:14} {pattern:10} {zero:9.1f} {sat:>10} {peak:13.3f} {f'{ideal:.3f}' if ideal else '-':>6} "
              f"{f'{low:,.0f} .. {high:,.0f}':>27} {wall:7.0f}")


if __name__ == "__main__":
    main()
