"""Pull algorithms over every vertex per iteration: PageRank, label propagation (connected
components by the smallest label), Bellman-Ford SSSP; PageRank and label propagation also
in Cagra's segmented form.

Each computes its answer with numpy on the CSR of in-edges and, at the same time, the exact
references a kernel makes to the memory image (see :func:`~.image.sweep`) with the value
each reference reads or writes. Vertices are split among cores in contiguous ranges of
about equal work; a barrier ends every phase. Iterations are synchronous (a new array from
the old), as GraphMat and Ligra's dense pull do, so the values each core reads never depend
on timing.
"""

from __future__ import annotations

import numpy as np

from archmodel.models.compute import References

from .cagra import Segments
from .graphs import Graph
from .image import MemoryImage, Ref, bits, sweep
from .program import EDGE_CYCLES, VERTEX_CYCLES, Phases, Program, split_by_cost

F8, I4, I8 = np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64)
UNREACHED = np.iinfo(np.int64).max // 4
"""The distance of a vertex SSSP does not reach (networkx leaves it out of its answer)."""


class _Pull:
    """The in-edge CSR of a graph in the image, and the sweep of a vertex range over it."""

    def __init__(self, graph: Graph, image: MemoryImage, weights: bool = False):
        inc = graph.inc
        self.n = graph.n
        self.indptr = inc.indptr.astype(np.int64)
        self.indices = inc.indices.astype(np.int64)
        self.weights = inc.data.astype(np.int64)
        self.r_indptr = image.add("inc_indptr", self.indptr)
        self.r_indices = image.add("inc_indices", self.indices.astype(np.int32))
        self.r_weights = image.add("inc_weights", self.weights.astype(np.int32)) if weights else None
        self.degree = np.diff(self.indptr)

    def ranges(self, cores: int) -> list[tuple[int, int]]:
        return split_by_cost(self.degree * EDGE_CYCLES + VERTEX_CYCLES, cores)

    def edges(self, lo: int, hi: int) -> np.ndarray:
        return np.arange(self.indptr[lo], self.indptr[hi])

    def gather(self, lo: int, hi: int, region, values: np.ndarray, weighted: bool = False) -> list[Ref]:
        """The per-edge references of pulling ``values`` (in ``region``) into vertices lo..hi:
        the source id, its weight, then the source's value (whose address needs the id)."""
        j = self.edges(lo, hi)
        u = self.indices[j]
        refs = [Ref(self.r_indices, j, bits(u, I4), gap=EDGE_CYCLES)]
        if weighted:
            refs.append(Ref(self.r_weights, j, bits(self.weights[j], I4)))
        refs.append(Ref(region, u, bits(values[u], region.dtype), dep=len(refs)))
        return refs

    def bound(self, lo: int, hi: int) -> Ref:
        """The read of the end of each vertex's edge list (the start is the previous end)."""
        v = np.arange(lo, hi)
        return Ref(self.r_indptr, v + 1, bits(self.indptr[v + 1], I8), gap=VERTEX_CYCLES)


def _reads_of(region, index, values) -> References:
    """Plain reads of a few elements (a core reading the other cores' partial results)."""
    index = np.asarray(index)
    n = len(index)
    return References(region.at(index), np.full(n, region.itemsize), np.zeros(n, bool), np.zeros(n, np.int64),
                      np.zeros(n, np.int64), values)


def _contributions(x: np.ndarray, outdeg: np.ndarray, even: list) -> tuple[np.ndarray, np.ndarray]:
    """PageRank's contrib (rank over out-degree, 0 for a dangling vertex) and each core's
    share of the dangling mass."""
    contrib = np.where(outdeg > 0, x / np.maximum(outdeg, 1), 0.0)
    return contrib, np.array([x[lo:hi][outdeg[lo:hi] == 0].sum() for lo, hi in even])


def _iterate(x, contrib, partial, damping, pull, segments, seg_regions, cores, r_contrib, r_sum, r_rank,
             partials=None):
    """One PageRank iteration's new ranks and, segmented, its phases (each segment, then the
    merge, whose order of additions the new ranks follow)."""
    n = len(x)
    dangling = float(sum(partial.tolist()))
    base = (1.0 - damping) / n
    if segments is None:
        sums = np.zeros(n)
        np.add.at(sums, np.repeat(np.arange(n), pull.degree), contrib[pull.indices])
        return base + damping * (sums + dangling / n), []
    return _segmented(segments, seg_regions, cores, r_contrib, contrib, r_sum, np.add, 0.0,
                      lambda s: base + damping * (s + dangling / n), r_rank, x, F8, extra=partials)


