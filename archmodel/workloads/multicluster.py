"""Kernels across Snitch clusters: one problem, its operands in the memory every cluster reaches.

Each ``setup_*_clusters`` function takes the list of clusters a ``run NAME(args) on
cluster[*]`` statement binds (and optionally the outside memory), places the operands once in
the memory all of them reach through their DMA ports (directly, or through a network whose
address map leads there), loads every cluster's programs, and registers checks against numpy
(a mismatch stops the run). Clusters talk to each other only through memory: a cluster's DMA
reads or writes another's TCDM at its global address (``tcdm_global_base``, served by the
TCDM slave port), and waits for a word there to change. That needs no hardware beyond what
Manticore has, so the cores never block on one another: a consumer polls a word in its own
TCDM that its producer writes.

Kernels (all FP64):

* ``gemm_clusters(m, n, k, tile_m, tile_n, tile_k, row_block)``: C = A B tiled. C's tile_m x tile_n
  tiles are dealt round robin to the clusters; for each, the DMA core fetches A's tile_m x
  tile_k and B's tile_k x tile_n tiles by 2D transfers, double-buffered (the next pair comes
  in while the cores work on this one), and writes the C tile back after its last k step
  (C tiles double-buffered too, when a cluster has more than one). The cores use the single-cluster GEMM's inner code (an SSR
  for A's row, one for B's 8-column block, FREP over 8 fmadds); k steps after the first add
  to the tile. Tiles that do not fit the TCDM are an error naming the tile and the TCDM.
  Clusters whose DMA ports lead to different home memories (on a Manticore package, each
  die's HBM: :func:`home_groups`) each get a band of C's tile rows: their home holds A's rows
  of the band, a copy of B and C's rows of the band, so no cluster reads another die's HBM
  (see :func:`setup_gemm_clusters` for why). With ``row_block`` the rows of A, B and C in
  outside memory lie an odd number of ``row_block`` bytes apart (:func:`padded_row`) and A's
  bands of tile_m rows one tile row further apart each, so the tiles that the clusters fetch
  together spread over every channel of a memory interleaved in blocks of that size.
* ``axpy_clusters(n, alpha, tile)``: y = alpha x + y, x and y split into one contiguous
  slice per cluster, each streamed as the single-cluster ``axpy``.
* ``dot_clusters(n, tile)`` and ``reduction_clusters(n, tile)``: each cluster sums its
  slice (as ``dot``/``reduction``), then the partial sums meet over a binary tree of TCDMs:
  at level l cluster j + 2^l (j a multiple of 2^(l+1)) DMAs its subtree's sum into a slot
  of cluster j's TCDM, whose DMA core waits for the slot to change from its empty pattern
  (all ones, a NaN no sum produces), adds, and goes on up; cluster 0 holds the total.
* ``jacobi_clusters(rows, cols, sweeps)``: the 5-point stencil over a grid split into one
  band of interior rows per cluster, each band resident in its TCDM with a halo row above
  and below (two copies, swept from one to the other). After each sweep a cluster tells its
  neighbours it is done (its DMA writes the sweep's number into a flag word of theirs) and
  fetches its new halo rows from their TCDMs (a DMA from the neighbour's global TCDM
  address) once their flags say they are done too; the bands go back to the grid at the end.
* :func:`setup_gemm_shared`: C = A B with B fetched whole into every cluster and C's rows
  shared out (what ``gemm(streamed = true)`` on several clusters runs).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from archmodel.kernel import Component, connect
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster
from archmodel.models.network import Noc

from .snitch import (BARRIER, QUARTER, WAIT_DMA, Layout, assemble_lines, axpy_programs, check_result,
                     dma_schedule, dma_transfer, gemm_row_code, gemm_streams, gemm_streamed_programs, get_array,
                     jacobi_band_code, jacobi_reference, outside_memory, put_array, sum_programs)

MEMORY_BASE = 0x8000_0000
"""Where :func:`build_clusters` places its memory."""
TCDM_GLOBAL = 0x4000_0000
"""Where :func:`build_clusters` places cluster j's TCDM: TCDM_GLOBAL + j * tcdm_bytes."""
EMPTY_SLOT = -1
"""The pattern of a tree slot no partial sum has reached yet (all ones: a NaN)."""


