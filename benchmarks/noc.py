"""On-chip network reference configurations of BookSim 2 (Jiang et al., ISPASS 2013), measured
the way BookSim measures (see /work/shared/VALIDATION.md): latency and accepted throughput
from 0.01 flits/node/cycle to past saturation, the saturation rate (average packet latency at
twice the zero-load latency), and the simulator's speed in router-cycles per second of processor
time (so that other work on a shared machine does not count against it).

    python benchmarks/noc.py            # all configurations (several minutes)
    python benchmarks/noc.py --quick    # fewer points, shorter windows
    python benchmarks/noc.py --only mesh8x8-2vc --pattern uniform --csv out.csv --png out.png
    python benchmarks/noc.py --engine fast         # the network-level Python engine (same numbers, slower)
    python benchmarks/noc.py --engine components   # one kernel component per router (slowest)
    python benchmarks/noc.py --quick --versus 0.05 0.1 0.2   # compiled loop vs fast engine, CPU s

Router as BookSim's reference: input queued, lookahead routing, VC allocation 1 cycle, switch
allocation 1, switch traversal 1, credit processing 2, iSLIP allocators, links 1 cycle (torus
2), injection and ejection 1 each, single-flit packets, Bernoulli injection, 3 warm-up periods,
then a sample period of 1000 cycles whose packets are tracked until they arrive; every point
runs to the drain rule's verdict and the summary gives the last stable rate under it and under
BookSim's rule (running average latency over 500 cycles at a sample boundary). The meshes run
with 16 VCs x 8, 2 VCs x 4, and 2 VCs x 4 with the VC held until the tail's credit returns
(``wait_for_tail_credit``); the 4x4 torus with dateline routing (BookSim's ``dim_order_torus``)
with 2 VCs x 8, 16 VCs x 8 and 2 VCs x 4 flits. By default (``--engine auto``) every
configuration runs on the compiled network loop (``Noc(engine="compiled")``), and one it did
not support would run on the network-level Python engine (``engine="fast"``); randomized tests
hold the compiled loop to the fast engine and the fast engine to the per-component network,
packet for packet. The compiled loop is loaded (or compiled) before any timing starts.
The summary prints each curve beside its ideal saturation rate, the inverse of the heaviest
channel load under the routing (``ideal_saturation``; ties at k/2 split evenly): on the 8x8
mesh the published DOR bounds, uniform 0.5, transpose 1/7 (0.143), bit-complement 0.25; on the
4x4 torus uniform 1, transpose 2/3, bit-complement 1.
"""

from __future__ import annotations

import argparse
import time

from archmodel.kernel import ParameterError
from archmodel.experiments.network import ideal_saturation, plot_png, run_point, saturation_rate, write_csv

# stability="drain" runs every point to the drain rule's verdict, which also tells the latency
# rule's (BookSim's: it would have stopped at the first boundary past the threshold).
ROUTER = dict(routing_delay=0, vc_alloc_delay=1, sw_alloc_delay=1, st_delay=1, credit_delay=2, allocator="islip",
              injection_latency=1, ejection_latency=1, packet_size=1, warmup_periods=3, sample_period=1000,
              occupancy_registers=False, stability="drain")

CONFIGS = {
    "mesh8x8-16vc": dict(topology="mesh(8, 8)", routing="dor", vcs=16, buffer_depth=8, link_latency=1),
    "mesh8x8-2vc": dict(topology="mesh(8, 8)", routing="dor", vcs=2, buffer_depth=4, link_latency=1),
    "mesh8x8-2vc-tail": dict(topology="mesh(8, 8)", routing="dor", vcs=2, buffer_depth=4, link_latency=1,
                             wait_for_tail_credit=True),
    "torus4x4": dict(topology="torus(4, 2)", routing="dateline", vcs=2, buffer_depth=8, link_latency=2),
    "torus4x4-16vc": dict(topology="torus(4, 2)", routing="dateline", vcs=16, buffer_depth=8, link_latency=2),
    "torus4x4-2vc": dict(topology="torus(4, 2)", routing="dateline", vcs=2, buffer_depth=4, link_latency=2),
}


def show(name: str, pattern: str, p: dict) -> None:
    print(f"{name:16} {pattern:10} {p['rate']:8.3f} {p['accepted']:9.4f} {p['packet_latency']:8.1f} "
          f"{p['network_latency']:8.1f} {str(p['stable']):>6} {p['router_cycles_per_s']:16,.0f}", flush=True)


def first_point(name: str, pattern: str, drain: int, seed: int, engine: str) -> tuple[dict, str]:
    """The 0.01 point and the engine that ran it: ``auto`` tries the compiled loop and falls
    back to the fast engine for a configuration the loop does not support."""
    for choice in (["compiled", "fast"] if engine == "auto" else [engine]):
        try:
            point = run_point(0.01, seed=seed, traffic=pattern, drain_limit=drain, engine=choice,
                              **CONFIGS[name], **ROUTER)
        except ParameterError:
            if engine != "auto":
                raise
            continue
        return point, choice
    raise AssertionError("unreachable: the fast engine supports every configuration")


