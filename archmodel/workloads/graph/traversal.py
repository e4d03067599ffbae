"""Frontier algorithms over the out-edges: breadth-first search, connected components by
repeated BFS, and Brandes's betweenness centrality.

Like the pull algorithms, each computes its answer with numpy and the exact references of
the kernel, with their values. A BFS level is one phase: the cores share the frontier
(contiguous chunks of the queue), a vertex is claimed by the first edge reaching it in
program order (core 0's chunk, then core 1's, as a compare-and-swap would settle it), and
the discoveries append to one queue. Reads of a vertex claimed in the same level by another
core race with that claim, so they are not value-checked. Betweenness runs the sources
dealt round robin to the cores, each with private arrays, and a final merge phase.
"""

from __future__ import annotations

import random

import numpy as np

from archmodel.models.compute import References

from .graphs import Graph
from .image import MemoryImage, Ref, bits, sweep
from .program import EDGE_CYCLES, VERTEX_CYCLES, Program, empty, split_by_cost

F8, I4, I8 = np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64)


class _Out:
    """The out-edge CSR of a graph in the image."""

    def __init__(self, graph: Graph, image: MemoryImage):
        self.n = graph.n
        self.indptr = graph.out.indptr.astype(np.int64)
        self.indices = graph.out.indices.astype(np.int64)
        self.r_indptr = image.add("out_indptr", self.indptr)
        self.r_indices = image.add("out_indices", self.indices.astype(np.int32))
        self.degree = np.diff(self.indptr)

    def head(self, r_queue, positions, frontier) -> list[Ref]:
        """Read the vertex from the queue, then the bounds of its edge list."""
        return [Ref(r_queue, positions, bits(frontier, I4), gap=VERTEX_CYCLES),
                Ref(self.r_indptr, frontier, bits(self.indptr[frontier], I8), dep=1),
                Ref(self.r_indptr, frontier + 1, bits(self.indptr[frontier + 1], I8), dep=2)]

    def neighbours(self, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edge index, target, source) of every out-edge of ``frontier``, in program order."""
        degree = self.degree[frontier]
        first = np.repeat(self.indptr[frontier], degree)
        start = np.zeros(len(frontier), dtype=np.int64)
        if len(frontier):
            np.cumsum(degree[:-1], out=start[1:])
        j = first + np.arange(int(degree.sum())) - np.repeat(start, degree)
        return j, self.indices[j], np.repeat(frontier, degree)


def _claims(u: np.ndarray, unvisited: np.ndarray) -> np.ndarray:
    """Which edges claim their target: the first edge (in order) to each unvisited target."""
    claim = np.zeros(len(u), dtype=bool)
    candidates = np.flatnonzero(unvisited)
    if len(candidates):
        _, first = np.unique(u[candidates], return_index=True)
        claim[candidates[first]] = True
    return claim


def _bfs_levels(out: _Out, r_depth, r_queue, depth: np.ndarray, queue: np.ndarray, cores: int,
                value_of_claim) -> tuple[list, int]:
    """BFS from ``root`` (already written to depth and queue[0] by the caller): one phase per
    level, the references of each core. ``depth`` and ``queue`` are updated; the claimed
    vertex gets ``value_of_claim(level)`` in ``depth``. Returns the phases and the queue's
    final length."""
    head, tail = 0, 1
    level = 0
    phases = []
    while head < tail:
        level_end = tail
        frontier = queue[head:tail].copy()
        phase = []
        claimed_here = []
        for lo, hi in split_by_cost(out.degree[frontier] + 1, cores):
            f = frontier[lo:hi]
            j, u, _ = out.neighbours(f)
            before = depth[u]
            unvisited = before == -1
            # a vertex another core claimed in this level: this core sees the claim or not
            racing = np.isin(u, np.concatenate(claimed_here)) if claimed_here else np.zeros(len(u), bool)
            unvisited &= ~racing
            claim = _claims(u, unvisited)
            seen = np.where(unvisited & ~claim, value_of_claim(level), before)
            seen = np.where(racing, value_of_claim(level), seen)
            new = u[claim]
            slots = tail + np.arange(len(new))
            queue[slots] = new
            depth[new] = value_of_claim(level)
            tail += len(new)
            claimed_here.append(new)
            slot_of_edge = np.zeros(len(u), dtype=np.int64)
            slot_of_edge[claim] = slots
            phase.append(sweep(out.degree[f], out.head(r_queue, np.arange(head + lo, head + hi), f), [
                Ref(out.r_indices, j, bits(u, I4), gap=EDGE_CYCLES),
                Ref(r_depth, u, bits(seen, I4), dep=1, check=~racing),
                Ref(r_depth, u, bits(np.full(len(u), value_of_claim(level)), I4), write=True, dep=2, when=claim),
                Ref(r_queue, slot_of_edge, bits(u, I4), write=True, when=claim)], []))
        phases.append(phase)
        head = level_end
        level += 1
    return phases, tail


def _start(r_depth, r_queue, root: int, mark: int) -> References:
    """Mark the root and put it first in the queue."""
    return References([r_depth.at(root), r_queue.at(0)], [4, 4], [True, True], [VERTEX_CYCLES, 1], [0, 0],
                      [int(bits([mark], I4)[0]), int(bits([root], I4)[0])])


def _traversal_arrays(graph: Graph, image: MemoryImage, mark: str):
    """The out-edge CSR, the per-vertex mark array (-1: not reached) and the queue, each in
    numpy and in the image."""
    out = _Out(graph, image)
    marks = np.full(graph.n, -1, dtype=np.int64)
    r_marks = image.add(mark, marks.astype(np.int32))
    r_queue = image.add("queue", dtype=I4, count=graph.n)
    return out, marks, r_marks, np.zeros(graph.n, dtype=np.int64), r_queue


def bfs(graph: Graph, image: MemoryImage, cores: int, *, source: int = 0) -> Program:
    """Breadth-first search from ``source`` over out-edges: ``depth[v]`` is the number of
    edges on a shortest path, -1 where unreached."""
    out, depth, r_depth, queue, r_queue = _traversal_arrays(graph, image, "depth")
    depth[source] = 0
    queue[0] = source
    phases, _ = _bfs_levels(out, r_depth, r_queue, depth, queue, cores, lambda level: level + 1)
    phases[0][0] = References.concatenate([_start(r_depth, r_queue, source, 0), phases[0][0]])
    return Program("bfs", phases, depth, "depth", depth.astype(np.int32), len(phases))


def connected_components(graph: Graph, image: MemoryImage, cores: int) -> Program:
    """Connected components of an undirected graph by a sweep over the vertices in id order
    that starts a BFS from every vertex not yet labelled, labelling its component with the
    root's id (so each component gets its smallest id). Sequential: it runs on core 0."""
    n = graph.n
    out, comp, r_comp, queue, r_queue = _traversal_arrays(graph, image, "component")
    parts = []
    scanned = 0
    for root in range(n):
        if comp[root] != -1:
            continue
        between = np.arange(scanned, root + 1)
        parts.append(sweep(np.zeros(len(between)), [Ref(r_comp, between, bits(comp[between], I4), gap=1)], [], []))
        scanned = root + 1
        comp[root] = root
        queue[0] = root
        parts.append(_start(r_comp, r_queue, root, root))
        levels, _ = _bfs_levels(out, r_comp, r_queue, comp, queue, 1, lambda level, r=root: r)
        parts.extend(phase[0] for phase in levels)
    rest = np.arange(scanned, n)
    parts.append(sweep(np.zeros(len(rest)), [Ref(r_comp, rest, bits(comp[rest], I4), gap=1)], [], []))
    phase = [References.concatenate(parts)] + [empty() for _ in range(cores - 1)]
    return Program("connected_components", [phase], comp, "component", comp.astype(np.int32), 1)


