"""Kernels across clusters: every result checked against numpy (each cluster checks its part
when it finishes, a mismatch stops the run), the compiled cluster loop held to the Python model
cycle for cycle on the same system, GEMM compute bound above 90% FPU utilisation per cluster,
and bad input refused before the run with the part and the number named."""

import numpy as np
import pytest

from archmodel.kernel import ArchError, Simulator
from archmodel.lang.elaborate import load
from archmodel.paths import data_path
from archmodel.workloads.binding import KERNELS
from archmodel.workloads.multicluster import EMPTY_SLOT, build_clusters, tree_levels

from .test_composed_systems import _run as run_system

CASES = {
    "gemm_clusters": dict(m=32, n=32, k=64, tile_m=16, tile_n=16, tile_k=32),
    "axpy_clusters": dict(n=1024, tile=128),
    "dot_clusters": dict(n=1024, tile=128),
    "reduction_clusters": dict(n=1536, tile=128),
    "jacobi_clusters": dict(rows=18, cols=18, sweeps=3),
}


def _run(kernel: str, engine: str, count: int = 4, **params):
    top, clusters, memory = build_clusters(count, engine=engine)
    KERNELS[kernel](clusters, **params)
    sim = Simulator(top)
    result = sim.run()
    working = [c for c in clusters if c.core_list[0].program is not None]
    assert working and all(getattr(c, "result_ok", False) for c in working)
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    ends = [c.done_cycle for c in clusters]
    return (result.reason, result.time_ps, ends, stats, bytes(memory.data[:1 << 20]),
            [bytes(c.tcdm.data) for c in clusters]), sum(c.n_compiled_cycles for c in clusters), clusters


@pytest.mark.parametrize("kernel", list(CASES))
def test_a_kernel_across_clusters_ends_alike_with_the_compiled_loop_and_the_python_model(kernel):
    compiled, compiled_cycles, _ = _run(kernel, "compiled", **CASES[kernel])
    python, python_cycles, _ = _run(kernel, "python", **CASES[kernel])
    assert compiled == python
    assert compiled_cycles > 0 and python_cycles == 0
    assert compiled[0] == "stopped"  # the last cluster to finish ended the run


def test_the_partial_sums_meet_over_a_tree_of_tcdms_in_cluster_0():
    _, _, clusters = _run("reduction_clusters", "auto", count=3, n=768, tile=128)
    assert tree_levels(3) == 2
    # cluster 1 sent its sum up at level 0, cluster 2 (no partner at level 0) at level 1;
    # only cluster 0 received, once per level, over its slave port
    slots = [c.tcdm_array(c.tcdm_base + c.tcdm_bytes - 16, (2,), np.int64).tolist() for c in clusters]
    assert [s[0] != EMPTY_SLOT for s in slots] == [True, False, False]
    assert [s[1] != EMPTY_SLOT for s in slots] == [True, False, False]
    assert [c.tcdm_port.n_requests for c in clusters] == [2, 0, 0]
    assert clusters[0].done_cycle > max(c.done_cycle for c in clusters[1:])


def test_the_jacobi_bands_exchange_one_halo_row_per_neighbour_and_sweep():
    sweeps, cols = 3, 18
    _, _, clusters = _run("jacobi_clusters", "auto", rows=18, cols=cols, sweeps=sweeps)
    # after every sweep but the last each cluster reads its neighbours' rows (a row each)
    # and their DMAs write its flags (a word each)
    neighbours = [1, 2, 2, 1]
    assert [c.tcdm_port.n_read for c in clusters] == [n * (sweeps - 1) * 8 * cols for n in neighbours]
    assert [c.tcdm_port.n_written for c in clusters] == [n * (sweeps - 1) * 8 for n in neighbours]


def test_a_tiled_gemm_is_compute_bound_above_90_percent_on_every_cluster():
    _, compiled_cycles, clusters = _run("gemm_clusters", "auto", count=2, m=32, n=64, k=512)
    for cluster in clusters:
        assert cluster.fpu_utilisation.value >= 90.0
        assert cluster.flops.value == 32 * 32 * (2 * 512 - 1)  # its 32 x 32 tile: a multiply, then k - 1 FMAs
    assert compiled_cycles > 0


SYSTEM = """
import "snitch.arch"
import "dram.arch"

system ClustersOnHbm(kernel: string = "gemm") {{
    clock clk = 1 GHz
    cluster[4] : SnitchCluster(cores = 8, tcdm_bytes = 128 KiB, banks = 32, icache_bytes = 8 KiB)
    net : Noc(topology = "mesh(1, 5)", flit_bits = 512 bit, address_map = [0x8000_0000 .. 0x9000_0000 -> 4])
    hbm : HBM2E(channels = 2, base_address = 0x8000_0000)
    for i in 0 .. 4 {{
        cluster[i].ext_req -> net.mem_req[i]
        net.mem_rsp[i] -> cluster[i].ext_rsp
    }}
    net.to_memory[4] -> hbm.req
    hbm.resp -> net.from_memory[4]
    run {run} on cluster[*]
}}
"""


