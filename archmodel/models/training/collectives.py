"""Collectives at chunk level: ring and tree all-gather, reduce-scatter and all-reduce, and
the hierarchical two-level forms (intra-node, then inter-node) that NCCL and DeepSpeed use.

Each function returns one rank program per endpoint (:class:`~.transfer.RankProgram`); a
whole collective is a list of *phases* (:func:`collective`), each a mapping from endpoint to
its program, run one after the other on every rank. Buffers are in bytes; a rank's shard of
an ``N``-byte buffer on ``p`` ranks is ``ceil(N / p)`` bytes (ZeRO pads the flat buffer to a
multiple of the ranks the same way). ``chunks`` splits each piece into that many messages,
so a rank forwards the first chunk while the rest still arrive: with one chunk per piece a
ring all-gather on ``p`` equal links takes ``(p - 1) * (alpha + ceil(shard / B))``, the
alpha-beta model (Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication
Operations in MPICH", IJHPCA 2005).

Leaves out: NCCL's double binary trees, LL/LL128 protocols, and the reduction arithmetic's
own time (GPUs add partial sums far faster than any of these links deliver them).
"""

from __future__ import annotations

from archmodel.kernel import ArchError, Registry

from .transfer import RankProgram, Send

KINDS: Registry[str] = Registry("collective", {
    "all_gather": "every rank ends with the whole buffer, each having contributed its shard",
    "reduce_scatter": "every rank ends with its shard of the sum of all ranks' buffers",
    "all_reduce": "every rank ends with the sum of all ranks' buffers (a reduce-scatter, then an all-gather)",
})
"""The collectives :func:`collective` and :func:`grouped` run."""

ALGORITHMS: Registry[str] = Registry("collective algorithm", {
    "ring": "pieces passed round a ring, one step per rank",
    "tree": "up a binary tree to the root and down again",
})
"""How a collective moves its pieces."""


