"""Convolution workloads of ``run`` statements: a layer or a network, every lowering sized
and timed on a Snitch cluster, and the method to pick per layer.

``run conv_network(network = "resnet50", density = 0.4) on node.cluster`` and ``run
conv_layer(height = 56, width = 56, channels = 64, kernel = 3, filters = 64, pad = 1) on
node.cluster`` measure every lowering of every layer (:mod:`.sizes`) and, unless ``simulate
= false``, run each on the target cluster in the system's own simulation, one after another
(:class:`~.runs.ClusterRuns`): operands placed in the memory its DMA port reaches (whatever
the ``.arch`` file wires there: an ideal memory, an HBM pseudo-channel, DRAM through an
interleaver or a network) and the outputs checked there against numpy, a slice of ``slice``
steps scaled to the layer (``slice = 0`` for whole layers). When the last layer is done they
print the table of cycles, lowered sizes and the chosen method per layer with the totals,
write the plot ``plot`` (``conv_<network>.png`` by default, ``plot = ""`` for none) and end
the run once every cluster with a program has finished. A ``conv`` part beside the system
reports per layer (one child part each) the bytes of each lowered input, the compression of
MEC, CPO and CPS against im2col, and each method's cycles, FPU utilisation, DMA bytes and TCDM
footprint of the lowered input; for the whole network the totals. ``archmodel check`` and
``show`` run nothing: the first job is set up when the simulation starts.
"""

from __future__ import annotations

import re
import sys

import attrs

from archmodel.kernel import ArchError, Component, Formula, model
from archmodel.models.compute import SnitchCluster
from archmodel.workloads.binding import end_when_every_cluster_finished

from .layers import PADDINGS, Layer, check_density, read_topology
from .lowering import METHODS, SPARSE, check_method
from .networks import network as bundled_network
from .runs import ClusterRuns, LayerTiming, NetworkSchedule
from .sizes import LayerSizes, network_sizes, totals
from .tiling import plan
from .timing import format_timing, layer_bar, plot_timing, totals as cycle_totals


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
        ``_tcdm_bytes`` (CPO, CPS: ``_compact_cycles`` too) and the fastest one's ``chosen_cycles``."""
        for method, t in timing.methods.items():
            for name, unit, doc, value in (
                    ("cycles", "cycles", "cluster cycles of the layer", t.cycles),
                    ("fpu_utilisation", "%", "FPU utilisation of the compute cores", t.fpu_utilisation),
                    ("dma_bytes", "bytes", "bytes the DMA moved", t.dma_bytes),
                    ("tcdm_bytes", "bytes", "TCDM holding the lowered input (two buffers)", t.tcdm_bytes)):
                self.add_stat(f"{method}_{name}", Formula(unit, f"{method}: {doc}", lambda _, v=value: v))
            if method in SPARSE:
                self.add_stat(f"{method}_compact_cycles", Formula(
                    "cycles", f"{method}: cycles of the layer the cores spent compacting its input",
                    lambda _, v=t.compact_cycles: v))
        self.add_stat("chosen_cycles", Formula("cycles", f"cycles of the fastest lowering ({timing.chosen})",
                                               lambda _, v=timing.methods[timing.chosen].cycles: v))


@model(catalogue=False)
class ConvReport(Component):
    """The whole network's lowered sizes: totals per method and their compression; with a
    :class:`ClusterTiming`, the layers' cycles on the cluster, run when the simulation
    starts (so ``archmodel check`` and ``show`` do not run them)."""

    def show(self, rows: list[LayerSizes], timing: "ClusterTiming | None" = None) -> None:
        """Report the totals of ``rows`` and give each layer a :class:`ConvLayerSizes` child;
        ``timing`` runs the layers when the simulation starts."""
        self.timing = timing
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
        """Set up the first layer's run on the cluster."""
        if self.timing is not None:
            self.timing.begin(self)

    def show_totals(self, timings: list[LayerTiming], runs: ClusterRuns) -> None:
        """Report the network's cycles per method and of the per-layer choice, and what the
        runs simulated: their cycles and DMA bytes as run (slices unscaled)."""
        for name, unit, doc, value in (
                ("runs", "runs", "lowerings run on the cluster (a slice or a whole layer each)", runs.n_jobs),
                ("simulated_cycles", "cycles", "cluster cycles of the runs as simulated (slices unscaled)",
                 runs.n_cycles),
                ("simulated_dma_bytes", "bytes", "bytes the DMA moved in the runs (slices unscaled)",
                 runs.n_dma_bytes)):
            self.add_stat(name, Formula(unit, doc, lambda _, v=value: v))
        for method, cycles in cycle_totals(timings).items():
            doc = "each layer's fastest lowering" if method == "chosen" else method
            self.add_stat(f"{method}_cycles", Formula("cycles", f"all layers: cycles of {doc}", lambda _, v=cycles: v))


