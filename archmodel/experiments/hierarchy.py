"""Reports of clusters in a memory hierarchy: figures rolled up level by level, the traffic and
utilisation of every uplink, memory channel and die-to-die link, and the roofline per level.

A system of Snitch clusters under :class:`~archmodel.models.network.MemoryTreeNode` levels (a
Manticore package, :file:`library/manticore.arch`) is read from its structure: the levels of
a cluster are its enclosing parts (an L1 quadrant, ..., the package), each named after its
module; a level's uplink is the uplink of the tree node directly inside each of its parts.

The roofline (Williams, Waterman and Patterson, CACM 52(4), 2009) of each level: the peak
compute of the clusters, and for every level the bandwidth its links offer together (their
widths from the configuration, the busier direction) times the arithmetic intensity the
kernel showed there (flops over the bytes that crossed those links). The level with the
lowest such ceiling binds. Peak compute and aggregate DMA bandwidth come from the
configuration: each compute core issues one FP64 instruction per cycle, worth the most flops
of any FP64 instruction of the ISA table (an FMA, 2), and the DMA moves ``dma_lanes`` 64-bit
words per cycle.
"""

from __future__ import annotations

from collections import defaultdict

import attrs

from ..models.compute import SnitchCluster
from ..models.compute.isa import OPS
from ..models.memory import DramController, InterleavedMemory
from ..models.network import MemoryTreeNode


def _flops_per_fp64_issue() -> int:
    return max(op.flops for op in OPS.values() if op.group == "fp" and not op.fp32)


def _hz(comp) -> float:
    # before a simulator binds the domains, the clock a part was given or inherits
    domain, part = comp.domain, comp
    while domain is None and part is not None:
        domain, part = part.clock, part.parent
    return 1e12 / domain.period_ps


def _link_bytes_per_s(port) -> float:
    """What a link moves per second at most: its width per sender cycle, or a message (of
    whatever size) per cycle without one, counted as nothing to bound (inf)."""
    channel = port.channel
    if channel is None:
        return 0.0
    if not channel.width_bits:
        return float("inf")
    return channel.width_bits / 8 * _hz(port.owner)


@attrs.frozen
class Rollup:
    """Figures of one part of a level: its clusters' GFLOP/s and FPU utilisation."""

    level: str
    part: str
    clusters: int
    gflops_sum: float
    gflops_mean: float
    gflops_min: float
    gflops_max: float
    fpu_mean: float
    fpu_min: float
    fpu_max: float


@attrs.frozen
class Link:
    """One link (an uplink, a memory port, a die-to-die link): bytes each way and utilisation."""

    kind: str
    name: str
    bytes_out: int
    bytes_in: int
    utilisation_out: float
    utilisation_in: float
    bytes_per_s: float  # one direction


@attrs.frozen
class Ceiling:
    """One level of the roofline: the bandwidth its links offer, the bytes that crossed them
    (the busier direction), the kernel's intensity there and the performance it allows."""

    level: str
    bytes_per_s: float
    bytes: int
    intensity: float  # flop per byte
    attainable: float  # flop/s


