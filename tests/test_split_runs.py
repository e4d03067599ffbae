"""A system run as parts in processes of their own (``archmodel.kernel.partition``, ``archmodel run
--processes N``): exactly the whole run's statistics and end when the parts exchange nothing, the
whole run in one process when they do."""

import json

import pytest

from archmodel.cli import main
from archmodel.kernel import Simulator
from archmodel.kernel.partition import CROSSED, Declined, PartitionEdge, run_partitioned, split
from archmodel.lang.elaborate import load
from archmodel.paths import data_path

MANTICORE = data_path("topologies") / "manticore.arch"
CLUSTER_HBM = data_path("topologies") / "cluster_hbm.arch"
# two chiplets of two clusters each on two HBM pseudo-channels; the dies hold 1 and 2 tile rows
# of C, so die 0's workload ends about 270 ns before die 1's, and die 0 runs on to the whole end
SMALL = {"chiplets": "2", "quadrants": "1", "l1_radix": "2", "l2_radix": "1", "l3_radix": "1",
         "kernel": '"gemm_tiled"', "gemm_m": "96", "gemm_n": "64", "gemm_k": "64", "hbm_channels": "2"}


def _package(**changes):
    return load(MANTICORE, params={**SMALL, **changes}).top


def _figures(stats) -> dict:
    return {stat.path: stat.summary() for stat in stats}


def _split_run(top, processes: int = 2, limit_ps=None):
    return run_partitioned(top, split(top, processes), lambda tree, part: Simulator(tree, partition=part), limit_ps)


def test_split_cuts_the_tops_children_into_balanced_parts_the_first_holding_the_top():
    top = _package(chiplets="3")
    parts = split(top, 2)
    assert [part.describe() for part in parts] == ["Manticore.chiplet[0], Manticore.chiplet[2]",
                                                   "Manticore.chiplet[1]"]
    assert [part.holds_top for part in parts] == [True, False]
    assert len(split(top, 8)) == 3  # no more parts than children
    assert len(split(load(MANTICORE, params={"chiplets": "1"}).top, 2)) == 1


def test_each_part_sees_a_stand_in_at_the_channels_to_the_other():
    top = _package()
    sim = Simulator(top, partition=split(top, 2)[0])
    edges = [c for c in sim.components if isinstance(c, PartitionEdge)]
    assert [edge.remote_path for edge in edges] == ["Manticore.chiplet[1].node"]
    # both die-to-die links each way: requests to die 1 and its responses, and die 1's to die 0
    assert len(edges[0].inputs()) == 2 and len(edges[0].outputs()) == 2
    assert not any(c.path.startswith("Manticore.chiplet[1]") for c in sim.components if c not in edges)


def test_a_split_run_of_independent_dies_gives_the_whole_runs_end_and_every_statistic():
    whole = _package()
    sim = Simulator(whole)
    result = sim.run()
    run = _split_run(_package())
    assert not isinstance(run, Declined), run
    assert (run.reason, run.time_ps) == (sim.stopped, result.time_ps) == ("workload finished", 19_642_000)
    # die 0 finished first and ran on to the whole run's end (its refreshes meanwhile included)
    assert run.part_ends_ps == (19_370_000, 19_642_000)
    want = _figures(sim.all_stats())
    assert len(want) == 704
    assert {path: stat.summary() for path, stat in run.statistics.items()} == want


def test_a_split_run_to_a_limit_ends_there_with_the_whole_runs_statistics():
    sim = Simulator(_package())
    sim.run(until_ps=7_000_000)
    run = _split_run(_package(), limit_ps=7_000_000)
    assert (run.reason, run.time_ps, run.part_ends_ps) == ("limit", 7_000_000, (7_000_000, 7_000_000))
    assert {path: stat.summary() for path, stat in run.statistics.items()} == _figures(sim.all_stats())


def test_a_message_to_another_part_stops_that_part_and_the_split_run_declines():
    top = load(CLUSTER_HBM).top
    parts = split(top, 2)
    cluster_part = next(part for part in parts if part.describe() == "ClusterOnHbm.cluster")
    sim = Simulator(top, partition=cluster_part)
    sim.run()
    assert sim.stopped == CROSSED
    edge = next(c for c in sim.components if isinstance(c, PartitionEdge))
    assert edge.crossed == "ClusterOnHbm.cluster.ext_req -> ClusterOnHbm.hbm.ctrl.req"
    declined = _split_run(load(CLUSTER_HBM).top)
    assert isinstance(declined, Declined)


def _cli_stats(tmp_path, name: str, *options) -> dict:
    path = tmp_path / f"{name}.json"
    params = [text for key, value in SMALL.items() for text in ("-p", f"{key}={value}")]
    assert main(["run", str(MANTICORE), *params, "-q", "--no-progress", "--stats", str(path), *options]) == 0
    return json.loads(path.read_text())


def test_run_with_processes_writes_the_one_process_runs_statistics_and_report(tmp_path, capsys):
    one = _cli_stats(tmp_path, "one")
    two = _cli_stats(tmp_path, "two", "--processes", "2")
    assert two["statistics"] == one["statistics"]
    assert two["hierarchy"] == one["hierarchy"]
    assert (two["manifest"]["outcome"], two["manifest"]["simulated_ps"]) == ("workload finished", 19_642_000)
    assert "workload finished at 19.642 us" in capsys.readouterr().err


@pytest.mark.parametrize("waveform", [False, True])
def test_parts_that_talk_or_a_waveform_run_in_one_process_and_say_so(tmp_path, capsys, waveform):
    path = tmp_path / "s.json"
    options = ["--vcd", str(tmp_path / "w.vcd")] if waveform else []
    assert main(["run", str(CLUSTER_HBM), "-q", "--no-progress", "--stats", str(path), *options]) == 0
    capsys.readouterr()
    want = json.loads(path.read_text())["statistics"]
    assert main(["run", str(CLUSTER_HBM), "-q", "--no-progress", "--stats", str(path), *options,
                 "--processes", "2"]) == 0
    assert "note: running in one process" in capsys.readouterr().err
    assert json.loads(path.read_text())["statistics"] == want


def test_the_parts_say_how_far_they_have_run_while_each_runs_in_one_call():
    reached = []
    top = _package()
    run = run_partitioned(top, split(top, 2), lambda tree, part: Simulator(tree, partition=part),
                          on_progress=reached.append)
    assert reached and reached == sorted(reached)
    assert reached[-1] == min(run.part_ends_ps)
