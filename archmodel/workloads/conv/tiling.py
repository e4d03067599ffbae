"""How a convolution layer is cut into tiles that fit a Snitch cluster's TCDM, and the lowered
data of each tile as the cluster finds it in outside memory.

Every lowering runs the same loop nest on the cluster: the output is cut into **bands** of
``rows`` output rows (all ``Ow`` columns) and **filter blocks** of ``filters`` filters, the
input channels into **chunks** of ``channels``. One step computes one (band, block, chunk):
the DMA brings the chunk's lowered input of the band and the kernel entries of the chunk and
the block; the cores add their product to the band's output tile, which stays in the TCDM
over the chunks and goes back out after the last one. Input and kernel tiles are double
buffered (the DMA fetches step t+1 while the cores compute step t), and so are output tiles
(one is written back while the next fills).

Outside, every lowering finds the padded input stored by chunk (``Ih x Iw x Cc``); the DMA
builds a band's im2col or MEC tile from it, and brings direct, CPO and CPS the band's run of
rows. A CPO or CPS tile (:func:`sparse_tile`, which the cores' compaction reproduces in the
TCDM) is the lowering of the band's input rows (the ``(rows-1)*S + Kh`` rows its outputs
read, halo included) and the chunk's channels as a layer of its own, so bands overlap by the
``Kh - S`` halo rows, as every row-tiled convolution does. The kernel matrix is stored packed
by (chunk, block), ``Kh*Kw*channels x filters``, as a library packs constant weights once.
"""

from __future__ import annotations

import attrs
import numpy as np

from .layers import Layer
from .lowering import SPARSE, cpo_map, im2col_matrix, mec_matrix, padded

WORD = 8  # FP64 values
INT = 4   # int32 indices, run lengths, pointers, channel ids


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@attrs.frozen
class Tiling:
    """The tile sizes of one layer under one lowering: ``rows`` output rows per band,
    ``filters`` per block, ``channels`` per chunk, and the TCDM bytes reserved for one
    buffer of each kind."""

    layer: Layer
    method: str
    rows: int
    filters: int
    channels: int
    input_bytes: int
    kernel_bytes: int
    output_bytes: int
    compact_bytes: int = 0

    @property
    def bands(self) -> list[tuple[int, int]]:
        """(first output row, rows) of every band; the last may be shorter."""
        oh = self.layer.out_h
        return [(h, min(self.rows, oh - h)) for h in range(0, oh, self.rows)]

    @property
    def blocks(self) -> int:
        """Filter blocks."""
        return self.layer.filters // self.filters

    @property
    def chunks(self) -> int:
        """Channel chunks."""
        return self.layer.channels // self.channels

    @property
    def tcdm_bytes(self) -> int:
        """The TCDM the tiles take: two buffers of each kind, and for CPO and CPS the one
        compacted tile (and its counts)."""
        return 2 * (self.input_bytes + self.kernel_bytes + self.output_bytes) + self.compact_bytes

    def input_rows(self, rows: int) -> int:
        """The padded input rows a band of ``rows`` output rows reads."""
        return (rows - 1) * self.layer.stride + self.layer.kernel_h

    def __str__(self) -> str:
        return f"{self.rows} rows x {self.filters} filters x {self.channels} channels"


