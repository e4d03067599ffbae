"""The network systems run from the command line; sweeps write a CSV and a PNG; waveforms show
per-port handshakes and VC occupancy."""

import csv

import pytest

from archmodel.cli import main
from archmodel.paths import data_path

TOPOLOGIES = ["mesh8x8", "torus4x4", "fattree", "dragonfly"]


@pytest.mark.parametrize("name", TOPOLOGIES)
def test_reference_systems_elaborate(name, capsys):
    path = data_path("topologies") / f"{name}.arch"
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {path}: system ")


def test_torus_runs_and_its_waveform_shows_handshakes_and_vc_occupancy(tmp_path, capsys):
    vcd = tmp_path / "torus.vcd"
    path = data_path("topologies") / "torus4x4.arch"
    assert main(["run", str(path), "-q", "-p", "rate=0.2", "--vcd", str(vcd), "--trace", "Torus4x4.net.router[5].*"]) == 0
    text = vcd.read_text()
    header = text.split("$enddefinitions")[0]
    for signal in ("occ0_0", "occ4_1", "valid", "ready", "fire", "occupancy"):
        assert f" {signal} $end" in header
    assert "$scope module out[4] $end" in header  # each port's channel is traced under its sender
    body = text.split("$enddefinitions")[1]
    occ = next(line.split()[3] for line in header.splitlines() if line.endswith(" occ1_0 $end"))
    assert any(line.startswith("b") and line.endswith(" " + occ) and line != f"b0 {occ}" for line in body.splitlines())


def test_router_nodes_of_a_topology_statement_deliver_every_packet(capsys):
    path = data_path("library") / "noc_mesh.arch"
    assert main(["run", str(path), "--top", "RouterMesh", "-p", "packets=20"]) == 0
    table = capsys.readouterr().out
    delivered = sum(int(line.split()[1]) for line in table.splitlines() if ".delivered " in line)
    assert delivered == 16 * 20


def test_sweep_writes_csv_and_png(tmp_path, capsys):
    # The latency-throughput curve of a network swept over its rate, drawn by default; the
    # points run in this process here (tests/experiments run them on Dask workers).
    arch = tmp_path / "small.arch"
    arch.write_text('system Small(rate: float = 0.1) {\n'
                    '    net : Noc(topology = "mesh(3, 3)", vcs = 2, traffic = "uniform", rate = rate,\n'
                    '              warmup_periods = 1, sample_period = 300)\n}\n')
    out = tmp_path / "curve.csv"
    assert main(["sweep", str(arch), "--sweep", "rate=0.1:0.3:0.1", "--csv", str(out), "--workers", "0"]) == 0
    rows = list(csv.DictReader(out.open()))
    assert [float(r["rate"]) for r in rows] == [0.1, 0.2, 0.3]
    assert [r["outcome"] for r in rows] == ["measured"] * 3
    assert all(abs(float(r["Small.net.accepted"]) - float(r["rate"])) < 0.05 for r in rows)
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "saturation (latency 2 x " in capsys.readouterr().out


def test_sweep_rejects_a_range_without_a_step(tmp_path, capsys):
    assert main(["sweep", "x.arch", "--sweep", "rate=0.1:0.2"]) == 2
    assert capsys.readouterr().err == (
        "error: --sweep rate is a range without a step: a grid needs NAME=START:STOP:STEP or NAME=V1,V2,...\n"
        "hint: give a step, or draw random points from the range with --samples N\n")


def test_the_fast_engine_runs_from_an_arch_file_with_the_same_measurements(capsys):
    path = data_path("topologies") / "torus4x4.arch"
    figures = []
    for engine in ("components", "fast"):
        assert main(["run", str(path), "-p", "rate=0.2", "-p", f'engine="{engine}"']) == 0
        table = capsys.readouterr().out
        figures.append([line.split() for line in table.splitlines() if line.startswith("Torus4x4.net.")])
    # the whole table of the network: its figures and every router's and interface's statistics
    names = [row[0] for row in figures[0]]
    assert "Torus4x4.net.packet_latency" in names and "Torus4x4.net.accepted" in names
    assert "Torus4x4.net.router[15].va_stalls" in names and "Torus4x4.net.ni[15].delivered" in names
    assert figures[0] == figures[1]
