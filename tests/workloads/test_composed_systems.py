"""Clusters on modelled memories and networks: the compiled cluster loop, running ahead to the
lookahead horizon of the connection graph, ends every composed system in the state the Python
model reaches, cycle for cycle and statistic for statistic, with the GEMM checked against
numpy in the DRAM's backing store."""

import pytest

from archmodel.kernel import Simulator
from archmodel.lang.elaborate import load
from archmodel.models.compute import SnitchCluster
from archmodel.paths import data_path

HBM_CHANNELS = """
import "snitch.arch"
import "dram.arch"

system ClusterOnHbmStack(m: int = 32, channels: int = 4) {
    clock clk = 1 GHz
    cluster : SnitchCluster(cores = 8)
    hbm : HBM2E(channels = channels, base_address = 0x8000_0000)
    cluster.ext_req -> hbm.req with link(latency = 2, width = 512 bit)
    hbm.resp -> cluster.ext_rsp with link(latency = 2, width = 512 bit)
    run gemm(m = m, n = 32, k = 32, streamed = true) on cluster
}
"""


def _run(path, engine: str, params: dict):
    elaborated = load(path, params=params)
    clusters = [part for part in elaborated.top.walk() if isinstance(part, SnitchCluster)]
    for cluster in clusters:
        cluster.engine = engine
    sim = Simulator(elaborated.top)
    result = sim.run()
    assert all(c.result_ok for c in clusters)
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats()
             if ".n_compiled" not in stat.path]
    return (result.reason, result.time_ps, stats), sum(c.n_compiled_cycles for c in clusters)


def _hbm_stack(tmp_path):
    path = tmp_path / "stack.arch"
    path.write_text(HBM_CHANNELS)
    for name in ("snitch.arch", "dram.arch"):
        (tmp_path / name).write_text((data_path("library") / name).read_text())
    return path


@pytest.mark.parametrize("system, params", [
    ("cluster_hbm", {"m": "32"}),
    ("memory_mesh", {}),
    ("memory_mesh", {"engine": '"fast"'}),
    ("hbm_stack", {}),
    ("clusters_mesh", {"m": "32"}),
    ("clusters_mesh", {"m": "32", "engine": '"fast"'}),
])
def test_a_composed_system_ends_alike_with_the_compiled_cluster_loop_and_the_python_model(system, params,
                                                                                           tmp_path):
    path = _hbm_stack(tmp_path) if system == "hbm_stack" else data_path("topologies") / f"{system}.arch"
    compiled, compiled_cycles = _run(path, "compiled", params)
    python, python_cycles = _run(path, "python", params)
    assert compiled == python
    assert compiled_cycles > 0 and python_cycles == 0
    assert compiled[0] == "stopped"  # the workload ended the run (a DRAM never falls quiet)


def _run_dram_engine(path, reference: bool, params: dict):
    """Run with the compiled cluster loop; the DRAM controllers cycle by cycle (``reference``)
    or scheduling ahead. Returns the end, every controller's commands, every statistic and the
    edges ticked."""
    from archmodel.models.memory import DramController

    elaborated = load(path, params=params)
    commands = {}
    for part in elaborated.top.walk():
        if isinstance(part, DramController):
            if reference:
                part.engine, part.lookahead_cycles = "python", 0
            log = commands[part.path] = []
            part.add_command_listener(lambda *fields, log=log: log.append(fields))
        elif isinstance(part, SnitchCluster):
            part.engine = "compiled"
    sim = Simulator(elaborated.top)
    result = sim.run()
    stats = [(stat.path, stat.summary()) for stat in sim.all_stats() if ".n_compiled" not in stat.path]
    return (result.reason, result.time_ps), commands, stats, result.ticks


@pytest.mark.parametrize("system, params", [
    ("cluster_hbm", {"m": "32"}),
    ("hbm_stack", {}),
    ("clusters_mesh", {"m": "32"}),
])
def test_the_dram_scheduling_ahead_in_a_composed_system_matches_it_cycle_by_cycle(system, params, tmp_path):
    path = _hbm_stack(tmp_path) if system == "hbm_stack" else data_path("topologies") / f"{system}.arch"
    reference = _run_dram_engine(path, True, params)
    ahead = _run_dram_engine(path, False, params)
    assert ahead[0] == reference[0]
    assert ahead[1] == reference[1]
    assert sum(map(len, ahead[1].values())) > 0
    assert ahead[2] == reference[2]
    # Fewer edges ticked: the controllers did schedule ahead (behind the 4-channel interleaver,
    # whose sends the lookahead cannot bound, only while a request waits on req that cannot
    # enter yet, which the compiled core does and the Python path does not).
    assert ahead[3] < reference[3]
