"""Layers, SCALE-Sim topology files, bundled networks and random activations."""

import numpy as np
import pytest

from archmodel.kernel import ArchError
from archmodel.workloads.conv import Layer, activations, network, read_topology

# SCALE-Sim's own format: a header, padded fields, trailing commas, a row of empty fields,
# columns after Strides (SCALE-Sim's Resnet50.csv carries Eh, Ew, e2 there)
TOPOLOGY = """Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,,,Eh
,,,,,,,,
Conv1     ,224         ,224        ,7            ,7           ,3       ,64        ,2      ,,,110
CB2a_2,56,56,3,3,64,64,1,

IB4b_2,14,14,1,7,256,256,1,
"""


def test_topology_reads_scale_sim_rows_as_padded_inputs(tmp_path):
    path = tmp_path / "net.csv"
    path.write_text(TOPOLOGY)
    conv1, cb, ib = read_topology(path)
    assert conv1 == Layer("Conv1", 224, 224, 3, 7, 7, 64, 2)
    assert (conv1.out_h, conv1.out_w) == (109, 109)  # SCALE-Sim's ceil((224 - 7 + 2) / 2)
    assert (cb.out_h, cb.out_w, ib.out_h, ib.out_w) == (54, 54, 14, 8)
    same = read_topology(path, padding="same", batch=2)
    assert [(l.pad_h, l.pad_w, l.batch) for l in same] == [(3, 3, 2), (1, 1, 2), (0, 3, 2)]
    assert (same[0].out_h, same[1].out_h, same[2].out_w) == (112, 56, 14)


@pytest.mark.parametrize("line, message", [
    ("Conv2,27,27,5,5,96", "a layer line needs 8 fields (Layer name, IFMAP Height, IFMAP Width, Filter Height, "
                           "Filter Width, Channels, Num Filter, Strides), this one has 6"),
    ("Conv2,27,27,5,5,96,256,two", "layer 'Conv2': Strides must be an integer, got 'two'"),
    ("Conv2,27,27,5,5,96,256,0", "layer 'Conv2': stride must be a positive integer, got 0"),
    ("Conv2,4,27,5,5,96,256,1", "layer 'Conv2': the 5x5 kernel is larger than its padded 4x27 input"),
])
def test_malformed_topology_line_names_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.csv"
    path.write_text(f"Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                    f"Strides,\nConv1,224,224,11,11,3,96,4,\n{line}\n")
    with pytest.raises(ArchError) as err:
        read_topology(path)
    assert str(err.value) == f"{path}:3:1: error: {message}"


def test_topology_without_layers_and_bad_padding(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("Layer name, IFMAP Height\n\n")
    with pytest.raises(ArchError, match=r"holds no layers"):
        read_topology(path)
    with pytest.raises(ArchError, match=r"padding must be one of none, same, got 'valid'"):
        read_topology(path, padding="valid")
    with pytest.raises(ArchError, match=r"cannot read topology file"):
        read_topology(tmp_path / "missing.csv")


@pytest.mark.parametrize("kwargs, message", [
    (dict(height=0), "layer 'L': height must be a positive integer, got 0"),
    (dict(filters=-3), "layer 'L': filters must be a positive integer, got -3"),
    (dict(stride=0), "layer 'L': stride must be a positive integer, got 0"),
    (dict(pad_w=-1), "layer 'L': pad_w must be a non-negative integer, got -1"),
    (dict(kernel_h=9), "layer 'L': the 9x3 kernel is larger than its padded 8x8 input"),
    (dict(kernel_w=11, pad_w=1), "layer 'L': the 3x11 kernel is larger than its padded 8x10 input"),
])
def test_bad_layers_are_arch_errors(kwargs, message):
    shape = dict(name="L", height=8, width=8, channels=1, kernel_h=3, kernel_w=3, filters=1) | kwargs
    with pytest.raises(ArchError) as err:
        Layer(**shape)
    assert err.value.message == message and err.value.exit_code == 2


def test_kernel_fits_once_padded():
    layer = Layer("L", 2, 2, 1, 3, 3, 1, pad_h=1, pad_w=1)
    assert (layer.out_h, layer.out_w) == (2, 2)


@pytest.mark.parametrize("density", [-0.1, 1.5, float("nan"), "0.5", True])
def test_density_outside_unit_interval(density):
    with pytest.raises(ArchError, match=r"density must be a number between 0 and 1"):
        activations(Layer("L", 4, 4, 1, 3, 3, 1), density)


def test_activations_density_seed_and_nesting():
    layer = Layer("L", 64, 64, 8, 3, 3, 1, batch=2)
    dense = activations(layer)
    assert dense.shape == (2, 64, 64, 8) and np.all(dense > 0) and np.all(dense <= 1)
    low, high = activations(layer, 0.2, seed=5), activations(layer, 0.6, seed=5)
    assert abs(np.count_nonzero(low) / low.size - 0.2) < 0.01
    assert abs(np.count_nonzero(high) / high.size - 0.6) < 0.01
    assert np.all((low == 0) | (low == high))  # the lower density's non-zeros are the higher one's
    assert np.array_equal(low, activations(layer, 0.2, seed=5))
    assert not np.array_equal(low, activations(layer, 0.2, seed=6))
    assert np.count_nonzero(activations(layer, 0.0)) == 0


def test_bundled_networks_chain_their_shapes():
    resnet = network("resnet50")
    assert len(resnet) == 53 and sum(l.kernel_h == 3 for l in resnet) == 16
    assert [(l.name, l.out_h) for l in resnet if l.name.endswith("_proj")] == [
        ("res2a_proj", 56), ("res3a_proj", 28), ("res4a_proj", 14), ("res5a_proj", 7)]
    assert (resnet[0].out_h, resnet[-1].out_h, resnet[-1].filters) == (112, 7, 2048)
    vgg = network("vgg16")
    assert len(vgg) == 13 and all(l.out_h == l.height for l in vgg)
    assert sum(l.macs for l in vgg) == 15_346_630_656  # VGG-16's 15.3 G multiply-adds
    inception = network("inception_v3")
    assert len(inception) == 94
    assert network("inception_v3")[0].out_h == 149
    assert {(l.kernel_h, l.kernel_w) for l in inception if l.height == 17 and l.channels == 192 and l.filters == 192
            and l.stride == 1} \
        == {(1, 7), (7, 1)}
    assert [l.out_h for l in network("alexnet")] == [55, 27, 13, 13, 13]
    assert all(l.batch == 4 for l in network("alexnet", batch=4))
    with pytest.raises(ArchError) as err:
        network("resnet51")
    assert str(err.value) == "error: unknown network 'resnet51'\nhint: did you mean 'resnet50'?"