def pagerank(graph: Graph, image: MemoryImage, cores: int, *, damping: float = 0.85, tol: float = 1e-6,
             max_iter: int = 100, iterations: int | None = None, segments: Segments | None = None) -> Program:
    """Pull PageRank as networkx computes it (uniform start and teleport, dangling mass spread
    uniformly, stop when the L1 change is below n * tol, or after ``iterations``).

    Per iteration, phase 1: each core writes contrib[u] = rank[u] / out_degree[u] for its
    vertices and its share of the dangling mass to ``partials``; phase 2: each core reads
    the partials, then for each of its vertices v sums contrib over v's in-edges and
    writes rank[v] (or, segmented, one phase per segment into its buffer, then the merge)."""
    n = graph.n
    pull = _Pull(graph, image)
    outdeg = graph.out_degree().astype(np.int64)
    x = np.full(n, 1.0 / n)
    r_rank = image.add("rank", x)
    r_outdeg = image.add("out_degree", outdeg.astype(np.int32))
    r_contrib = image.add("contrib", dtype=F8, count=n)
    r_partial = image.add("partials", dtype=F8, count=cores)
    seg_regions = _segment_regions(image, segments) if segments is not None else None
    if seg_regions is not None:
        # zero from the start; the merge zeroes each accumulator again as it consumes it
        r_sum = image.add("sum", np.zeros(n))
    even = split_by_cost(np.ones(n), cores)
    ranges = pull.ranges(cores)
    # The answer first (numpy, whole arrays): the rank before each iteration is all the
    # phases need, so they are made one at a time as the cores reach them.
    ranks = [x]
    limit = iterations if iterations is not None else max_iter
    while len(ranks) - 1 < limit:
        contrib, partial = _contributions(x, outdeg, even)
        new = _iterate(x, contrib, partial, damping, pull, segments, seg_regions, cores, r_contrib,
                       r_sum if segments is not None else None, r_rank)[0]
        err = float(np.abs(new - x).sum())
        x = new
        ranks.append(x)
        if iterations is None and err < n * tol:
            break
    else:
        if iterations is None:
            raise ValueError(f"pagerank did not converge in {max_iter} iterations (tol {tol})")
    done = len(ranks) - 1

    def make():
        for x, new in zip(ranks, ranks[1:]):
            contrib, partial = _contributions(x, outdeg, even)
            first = []
            for c, (lo, hi) in enumerate(even):
                v = np.arange(lo, hi)
                body = sweep(np.zeros(hi - lo), [Ref(r_rank, v, bits(x[v], F8), gap=1),
                                                 Ref(r_outdeg, v, bits(outdeg[v], I4)),
                                                 Ref(r_contrib, v, bits(contrib[v], F8), write=True,
                                                     gap=VERTEX_CYCLES)], [], [])
                last = sweep(np.zeros(1), [Ref(r_partial, [c], bits(partial[c:c + 1], F8), write=True)], [], [])
                first.append(References.concatenate([body, last]))
            yield first
            partials = _reads_of(r_partial, np.arange(cores), bits(partial, F8))
            if seg_regions is None:
                second = []
                for lo, hi in ranges:
                    v = np.arange(lo, hi)
                    body = sweep(pull.degree[lo:hi], [pull.bound(lo, hi)], pull.gather(lo, hi, r_contrib, contrib),
                                 [Ref(r_rank, v, bits(x[v], F8), gap=VERTEX_CYCLES),
                                  Ref(r_rank, v, bits(new[v], F8), write=True)])
                    second.append(References.concatenate([partials, body]))
                yield second
            else:
                yield from _iterate(x, contrib, partial, damping, pull, segments, seg_regions, cores, r_contrib,
                                    r_sum, r_rank, partials)[1]

    per_iteration = 2 if segments is None else 2 + segments.count
    return Program("pagerank", Phases(done * per_iteration, make), x, "rank", x.copy(), done)


