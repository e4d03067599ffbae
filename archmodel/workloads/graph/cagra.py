"""Cagra's two optimisations (Zhang, Kiriansky, Mendis, Zaharia, Amarasinghe, "Making Caches
Work for Graph Analytics", IEEE BigData 2017).

* **Frequency-based clustering** (:func:`frequency_clustering`): the vertices read most
  often, those of out-degree above the average (a pull sweep reads a vertex's data once per
  out-edge), are renumbered first, keeping their original relative order, and the others
  follow in their original order. Hot data then shares cache lines with hot data, and the
  order the graph came with (often some locality) survives within each group.
* **CSR segmenting** (:func:`segment`): the source vertices are cut into segments of
  ``size`` consecutive ids whose data fits in a fraction of the LLC; each segment keeps the
  edges whose source lies in it, as a CSR over the destinations that have such an edge.
  A pull iteration processes one segment at a time, so its random reads stay in the cache,
  and writes one partial result per destination into a per-segment buffer (sequential);
  the cache-aware merge then combines the buffers one block of destinations at a time.
  Every core merges its own blocks at the same time, so a block holds ``block`` vertices,
  a share of the segment size, and the blocks of all cores together fit where one
  segment's data did.
"""

from __future__ import annotations

import attrs
import numpy as np

from .graphs import Graph

SEGMENT_FRACTION = 0.5
"""The share of the LLC one segment's vertex data may fill under ``segments = "auto"``: the
rest holds the streamed edges and buffers, as Cagra sizes segments to part of the LLC."""


def frequency_clustering(graph: Graph) -> np.ndarray:
    """``new_id[v]`` for every vertex: hot vertices (out-degree above the average) first in
    their original order, then the rest in theirs."""
    degree = graph.out_degree()
    hot = degree > degree.mean()
    order = np.concatenate([np.flatnonzero(hot), np.flatnonzero(~hot)])
    new_id = np.empty(graph.n, dtype=np.int64)
    new_id[order] = np.arange(graph.n)
    return new_id


@attrs.frozen
class Segments:
    """The segmented in-edges of a graph: segment k holds the edges u -> v with
    ``k * size <= u < (k + 1) * size``, as rows (destinations, ascending) ``row_start[k] ..
    row_start[k + 1]``; row r is destination ``dst[r]`` with sources ``src[indptr[r] ..
    indptr[r + 1]]``, ascending."""

    size: int
    count: int
    row_start: np.ndarray
    dst: np.ndarray
    indptr: np.ndarray
    src: np.ndarray
    weight: np.ndarray
    block: int

    def rows(self, k: int) -> tuple[int, int]:
        """The rows of segment k."""
        return int(self.row_start[k]), int(self.row_start[k + 1])


def segment(graph: Graph, size: int, block: int | None = None) -> Segments:
    """Cut ``graph``'s in-edges into segments of ``size`` source vertices, to be merged in
    blocks of ``block`` destinations (default ``size``)."""
    if size < 1:
        raise ValueError(f"a segment needs at least one vertex, got {size}")
    block = size if block is None else block
    if block < 1:
        raise ValueError(f"a merge block needs at least one vertex, got {block}")
    coo = graph.inc.tocoo()  # row: destination, column: source
    dst, src, weight = coo.row.astype(np.int64), coo.col.astype(np.int64), coo.data.astype(np.int64)
    seg = src // size
    order = np.lexsort((src, dst, seg))
    dst, src, seg, weight = dst[order], src[order], seg[order], weight[order]
    count = max(1, -(-graph.n // size))
    new_row = np.ones(len(dst), dtype=bool)
    new_row[1:] = (dst[1:] != dst[:-1]) | (seg[1:] != seg[:-1])
    row_first = np.flatnonzero(new_row)
    indptr = np.append(row_first, len(dst)).astype(np.int64)
    row_seg = seg[row_first]
    row_start = np.searchsorted(row_seg, np.arange(count + 1), side="left").astype(np.int64)
    return Segments(size, count, row_start, dst[row_first], indptr, src, weight, block)


def auto_segment_vertices(llc_bytes: int, item_bytes: int) -> int:
    """Vertices per segment under ``segments = "auto"``: their data fills
    :data:`SEGMENT_FRACTION` of the LLC."""
    return max(64, int(llc_bytes * SEGMENT_FRACTION) // item_bytes)


def merge_block_vertices(segment_vertices: int, cores: int) -> int:
    """Destinations per merge block: the cores merge their blocks at once, so each takes its
    share of a segment's room in the LLC (Cagra sizes the merge's ranges to the cache too)."""
    return max(8, segment_vertices // max(1, cores))
