"""A component tree as a run will see it, without running it: every component with its clock
domain resolved, the clock domains and the channels, checked for what no run could start with
(a required port left unconnected, a request port without its way back, a channel leading out
of the tree).

``archmodel check`` and ``archmodel show`` look at a system through a :class:`Tree`; the
:class:`~.simulator.Simulator` builds its schedule on one.
"""

from __future__ import annotations

from typing import cast

from .component import Component
from .errors import PortError
from .ports import unpaired_port
from .time import ClockDomain

DEFAULT_CLOCK = ClockDomain("clk", 1000)
"""The clock of a top built without one (1 GHz)."""


class Tree:
    """The elaborated tree under ``top``: ``components`` (depth first, ``top`` first),
    ``domains`` (in the order components first use them) and ``channels`` (each once, in the
    order of their senders). Building it gives ``top`` the :data:`DEFAULT_CLOCK` if it has
    none and every other component without a clock its parent's (``comp.domain``), and
    raises :class:`~.errors.PortError` for a tree that cannot run."""

    def __init__(self, top: Component):
        self.top = top
        self.components: list[Component] = []
        self.domains: list[ClockDomain] = []
        self.channels: list = []
        if top.clock is None:
            top.clock = DEFAULT_CLOCK
        seen_domains: set[int] = set()
        for comp in top.walk():
            parent = comp.parent
            if comp.clock is None and parent is not None:
                comp.clock = parent.clock  # parents come first in the walk: theirs is resolved
            comp.domain = domain = cast(ClockDomain, comp.clock)
            if id(domain) not in seen_domains:
                seen_domains.add(id(domain))
                self.domains.append(domain)
            self.components.append(comp)
            ins, outs = [], []
            for port in comp.ports:
                channel = port.channel
                unpaired = unpaired_port(port)
                if unpaired is not None:
                    raise PortError(unpaired[0], hint=unpaired[1])
                if channel is None:
                    if port.decl.required:
                        kind = "input" if port.decl.direction == "in" else "output"
                        raise PortError(f"{comp.path}: required {kind} port '{port.name}' is not connected",
                                        hint=f"connect it, or declare it {type(port.decl).__name__}(..., required=False)")
                elif port.decl.direction == "out":
                    outs.append(channel)
                else:
                    ins.append(channel)
            # the engine's view of the wiring (the scheduler and the lookahead walk it)
            comp._in_channels = ins
            comp._out_channels = outs
            self.channels.extend(outs)
        in_tree = {id(c) for c in self.components}
        for ch in self.channels:
            if id(ch.dst_owner) not in in_tree:
                raise PortError(f"channel {ch.name}: {ch.dst_owner.path} is not part of {top.path}")

    def all_stats(self) -> list:
        """Every statistic of every component, in tree order (as the simulator reports them)."""
        return [stat for comp in self.components for stat in comp.stats]


__all__ = ["DEFAULT_CLOCK", "Tree"]
