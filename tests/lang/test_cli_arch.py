"""check / show / run of .arch files; the bundled files elaborate and show stably (golden)."""

import json
import os
from pathlib import Path

import pytest

from archmodel.cli import main
from archmodel.paths import data_path

GOLDEN = Path(__file__).parent / "show"
BUNDLED = sorted(data_path("topologies").glob("*.arch"))


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_systems_check_and_show_golden(path, capsys, monkeypatch):
    monkeypatch.chdir(path.parent)
    assert main(["check", path.name]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {path.name}: system ")
    assert main(["show", path.name]) == 0
    shown = capsys.readouterr().out
    golden = GOLDEN / f"{path.stem}.txt"
    if os.environ.get("ARCH_UPDATE_GOLDEN"):
        golden.write_text(shown)
    assert shown == golden.read_text()


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_bundled_systems_run_to_completion(path, tmp_path, capsys):
    stats = tmp_path / "stats.json"
    assert main(["run", str(path), "--stats", str(stats), "-q", "--vcd", str(tmp_path / "w.vcd")]) == 0
    document = json.loads(stats.read_text())
    # how it ended: by itself, or a model saying its work is done (never a limit or a failure)
    assert document["manifest"]["outcome"] not in ("limit", "failed", "unstable", "interrupted")
    assert document["manifest"]["input_sha256"]


def test_pipeline_delivers_every_message_and_params_override(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # its trace statement writes waves/Pipeline.vcd here
    stats = tmp_path / "s.json"
    path = str(data_path("topologies") / "pipeline.arch")
    assert main(["run", path, "-p", "messages=17", "-p", "hop=3 ns", "--stats", str(stats), "-q"]) == 0
    values = json.loads(stats.read_text())["statistics"]
    assert values["Pipeline.sink.received"]["value"] == 17


def test_show_writes_dot(tmp_path, capsys):
    dot = tmp_path / "g.dot"
    assert main(["show", str(data_path("topologies") / "arbiter_tree.arch"), "--dot", str(dot)]) == 0
    text = dot.read_text()
    assert text.startswith("digraph archmodel {")
    assert sum(1 for line in text.splitlines() if '" -> "' in line) == 15


def test_top_selects_a_module_and_bad_top_is_exit_2(tmp_path, capsys):
    path = str(data_path("library") / "stages.arch")
    assert main(["check", path, "--top", "ArbiterTree", "-p", "levels=2"]) == 2  # its ports are unconnected
    assert "required input port 'inp' is not connected on 4 ports" in capsys.readouterr().err
    assert main(["check", path, "--top", "Stag"]) == 2
    assert capsys.readouterr().err == ("error: --top: no module or system named 'Stag'\n"
                                       "hint: did you mean 'Stage'?\n1 error\n")


def test_check_of_a_missing_file_and_a_builder_target(capsys):
    assert main(["check", "nowhere.arch"]) == 2
    assert capsys.readouterr().err == "error: no such file: nowhere.arch\n"
    assert main(["check", "tests.cli_systems:pair"]) == 2
    assert "is not a .arch file" in capsys.readouterr().err


def test_trace_statements_select_signals(tmp_path, capsys):
    vcd = tmp_path / "p.vcd"
    assert main(["run", str(data_path("topologies") / "pipeline.arch"), "--vcd", str(vcd), "-q"]) == 0
    text = vcd.read_text()
    assert "$scope module src $end" in text and "$scope module snk" not in text


LIBRARY = sorted(data_path("library").glob("*.arch"))


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: p.stem)
def test_every_bundled_library_checks_clean_module_by_module(path, capsys, monkeypatch):
    monkeypatch.chdir(path.parent)
    assert main(["check", path.name]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: {path.name}: library of ")
    modules = [line.split()[1].split("(")[0] for line in path.read_text().splitlines() if line.startswith("module ")]
    assert out.rstrip().endswith("(" + ", ".join(modules) + ")")


def test_a_library_reports_every_broken_module_once_with_its_location(tmp_path, capsys):
    lib = tmp_path / "lib.arch"
    lib.write_text("module Good(depth: int = 2) {\n    q : Fifo(depth = depth)\n    expose q.inp as inp\n"
                   "    expose q.out as out\n}\n"
                   "module Bad() {\n    q : Fifo(dpeth = 2)\n}\n"
                   "module UsesBad() {\n    b : Bad()\n}\n")
    assert main(["check", str(lib)]) == 2
    err = capsys.readouterr().err
    assert err.count("error: 'Fifo' has no parameter 'dpeth'") == 1
    assert f"{lib}:7:14: error: 'Fifo' has no parameter 'dpeth'" in err
