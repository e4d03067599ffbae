"""The five lowerings: exact sizes, the lowered matrices, and outputs equal to a numpy reference."""

import numpy as np
import pytest

from archmodel.kernel import ArchError
from archmodel.workloads.conv import (METHODS, NETWORKS, Layer, activations, compression, convolve, cpo_map,
                                      im2col_matrix, lower, lowered_size, mec_matrix, network, weights)


def reference(layer, x, w):
    """Direct convolution in float64 by einsum over every receptive field (no lowering)."""
    xp = np.pad(x, ((0, 0), (layer.pad_h,) * 2, (layer.pad_w,) * 2, (0, 0)))
    out = np.zeros((layer.batch, layer.out_h, layer.out_w, layer.filters))
    for h in range(layer.out_h):
        rows = xp[:, h * layer.stride:h * layer.stride + layer.kernel_h]
        for v in range(layer.out_w):
            field = rows[:, :, v * layer.stride:v * layer.stride + layer.kernel_w]
            out[:, h, v] = np.einsum("nijc,ijcf->nf", field, w)
    return out


def test_sizes_of_the_validation_example():
    layer = Layer("example", 56, 56, 64, 3, 3, 64, stride=1, pad_h=1, pad_w=1)
    assert lowered_size("im2col", layer).elements == 1_806_336
    assert lowered_size("mec", layer).elements == 623_616
    assert lowered_size("direct", layer).elements == 58 * 58 * 64
    assert lowered_size("mec", layer).bytes == 8 * 623_616
    assert lowered_size("mec", layer, value_bytes=4).bytes == 4 * 623_616


def _shapes():
    """Every distinct layer shape of the bundled networks, at 2 channels and 3 filters."""
    seen = {}
    for name in NETWORKS:
        for layer in network(name):
            small = layer.scaled(channels=2, filters=3)
            key = (small.height, small.kernel_h, small.kernel_w, small.stride, small.pad_h, small.pad_w)
            seen.setdefault(key, small)
    return list(seen.values())


SHAPES = _shapes()


def test_formula_sizes_are_the_lowered_matrices_sizes():
    for layer in SHAPES:
        x = activations(layer)
        assert im2col_matrix(layer, x).size == lowered_size("im2col", layer).elements, layer
        assert mec_matrix(layer, x).size == lowered_size("mec", layer).elements, layer
        assert lower("direct", layer, x).size == lowered_size("direct", layer).elements, layer


@pytest.mark.parametrize("layer", SHAPES, ids=str)
def test_every_method_equals_the_reference(layer):
    seed = SHAPES.index(layer)
    density = float(np.random.default_rng(seed).uniform(0.05, 1.0))
    x, w = activations(layer, density, seed), weights(layer, seed)
    want = reference(layer, x, w)
    scale = np.abs(want).max()
    assert scale > 0
    for method in METHODS:
        got = convolve(method, layer, x, w)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-12 * scale, method


def test_batches_and_zero_maps():
    layer = Layer("b", 9, 11, 3, 3, 5, 2, stride=2, pad_h=1, pad_w=2, batch=3)
    x, w = activations(layer, 0.3, seed=1), weights(layer)
    x[1] = 0.0  # an all-zero image: CPO stores nothing of it
    want = reference(layer, x, w)
    for method in METHODS:
        assert np.abs(convolve(method, layer, x, w) - want).max() <= 1e-12 * np.abs(want).max(), method
    zero = np.zeros_like(x)
    assert lowered_size("cpo", layer, activations=zero).elements == 0
    assert not convolve("cps", layer, zero, w).any()
    assert compression("cpo", layer, activations=zero) == float("inf")


