"""Per-layer storage of every lowering and its compression against im2col, for a network.

:func:`network_sizes` measures each layer once per method (CPO and CPS on the same random
activations), :func:`format_sizes` prints the table people compare lowerings by.
"""

from __future__ import annotations

import attrs

from .layers import Layer, activations, check_density
from .lowering import METHODS, LoweredSize, check_method, lowered_size


@attrs.frozen
class LayerSizes:
    """One layer's lowered storage by method, measured on activations of ``density``."""

    layer: Layer
    density: float | None
    sizes: dict

    def compression(self, method: str) -> float:
        """im2col's bytes over ``method``'s."""
        stored = self.sizes[method].bytes
        return self.sizes["im2col"].bytes / stored if stored else float("inf")

    def smallest(self) -> str:
        """The method whose lowered input takes the fewest bytes (ties: the earlier in METHODS,
        so a lowering is only preferred where it actually saves)."""
        return min(self.sizes, key=lambda m: (self.sizes[m].bytes, METHODS.index(m)))


def network_sizes(layers: list[Layer], density: float | None = None, *, seed: int = 0,
                  methods=METHODS) -> list[LayerSizes]:
    """Every layer's :class:`LoweredSize` for each of ``methods`` (im2col always included, the
    reference of the compression); layer ``k`` draws its activations with ``seed + k``."""
    density = check_density(density)
    chosen = {check_method(m) for m in methods} | {"im2col"}
    methods = [m for m in METHODS if m in chosen]
    rows = []
    for k, layer in enumerate(layers):
        x = activations(layer, density, seed + k) if any(m in ("cpo", "cps") for m in methods) else None
        rows.append(LayerSizes(layer, density, {m: lowered_size(m, layer, activations=x) for m in methods}))
    return rows


def totals(rows: list[LayerSizes]) -> dict:
    """Bytes per method summed over the layers."""
    return {m: sum(r.sizes[m].bytes for r in rows) for m in rows[0].sizes} if rows else {}


def _kib(size: LoweredSize) -> str:
    return f"{size.bytes / 1024:,.0f}"


def format_sizes(rows: list[LayerSizes]) -> str:
    """A table: per layer its shape, the KiB of each method's lowered input, CPO's and CPS's
    compression against im2col and the smallest method; then the whole network."""
    if not rows:
        return "(no layers)"
    methods = list(rows[0].sizes)
    sparse = [m for m in methods if m in ("cpo", "cps")]
    head = ["layer", "input", "kernel", "S"] + [f"{m} KiB" for m in methods] + [f"{m} x" for m in sparse] \
        + ["smallest"]
    table = [head]
    for r in rows:
        l = r.layer
        table.append([l.name, f"{l.height}x{l.width}x{l.channels}", f"{l.kernel_h}x{l.kernel_w}x{l.filters}",
                      str(l.stride)] + [_kib(r.sizes[m]) for m in methods]
                     + [f"{r.compression(m):.2f}" for m in sparse] + [r.smallest()])
    total = totals(rows)
    table.append(["total", "", "", ""] + [f"{total[m] / 1024:,.0f}" for m in methods]
                 + [f"{total['im2col'] / total[m]:.2f}" if total[m] else "inf" for m in sparse] + [""])
    return align_table(table, {0, 1, 2, 3, len(head) - 1})


def align_table(table: list[list[str]], left: set) -> str:
    """Rows of cells as aligned text: columns in ``left`` flush left, the others right; a
    rule under the head and above the last row (the totals)."""
    widths = [max(len(row[c]) for row in table) for c in range(len(table[0]))]
    lines = ["  ".join(cell.ljust(w) if c in left else cell.rjust(w) for c, (cell, w) in enumerate(zip(row, widths)))
             for row in table]
    lines.insert(1, "-" * len(lines[0]))
    lines.insert(len(lines) - 1, "-" * len(lines[0]))
    return "\n".join(line.rstrip() for line in lines)