def build_clusters(count: int = 4, *, engine: str = "auto", cores: int = 8, tcdm_bytes: int = 128 * 1024,
                   memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 20, noc_engine: str = "components",
                   slave_ports: bool = True) -> tuple:
    """``count`` clusters (network terminals 0 .. count - 1) and a FixedLatencyMemory
    (terminal ``count``) on a line of routers, whose address map routes the memory's range to
    it and (with ``slave_ports``) each cluster's global TCDM range to that cluster's
    ``tcdm_req``; returns (top, clusters, memory)."""
    top = Component("top")
    clusters = [SnitchCluster(f"cluster{j}", top, cores=cores, tcdm_bytes=tcdm_bytes, engine=engine,
                              tcdm_global_base=TCDM_GLOBAL + j * tcdm_bytes if slave_ports else 0)
                for j in range(count)]
    memory = FixedLatencyMemory("memory", top, base_address=MEMORY_BASE, bytes_per_cycle=memory_bytes_per_cycle,
                                latency_cycles=memory_latency_cycles)
    ranges = [(MEMORY_BASE, MEMORY_BASE + memory.size_bytes, count)]
    if slave_ports:
        ranges += [(c.tcdm_global_base, c.tcdm_global_base + tcdm_bytes, j) for j, c in enumerate(clusters)]
    net = Noc("net", top, topology=f"mesh(1, {count + 1})", flit_bits=512, address_map=ranges, engine=noc_engine)
    for j, cluster in enumerate(clusters):
        connect(cluster.ext_req, net.memory_port("mem_req", j))
        connect(net.memory_port("mem_rsp", j), cluster.ext_rsp)
        if slave_ports:
            connect(net.memory_port("to_memory", j), cluster.tcdm_req)
            connect(cluster.tcdm_rsp, net.memory_port("from_memory", j))
    connect(net.memory_port("to_memory", count), memory.req)
    connect(memory.rsp, net.memory_port("from_memory", count))
    return top, clusters, memory


# -- what every kernel across clusters needs --------------------------------------------------------
def shared_memory(clusters: list, memory=None) -> tuple:
    """The memory the clusters reach (``memory``, or what cluster 0's DMA port leads to) and
    a Layout over the largest part of it that holds no cluster's TCDM: behind a network
    interface, the largest range of its address map once the TCDMs' ranges are taken out
    (operands must land neither in a TCDM nor in a gap between ranges)."""
    memory, _ = outside_memory(clusters[0], memory)
    mapped = getattr(memory, "memory_map", None)  # a network interface: the ranges of its address map
    pieces = ([(r.start, r.end) for r in mapped.ranges] if mapped is not None
              else [(memory.base_address, memory.base_address + memory.size_bytes)])
    for cluster in clusters:
        low, high = cluster.tcdm_global_base, cluster.tcdm_global_base + cluster.tcdm_bytes
        if low:
            pieces = [part for a, b in pieces for part in ((a, min(b, low)), (max(a, high), b)) if part[0] < part[1]]
    if not pieces:
        raise ValueError(f"{memory.path} holds no bytes for operands outside the clusters' TCDMs")
    first, last = max(pieces, key=lambda part: part[1] - part[0])
    return memory, Layout(first, last - first)


def check_reach(clusters: list, memory, address: int, want: np.ndarray, kernel: str = "kernel across clusters") -> None:
    """Every cluster's DMA port must lead to the memory holding ``want`` at ``address``: its
    first and last words are read back through each cluster (reading the whole array through
    every one of 512 clusters took most of a package's set-up)."""
    flat = want.reshape(-1)
    last = address + 8 * (flat.size - 1)
    for cluster in clusters:
        view, _ = outside_memory(cluster, None)
        if get_array(view, address, (1,))[0] != flat[0] or get_array(view, last, (1,))[0] != flat[-1]:
            raise ValueError(f"{cluster.path} does not see the operands placed through {clusters[0].path}: a {kernel} "
                             "needs one memory that every cluster reaches")


