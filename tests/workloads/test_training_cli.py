"""train_step from the command line: the bundled cluster runs, writes a VCD of one step, and
bad input (a model that does not fit, a disconnected cluster, unknown names) is an error
with the source line, exit 2."""

from pathlib import Path

from archmodel.cli import main
from archmodel.paths import data_path

from ..trace.designs import Waveform

CLUSTER = str(data_path("topologies") / "training_cluster.arch")
SMALL = ["-p", 'model="1.3b"']


def test_the_bundled_cluster_reports_the_step(capsys):
    assert main(["run", CLUSTER] + SMALL + ["-p", 'schedule="zero3"']) == 0
    out = capsys.readouterr().out
    for name in ("step_time", "compute_time", "exposed_comm", "overlapped_comm", "peak_memory",
                 "inter_node_bytes", "intra_node_bytes", "host_pcie_bytes", "nic_pcie_bytes"):
        assert f"TrainingCluster.step.{name} " in out


def test_the_waveform_shows_every_gpus_phase_and_every_links_busy_state(tmp_path, capsys):
    vcd = tmp_path / "step.vcd"
    assert main(["run", CLUSTER, "-q", "--vcd", str(vcd), "-p", "waves=true"] + SMALL) == 0
    wave = Waveform(vcd)
    for n in range(2):
        for g in range(4):
            gpu = f"TrainingCluster.node[{n}].gpu.node[{g}]"
            assert f"{gpu}.phase" in wave.vars and f"{gpu}.comm" in wave.vars
            assert all(f"{gpu}.out{i}_busy" in wave.vars for i in range(5))
    phases = [value for _, value in wave.edges("TrainingCluster.node[1].gpu.node[2].phase")]
    forward = [f"fwd_L{i}" for i in range(24)] + ["fwd_head"]
    backward = ["bwd_head"] + [f"bwd_L{i}" for i in reversed(range(24))]
    assert [p for p in phases if p != "idle"] == forward + backward
    assert phases[-1] == "idle"
    # The NIC-to-NIC link (port 4, after the four GPUs) is busy and idle in turns, and busy
    # only while some GPU waits for a gather or reduce-scatter it carries.
    busy = wave.edges("TrainingCluster.fabric.node[0].out4_busy")
    assert [v for _, v in busy][:4] == [0, 1, 0, 1]
    comms = [f"TrainingCluster.node[{n}].gpu.node[{g}].comm" for n in range(2) for g in range(4)]
    for start, value in busy:
        if value == 1:
            assert any(wave.at(name, start) != "" for name in comms), start
    assert any("AG_fwd_L0_inter" in value for _, value in wave.edges(comms[0]))
    assert Path(vcd.with_suffix(".gtkw")).exists()


def error_of(capsys, argv) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return captured.err


def test_a_model_that_does_not_fit_says_by_how_many_bytes(capsys):
    err = error_of(capsys, ["run", CLUSTER, "-p", "gpu_memory=8 GiB"])
    assert err == (
        f"{CLUSTER}:39:9: error: model '7b' does not fit TrainingCluster.node[0].gpu.node[0] under schedule "
        "'fcdp': the step needs 16,540,672,000 bytes (15.40 GiB) of its 8,589,934,592 (8.00 GiB), "
        "7,950,737,408 bytes too many\n"
        "    run train_step(model = model, schedule = schedule, placement = placement,\n"
        "        ^\n"
        "hint: held state 12.40 GiB; use more GPUs or prefetch = 0\n"
        "1 error\n")


def test_a_cluster_with_a_disconnected_node_is_an_error(tmp_path, capsys):
    path = tmp_path / "split.arch"
    path.write_text('import "training.arch"\n\n'
                    "system Split {\n"
                    "    node[2] : GpuNode(gpus = 2)\n"
                    "    left : topology clusters(1, 1, local_ports = 2) of Nic()\n"
                    "    right : topology clusters(1, 1, local_ports = 2) of Nic()\n"
                    "    node[0].to_nic -> left.node[0].inp[0 .. 2]\n"
                    "    left.node[0].out[0 .. 2] -> node[0].from_nic\n"
                    "    node[1].to_nic -> right.node[0].inp[0 .. 2]\n"
                    "    right.node[0].out[0 .. 2] -> node[1].from_nic\n"
                    '    run train_step(model = "1.3b") on node[*]\n'
                    "}\n")
    err = error_of(capsys, ["run", str(path)])
    assert err.splitlines()[0] == (
        f"{path}:11:9: error: Split.node[0].gpu.node[0] cannot reach Split.node[1].gpu.node[0]: no path over "
        "the links (2 of the other 3 GPUs are out of reach)")
    assert err.splitlines()[-2] == ("hint: every node must be connected to the others: check the fabric "
                                    "topology and the wiring of each node to it")


def test_unknown_names_suggest_the_closest(capsys):
    err = error_of(capsys, ["run", CLUSTER, "-p", 'schedule="fcpd"'])
    assert "error: unknown schedule 'fcpd'" in err
    assert "hint: did you mean 'fcdp'? schedules: zero3, fcdp, fcdp_peft" in err
    err = error_of(capsys, ["run", CLUSTER, "-p", 'model="13"'])
    assert "error: unknown model '13'" in err and "did you mean '13b'?" in err
    err = error_of(capsys, ["run", CLUSTER, "-p", 'placement="gpu"'])
    assert "error: unknown placement 'gpu'" in err and "hint: placements: host, auto" in err


def test_unknown_arguments_of_train_step(tmp_path, capsys):
    path = tmp_path / "c.arch"
    path.write_text(Path(CLUSTER).read_text().replace("placement = placement,", "placemnt = placement,"))
    err = error_of(capsys, ["check", str(path)])
    assert "error: train_step has no argument 'placemnt'" in err
    assert "hint: did you mean 'placement'?" in err
