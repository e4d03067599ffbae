"""Training-cluster parts: GPUs, host memory behind PCIe, NICs, the links between them as
kernel channels, and collectives at chunk level over them (ring and tree, flat and
hierarchical). The schedules that drive them (ZeRO-3, FCDP) are in
:mod:`archmodel.workloads.training`.
"""

from .collectives import (ALGORITHMS, KINDS, collective, grouped, ring_all_gather, ring_reduce_scatter, shard_bytes, split,
                          tree_all_gather, tree_all_reduce, tree_reduce_scatter)
from .forwarding import Forwarder, Nic
from .gpu import Gpu, Task
from .host import HostMemory
from .routing import LINK_CLASSES, install_routes, link_class
from .transfer import RankProgram, Send, Transfer

__all__ = ["ALGORITHMS", "Forwarder", "Gpu", "HostMemory", "KINDS", "LINK_CLASSES", "Nic", "RankProgram", "Send",
           "Task", "Transfer", "collective", "grouped", "install_routes", "link_class", "ring_all_gather", "ring_reduce_scatter",
           "shard_bytes", "split", "tree_all_gather", "tree_all_reduce", "tree_reduce_scatter"]