def label_propagation(graph: Graph, image: MemoryImage, cores: int, *, max_iter: int = 10_000,
                      segments: Segments | None = None) -> Program:
    """Connected components by label propagation: every vertex starts with its own id as
    label and takes the smallest label among itself and its in-neighbours, synchronously,
    until no label changes (the last iteration finds none). On an undirected graph a
    vertex ends with the smallest id of its component."""
    n = graph.n
    pull = _Pull(graph, image)
    labels = np.arange(n, dtype=np.int64)
    arrays = [image.add("labels0", labels.astype(np.int32)), image.add("labels1", dtype=I4, count=n)]
    seg_regions = _segment_regions(image, segments, I8) if segments is not None else None
    ranges = pull.ranges(cores)
    phases = []
    done = 0
    while True:
        old_region, new_region = arrays[done % 2], arrays[(done + 1) % 2]
        if seg_regions is None:
            mins = labels.copy()
            np.minimum.at(mins, np.repeat(np.arange(n), pull.degree), labels[pull.indices])
            new = mins
            phase = []
            for lo, hi in ranges:
                v = np.arange(lo, hi)
                phase.append(sweep(pull.degree[lo:hi], [pull.bound(lo, hi), Ref(old_region, v, bits(labels[v], I4))],
                                   pull.gather(lo, hi, old_region, labels),
                                   [Ref(new_region, v, bits(new[v], I4), write=True, gap=VERTEX_CYCLES)]))
            phases.append(phase)
        else:
            new, more = _segmented(segments, seg_regions, cores, old_region, labels, new_region, np.minimum, None,
                                   None, None, labels, I4)
            phases.extend(more)
        done += 1
        changed = bool((new != labels).any())
        labels = new
        if not changed:
            break
        if done >= max_iter:
            raise ValueError(f"label propagation did not settle in {max_iter} iterations")
    return Program("label_propagation", phases, labels, arrays[done % 2].name, labels.astype(np.int32), done)


def sssp(graph: Graph, image: MemoryImage, cores: int, *, source: int = 0, max_iter: int | None = None) -> Program:
    """Single-source shortest paths by synchronous Bellman-Ford, pulling: dist[v] becomes the
    smallest of dist[v] and dist[u] + w(u, v) over v's in-edges, until nothing changes.
    Unreached vertices keep :data:`UNREACHED`."""
    n = graph.n
    pull = _Pull(graph, image, weights=True)
    dist = np.full(n, UNREACHED, dtype=np.int64)
    dist[source] = 0
    arrays = [image.add("dist0", dist), image.add("dist1", dtype=I8, count=n)]
    ranges = pull.ranges(cores)
    phases = []
    done = 0
    limit = max_iter if max_iter is not None else n + 1
    dst_of_edge = np.repeat(np.arange(n), pull.degree)
    while True:
        old_region, new_region = arrays[done % 2], arrays[(done + 1) % 2]
        through = np.where(dist[pull.indices] >= UNREACHED, UNREACHED, dist[pull.indices] + pull.weights)
        new = dist.copy()
        np.minimum.at(new, dst_of_edge, through)
        phase = []
        for lo, hi in ranges:
            v = np.arange(lo, hi)
            phase.append(sweep(pull.degree[lo:hi], [pull.bound(lo, hi), Ref(old_region, v, bits(dist[v], I8))],
                               pull.gather(lo, hi, old_region, dist, weighted=True),
                               [Ref(new_region, v, bits(new[v], I8), write=True, gap=VERTEX_CYCLES)]))
        phases.append(phase)
        done += 1
        changed = bool((new != dist).any())
        dist = new
        if not changed:
            break
        if done >= limit:
            raise ValueError(f"sssp did not settle in {limit} iterations")
    return Program("sssp", phases, dist, arrays[done % 2].name, dist.copy(), done)


def _segment_regions(image: MemoryImage, segments: Segments, buffer_dtype=F8) -> dict:
    """The segmented CSR and the per-row buffers (of ``buffer_dtype``), in the image."""
    return {"dst": image.add("seg_dst", segments.dst.astype(np.int32)),
            "indptr": image.add("seg_indptr", segments.indptr),
            "src": image.add("seg_src", segments.src.astype(np.int32)),
            "buf": image.add("seg_buf", dtype=buffer_dtype, count=len(segments.dst))}


