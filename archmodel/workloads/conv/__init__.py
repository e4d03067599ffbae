"""Convolution lowerings: layers (and SCALE-Sim topology files, and four bundled networks),
random or dense activations, and the five lowerings (direct, im2col, MEC, CPO, CPS) with their
exact sizes and the convolution computed through each; and each lowering as Snitch assembly
on a cluster (:mod:`.kernels`, tiled by :mod:`.tiling`), run back to back on one cluster and
its memory (:mod:`.runs`), timed per layer (:mod:`.timing`).

    from archmodel.workloads.conv import network, lowered_size, convolve, activations, weights
    layer = network("resnet50")[2]                  # res2a_2: 56x56x64, 3x3, pad 1
    lowered_size("mec", layer).elements             # 623616
    lowered_size("cpo", layer, density=0.3).bytes
    convolve("cpo", layer, activations(layer, 0.3), weights(layer))
    time_network(network("resnet50")[:3], 0.4)      # cycles per method on an 8-core cluster
"""

from .layers import PADDINGS, Layer, activations, check_density, read_topology, weights
from .lowering import (METHODS, SPARSE, CpoMap, LoweredSize, compression, convolve, cpo_map, im2col_matrix, lower,
                       lowered_size, mec_matrix)
from .networks import NETWORKS, network
from .runs import ClusterRuns, NetworkSchedule
from .timing import LayerTiming, MethodTiming, format_timing, plot_timing, time_layer, time_network

__all__ = ["METHODS", "NETWORKS", "PADDINGS", "SPARSE", "ClusterRuns", "CpoMap", "Layer", "LayerTiming",
           "LoweredSize", "MethodTiming", "NetworkSchedule", "activations", "check_density", "compression", "convolve",
           "cpo_map", "format_timing", "im2col_matrix", "lower", "lowered_size", "mec_matrix", "network",
           "plot_timing", "read_topology", "time_layer", "time_network", "weights"]
