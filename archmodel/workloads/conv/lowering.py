"""The five convolution lowerings: direct, im2col, MEC, CPO and CPS.

For a padded input ``Ih x Iw x Ic``, kernel ``Kh x Kw``, stride ``S`` and output ``Oh x Ow``:

- **direct** lowers nothing: it slides the kernel over the padded input (``Ih*Iw*Ic`` elements
  per image is the data it works on).
- **im2col** copies every receptive field into a row: ``(Oh*Ow) x (Kh*Kw*Ic)``; the convolution
  is one GEMM with the ``(Kh*Kw*Ic) x F`` kernel matrix.
- **MEC** (Cho and Brand, ICML 2017) copies each input column strip of width ``Kw`` once:
  ``Ow x (Ih*Kw*Ic)``; output row ``h`` is the GEMM of the column slice of rows
  ``h*S .. h*S+Kh-1`` with the kernel matrix. It removes im2col's vertical overlap only.
- **CPO** (Amer et al., arXiv 2104.08314) keeps each non-zero of the MEC-lowered map once: a
  non-zero of input column ``j`` appears in the MEC rows (windows) ``w`` with ``w*S <= j <
  w*S+Kw``, between 1 and ``ceil(Kw/S)`` consecutive ones. CPO puts it in partition ``p`` =
  (windows covering it) - 1, with its value and its index relative to the first window that
  covers it (``i*Kw + j - w0*S``, the authors' relative index), and each partition has
  ``Ow + 1`` pointers marking where the non-zeros of each first window begin (CSR-like). Each
  input channel is one such map (the authors' 2D form); a channel with no non-zero is skipped
  and costs nothing but its absence from the list of present channels (one index per present
  channel). The convolution is an SpMV per output column: every stored non-zero is multiplied
  with the kernel entries of the ``p + 1`` windows and the output rows it reaches.
- **CPS** stores the same values and pointers but compresses the indices of neighbouring
  non-zeros: a run of non-zeros in consecutive rows of one input column (one window, one
  partition) is stored as a (first index, run length) pair instead of one index each. It saves
  index space where runs are longer than 2 (dense maps) and costs it where they are not.

Element widths (:data:`VALUE_BYTES`, :data:`INDEX_BYTES`, :data:`POINTER_BYTES`): values are
FP64 (8 B, the Snitch FPU's and the reference's type), indices, run lengths, channel ids and
pointers int32 (4 B, the authors' ``int`` arrays). The paper stored FP32 values; pass
``value_bytes=4`` to :func:`lowered_size` to count as it did.
"""

from __future__ import annotations

import difflib
import math

import attrs
import numpy as np
import scipy.sparse

from archmodel.kernel import ArchError

from .layers import Layer, activations as random_activations, check_density

METHODS = ("direct", "im2col", "mec", "cpo", "cps")
"""The lowerings, in the order the tables print them."""
SPARSE = ("cpo", "cps")
"""The lowerings whose size depends on the activations."""

VALUE_BYTES = 8
INDEX_BYTES = 4
POINTER_BYTES = 4


def check_method(method: str) -> str:
    """``method`` if it names a lowering; an ArchError naming the known ones otherwise."""
    if method not in METHODS:
        close = difflib.get_close_matches(str(method), METHODS, n=1)
        raise ArchError(f"unknown convolution lowering '{method}'",
                        hint=f"did you mean '{close[0]}'?" if close else "lowerings: " + ", ".join(METHODS))
    return method


@attrs.frozen
class LoweredSize:
    """The storage of a lowered input: ``values`` (activation elements), ``indices`` (and
    run lengths and channel ids) and ``pointers``, in elements, and their bytes."""

    method: str
    values: int
    indices: int = 0
    pointers: int = 0
    value_bytes: int = VALUE_BYTES

    @property
    def elements(self) -> int:
        """All stored elements: values + indices + pointers."""
        return self.values + self.indices + self.pointers

    @property
    def bytes(self) -> int:
        """Values at ``value_bytes`` each, indices and pointers at 4 bytes."""
        return self.values * self.value_bytes + self.indices * INDEX_BYTES + self.pointers * POINTER_BYTES


