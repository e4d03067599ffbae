import pytest

from archmodel.kernel import ModelAssertion, Simulator
from archmodel.workloads.snitch import build_system, run_kernel


@pytest.mark.parametrize("kernel, params", [
    ("axpy", dict(n=2048, tile=256)),
    ("dot", dict(n=2048, tile=256)),
    ("reduction", dict(n=2048, tile=256)),
    ("jacobi", dict(rows=18, cols=34, sweeps=2)),
    ("gemm", dict(m=16, n=16, k=8)),
    ("gemm", dict(m=16, n=16, k=8, streamed=True)),
])
def test_kernels_compute_the_numpy_answer_in_the_modelled_memory(kernel, params):
    report, cluster = run_kernel(kernel, **params)
    assert cluster.result_ok
    assert report.flops > 0 and report.cycles > 0
    if kernel != "gemm" or params.get("streamed"):
        assert report.dma_bytes > 0


def test_a_wrong_result_stops_the_run():
    from archmodel.kernel import Simulator
    from archmodel.workloads.snitch import build_system, setup_gemm

    top = build_system()
    cluster = top.child("cluster")
    setup_gemm(cluster, m=8, n=8, k=4)
    cluster.tcdm_array(cluster.tcdm_base, (4, 8))[0, 0] = float("nan")  # B corrupted after setup
    with pytest.raises(ModelAssertion, match="gemm: result differs from numpy"):
        Simulator(top).run()


def test_resident_gemm_keeps_the_fpus_above_90_percent():
    report, _ = run_kernel("gemm", m=32, n=32, k=32)
    # per 8-column group the FPU needs 8 fmul + 8 (k-1) fmadd + 8 fsd issue slots: the bound
    bound = 100.0 * (8 * 32) / (8 * 32 + 8)
    assert 90.0 < report.fpu_utilisation <= bound
    assert min(report.core_utilisation) > 88.0


def test_streamed_gemm_falls_to_the_memory_roofline():
    m, n, k, bandwidth = 128, 32, 32, 2
    report, cluster = run_kernel("gemm", m=m, n=n, k=k, streamed=True, memory_bytes_per_cycle=bandwidth)
    moved = 8 * (m * k + k * n + m * n)
    assert report.dma_bytes == moved
    roofline_cycles = max(moved / bandwidth, 2 * m * n * k / (2 * cluster.cores))
    assert roofline_cycles == moved / bandwidth  # memory bound at 2 B/cycle
    assert roofline_cycles <= report.cycles <= 1.15 * roofline_cycles
    compute_bound, _ = run_kernel("gemm", m=m, n=n, k=k, streamed=True, memory_bytes_per_cycle=64)
    assert compute_bound.cycles < 0.6 * report.cycles


@pytest.mark.parametrize("params", [
    dict(rows=26, cols=34, sweeps=2, band=8),
    dict(rows=34, cols=34, sweeps=3, band=4),
    dict(rows=26, cols=34, sweeps=1, band=24),
    dict(rows=19, cols=18, sweeps=2, band=1),  # bands thinner than the core count leave cores idle
])
def test_streamed_jacobi_moves_bands_with_halos_and_matches_numpy(params):
    report, cluster = run_kernel("jacobi", **params)
    rows, cols, sweeps, band = params["rows"], params["cols"], params["sweeps"], params["band"]
    bands = sweeps * (rows - 2) // band
    assert cluster.result_ok
    # per band: (band + 2) full rows in, band interior rows out
    assert report.dma_bytes == 8 * bands * ((band + 2) * cols + band * (cols - 2))
    assert cluster.dma.n_done == 2 * bands


