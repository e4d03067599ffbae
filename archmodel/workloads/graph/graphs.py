"""Graphs in compressed sparse row form, from generators and files.

A :class:`Graph` holds both directions: ``out`` (row v lists the targets of v's edges) and
``inc`` (row v lists the sources of edges into v), each a ``scipy.sparse.csr_matrix`` with
sorted column indices, so the pull algorithms sweep ``inc`` and the push ones ``out``. An
undirected graph keeps every edge in both directions. Self loops and repeated edges are
dropped (as networkx's simple graphs do, and as Graph500's kernels ignore them), so answers
compare with networkx's on the same edges. Weights (for SSSP) are positive integers.

Sources: :func:`rmat` (the Graph500 Kronecker generator), :func:`from_networkx` (any
networkx graph, and so its generators), :func:`read_edge_list` (SNAP's text format) and
:func:`read_matrix_market` (``scipy.io.mmread``). A malformed file is a
:class:`GraphFileError` naming ``file:line``.
"""

from __future__ import annotations

import difflib
import io
from pathlib import Path

import networkx as nx
import numpy as np
import scipy.io
import scipy.sparse as sp

RMAT_GRAPH500 = (0.57, 0.19, 0.19)
"""Graph500's Kronecker initiator (a, b, c; d = 1 - a - b - c = 0.05)."""


class GraphFileError(ValueError):
    """A graph file that does not parse: ``file:line: message``."""

    def __init__(self, path, line: int | None, message: str):
        self.path, self.line = str(path), line
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


