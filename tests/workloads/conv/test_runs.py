"""Lowerings back to back on one cluster (runs.py), on the memory the .arch file binds: each run
equals the same run on a fresh system, the traffic goes through the bound memory, an HBM takes
at least the ideal memory's time, and the run's summary counts the cycles simulated."""

import json
import re

import pytest

from archmodel.cli import main
from archmodel.kernel import Simulator
from archmodel.workloads.conv import METHODS, Layer, activations, weights
from archmodel.workloads.conv.kernels import setup_conv
from archmodel.workloads.conv.tiling import plan
from archmodel.workloads.conv.runs import ClusterRuns, NetworkSchedule, slice_of
from archmodel.workloads.snitch import build_system

LAYERS = [Layer("3x3", 8, 8, 8, 3, 3, 16, 1, 1, 1), Layer("1x1_s2", 7, 7, 8, 1, 1, 8, 2),
          Layer("1x5", 6, 6, 4, 1, 5, 8, 1, 0, 2)]
CLUSTER = {"tcdm_bytes": 24 * 1024}  # several bands and chunks on these shapes


def _fresh(layer, method, x, w, slice_steps, engine):
    """One run alone on a new system: (cycles, FP operations, DMA bytes)."""
    top = build_system(memory_bytes=4 << 20, engine=engine, **CLUSTER)
    cluster = top.child("cluster")
    tiling = plan(layer, method, cluster.tcdm_bytes, cluster.cores)
    setup_conv(cluster, top.child("memory"), layer, method, x, w, tiling=tiling, **slice_of(tiling, slice_steps))
    Simulator(top).run()
    assert cluster.result_ok
    return (cluster.run_cycles(), sum(c.n_fpu for c in cluster.compute_cores),
            cluster.dma.n_in + cluster.dma.n_out)


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_runs_back_to_back_equal_each_run_alone(engine):
    # a core loaded again starts as from reset: no SSR repeat count, FREP body or I$ line
    # of the program before changes the next one's time
    slice_steps = 2
    schedule = NetworkSchedule(LAYERS, 0.4, METHODS, seed=5, slice_steps=slice_steps)
    top = build_system(memory_bytes=4 << 20, engine=engine, **CLUSTER)
    runs = ClusterRuns(top.child("cluster"), schedule, top.child("memory"))
    runs.begin()
    Simulator(top).run()
    assert len(schedule.rows) == len(LAYERS) and runs.n_jobs == len(LAYERS) * len(METHODS)
    cycles = 0
    for k, (layer, row) in enumerate(zip(LAYERS, schedule.rows)):
        x, w = activations(layer, 0.4, 5 + k), weights(layer, 5 + k)
        for method, timing in row.methods.items():
            alone, fpu, dma = _fresh(layer, method, x, w, slice_steps, engine)
            assert timing.slice_cycles == alone, (layer.name, method)
            assert timing.fpu_utilisation == pytest.approx(100 * fpu / (8 * alone)), (layer.name, method)
            assert timing.dma_bytes == round(dma / timing.fraction), (layer.name, method)
            cycles += alone
    assert runs.n_cycles == cycles == top.child("cluster").run_cycles()


def test_a_wrong_output_in_a_later_run_stops_it():
    from archmodel.kernel import ModelAssertion
    schedule = NetworkSchedule(LAYERS[:1], 0.4, ("im2col", "cpo"), slice_steps=None)
    top = build_system(memory_bytes=4 << 20, **CLUSTER)
    cluster, memory = top.child("cluster"), top.child("memory")

    def spoil(row):
        raise AssertionError("not reached")

    runs = ClusterRuns(cluster, schedule, memory, on_layer=spoil)
    runs.begin()
    # the first run (im2col) is checked and passes; spoil the kernel the second (cpo) places
    cluster.on_finish(lambda cl: memory.backdoor_write(memory.base_address, b"\x00" * 64)
                      if runs.job is not None and runs.job.method == "cpo" else None)
    with pytest.raises(ModelAssertion, match="3x3 cpo: result differs from numpy"):
        Simulator(top).run()