def padded(layer: Layer, x: np.ndarray) -> np.ndarray:
    """``x`` (batch, H, W, C) with the layer's zero padding."""
    expected = (layer.batch, layer.height, layer.width, layer.channels)
    if x.shape != expected:
        raise ArchError(f"layer '{layer.name}': activations have shape {x.shape}, the layer takes {expected}")
    return np.pad(x, ((0, 0), (layer.pad_h, layer.pad_h), (layer.pad_w, layer.pad_w), (0, 0)))


def _windows(layer: Layer, xp: np.ndarray) -> np.ndarray:
    """The receptive fields as a view (batch, Oh, Ow, Kh, Kw, C)."""
    s = layer.stride
    view = np.lib.stride_tricks.sliding_window_view(xp, (layer.kernel_h, layer.kernel_w), axis=(1, 2))
    view = view[:, :(layer.out_h - 1) * s + 1:s, :(layer.out_w - 1) * s + 1:s]
    return view.transpose(0, 1, 2, 4, 5, 3)


def im2col_matrix(layer: Layer, x: np.ndarray) -> np.ndarray:
    """The im2col-lowered matrix of every image, (batch*Oh*Ow) x (Kh*Kw*Ic), columns (kh, kw, c)."""
    fields = _windows(layer, padded(layer, x))
    return fields.reshape(layer.batch * layer.out_h * layer.out_w, -1)


def mec_matrix(layer: Layer, x: np.ndarray) -> np.ndarray:
    """The MEC-lowered matrices, (batch, Ow, Ih*Kw*Ic): row ``w`` holds the input columns
    ``w*S .. w*S+Kw-1`` of every input row, columns ordered (row, column in strip, channel)."""
    xp = padded(layer, x)
    s, kw = layer.stride, layer.kernel_w
    strips = np.lib.stride_tricks.sliding_window_view(xp, kw, axis=2)[:, :, :(layer.out_w - 1) * s + 1:s]
    # strips: (batch, Ih, Ow, C, Kw) -> (batch, Ow, Ih, Kw, C)
    return np.ascontiguousarray(strips.transpose(0, 2, 1, 4, 3)).reshape(layer.batch, layer.out_w, -1)


