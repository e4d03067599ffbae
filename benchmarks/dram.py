"""DRAM benchmark: 1,000,000-request traces on DDR4-2400R and DDR4-3200AA, one channel, one
rank, the reference controller of VALIDATION.md (RoBaRaCoCh, FR-FCFS, open page, 32-entry
read and write queues, write drain 80%/20%, all-bank refresh).

Prints bandwidth, mean read latency, row-hit rate and simulator speed (requests per second of
wall time and of process CPU time) for a sequential read trace, a uniform random read trace
and a 2:1 read/write random mix (fixed seeds), then which timing constraint binds each
bandwidth. The controller's scheduling core is compiled (``engine="auto"``); ``--compare``
also runs the pure-Python path on each trace, checks that it gives the same statistics and
prints the speed ratio. The compiled core is loaded (or compiled) before any timing starts.

Then the shared queue against per-bank command queues (``queue="per_bank"``, DRAMSim3's
organisation, depth 8, on the Python path) on ``--bank-requests`` requests: the saturated
traces and random reads offered at 7.5 and 9.5 GB/s (below the shared queue's saturation
on both standards), with read latency (mean and 99th percentile) and the bursts
queued in the controller (read, write and command queues: Little's law).

    python benchmarks/dram.py [--requests N] [--bank-requests N] [--compare]
"""

from __future__ import annotations

import argparse
import time

from archmodel.kernel import Component, Simulator
from archmodel.models.memory import DramController, synthetic_stream

TRACES = (("sequential", "sequential", 0.0), ("uniform random", "random", 0.0), ("2:1 read/write", "random", 1 / 3))


LOADS = (("sequential", "sequential", 0.0, 0), ("uniform random", "random", 0.0, 0),
         ("2:1 read/write", "random", 1 / 3, 0), ("random 7.5 GB/s", "random", 0.0, 7.5),
         ("random 9.5 GB/s", "random", 0.0, 9.5))
"""The shared against per-bank table's traces: name, pattern, write fraction, offered GB/s (0: untimed)."""


def run_one(standard: str, pattern: str, write_fraction: float, requests: int, seed: int = 1,
            engine: str = "auto", queue: str = "shared", offered_gbps: float = 0.0) -> dict:
    top = Component("top")
    dram = DramController("dram", top, standard=standard, stop_when_done=True, engine=engine, queue=queue)
    stream = synthetic_stream(pattern, requests, capacity_bytes=dram.address_map.capacity_bytes,
                              burst_bytes=dram.burst_bytes, seed=seed, write_fraction=write_fraction)
    if offered_gbps:  # one request every `gap` DRAM cycles, the nearest to the offered bandwidth
        gap = round(dram.burst_bytes / offered_gbps * 1000 / dram.timing.tCK_ps)
        stream = ((i * gap, address, write) for i, (_, address, write) in enumerate(stream))
    dram.attach_stream(stream)
    sim = Simulator(top, seed=seed)
    start, start_cpu = time.perf_counter(), time.process_time()
    sim.run()
    wall = time.perf_counter() - start
    cpu = time.process_time() - start_cpu
    t = dram.timing
    return {
        "bandwidth": dram.bandwidth.value,
        "peak": t.peak_gbps,
        "latency_ns": dram.read_latency_ns.value,
        "hit_rate": dram.row_hit_rate.value,
        "speed": requests / wall,
        "cpu_speed": requests / cpu,
        "cycles_per_request": dram.elapsed_cycles / requests,
        "queue": dram.read_queue_depth.mean(),
        "queued": dram.read_queue_depth.mean() + dram.write_queue_depth.mean() + dram.command_queue_depth.mean(),
        "p99_ns": dram.read_latency_p99_ns.value,
        "cpu": cpu,
        "engine": dram.engine_in_use,
        "acts": dram.acts.value,
        "refs": dram.refs.value,
        "timing": t,
    }


