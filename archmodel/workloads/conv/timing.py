"""Cycles of every lowering of every layer on a Snitch cluster, the method to pick per layer,
and the report: a table and a plot.

:func:`time_network` builds a cluster whose DMA port reaches a
:class:`~archmodel.models.compute.FixedLatencyMemory` and runs every lowering of every layer
on it, one after another in one simulation (:class:`~.runs.ClusterRuns`: a slice of
``slice_steps`` steps scaled to the layer, or the whole layer with None; a progress bar per
layer); :func:`time_layer` does it for one layer. A ``run conv_network(...)`` statement runs
the same jobs on the cluster and memory the ``.arch`` file binds instead (:mod:`.workload`).
:func:`format_timing` prints the per-layer table and the totals, :func:`plot_timing` writes
the cycles and the footprint per layer by method as a PNG.
"""

from __future__ import annotations

import sys

import numpy as np

from archmodel.kernel import Simulator
from archmodel.workloads.snitch import build_system

from .layers import Layer, check_density
from .lowering import METHODS, check_method
from .runs import ClusterRuns, LayerTiming, MethodTiming, NetworkSchedule, slice_of
from .sizes import align_table

__all__ = ["LayerTiming", "MethodTiming", "format_timing", "plot_timing", "slice_of", "time_layer", "time_network",
           "totals"]

MEMORY_BYTES = 64 << 20


def time_network(layers: list[Layer], density: float | None = None, methods=METHODS, *, seed: int = 0,
                 slice_steps: int | None = 16, whole_chosen: bool = False, progress: bool = False,
                 indirect: bool = False, **system) -> list[LayerTiming]:
    """A :class:`LayerTiming` per layer of ``layers`` (see :class:`~.runs.NetworkSchedule`
    for ``seed``, ``whole_chosen`` and ``indirect``) on the system :func:`run_schedule` builds
    from ``system``. ``progress`` shows a bar per layer on stderr."""
    schedule = NetworkSchedule(layers, check_density(density), _methods(methods), seed=seed, slice_steps=slice_steps,
                               whole_chosen=whole_chosen, indirect=indirect)
    return run_schedule(schedule, progress=progress, **system)


def time_layer(layer: Layer, x: np.ndarray, w: np.ndarray, methods=METHODS, *, slice_steps: int | None = 16,
               indirect: bool = False, **system) -> dict:
    """{method: MethodTiming} for ``layer`` with activations ``x`` and weights ``w`` (a
    slice of ``slice_steps`` steps scaled to the layer, or the whole layer with None) on the
    system :func:`run_schedule` builds from ``system``; ``indirect``: CPO gathers through
    indirect streams (:mod:`.indirect`)."""
    schedule = NetworkSchedule([layer], None, _methods(methods), slice_steps=slice_steps, data=[(x, w)],
                               indirect=indirect)
    return run_schedule(schedule, **system)[0].methods


def run_schedule(schedule: NetworkSchedule, *, progress: bool = False, cores: int = 8,
                 memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 50,
                 cluster_params: dict | None = None) -> list[LayerTiming]:
    """Run ``schedule`` in one simulation of a cluster of ``cores`` (and ``cluster_params``)
    whose DMA port reaches a memory of ``memory_bytes_per_cycle`` and
    ``memory_latency_cycles``; its :class:`LayerTiming` rows."""
    top = build_system(cores=cores, memory_bytes_per_cycle=memory_bytes_per_cycle,
                       memory_latency_cycles=memory_latency_cycles, memory_bytes=MEMORY_BYTES,
                       **(cluster_params or {}))
    bar = layer_bar(len(schedule.layers)) if progress else None
    runs = ClusterRuns(top.child("cluster"), schedule, top.child("memory"),
                       on_layer=None if bar is None else lambda row: bar.update())
    try:
        runs.begin()
        Simulator(top).run()
    finally:
        if bar is not None:
            bar.close()
    if len(schedule.rows) != len(schedule.layers):
        raise AssertionError(f"the cluster stopped after {len(schedule.rows)} of {len(schedule.layers)} layers")
    return schedule.rows


