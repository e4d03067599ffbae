"""The per-layer size table of a network, and the README's example."""

import re
from pathlib import Path

import pytest

from archmodel.kernel import ArchError
from archmodel.workloads.conv import Layer, activations, lowered_size, network
from archmodel.workloads.conv.sizes import format_sizes, network_sizes, totals


def test_rows_measure_each_layer_on_its_own_activations():
    layers = network("alexnet")
    rows = network_sizes(layers, 0.3, seed=4)
    assert [r.layer for r in rows] == layers
    for k, (layer, row) in enumerate(zip(layers, rows)):
        assert list(row.sizes) == ["direct", "im2col", "mec", "cpo", "cps"]
        assert row.sizes["cpo"] == lowered_size("cpo", layer, activations=activations(layer, 0.3, 4 + k))
        assert row.sizes["mec"] == lowered_size("mec", layer)
        assert row.compression("cpo") == row.sizes["im2col"].bytes / row.sizes["cpo"].bytes
    assert totals(rows)["im2col"] == sum(lowered_size("im2col", l).bytes for l in layers)


def test_smallest_and_the_table():
    strided = Layer("strided", 16, 16, 8, 1, 1, 8, stride=2)  # im2col reads a quarter of the input
    dense3x3 = Layer("dense3x3", 16, 16, 8, 3, 3, 8, pad_h=1, pad_w=1)
    rows = network_sizes([strided, dense3x3], 1.0, methods=("mec", "cpo"))
    assert [list(r.sizes) for r in rows] == [["im2col", "mec", "cpo"]] * 2
    assert [r.smallest() for r in rows] == ["im2col", "cpo"]
    text = format_sizes(rows).splitlines()
    assert text[0].split() == ["layer", "input", "kernel", "S", "im2col", "KiB", "mec", "KiB", "cpo", "KiB", "cpo",
                               "x", "smallest"]
    # CPO keeps every row of the 8 read columns: 1,024 values, 1,032 indices, 72 pointers
    assert text[2].split() == ["strided", "16x16x8", "1x1x8", "2", "4", "8", "12", "0.32", "im2col"]
    assert text[3].split()[0] == "dense3x3" and text[3].split()[-1] == "cpo"
    assert text[-1].split()[0] == "total" and len(text) == 6
    assert format_sizes([]) == "(no layers)"


def test_bad_method_or_density():
    with pytest.raises(ArchError, match="unknown convolution lowering 'gemm'"):
        network_sizes(network("alexnet"), methods=("gemm",))
    with pytest.raises(ArchError, match="density must be a number between 0 and 1"):
        network_sizes(network("alexnet"), 1.2)


def test_the_readme_example_runs_as_written():
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme[readme.index("## Convolution lowerings"):]
    block = re.search(r"```py\n(.*?)```", section, flags=re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["layer"].name == "res2a_2"
    assert lowered_size("mec", namespace["layer"]).elements == 623_616