def test_cpo_stores_each_mec_nonzero_once_in_its_partition():
    """Every non-zero of the MEC-lowered map sits in (partition + 1) MEC rows; CPO keeps it once."""
    for layer in (Layer("s1", 8, 8, 1, 3, 3, 1), Layer("s2", 13, 12, 2, 5, 4, 1, stride=2, pad_h=1),
                  Layer("s3", 10, 10, 1, 2, 2, 1, stride=3)):
        x = activations(layer, 0.5, seed=3)
        cpo = cpo_map(layer, x)
        parts = -(-layer.kernel_w // layer.stride)
        assert cpo.pointers.shape == (cpo.planes.size, parts, layer.out_w + 1)
        copies = np.repeat(np.arange(parts) + 1, np.diff(cpo.pointers[:, :, [0, -1]], axis=2).reshape(-1, parts).sum(0))
        assert copies.sum() == np.count_nonzero(mec_matrix(layer, x)), layer
        assert cpo.index.max() < layer.padded_h * layer.kernel_w


def test_cpo_counts_values_indices_and_pointers():
    # the authors' 8x8x1 3x3 example: 6 windows, 3 partitions, 7 pointers each
    layer = Layer("8x8", 8, 8, 1, 3, 3, 1)
    x = np.zeros((1, 8, 8, 1))
    x[0, [0, 3, 4, 7], [0, 2, 5, 7], 0] = [1.0, 2.0, 3.0, 4.0]
    size = lowered_size("cpo", layer, activations=x)
    assert (size.values, size.indices, size.pointers) == (4, 4 + 1, 3 * 7)
    assert size.bytes == 4 * 8 + 5 * 4 + 21 * 4
    # column 0 is in one window, column 2 in three, columns 5 and 7 in three and one
    cpo = cpo_map(layer, x)
    assert cpo.values.tolist() == [1.0, 4.0, 2.0, 3.0]
    assert cpo.index.tolist() == [0, 7 * 3 + 2, 3 * 3 + 2, 4 * 3 + 2]


def test_cps_compresses_runs_in_a_column():
    layer = Layer("col", 6, 3, 1, 3, 3, 1)
    x = np.zeros((1, 6, 3, 1))
    x[0, 0:4, 1, 0] = 1.0  # one run of four rows
    x[0, 5, 1, 0] = 1.0    # and a run of one
    cpo, cps = lowered_size("cpo", layer, activations=x), lowered_size("cps", layer, activations=x)
    assert (cpo.values, cpo.indices) == (5, 5 + 1)
    assert (cps.values, cps.indices, cps.pointers) == (5, 2 * 2 + 1, cpo.pointers)
    assert cpo_map(layer, x, runs=True).runs.tolist() == [[1, 4], [16, 1]]


def test_mec_saves_nothing_on_1xk_and_most_on_kx1():
    """Inception-v3's 17x17x192 1x7 and 7x1 layers: MEC removes only the vertical overlap."""
    layers = {(l.kernel_h, l.kernel_w): l for l in network("inception_v3")
              if l.name.startswith("Mixed_6e.7x7_")}
    wide, tall = layers[(1, 7)], layers[(7, 1)]
    assert (wide.height, wide.channels, tall.channels) == (17, 192, 192)
    assert lowered_size("mec", wide).elements == lowered_size("im2col", wide).elements == 17 * 17 * 7 * 192
    assert lowered_size("im2col", tall).elements == 17 * 17 * 7 * 192
    assert lowered_size("mec", tall).elements == 17 * 23 * 192
    assert compression("mec", tall) == pytest.approx(7 * 17 / 23)
    ratios = [compression("mec", l) for l in network("inception_v3")]
    assert max(ratios) == compression("mec", tall)
    assert min(ratios) == 1.0


@pytest.mark.parametrize("layer", [Layer("8x8x1", 8, 8, 1, 3, 3, 1)] + [
    l for l in network("resnet50") if l.name in ("conv1", "res2a_2", "res4a_2")] + [
    l for l in network("inception_v3") if l.name in ("Mixed_6e.7x7_2", "Mixed_6e.7x7_3")], ids=str)
def test_cpo_compression_rises_as_density_falls(layer):
    densities = [1.0, 0.9, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1] + ([0.05, 0.01] if layer.height > 8 else [])
    ratios = [compression("cpo", layer, d, seed=11) for d in densities]
    assert all(a < b for a, b in zip(ratios, ratios[1:])), ratios
    assert ratios[0] > 1.0  # even dense, CPO stores each element once where im2col stores Kh*Kw copies


def test_cps_beats_cpo_on_dense_maps_only():
    layer = network("resnet50")[2]
    assert lowered_size("cps", layer, 1.0).bytes < lowered_size("cpo", layer, 1.0).bytes
    assert lowered_size("cps", layer, 0.2).bytes > lowered_size("cpo", layer, 0.2).bytes


def test_bad_method_and_shapes():
    layer = Layer("L", 5, 5, 2, 3, 3, 1)
    with pytest.raises(ArchError) as err:
        lowered_size("im2cool", layer)
    assert str(err.value) == "error: unknown convolution lowering 'im2cool'\nhint: did you mean 'im2col'?"
    with pytest.raises(ArchError, match=r"activations have shape \(1, 5, 5, 3\), the layer takes \(1, 5, 5, 2\)"):
        convolve("mec", layer, np.ones((1, 5, 5, 3)), weights(layer))
    with pytest.raises(ArchError, match=r"weights have shape \(3, 3, 2, 2\), the layer takes \(3, 3, 2, 1\)"):
        convolve("direct", layer, activations(layer), np.ones((3, 3, 2, 2)))
    with pytest.raises(ArchError, match=r"density must be a number between 0 and 1"):
        lowered_size("cpo", layer, 2.0)
    with pytest.raises(ArchError, match=r"density must be a number between 0 and 1"):
        lowered_size("im2col", layer, -1)
