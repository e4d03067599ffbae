"""Interconnect models: routers, links, network interfaces, topologies, routing and traffic.

Topologies are networkx graphs made by registered generators (:mod:`.topology`); routing
functions work on those graphs (:mod:`.routing`); :class:`Noc` builds a whole network with
synthetic traffic and BookSim 2's measurement (:mod:`.measurement`), and
:func:`archmodel.experiments.network.sweep` runs it over a range of offered loads. Packets can also come from a trace file (:mod:`.trace`), and
``Noc(engine="fast")`` steps the whole network from one component (:mod:`.engine`). With an
``address_map`` a Noc carries memory traffic between requesters and memories
(:mod:`.memory_interface`, :mod:`.address_map`).
"""

from .address_map import AddressMap, AddressRange
from .allocators import islip, separable_input_first
from .flit import Flit, NetPacket
from .interface import NetworkInterface
from .link import DieToDieLink
from .memory_tree import MemoryTreeNode
from .memory_interface import MemoryMappedInterface
from .measurement import NetworkMeasurement
from .network import Noc
from .router import NocRouter
from .simple_router import ROUTER_MODELS, SimpleRouter
from .routing import PortMap
from .routing_functions import make_routing
from .topology import build_topology, register_topology, terminal_count, topology_generators
from .trace import TracePacket, parse_trace, read_trace

__all__ = ["AddressMap", "AddressRange", "DieToDieLink", "Flit", "MemoryMappedInterface", "MemoryTreeNode", "NetPacket",
           "NetworkInterface", "NetworkMeasurement", "Noc", "NocRouter", "PortMap", "ROUTER_MODELS", "SimpleRouter",
           "TracePacket", "build_topology", "islip", "make_routing", "parse_trace", "read_trace",
           "register_topology", "separable_input_first", "terminal_count", "topology_generators"]
