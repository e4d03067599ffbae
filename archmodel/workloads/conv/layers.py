"""Convolution layers, SCALE-Sim topology files, and the activations and weights a layer runs on.

A :class:`Layer` is one 2D convolution: an input ``height x width x channels`` (before
padding), ``filters`` kernels of ``kernel_h x kernel_w x channels``, one stride for both
directions, zero padding per direction, and a batch. Arrays follow the HWC order SCALE-Sim and
the MEC paper use: activations ``(batch, height, width, channels)``, weights ``(kernel_h,
kernel_w, channels, filters)``, outputs ``(batch, out_h, out_w, filters)``.
"""

from __future__ import annotations

import csv
import math
import numbers
from pathlib import Path

import attrs
import numpy as np

from archmodel.kernel import ArchError, Span

_SIZES = ("height", "width", "channels", "kernel_h", "kernel_w", "filters", "stride", "batch")


def check_density(density) -> float | None:
    """``density`` as a float in [0, 1] (None stays None, meaning all-dense); an ArchError otherwise."""
    if density is None:
        return None
    if isinstance(density, bool) or not isinstance(density, numbers.Real) or math.isnan(density) \
            or not 0.0 <= density <= 1.0:
        raise ArchError(f"density must be a number between 0 and 1 (the fraction of non-zero activations), "
                        f"got {density!r}")
    return float(density)


@attrs.frozen
class Layer:
    """One convolution layer. Sizes are in elements; ``pad_h``/``pad_w`` zeros are added on
    each side (top and bottom, left and right). Invalid shapes raise :class:`ArchError`."""

    name: str
    height: int
    width: int
    channels: int
    kernel_h: int
    kernel_w: int
    filters: int
    stride: int = 1
    pad_h: int = 0
    pad_w: int = 0
    batch: int = 1

    def __attrs_post_init__(self):
        for field in _SIZES:
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                what = "stride" if field == "stride" else field.replace("_", " ")
                raise ArchError(f"layer '{self.name}': {what} must be a positive integer, got {value!r}")
        for field in ("pad_h", "pad_w"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ArchError(f"layer '{self.name}': {field} must be a non-negative integer, got {value!r}")
        if self.kernel_h > self.padded_h or self.kernel_w > self.padded_w:
            raise ArchError(f"layer '{self.name}': the {self.kernel_h}x{self.kernel_w} kernel is larger than its "
                            f"padded {self.padded_h}x{self.padded_w} input")

    @property
    def padded_h(self) -> int:
        """Ih: the input height after padding."""
        return self.height + 2 * self.pad_h

    @property
    def padded_w(self) -> int:
        """Iw: the input width after padding."""
        return self.width + 2 * self.pad_w

    @property
    def out_h(self) -> int:
        """Oh = floor((Ih - Kh) / S) + 1."""
        return (self.padded_h - self.kernel_h) // self.stride + 1

    @property
    def out_w(self) -> int:
        """Ow = floor((Iw - Kw) / S) + 1."""
        return (self.padded_w - self.kernel_w) // self.stride + 1

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the dense convolution."""
        return self.batch * self.out_h * self.out_w * self.kernel_h * self.kernel_w * self.channels * self.filters

    def scaled(self, channels: int | None = None, filters: int | None = None, batch: int | None = None) -> Layer:
        """The same spatial shape with at most ``channels`` input channels and ``filters``
        filters (for tests and quick runs), or another batch."""
        return attrs.evolve(self, channels=min(self.channels, channels or self.channels),
                            filters=min(self.filters, filters or self.filters), batch=batch or self.batch)

    def __str__(self) -> str:
        return (f"{self.name}: {self.height}x{self.width}x{self.channels}, {self.kernel_h}x{self.kernel_w}x"
                f"{self.filters}, stride {self.stride}, pad {self.pad_h},{self.pad_w}")


def activations(layer: Layer, density: float | None = None, seed: int = 0) -> np.ndarray:
    """Activations for ``layer``, shape ``(batch, height, width, channels)``, float64.

    ``density=None`` (or 1) is all-dense; otherwise each element is non-zero with probability
    ``density`` (the zeros a ReLU leaves), and non-zeros are in (0, 1]. For one seed the
    non-zeros at a lower density are a subset of those at a higher one, so sizes measured
    across densities move one way only.
    """
    density = check_density(density)
    rng = np.random.default_rng(seed)
    shape = (layer.batch, layer.height, layer.width, layer.channels)
    keep = rng.random(shape)
    values = 1.0 - rng.random(shape)
    if density is None:
        return values
    return np.where(keep < density, values, 0.0)


def weights(layer: Layer, seed: int = 0) -> np.ndarray:
    """Standard-normal weights for ``layer``, shape ``(kernel_h, kernel_w, channels, filters)``."""
    rng = np.random.default_rng(seed + 1_000_003)
    return rng.standard_normal((layer.kernel_h, layer.kernel_w, layer.channels, layer.filters))


_TOPOLOGY_COLUMNS = ("Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width", "Channels",
                     "Num Filter", "Strides")
PADDINGS = ("none", "same")
"""How :func:`read_topology` pads: "none" (SCALE-Sim's own reading) or "same" ((K-1)//2 each side)."""


def read_topology(path, padding: str = "none", batch: int = 1) -> list[Layer]:
    """The layers of a SCALE-Sim topology CSV file (``Layer name, IFMAP Height, IFMAP Width,
    Filter Height, Filter Width, Channels, Num Filter, Strides, ...``).

    SCALE-Sim has no padding column: it computes ``Oh = ceil((H - Kh + S) / S)``, so its
    IFMAP sizes are the input as it is convolved (already padded). ``padding="none"`` (the
    default) reads them that way (padding 0); ``padding="same"`` adds ``(K - 1) // 2`` zeros on
    each side instead, which is what the published 3x3/pad-1 and 7x7/pad-3 layers used.
    Columns after Strides are ignored; blank lines and rows of empty fields are skipped. A
    malformed line is an :class:`ArchError` naming ``file:line``.
    """
    if padding not in PADDINGS:
        raise ArchError(f"padding must be one of {', '.join(PADDINGS)}, got {padding!r}")
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise ArchError(f"cannot read topology file {path}: {err.strerror}") from None
    layers = []
    for number, row in enumerate(csv.reader(text.splitlines()), start=1):
        fields = [f.strip() for f in row]
        if not any(fields):
            continue
        if not layers and number == 1 and fields[0].lower() == "layer name":
            continue
        span = Span(str(path), number, 1)
        if len(fields) < len(_TOPOLOGY_COLUMNS) or not fields[0]:
            raise ArchError(f"a layer line needs {len(_TOPOLOGY_COLUMNS)} fields ({', '.join(_TOPOLOGY_COLUMNS)}), "
                            f"this one has {len([f for f in fields if f])}", span=span)
        numbers = []
        for column, value in zip(_TOPOLOGY_COLUMNS[1:], fields[1:8]):
            try:
                numbers.append(int(value))
            except ValueError:
                raise ArchError(f"layer '{fields[0]}': {column} must be an integer, got {value!r}", span=span) from None
        h, w, kh, kw, c, f, s = numbers
        pad_h, pad_w = ((kh - 1) // 2, (kw - 1) // 2) if padding == "same" else (0, 0)
        try:
            layers.append(Layer(fields[0], h, w, c, kh, kw, f, s, max(pad_h, 0), max(pad_w, 0), batch))
        except ArchError as err:
            raise ArchError(err.message, span=span) from None
    if not layers:
        raise ArchError(f"topology file {path} holds no layers")
    return layers
