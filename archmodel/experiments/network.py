"""Latency-throughput sweeps of a :class:`~archmodel.models.network.Noc`, BookSim style.

:func:`run_point` simulates one offered rate (warm-up, sample window, drain with injection
continuing) and returns the figures; :func:`sweep` runs a list of rates and marks saturation:
the offered rate at which average packet latency reaches twice the zero-load latency
(interpolated linearly between the two measured points around it); :func:`ideal_saturation`
gives the bound a curve is read against (the heaviest channel load under the routing).
:func:`write_csv` and :func:`plot_png` (matplotlib) save a curve.
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

from archmodel.kernel import ArchError, Simulator

from ..models.network import Noc
from ..models.network.routing import vc_class_range
from ..models.network.traffic import make_pattern

FIELDS = ("rate", "offered", "accepted", "packet_latency", "network_latency", "p99_latency", "packets",
          "cycles", "stable", "stable_latency", "stable_drain", "router_cycles_per_s")


def measure_top(top, seed: int = 0) -> dict:
    """Simulate a system containing a :class:`Noc` (the first one found) until its
    measurement ends, and return the Noc's figures (``rate`` is its offered rate parameter).
    ``stable`` is the verdict of the Noc's ``stability`` rule; ``stable_latency`` and
    ``stable_drain`` those of each rule (None: the latency rule stopped the run before the drain
    rule could judge; with ``stability="drain"`` both are known)."""
    noc = next((c for c in top.walk() if isinstance(c, Noc)), None)
    if noc is None:
        raise ArchError(f"{top.path} contains no Noc to measure", hint="a sweep measures a Noc(...) instance")
    sim = Simulator(top, seed=seed, watchdog_cycles=10 ** 9)
    # Processor time of this process, not wall time: on a shared machine the speed should not
    # depend on what else runs (the simulator is single threaded, so alone they agree).
    started = time.process_time()
    sim.run()
    wall = time.process_time() - started
    cycles = noc.elapsed_cycles
    lat = noc.packet_latency
    meas = noc.measurement
    if meas is None:
        raise ArchError(f"{noc.path} measured nothing: it has no synthetic traffic or packet trace",
                        hint="a sweep measures a Noc(traffic = ..., rate = ...) or one given a trace_file")
    # Unstable by the drain limit (the latency rule gives up there too); a run the latency rule
    # stopped cannot tell what the drain rule would have said.
    by_drain = noc.monitor.unstable and not meas.latency_unstable
    return {
        "rate": noc.rate,
        "offered": noc.offered.value,
        "accepted": noc.accepted.value,
        "packet_latency": lat.mean,
        "network_latency": noc.network_latency.mean,
        "p99_latency": lat.percentile(99),
        "packets": lat.count,
        "cycles": cycles,
        # under the rule the Noc applied, then under each rule where this run tells
        "stable": not noc.monitor.unstable,
        "stable_latency": meas.exceeded_ps is None and not by_drain,
        "stable_drain": None if meas.latency_unstable else not by_drain,
        "router_cycles_per_s": len(noc.routers) * cycles / wall if wall > 0 else 0.0,
    }


def run_point(rate: float, seed: int = 0, **params) -> dict:
    """Simulate one offered ``rate`` (flits/terminal/cycle) of a Noc built from ``params``."""
    return measure_top(Noc("net", rate=rate, **params), seed)


PERMUTATIONS = ("transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor")
"""The synthetic patterns that send each source to one fixed destination (their ``rng`` unused)."""


def ideal_saturation(traffic: str, **params) -> float | None:
    """The ideal saturation rate of the Noc built from ``params`` under ``traffic`` (uniform
    or a permutation): the inverse of the heaviest channel load per unit of offered rate, over
    the network's links and the terminals' injection and ejection channels, with packets
    following the routing function and a tie split evenly between the router's coin's two
    sides (Dally and Towles, ch. 3). Uniform traffic sends to every terminal alike, the source
    included, as the measurement does. None where the routing has no table form or the
    pattern is random in another way."""
    noc = Noc("ideal", **params)
    route, pm = noc.route, noc.port_map
    if not route.table_form or traffic not in ("uniform",) + PERMUTATIONS:
        return None
    n = pm.terminals
    if traffic == "uniform":
        flows = [(s, d, 1 / n) for s in range(n) for d in range(n)]
    else:
        pattern = make_pattern(traffic, n, noc.graph.graph.get("dims"))
        flows = [(s, pattern(s, None), 1.0) for s in range(n)]
    tables = [route.table(r) for r in pm.routers]
    vcs = noc.router_params["vcs"]
    classes = [next(c for c in range(route.classes) if w < vc_class_range(c, route.classes, vcs)[1])
               for w in range(vcs)]
    load: dict = {}
    ejected = [0.0] * n
    for source, dest, weight in flows:
        # (router, input port, input VC class, share of the flow) still on its way
        moving = [(pm.terminal_router[source], pm.terminal_port[source], 0, weight)]
        while moving:
            r, in_port, cls, share = moving.pop()
            heads, tails = tables[r][in_port, cls][dest]
            sides = ((heads, share),) if tails is None else ((heads, share / 2), (tails, share / 2))
            for hops, part in sides:
                for port, first, _ in hops:
                    step = part / len(hops)
                    nxt = pm.neighbour[r][port]
                    if nxt is None:
                        ejected[dest] += step
                        continue
                    load[r, port] = load.get((r, port), 0.0) + step
                    moving.append((nxt, pm.in_port_from[nxt][r], classes[first], step))
    heaviest = max([1.0, *ejected, *load.values()])  # every source injects its whole rate
    return 1 / heaviest


def saturation_rate(points: list[dict], zero_load: float) -> float | None:
    """The offered rate where packet latency first reaches ``2 * zero_load`` (linear
    interpolation between neighbouring points; an unstable point counts as above)."""
    limit = 2 * zero_load
    previous = None
    for point in sorted(points, key=lambda p: p["rate"]):
        latency = point["packet_latency"]
        if not point["stable"] or latency is None or latency >= limit:
            if previous is None or latency is None or not point["stable"]:
                return point["rate"] if previous is None else (previous["rate"] + point["rate"]) / 2
            x0, y0, x1, y1 = previous["rate"], previous["packet_latency"], point["rate"], latency
            return x0 + (limit - y0) * (x1 - x0) / (y1 - y0)
        previous = point
    return None


def sweep(rates, seed: int = 0, stop_after_saturation: int = 1, **params) -> list[dict]:
    """Run :func:`run_point` for each rate in increasing order; stop ``stop_after_saturation``
    points past the first unstable one (there is nothing more to learn)."""
    points = []
    beyond = 0
    for rate in sorted(rates):
        point = run_point(rate, seed=seed, **params)
        points.append(point)
        if not point["stable"]:
            beyond += 1
            if beyond > stop_after_saturation:
                break
    return points


def write_csv(points: list[dict], path: str | Path) -> None:
    """Write the points as CSV with a header row."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS, extrasaction="ignore")
        writer.writeheader()
        for point in points:
            writer.writerow(point)


def plot_png(points: list[dict], path: str | Path, title: str = "", zero_load: float | None = None) -> None:
    """Plot packet latency against offered rate and accepted throughput against offered rate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stable = [p for p in points if p["packet_latency"] is not None]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.plot([p["rate"] for p in stable], [p["packet_latency"] for p in stable], "o-", label="packet latency")
    left.plot([p["rate"] for p in stable], [p["network_latency"] for p in stable], "s--", label="network latency")
    if zero_load:
        left.axhline(2 * zero_load, color="grey", linestyle=":", label="2 x zero-load")
    left.set_xlabel("offered (flits/terminal/cycle)")
    left.set_ylabel("latency (cycles)")
    left.set_yscale("log")
    left.legend()
    right.plot([p["rate"] for p in points], [p["accepted"] for p in points], "o-")
    right.plot([0, max(p["rate"] for p in points)], [0, max(p["rate"] for p in points)], ":", color="grey")
    right.set_xlabel("offered (flits/terminal/cycle)")
    right.set_ylabel("accepted (flits/terminal/cycle)")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