def _arch(tmp_path, run: str):
    path = tmp_path / "clusters.arch"
    path.write_text(SYSTEM.format(run=run))
    for name in ("snitch.arch", "dram.arch"):
        (tmp_path / name).write_text((data_path("library") / name).read_text())
    return path


def test_run_on_cluster_star_binds_one_gemm_over_every_cluster_with_its_operands_in_hbm(tmp_path):
    path = _arch(tmp_path, "gemm_clusters(m = 32, n = 32, k = 32, tile_m = 16, tile_n = 16, tile_k = 16)")
    compiled, compiled_cycles = run_system(path, "compiled", {})
    python, python_cycles = run_system(path, "python", {})
    assert compiled == python
    assert compiled_cycles > 0 and python_cycles == 0
    flops = [value["value"] for name, value in compiled[2] if name.endswith("].flops")]  # the clusters', not the cores'
    assert flops == [16 * 16 * (2 * 32 - 1)] * 4  # a 16 x 16 tile each: a multiply, then k - 1 FMAs


def _bind_error(kernel: str, count: int = 2, **params) -> str:
    _, clusters, _ = build_clusters(count)
    with pytest.raises(ArchError) as info:
        KERNELS[kernel](clusters, **params)
    return str(info.value)


@pytest.mark.parametrize("m, buffers", [
    (256, "C tiles too"),  # two tiles per cluster: one is written back while the next is computed
    (64, "one C tile per cluster"),
])
def test_a_gemm_tile_that_does_not_fit_the_tcdm_is_named_with_the_tcdm_size(m, buffers):
    need = 8 * (2 * 64 * 129 + 2 * 128 * 65 + (2 if m == 256 else 1) * 64 * 64)
    assert _bind_error("gemm_clusters", m=m, n=64, k=256, tile_m=64, tile_n=64, tile_k=128) == (
        f"error: workload 'gemm_clusters': gemm tile 64 x 64 x 128 needs {need} bytes of TCDM (A and B tiles "
        f"double-buffered, {buffers}, A's and B's rows padded by a word) but top.cluster0 has 131072")
    assert need == {256: 330752, 64: 297984}[m]


@pytest.mark.parametrize("kernel, params, message", [
    ("gemm_clusters", dict(m=48, n=32, k=64), "gemm tiles 32 x 32 x 64 must divide m x n x k = 48 x 32 x 64, with "
                                              "tile_m a multiple of the 8 cores, tile_n of 8 and tile_k at least 2"),
    ("axpy_clusters", dict(n=1000), "n = 1000 must be a multiple of the 3 clusters"),
    ("jacobi_clusters", dict(rows=18, cols=18), "rows - 2 (the interior rows) = 16 must be a multiple of the 3 "
                                                "clusters"),
    ("dot_clusters", dict(n=3072, tile=8192), "a dot tile of 8192 needs 262232 bytes of TCDM (double-buffered, with "
                                              "partial sums and tree slots) but top.cluster0 has 131072"),
])
def test_shapes_that_do_not_share_out_are_refused_with_the_numbers(kernel, params, message):
    assert _bind_error(kernel, count=3, **params) == f"error: workload '{kernel}': {message}"


def test_a_kernel_exchanging_data_between_clusters_needs_each_tcdm_reachable_from_outside(tmp_path):
    path = _arch(tmp_path, "dot_clusters(n = 1024, tile = 128)")
    with pytest.raises(ArchError) as info:
        load(path)
    assert str(info.value) == (
        f"{path}:16:9: error: workload 'dot_clusters': ClustersOnHbm.cluster[0] has no tcdm_global_base: this kernel "
        "reaches the clusters' TCDMs from outside (give each cluster its own global range and map it to its "
        "tcdm_req)\n    run dot_clusters(n = 1024, tile = 128) on cluster[*]\n"
        "        " + "^" * 47 + "\n1 error")


def test_two_clusters_with_one_global_tcdm_range_are_named():
    _, clusters, _ = build_clusters(2)
    clusters[1].tcdm_global_base = clusters[0].tcdm_global_base
    with pytest.raises(ArchError) as info:
        KERNELS["jacobi_clusters"](clusters, rows=18, cols=18)
    assert str(info.value) == ("error: workload 'jacobi_clusters': top.cluster1 and top.cluster0 share tcdm_global_base "
                               "0x40000000: each TCDM needs a global range of its own")


def test_a_cluster_whose_tcdm_is_not_mapped_is_named():
    top, clusters, _ = build_clusters(2)
    clusters[1].tcdm_global_base = 0x6000_0000  # nobody maps it
    with pytest.raises(ArchError) as info:
        KERNELS["dot_clusters"](clusters, n=1024, tile=128)
    assert str(info.value) == ("error: workload 'dot_clusters': top.cluster0 cannot reach the TCDM of top.cluster1 at "
                               "0x60000000: map each cluster's global TCDM range to its tcdm_req")
