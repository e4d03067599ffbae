"""The single-cycle router for large systems, and the router models a :class:`~.network.Noc`
builds by name (its ``router`` parameter)."""

from __future__ import annotations

from archmodel.kernel import Param, Registry, at_least, in_range, model

from .allocators import ALLOCATORS
from .flit import MAX_VCS
from .router import NocRouter


@model
class SimpleRouter(NocRouter):
    """A single-cycle wormhole router for large systems: one VC, route, allocation and
    traversal in the edge a flit arrives, round-robin switch allocation, credit flow control.

    Each hop costs only the link latency (plus contention). The same machinery as
    :class:`NocRouter` with every stage delay zero and one VC, so it is exactly as correct and
    tested; choose it when a system has thousands of routers and the interconnect is not
    under study. Leaves out VCs, so use deadlock-free routing (``dor``, ``updown``).
    """

    vcs = Param(int, 1, "virtual channels per port", check=in_range(1, MAX_VCS))
    vc_alloc_delay = Param(int, 0, "cycles of VC allocation", unit="cycles", check=at_least(0))
    sw_alloc_delay = Param(int, 0, "cycles of switch allocation", unit="cycles", check=at_least(0))
    st_delay = Param(int, 0, "cycles of switch traversal", unit="cycles", check=at_least(0))
    allocator = Param(str, "round_robin", "VC and switch allocator", check=ALLOCATORS.check)
    occupancy_registers = Param(bool, False, "keep the per-VC occupancy registers up to date (for waveforms)")


ROUTER_MODELS: Registry[type[NocRouter]] = Registry("router model", {"NocRouter": NocRouter, "SimpleRouter": SimpleRouter})
"""The router models a Noc's ``router`` parameter names: the virtual-channel router and the
single-cycle one."""