def test_jacobi_streams_on_its_own_when_the_grid_does_not_fit_twice_in_the_tcdm():
    fits, _ = run_kernel("jacobi", rows=26, cols=34, sweeps=2, cluster_params=dict(tcdm_bytes=16384))
    report, cluster = run_kernel("jacobi", rows=34, cols=34, sweeps=2, cluster_params=dict(tcdm_bytes=16384))
    assert cluster.result_ok
    assert fits.dma_bytes == 3 * 8 * 26 * 34  # fetched twice (two TCDM copies), written back once
    # the tallest band dividing the 32 interior rows into at least 3 whose buffers fit: 8 rows
    assert cluster.dma.n_done == 2 * 2 * (32 // 8)


@pytest.mark.parametrize("params, message", [
    (dict(rows=26, cols=34, band=5), "band = 5 must divide the 24 interior rows"),
    (dict(rows=26, cols=34, band=12, sweeps=2), "at least 3 bands per sweep"),
])
def test_jacobi_rejects_bands_it_cannot_stream(params, message):
    with pytest.raises(ValueError, match=message):
        run_kernel("jacobi", **params)


def run_alone(programs, **system):
    top = build_system(**system)
    cluster = top.child("cluster")
    cluster.load_programs(programs)
    Simulator(top).run()
    return cluster.run_cycles()


@pytest.mark.parametrize("kernel, params", [
    ("jacobi", dict(rows=50, cols=66, sweeps=2, band=8)),
    ("axpy", dict(n=4096, tile=512)),
    ("dot", dict(n=4096, tile=512)),
    ("reduction", dict(n=4096, tile=512)),
])
def test_double_buffering_overlaps_dma_and_compute(kernel, params):
    report, cluster = run_kernel(kernel, **params)
    programs = [core.program for core in cluster.core_list]
    # the same programs once with only the DMA core, once with only the compute cores
    # (barriers do not wait for cores without a program)
    dma_only = run_alone([None] * cluster.cores + programs[-1:])
    compute_only = run_alone(programs[:-1])
    assert report.cycles >= max(dma_only, compute_only)
    assert report.cycles <= 0.8 * (dma_only + compute_only)
    # at least half of the shorter of the two hides under the longer
    assert report.cycles <= max(dma_only, compute_only) + 0.5 * min(dma_only, compute_only)


def _two_clusters_with_their_own_memories():
    from archmodel.kernel import Component, connect
    from archmodel.models.compute import FixedLatencyMemory, SnitchCluster
    top = Component("top")
    clusters = []
    for i in range(2):
        cluster = SnitchCluster(f"cluster{i}", top, cores=2)
        memory = FixedLatencyMemory(f"memory{i}", top, latency_cycles=5 + 10 * i, size_bytes=1 << 20)
        connect(cluster.ext_req, memory.req, latency=1, width_bits=512)
        connect(memory.rsp, cluster.ext_rsp, latency=1, width_bits=512)
        clusters.append(cluster)
    return top, clusters


def test_clusters_of_one_run_statement_place_their_data_in_disjoint_regions():
    from archmodel.workloads.binding import KERNELS
    top, clusters = _two_clusters_with_their_own_memories()
    KERNELS["axpy"](clusters, n=256, tile=64)
    Simulator(top).run()
    assert all(c.result_ok for c in clusters)
    # the second cluster's x starts in the second half of its memory
    second = clusters[1].outside_memory()
    first_half = second.backdoor_read(second.base_address, 8 * 256)
    assert first_half == bytes(8 * 256)


def test_a_shared_gemm_needs_one_memory_that_every_cluster_reaches():
    from archmodel.kernel import ArchError
    from archmodel.workloads.binding import KERNELS
    _, clusters = _two_clusters_with_their_own_memories()
    with pytest.raises(ArchError) as info:
        KERNELS["gemm"](clusters, m=8, n=8, k=4, streamed=True)
    assert str(info.value) == ("error: workload 'gemm': top.cluster1 does not see the operands placed through top.cluster0: "
                               "a shared gemm needs one memory that every cluster reaches")


def test_a_kernel_that_streams_from_outside_names_what_its_port_reaches():
    from archmodel.models.compute import SnitchCluster
    from archmodel.workloads.snitch import setup_axpy
    with pytest.raises(ValueError) as info:
        setup_axpy(SnitchCluster("lonely"), n=256, tile=64)
    assert str(info.value).startswith("lonely: this kernel streams data from outside, but nothing is connected: "
                                      "connect ext_req/ext_rsp to a memory")


def test_clusters_running_one_kernel_share_their_identical_programs():
    # (the compute cores' lines name only TCDM addresses: every cluster's are the same text,
    # assembled once; the DMA programs name each cluster's own outside addresses)
    from archmodel.workloads.snitch import setup_gemm

    clusters = [build_system().child("cluster") for _ in range(2)]
    for c, cluster in enumerate(clusters):
        base = cluster.outside_memory().base_address
        setup_gemm(cluster, None, m=16, n=16, k=8, streamed=True, region=(base + c * (1 << 20), 1 << 20))
    first, second = ([core.program for core in cluster.core_list] for cluster in clusters)
    assert first[0] is first[7] is second[0] and first[8] is not second[8]
    assert first[0].lines == second[0].lines and first[8].lines != second[8].lines
