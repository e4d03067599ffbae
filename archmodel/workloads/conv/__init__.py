"""Convolution workloads: layers (and SCALE-Sim topology files, and four bundled networks) and
random or dense activations."""

from .layers import PADDINGS, Layer, activations, check_density, read_topology, weights
from .networks import NETWORKS, network

__all__ = ["NETWORKS", "PADDINGS", "Layer", "activations", "check_density", "network", "read_topology", "weights"]
