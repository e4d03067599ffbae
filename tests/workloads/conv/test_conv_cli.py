"""``run conv_network(...)`` and ``run conv_layer(...)`` from the command line."""

import json

import pytest

from archmodel.cli import main
from archmodel.paths import data_path
from archmodel.workloads.conv import activations, lowered_size, network

SYSTEM = """import "snitch.arch"
system Conv {{
    clock clk = 1 GHz
    node : ClusterWithMemory()
    run {run} on node.cluster
}}
"""


def _run(tmp_path, capsys, run: str):
    arch = tmp_path / "conv.arch"
    arch.write_text(SYSTEM.format(run=run))
    stats = tmp_path / "stats.json"
    code = main(["run", str(arch), "--stats", str(stats), "-q"])
    out = capsys.readouterr()
    figures = json.loads(stats.read_text())["statistics"] if code == 0 else None
    return code, out.err, figures


def test_the_bundled_topology_reports_every_alexnet_layer(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    code = main(["run", str(data_path("topologies") / "conv_sizes.arch"), "-p", "density=0.3", "-p", "seed=7",
                 "--stats", str(stats), "-q"])
    assert code == 0, capsys.readouterr()
    figures = json.loads(stats.read_text())["statistics"]
    layers = network("alexnet")
    for k, layer in enumerate(layers):
        x = activations(layer, 0.3, 7 + k)
        for method in ("direct", "im2col", "mec", "cpo", "cps"):
            size = lowered_size(method, layer, activations=x)
            assert figures[f"ConvSizes.conv.{layer.name}.{method}_bytes"]["value"] == size.bytes
        assert figures[f"ConvSizes.conv.{layer.name}.cpo_compression"]["value"] == pytest.approx(
            lowered_size("im2col", layer).bytes / lowered_size("cpo", layer, activations=x).bytes)
    total = sum(lowered_size("mec", l).bytes for l in layers)
    assert figures["ConvSizes.conv.mec_bytes"]["value"] == total
    assert figures["ConvSizes.conv.mec_compression"]["value"] == pytest.approx(
        sum(lowered_size("im2col", l).bytes for l in layers) / total)


def test_one_layer_and_a_topology_file(tmp_path, capsys):
    code, err, figures = _run(tmp_path, capsys, 'conv_layer(height = 56, channels = 64, kernel = 3, filters = 64, '
                                                'pad = 1, methods = "im2col,mec", simulate = false)')
    assert code == 0, err
    assert figures["Conv.conv.layer.im2col_bytes"]["value"] == 8 * 1_806_336
    assert figures["Conv.conv.layer.mec_bytes"]["value"] == 8 * 623_616
    assert not any(name.endswith("cpo_bytes") for name in figures)
    topology = tmp_path / "two.csv"
    topology.write_text("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                        "Strides,\nConv1,16,16,3,3,4,8,1,\nConv1,14,14,3,3,8,8,1,\n")
    code, err, figures = _run(tmp_path, capsys, f'conv_network(topology = "{topology}", padding = "same", simulate = false)')
    assert code == 0, err
    assert figures["Conv.conv.Conv1.im2col_bytes"]["value"] == 8 * 16 * 16 * 9 * 4
    assert figures["Conv.conv.Conv1_.im2col_bytes"]["value"] == 8 * 14 * 14 * 9 * 8  # a repeated name stays apart


@pytest.mark.parametrize("run, message", [
    ('conv_network(network = "alexnet", density = 1.5)',
     "density must be a number between 0 and 1 (the fraction of non-zero activations), got 1.5"),
    ('conv_network(network = "resnet51")', "unknown network 'resnet51'"),
    ('conv_network(network = "alexnet", topology = "x.csv")', "conv_network takes one of network"),
    ('conv_network(netwrk = "alexnet")', "workload 'conv_network': got an unexpected keyword argument 'netwrk'"),
    ('conv_network(network = "alexnet", methods = "im2col,fft")', "unknown convolution lowering 'fft'"),
    ("conv_layer(height = 4, channels = 1, kernel = 5, filters = 1)",
     "layer 'layer': the 5x5 kernel is larger than its padded 4x4 input"),
    ("conv_layer(height = 8, channels = 1, kernel = 3, filters = 1, stride = 0)",
     "layer 'layer': stride must be a positive integer, got 0"),
    ("conv_layer(height = 0, channels = 1, kernel = 3, filters = 1, pad = 2)",
     "layer 'layer': height must be a positive integer, got 0"),
    ("conv_layer(height = 8, channels = 1, filters = 1)", "conv_layer needs kernel"),
])
def test_bad_input_exits_2_with_the_reason(tmp_path, capsys, run, message):
    code, err, _ = _run(tmp_path, capsys, run)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_a_malformed_topology_line_is_named(tmp_path, capsys):
    topology = tmp_path / "bad.csv"
    topology.write_text("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                        "Strides,\nConv1,16,16,3,3,4,8,1,\nConv2,16,16,3,x,4,8,1,\n")
    code, err, _ = _run(tmp_path, capsys, f'conv_network(topology = "{topology}")')
    assert code == 2
    assert f"{topology}:3:1: error: layer 'Conv2': Filter Width must be an integer, got 'x'" in err


def test_a_layer_runs_on_the_cluster_and_reports_cycles_and_the_choice(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, err, figures = _run(tmp_path, capsys, 'conv_layer(height = 8, channels = 8, kernel = 3, filters = 16, '
                                                'pad = 1, density = 0.1, slice = 0, plot = "layer.png")')
    assert code == 0, err
    cycles = {m: figures[f"Conv.conv.layer.{m}_cycles"]["value"] for m in ("direct", "im2col", "mec", "cpo", "cps")}
    assert all(c > 0 for c in cycles.values())
    assert figures["Conv.conv.layer.chosen_cycles"]["value"] == min(cycles.values())
    assert figures["Conv.conv.chosen_cycles"]["value"] == min(cycles.values())
    assert 0 < figures["Conv.conv.layer.im2col_fpu_utilisation"]["value"] <= 100
    assert figures["Conv.conv.layer.im2col_dma_bytes"]["value"] > figures["Conv.conv.layer.direct_dma_bytes"]["value"]
    assert (tmp_path / "layer.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_network_prints_its_table_and_writes_its_plot(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    topology = tmp_path / "tiny.csv"
    topology.write_text("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                        "Strides,\nConvA,10,10,3,3,4,16,1,\nConvB,8,8,1,1,16,8,1,\n")
    arch = tmp_path / "conv.arch"
    arch.write_text(SYSTEM.format(run=f'conv_network(topology = "{topology}", density = 0.5, methods = "im2col,cpo", '
                                      'slice = 2, whole = true)'))
    assert main(["run", str(arch), "-q"]) == 0
    out = capsys.readouterr().out
    assert "slices of 2 steps scaled to each layer, the chosen method's on the whole layer" in out
    table = out[out.index("layer "):].splitlines()
    assert table[0].split()[:8] == ["layer", "input", "kernel", "S", "im2col", "Mcyc", "cpo", "Mcyc"]
    assert [line.split()[0] for line in table[2:4]] == ["ConvA", "ConvB"] and table[5].startswith("total")
    assert (tmp_path / "conv_tiny.png").exists()


@pytest.mark.parametrize("run, message", [
    ("conv_layer(height = 8, channels = 4, kernel = 3, filters = 12)",
     "layer 'layer': direct on the cluster needs filters a multiple of 8, got 12"),
    ("conv_layer(height = 8, channels = 4, kernel = 3, filters = 8, slice = -1)",
     "slice must be a number of steps (0: whole layers), got -1"),
    ("conv_layer(height = 8, channels = 4, kernel = 3, filters = 8, plot = 3)",
     "plot must be a file name (\"\" for none), got 3"),
    ("conv_layer(height = 8, channels = 4, kernel = 3, filters = 8, indirect = 1)",
     "indirect must be true or false, got 1"),
])
def test_bad_cluster_runs_exit_2_with_the_reason(tmp_path, capsys, run, message):
    code, err, _ = _run(tmp_path, capsys, run)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_cpo_gathers_through_indirect_streams_when_asked(tmp_path, capsys):
    run = "conv_layer(height = 8, channels = 4, kernel = 3, filters = 8, pad = 1, density = 0.5, methods = \"cpo\"{})"
    code, err, gathered = _run(tmp_path, capsys, run.format(", indirect = true"))
    assert code == 0, err  # the output was checked against numpy in the memory
    code, err, loaded = _run(tmp_path, capsys, run.format(""))
    assert code == 0, err
    cycles = [next(v for k, v in figures.items() if k.endswith("cpo_cycles")) for figures in (gathered, loaded)]
    assert cycles[0] != cycles[1]  # a different kernel ran


@pytest.mark.parametrize("flag", ["--progress", "--no-progress"])
def test_progress_shows_a_bar_per_layer_or_none(tmp_path, capsys, monkeypatch, flag):
    monkeypatch.chdir(tmp_path)
    code = main(["run", str(data_path("topologies") / "conv_network.arch"), "-p", 'layers="conv2,conv3"',
                 "-p", "slice=1", "-q", flag])
    err = capsys.readouterr().err
    assert code == 0, err
    # stderr is no terminal here: only the flag can ask for the bars (the layers' and the run's)
    assert ("layers: 100%" in err and "2/2" in err and "simulated" in err) == (flag == "--progress")