@attrs.frozen
class HierarchyReport:
    """The report of one run (see the module docstring)."""

    capacity: Capacity
    flops: int
    seconds: float
    rollups: tuple
    links: tuple
    ceilings: tuple

    @property
    def peak_flops(self) -> float:
        """Flop/s of every compute core issuing an FMA each cycle."""
        return self.capacity.peak_flops

    @property
    def achieved_flops(self) -> float:
        """Flop/s of the whole run."""
        return self.flops / self.seconds if self.seconds else 0.0

    @property
    def binding(self) -> Ceiling | None:
        """The level whose ceiling is lowest, or None when compute binds."""
        lowest = min(self.ceilings, key=lambda c: c.attainable, default=None)
        return lowest if lowest is not None and lowest.attainable < self.peak_flops else None

    def table(self) -> str:
        """The report as text: configuration, roll-ups, links and the roofline."""
        if not self.flops:
            return self.capacity.line() + "\nno floating-point work ran: no roll-ups, no roofline"
        lines = [self.capacity.line(),
                 f"achieved {self.achieved_flops / 1e9:.2f} GFLOP/s "
                 f"({100 * self.achieved_flops / self.peak_flops:.1f}% of peak)", "",
                 f"{'level':<12} {'part':<40} {'clusters':>8} {'GFLOP/s sum':>11} {'mean':>7} {'min':>7} "
                 f"{'max':>7} {'FPU% mean':>9} {'min':>6} {'max':>6}"]
        for r in self.rollups:
            lines.append(f"{r.level:<12} {r.part:<40} {r.clusters:>8} {r.gflops_sum:>11.2f} {r.gflops_mean:>7.2f} "
                         f"{r.gflops_min:>7.2f} {r.gflops_max:>7.2f} {r.fpu_mean:>9.1f} {r.fpu_min:>6.1f} "
                         f"{r.fpu_max:>6.1f}")
        lines += ["", f"{'link':<12} {'name':<48} {'bytes out':>12} {'bytes in':>12} {'util% out':>9} {'in':>6}"]
        for link in self.links:
            lines.append(f"{link.kind:<12} {link.name:<48} {link.bytes_out:>12} {link.bytes_in:>12} "
                         f"{link.utilisation_out:>9.1f} {link.utilisation_in:>6.1f}")
        lines += ["", f"{'roofline':<12} {'GB/s':>10} {'bytes':>14} {'flop/B':>8} {'GFLOP/s':>10}"]
        lines.append(f"{'compute':<12} {'':>10} {'':>14} {'':>8} {self.peak_flops / 1e9:>10.1f}")
        for c in self.ceilings:
            lines.append(f"{c.level:<12} {c.bytes_per_s / 1e9:>10.1f} {c.bytes:>14} {c.intensity:>8.3f} "
                         f"{c.attainable / 1e9:>10.1f}")
        binding = self.binding
        lines.append("binds: " + (f"{binding.level} (its links allow {binding.attainable / 1e9:.1f} GFLOP/s at "
                                  f"{binding.intensity:.3f} flop/B)" if binding else "compute"))
        return "\n".join(lines)

    def figures(self) -> dict:
        """The report as a JSON-ready mapping."""
        binding = self.binding
        return {**attrs.asdict(self.capacity), "achieved_flops": self.achieved_flops,
                "rollups": [attrs.asdict(r) for r in self.rollups], "links": [attrs.asdict(k) for k in self.links],
                "roofline": [attrs.asdict(c) for c in self.ceilings],
                "binds": binding.level if binding else "compute"}

    def plot(self, path) -> None:
        """Draw the roofline with every level's ceiling and the measured points (PNG)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        fig, ax = plt.subplots(figsize=(7, 4.5))
        # (a level no byte crossed, such as the die-to-die links of a GEMM whose dies read their
        # own HBM, has an infinite intensity and no point to draw)
        finite = [c for c in self.ceilings
                  if 0 < c.intensity and np.isfinite(c.intensity) and np.isfinite(c.bytes_per_s)]
        # from below the lowest ridge point (where a ceiling meets the peak) to past the points
        marks = [c.intensity for c in finite] + [self.peak_flops / c.bytes_per_s for c in finite] or [1.0]
        low, high = min(marks) / 8, max(marks) * 8
        x = np.geomspace(low, high, 200)
        ax.plot(x, np.full_like(x, self.peak_flops / 1e9), "k-", label="peak compute")
        for c in finite:
            line, = ax.plot(x, np.minimum(x * c.bytes_per_s, self.peak_flops) / 1e9, "--",
                            label=f"{c.level} {c.bytes_per_s / 1e9:.0f} GB/s")
            ax.plot([c.intensity], [self.achieved_flops / 1e9], "o", color=line.get_color())
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("arithmetic intensity at the level (flop/byte)")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(f"roofline per level, {self.capacity.clusters} clusters (points: measured)")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def _levels(cluster, top) -> list:
    """The parts enclosing ``cluster`` up to ``top``, innermost first."""
    parts = []
    part = cluster.parent
    while part is not None:
        parts.append(part)
        if part is top:
            break
        part = part.parent
    return parts


def _level_name(part) -> str:
    return getattr(part, "model_name", type(part).__name__)


def _node_of(part):
    """The tree node directly inside ``part`` (its level's crossbar), or None."""
    return next((c for c in part.children if isinstance(c, MemoryTreeNode)), None)


def _uplink(node) -> Link:
    return Link("uplink", node.path, node.up_bytes_out.value, node.up_bytes_in.value,
                node.up_utilisation_out.value or 0.0, node.up_utilisation_in.value or 0.0,
                _link_bytes_per_s(node.up_req))


def _output_link(node, t: int, kind: str) -> Link:
    stats = {s.name: s.value for s in node.stats}
    return Link(kind, f"{node.path}.out_req[{t}]", stats[f"out{t}_bytes_out"], stats[f"out{t}_bytes_in"],
                stats[f"out{t}_utilisation_out"] or 0.0, stats[f"out{t}_utilisation_in"] or 0.0,
                _link_bytes_per_s(node.out_req[t]))


def _memories(top) -> list:
    """The DRAM channels of the system, grouped by the memory a client sees: each
    InterleavedMemory's channels, and every DramController that stands alone."""
    groups: list[tuple[InterleavedMemory | DramController, list[DramController]]] = []
    for part in top.walk():
        if isinstance(part, InterleavedMemory):
            groups.append((part, list(part.channel_list)))
        elif isinstance(part, DramController) and not isinstance(part.parent, InterleavedMemory):
            groups.append((part, [part]))
    return groups


@attrs.frozen
class Capacity:
    """What a system of clusters can do at most, from its configuration alone."""

    clusters: int
    compute_cores: int
    peak_flops: float  # flop/s
    dma_bytes_per_s: float  # every cluster's DMA, one direction

    def line(self) -> str:
        """One sentence for a report."""
        return (f"{self.clusters} clusters, {self.compute_cores} compute cores: peak {self.peak_flops / 1e12:.3f} "
                f"DP-TFLOP/s, aggregate cluster DMA {self.dma_bytes_per_s / 1e12:.2f} TB/s per direction")


def capacity(top) -> Capacity:
    """The peak compute and aggregate DMA bandwidth of the Snitch clusters under ``top``
    (see the module docstring), before or after a run."""
    clusters = [c for c in top.walk() if isinstance(c, SnitchCluster)]
    per_issue = _flops_per_fp64_issue()
    return Capacity(len(clusters), sum(c.cores for c in clusters),
                    sum(c.cores * per_issue * _hz(c) for c in clusters),
                    sum(c.dma_lanes * 8 * _hz(c) for c in clusters))


def hierarchy_report(top) -> HierarchyReport | None:
    """The report of a finished run of ``top``, or None when it holds no Snitch cluster under a
    MemoryTreeNode."""
    clusters = [c for c in top.walk() if isinstance(c, SnitchCluster)]
    if not clusters or not any(isinstance(c, MemoryTreeNode) for c in top.walk()):
        return None
    most = capacity(top)
    flops = sum(c.flops.value for c in clusters)
    # (statistics only: a split run's parts report them, see archmodel.kernel.partition)
    seconds = max(c.cycles.value * c.domain.period_ps for c in clusters) / 1e12
    members: dict = defaultdict(list)  # (depth, part) -> clusters
    for cluster in clusters:
        for depth, part in enumerate(_levels(cluster, top)):
            members[(depth, part)].append(cluster)
    rollups = []
    for (depth, part), inside in sorted(members.items(), key=lambda item: (item[0][0], item[0][1].path)):
        gflops = [c.gflops.value or 0.0 for c in inside]
        fpu = [c.fpu_utilisation.value or 0.0 for c in inside]
        rollups.append(Rollup(_level_name(part), part.path, len(inside), sum(gflops), sum(gflops) / len(gflops),
                              min(gflops), max(gflops), sum(fpu) / len(fpu), min(fpu), max(fpu)))
    links, ceilings = [], []
    by_level: dict = defaultdict(list)  # level name -> uplinks of its parts
    for (depth, part) in sorted(members, key=lambda key: (key[0], key[1].path)):
        node = _node_of(part)
        if node is not None and node.up_req.connected:
            link = _uplink(node)
            links.append(link)
            by_level[(depth, _level_name(part))].append(link)
        if node is not None:
            for t, port in enumerate(node.out_req):
                if port.connected and isinstance(port.channel.dst_owner, MemoryTreeNode):
                    link = _output_link(node, t, "die-to-die")
                    links.append(link)
                    by_level[(depth + 0.5, "die-to-die")].append(link)
    for (depth, name), level_links in sorted(by_level.items()):
        ceilings.append(_ceiling(f"{name} up" if name != "die-to-die" else name, level_links, flops))
    for memory, channels in _memories(top):
        moved = 0
        for channel in channels:
            moved += channel.bytes_read.value + channel.bytes_written.value
            # one data bus both ways: each direction's share of the bus's peak
            bus_bytes = channel.timing.peak_gbps * channel.elapsed_ps / 1000
            links.append(Link("memory", channel.path, channel.bytes_written.value, channel.bytes_read.value,
                              100.0 * channel.bytes_written.value / bus_bytes,
                              100.0 * channel.bytes_read.value / bus_bytes, channel.timing.peak_gbps * 1e9))
        bandwidth = sum(channel.timing.peak_gbps * 1e9 for channel in channels)
        ceilings.append(Ceiling(f"memory {memory.path}", bandwidth, moved, flops / moved if moved else float("inf"),
                                bandwidth * flops / moved if moved else float("inf")))
    return HierarchyReport(most, flops, seconds, tuple(rollups), tuple(links), tuple(ceilings))


def _ceiling(level: str, links: list, flops: int) -> Ceiling:
    out = sum(link.bytes_out for link in links)
    into = sum(link.bytes_in for link in links)
    moved = max(out, into)
    bandwidth = sum(link.bytes_per_s for link in links)
    intensity = flops / moved if moved else float("inf")
    return Ceiling(level, bandwidth, moved, intensity, bandwidth * intensity if moved else float("inf"))


@attrs.frozen
class ClusterRun:
    """A finished run of a system of clusters (see :func:`run_clusters`)."""

    top: object
    sim: object
    clusters: list
    elaborate_cpu_s: float
    run_cpu_s: float


def run_clusters(path, params: dict, engine: str = "compiled") -> ClusterRun:
    """Elaborate the ``.arch`` file ``path`` with ``params`` (``-p`` texts), put every Snitch
    cluster on ``engine``, run to the end and check that each finished its kernel (checked
    against numpy); the process CPU time of both steps. For tests and benchmarks."""
    import time

    from ..kernel import SimulationError, Simulator
    from ..lang.elaborate import load

    started = time.process_time()
    top = load(path, params=params).top
    clusters = [part for part in top.walk() if isinstance(part, SnitchCluster)]
    for cluster in clusters:
        cluster.engine = engine
    sim = Simulator(top)
    built = time.process_time()
    sim.run()
    done = time.process_time()
    unfinished = [c.path for c in clusters if not getattr(c, "result_ok", False)]
    if unfinished:
        raise SimulationError(f"{len(unfinished)} clusters did not finish their kernel, the first {unfinished[0]}")
    return ClusterRun(top, sim, clusters, built - started, done - built)


def report_outputs(top, stats_path) -> tuple:
    """For ``archmodel run``: the report's text (None when ``top`` has no hierarchy), its
    figures for the statistics file, and, with a statistics file, the roofline drawn beside
    it (``stats.json`` -> ``stats.roofline.png``). Returns (text, figures, png path, error)."""
    report = hierarchy_report(top)
    if report is None:
        return None, None, None, None
    png, error = None, None
    if stats_path and report.flops:  # a roofline without a kernel has no point to draw
        from pathlib import Path

        png = Path(stats_path).with_suffix(".roofline.png")
        try:
            report.plot(png)
        except OSError as err:
            png, error = None, f"{Path(stats_path).with_suffix('.roofline.png')}: {err.strerror or err}"
    return report.table(), report.figures(), png, error