def split(nbytes: int, parts: int) -> list[int]:
    """``nbytes`` in ``parts`` near-equal sizes, the larger first."""
    base, extra = divmod(nbytes, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def shard_bytes(nbytes: int, ranks: int) -> int:
    """The shard of one rank: ``ceil(nbytes / ranks)`` (the buffer padded to a multiple)."""
    return -(-nbytes // ranks)


def _ring(group: list, shard: int, key, chunks: int, lag: int) -> dict:
    """Rank r sends piece (r - s - lag) to r+1 at step s, the first step at once and the
    others once that piece has come from r-1; r receives every piece but (r - lag)."""
    p = len(group)
    sizes = split(shard, chunks)
    programs = {}
    for r, me in enumerate(group):
        nxt = group[(r + 1) % p]
        sends = []
        for step in range(p - 1):
            piece = (r - step - lag) % p
            for c, size in enumerate(sizes):
                needs = () if step == 0 else ((key, piece, c),)
                sends.append(Send(nxt, size, (key, piece, c), needs))
        receives = tuple((key, q, c) for q in range(p) if q != (r - lag) % p for c in range(len(sizes)))
        programs[me] = RankProgram(tuple(sends), receives)
    return programs


def ring_all_gather(group: list, shard: int, key, chunks: int = 1) -> dict:
    """Ring all-gather: rank r sends its piece to r+1, then forwards at step s the piece
    (r - s) it received from r-1; each rank ends with every rank's ``shard`` bytes."""
    return _ring(group, shard, key, chunks, 0)


def ring_reduce_scatter(group: list, shard: int, key, chunks: int = 1) -> dict:
    """Ring reduce-scatter: at step s rank r sends its partial sum of piece (r - s - 1) to
    r+1, having added the partial it received for that piece at step s-1; after p-1 steps
    rank r holds piece r summed over every rank."""
    return _ring(group, shard, key, chunks, 1)


def _tree(p: int):
    parent = [None] + [(j - 1) // 2 for j in range(1, p)]
    children = [[c for c in (2 * j + 1, 2 * j + 2) if c < p] for j in range(p)]
    subtree = [set() for _ in range(p)]
    for j in reversed(range(p)):
        subtree[j] = {j}.union(*(subtree[c] for c in children[j]))
    return parent, children, subtree


def tree_all_gather(group: list, shard: int, key, chunks: int = 1) -> dict:
    """Binary-tree all-gather (rank 0 the root): pieces flow up to the root as they arrive,
    then down, each child receiving the pieces outside its own subtree."""
    p = len(group)
    parent, children, subtree = _tree(p)
    sizes = split(shard, chunks)
    programs = {}
    for j, me in enumerate(group):
        sends = []
        if parent[j] is not None:
            for q in sorted(subtree[j]):
                for c, size in enumerate(sizes):
                    needs = () if q == j else ((key, "up", q, c),)
                    sends.append(Send(group[parent[j]], size, (key, "up", q, c), needs))
        for child in children[j]:
            for q in range(p):
                if q in subtree[child]:
                    continue
                for c, size in enumerate(sizes):
                    if q == j:
                        needs = ()
                    elif q in subtree[j]:
                        needs = ((key, "up", q, c),)
                    else:
                        needs = ((key, "down", q, c),)
                    sends.append(Send(group[child], size, (key, "down", q, c), needs))
        receives = [(key, "up", q, c) for q in sorted(subtree[j] - {j}) for c in range(len(sizes))]
        receives += [(key, "down", q, c) for q in range(p) if q not in subtree[j] for c in range(len(sizes))]
        programs[me] = RankProgram(tuple(sends), tuple(receives))
    return programs


def _tree_reduce_up(j, group, parent, children, pieces, sizes, key) -> tuple[list, list]:
    """Sends and receives of rank j reducing every piece up the tree: its partial of a piece
    leaves once every child's partial of it has arrived."""
    sends, receives = [], []
    for q in pieces:
        for c, size in enumerate(sizes):
            inputs = tuple((key, "up", q, c, group[child]) for child in children[j])
            receives.extend(inputs)
            if parent[j] is not None:
                sends.append(Send(group[parent[j]], size, (key, "up", q, c, group[j]), inputs))
    return sends, receives


def tree_reduce_scatter(group: list, shard: int, key, chunks: int = 1) -> dict:
    """Binary-tree reduce-scatter: every piece is summed up to the root, which sends each
    child the sums of the pieces in the child's subtree, and so on down."""
    p = len(group)
    parent, children, subtree = _tree(p)
    sizes = split(shard, chunks)
    programs = {}
    for j, me in enumerate(group):
        sends, receives = _tree_reduce_up(j, group, parent, children, range(p), sizes, key)
        for child in children[j]:
            for q in sorted(subtree[child]):
                for c, size in enumerate(sizes):
                    if parent[j] is None:
                        needs = tuple((key, "up", q, c, group[ch]) for ch in children[j])
                    else:
                        needs = ((key, "down", q, c),)
                    sends.append(Send(group[child], size, (key, "down", q, c), needs))
        if parent[j] is not None:
            receives += [(key, "down", q, c) for q in sorted(subtree[j]) for c in range(len(sizes))]
        programs[me] = RankProgram(tuple(sends), tuple(receives))
    return programs


def tree_all_reduce(group: list, nbytes: int, key, chunks: int = 1) -> dict:
    """Binary-tree all-reduce of an ``nbytes`` buffer in ``chunks`` pieces: reduce up, then
    broadcast down; a chunk's broadcast starts as soon as its sum reaches the root."""
    p = len(group)
    parent, children, _ = _tree(p)
    sizes = split(nbytes, chunks)
    programs = {}
    for j, me in enumerate(group):
        sends, receives = _tree_reduce_up(j, group, parent, children, [0], sizes, key)
        for child in children[j]:
            for c, size in enumerate(sizes):
                if parent[j] is None:
                    needs = tuple((key, "up", 0, c, group[ch]) for ch in children[j])
                else:
                    needs = ((key, "down", 0, c),)
                sends.append(Send(group[child], size, (key, "down", 0, c), needs))
        if parent[j] is not None:
            receives += [(key, "down", 0, c) for c in range(len(sizes))]
        programs[me] = RankProgram(tuple(sends), tuple(receives))
    return programs


def _flat(kind: str, algorithm: str, group: list, nbytes: int, key, chunks: int) -> list[dict]:
    """The phases of one collective of an ``nbytes`` buffer on one group."""
    shard = shard_bytes(nbytes, len(group))
    if len(group) == 1:
        return []
    if kind == "all_gather":
        make = ring_all_gather if algorithm == "ring" else tree_all_gather
        return [make(group, shard, (key, 0), chunks)]
    if kind == "reduce_scatter":
        make = ring_reduce_scatter if algorithm == "ring" else tree_reduce_scatter
        return [make(group, shard, (key, 0), chunks)]
    if algorithm == "tree":
        return [tree_all_reduce(group, shard * len(group), (key, 0), chunks)]
    return [ring_reduce_scatter(group, shard, (key, 0), chunks), ring_all_gather(group, shard, (key, 1), chunks)]


def _merge(parts: list[list[dict]]) -> list[dict]:
    """Phases of collectives on disjoint groups that run side by side, phase by phase."""
    depth = max((len(p) for p in parts), default=0)
    merged = [{} for _ in range(depth)]
    for phases in parts:
        for i, phase in enumerate(phases):
            merged[i].update(phase)
    return merged


def grouped(kind: str, groups: list[list], shard: int, key, *, algorithm: str = "ring", chunks: int = 1) -> list[dict]:
    """One collective on each of several disjoint groups side by side (the rails of a
    cluster, or its nodes), each rank contributing or ending with ``shard`` bytes; the
    phases of all groups merged."""
    return _merge([_flat(kind, algorithm, grp, shard * len(grp), (key, k), chunks) for k, grp in enumerate(groups)])


def _check(kind: str, algorithm: str, chunks) -> None:
    KINDS.lookup(kind)
    ALGORITHMS.lookup(algorithm)
    if not isinstance(chunks, int) or isinstance(chunks, bool) or chunks < 1:
        raise ArchError(f"chunks must be a positive integer, got {chunks!r}")


def collective(kind: str, nodes: list[list], nbytes: int, key, *, algorithm: str = "ring",
               hierarchical: bool = True, chunks: int = 1) -> list[tuple[str, dict]]:
    """The phases of a collective of an ``nbytes`` buffer over the GPUs ``nodes`` (a list of
    nodes, each a list of endpoints; every node the same size), each a ``(label, programs)``
    pair, ``label`` one of ``inter`` (across nodes), ``intra`` (inside nodes) or ``flat``.

    Flat: one ring or tree over every GPU, node after node. Hierarchical (``g`` GPUs in each
    of ``n`` nodes, each GPU's shard ``s = ceil(nbytes / (n g))``): an all-gather first
    gathers across nodes among the GPUs of the same local index (``g`` rails, pieces of
    ``s``), then inside each node (pieces of ``n s``); a reduce-scatter runs the other way
    round; an all-reduce reduce-scatters in the node, all-reduces across nodes and
    all-gathers in the node. Across nodes each node then sends ``(n - 1) / n`` of the buffer,
    what a flat ring sends over each link it crosses.
    """
    _check(kind, algorithm, chunks)
    sizes = {len(node) for node in nodes}
    if len(sizes) != 1 or 0 in sizes:
        raise ArchError("a hierarchical collective needs nodes with the same number of GPUs, "
                        f"got {[len(node) for node in nodes]}")
    n, g = len(nodes), sizes.pop()
    if not hierarchical or n == 1 or g == 1:
        flat = [e for node in nodes for e in node]
        return [("flat", ph) for ph in _flat(kind, algorithm, flat, nbytes, key, chunks)]
    s = shard_bytes(nbytes, n * g)
    rails = [[node[i] for node in nodes] for i in range(g)]

    def level(kind_, groups, piece, label):
        return [(label, ph) for ph in grouped(kind_, groups, piece, (key, label), algorithm=algorithm, chunks=chunks)]

    if kind == "all_gather":
        return level("all_gather", rails, s, "inter") + level("all_gather", nodes, n * s, "intra")
    if kind == "reduce_scatter":
        return level("reduce_scatter", nodes, n * s, "intra") + level("reduce_scatter", rails, s, "inter")
    return (level("reduce_scatter", nodes, n * s, "intra") + level("all_reduce", rails, s, "inter")
            + level("all_gather", nodes, n * s, "intra"))