def betweenness_sources(n: int, k: int | None, seed: int) -> list[int]:
    """The sources of a betweenness run: every vertex, or the ``k`` that networkx's
    ``betweenness_centrality(G, k, seed=seed)`` samples (``random.Random(seed).sample``)."""
    if k is None or k >= n:
        return list(range(n))
    return random.Random(seed).sample(range(n), k)


def betweenness(graph: Graph, image: MemoryImage, cores: int, *, k: int | None = None, seed: int = 0,
                new_id: np.ndarray | None = None) -> Program:
    """Brandes's betweenness centrality, normalised as networkx does (endpoints excluded),
    from every source or ``k`` sampled ones. Per source: reset the core's depth, sigma
    (shortest-path counts) and delta arrays, a forward BFS counting paths, a backward sweep
    over the levels accumulating dependencies into the core's partial centrality; a last
    phase sums the cores' partials and scales them.

    ``new_id``: the renumbering ``graph`` went through (``new_id[v]`` is original vertex v's
    id here, as Cagra's clustering gives it). The ``k`` sources are then sampled in the
    original numbering, as networkx samples the original graph, and mapped through it, so a
    renumbered run computes the same centralities from the same vertices (only the memory
    layout differs) and its cycles compare with the original's."""
    n = graph.n
    out = _Out(graph, image)
    sources = betweenness_sources(n, k, seed)
    if new_id is not None:
        sources = [int(new_id[s]) for s in sources]
    private = []
    for c in range(cores):
        private.append({name: image.add(f"{name}{c}", dtype=dtype, count=n)
                        for name, dtype in (("depth", I4), ("sigma", F8), ("delta", F8), ("queue", I4),
                                            ("bc", F8))})
    partial = np.zeros((cores, n))
    streams = [[] for _ in range(cores)]
    everyone = np.arange(n)
    for number, s in enumerate(sources):
        c = number % cores
        r = private[c]
        parts = streams[c]
        parts.append(sweep(np.zeros(n), [Ref(r["depth"], everyone, bits(np.full(n, -1), I4), write=True, gap=1),
                                         Ref(r["sigma"], everyone, bits(np.zeros(n), F8), write=True),
                                         Ref(r["delta"], everyone, bits(np.zeros(n), F8), write=True)], [], []))
        parts.append(References([r["depth"].at(s), r["sigma"].at(s), r["queue"].at(0)], [4, 8, 4], [True] * 3,
                                [1, 0, 0], [0, 0, 0], [0, int(bits([1.0], F8)[0]), int(bits([s], I4)[0])]))
        parts.extend(_brandes(out, r, s, partial[c]))
    r_bc = image.add("bc", dtype=F8, count=n)
    total = np.zeros(n)
    for c in range(cores):
        total = total + partial[c]
    scale = _scale(n, len(sources), graph.directed)
    answer = total * scale[0]
    if len(sources) < n and scale[1] is not None:
        answer[sources] = total[sources] * scale[1]
    merge = []
    for lo, hi in split_by_cost(np.ones(n), cores):
        v = np.arange(lo, hi)
        heads = [Ref(private[c]["bc"], v, bits(partial[c][v], F8), gap=1) for c in range(cores)]
        heads.append(Ref(r_bc, v, bits(answer[v], F8), write=True, gap=VERTEX_CYCLES))
        merge.append(sweep(np.zeros(hi - lo), heads, [], []))
    phases = [[References.concatenate(p) if p else empty() for p in streams], merge]
    return Program("betweenness", phases, answer, "bc", answer.copy(), len(sources))