def layer_bar(layers: int):
    """A progress bar of ``layers`` layers on stderr (below the run's bar of simulated time)."""
    from tqdm import tqdm
    return tqdm(total=layers, unit="layer", desc="layers", leave=False, file=sys.stderr, position=1,
                dynamic_ncols=True)


def _methods(methods) -> list[str]:
    chosen = {check_method(m) for m in methods}
    return [m for m in METHODS if m in chosen]
def totals(rows: list[LayerTiming]) -> dict:
    """Cycles per method summed over the layers, and ``chosen``: the sum of each layer's fastest."""
    if not rows:
        return {}
    total = {m: sum(r.methods[m].cycles for r in rows) for m in rows[0].methods}
    total["chosen"] = sum(r.methods[r.chosen].cycles for r in rows)
    return total


def _mega(cycles: int) -> str:
    return f"{cycles / 1e6:,.2f}"


def format_timing(rows: list[LayerTiming]) -> str:
    """The table: per layer its shape, each method's cycles (millions, scaled to the layer)
    and lowered KiB, the chosen method and its time against im2col's; then the network's
    totals (the chosen column sums each layer's choice)."""
    if not rows:
        return "(no layers)"
    methods = list(rows[0].methods)
    head = ["layer", "input", "kernel", "S"] + [f"{m} Mcyc" for m in methods] + [f"{m} KiB" for m in methods] \
        + ["chosen", "vs im2col"]
    table = [head]
    for r in rows:
        lay = r.layer
        base = r.methods["im2col"].cycles if "im2col" in r.methods else None
        best = r.methods[r.chosen].cycles
        table.append([lay.name, f"{lay.height}x{lay.width}x{lay.channels}",
                      f"{lay.kernel_h}x{lay.kernel_w}x{lay.filters}", str(lay.stride)]
                     + [_mega(r.methods[m].cycles) for m in methods]
                     + [f"{r.methods[m].lowered_bytes / 1024:,.0f}" for m in methods]
                     + [r.chosen, f"{best / base:.2f}" if base else ""])
    total = totals(rows)
    base = total.get("im2col")
    table.append(["total", "", "", ""] + [_mega(total[m]) for m in methods]
                 + [f"{sum(r.methods[m].lowered_bytes for r in rows) / 1024:,.0f}" for m in methods]
                 + [_mega(total["chosen"]), f"{total['chosen'] / base:.2f}" if base else ""])
    return align_table(table, {0, 1, 2, 3, len(head) - 2})


def plot_timing(rows: list[LayerTiming], path, title: str = "") -> None:
    """A PNG at ``path``: cycles (top) and lowered input bytes (bottom) per layer by method,
    log scale, the chosen method's cycles marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    methods = list(rows[0].methods)
    names = [r.layer.name for r in rows]
    at = np.arange(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.0, 0.22 * len(rows) + 3), 7.5), sharex=True)
    for method in methods:
        top.plot(at, [r.methods[method].cycles for r in rows], marker="o", markersize=3, label=method)
        bottom.plot(at, [r.methods[method].lowered_bytes for r in rows], marker="o", markersize=3, label=method)
    top.scatter(at, [r.methods[r.chosen].cycles for r in rows], s=60, facecolors="none", edgecolors="black",
                label="chosen", zorder=3)
    top.set_yscale("log")
    bottom.set_yscale("log")
    top.set_ylabel("cycles")
    bottom.set_ylabel("lowered input (bytes)")
    top.set_title(title or "cycles and lowered footprint per layer")
    top.legend(ncol=len(methods) + 1, fontsize=8)
    top.grid(True, which="both", alpha=0.3)
    bottom.grid(True, which="both", alpha=0.3)
    bottom.set_xticks(at)
    bottom.set_xticklabels(names, rotation=90, fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
