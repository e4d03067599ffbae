"""The routing functions by the name a ``routing`` parameter takes: one registry over the
mesh, torus and graph routings of :mod:`.routing` and the dragonfly ones of
:mod:`.routing_dragonfly`."""

from __future__ import annotations

from archmodel.kernel import Registry

from .routing import (DatelineDimensionOrder, DimensionOrder, EscapeVC, OddEven, PortMap, Routing, ShortestPath,
                      UpDown, WestFirst)
from .routing_dragonfly import DragonflyMinimal, Ugal, Valiant


ROUTINGS: Registry[type[Routing]] = Registry("routing", {
    cls.name: cls for cls in (DimensionOrder, DatelineDimensionOrder, ShortestPath, UpDown, EscapeVC, WestFirst,
                              OddEven, DragonflyMinimal, Valiant, Ugal)})
"""The routing functions by the name a ``routing`` parameter takes (its check, and the hint
for a misspelt one)."""


def make_routing(name: str, ports: PortMap, vcs: int) -> Routing:
    """The routing function called ``name`` over ``ports`` with ``vcs`` VCs per port."""
    return ROUTINGS.lookup(name)(ports, vcs)
