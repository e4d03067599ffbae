"""Text and Graphviz views of an elaborated system, for ``archmodel show``.

The text view prints the hierarchy with resolved parameters and clock domains; identical
consecutive elements of an array are printed once as ``core[0..7] ... x8``, so a system of a
million instances still prints in a screenful. Model parameters are shown where they differ
from the model's defaults; module parameters are shown in full.
"""

from __future__ import annotations

import re

from ..kernel import Component, Tree
from .structure import ModuleComponent
from .scope import format_value

_INDEXED = re.compile(r"^(.*)\[(\d+)\]$")


def _python_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_python_value(v) for v in value) + "]"
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if not callable(value) else getattr(value, "__name__", "<function>")


def describe_component(comp: Component) -> str:
    """``Fifo(depth=3)`` or ``Stage(depth=3)``: the model and its shown parameters."""
    if isinstance(comp, ModuleComponent):
        shown = [f"{k}={format_value(v)}" for k, v in comp.arch_params.items()]
    else:
        shown = []
        for name, decl in comp.param_declarations().items():
            value = getattr(comp.params, name)
            if decl.required or value != decl.default:
                shown.append(f"{name}={_python_value(value)}")
    return f"{comp.model_name}({', '.join(shown)})"


def hierarchy_lines(tree: Tree) -> list[str]:
    """The indented hierarchy, arrays of identical elements collapsed."""
    signature: dict[int, tuple] = {}
    for comp in reversed(list(tree.top.walk())):
        signature[id(comp)] = (describe_component(comp), comp.domain.name, comp.domain.period_ps,
                               tuple((c.name, signature[id(c)]) for c in comp.children))
    lines: list[str] = []

    def emit(comp: Component, shown_name: str, depth: int, times: int) -> None:
        suffix = f"  x{times}" if times > 1 else ""
        lines.append(f"{'  ' * depth}{shown_name} : {describe_component(comp)} @ {comp.domain.name}{suffix}")
        emit_children(comp.children, depth + 1)

    def emit_children(children: list[Component], depth: int) -> None:
        i = 0
        while i < len(children):
            first = children[i]
            match = _INDEXED.match(first.name)
            j = i + 1
            if match:
                base, start = match.group(1), int(match.group(2))
                while j < len(children):
                    other = _INDEXED.match(children[j].name)
                    if (other is None or other.group(1) != base or int(other.group(2)) != start + (j - i)
                            or signature[id(children[j])][:2] != signature[id(first)][:2]
                            or signature[id(children[j])][2:] != signature[id(first)][2:]):
                        break
                    j += 1
            if j - i > 1:
                emit(first, f"{base}[{start}..{start + j - i - 1}]", depth, j - i)
            else:
                emit(first, first.name, depth, 1)
            i = j

    emit(tree.top, tree.top.name, 0, 1)
    return lines


def show_text(tree: Tree, title: str) -> str:
    """Everything ``archmodel show FILE`` prints."""
    counts: dict[str, int] = {}
    for comp in tree.components:
        counts[comp.model_name] = counts.get(comp.model_name, 0) + 1
    lines = [title, ""] + hierarchy_lines(tree) + [""]
    clocks = sorted(tree.domains, key=lambda d: (d.name, d.period_ps))
    lines.append("clocks: " + ", ".join(f"{d.name} {d.period_ps} ps" for d in clocks))
    lines.append("instances: " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items()))
                 + f" ({len(tree.components)} in all)")
    lines.append(f"channels: {len(tree.channels)}")
    return "\n".join(lines)


def _quote(text: str) -> str:
    return '"' + text.replace('"', '\\"') + '"'


def to_dot(tree: Tree) -> str:
    """The connection graph in Graphviz DOT: modules are clusters, models are boxes, and each
    channel an edge labelled with its ports, latency and capacity."""
    out = ["digraph archmodel {", "  rankdir=LR;", "  node [shape=box, fontname=Helvetica];",
           "  edge [fontname=Helvetica, fontsize=9];"]

    def visit(comp: Component, depth: int) -> None:
        pad = "  " * depth
        if comp.children and isinstance(comp, ModuleComponent):
            out.append(f"{pad}subgraph {_quote('cluster_' + comp.path)} {{")
            out.append(f"{pad}  label={_quote(f'{comp.name} : {comp.model_name}')};")
            for child in comp.children:
                visit(child, depth + 1)
            out.append(f"{pad}}}")
        else:
            label = _quote(comp.name + "\\n" + comp.model_name)
            out.append(f"{pad}{_quote(comp.path)} [label={label}];")

    for child in tree.top.children:
        visit(child, 1)

    def leaf(comp: Component) -> Component:
        while comp.parent is not None and comp.parent is not tree.top and not isinstance(comp.parent, ModuleComponent):
            comp = comp.parent
        return comp

    for ch in tree.channels:
        label = f"{ch.src.name} -> {ch.dst.name}\\nlatency {ch.latency}, capacity {ch.capacity}"
        if ch.width_bits:
            label += f", width {ch.width_bits}"
        out.append(f"  {_quote(leaf(ch.src_owner).path)} -> {_quote(leaf(ch.dst_owner).path)} "
                   f"[label={_quote(label)}];")
    out.append("}")
    return "\n".join(out) + "\n"


__all__ = ["describe_component", "hierarchy_lines", "show_text", "to_dot"]