class ClusterTiming:
    """Every lowering of ``layers`` run on ``cluster`` and the memory at its DMA port, in the
    system's simulation (:class:`~.runs.ClusterRuns`): each layer's statistics as it is done,
    then the table, the plot and the totals, and the end of the run once every cluster with a
    program has finished. The arguments are checked when it is made (so ``archmodel check``
    finds a layer no tile of the cluster's TCDM fits)."""

    def __init__(self, cluster: SnitchCluster, layers: list[Layer], density, seeds: list, methods: list,
                 slice: int, whole: bool, plot: str, progress, title: str, indirect: bool = False):
        for layer in layers:
            for method in methods:
                try:
                    plan(attrs.evolve(layer, batch=1), method, cluster.tcdm_bytes, cluster.cores,
                         one_row=indirect and method == "cpo")
                except ValueError as err:
                    raise ArchError(str(err)) from None
        self.cluster = cluster
        self.schedule = NetworkSchedule(layers, density, [m for m in METHODS if m in methods], seeds=seeds,
                                        slice_steps=slice or None, whole_chosen=bool(whole), indirect=indirect)
        self.plot, self.progress, self.title = plot, progress, title
        self.report: ConvReport | None = None
        self.runs: ClusterRuns | None = None
        self.bar = None

    def begin(self, report: ConvReport) -> None:
        """Place the first job on the cluster (at the simulation's start) and show the bar."""
        self.report = report
        # the workload's own progress argument, else what the simulation's runner asked for
        # (archmodel run --progress), else whether stderr is a terminal
        show = self.progress if self.progress is not None else report.sim.progress
        show = sys.stderr.isatty() if show is None else bool(show)
        self.bar = layer_bar(len(self.schedule.layers)) if show else None
        self.runs = ClusterRuns(self.cluster, self.schedule, on_layer=self._layer_done, on_end=self._end)
        self.runs.begin()

    def _layer_done(self, row: LayerTiming) -> None:
        self.report.layers[len(self.schedule.rows) - 1].show_timing(row)
        if self.bar is not None:
            self.bar.update()

    def _end(self, timings: list[LayerTiming]) -> None:
        if self.bar is not None:
            self.bar.close()
        schedule, cluster, runs = self.schedule, self.cluster, self.runs
        memory = cluster.outside_memory()
        slices = schedule.slice_steps
        how = f"slices of {slices} steps scaled to each layer" if slices else "whole layers"
        if slices and schedule.whole_chosen:
            how += ", the chosen method's on the whole layer"
        density = f", density {schedule.density}" if schedule.density is not None else ""
        print(f"{self.title}: cycles on {cluster.path} streaming from {memory.path} ({type(memory).__name__})"
              f"{density}, {how}; {runs.n_jobs} runs, {runs.n_cycles:,} cycles simulated, every output checked "
              "against numpy in the memory\n")
        print(format_timing(timings))
        if self.plot:
            plot_timing(timings, self.plot, self.title)
            print(f"\nwrote {self.plot}")
        self.report.show_totals(timings, runs)
        end_when_every_cluster_finished(cluster)


def _methods(methods) -> tuple:
    if methods is None:
        return METHODS
    if not isinstance(methods, str):
        raise ArchError(f"methods must be a string naming lowerings, e.g. \"im2col,cpo\", got {methods!r}")
    return tuple(m.strip() for m in methods.split(",") if m.strip())


def _report(targets, rows: list[LayerSizes], timing: ClusterTiming | None = None) -> ConvReport:
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
    report.show(rows, timing)
    return report


def _timing(targets, layers, density, seeds, methods, simulate, slice, plot, progress, title, whole=False,
            indirect=False):
    """None unless ``simulate``; otherwise (the arguments and the target checked now) the
    :class:`ClusterTiming` of ``layers`` on the target cluster."""
    if not simulate:
        return None
    if isinstance(slice, bool) or not isinstance(slice, int) or slice < 0:
        raise ArchError(f"slice must be a number of steps (0: whole layers), got {slice!r}")
    if not isinstance(plot, str):
        raise ArchError(f"plot must be a file name (\"\" for none), got {plot!r}")
    if not isinstance(indirect, bool):
        raise ArchError(f"indirect must be true or false, got {indirect!r}",
                        hint="true: CPO gathers its kernel entries through the SSRs' indirection")
    clusters = [t for t in targets if isinstance(t, SnitchCluster)]
    if len(targets) != 1 or len(clusters) != 1:
        raise ArchError("the convolution workloads time the layers on one SnitchCluster",
                        hint="target a cluster wired to a memory, e.g. run conv_network(...) on node.cluster, "
                        "or give simulate = false for the sizes alone")
    cluster = clusters[0]
    memory = cluster.outside_memory()
    if memory is None or not all(hasattr(memory, name) for name in ("backdoor_write", "backdoor_read",
                                                                     "base_address", "size_bytes")):
        found = "nothing" if memory is None else f"{memory.path} ({type(memory).__name__}), which holds no data"
        raise ArchError(f"the convolution workloads stream the layers from the memory at {cluster.path}.ext_req, "
                        f"but it reaches {found}",
                        hint="connect ext_req/ext_rsp to a memory (FixedLatencyMemory, DramController, "
                        "InterleavedMemory, or a memory-mapped network interface in front of one)")
    return ClusterTiming(cluster, layers, check_density(density), seeds, [check_method(m) for m in methods], slice,
                         whole, plot, progress, title, indirect)


