"""Convolution workloads of ``run`` statements: a layer or a network, every lowering sized
and timed on a Snitch cluster, and the method to pick per layer.

``run conv_network(network = "resnet50", density = 0.4) on node.cluster`` and ``run
conv_layer(height = 56, width = 56, channels = 64, kernel = 3, filters = 64, pad = 1) on
node.cluster`` measure every lowering of every layer (:mod:`.sizes`) and, unless ``simulate
= false``, run each on the cluster (:mod:`.timing`: a fresh copy of the target cluster, its
cores, TCDM and banks, with a FixedLatencyMemory of the bandwidth and latency of the one at
its DMA port, or 64 B/cycle and 50 cycles when the target is not a cluster on such a memory;
a slice of ``slice`` steps scaled to the layer, ``slice = 0`` for whole layers). They print
the table of cycles, lowered sizes and the chosen method per layer with the totals, write
the plot ``plot`` (``conv_<network>.png`` by default, ``plot = ""`` for none), and add a
``conv`` part beside the system whose statistics ``archmodel run`` prints: per layer (one
child part each) the bytes of each lowered input, the compression of MEC, CPO and CPS
against im2col, and each method's cycles, FPU utilisation, DMA bytes and TCDM footprint of
the lowered input; for the whole network the totals. The layers run before the system's own
simulation, which the target only places the report in.
"""

from __future__ import annotations

import re
import sys

from archmodel.kernel import ArchError, Component, Formula, model
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster

from .layers import PADDINGS, Layer, read_topology
from .lowering import METHODS
from .networks import network as bundled_network
from .sizes import LayerSizes, network_sizes, totals
from .timing import LayerTiming, format_timing, plot_timing, time_network, totals as cycle_totals


@model(catalogue=False)
class ConvLayerSizes(Component):
    """One layer's lowered input sizes by method, and its cluster timing, as statistics
    (added by the workload)."""

    def show(self, row: LayerSizes) -> None:
        """Report ``row``: ``<method>_bytes`` and ``<method>_compression`` against im2col."""
        for method, size in row.sizes.items():
            self.add_stat(f"{method}_bytes", Formula("bytes", f"{method}-lowered input of {row.layer}",
                                                     lambda _, b=size.bytes: b))
        for method in row.sizes:
            if method not in ("direct", "im2col"):
                self.add_stat(f"{method}_compression", Formula("x", f"im2col bytes over {method} bytes",
                                                               lambda _, m=method: row.compression(m)))

    def show_timing(self, timing: LayerTiming) -> None:
        """Report each method's ``_cycles``, ``_fpu_utilisation``, ``_dma_bytes`` and
        ``_tcdm_bytes`` and the fastest one's ``chosen_cycles``."""
        for method, t in timing.methods.items():
            for name, unit, doc, value in (
                    ("cycles", "cycles", "cluster cycles of the layer", t.cycles),
                    ("fpu_utilisation", "%", "FPU utilisation of the compute cores", t.fpu_utilisation),
                    ("dma_bytes", "bytes", "bytes the DMA moved", t.dma_bytes),
                    ("tcdm_bytes", "bytes", "TCDM holding the lowered input (two buffers)", t.tcdm_bytes)):
                self.add_stat(f"{method}_{name}", Formula(unit, f"{method}: {doc}", lambda _, v=value: v))
        self.add_stat("chosen_cycles", Formula("cycles", f"cycles of the fastest lowering ({timing.chosen})",
                                               lambda _, v=timing.methods[timing.chosen].cycles: v))


