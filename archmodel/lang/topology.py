"""Topology generators for the ``topology`` statement of the language.

The registry lives beside the model families (:mod:`archmodel.models.topologies`); the
families register their generators there (the network's meshes and trees, the fronthaul's radio
stripes) and build their own components from the same graphs; the language reads the registry
through this module. ``net : topology mesh(4, 4) of
Crossbar() with link(latency = 2)`` calls the generator registered as ``mesh`` and builds one
instance of the node model per graph node, connected along the graph's edges.
"""

from __future__ import annotations

from ..models.topologies import register_topology, topology_generators

__all__ = ["register_topology", "topology_generators"]