def dense_input_bytes(layer: Layer, method: str, rows: int, channels: int) -> int:
    """The bytes of one band's lowered input for a dense lowering (or the dense bound of a
    sparse one: every element stored)."""
    kh, kw, ow, iw = layer.kernel_h, layer.kernel_w, layer.out_w, layer.padded_w
    rin = (rows - 1) * layer.stride + kh
    if method == "im2col":
        return WORD * rows * ow * kh * kw * channels
    if method == "mec":
        return WORD * ow * rin * kw * channels
    if method == "direct":
        return WORD * rin * iw * channels
    parts = -(-kw // layer.stride)
    stored = rin * iw * channels
    # a run is a non-zero under a zero: at most every other row of a column starts one
    return _sparse_bytes(stored, (rin + 1) // 2 * iw * channels if method == "cps" else 0, channels, parts, ow)


def _sparse_bytes(values: int, runs: int, planes: int, parts: int, ow: int) -> int:
    indices = 2 * runs if runs else values
    return _align(WORD * values + INT * (indices + planes * parts * (ow + 1) + planes))


def _align(n: int) -> int:
    return (n + WORD - 1) // WORD * WORD


def counts_bytes(channels: int, cores: int) -> int:
    """The TCDM the CPO/CPS compaction keeps its books in: two words per channel of the chunk
    (its counts), then a word per core (the cycles it took)."""
    return 2 * INT * channels + WORD * cores


def scratch_bytes(cores: int) -> int:
    """The TCDM the kernels keep besides the tiles: a word per core (the SpMV saves its
    return address there)."""
    return WORD * cores


def plan(layer: Layer, method: str, tcdm_bytes: int, cores: int, one_row: bool = False) -> Tiling:
    """The tiling of ``layer`` under ``method`` whose buffers fit ``tcdm_bytes``: the most
    multiply-accumulates per step, preferring chunks whose dot products are at least 64 long
    (so the FREP loops, not their setup, take the time), then more filters per block; for
    CPO and CPS the most filters per block first (each core's share is its FREP length).

    Dense lowerings take filter blocks of a multiple of 8 (the GEMM computes 8 columns at
    once), CPO and CPS of a multiple of ``cores`` (each core takes an equal share of the
    block's filters); CPO and CPS take two buffers of the band's padded input rows (what the
    DMA brings) and one of the tile the cores compact them into, sized for every element
    stored (the program is written before the activations are known). ``one_row``: bands of
    one output row (CPO's gather through indirect streams needs them). A ValueError when
    nothing fits."""
    step = cores if method in SPARSE else 8
    tcdm_bytes -= scratch_bytes(cores)
    if layer.filters % step:
        raise ValueError(f"layer '{layer.name}': {method} on the cluster needs filters a multiple of {step}, "
                         f"got {layer.filters}")
    kh, kw = layer.kernel_h, layer.kernel_w
    best, best_key = None, None
    for nb in [d for d in _divisors(layer.filters) if d % step == 0]:
        for cc in _divisors(layer.channels):
            kernel = WORD * kh * kw * cc * nb
            for rows in range(1, (1 if one_row else layer.out_h) + 1):
                # CPO/CPS: the DMA brings the band's padded input rows, the cores compact them
                # into one tile as large as it can be (every element stored)
                inp = dense_input_bytes(layer, "direct" if method in SPARSE else method, rows, cc)
                compact = dense_input_bytes(layer, method, rows, cc) + counts_bytes(cc, cores) if method in SPARSE else 0
                out = WORD * rows * layer.out_w * nb
                if 2 * (inp + kernel + out) + compact > tcdm_bytes:
                    break
                # CPO/CPS: each core's filters are its FREP length, the longer the better
                key = (nb, rows * cc, cc) if method in SPARSE else \
                    (kh * kw * cc >= min(64, kh * kw * layer.channels), rows * nb * cc, nb, cc)
                if best_key is None or key > best_key:
                    best, best_key = Tiling(layer, method, rows, nb, cc, inp, kernel, out, compact), key
    if best is None:
        raise ValueError(f"layer '{layer.name}': no {method} tile fits the {tcdm_bytes}-byte TCDM")
    return best


@attrs.frozen
class SparseTile:
    """One band and chunk of a CPO (CPS) lowering as the host builds it: ``data`` (values,
    then the int32 indices or run pairs, pointers and channel ids, padded to 8 bytes) and
    where each array begins in it; the reference the cores' compaction is checked against."""

    data: bytes
    values: int
    nnz: int
    index_at: int
    runs: int
    pointers_at: int
    planes_at: int
    planes: int


def sparse_tile(layer: Layer, xp: np.ndarray, method: str, first_row: int, rows: int, first_channel: int,
                channels: int) -> SparseTile:
    """The CPO (CPS) tile of the band of ``rows`` output rows from ``first_row`` and the
    chunk of ``channels`` channels from ``first_channel`` of the padded input ``xp`` (H, W, C)."""
    s, kh = layer.stride, layer.kernel_h
    rin = (rows - 1) * s + kh
    band = xp[first_row * s:first_row * s + rin, :, first_channel:first_channel + channels]
    sub = Layer(f"{layer.name}.band", rin, layer.padded_w, channels, kh, layer.kernel_w, layer.filters, s)
    lowered = cpo_map(sub, band[None], runs=method == "cps")
    indices = lowered.index if lowered.runs is None else lowered.runs.ravel()
    ints = np.concatenate([indices, lowered.pointers.ravel(), lowered.planes]).astype(np.int32)
    nnz = int(lowered.values.size)
    head = WORD * nnz
    data = lowered.values.astype(np.float64).tobytes() + ints.tobytes()
    data += bytes(_align(len(data)) - len(data))
    return SparseTile(data, 0, nnz, head, 0 if lowered.runs is None else int(lowered.runs.shape[0]),
                      head + INT * indices.size, head + INT * (indices.size + lowered.pointers.size),
                      int(lowered.planes.size))


def dense_store(layer: Layer, method: str, x: np.ndarray, channels: int) -> list[np.ndarray]:
    """The lowered input of a dense lowering per chunk as stored outside: im2col (Oh, Ow, Kh,
    Kw, Cc) (a band is a run of its first axis), MEC (Ow, Ih, Kw, Cc), direct (Ih, Iw, Cc)."""
    kh, kw, c = layer.kernel_h, layer.kernel_w, layer.channels
    chunks = range(0, c, channels)
    if method == "im2col":
        full = im2col_matrix(layer, x).reshape(layer.out_h, layer.out_w, kh, kw, c)
    elif method == "mec":
        full = mec_matrix(layer, x)[0].reshape(layer.out_w, layer.padded_h, kw, c)
    else:
        full = padded(layer, x)[0]
    return [np.ascontiguousarray(full[..., c0:c0 + channels]) for c0 in chunks]


def packed_kernel(layer: Layer, w: np.ndarray, channels: int, filters: int, blocks: int, chunks: int) -> dict:
    """The kernel tiles {(chunk, block): (Kh*Kw*channels, filters) array} of the first
    ``chunks`` channel chunks and ``blocks`` filter blocks."""
    kh, kw = layer.kernel_h, layer.kernel_w
    return {(ci, fi): np.ascontiguousarray(
        w[:, :, ci * channels:(ci + 1) * channels, fi * filters:(fi + 1) * filters]).reshape(kh * kw * channels, -1)
        for ci in range(chunks) for fi in range(blocks)}