@model(catalogue=False)
class ConvReport(Component):
    """The whole network's lowered sizes: totals per method and their compression; with a
    timing job, the layers' cycles on the cluster, measured when the simulation starts (so
    ``archmodel check`` and ``show`` do not run them)."""

    def show(self, rows: list[LayerSizes], timing_job=None) -> None:
        """Report the totals of ``rows`` and give each layer a :class:`ConvLayerSizes` child;
        ``timing_job()`` returns the layers' timings at the start."""
        self.timing_job = timing_job
        total = totals(rows)
        for method, nbytes in total.items():
            self.add_stat(f"{method}_bytes", Formula("bytes", f"{method}-lowered inputs of all layers",
                                                     lambda _, b=nbytes: b))
        for method, nbytes in total.items():
            if method not in ("direct", "im2col"):
                self.add_stat(f"{method}_compression", Formula("x", f"all layers: im2col bytes over {method} bytes",
                                                               lambda _, b=nbytes: total["im2col"] / b if b else None))
        names: set[str] = set()
        self.layers = []
        for row in rows:
            name = re.sub(r"\W", "_", row.layer.name)
            while name in names:
                name += "_"
            names.add(name)
            self.layers.append(ConvLayerSizes(name, self))
            self.layers[-1].show(row)

    def start(self) -> None:
        """Run the timing job and report cycles per method and of the per-layer choice."""
        if self.timing_job is None:
            return
        timings = self.timing_job()
        for method, cycles in cycle_totals(timings).items():
            doc = "each layer's fastest lowering" if method == "chosen" else method
            self.add_stat(f"{method}_cycles", Formula("cycles", f"all layers: cycles of {doc}", lambda _, v=cycles: v))
        for layer, timing in zip(self.layers, timings):
            layer.show_timing(timing)


def _methods(methods) -> tuple:
    if methods is None:
        return METHODS
    if not isinstance(methods, str):
        raise ArchError(f"methods must be a string naming lowerings, e.g. \"im2col,cpo\", got {methods!r}")
    return tuple(m.strip() for m in methods.split(",") if m.strip())


def _report(targets, rows: list[LayerSizes], timing_job=None) -> ConvReport:
    if not targets or not isinstance(targets[0], Component):
        raise ArchError("the convolution workloads need an instance to report beside, e.g. run conv_network(...) "
                        "on node")
    root = targets[0]
    while root.parent is not None:
        root = root.parent
    name = "conv"
    while any(c.name == name for c in root.children):
        name += "_"
    report = ConvReport(name, root)
    report.show(rows, timing_job)
    return report


def _system(target) -> dict:
    """The cluster and memory parameters of :func:`~.timing.time_layer` for ``target``."""
    if not isinstance(target, SnitchCluster):
        return {}
    system = {"cores": target.cores, "cluster_params": {"tcdm_bytes": target.tcdm_bytes, "banks": target.banks}}
    memory = target.outside_memory()
    if isinstance(memory, FixedLatencyMemory):
        system.update(memory_bytes_per_cycle=memory.bytes_per_cycle, memory_latency_cycles=memory.latency_cycles)
    return system


def _timing_job(targets, layers, density, seed, methods, simulate, slice, plot, progress, title, whole=False):
    """None unless ``simulate``; otherwise (the arguments checked now) a job that times
    ``layers``, prints the table, writes the plot and returns the timings."""
    if not simulate:
        return None
    if isinstance(slice, bool) or not isinstance(slice, int) or slice < 0:
        raise ArchError(f"slice must be a number of steps (0: whole layers), got {slice!r}")
    if not isinstance(plot, str):
        raise ArchError(f"plot must be a file name (\"\" for none), got {plot!r}")
    system = _system(targets[0] if targets else None)

    def job():
        show = sys.stderr.isatty() if progress is None else bool(progress)
        try:
            timings = time_network(layers, density, methods, seed=seed, slice_steps=slice or None,
                                   whole_chosen=bool(whole), progress=show, **system)
        except ValueError as err:
            raise ArchError(str(err)) from None
        how = f"slices of {slice} steps scaled to each layer" if slice else "whole layers"
        if slice and whole:
            how += ", the chosen method's on the whole layer"
        print(f"{title}: cycles on the cluster{f', density {density}' if density is not None else ''}, {how}\n")
        print(format_timing(timings))
        if plot:
            plot_timing(timings, plot, title)
            print(f"\nwrote {plot}")
        return timings
    return job


def _named_only(workload: str, args) -> None:
    if args:
        raise ArchError(f"workload '{workload}' takes named arguments only, e.g. {workload}(density = 0.4)")