def check_peers(clusters: list) -> None:
    """Every cluster's TCDM must have a global range of its own that every other cluster reaches."""
    seen = {}
    for cluster in clusters:
        base = cluster.tcdm_global_base
        if not base:
            raise ValueError(f"{cluster.path} has no tcdm_global_base: this kernel reaches the clusters' TCDMs from "
                             "outside (give each cluster its own global range and map it to its tcdm_req)")
        if base in seen:
            raise ValueError(f"{cluster.path} and {seen[base]} share tcdm_global_base 0x{base:08x}: each TCDM needs "
                             "a global range of its own")
        seen[base] = cluster.path
    probe = np.arange(1.0, 2.0)
    for cluster in clusters:
        view, _ = outside_memory(cluster, None)
        for peer in clusters:
            if peer is cluster:
                continue
            old = peer.backdoor_read(peer.tcdm_global_base, 8)
            peer.backdoor_write(peer.tcdm_global_base, probe.tobytes())
            try:
                reached = view.backdoor_read(peer.tcdm_global_base, 8) == probe.tobytes()
            except ValueError:
                reached = False
            peer.backdoor_write(peer.tcdm_global_base, old)
            if not reached:
                raise ValueError(f"{cluster.path} cannot reach the TCDM of {peer.path} at "
                                 f"0x{peer.tcdm_global_base:08x}: "
                                 "map each cluster's global TCDM range to its tcdm_req")


def global_address(cluster: SnitchCluster, local: int) -> int:
    """Where others reach the TCDM byte at local address ``local`` of ``cluster``."""
    return cluster.tcdm_global_base + local - cluster.tcdm_base


def poll(address: int, at_least: int | None = None) -> list[str]:
    """Wait until the 64-bit word at TCDM ``address`` holds at least ``at_least`` (its low
    half, as a signed integer), or without it until its high half leaves EMPTY_SLOT's."""
    if at_least is None:
        return [f"li t2, {address}", f"li t3, {EMPTY_SLOT}", "5: lw t4, 4(t2)", "beq t4, t3, 5b"]
    return [f"li t2, {address}", f"li t3, {at_least}", "5: lw t4, 0(t2)", "blt t4, t3, 5b"]


def _share(n: int, count: int, what: str) -> int:
    if n % count:
        raise ValueError(f"{what} = {n} must be a multiple of the {count} clusters")
    return n // count


def _same_cores(clusters: list) -> int:
    cores = clusters[0].cores
    odd = [c.path for c in clusters if c.cores != cores or c.tcdm_bytes != clusters[0].tcdm_bytes]
    if odd:
        raise ValueError(f"a kernel across clusters needs alike clusters: {odd[0]} differs from {clusters[0].path} "
                         "in cores or TCDM size")
    return cores


# -- GEMM ---------------------------------------------------------------------------------------------
def home_groups(clusters: list, memory=None) -> list:
    """The clusters grouped by their home memory, the one their DMA port places data in (a
    tree node's ``base_address``/``size_bytes``: on a Manticore package its die's HBM window),
    in order of first appearance: a list of (memory, Layout over its free part, clusters).
    With ``memory`` given, or one home for all, one group of every cluster."""
    if memory is not None:
        return [(*shared_memory(clusters, memory), clusters)]
    groups: dict = {}
    for cluster in clusters:
        view = cluster.outside_memory()
        home = (getattr(view, "base_address", None), getattr(view, "size_bytes", None))
        groups.setdefault(home if None not in home else None, []).append(cluster)
    return [(*shared_memory(members), members) for members in groups.values()]