class Graph:
    """``n`` vertices and their edges in CSR, both directions; ``weights`` of ``out`` edges
    (in ``out``'s order) when weighted. Build one with the functions of this module."""

    def __init__(self, n: int, sources: np.ndarray, targets: np.ndarray, *, directed: bool, weights=None,
                 name: str = "graph"):
        sources = np.asarray(sources, dtype=np.int64)
        targets = np.asarray(targets, dtype=np.int64)
        if n < 1:
            raise ValueError("a graph needs at least one vertex")
        if len(sources) and (min(sources.min(), targets.min()) < 0 or max(sources.max(), targets.max()) >= n):
            raise ValueError(f"an edge names a vertex outside 0 .. {n - 1}")
        w = np.ones(len(sources), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
        if len(w) and w.min() < 1:
            raise ValueError("edge weights must be positive integers")
        keep = sources != targets
        sources, targets, w = sources[keep], targets[keep], w[keep]
        if not directed:
            sources, targets, w = np.concatenate([sources, targets]), np.concatenate([targets, sources]), \
                np.concatenate([w, w])
        # One edge per (source, target): the smallest weight of repeats (networkx keeps the last
        # one added; generators and files here give repeats the same weight or none).
        order = np.lexsort((w, targets, sources))
        sources, targets, w = sources[order], targets[order], w[order]
        first = np.ones(len(sources), dtype=bool)
        first[1:] = (sources[1:] != sources[:-1]) | (targets[1:] != targets[:-1])
        sources, targets, w = sources[first], targets[first], w[first]
        self.n = n
        self.directed = directed
        self.weighted = weights is not None
        self.name = name
        self.out = sp.csr_matrix((w, (sources, targets)), shape=(n, n))
        self.out.sort_indices()
        self.inc = self.out.T.tocsr()
        self.inc.sort_indices()

    @property
    def edges(self) -> int:
        """Edges stored (an undirected edge counts twice, once each way)."""
        return int(self.out.nnz)

    def out_degree(self) -> np.ndarray:
        return np.diff(self.out.indptr)

    def in_degree(self) -> np.ndarray:
        return np.diff(self.inc.indptr)

    def to_networkx(self):
        """The same graph as a networkx DiGraph or Graph (weights as ``weight``)."""
        g = nx.DiGraph() if self.directed else nx.Graph()
        g.add_nodes_from(range(self.n))
        coo = self.out.tocoo()
        if self.weighted:
            g.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
        else:
            g.add_edges_from(zip(coo.row.tolist(), coo.col.tolist()))
        return g

    def renumbered(self, new_id: np.ndarray) -> "Graph":
        """The same graph with vertex v called ``new_id[v]`` (a permutation)."""
        coo = self.out.tocoo()
        g = Graph.__new__(Graph)
        g.n, g.directed, g.weighted, g.name = self.n, self.directed, self.weighted, self.name
        g.out = sp.csr_matrix((coo.data, (new_id[coo.row], new_id[coo.col])), shape=(self.n, self.n))
        g.out.sort_indices()
        g.inc = g.out.T.tocsr()
        g.inc.sort_indices()
        return g

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"<Graph {self.name}: {self.n} vertices, {self.edges} edges, {kind}>"


MAX_EDGES = 1 << 24
"""The most edges a generated graph may have (16 Mi: a scale-20 Graph500 graph; its CSR and the
references a workload makes of it stay within a few GB)."""


def rmat(scale: int, edge_factor: int = 16, *, a: float = RMAT_GRAPH500[0], b: float = RMAT_GRAPH500[1],
         c: float = RMAT_GRAPH500[2], seed: int = 0, directed: bool = True, weighted: bool = False,
         max_weight: int = 255) -> Graph:
    """An R-MAT graph of 2**scale vertices and edge_factor * 2**scale generated edges (fewer
    after self loops and repeats go), Graph500's generator: each edge picks one quadrant of
    the adjacency matrix per bit with probabilities a, b, c, d. Vertex ids are then permuted
    at random, as Graph500 does, so the ids carry no locality of their own."""
    if not 1 <= scale <= 26:
        raise ValueError(f"rmat scale must be 1 .. 26, got {scale}")
    if edge_factor < 1:
        raise ValueError(f"rmat edge_factor must be at least 1, got {edge_factor}")
    if edge_factor << scale > MAX_EDGES:
        # the graph and the references it makes are built when the system is: bound check's memory
        raise ValueError(f"rmat scale {scale} with edge_factor {edge_factor} makes {edge_factor << scale:,} edges, "
                         f"more than {MAX_EDGES:,}")
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise ValueError(f"rmat probabilities a={a}, b={b}, c={c} leave d={d:.3g} < 0")
    rng = np.random.default_rng(seed)
    m = edge_factor << scale
    src = np.zeros(m, dtype=np.int64)
    dst = np.zeros(m, dtype=np.int64)
    for bit in range(scale):
        r = rng.random(m)
        right = (r >= a) & (r < a + b) | (r >= a + b + c)  # quadrants b and d: target bit set
        down = r >= a + b  # quadrants c and d: source bit set
        src |= down.astype(np.int64) << bit
        dst |= right.astype(np.int64) << bit
    perm = rng.permutation(1 << scale)
    weights = rng.integers(1, max_weight + 1, m) if weighted else None
    return Graph(1 << scale, perm[src], perm[dst], directed=directed, weights=weights, name=f"rmat{scale}")


def from_networkx(g, *, weight: str | None = None, name: str = "networkx") -> Graph:
    """A networkx graph with nodes relabelled 0 .. n-1 in node order; ``weight`` names the
    edge attribute holding integer weights."""
    nodes = list(g.nodes)
    index = {v: i for i, v in enumerate(nodes)}
    edges = list(g.edges(data=True))
    src = np.array([index[u] for u, _, _ in edges], dtype=np.int64)
    dst = np.array([index[v] for _, v, _ in edges], dtype=np.int64)
    weights = None
    if weight is not None:
        weights = np.array([int(d.get(weight, 1)) for _, _, d in edges], dtype=np.int64)
    return Graph(len(nodes), src, dst, directed=g.is_directed(), weights=weights, name=name)


GENERATORS = {
    "karate": lambda seed, **k: nx.karate_club_graph(),
    "les_miserables": lambda seed, **k: nx.les_miserables_graph(),
    "florentine": lambda seed, **k: nx.florentine_families_graph(),
    "grid": lambda seed, n=16, **k: nx.grid_2d_graph(n, n),
    "barabasi_albert": lambda seed, n=1000, m=4, **k: nx.barabasi_albert_graph(n, m, seed=seed),
    "watts_strogatz": lambda seed, n=1000, k=8, p=0.1, **kw: nx.watts_strogatz_graph(n, k, p, seed=seed),
    "erdos_renyi": lambda seed, n=1000, p=0.01, **k: nx.gnp_random_graph(n, p, seed=seed, directed=True),
    "scale_free": lambda seed, n=1000, **k: nx.DiGraph(nx.scale_free_graph(n, seed=seed)),
}
"""networkx generators by name (with their size parameters), for ``graph = "NAME"``."""


def generated(name: str, *, seed: int = 0, **params) -> Graph:
    """A networkx generator's graph by name (see :data:`GENERATORS`)."""
    make = GENERATORS.get(name)
    if make is None:
        close = difflib.get_close_matches(name, list(GENERATORS) + ["rmat"], n=1)
        hint = f"did you mean '{close[0]}'?" if close else "known: rmat, " + ", ".join(GENERATORS)
        raise ValueError(f"unknown graph '{name}' ({hint})")
    return from_networkx(make(seed, **params), name=name)


def _read_text(path: Path) -> str:
    """A graph file's text, or a :class:`GraphFileError` saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except OSError as err:
        raise GraphFileError(path, None, f"cannot read: {err.strerror}") from None
    except UnicodeDecodeError:
        raise GraphFileError(path, None, "is not a text file") from None


def read_edge_list(path, *, directed: bool = True, weighted: bool = False) -> Graph:
    """A SNAP edge list: one ``source target [weight]`` per line, ``#`` comments, ids any
    non-negative integers (renumbered 0 .. n-1 in order of first appearance is *not* done:
    ids are kept, n is the largest id plus one, so results name the file's own vertices)."""
    path = Path(path)
    text = _read_text(path)
    src, dst, wts = [], [], []
    want = 3 if weighted else 2
    for number, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0].split("%", 1)[0].strip()
        if not body:
            continue
        fields = body.split()
        if len(fields) != want and not (not weighted and len(fields) == 3):
            raise GraphFileError(path, number, f"expected 'source target{' weight' if weighted else ''}', "
                                 f"got {len(fields)} fields: {line.strip()!r}")
        try:
            values = [int(f) for f in fields[:want]]
        except ValueError:
            raise GraphFileError(path, number, f"vertex ids and weights must be integers: {line.strip()!r}") from None
        if values[0] < 0 or values[1] < 0:
            raise GraphFileError(path, number, f"vertex ids must not be negative: {line.strip()!r}")
        if weighted and values[2] < 1:
            raise GraphFileError(path, number, f"weights must be positive integers: {line.strip()!r}")
        src.append(values[0])
        dst.append(values[1])
        if weighted:
            wts.append(values[2])
    if not src:
        raise GraphFileError(path, None, "holds no edges")
    n = max(max(src), max(dst)) + 1
    return Graph(n, np.array(src), np.array(dst), directed=directed, weights=np.array(wts) if weighted else None,
                 name=path.stem)


def read_matrix_market(path, *, directed: bool | None = None, weighted: bool = False) -> Graph:
    """A Matrix Market file (coordinate format) as a graph: entry (i, j) is an edge i -> j, its
    value the weight when ``weighted``. A symmetric matrix is an undirected graph unless
    ``directed`` says otherwise."""
    path = Path(path)
    text = _read_text(path)
    _check_matrix_market(path, text)
    matrix = scipy.io.mmread(io.StringIO(text))
    coo = sp.coo_matrix(matrix)
    if coo.shape[0] != coo.shape[1]:
        raise GraphFileError(path, None, f"the matrix is {coo.shape[0]} x {coo.shape[1]}; a graph needs a square one")
    symmetric = "symmetric" in text.split("\n", 1)[0].lower()
    if directed is None:
        directed = not symmetric
    weights = None
    if weighted:
        values = np.asarray(coo.data)
        if not np.all(values == np.round(values)) or (len(values) and values.min() < 1):
            raise GraphFileError(path, None, "weights must be positive integers for SSSP")
        weights = values.astype(np.int64)
    return Graph(coo.shape[0], coo.row, coo.col, directed=directed, weights=weights, name=path.stem)


def _check_matrix_market(path: Path, text: str) -> None:
    """Find the first malformed line of a coordinate Matrix Market file, so the error can name
    it (scipy's reader does not say where it failed)."""
    lines = text.splitlines()
    if not lines or not lines[0].lower().startswith("%%matrixmarket matrix coordinate"):
        raise GraphFileError(path, 1, "expected a '%%MatrixMarket matrix coordinate ...' header")
    field = lines[0].split()[3].lower() if len(lines[0].split()) > 3 else "real"
    entry_fields = 2 if field == "pattern" else 3
    size_seen = None
    entries = 0
    for number, line in enumerate(lines[1:], 2):
        body = line.strip()
        if not body or body.startswith("%"):
            continue
        fields = body.split()
        if size_seen is None:
            if len(fields) != 3 or not all(f.isdigit() for f in fields):
                raise GraphFileError(path, number, f"expected 'rows columns entries', got {body!r}")
            size_seen = [int(f) for f in fields]
            continue
        if len(fields) != entry_fields:
            raise GraphFileError(path, number, f"expected {entry_fields} fields for a {field} entry, got {body!r}")
        try:
            i, j = int(fields[0]), int(fields[1])
            if entry_fields == 3:
                float(fields[2])
        except ValueError:
            raise GraphFileError(path, number, f"not a matrix entry: {body!r}") from None
        if not (1 <= i <= size_seen[0] and 1 <= j <= size_seen[1]):
            raise GraphFileError(path, number, f"entry ({i}, {j}) lies outside the {size_seen[0]} x "
                                 f"{size_seen[1]} matrix")
        entries += 1
    if size_seen is None:
        raise GraphFileError(path, len(lines), "no size line")
    if entries != size_seen[2]:
        raise GraphFileError(path, len(lines), f"the size line promises {size_seen[2]} entries, the file has "
                             f"{entries}")


def with_weights(g: Graph, seed: int = 0, max_weight: int = 63) -> Graph:
    """The same edges with integer weights 1 .. max_weight drawn from a hash of each edge's
    ends and the seed (both directions of an undirected edge alike)."""
    coo = g.out.tocoo()
    row, col = coo.row.astype(np.int64), coo.col.astype(np.int64)
    lo, hi = np.minimum(row, col), np.maximum(row, col)
    mixed = (lo * 2654435761 + hi * 40503 + seed * 97) % 1_000_003
    weight = 1 + mixed % max_weight
    if not g.directed:
        one_way = row < col
        return Graph(g.n, row[one_way], col[one_way], directed=False, weights=weight[one_way], name=g.name)
    return Graph(g.n, row, col, directed=True, weights=weight, name=g.name)


def load_graph(spec: str, *, scale: int = 10, edge_factor: int = 16, seed: int = 0, directed: bool = True,
               weighted: bool = False, base: Path | None = None) -> Graph:
    """A graph by description: ``"rmat"``, a networkx generator's name, or a path to an edge
    list (``.txt``, ``.el``, ``.edges``, ``.tsv``) or a Matrix Market file (``.mtx``),
    relative to ``base``."""
    if spec == "rmat":
        return rmat(scale, edge_factor, seed=seed, directed=directed, weighted=weighted)
    if spec in GENERATORS:
        g = generated(spec, seed=seed)
        if weighted:
            g = with_weights(g, seed)
        return g
    path = Path(spec)
    if base is not None and not path.is_absolute():
        path = base / path
    if path.suffix == ".mtx":
        return read_matrix_market(path, weighted=weighted)
    if path.suffix in (".txt", ".el", ".edges", ".tsv", ".wel"):
        return read_edge_list(path, directed=directed, weighted=weighted)
    if not path.exists():
        close = difflib.get_close_matches(spec, list(GENERATORS) + ["rmat"], n=1)
        hint = f"did you mean '{close[0]}'?" if close else "a generator (rmat, " + ", ".join(GENERATORS) + \
            ") or a .mtx / .txt file"
        raise ValueError(f"unknown graph '{spec}' ({hint})")
    raise ValueError(f"{spec}: unknown graph file kind '{path.suffix}' (use .mtx or an edge list .txt/.el/.edges)")