def test_im2col_and_mec_tiles_are_gathered_by_the_dma_from_the_padded_input():
    layer = Layer("one_tile", 6, 6, 8, 3, 3, 8, 1, 1, 1)  # one band, one chunk, one block
    x, w = activations(layer, None), weights(layer)
    for method, transfers in (("im2col", layer.out_h * layer.kernel_h),  # a 2D transfer per (output row, kernel row)
                              ("mec", min(layer.padded_h, layer.out_w)),  # per input row or output column
                              ("direct", 1)):
        top = build_system(memory_bytes=4 << 20)
        cluster = top.child("cluster")
        placed = setup_conv(cluster, top.child("memory"), layer, method, x, w)
        assert len(placed.tiling.bands) == placed.tiling.chunks == placed.tiling.blocks == 1
        assert placed.outside_input_bytes == 8 * layer.padded_h * layer.padded_w * layer.channels
        Simulator(top).run()
        assert cluster.result_ok
        assert cluster.dma.n_done == 1 + transfers + 1, method  # the kernel, the input, the output


SYSTEM = """import "snitch.arch"
import "dram.arch"
system Conv {{
    clock clk = 1 GHz
    cluster : SnitchCluster(cores = 8, tcdm_bytes = 32 KiB)
    {memory}
    cluster.ext_req -> mem.req with link(latency = 1, width = 512 bit)
    mem.{rsp} -> cluster.ext_rsp with link(latency = 1, width = 512 bit)
    run conv_network(topology = "{topology}", padding = "same", density = 0.3, slice = {slice}, plot = "") on cluster
}}
"""
MEMORIES = {"ideal": ("mem : FixedLatencyMemory(bytes_per_cycle = 64, latency_cycles = 1)", "rsp"),
            "hbm": ("mem : HBM2E_PC(base_address = 0x8000_0000)", "resp")}


def _cli(tmp_path, capsys, memory, slice_steps):
    topology = tmp_path / "tiny.csv"
    topology.write_text("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                        "Strides,\nConvA,10,10,3,3,4,16,1,\nConvB,8,8,1,1,16,8,2,\n")
    arch = tmp_path / f"{memory}.arch"
    text, rsp = MEMORIES[memory]
    arch.write_text(SYSTEM.format(memory=text, rsp=rsp, topology=topology, slice=slice_steps))
    stats = tmp_path / f"{memory}.json"
    code = main(["run", str(arch), "--stats", str(stats)])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(stats.read_text())["statistics"], out


def test_on_hbm_every_run_takes_at_least_the_ideal_memorys_time(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    figures = {memory: _cli(tmp_path, capsys, memory, 0)[0] for memory in MEMORIES}
    for layer in ("ConvA", "ConvB"):
        for method in METHODS:
            name = f"Conv.conv.{layer}.{method}_cycles"
            assert figures["hbm"][name]["value"] >= figures["ideal"][name]["value"], name
    assert figures["hbm"]["Conv.conv.chosen_cycles"]["value"] > figures["ideal"]["Conv.conv.chosen_cycles"]["value"]


@pytest.mark.parametrize("memory", MEMORIES)
def test_the_traffic_goes_through_the_bound_memory_and_the_summary_counts_the_runs(tmp_path, capsys, monkeypatch,
                                                                                  memory):
    monkeypatch.chdir(tmp_path)
    figures, out = _cli(tmp_path, capsys, memory, 2)
    moved = figures["Conv.conv.simulated_dma_bytes"]["value"]
    memory_path = "Conv.mem" if memory == "ideal" else "Conv.mem.ctrl"
    assert moved > 0
    served = figures[f"{memory_path}.bytes_read"]["value"] + figures[f"{memory_path}.bytes_written"]["value"]
    if memory == "ideal":
        assert served == moved
    else:  # the DRAM controller's write queue (32 bursts of 32 B) may not have drained when the run ends
        assert moved - 32 * 32 <= served <= moved
    assert figures["Conv.conv.runs"]["value"] == 2 * len(METHODS)
    cycles = figures["Conv.conv.simulated_cycles"]["value"]
    summary = re.search(r"workload finished at [^:]+: ([\d,]+) cycles of clk \(1 GHz\) in [\d.]+ s wall, ([\d,]+) "
                        r"cycles/s", out.err)
    assert summary, out.err
    assert int(summary[1].replace(",", "")) == cycles
    assert int(summary[2].replace(",", "")) > 0
    assert f"{2 * len(METHODS)} runs, {cycles:,} cycles simulated, every output checked against numpy" in out.out