def _named_only(workload: str, args) -> None:
    if args:
        raise ArchError(f"workload '{workload}' takes named arguments only, e.g. {workload}(density = 0.4)")


def bind_conv_network(targets, *args, network=None, topology=None, padding="none", layers="", density=None,
                      seed=0, batch=1, methods=None, simulate=True, slice=16, plot=None, progress=None,
                      whole=False, indirect=False) -> ConvReport:
    """``conv_network(network = "resnet50" | topology = "file.csv", padding = "none" | "same",
    layers = "res2a_2,res3a_2", density = 0.4, seed = 0, batch = 1, methods =
    "im2col,mec,cpo", simulate = true, slice = 16, plot = "conv.png", progress = true, whole =
    true, indirect = false)``: the lowered sizes and cluster cycles of every layer (or of the
    ``layers`` named) of a bundled network or a SCALE-Sim topology file (relative to the
    working folder); ``whole`` runs each layer's chosen method on the whole layer after the
    slices chose it; ``indirect`` has CPO gather through the SSRs' indirection.
    ``density`` omitted: all-dense activations. Layer ``k`` of the network draws its
    activations and weights with ``seed + k``, chosen or not."""
    _named_only("conv_network", args)
    if (network is None) == (topology is None):
        raise ArchError("conv_network takes one of network = \"resnet50\" (bundled) or topology = \"file.csv\"")
    if topology is not None:
        if padding not in PADDINGS:
            raise ArchError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
        every = read_topology(topology, padding=padding, batch=batch)
    else:
        every = bundled_network(network, batch=batch)
    picked = _picked(every, layers)
    chosen = [every[k] for k in picked]
    seeds = [seed + k for k in picked]
    rows = [network_sizes([layer], density, seed=s, methods=_methods(methods))[0] for layer, s in zip(chosen, seeds)]
    title = network if network is not None else str(topology)
    if plot is None:
        plot = f"conv_{re.sub(r'[^A-Za-z0-9_.-]', '_', title.rsplit('/', 1)[-1].removesuffix('.csv'))}.png"
    timing = _timing(targets, chosen, density, seeds, list(rows[0].sizes), simulate, slice, plot, progress, title,
                     whole, indirect)
    return _report(targets, rows, timing)


def _picked(layers: list[Layer], names) -> list[int]:
    """The indices of the layers ``names`` ("a,b"; "" for all) selects, in the network's order."""
    if not isinstance(names, str):
        raise ArchError(f"layers must be a string naming layers, e.g. \"conv1,conv2\" (\"\" for all), got {names!r}")
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    known = [layer.name for layer in layers]
    unknown = [n for n in wanted if n not in known]
    if unknown:
        raise ArchError(f"the network has no layer {', '.join(repr(n) for n in unknown)}",
                        hint=f"its layers: {', '.join(known[:8])}{', ...' if len(known) > 8 else ''}")
    return [k for k, name in enumerate(known) if not wanted or name in wanted]


def bind_conv_layer(targets, *args, height=None, width=None, channels=None, kernel=None, kernel_h=None,
                    kernel_w=None, filters=None, stride=1, pad=0, pad_h=None, pad_w=None, batch=1, density=None,
                    seed=0, methods=None, name="layer", simulate=True, slice=16, plot="", progress=None,
                    indirect=False) -> ConvReport:
    """``conv_layer(height = 56, width = 56, channels = 64, kernel = 3, filters = 64, stride =
    1, pad = 1, density = 0.4)``: the lowered sizes and cluster cycles of one layer (``width``
    defaults to ``height``; ``kernel_h``/``kernel_w`` and ``pad_h``/``pad_w`` set one
    direction; ``simulate``, ``slice``, ``plot`` (none by default), ``progress`` and
    ``indirect`` as for ``conv_network``)."""
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
    timing = _timing(targets, [layer], density, [seed], list(rows[0].sizes), simulate, slice, plot, progress, name,
                     indirect=indirect)
    return _report(targets, rows, timing)


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