def _scale(n: int, k: int, directed: bool) -> tuple[float, float | None]:
    """networkx's normalisation with endpoints excluded: (for every vertex, for sampled
    sources when sampling; None when not sampling)."""
    big_n = n - 1
    if big_n < 2:
        return 1.0, None
    if k >= n:
        return 1.0 / (big_n * (big_n - 1)), None
    source = 1.0 / ((k - 1) * (big_n - 1)) if k > 1 else float("nan")
    return 1.0 / (k * (big_n - 1)), source


def _brandes(out: _Out, r: dict, s: int, bc: np.ndarray) -> list[References]:
    """The references of one source's forward and backward passes; adds its dependencies to
    ``bc`` (the core's partial centrality, as its array holds it)."""
    n = out.n
    depth = np.full(n, -1, dtype=np.int64)
    sigma = np.zeros(n)
    depth[s] = 0
    sigma[s] = 1.0
    levels = [np.array([s])]
    parts = []
    head = 0
    while len(levels[-1]):
        f = levels[-1]
        d = len(levels) - 1
        j, u, v = out.neighbours(f)
        before = depth[u]
        claim = _claims(u, before == -1)
        seen = np.where((before == -1) & ~claim, d + 1, before)
        new = u[claim]
        tail = head + len(f)
        slots = tail + np.arange(len(new))
        slot_of_edge = np.zeros(len(u), dtype=np.int64)
        slot_of_edge[claim] = slots
        depth[new] = d + 1
        succ = depth[u] == d + 1
        # sigma[u] read: the sum of the sigma of the earlier successors' sources in this level
        add = np.where(succ, sigma[v], 0.0)
        running = np.zeros(len(u))
        order = np.argsort(u, kind="stable")
        grouped = np.cumsum(add[order])
        starts = np.r_[0, np.flatnonzero(np.diff(u[order])) + 1] if len(u) else np.zeros(0, np.int64)
        offset = np.repeat(grouped[starts] - add[order][starts], np.diff(np.r_[starts, len(u)]))
        running[order] = grouped - add[order] - offset
        read_sigma = sigma[u] + running
        parts.append(sweep(out.degree[f], out.head(r["queue"], np.arange(head, tail), f) +
                           [Ref(r["sigma"], f, bits(sigma[f], F8), dep=3)], [
            Ref(out.r_indices, j, bits(u, I4), gap=EDGE_CYCLES),
            Ref(r["depth"], u, bits(seen, I4), dep=1),
            Ref(r["depth"], u, bits(np.full(len(u), d + 1), I4), write=True, dep=2, when=claim),
            Ref(r["queue"], slot_of_edge, bits(u, I4), write=True, when=claim),
            Ref(r["sigma"], u, bits(read_sigma, F8), dep=4, when=succ),
            Ref(r["sigma"], u, bits(read_sigma + add, F8), write=True, dep=5, when=succ)], []))
        np.add.at(sigma, u[succ], sigma[v[succ]])
        head = tail
        levels.append(new)
    levels.pop()
    delta = np.zeros(n)
    starts_of_level = np.cumsum([0] + [len(f) for f in levels])
    for d in range(len(levels) - 1, -1, -1):
        f = levels[d]
        j, u, v = out.neighbours(f)
        succ = depth[u] == d + 1
        contribution = np.where(succ, sigma[v] / np.where(succ, sigma[u], 1.0) * (1.0 + delta[u]), 0.0)
        np.add.at(delta, v, contribution)
        not_source = f != s
        parts.append(sweep(out.degree[f], out.head(r["queue"], np.arange(starts_of_level[d], starts_of_level[d + 1]),
                                                   f) + [Ref(r["sigma"], f, bits(sigma[f], F8), dep=3)], [
            Ref(out.r_indices, j, bits(u, I4), gap=EDGE_CYCLES),
            Ref(r["depth"], u, bits(depth[u], I4), dep=1),
            Ref(r["sigma"], u, bits(sigma[u], F8), dep=2, when=succ),
            Ref(r["delta"], u, bits(delta[u], F8), dep=3, when=succ)], [
            Ref(r["delta"], f, bits(delta[f], F8), write=True, gap=VERTEX_CYCLES),
            Ref(r["bc"], f, bits(bc[f], F8), when=not_source),
            Ref(r["bc"], f, bits(bc[f] + delta[f], F8), write=True, when=not_source)]))
        bc[f[not_source]] += delta[f[not_source]]
    return parts
