"""Convolution workloads of ``run`` statements: the lowered sizes of a layer or a network.

``run conv_network(network = "resnet50", density = 0.4) on node`` and ``run conv_layer(height
= 56, width = 56, channels = 64, kernel = 3, filters = 64, pad = 1) on node`` measure every
lowering of every layer (:mod:`.sizes`) and add a ``conv`` part beside the system whose
statistics ``archmodel run`` prints: per layer (one child part each) the bytes of each
lowered input and the compression of MEC, CPO and CPS against im2col; for the whole network
the totals. Sizes only: the layers do not run on the target's cores yet (the Snitch-cluster
timing of issue 16 is still to come), so the target only places the report.
"""

from __future__ import annotations

import re

from archmodel.kernel import ArchError, Component, Formula, model

from .layers import PADDINGS, Layer, read_topology
from .lowering import METHODS
from .networks import network as bundled_network
from .sizes import LayerSizes, network_sizes, totals


@model(catalogue=False)
class ConvLayerSizes(Component):
    """One layer's lowered input sizes by method, as statistics (added by the workload)."""

    def show(self, row: LayerSizes) -> None:
        """Report ``row``: ``<method>_bytes`` and ``<method>_compression`` against im2col."""
        for method, size in row.sizes.items():
            self.add_stat(f"{method}_bytes", Formula("bytes", f"{method}-lowered input of {row.layer}",
                                                     lambda _, b=size.bytes: b))
        for method in row.sizes:
            if method not in ("direct", "im2col"):
                self.add_stat(f"{method}_compression", Formula("x", f"im2col bytes over {method} bytes",
                                                               lambda _, m=method: row.compression(m)))


@model(catalogue=False)
class ConvReport(Component):
    """The whole network's lowered sizes: totals per method and their compression."""

    def show(self, rows: list[LayerSizes]) -> None:
        """Report the totals of ``rows`` and give each layer a :class:`ConvLayerSizes` child."""
        total = totals(rows)
        for method, nbytes in total.items():
            self.add_stat(f"{method}_bytes", Formula("bytes", f"{method}-lowered inputs of all layers",
                                                     lambda _, b=nbytes: b))
        for method, nbytes in total.items():
            if method not in ("direct", "im2col"):
                self.add_stat(f"{method}_compression", Formula("x", f"all layers: im2col bytes over {method} bytes",
                                                               lambda _, b=nbytes: total["im2col"] / b if b else None))
        names: set[str] = set()
        for row in rows:
            name = re.sub(r"\W", "_", row.layer.name)
            while name in names:
                name += "_"
            names.add(name)
            ConvLayerSizes(name, self).show(row)


def _methods(methods) -> tuple:
    if methods is None:
        return METHODS
    if not isinstance(methods, str):
        raise ArchError(f"methods must be a string naming lowerings, e.g. \"im2col,cpo\", got {methods!r}")
    return tuple(m.strip() for m in methods.split(",") if m.strip())


def _report(targets, rows: list[LayerSizes]) -> ConvReport:
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
    report.show(rows)
    return report


def _named_only(workload: str, args) -> None:
    if args:
        raise ArchError(f"workload '{workload}' takes named arguments only, e.g. {workload}(density = 0.4)")


def bind_conv_network(targets, *args, network=None, topology=None, padding="none", density=None, seed=0,
                      batch=1, methods=None) -> ConvReport:
    """``conv_network(network = "resnet50" | topology = "file.csv", padding = "none" | "same",
    density = 0.4, seed = 0, batch = 1, methods = "im2col,mec,cpo")``: the lowered sizes of
    every layer of a bundled network or a SCALE-Sim topology file (relative to the working
    folder). ``density`` omitted: all-dense activations."""
    _named_only("conv_network", args)
    if (network is None) == (topology is None):
        raise ArchError("conv_network takes one of network = \"resnet50\" (bundled) or topology = \"file.csv\"")
    if topology is not None:
        if padding not in PADDINGS:
            raise ArchError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
        layers = read_topology(topology, padding=padding, batch=batch)
    else:
        layers = bundled_network(network, batch=batch)
    return _report(targets, network_sizes(layers, density, seed=seed, methods=_methods(methods)))


def bind_conv_layer(targets, *args, height=None, width=None, channels=None, kernel=None, kernel_h=None,
                    kernel_w=None, filters=None, stride=1, pad=0, pad_h=None, pad_w=None, batch=1, density=None,
                    seed=0, methods=None, name="layer") -> ConvReport:
    """``conv_layer(height = 56, width = 56, channels = 64, kernel = 3, filters = 64, stride =
    1, pad = 1, density = 0.4)``: the lowered sizes of one layer (``width`` defaults to
    ``height``; ``kernel_h``/``kernel_w`` and ``pad_h``/``pad_w`` set one direction)."""
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
    return _report(targets, network_sizes([layer], density, seed=seed, methods=_methods(methods)))


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