def binding(name: str, r: dict) -> str:
    """Which constraint sets the bandwidth, from the timing (cycles per 64-byte request)."""
    t = r["timing"]
    cpr = r["cycles_per_request"]
    if name == "sequential":
        return (f"{cpr:.2f} cycles/request: column commands within a row at tCCD_L={t.tCCD_L} "
                f"(tCCD_S={t.tCCD_S} when FR-FCFS overlaps the next bank group's row); tBL={t.tBL} is the floor")
    faw = t.tFAW / 4
    return (f"{cpr:.2f} cycles/request: every request needs ACT+PRE; four ACTs per tFAW={t.tFAW} "
            f"allow one per {faw:.1f} cycles (tRRD_S={t.tRRD_S}), plus refresh (tRFC/tREFI = "
            f"{100 * t.tRFC / t.tREFI:.1f}%)" + ("; writes add bus turnarounds (tWTR, tRTW)" if "write" in name else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    parser.add_argument("--bank-requests", type=int, default=100_000,
                        help="requests per run of the shared against per-bank queue table (0: leave it out)")
    parser.add_argument("--compare", action="store_true",
                        help="also run the pure-Python scheduling path and print the speed ratio")
    args = parser.parse_args()
    run_one("DDR4-2400R", "random", 0.0, 1000)  # load or compile the scheduling core outside the timings
    rows = []
    for standard in ("DDR4-2400R", "DDR4-3200AA"):
        for name, pattern, writes in TRACES:
            r = run_one(standard, pattern, writes, args.requests)
            if args.compare:
                plain = run_one(standard, pattern, writes, args.requests, engine="python")
                same = all(plain[k] == r[k] for k in ("bandwidth", "latency_ns", "hit_rate", "queue", "acts", "refs"))
                if not same:
                    raise SystemExit(f"{standard} {name}: the Python path gives different statistics")
                r["python_cpu_speed"] = plain["cpu_speed"]
            rows.append((standard, name, r))
    compare = f" {'Python req/s':>12} {'ratio':>6}" if args.compare else ""
    print(f"{'standard':<12} {'trace':<15} {'GB/s':>7} {'peak':>6} {'read ns':>8} {'hit %':>6} "
          f"{'queue':>6} {'req/s':>9} {'req/CPU-s':>9}" + compare)
    for standard, name, r in rows:
        line = (f"{standard:<12} {name:<15} {r['bandwidth']:7.2f} {r['peak']:6.1f} {r['latency_ns']:8.1f} "
                f"{r['hit_rate']:6.1f} {r['queue']:6.1f} {r['speed']:9.0f} {r['cpu_speed']:9.0f}")
        if args.compare:
            line += f" {r['python_cpu_speed']:12.0f} {r['cpu_speed'] / r['python_cpu_speed']:5.1f}x"
        print(line)
    print()
    for standard, name, r in rows:
        print(f"{standard} {name}: {binding(name, r)}")
    if args.bank_requests:
        print()
        queues(args.bank_requests)


def queues(requests: int) -> None:
    """The shared queue against per-bank command queues, same traces and loads."""
    print(f"{'standard':<12} {'trace':<16} {'queue':<9} {'engine':<8} {'GB/s':>6} {'read ns':>8} {'p99 ns':>7} "
          f"{'queued':>6} {'CPU s':>6}   per_bank/shared read ns")
    for standard in ("DDR4-2400R", "DDR4-3200AA"):
        for name, pattern, writes, offered in LOADS:
            pair = [run_one(standard, pattern, writes, requests, queue=q, offered_gbps=offered)
                    for q in ("shared", "per_bank")]
            for q, r in zip(("shared", "per_bank"), pair):
                ratio = f"   {pair[1]['latency_ns'] / pair[0]['latency_ns']:.2f}x" if q == "per_bank" else ""
                print(f"{standard:<12} {name:<16} {q:<9} {r['engine']:<8} {r['bandwidth']:6.2f} "
                      f"{r['latency_ns']:8.1f} {r['p99_ns']:7.1f} {r['queued']:6.1f} {r['cpu']:6.1f}" + ratio)


if __name__ == "__main__":
    main()
