"""Manticore (library/manticore.arch, topologies/manticore*.arch), scaled down with parameters:
GEMM, streamed or tiled, is compute bound on a quadrant's clusters, AXPY bound by the HBM at
the roofline the HBM2E configuration gives, a remote die's HBM is reached over the die-to-die
link, the tiled GEMM on a package reads only its own die's HBM, the compiled and Python cluster
models end alike, peak and DMA bandwidth follow from the configuration, and bad configurations
are errors naming the part and the number."""

import json
import warnings

import pytest

from archmodel.cli import main
from archmodel.experiments.hierarchy import (Capacity, Ceiling, HierarchyReport, capacity, hierarchy_report,
                                             run_clusters)
from archmodel.kernel import Simulator
from archmodel.lang.elaborate import load
from archmodel.models.memory.checker import DramTimingChecker
from archmodel.paths import data_path
from archmodel.workloads.multicluster import padded_row

QUADRANT = data_path("topologies") / "manticore_quadrant.arch"
PACKAGE = data_path("topologies") / "manticore.arch"
# one chiplet, one quadrant of `clusters` clusters (l1_radix of them under one L1 node)
SMALL = {"kernel": '"gemm"', "clusters": "4", "l1_radix": "4", "l2_radix": "1"}
HBM2E_PSEUDO_CHANNEL = 3.2e9 * 64 / 8  # bytes/s: 3.2 Gb/s per pin, 64 pins (JESD235C)


def _run(path, engine="compiled", **params):
    run = run_clusters(path, params, engine)  # each cluster's result checked against numpy
    return run.top, run.sim, run.clusters


def test_gemm_on_a_quadrants_clusters_is_compute_bound_above_90_percent_on_every_cluster():
    top, _, clusters = _run(QUADRANT, **SMALL, rows="64", n="64", k="128")
    fpu = [c.fpu_utilisation.value for c in clusters]
    assert len(clusters) == 4 and min(fpu) >= 90.0
    report = hierarchy_report(top)
    assert report.binding is None  # compute binds: every level's links allow more
    quadrant = next(r for r in report.rollups if r.level == "L1Quadrant")
    assert quadrant.clusters == 4 and quadrant.fpu_min == min(fpu) and quadrant.fpu_max == max(fpu)
    assert quadrant.gflops_sum == pytest.approx(sum(c.gflops.value for c in clusters))
    assert report.achieved_flops <= report.peak_flops


def _hbm_bytes(chiplet, way: str = "read") -> int:
    return sum(getattr(ch, f"bytes_{way}").value for ch in chiplet.child("hbm").children if hasattr(ch, "bytes_read"))


# the tiled GEMM on 4 clusters of a quadrant: one 32 x 64 tile of C each, k = 256 in steps of tile_k
TILED = {"kernel": '"gemm_tiled"', "clusters": "4", "l1_radix": "4", "l2_radix": "1", "gemm_m": "64",
         "gemm_n": "128", "gemm_k": "256", "tile_m": "32", "tile_n": "64"}


@pytest.mark.parametrize("tile_k, bound", [("64", (90.0, 100.0)), ("32", (85.0, 90.0))])
def test_the_tiled_gemm_on_a_quadrant_is_compute_bound_above_90_percent_with_64_deep_tiles(tile_k, bound):
    top, _, clusters = _run(QUADRANT, **TILED, tile_k=tile_k)  # every tile checked against numpy
    fpu = [c.fpu_utilisation.value for c in clusters]
    # 32 x 64 x 64 tiles: 512 FMA cycles per 8-column block against its loads, stores and loop
    # (about 25 cycles) and a barrier per k step; 32-deep tiles halve the block: not every
    # cluster reaches 90% (89.8-90.2% with the rows padded, 89.3-89.6% dense)
    assert len(clusters) == 4 and bound[0] <= min(fpu) < bound[1]
    assert [c.flops.value for c in clusters] == [32 * 64 * (2 * 256 - 1)] * 4  # a multiply, then k - 1 FMAs
    assert hierarchy_report(top).binding is None  # compute binds
    # each cluster reads its A band (32 x 256) and B's 256 x 64 columns once, as k steps
    assert _hbm_bytes(top.child("chiplet")) == 4 * 8 * (32 * 256 + 256 * 64)


