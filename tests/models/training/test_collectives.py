"""Collectives as messages over modelled links: the ring all-gather takes the alpha-beta time
to the cycle, every program delivers what it promises, reductions cover every rank, and the
hierarchical forms send the bytes the two-level algorithm sends."""

import math

import pytest

from archmodel.kernel import ArchError, ClockDomain, Component, Simulator, connect
from archmodel.models.training import (Gpu, Task, collective, install_routes, ring_all_gather, ring_reduce_scatter,
                                       tree_all_gather, tree_all_reduce, tree_reduce_scatter)

PERIOD = 1000


def ring_of_gpus(p, width_bits, latency):
    """``p`` GPUs in a bidirectional ring of equal links (port 0 forward, port 1 back)."""
    top = Component("top", clock=ClockDomain("clk", PERIOD))
    gpus = [Gpu(f"gpu{i}", top, links=2) for i in range(p)]
    for i in range(p):
        nxt = gpus[(i + 1) % p]
        connect(gpus[i].out[0], nxt.inp[1], latency=latency, width_bits=width_bits)
        connect(nxt.out[1], gpus[i].inp[0], latency=latency, width_bits=width_bits)
    install_routes(gpus, {g: i for i, g in enumerate(gpus)})
    return top, gpus


def run_programs(gpus, programs):
    for i, gpu in enumerate(gpus):
        gpu.load([Task("collective", "comm", "comm", program=programs[i])])
    sim = Simulator(gpus[0].parent)
    result = sim.run()
    assert result.reason == "quiescent"
    assert all(g.finished() for g in gpus)
    return max(g.step_ps() for g in gpus)


def alpha_beta_cycles(p, shard_bytes, width_bits, alpha, chunks):
    """The ring all-gather on p equal links, each chunk of t cycles forwarded as it lands."""
    t = math.ceil(8 * shard_bytes / chunks / width_bits)
    return (p - 1) * chunks * t + alpha + max(0, (p - 2) * (alpha - (chunks - 1) * t))


@pytest.mark.parametrize("p, shard, width, alpha", [(4, 1000, 8, 10), (8, 4096, 64, 100), (8, 1001, 64, 7),
                                                    (2, 65536, 256, 2000), (16, 512, 32, 1)])
def test_ring_all_gather_takes_the_alpha_beta_time_to_the_cycle(p, shard, width, alpha):
    _, gpus = ring_of_gpus(p, width, alpha)
    elapsed = run_programs(gpus, ring_all_gather(list(range(p)), shard, "ag"))
    beats = math.ceil(8 * shard / width)
    # (p - 1) alpha + (p - 1)/p N / B with N = p shards: each of the p-1 steps is one alpha and one shard.
    assert elapsed == ((p - 1) * alpha + (p - 1) * beats) * PERIOD


@pytest.mark.parametrize("alpha, chunks", [(10, 4), (1000, 4), (50, 8), (3, 2)])
def test_chunks_pipeline_through_the_ring(alpha, chunks):
    p, shard, width = 8, 8000, 64
    _, gpus = ring_of_gpus(p, width, alpha)
    elapsed = run_programs(gpus, ring_all_gather(list(range(p)), shard, "ag", chunks))
    assert elapsed == alpha_beta_cycles(p, shard, width, alpha, chunks) * PERIOD
    # Chunking never loses against one message per piece, and wins when latency is small.
    assert elapsed <= alpha_beta_cycles(p, shard, width, alpha, 1) * PERIOD


def test_ring_reduce_scatter_has_the_all_gathers_time():
    _, gpus = ring_of_gpus(6, 32, 25)
    elapsed = run_programs(gpus, ring_reduce_scatter(list(range(6)), 3000, "rs"))
    assert elapsed == alpha_beta_cycles(6, 3000, 32, 25, 1) * PERIOD


def contributions(programs):
    """What each rank holds for each tag it receives, if every send carries the sender's own
    contribution plus everything it waited for (a reduction's partial sums)."""
    held = {}
    pending = [(rank, send) for rank, prog in programs.items() for send in prog.sends]
    while pending:
        later = []
        for rank, send in pending:
            if all((rank, tag) in held for tag in send.needs):
                held[(send.dst, send.tag)] = {rank}.union(*(held[(rank, tag)] for tag in send.needs))
            else:
                later.append((rank, send))
        assert len(later) < len(pending), "a send waits for a tag nobody sends"
        pending = later
    return held