def bind_conv_network(targets, *args, network=None, topology=None, padding="none", density=None, seed=0,
                      batch=1, methods=None, simulate=True, slice=16, plot=None, progress=None,
                      whole=False) -> ConvReport:
    """``conv_network(network = "resnet50" | topology = "file.csv", padding = "none" | "same",
    density = 0.4, seed = 0, batch = 1, methods = "im2col,mec,cpo", simulate = true, slice =
    16, plot = "conv.png", progress = true, whole = true)``: the lowered sizes and cluster
    cycles of every layer of a bundled network or a SCALE-Sim topology file (relative to the
    working folder); ``whole`` runs each layer's chosen method on the whole layer after the
    slices chose it. ``density`` omitted: all-dense activations."""
    _named_only("conv_network", args)
    if (network is None) == (topology is None):
        raise ArchError("conv_network takes one of network = \"resnet50\" (bundled) or topology = \"file.csv\"")
    if topology is not None:
        if padding not in PADDINGS:
            raise ArchError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
        layers = read_topology(topology, padding=padding, batch=batch)
    else:
        layers = bundled_network(network, batch=batch)
    rows = network_sizes(layers, density, seed=seed, methods=_methods(methods))
    title = network if network is not None else str(topology)
    if plot is None:
        plot = f"conv_{re.sub(r'[^A-Za-z0-9_.-]', '_', title.rsplit('/', 1)[-1].removesuffix('.csv'))}.png"
    job = _timing_job(targets, layers, density, seed, list(rows[0].sizes), simulate, slice, plot, progress, title,
                      whole)
    return _report(targets, rows, job)


def bind_conv_layer(targets, *args, height=None, width=None, channels=None, kernel=None, kernel_h=None,
                    kernel_w=None, filters=None, stride=1, pad=0, pad_h=None, pad_w=None, batch=1, density=None,
                    seed=0, methods=None, name="layer", simulate=True, slice=16, plot="", progress=None) -> ConvReport:
    """``conv_layer(height = 56, width = 56, channels = 64, kernel = 3, filters = 64, stride =
    1, pad = 1, density = 0.4)``: the lowered sizes and cluster cycles of one layer (``width``
    defaults to ``height``; ``kernel_h``/``kernel_w`` and ``pad_h``/``pad_w`` set one
    direction; ``simulate``, ``slice``, ``plot`` (none by default) and ``progress`` as for
    ``conv_network``)."""
    _named_only("conv_layer", args)
    missing = [k for k, v in (("height", height), ("channels", channels), ("filters", filters)) if v is None]
    if kernel is None and (kernel_h is None or kernel_w is None):
        missing.append("kernel")
    if missing:
        raise ArchError(f"conv_layer needs {', '.join(missing)}", hint="e.g. conv_layer(height = 56, channels = 64, "
                        "kernel = 3, filters = 64, pad = 1)")
    layer = Layer(name, height, height if width is None else width, channels,
                  kernel if kernel_h is None else kernel_h, kernel if kernel_w is None else kernel_w, filters, stride,
                  pad if pad_h is None else pad_h, pad if pad_w is None else pad_w, batch)
    rows = network_sizes([layer], density, seed=seed, methods=_methods(methods))
    job = _timing_job(targets, [layer], density, seed, list(rows[0].sizes), simulate, slice, plot, progress, name)
    return _report(targets, rows, job)


def _arguments_checked(name: str, bind):
    """``bind`` with a misnamed or missing argument reported as an ArchError naming the workload."""
    def checked(targets, *args, **kwargs):
        try:
            return bind(targets, *args, **kwargs)
        except TypeError as err:
            raise ArchError(f"workload '{name}': {str(err).replace(bind.__name__ + '() ', '')}") from None
    checked.__doc__ = bind.__doc__
    return checked


WORKLOADS = {"conv_network": _arguments_checked("conv_network", bind_conv_network),
             "conv_layer": _arguments_checked("conv_layer", bind_conv_layer)}
"""Binders for ``run NAME(args) on node`` in .arch files."""