def test_the_tiled_gemm_on_a_package_reads_only_the_hbm_of_each_clusters_own_die():
    top, _, clusters = _run(PACKAGE, kernel='"gemm_tiled"', chiplets="2", quadrants="1", l1_radix="2", l2_radix="1",
                            l3_radix="1", gemm_m="128", gemm_n="64", gemm_k="128", tile_m="32", tile_n="64",
                            tile_k="64")
    assert len(clusters) == 4 and min(c.fpu_utilisation.value for c in clusters) >= 90.0
    for d in range(2):
        chiplet = top.child(f"chiplet[{d}]")
        stats = {s.name: s.value for s in chiplet.child("node").stats}
        # nothing crosses a die-to-die link: each die's HBM holds its band of A and a copy of B
        assert stats[f"out{1 - d}_bytes_out"] == stats[f"out{1 - d}_bytes_in"] == 0
        assert _hbm_bytes(chiplet) == 2 * 8 * (32 * 128 + 128 * 64)


# 8 clusters under two L1 nodes, one 32 x 64 tile of C each, k = 512: A's rows are 4 KiB, one
# round of the HBM's 16 pseudo-channels x 256 B blocks
CAMPING = {"kernel": '"gemm_tiled"', "clusters": "8", "l1_radix": "4", "l2_radix": "2", "gemm_m": "128",
           "gemm_n": "128", "gemm_k": "512"}


@pytest.mark.parametrize("row_block, arrived, low, high", [
    # dense rows: every row of every A tile of a k step starts on pseudo-channel 0, so the first
    # step's 8 x 16 KiB of A all go through channels 0 and 1 (64 KiB each, with their 16 KiB of
    # B) while the other 14 serve B alone; the last first tile arrives at cycle 3990
    ("0", 3990, 16384, 81920),
    # rows 17 blocks apart (padded_row), A's bands one tile row further apart each: a tile's 32
    # rows start on consecutive channels, and the clusters, walking their rows in lockstep, on
    # different ones: each channel reads 1/16 of the step's 8 x 48 KiB, 24 KiB
    ("256", 1909, 24576, 24576),
])
def test_padded_rows_spread_a_k_steps_tiles_over_every_hbm_pseudo_channel(row_block, arrived, low, high):
    top = load(QUADRANT, params=dict(CAMPING, gemm_row_block=row_block)).top
    sim = Simulator(top)
    clusters = [part for part in top.walk() if hasattr(part, "dma")]
    sim.run(cycles=arrived - 1)
    assert not all(c.dma.completed >= 1 for c in clusters)  # transfer 1: the first step's B tile
    sim.run(cycles=arrived)
    assert len(clusters) == 8 and all(c.dma.completed >= 1 for c in clusters)
    read = [ch.bytes_read.value for ch in top.child("chiplet").child("hbm").children if hasattr(ch, "bytes_read")]
    assert len(read) == 16 and min(read) == low and max(read) == high


def test_padded_row_is_the_least_odd_number_of_blocks_that_holds_a_row():
    assert [padded_row(row, 256) for row in (8192, 4096, 7680, 256, 512, 8)] == [8448, 4352, 7936, 256, 768, 256]
    assert padded_row(8192, 0) == 8192  # dense


