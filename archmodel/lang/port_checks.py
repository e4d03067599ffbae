"""The checks of a built tree: required ports left unconnected, request ports without their
answers' way back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel import ArchError, Component, unpaired_port

if TYPE_CHECKING:
    from .elaborate import Elaborator


def origin_span(elab: Elaborator, comp: Component):
    """The span of the instance statement that made ``comp`` (or its nearest ancestor)."""
    owner: Component | None = comp
    while owner is not None and id(owner) not in elab.origins:
        owner = owner.parent
    return elab.origins.get(id(owner)) if owner is not None else None


def exposed_ports(comp: Component) -> set:
    """The ports ``comp`` exposes (port arrays and nested lists flattened), by identity."""
    found: set = set()
    pending = list((getattr(comp, "exposed", None) or {}).values())
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        else:
            found.add(id(item))
    return found


def check_required_ports(elab: Elaborator, top: Component, interface=()) -> None:
    """Report every required port left unconnected, one error per instance statement and port,
    and every port of a request and answer pair connected without the other (an input only
    where its sender is wired whole: else the sender's error says it). Ports in
    ``interface`` (ids of the top's exposed ports, for a module checked on its own) may stay
    unconnected."""
    groups: dict = {}
    for comp in top.walk():
        for port in comp.ports:
            if id(port) in interface:
                continue
            unpaired = unpaired_port(port)
            # (one omission, one error: an input whose sender is half wired too is that sender's)
            if unpaired is not None and (port.decl.direction == "out" or unpaired_port(port.channel.src) is None):
                elab.error(ArchError(unpaired[0], hint=unpaired[1], span=origin_span(elab, comp)))
            if port.channel is None and port.decl.required:
                span = origin_span(elab, comp)
                groups.setdefault((span, port.decl.name, port.decl.direction), []).append(port)
    for (span, name, direction), ports in groups.items():
        kind = "input" if direction == "in" else "output"
        if len(ports) == 1:
            message = f"required {kind} port {ports[0].path} is not connected"
        else:
            message = (f"required {kind} port '{name}' is not connected on {len(ports)} ports "
                       f"({ports[0].path} .. {ports[-1].path})")
        hint = ("connect it: ... -> " if direction == "in" else "connect it: ") + \
            (f"{ports[0].owner.name}.{ports[0].name}" + (" -> ..." if direction == "out" else ""))
        elab.error(ArchError(message, hint=hint, span=span))