@pytest.mark.parametrize("make", [ring_reduce_scatter, tree_reduce_scatter], ids=["ring", "tree"])
@pytest.mark.parametrize("p", [2, 3, 5, 8])
def test_reduce_scatter_gives_every_rank_its_piece_summed_over_all(make, p):
    programs = make(list(range(p)), 100, "rs", 2)
    held = contributions(programs)
    for rank, prog in programs.items():
        assert all((rank, tag) in held for tag in prog.receives)
        final = [tag for tag in prog.receives if (tag[1] == rank and len(tag) == 3) or
                 (len(tag) == 4 and tag[1] == "down" and tag[2] == rank)]
        for tag in final:
            assert held[(rank, tag)] | {rank} == set(range(p)), (rank, tag)


@pytest.mark.parametrize("p", [2, 3, 6, 7])
def test_tree_all_reduce_broadcasts_the_sum_of_every_rank(p):
    programs = tree_all_reduce(list(range(p)), 1000, "ar", 3)
    held = contributions(programs)
    for rank, prog in programs.items():
        downs = [t for t in prog.receives if t[1] == "down"]
        assert len(downs) == (3 if rank else 0)
        for tag in downs:
            assert held[(rank, tag)] | {rank} == set(range(p))


@pytest.mark.parametrize("make, factor", [(ring_all_gather, 1), (tree_all_gather, 1), (ring_reduce_scatter, 1)])
def test_all_gathers_and_reduce_scatters_send_p_minus_1_shards_per_rank_in_total(make, factor):
    p, shard = 7, 1000
    programs = make(list(range(p)), shard, "k", 3)
    assert sum(prog.bytes_sent for prog in programs.values()) == factor * p * (p - 1) * shard
    _, gpus = ring_of_gpus(p, 64, 20)
    run_programs(gpus, programs)  # every receive arrives: nothing waits for ever
    assert sum(g.sent_bytes.value for g in gpus) >= p * (p - 1) * shard  # relayed bytes count again


def test_tree_all_reduce_and_reduce_scatter_bytes():
    p, n = 6, 1200
    assert sum(x.bytes_sent for x in tree_all_reduce(list(range(p)), n, "k", 4).values()) == 2 * (p - 1) * n
    # Up: every non-root sends all p pieces; down: each edge carries the child's subtree.
    shard = n // p
    subtree_sizes = {1: 3, 2: 2, 3: 1, 4: 1, 5: 1}
    down = sum(subtree_sizes.values()) * shard
    assert sum(x.bytes_sent for x in tree_reduce_scatter(list(range(p)), shard, "k").values()) == (p - 1) * n + down


def test_hierarchical_all_gather_crosses_nodes_once_per_shard():
    nodes = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    phases = collective("all_gather", nodes, 12 * 1000, "ag")
    assert [label for label, _ in phases] == ["inter", "intra"]
    inter, intra = (sum(prog.bytes_sent for prog in programs.values()) for _, programs in phases)
    assert inter == 4 * 3 * 2 * 1000   # 4 rails, 3 ranks each sending 2 shards
    assert intra == 3 * 4 * 3 * 3000   # 3 nodes, 4 ranks each sending 3 slices of 3 shards
    ar = collective("all_reduce", nodes, 12 * 1000, "ar")
    assert [label for label, _ in ar] == ["intra", "inter", "inter", "intra"]


def test_flat_and_single_node_forms():
    assert [label for label, _ in collective("all_gather", [[0, 1, 2]], 300, "k")] == ["flat"]
    assert collective("reduce_scatter", [[0]], 300, "k") == []
    flat = collective("all_reduce", [[0, 1], [2, 3]], 400, "k", hierarchical=False, algorithm="tree")
    assert len(flat) == 1


def test_bad_collective_arguments_are_errors():
    with pytest.raises(ArchError, match="unknown collective algorithm 'rign'"):
        collective("all_gather", [[0, 1]], 10, "k", algorithm="rign")
    with pytest.raises(ArchError, match="chunks must be a positive integer, got 0"):
        collective("all_gather", [[0, 1]], 10, "k", chunks=0)
    with pytest.raises(ArchError, match="same number of GPUs"):
        collective("all_gather", [[0, 1], [2]], 10, "k")