def test_a_tiled_gemm_whose_tiles_do_not_fit_the_tcdm_names_the_cluster_and_the_bytes(capsys):
    # the whole 1024 x 1024 x 1024 GEMM on one chiplet: 4 tiles per cluster, so C is
    # double-buffered and 32 x 64 x 64 tiles no longer fit
    args = ["check", str(PACKAGE), "-p", 'kernel="gemm_tiled"', "-p", "chiplets=1", "-p", "quadrants=1"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert ("error: workload 'gemm_clusters': gemm tile 32 x 64 x 64 needs 132608 bytes of TCDM (A and B tiles "
            "double-buffered, C tiles too, A's and B's rows padded by a word) but "
            "Manticore.chiplet[0].quadrant[0].l2[0].l1[0].cluster[0] has 131072") in err


def test_axpy_is_bound_by_the_hbm_and_moves_exactly_its_operands():
    n, clusters_count = 8192, 2
    top, _, clusters = _run(QUADRANT, clusters="2", l1_radix="2", l2_radix="1", hbm_channels="1",
                            kernel='"axpy"', n=str(n), tile="1024")
    report = hierarchy_report(top)
    memory = next(c for c in report.ceilings if c.level.startswith("memory"))
    channel = top.child("chiplet").child("hbm").child("ch0")
    # x and y read, y written: 16 + 8 bytes per element and cluster; 2 flop per element. The
    # last writes may still wait in the write queue when the clusters finish (they are
    # acknowledged on entry, as a posted write is): at most a full queue of bursts, which the
    # roofline fraction does not count as moved; each core also divides once to make alpha
    assert channel.bytes_read.value == 16 * n * clusters_count
    assert report.flops == (2 * n + 8) * clusters_count
    pending = channel.write_queue * channel.burst_bytes
    assert 8 * n * clusters_count - pending <= channel.bytes_written.value <= 8 * n * clusters_count
    assert memory.bytes_per_s == pytest.approx(HBM2E_PSEUDO_CHANNEL)
    assert report.binding == memory
    # the roofline: the pseudo-channel's bus (a 32 B burst every tBL = 2 cycles of 1.6 GHz,
    # 25.6 GB/s) times the kernel's flop per byte moved there
    roofline = HBM2E_PSEUDO_CHANNEL * report.flops / memory.bytes
    # the issue asks for within 10% of it: 90.6%. The pseudo-channel's controller queues 64 read
    # and 64 write bursts (gem5's HBM2 pseudo-channel controller, HBM_2000_4H_1x64); with 32 of
    # each it was 87.2%: the deeper read queue lets FR-FCFS precharge and activate a stream's
    # next banks while the other streams' row hits use the bus, the deeper write queue drains
    # in longer batches (fewer read/write turnarounds). Bursts alternate bank groups (tCCD_S),
    # refresh is per bank in both stack IDs (ranks), idle bank sets first. What is left: the
    # write-to-read turnarounds (3.1% of the run), row changes (2.1%), refresh (0.4%), the
    # start of the run; the figure grows with n (91.8% at n = 32768, 92.1% at 65536)
    assert 0.90 * roofline <= report.achieved_flops <= roofline
    assert channel.refs.value == 0 and channel.refpbs.value > 0 and channel.row_hit_rate.value > 90


def test_axpy_on_the_hbm_schedules_alike_in_the_compiled_core_and_in_python():
    # the 64-entry queues and per-bank refresh of Manticore's pseudo-channel, fed through its
    # ports by two clusters: the compiled core gives the Python controller's commands, and an
    # independent timing checker finds every JEDEC constraint held
    ends = []
    for engine in ("compiled", "python"):
        top = load(QUADRANT, params=dict(clusters="2", l1_radix="2", l2_radix="1", hbm_channels="1",
                                         kernel='"axpy"', n="2048", tile="1024")).top
        channel = top.child("chiplet").child("hbm").child("ch0")
        channel.engine = engine
        commands = []
        channel.add_command_listener(lambda *fields: commands.append(fields))
        checker = DramTimingChecker("checker", top, standard="HBM2E", overrides={"ranks": 2})
        checker.watch(channel)
        sim = Simulator(top)
        sim.run()
        assert channel.engine_in_use == engine and channel.read_queue == channel.write_queue == 64
        assert checker.violation_count.value == 0 and channel.refpbs.value > 0
        ends.append((sim.now, commands, [(s.path, s.summary()) for s in sim.all_stats() if ".hbm." in s.path]))
    assert ends[0] == ends[1] and len(ends[0][1]) > 1000


def test_axpy_stays_in_one_bank_group_at_half_the_bus_with_the_column_lowest():
    # with 32-entry queues (the reference controller's): the old mapping (column lowest,
    # consecutive bursts in one bank group, tCCD_L = 2 tBL) and all-bank refresh, the two causes
    # the defaults remove, each measured; then per-bank refresh in turn, idle bank sets first,
    # and no refresh at all; then the defaults, 64 read and 64 write bursts queued
    n = 8192
    fractions = []
    for mapping, refresh, order, queue in (("RoBaRaCoCh", "all_bank", "round_robin", 32),
                                           ("RoBaRaCoBgCh", "all_bank", "round_robin", 32),
                                           ("RoBaRaCoBgCh", "per_bank", "round_robin", 32),
                                           ("RoBaRaCoBgCh", "per_bank", "idle_first", 32),
                                           ("RoBaRaCoBgCh", "none", "round_robin", 32),
                                           ("RoBaRaCoBgCh", "per_bank", "idle_first", 64)):
        top, _, _ = _run(QUADRANT, clusters="2", l1_radix="2", l2_radix="1", hbm_channels="1", kernel='"axpy"',
                         n=str(n), tile="1024", mapping=f'"{mapping}"', refresh=f'"{refresh}"',
                         refresh_order=f'"{order}"', read_queue=str(queue), write_queue=str(queue))
        report = hierarchy_report(top)
        memory = next(c for c in report.ceilings if c.level.startswith("memory"))
        fractions.append(report.achieved_flops / (HBM2E_PSEUDO_CHANNEL * report.flops / memory.bytes))
    one_group, by_mapping, in_turn, idle_first, no_refresh, deep_queues = fractions
    assert one_group < 0.7 < by_mapping < in_turn < idle_first < no_refresh < 0.9 < deep_queues
    # (deterministic: the figures the README gives)
    assert (in_turn, idle_first, no_refresh, deep_queues) == pytest.approx((0.8441, 0.8717, 0.8858, 0.9060),
                                                                           abs=5e-4)


def test_a_clusters_lookahead_looks_at_its_own_links_only_and_the_node_bounds_the_rest():
    # The tree nodes declare that a response goes only to the requester that asked, so a
    # cluster's question follows none of the other clusters' channels through the tree and
    # the HBM: the node's bound on its answer port covers them (results stay those of the
    # Python model: the compiled/Python tests of this file)
    top, sim, clusters = _run(QUADRANT, **SMALL, rows="8", n="16", k="16")
    graph = sim.connection_graph
    for cluster in clusters:
        assert set(graph.reaching(cluster)) == {cluster.ext_req.channel, cluster.ext_rsp.channel}
        (node, _, outs), = graph.senders(cluster)
        assert [channel for channel, _ in outs] == [cluster.ext_rsp.channel]
    assert len(sim.channels) > 10 * len(clusters)  # (what it need not look at)


def test_a_cluster_reaches_the_other_dies_hbm_over_the_die_to_die_link():
    top, _, clusters = _run(PACKAGE, kernel='"gemm"', chiplets="2", quadrants="1", l1_radix="1", l2_radix="1",
                            l3_radix="1")
    far = top.child("chiplet[1]").child("node")
    quadrant = top.child("chiplet[1]").child("quadrant[0]").child("node")
    stats = {s.name: s.value for s in far.stats}
    # the operands live in die 0's HBM: all of die 1's traffic crosses its link to die 0
    assert stats["out0_bytes_out"] == quadrant.up_bytes_out.value > 0
    assert stats["out0_bytes_in"] == quadrant.up_bytes_in.value > 0
    assert stats["out1_bytes_out"] == 0  # its own HBM holds nothing of this GEMM
    near_cycles, far_cycles = (c.run_cycles() for c in clusters)
    assert far_cycles > near_cycles
    kinds = {link.kind for link in hierarchy_report(top).links}
    assert {"uplink", "die-to-die", "memory"} <= kinds


@pytest.mark.parametrize("kernel", [
    dict(kernel='"gemm"', k="32", n="32"),
    dict(kernel='"gemm_tiled"', gemm_m="64", gemm_n="64", gemm_k="128", tile_m="32", tile_n="64", tile_k="64"),
])
def test_the_compiled_and_python_cluster_models_end_alike_in_the_package(kernel):
    params = dict(chiplets="2", quadrants="1", l1_radix="1", l2_radix="1", l3_radix="1", **kernel)
    ends = []
    for engine in ("compiled", "python"):
        _, sim, clusters = _run(PACKAGE, engine, **params)
        stats = [(s.path, s.summary()) for s in sim.all_stats() if ".n_compiled" not in s.path]
        ends.append((sim.now, stats, sum(c.n_compiled_cycles for c in clusters)))
    (t1, s1, compiled), (t2, s2, python) = ends
    assert (t1, s1) == (t2, s2) and compiled > 0 and python == 0


def test_peak_and_dma_bandwidth_of_the_whole_package_follow_from_its_configuration():
    top = load(PACKAGE, params={"kernel": '"none"'}).top
    most = capacity(top)
    assert (most.clusters, most.compute_cores) == (512, 4096)
    assert most.peak_flops == pytest.approx(4096 * 2 * 1e9)  # an FMA per core and cycle at 1 GHz
    assert most.dma_bytes_per_s == pytest.approx(512 * 64 * 1e9)  # 512-bit DMA per cluster
    assert "peak 8.192 DP-TFLOP/s, aggregate cluster DMA 32.77 TB/s per direction" in most.line()


def test_the_run_writes_the_rollups_into_the_statistics_and_the_roofline_beside_them(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the quadrant's trace statements write waves/ManticoreQuadrant.vcd
    stats = tmp_path / "quadrant.json"
    params = ['kernel="gemm"', "rows=8", "clusters=2", "l1_radix=2", "l2_radix=1", "k=16", "n=16"]
    code = main(["run", str(QUADRANT), "--stats", str(stats)] + [item for p in params for item in ("-p", p)])
    assert code == 0
    figures = json.loads(stats.read_text())["hierarchy"]
    assert figures["clusters"] == 2 and figures["binds"] == "compute"
    assert [r["level"] for r in figures["rollups"]] == ["L1Quadrant", "L2Quadrant", "L3Quadrant", "Chiplet",
                                                         "ManticoreQuadrant"]
    assert (tmp_path / "quadrant.roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "binds: compute" in capsys.readouterr().out


def test_the_roofline_plots_without_a_warning_when_a_level_moved_no_byte(tmp_path):
    # The package GEMM's die-to-die links carry nothing (each die reads its own HBM): their
    # intensity is infinite, which stretched the plot's axis to infinity (numpy warned).
    capacity = Capacity(clusters=2, compute_cores=16, peak_flops=32e9, dma_bytes_per_s=128e9)
    report = HierarchyReport(capacity=capacity, flops=10**9, seconds=0.05, rollups=(), links=(), ceilings=(
        Ceiling(level="L1Quadrant", bytes_per_s=64e9, bytes=10**8, intensity=10.0, attainable=640e9),
        Ceiling(level="D2D", bytes_per_s=64e9, bytes=0, intensity=float("inf"), attainable=float("inf"))))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report.plot(tmp_path / "roofline.png")
    assert (tmp_path / "roofline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("path, params, message", [
    (QUADRANT, ["clusters=30"],
     "topologies/manticore_quadrant.arch:30:91: error: parameter 'l3_radix' of 'Chiplet' expects int, got number "
     "1.875"),
    (PACKAGE, ["chiplets=8", "quadrants=1", "l1_radix=1", "l2_radix=1", "l3_radix=1"],
     "library/manticore.arch:104:12: error: Manticore.chiplet[0].node: address range 0x8000_0000 .. 0x1_8000_0000 "
     "-> terminals [0, 1, 2, 3, 4, 5, 6, 7] in 536870912-byte blocks ends above the 32-bit address space of the "
     "requesters (0x1_0000_0000): they cannot reach its last 2,147,483,648 bytes"),
    (PACKAGE, ["kernel=\"gemm_tiled\"", "chiplets=1", "quadrants=1", "l1_radix=1", "l2_radix=1", "l3_radix=1",
               "gemm_m=1000"],
     "topologies/manticore.arch:52:13: error: workload 'gemm_clusters': gemm tiles 32 x 64 x 64 must divide "
     "m x n x k = 1000 x 1024 x 1024, with tile_m a multiple of the 8 cores, tile_n of 8 and tile_k at least 2"),
    (QUADRANT, ["kernel=\"gemm_tiled\"", "clusters=4", "l1_radix=4", "l2_radix=1", "gemm_row_block=100"],
     "topologies/manticore_quadrant.arch:40:13: error: workload 'gemm_clusters': gemm row_block 100 must be 0 "
     "(dense rows) or a positive multiple of 8 bytes"),
    (PACKAGE, ["kernel=\"gemm\"", "chiplets=2", "d2d=false", "quadrants=1", "l1_radix=1", "l2_radix=1",
               "l3_radix=1"],
     "topologies/manticore.arch:47:13: error: workload 'gemm': Manticore.chiplet[1].node.out_req[0] is not "
     "connected, so nothing below Manticore.chiplet[1].node reaches the bytes it routes there"),
])
def test_bad_configurations_are_errors_naming_the_part_and_the_number(path, params, message, capsys):
    args = ["check", str(path)] + [item for p in params for item in ("-p", p)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err.replace(str(data_path("topologies").parent) + "/", "")
    assert "Traceback" not in err