def _segmented(segs: Segments, regions: dict, cores: int, r_values, values: np.ndarray, r_out, combine,
               identity, finish, r_final, old: np.ndarray, dtype, extra: References | None = None):
    """One segmented pull iteration: a phase per segment (each core a share of its rows,
    combining the segment's sources' ``values`` into the row's buffer entry), then the
    cache-aware merge phase (each core a range of destination blocks of ``segs.block``
    vertices: fold each segment's buffer entries for the block into the accumulators in
    ``r_out``, and with ``finish`` write the final value to ``r_final``).
    ``identity`` None starts a vertex's accumulator from its own old value (label
    propagation's min), written at the block's start. Otherwise (PageRank's sum) the
    accumulators hold ``identity`` when the merge starts and ``finish`` puts it back as it
    reads each one, as GAP's and Cagra's PageRank zero ``incoming_total`` in the pass that
    consumes it, so the merge makes no pass of its own to clear them. Returns the new
    values and the phases."""
    n = len(values)
    r_dst, r_indptr, r_src, r_buf = regions["dst"], regions["indptr"], regions["src"], regions["buf"]
    seg_degree = np.diff(segs.indptr)
    row_of_edge = np.repeat(np.arange(len(segs.dst)), seg_degree)
    buf = np.zeros(len(segs.dst), dtype=r_buf.dtype)
    if combine is np.add:
        np.add.at(buf, row_of_edge, values[segs.src])
    else:
        buf[:] = np.iinfo(np.int64).max
        np.minimum.at(buf, row_of_edge, values[segs.src])
    phases = []
    for k in range(segs.count):
        r0, r1 = segs.rows(k)
        phase = []
        for lo, hi in split_by_cost(seg_degree[r0:r1] * EDGE_CYCLES + VERTEX_CYCLES, cores):
            lo, hi = lo + r0, hi + r0
            rows = np.arange(lo, hi)
            j = np.arange(segs.indptr[lo], segs.indptr[hi])
            u = segs.src[j]
            phase.append(sweep(seg_degree[lo:hi],
                               [Ref(r_indptr, rows + 1, bits(segs.indptr[rows + 1], I8), gap=VERTEX_CYCLES)],
                               [Ref(r_src, j, bits(u, I4), gap=EDGE_CYCLES),
                                Ref(r_values, u, bits(values[u], r_values.dtype), dep=1)],
                               [Ref(r_buf, rows, bits(buf[rows], r_buf.dtype), write=True)]))
        phases.append(phase)
    # The merge: blocks of destinations, each core a contiguous run of blocks; within a
    # block the segments in order. A segment names each destination once, so folding one
    # segment at a time into the accumulators is the sequential order exactly.
    acc = np.zeros(n) if identity is not None else old.astype(np.int64).copy()
    rows_total = len(segs.dst)
    before = np.zeros(rows_total, dtype=acc.dtype)
    after = np.zeros(rows_total, dtype=acc.dtype)
    for k in range(segs.count):
        r0, r1 = segs.rows(k)
        d = segs.dst[r0:r1]
        before[r0:r1] = acc[d]
        acc[d] = combine(acc[d], buf[r0:r1])
        after[r0:r1] = acc[d]
    block_of_row = segs.dst // segs.block
    order = np.lexsort((np.arange(rows_total), block_of_row))
    blocks = [(b, min(n, b + segs.block)) for b in range(0, n, segs.block)]
    block_rows = np.searchsorted(block_of_row[order], np.arange(len(blocks) + 1))
    block_cost = np.array([hi - lo for lo, hi in blocks], dtype=np.float64) + np.diff(block_rows)
    merge = []
    for c, (b0, b1) in enumerate(split_by_cost(block_cost, cores)):
        parts = [extra] if extra is not None else []
        for b in range(b0, b1):
            lo, hi = blocks[b]
            v = np.arange(lo, hi)
            if identity is None:
                parts.append(sweep(np.zeros(hi - lo), [Ref(r_values, v, bits(old[v], dtype)),
                                                       Ref(r_out, v, bits(old[v], dtype), write=True)], [], []))
            rows = order[block_rows[b]:block_rows[b + 1]]
            d = segs.dst[rows]
            parts.append(sweep(np.zeros(len(rows)), [
                Ref(r_dst, rows, bits(d, I4), gap=1),
                Ref(r_buf, rows, bits(buf[rows], r_buf.dtype)),
                Ref(r_out, d, bits(before[rows], dtype), dep=2),
                Ref(r_out, d, bits(after[rows], dtype), write=True, dep=3, gap=EDGE_CYCLES)], [], []))
            if finish is not None:
                parts.append(sweep(np.zeros(hi - lo), [Ref(r_out, v, bits(acc[v], dtype)),
                                                       Ref(r_out, v, bits(np.full(hi - lo, identity), dtype),
                                                           write=True),
                                                       Ref(r_final, v, bits(old[v], dtype)),
                                                       Ref(r_final, v, bits(finish(acc[v]), dtype), write=True,
                                                           gap=VERTEX_CYCLES)], [], []))
        merge.append(References.concatenate(parts) if parts else _reads_of(r_out, [], np.zeros(0, np.uint64)))
    phases.append(merge)
    new = finish(acc) if finish is not None else acc.astype(old.dtype)
    return new, phases
