import pytest

from archmodel.kernel import ModelAssertion
from archmodel.workloads.snitch import run_kernel


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