@attrs.frozen
class CpoMap:
    """A CPO- (or CPS-) lowered input: the present (image, channel) planes, and per plane
    ``ceil(Kw/S)`` partitions of CSR-like arrays. ``pointers[k, p, w]`` is the offset in
    ``values``/``index`` of the first non-zero of plane ``k``, partition ``p`` whose first
    covering window is ``w`` (``pointers[k, p, Ow]`` ends the group). Within a group non-zeros
    are ordered by column, then row. ``runs`` (CPS only) holds (first index, length) pairs."""

    layer: Layer
    planes: np.ndarray
    pointers: np.ndarray
    values: np.ndarray
    index: np.ndarray
    runs: np.ndarray | None = None

    @property
    def partitions(self) -> int:
        """ceil(Kw / S)."""
        return -(-self.layer.kernel_w // self.layer.stride)

    def size(self, value_bytes: int = VALUE_BYTES) -> LoweredSize:
        """The storage the paper counts: values, indices (or run pairs for CPS) plus one
        channel id per present plane, and pointers."""
        stored = self.index.size if self.runs is None else self.runs.size
        return LoweredSize("cpo" if self.runs is None else "cps", int(self.values.size),
                           int(stored + self.planes.size), int(self.pointers.size), value_bytes)


def cpo_map(layer: Layer, x: np.ndarray, runs: bool = False) -> CpoMap:
    """Lower ``x`` (batch, H, W, C) to CPO (``runs=True``: CPS). See the module docstring."""
    xp = padded(layer, x)
    s, kw, ow = layer.stride, layer.kernel_w, layer.out_w
    parts = -(-kw // s)
    n, i, j, c = np.nonzero(xp)
    # windows covering column j: w in [ceil((j - Kw + 1) / S), floor(j / S)] within [0, Ow)
    first = np.maximum(-(-(j - kw + 1) // s), 0)
    last = np.minimum(j // s, ow - 1)
    covered = last >= first  # columns past the last window (when (Iw - Kw) % S != 0) are never read
    n, i, j, c, first, last = (a[covered] for a in (n, i, j, c, first, last))
    part = last - first
    plane = n * layer.channels + c
    order = np.lexsort((i, j, first, part, plane))
    n, i, j, c, first, part, plane = (a[order] for a in (n, i, j, c, first, part, plane))
    values = xp[n, i, j, c]
    index = (i * kw + j - first * s).astype(np.int64)
    planes, plane_of = np.unique(plane, return_inverse=True)
    group = (plane_of * parts + part) * ow + first
    counts = np.bincount(group, minlength=planes.size * parts * ow).reshape(planes.size, parts, ow)
    pointers = np.zeros((planes.size, parts, ow + 1), dtype=np.int64)
    pointers[:, :, 1:] = np.cumsum(counts, axis=2)
    starts = np.cumsum(counts.sum(axis=2)).ravel() - counts.sum(axis=2).ravel()
    pointers += starts.reshape(planes.size, parts, 1)
    run_pairs = None
    if runs:
        # a run continues while the group and the column stay and the row advances by one
        same = np.zeros(index.size, dtype=bool)
        same[1:] = (group[1:] == group[:-1]) & (j[1:] == j[:-1]) & (i[1:] == i[:-1] + 1)
        heads = np.flatnonzero(~same)
        lengths = np.diff(np.append(heads, index.size))
        run_pairs = np.stack([index[heads], lengths], axis=1)
    return CpoMap(layer, planes, pointers, values, index, run_pairs)


def _cpo_spmv(cpo: CpoMap, w: np.ndarray) -> np.ndarray:
    """The convolution through a CPO/CPS map: each stored non-zero times the kernel entries of
    the windows and output rows it reaches, accumulated as one sparse-times-dense product."""
    layer = cpo.layer
    s, kh, kw, oh, ow, ch = layer.stride, layer.kernel_h, layer.kernel_w, layer.out_h, layer.out_w, layer.channels
    parts = cpo.partitions
    index = cpo.index
    if cpo.runs is not None:  # decode the run pairs: consecutive rows are Kw apart
        starts, lengths = cpo.runs[:, 0], cpo.runs[:, 1]
        step = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        index = np.repeat(starts, lengths) + step * kw
    counts = np.diff(cpo.pointers, axis=2).ravel()
    group = np.repeat(np.arange(counts.size), counts)
    first = group % ow
    part = (group // ow) % parts
    plane = cpo.planes[group // (ow * parts)]
    image, channel = plane // ch, plane % ch
    row, col = index // kw, index % kw
    rows, cols, data = [], [], []
    for q in range(parts):
        reach = part >= q
        for r in range(kh):
            top = row - r
            ok = reach & (top >= 0) & (top % s == 0) & (top // s < oh)
            if not ok.any():
                continue
            out = (image[ok] * oh + top[ok] // s) * ow + first[ok] + q
            rows.append(out)
            cols.append((r * kw + col[ok] - q * s) * ch + channel[ok])
            data.append(cpo.values[ok])
    shape = (layer.batch * oh * ow, kh * kw * ch)
    if rows:
        lowered = scipy.sparse.csr_matrix((np.concatenate(data), (np.concatenate(rows), np.concatenate(cols))),
                                          shape=shape)
    else:
        lowered = scipy.sparse.csr_matrix(shape)
    return np.asarray(lowered @ w.reshape(-1, layer.filters)).reshape(layer.batch, oh, ow, layer.filters)


def lower(method: str, layer: Layer, x: np.ndarray):
    """The lowered input of ``method``: the padded input (direct), the im2col matrix, the MEC
    matrices, or a :class:`CpoMap` (cpo, cps)."""
    check_method(method)
    if method == "direct":
        return padded(layer, x)
    if method == "im2col":
        return im2col_matrix(layer, x)
    if method == "mec":
        return mec_matrix(layer, x)
    return cpo_map(layer, x, runs=method == "cps")


def lowered_size(method: str, layer: Layer, density: float | None = None, *, activations: np.ndarray | None = None,
                 seed: int = 0, value_bytes: int = VALUE_BYTES) -> LoweredSize:
    """The exact storage of ``layer``'s input lowered by ``method``.

    direct: ``batch*Ih*Iw*Ic``; im2col: ``batch*Oh*Ow*Kh*Kw*Ic``; MEC: ``batch*Ow*Ih*Kw*Ic``
    values. CPO and CPS depend on the activations: those given (``density`` and ``seed`` then
    play no part), or random ones at ``density`` drawn with ``seed``
    (:func:`~.layers.activations`); ``density=None`` means all-dense.
    """
    check_method(method)
    density = check_density(density)
    b, ih, iw, ic = layer.batch, layer.padded_h, layer.padded_w, layer.channels
    if method == "direct":
        return LoweredSize(method, b * ih * iw * ic, value_bytes=value_bytes)
    if method == "im2col":
        return LoweredSize(method, b * layer.out_h * layer.out_w * layer.kernel_h * layer.kernel_w * ic,
                           value_bytes=value_bytes)
    if method == "mec":
        return LoweredSize(method, b * layer.out_w * ih * layer.kernel_w * ic, value_bytes=value_bytes)
    x = activations if activations is not None else random_activations(layer, density, seed)
    return cpo_map(layer, x, runs=method == "cps").size(value_bytes)


def compression(method: str, layer: Layer, density: float | None = None, **options) -> float:
    """im2col's bytes over ``method``'s: how many times smaller the lowered input is (infinite
    when an all-zero input leaves CPO or CPS nothing to store)."""
    stored = lowered_size(method, layer, density, **options).bytes
    return lowered_size("im2col", layer, **options).bytes / stored if stored else math.inf


def check_weights(layer: Layer, w: np.ndarray) -> None:
    """An ArchError unless ``w`` has the layer's weight shape (Kh, Kw, C, F)."""
    expected = (layer.kernel_h, layer.kernel_w, layer.channels, layer.filters)
    if w.shape != expected:
        raise ArchError(f"layer '{layer.name}': weights have shape {w.shape}, the layer takes {expected}")


def convolve(method: str, layer: Layer, activations: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The layer's output (batch, Oh, Ow, F), float64, computed through ``method``'s lowering."""
    check_method(method)
    x = np.asarray(activations, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    check_weights(layer, w)
    s, kh, kw, oh, ow, f = layer.stride, layer.kernel_h, layer.kernel_w, layer.out_h, layer.out_w, layer.filters
    kernel = w.reshape(kh * kw * layer.channels, f)
    if method == "direct":
        xp = padded(layer, x)
        out = np.zeros((layer.batch, oh, ow, f))
        for r in range(kh):
            for q in range(kw):
                out += xp[:, r:r + (oh - 1) * s + 1:s, q:q + (ow - 1) * s + 1:s, :] @ w[r, q]
        return out
    if method == "im2col":
        return (im2col_matrix(layer, x) @ kernel).reshape(layer.batch, oh, ow, f)
    if method == "mec":
        lowered = mec_matrix(layer, x)
        band = kw * layer.channels
        out = np.empty((layer.batch, oh, ow, f))
        for h in range(oh):  # output row h reads the lowered columns of input rows h*S .. h*S+Kh-1
            out[:, h] = lowered[:, :, h * s * band:(h * s + kh) * band] @ kernel
        return out
    return _cpo_spmv(cpo_map(layer, x, runs=method == "cps"), w)