def curve(name: str, pattern: str, step: float, drain: int, seed: int,
          engine: str = "auto") -> tuple[list[dict], float, float | None, str]:
    """Points from 0.01 upwards in ``step`` until two points are unstable or above 3x zero-load."""
    first, engine = first_point(name, pattern, drain, seed, engine)
    config = dict(CONFIGS[name], engine=engine)
    points = [first]
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
    return points, zero, saturation_rate(points, zero), engine


def last_stable(points: list[dict], rule: str) -> float | None:
    """The highest offered rate below the first point ``rule`` judges unstable."""
    last = None
    for point in sorted(points, key=lambda p: p["rate"]):
        if not point[f"stable_{rule}"]:
            break
        last = point["rate"]
    return last


def versus(names, patterns, rates, drain: int, seed: int) -> None:
    """The compiled loop against the fast engine at the same points: CPU seconds of each and
    their ratio, and whether the figures agree (they must: the loop gives the same packets)."""
    print(f"{'config':16} {'pattern':10} {'rate':>6} {'compiled s':>10} {'fast s':>8} {'fast/compiled':>13} {'same':>5}")
    totals = {"compiled": 0.0, "fast": 0.0}
    for name in names:
        for pattern in patterns:
            for rate in rates:
                seconds, figures = {}, {}
                for engine in ("compiled", "fast"):
                    began = time.process_time()
                    point = run_point(rate, seed=seed, traffic=pattern, drain_limit=drain, engine=engine,
                                      **CONFIGS[name], **ROUTER)
                    seconds[engine] = time.process_time() - began
                    totals[engine] += seconds[engine]
                    figures[engine] = {k: v for k, v in point.items() if k != "router_cycles_per_s"}
                same = figures["compiled"] == figures["fast"]
                print(f"{name:16} {pattern:10} {rate:6.3f} {seconds['compiled']:10.2f} {seconds['fast']:8.2f} "
                      f"{seconds['fast'] / seconds['compiled']:13.1f} {str(same):>5}", flush=True)
    print(f"{'all':16} {'':10} {'':6} {totals['compiled']:10.2f} {totals['fast']:8.2f} "
          f"{totals['fast'] / totals['compiled']:13.1f}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="coarser steps and a shorter drain limit")
    parser.add_argument("--only", choices=sorted(CONFIGS), action="append", help="configurations to run")
    parser.add_argument("--pattern", action="append", choices=["uniform", "transpose", "bitcomp"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", choices=["auto", "compiled", "fast", "components"], default="auto",
                        help="compiled loop where supported, else the network-level engine (auto); "
                             "or one of them; or one kernel component per router")
    parser.add_argument("--csv", help="write the last curve as CSV")
    parser.add_argument("--png", help="plot the last curve as PNG")
    parser.add_argument("--versus", type=float, nargs="+", metavar="RATE",
                        help="instead of curves: the compiled loop against the fast engine at these rates")
    args = parser.parse_args(argv)
    step = 0.05 if args.quick else 0.025
    if args.engine in ("auto", "compiled"):
        run_point(0.01, seed=args.seed, traffic="uniform", drain_limit=100, engine="compiled",
                  **dict(CONFIGS["mesh8x8-2vc"], topology="mesh(2, 2)"), **dict(ROUTER, sample_period=10))
    drain = 3000 if args.quick else 10000
    if args.versus:
        names = args.only or list(CONFIGS)
        versus(names, args.pattern or ["uniform", "transpose", "bitcomp"], args.versus, drain, args.seed)
        return
    print(f"{'config':16} {'pattern':10} {'offered':>8} {'accepted':>9} {'pkt lat':>8} {'net lat':>8} "
          f"{'stable':>6} {'router-cycles/s':>16}")
    summary = []
    for name in args.only or CONFIGS:
        for pattern in args.pattern or ["uniform", "transpose", "bitcomp"]:
            started = time.process_time()
            points, zero, saturation, engine = curve(name, pattern, step, drain, args.seed, args.engine)
            ideal = ideal_saturation(pattern, **CONFIGS[name])
            peak = max(p["accepted"] for p in points)
            speeds = [p["router_cycles_per_s"] for p in points]
            summary.append((name, pattern, engine, zero, saturation, last_stable(points, "latency"),
                            last_stable(points, "drain"), peak, ideal, min(speeds), max(speeds),
                            time.process_time() - started))
            if args.csv:
                write_csv(points, args.csv)
            if args.png:
                plot_png(points, args.png, f"{name} {pattern}", zero)
    print()
    print("(last stable: the highest rate below the first unstable point, under BookSim's latency rule and under "
          "the drain rule)")
    print(f"{'config':16} {'pattern':10} {'engine':>8} {'zero-load':>9} {'saturation':>10} {'stable lat':>10} "
          f"{'stable drain':>12} {'peak accepted':>13} {'ideal':>6} {'router-cycles/s (min..max)':>27} {'CPU s':>6}")
    for name, pattern, engine, zero, saturation, by_latency, by_drain, peak, ideal, low, high, cpu in summary:
        sat, lat, drn = (f"{x:.3f}" if x is not None else "-" for x in (saturation, by_latency, by_drain))
        print(f"{name:16} {pattern:10} {engine:>8} {zero:9.1f} {sat:>10} {lat:>10} {drn:>12} {peak:13.3f} "
              f"{f'{ideal:.3f}' if ideal else '-':>6} {f'{low:,.0f} .. {high:,.0f}':>27} {cpu:6.0f}")


if __name__ == "__main__":
    main()