def padded_row(row_bytes: int, block: int) -> int:
    """The distance in bytes between rows of ``row_bytes`` laid out with ``block`` (0: dense,
    ``row_bytes``): the least odd multiple of ``block`` that holds a row. An odd number of
    blocks shares no factor with a power-of-two channel count, so consecutive rows start on
    consecutive channels of a memory interleaved in blocks of ``block`` bytes, where a row of
    a multiple of channels x block bytes (8 KiB for k = 1024 FP64) would put every row of a
    tile on the same channel. oneMKL's developer guide (Coding Techniques, recommendation 2)
    gives the same advice for caches: no leading dimension a multiple of a large power of 2."""
    if not block:
        return row_bytes
    return (-(-row_bytes // block) | 1) * block


def setup_gemm_clusters(clusters: list, memory=None, *, m: int = 64, n: int = 64, k: int = 256, tile_m: int = 32,
                        tile_n: int = 32, tile_k: int = 64, row_block: int = 0, seed: int = 0) -> Callable:
    """C = A B (m x k times k x n) from outside memory, tiled over every cluster (see the
    module docstring); each cluster checks its tiles of C against numpy.

    Clusters with different homes (:func:`home_groups`) split C's tile rows into one band per
    home, and each home holds the A rows and C rows of its band and its own copy of B, as
    Manticore runs a GEMM across dies: the operands are loaded into every die's HBM before
    the kernel, so each cluster's tiles come from the HBM under its own chiplet. One copy in
    die 0's HBM instead would make the other dies read it through their die-to-die links (64
    GB/s each way against the 384 B per cycle the 128 clusters of a die ask of 32 x 64 tiles)
    and die 0's HBM serve four dies' traffic (409.6 GB/s for all), far from compute bound.

    ``row_block`` (bytes, 0 for dense rows, a multiple of 8) pads the rows of A, B and C in
    outside memory to :func:`padded_row`: on Manticore's HBM2E, interleaved over 16
    pseudo-channels in 256 B blocks, dense rows of 8 KiB (k = 1024) put all 32 rows of every
    A tile of a k step on the same two pseudo-channels, which then serve all of a quadrant's
    clusters at once while the other 14 idle. With it, A's bands of tile_m rows also lie one
    A tile row (8 tile_k bytes) further apart each, so that the clusters, which walk their
    tiles' rows in lockstep when a k step starts, read different channels at each moment."""
    cores = _same_cores(clusters)
    if row_block < 0 or row_block % 8:
        raise ValueError(f"gemm row_block {row_block} must be 0 (dense rows) or a positive multiple of 8 bytes")
    tm, tn, tk = tile_m, tile_n, tile_k
    if tm % cores or tn % 8 or tk < 2 or m % tm or n % tn or k % tk:
        raise ValueError(f"gemm tiles {tm} x {tn} x {tk} must divide m x n x k = {m} x {n} x {k}, with tile_m a "
                         f"multiple of the {cores} cores, tile_n of 8 and tile_k at least 2")
    groups = home_groups(clusters, memory)
    # each home's band of C's tile rows (first, end)
    spans = [(g * (m // tm) // len(groups), (g + 1) * (m // tm) // len(groups)) for g in range(len(groups))]
    # a C tile is written back while the next is computed, into the other buffer: with one
    # tile per cluster the second C buffer would stay unused
    most = max(-(-(end - first) * (n // tn) // len(members)) for (first, end), (_, _, members) in zip(spans, groups))
    c_bufs = min(2, most)
    need = 8 * (2 * tm * (tk + 1) + 2 * tk * (tn + 1) + c_bufs * tm * tn)
    if need > clusters[0].tcdm_bytes:
        c_text = "C tiles too" if c_bufs == 2 else "one C tile per cluster"
        raise ValueError(f"gemm tile {tm} x {tn} x {tk} needs {need} bytes of TCDM (A and B tiles double-buffered, "
                         f"{c_text}, A's and B's rows padded by a word) but {clusters[0].path} has "
                         f"{clusters[0].tcdm_bytes}")
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    want = a @ b
    sa, sb, sc = (padded_row(8 * k, row_block), padded_row(8 * n, row_block), padded_row(8 * n, row_block))
    # A's bands of tile_m rows one tile row (8 tile_k bytes) further apart each: the clusters
    # fetch their k step's rows in lockstep, and row r of every band would otherwise sit in
    # the same channel (32 rows of an odd number of blocks are a multiple of 16 blocks)
    ba = tm * sa + (8 * tk if row_block else 0)
    for (first, last), (home, outside, members) in zip(spans, groups):
        if first == last:
            continue
        rows = slice(first * tm, last * tm)
        band = (last - first) * tm
        ext_a, ext_b, ext_c = (outside.take(ba * (last - first)), outside.take(sb * k), outside.take(sc * band))
        a_rows, b_rows = _padded(a[rows], sa), _padded(b, sb)
        for i in range(last - first):
            put_array(home, ext_a + i * ba, a_rows[i * tm:(i + 1) * tm])
        put_array(home, ext_b, b_rows)
        check_reach(members, home, ext_a, a_rows[:tm])
        check_reach(members, home, ext_b, b_rows)
        tiles = [(i, j) for i in range(last - first) for j in range(n // tn)]  # rows of the band, from its first
        for c, cluster in enumerate(members):
            mine = tiles[c::len(members)]
            if not mine:
                continue
            _gemm_tile_programs(cluster, mine, (ext_a, ext_b, ext_c), (sa, ba, sb, sc, k), (tm, tn, tk, c_bufs))
            cluster.on_finish(lambda cl, mine=mine, home=home, ext_c=ext_c, first=first: [check_result(
                cl, "gemm", get_array(home, ext_c + i * tm * sc, (tm, sc // 8))[:, j * tn:(j + 1) * tn],
                want[(first + i) * tm:(first + i + 1) * tm, j * tn:(j + 1) * tn]) for i, j in mine])
    return lambda: want


def _padded(rows: np.ndarray, stride: int) -> np.ndarray:
    """``rows`` with zeros after each row, up to ``stride`` bytes per row."""
    out = np.zeros((rows.shape[0], stride // 8))
    out[:, :rows.shape[1]] = rows
    return out


def _gemm_tile_programs(cluster: SnitchCluster, tiles: list, operands: tuple, strides: tuple,
                        tile: tuple) -> None:
    ext_a, ext_b, ext_c = operands
    sa, ba, sb, sc, k = strides  # bytes between rows of A, A's bands of tile rows, rows of B and C; A's row length
    tm, tn, tk, c_bufs = tile
    cores = cluster.cores
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    # A's and B's tile rows one word longer than the data: the cores' streams then start in
    # different banks (about half the bank conflicts of a dense layout)
    lda, ldb = tk + 1, tn + 1
    a_buf = [tcdm.take(8 * tm * lda) for _ in range(2)]
    b_buf = [tcdm.take(8 * tk * ldb) for _ in range(2)]
    c_buf = [tcdm.take(8 * tm * tn) for _ in range(c_bufs)]
    steps = [(t, i, j, kk) for t, (i, j) in enumerate(tiles) for kk in range(k // tk)]
    tiles_in, tiles_out = [], []
    for s, (t, i, j, kk) in enumerate(steps):
        tiles_in.append([(ext_a + i * ba + 8 * kk * tk, a_buf[s % 2], 8 * tk, sa, 8 * lda, tm),
                         (ext_b + kk * tk * sb + 8 * j * tn, b_buf[s % 2], 8 * tn, sb, 8 * ldb, tk)])
        last = kk == k // tk - 1
        tiles_out.append([(c_buf[t % c_bufs], ext_c + i * tm * sc + 8 * j * tn, 8 * tn, 8 * tn, sc, tm)] if last else [])
    dma = assemble_lines("gemm_tiles_dma.S", dma_schedule([], tiles_in, tiles_out))
    # core c computes rows c, c + cores, ... of each tile: s6 walks A's rows, s9 C's
    lines = ["csrr s3, mhartid"] + gemm_streams(tk, ldb) + [f"li s4, {tk - 1}"] + BARRIER
    for s, (t, i, j, kk) in enumerate(steps):
        lines += [f"li t0, {8 * lda}", "mul t1, s3, t0", f"li s6, {a_buf[s % 2]}", "add s6, s6, t1",
                  f"li t0, {8 * tn}", "mul t1, s3, t0", f"li s9, {c_buf[t % c_bufs]}", "add s9, s9, t1",
                  f"li s11, {tm // cores}", "4:"]
        lines += gemm_row_code(tk, tn, "s6", "s9", b_buf[s % 2], ldb, accumulate=kk > 0)
        lines += [f"li t0, {8 * cores * lda}", "add s6, s6, t0", f"li t0, {8 * cores * tn}", "add s9, s9, t0",
                  "addi s11, s11, -1", "bnez s11, 4b", "fence"] + BARRIER
    lines += ["csrwi ssr, 0", "ecall"]
    # (the cores' programs differ only in their number of steps: clusters with as many share one)
    cluster.load_programs([assemble_lines("gemm_tiles.S", lines)] * cores + [dma])


def setup_gemm_shared(clusters: list, memory=None, *, m: int = 64, n: int = 32, k: int = 32, seed: int = 0) -> Callable:
    """One C = A B on several clusters that reach one outside memory: A, B and C are placed
    there once, and cluster j computes its share of C's rows, streamed as in
    ``gemm(streamed = true)`` (B fetched whole into each TCDM); each checks its rows."""
    count = len(clusters)
    cores = _same_cores(clusters)
    if n % 8 or k < 2 or m % (count * cores):
        raise ValueError(f"a shared gemm needs n a multiple of 8, k >= 2 and m a multiple of {count * cores} "
                         f"({count} clusters x {cores} cores)")
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    want = a @ b
    memory, outside = shared_memory(clusters, memory)
    operands = (outside.take(8 * m * k), outside.take(8 * k * n), outside.take(8 * m * n))
    put_array(memory, operands[0], a)
    put_array(memory, operands[1], b)
    check_reach(clusters, memory, operands[0], a, "shared gemm")
    rows = m // count
    for j, cluster in enumerate(clusters):
        view, _ = outside_memory(cluster, None)
        tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
        b_addr = tcdm.take(8 * k * n)
        gemm_streamed_programs(cluster, view, tcdm, b_addr, operands, j * rows, rows, k, n, want)
    return lambda: want


# -- AXPY, dot, reduction ---------------------------------------------------------------------------------
def setup_axpy_clusters(clusters: list, memory=None, *, n: int = 8192, alpha: float = 2.0, tile: int = 512,
                        seed: int = 0) -> Callable:
    """y = alpha x + y over every cluster, one slice of x and y each; each checks its slice."""
    _same_cores(clusters)
    share = _share(n, len(clusters), "n")
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    want = alpha * x + y
    memory, outside = shared_memory(clusters, memory)
    ext_x, ext_y = outside.take(8 * n), outside.take(8 * n)
    put_array(memory, ext_x, x)
    put_array(memory, ext_y, y)
    check_reach(clusters, memory, ext_x, x)
    for j, cluster in enumerate(clusters):
        first = j * share
        axpy_programs(cluster, ext_x + 8 * first, ext_y + 8 * first, share, tile, alpha)
        cluster.on_finish(lambda cl, first=first: check_result(
            cl, "axpy", get_array(memory, ext_y + 8 * first, (share,)), want[first:first + share]))
    return lambda: want


def tree_levels(count: int) -> int:
    """Levels of the binary reduction tree over ``count`` clusters."""
    return max(0, (count - 1).bit_length())


def _tree_tail(clusters: list, j: int, slots: list) -> Callable:
    """The DMA core's part of the tree for cluster ``j`` (see the module docstring): add the
    children's sums as they arrive in ``slots`` (a TCDM address per level), then send the
    subtree's sum to the parent's slot."""
    def tail(result: int, tcdm: Layout) -> list[str]:
        lines = [f"li t5, {result}", "fld fa0, 0(t5)"]
        for level in range(tree_levels(len(clusters))):
            step = 1 << level
            if j % (2 * step) == 0 and j + step < len(clusters):
                lines += poll(slots[level]) + ["fld fa1, 0(t2)", "fadd.d fa0, fa0, fa1"]
            elif j % (2 * step) == step:
                parent = clusters[j - step]
                lines += ["fsd fa0, 0(t5)", "fence"]
                return lines + dma_transfer(result, global_address(parent, slots[level]), 8) + WAIT_DMA
        return lines + ["fsd fa0, 0(t5)", "fence"]
    return tail


def _setup_sum_clusters(clusters: list, memory, n: int, tile: int, seed: int, dot: bool) -> Callable:
    cores = _same_cores(clusters)
    check_peers(clusters)
    share = _share(n, len(clusters), "n")
    levels = tree_levels(len(clusters))
    need = 8 * ((4 if dot else 2) * tile + cores + 1 + levels)
    if need > clusters[0].tcdm_bytes:
        raise ValueError(f"a {'dot' if dot else 'reduction'} tile of {tile} needs {need} bytes of TCDM "
                         "(double-buffered, "
                         f"with partial sums and tree slots) but {clusters[0].path} has {clusters[0].tcdm_bytes}")
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(n), rng.standard_normal(n)
    memory, outside = shared_memory(clusters, memory)
    ext_x, ext_y = outside.take(8 * n), outside.take(8 * n)
    put_array(memory, ext_x, x)
    put_array(memory, ext_y, y)
    check_reach(clusters, memory, ext_x, x)
    parts = x * y if dot else x
    name = "dot" if dot else "reduction"
    for j, cluster in enumerate(clusters):
        # the slots end every TCDM, so they sit at the same address in each, past what
        # sum_programs lays out from the start
        slots = [cluster.tcdm_base + cluster.tcdm_bytes - 8 * (levels - level) for level in range(levels)]
        if slots:
            cluster.tcdm_array(slots[0], (levels,), np.int64)[:] = EMPTY_SLOT
        result = sum_programs(cluster, ext_x + 8 * j * share, ext_y + 8 * j * share, share, tile, dot,
                              dma_tail=_tree_tail(clusters, j, slots))
        # the sum of cluster j's subtree: its slice and those of the clusters that send to it
        span = min(len(clusters), j + (j & -j if j else 1 << levels)) - j
        want = float(parts[j * share:(j + span) * share].sum())
        cluster.on_finish(lambda cl, result=result, want=want: check_result(cl, name, cl.tcdm_array(result, (1,)),
                                                                             np.array([want])))
    total = float(parts.sum())
    return lambda: total


def setup_dot_clusters(clusters: list, memory=None, *, n: int = 8192, tile: int = 512, seed: int = 0) -> Callable:
    """x . y over every cluster, the partial sums reduced over a tree of TCDMs into cluster 0's."""
    return _setup_sum_clusters(clusters, memory, n, tile, seed, dot=True)


def setup_reduction_clusters(clusters: list, memory=None, *, n: int = 8192, tile: int = 512,
                             seed: int = 0) -> Callable:
    """sum(x) over every cluster, the partial sums reduced over a tree of TCDMs into cluster 0's."""
    return _setup_sum_clusters(clusters, memory, n, tile, seed, dot=False)


# -- Jacobi with halo exchange -------------------------------------------------------------------------------
def setup_jacobi_clusters(clusters: list, memory=None, *, rows: int = 34, cols: int = 34, sweeps: int = 3,
                          seed: int = 0) -> Callable:
    """``sweeps`` Jacobi sweeps of a rows x cols grid from outside, one band of interior rows
    per cluster, halo rows exchanged between neighbouring TCDMs (see the module docstring);
    each cluster checks its band of the grid written back against numpy."""
    _same_cores(clusters)
    count = len(clusters)
    if (cols - 2) % 4 or rows < 3:
        raise ValueError("jacobi needs cols - 2 a multiple of 4 and rows >= 3")
    band = _share(rows - 2, count, "rows - 2 (the interior rows)")
    if count > 1:
        check_peers(clusters)
    row_bytes = 8 * cols
    need = 2 * (band + 2) * row_bytes + 16 * (sweeps + 2)
    if need > clusters[0].tcdm_bytes:
        raise ValueError(f"a band of {band} rows of {cols} with its halo rows needs {need} bytes of TCDM twice over "
                         f"(and flags), but {clusters[0].path} has {clusters[0].tcdm_bytes}: use more clusters")
    grid = np.random.default_rng(seed).standard_normal((rows, cols))
    want = jacobi_reference(grid, sweeps)
    memory, outside = shared_memory(clusters, memory)
    ext = outside.take(8 * rows * cols)
    put_array(memory, ext, grid)
    check_reach(clusters, memory, ext, grid)
    for j, cluster in enumerate(clusters):
        _jacobi_band_programs(clusters, j, ext, band, cols, sweeps)
        top = 1 + j * band
        cluster.on_finish(lambda cl, top=top: check_result(
            cl, "jacobi", get_array(memory, ext + top * row_bytes, (band, cols)), want[top:top + band]))
    return lambda: want


def _jacobi_band_programs(clusters: list, j: int, ext: int, band: int, cols: int, sweeps: int) -> None:
    cluster = clusters[j]
    cores = cluster.cores
    row_bytes = 8 * cols
    local_rows = band + 2
    tcdm = Layout(cluster.tcdm_base, cluster.tcdm_bytes)
    flag_above, flag_below = tcdm.take(8), tcdm.take(8)  # the sweep the neighbour above / below has finished
    numbers = tcdm.take(8 * sweeps)  # 1 .. sweeps, what this cluster's DMA writes into its neighbours' flags
    bufs = [tcdm.take(local_rows * row_bytes) for _ in range(2)]
    cluster.tcdm_array(flag_above, (2,), np.int64)[:] = 0
    cluster.tcdm_array(numbers, (sweeps,), np.int64)[:] = np.arange(1, sweeps + 1)
    first_row = ext + j * band * row_bytes  # the halo row above the band
    dma = dma_transfer(first_row, bufs[0], local_rows * row_bytes) + dma_transfer(first_row, bufs[1],
                                                                                  local_rows * row_bytes)
    dma += WAIT_DMA + BARRIER
    above = clusters[j - 1] if j > 0 else None
    below = clusters[j + 1] if j + 1 < len(clusters) else None
    for s in range(sweeps):
        dma += BARRIER  # the cores swept bufs[s % 2] into bufs[(s + 1) % 2]
        if s + 1 == sweeps:
            break
        new = bufs[(s + 1) % 2]
        if above is not None:
            dma += dma_transfer(numbers + 8 * s, global_address(above, flag_below), 8)
        if below is not None:
            dma += dma_transfer(numbers + 8 * s, global_address(below, flag_above), 8)
        dma += WAIT_DMA
        if above is not None:  # its last interior row becomes our halo above
            dma += poll(flag_above, s + 1) + dma_transfer(global_address(above, new + band * row_bytes), new,
                                                          row_bytes)
        if below is not None:  # its first interior row becomes our halo below
            dma += poll(flag_below, s + 1) + dma_transfer(global_address(below, new + row_bytes),
                                                          new + (band + 1) * row_bytes, row_bytes)
        dma += WAIT_DMA + BARRIER
    done = bufs[sweeps % 2]
    dma += dma_transfer(done + row_bytes, first_row + row_bytes, band * row_bytes) + WAIT_DMA + ["ecall"]
    programs = []
    for c in range(cores):
        mine = list(range(1 + c, local_rows - 1, cores))
        lines = QUARTER + BARRIER
        for s in range(sweeps):
            if mine:
                lines += jacobi_band_code(bufs[s % 2], bufs[(s + 1) % 2] + row_bytes + 8, mine[0] - 1, len(mine),
                                          cores, row_bytes, cols - 2, row_bytes)
            lines += BARRIER * (2 if s + 1 < sweeps else 1)
        programs.append(assemble_lines(f"jacobi_band{c}.S", lines + ["ecall"]))
    cluster.load_programs(programs + [assemble_lines("jacobi_halo_dma.S", dma)])


ACROSS = {"gemm_clusters": setup_gemm_clusters, "axpy_clusters": setup_axpy_clusters,
          "dot_clusters": setup_dot_clusters, "reduction_clusters": setup_reduction_clusters,
          "jacobi_clusters": setup_jacobi_clusters}
"""The kernels across clusters by the name ``run NAME(args) on cluster[*]`` gives them."""
