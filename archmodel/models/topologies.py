"""The registry of topology generators: named functions that return a networkx graph.

It sits beside :mod:`archmodel.models.messages`, outside every family, because several families
register generators (the network family its meshes and trees, the fronthaul family its radio
stripes) and the language's ``topology`` statement reads them all through one registry
(:mod:`archmodel.lang.topology`), while families never import each other.
"""

from __future__ import annotations

from typing import Callable

import networkx as nx

from archmodel.kernel import ArchError, Registry, check_instances

TOPOLOGIES: Registry[Callable[..., nx.Graph]] = Registry("topology")
"""Every registered generator by name (in registration order; :func:`topology_generators`
sorts them)."""


def register_topology(name: str, size: Callable[..., int] | None = None):
    """Decorator: make a generator ``fn(*args, **kwargs) -> networkx graph`` usable by name.

    ``size(*args, **kwargs)`` (same arguments) returns the node count without building the
    graph, so the instance limit is enforced before a huge graph is made.
    """
    def wrap(fn):
        fn.node_count = size
        return TOPOLOGIES.add(name, fn)
    return wrap


def topology_generators() -> dict[str, Callable[..., nx.Graph]]:
    """All registered generators by name, sorted."""
    return dict(sorted(TOPOLOGIES.items()))


def build_topology(spec: str) -> nx.Graph:
    """The graph of ``spec``, a generator call such as ``"mesh(8, 8)"`` or
    ``"dragonfly(2)"`` (arguments are Python literals)."""
    import ast

    try:
        call = ast.parse(spec.strip(), mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, (ast.Call, ast.Name)):
        raise ArchError(f"topology {spec!r} is not a generator call", hint="for example: mesh(8, 8)")
    name = call.id if isinstance(call, ast.Name) else getattr(call.func, "id", None)
    generator = TOPOLOGIES.lookup(name)
    if isinstance(call, ast.Name):
        return generator()
    try:
        args = [ast.literal_eval(a) for a in call.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        raise ArchError(f"topology {spec!r}: arguments must be literals") from None
    try:
        if generator.node_count is not None:
            # a router and at least one interface per node: refuse a huge graph before making it
            check_instances(2 * generator.node_count(*args, **kwargs), f"topology {spec}")
        return generator(*args, **kwargs)
    except TypeError as err:
        raise ArchError(f"topology {spec!r}: {err}") from None
