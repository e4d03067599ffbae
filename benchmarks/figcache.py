"""In-DRAM cache benchmark: 8 cores with skewed row-segment reuse on DDR4-2400R, run with no
in-DRAM cache, LISA-VILLA, FIGCache-Slow and FIGCache-Fast (:class:`InDramCacheController`), and
FIGCache-Fast caching a segment only at its second miss.

Each core replays its own stream (8 interleaved streams): 90% of its requests pick one of its
hot 256-byte row segments (4 bursts; the cache's segments have the same size) by a Zipf(1.1)
rank, a random burst within it; 10% go anywhere; a quarter are writes (posted: a core waits
only for its reads). Two workloads on the same streams:

- heavy: 256 hot segments per core, 4 reads outstanding per core, 20 cycles between issues;
- light: 32 hot segments per core, 1 read outstanding per core, 20 cycles between issues
  (each core waits for every read, as a pointer chase would).

Weighted speedup = sum over cores of (cycles alone on the no-cache system) / (cycles shared).
Energy is DRAMPower style with the relocations' ACTs and RELOCs included. The timing checker
watches every run (a violation aborts). Per workload the benchmark computes what binds the
no-cache system: the utilisation of the four-activate window (ACTs x tFAW / 4 over the run),
of the data bus (bursts x tBL), of the command bus (commands, one per cycle) and of the
busiest bank (its ACTs x tRC); above 75% that resource binds, otherwise each core's wait for
its reads (latency) does. It prints the controller's speed (requests per CPU second).

    python benchmarks/figcache.py [--requests N]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter as Tally

from archmodel.kernel import Component, Simulator
from archmodel.models.memory import InDramCacheController, SubarrayTimingChecker, skewed_streams
from archmodel.models.memory.commands import ACT, RD, WR
from archmodel.models.memory.timing import dram_clock, preset

STANDARD = "DDR4-2400R"
CORES = 8
SEGMENT_BURSTS = 4
CONFIGS = (("no cache", "none", {}), ("LISA-VILLA", "lisa_villa", {}), ("FIGCache-Slow", "figcache_slow", {}),
           ("FIGCache-Fast", "figcache_fast", {}), ("FIGCache-Fast hot2", "figcache_fast", {"insert_threshold": 2}))
"""The systems compared; the last caches a segment only at its second miss (the hot filter
LISA-VILLA uses), to show what insert-on-every-miss costs."""
WORKLOADS = (("heavy", {"hot_segments": 256}, {"mlp": 4, "gap_cycles": 20}),
             ("light", {"hot_segments": 32}, {"mlp": 1, "gap_cycles": 20}))
"""(name, stream parameters, core parameters)."""
BINDS_AT = 0.75
"""Utilisation above which a resource is said to bind."""


class _Usage:
    """Counts what the command bus carried: commands, bursts, ACTs per bank."""

    def __init__(self):
        self.commands = self.bursts = 0
        self.bank_acts = Tally()

    def __call__(self, c, kind, rank, bankgroup, bank, flat_bank, row, column):
        self.commands += 1
        if kind in (RD, WR):
            self.bursts += 1
        elif kind == ACT:
            self.bank_acts[flat_bank] += 1


def run(cache: str, streams, usage=None, **params):
    """One system on the given streams; returns the controller and the CPU seconds taken."""
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = InDramCacheController("dram", top, standard=STANDARD, cache=cache, segment_bursts=SEGMENT_BURSTS,
                                 **params)
    checker = SubarrayTimingChecker("checker", top, standard=STANDARD, cache=cache,
                                    **{k: v for k, v in params.items() if k == "tRELOC"})
    checker.watch(dram)
    if usage is not None:
        dram.add_command_listener(usage)
    dram.attach_cores(streams)
    start = time.process_time()
    Simulator(top, seed=1).run()
    cpu = time.process_time() - start
    if checker.violation_count.value:
        raise SystemExit(f"{cache}: timing violations: {checker.violations[:3]}")
    return dram, cpu


def binding(dram, usage) -> tuple[str, dict]:
    """What limits the no-cache run: the resource with the highest utilisation if above BINDS_AT."""
    t = preset(STANDARD)
    cycles = dram.elapsed_cycles
    use = {"tFAW (ACT rate)": dram.acts.value * t.tFAW / 4 / cycles,
           "data bus": usage.bursts * t.tBL / cycles,
           "command bus": usage.commands / cycles,
           "busiest bank (tRC)": max(usage.bank_acts.values(), default=0) * t.tRC / cycles}
    name, value = max(use.items(), key=lambda item: item[1])
    return (name if value >= BINDS_AT else "latency (each core waits for its reads)"), use


def table(name: str, requests: int, stream_params: dict, core_params: dict) -> float:
    """Run every configuration on one workload, print its table; return CPU seconds."""
    streams = skewed_streams(STANDARD, CORES, requests, seed=1, segment_bursts=SEGMENT_BURSTS, **stream_params)
    cpu = 0.0
    alone = []
    for stream in streams:
        dram, took = run("none", [stream], **core_params)
        alone.append(dram.finish[0])
        cpu += took
    rows = []
    usage = _Usage()
    for label, cache, params in CONFIGS:
        dram, took = run(cache, streams, usage if cache == "none" and not rows else None, **core_params, **params)
        cpu += took
        rows.append((label, sum(a / f for a, f in zip(alone, dram.finish)), dram))
    base_ws, base = rows[0][1], rows[0][2]
    base_energy = base.energy_nj.value
    served = CORES * requests
    print(f"{name}: {CORES} cores x {requests} requests, {stream_params['hot_segments']} hot 256 B segments per "
          f"core, {core_params['mlp']} read(s) outstanding per core, {core_params['gap_cycles']} cycles between issues")
    print(f"{'system':<18} {'WS':>6} {'vs none':>8} {'hit %':>6} {'row hit %':>9} {'read ns':>7} {'relocs':>7} "
          f"{'extra cmd':>9} {'ACTs':>7} {'energy uJ':>10} {'vs none':>8} {'RELOC uJ':>9}")
    tck_ns = preset(STANDARD).tCK_ps / 1000
    for label, ws, d in rows:
        energy = d.energy_nj.value
        print(f"{label:<18} {ws:6.3f} {100 * (ws / base_ws - 1):+7.1f}% {d.hit_rate.value:6.1f} "
              f"{100 * d.row_hits.value / served:9.1f} {d.read_latency.mean * tck_ns:7.1f} {d.relocations.value:7d} "
              f"{d.extra_commands.value:9d} {d.acts.value:7d} {energy / 1000:10.1f} "
              f"{100 * (energy / base_energy - 1):+7.1f}% {d.reloc_energy_nj.value / 1000:9.1f}")
    binds, use = binding(base, usage)
    print(f"  binds (no cache, {base.elapsed_cycles} cycles): {binds}; utilisation "
          + ", ".join(f"{k} {100 * v:.0f}%" for k, v in use.items()))
    print(f"  simulator: {(len(CONFIGS) + 1) * served / cpu:,.0f} requests per CPU second "
          f"({cpu:.1f} s CPU for {len(CONFIGS) + 1} x {served} requests, checker included)")
    print()
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="requests per core")
    args = parser.parse_args()
    start = time.perf_counter()
    for name, stream_params, core_params in WORKLOADS:
        table(name, args.requests, stream_params, core_params)
    print(f"({time.perf_counter() - start:.0f} s wall)")
    print("Why: a hit in a fast subarray saves tRCD and tRP (DDR4-2400R 16 -> 10 cycles each); hot segments of "
          "different rows packed into one cache row turn row conflicts into row hits (fewer ACTs); FIGCache "
          "inserts on every miss, and the relocation (ACT, RELOC per burst, PRE) holds its bank and takes "
          "command-bus slots. LISA-VILLA caches a row once it has missed twice (hot rows), moves whole rows hop "
          "by hop and gains no row hits: where the ACT rate (tFAW) binds, saving tRCD/tRP per access cannot lift "
          "throughput and its relocation ACTs cost it; where latency binds it gains. Energy: a RELOC is charged "
          "one burst of column current (IDD4R - IDD3N), see the RELOC column.")


if __name__ == "__main__":
    main()
