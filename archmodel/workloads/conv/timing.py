"""Cycles of every lowering of every layer on a Snitch cluster, the method to pick per layer,
and the report: a table and a plot.

:func:`time_layer` runs each lowering of one layer (:mod:`.kernels`) on a fresh cluster whose
DMA port reaches a :class:`~archmodel.models.compute.FixedLatencyMemory`, and scales the
cycles of a **slice** to the layer: the slice is the middle band(s) of output rows, the first
filter block and the first channel chunks (``slice_steps`` steps, see :func:`slice_of`), and
the layer takes ``slice cycles / fraction`` where ``fraction`` is the slice's share of the
(band, block, chunk) steps weighted by rows. This holds because every step of a layer does the
same work on the same sizes: the GEMMs' timing does not depend on the values, and the
CPO/CPS work of a band follows its non-zeros, which random activations of one density spread
evenly over the bands (activations with structure, e.g. real feature maps, would want more
bands in the slice). What the scaling repeats wrongly is the once-per-run prologue (the first
fetch) and epilogue (the last write-back); ``benchmarks/conv.py`` compares slices with whole
layers. ``slice_steps=None`` runs the whole layer. A batch larger than 1 runs image 0 and
counts ``batch`` times its cycles.

:func:`time_network` does this for a network's layers (a progress bar per layer);
:func:`format_timing` prints the per-layer table and the totals, :func:`plot_timing` writes
the cycles and the footprint per layer by method as a PNG.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from archmodel.kernel import ArchError, Simulator
from archmodel.workloads.snitch import build_system, report

from .kernels import plan_for, setup_conv
from .layers import Layer, activations, check_density, weights
from .lowering import METHODS, check_method, lowered_size
from .sizes import align_table

MEMORY_BYTES = 64 << 20


@attrs.frozen
class MethodTiming:
    """One lowering of one layer on the cluster. ``cycles`` and ``dma_bytes`` are the
    layer's (the slice's scaled by 1 / ``fraction``); ``tcdm_bytes`` is the TCDM holding the
    lowered input (its two buffers); ``lowered_bytes`` the whole layer's lowered input."""

    method: str
    cycles: int
    slice_cycles: int
    fraction: float
    fpu_utilisation: float
    dma_bytes: int
    tcdm_bytes: int
    lowered_bytes: int
    tiling: str
    steps: int


@attrs.frozen
class LayerTiming:
    """Every timed lowering of one layer."""

    layer: Layer
    density: float | None
    methods: dict

    @property
    def chosen(self) -> str:
        """The fastest lowering (ties: the earlier in METHODS)."""
        return min(self.methods, key=lambda m: (self.methods[m].cycles, METHODS.index(m)))

    def compression(self, method: str) -> float:
        """im2col's lowered bytes over ``method``'s."""
        stored = self.methods[method].lowered_bytes
        return lowered_size("im2col", self.layer).bytes / stored if stored else math.inf


def slice_of(tiling, slice_steps: int | None) -> dict:
    """The :func:`~.kernels.setup_conv` arguments of the slice: up to ``slice_steps`` steps,
    first the chunks of one filter block of the middle band, then more bands around it."""
    if slice_steps is None:
        return {}
    if slice_steps < 1:
        raise ArchError(f"slice must be a positive number of steps, got {slice_steps}")
    chunks = min(tiling.chunks, slice_steps)
    count = min(len(tiling.bands), max(1, slice_steps // chunks))
    first = (len(tiling.bands) - count) // 2
    return {"bands": range(first, first + count), "blocks": 1, "chunks": chunks}


def time_layer(layer: Layer, x: np.ndarray, w: np.ndarray, methods=METHODS, *, slice_steps: int | None = 16,
               cores: int = 8, memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 50,
               cluster_params: dict | None = None) -> dict:
    """{method: MethodTiming} for ``layer`` with activations ``x`` and weights ``w`` (a
    slice of ``slice_steps`` steps scaled to the layer, or the whole layer with None)."""
    batch = layer.batch
    one = attrs.evolve(layer, batch=1)
    x = x[:1]
    timings = {}
    for method in methods:
        check_method(method)
        top = build_system(cores=cores, memory_bytes_per_cycle=memory_bytes_per_cycle,
                           memory_latency_cycles=memory_latency_cycles, memory_bytes=MEMORY_BYTES,
                           **(cluster_params or {}))
        cluster = top.child("cluster")
        tiling = plan_for(one, method, x, cluster.tcdm_bytes, cluster.cores)
        placed = setup_conv(cluster, top.child("memory"), one, method, x, w, tiling=tiling,
                            **slice_of(tiling, slice_steps))
        Simulator(top).run()
        if not getattr(cluster, "result_ok", False):
            raise AssertionError(f"{layer.name} {method}: the cluster did not finish")
        measured = report(cluster, method)
        scale = batch / placed.fraction
        timings[method] = MethodTiming(
            method, round(measured.cycles * scale), measured.cycles, placed.fraction, measured.fpu_utilisation,
            round(measured.dma_bytes * scale), placed.tcdm_input_bytes,
            lowered_size(method, one, activations=x).bytes * batch, str(tiling), placed.steps)
    return timings


def time_network(layers: list[Layer], density: float | None = None, methods=METHODS, *, seed: int = 0,
                 slice_steps: int | None = 16, whole_chosen: bool = False, progress: bool = False,
                 **system) -> list[LayerTiming]:
    """:func:`time_layer` for every layer; layer ``k`` draws its activations and weights with
    ``seed + k``. ``whole_chosen`` then runs each layer's fastest method on the whole layer
    (its slice-scaled timing replaced by the measured one; the choice stays the slices').
    ``progress`` shows a bar per layer on stderr."""
    density = check_density(density)
    methods = [m for m in METHODS if m in {check_method(m) for m in methods}]
    rows = []
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(layers), unit="layer", leave=False)
    try:
        for k, layer in enumerate(layers):
            if bar is not None:
                bar.set_description(layer.name)
            x, w = activations(layer, density, seed + k), weights(layer, seed + k)
            timed = time_layer(layer, x, w, methods, slice_steps=slice_steps, **system)
            if whole_chosen and slice_steps is not None:
                chosen = LayerTiming(layer, density, timed).chosen
                timed[chosen] = time_layer(layer, x, w, (chosen,), slice_steps=None, **system)[chosen]
            rows.append(LayerTiming(layer, density, timed))
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
    return rows


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
