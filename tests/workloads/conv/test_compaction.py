"""The CPO/CPS compaction on the cluster's cores: the tile it leaves in the TCDM is the host
lowering's byte for byte, on both engines with the same cycles, and its cost is in the run."""

import numpy as np
import pytest

from archmodel.kernel import Simulator
from archmodel.workloads.conv import Layer, activations, weights
from archmodel.workloads.conv.compaction import column_runs, covered_columns
from archmodel.workloads.conv.kernels import setup_conv
from archmodel.workloads.conv.lowering import cpo_map, padded
from archmodel.workloads.conv.tiling import sparse_tile
from archmodel.workloads.conv.timing import time_layer
from archmodel.workloads.snitch import build_system

SHAPES = [
    Layer("3x3_pad1", 8, 8, 4, 3, 3, 16, 1, 1, 1),
    Layer("3x3_stride2", 9, 9, 4, 3, 3, 16, 2, 1, 1),
    Layer("1x1_stride2", 7, 7, 8, 1, 1, 8, 2),     # every other column read by no window
    Layer("7x7_stride2", 12, 12, 3, 7, 7, 8, 2, 3, 3),
    Layer("1x7", 9, 9, 8, 1, 7, 8, 1, 0, 3),
    Layer("7x1", 9, 9, 12, 7, 1, 8, 1, 3, 0),
    Layer("2x2_stride3", 10, 10, 8, 2, 2, 8, 3),   # kernel narrower than the stride
]


def _compacted(layer, method, x, engine="compiled"):
    """Run ``layer`` on a small-TCDM cluster; the last step's tile as the cores left it, the
    host's, the run's cycles and whether the output equalled numpy."""
    top = build_system(tcdm_bytes=24 * 1024, memory_bytes=4 << 20, engine=engine)
    cluster = top.child("cluster")
    placed = setup_conv(cluster, top.child("memory"), layer, method, x, weights(layer, 5))
    Simulator(top).run()
    t = placed.tiling
    h0, rows = t.bands[placed.bands[-1]]
    host = sparse_tile(layer, padded(layer, x)[0], method, h0, rows, (placed.chunks - 1) * t.channels, t.channels)
    used = host.planes_at + 4 * host.planes  # the host pads the tile to 8 bytes
    got = cluster.tcdm.array(placed.compact_at, (used,), np.uint8).tobytes()
    return got, host.data[:used], cluster.run_cycles(), cluster.result_ok


@pytest.mark.parametrize("layer", SHAPES, ids=lambda l: l.name)
@pytest.mark.parametrize("method", ["cpo", "cps"])
def test_the_cores_build_the_host_lowering_bit_for_bit(layer, method):
    rng = np.random.default_rng(hash(layer.name) % 1000)
    for density in (0.0, float(rng.uniform(0.05, 0.95)), 1.0):
        x = activations(layer, density, int(rng.integers(1000)))
        got, want, _, ok = _compacted(layer, method, x)
        assert ok and got == want, density


def test_a_negative_zero_is_a_zero_and_an_empty_channel_is_skipped():
    layer = SHAPES[0]
    x = activations(layer, 0.5, 7)
    x[0, :, :, 1] = 0.0  # an all-zero channel: absent from the tile
    x[0, 2:5, 3, 2] = -0.0
    got, want, _, ok = _compacted(layer, "cps", x)
    assert ok and got == want
    assert 1 not in cpo_map(layer, x).planes


@pytest.mark.parametrize("method", ["cpo", "cps"])
def test_the_python_core_and_the_compiled_loop_compact_alike(method):
    rng = np.random.default_rng(16)
    for layer in (SHAPES[1], SHAPES[2]):
        x = activations(layer, float(rng.uniform(0.1, 0.9)), int(rng.integers(1000)))
        python, compiled = _compacted(layer, method, x, "python"), _compacted(layer, method, x, "compiled")
        assert python == compiled and python[0] == python[1]


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_the_compaction_costs_cycles_that_follow_the_dense_input(engine):
    # the scan reads every element whatever the density; copying the non-zeros adds to it,
    # and at density 0 the SpMV has nothing left to do
    layer = SHAPES[1]
    timed = {}
    for density in (0.0, 1.0):
        timed[density] = time_layer(layer, activations(layer, density, 1), weights(layer, 1), ("cpo",),
                                    slice_steps=None, cluster_params={"tcdm_bytes": 24 * 1024, "engine": engine})["cpo"]
    empty, dense = timed[0.0], timed[1.0]
    assert 0 < empty.compact_cycles < dense.compact_cycles < dense.cycles
    assert empty.compact_cycles > empty.cycles / 2


def test_the_columns_of_each_partition_in_the_order_cpo_stores_them():
    # 3-wide kernel, stride 1, 6 padded columns, 4 windows: columns 0 and 5 are in one window,
    # 1 and 4 in two, 2 and 3 in three
    layer = Layer("l", 4, 6, 1, 3, 3, 8, 1)
    assert covered_columns(layer) == [(0, 0, 0), (0, 5, 3), (1, 1, 0), (1, 4, 2), (2, 2, 0), (2, 3, 1)]
    assert column_runs(layer) == [(0, 0, 0, 5, 3, 2), (1, 1, 0, 3, 2, 2), (2, 2, 0, 1, 1, 2)]
    # 1x1 with stride 2: the odd columns are read by no window
    assert [j for _, j, _ in covered_columns(Layer("s", 4, 7, 1, 1, 1, 8, 2))] == [0, 2, 4, 6]
