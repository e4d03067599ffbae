"""``archmodel list``: the catalogue and the parts in plain text, one model's datasheet, the
bundled systems with their descriptions; ``--help`` in plain text too."""

import subprocess
import sys

import pytest

from archmodel.cli import main
from archmodel.cli.listing import plain
from archmodel.kernel import Tree, catalogue, parts
from archmodel.lang import load
from archmodel.lang.structure import ModuleComponent
from archmodel.paths import data_path

SYSTEMS = sorted(data_path("topologies").glob("*.arch"))


def test_plain_drops_literals_and_roles_as_sphinx_shows_them():
    assert plain("a ``depth``-deep :class:`~.network.Noc` of :func:`routers <.make>` (:mod:`.lang`)") == \
        "a depth-deep Noc of routers (lang)"


def test_the_catalogue_and_its_parts_print_without_markup():
    # a process of its own: what the catalogue holds does not depend on what the tests imported
    done = subprocess.run([sys.executable, "-m", "archmodel.cli", "list"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "``" not in done.stdout and ":class:`" not in done.stdout
    assert "Fifo                   A first-in first-out queue of up to depth messages." in lines
    split = lines.index("parts, built by models, workloads and the test harness (show prints them; "
                        "list NAME documents one):")
    assert lines[split - 1] == ""
    assert [line.split()[0] for line in lines[:split - 1]] == sorted(line.split()[0] for line in lines[:split - 1])
    assert [line.split()[0] for line in lines[split + 1:]] == [
        "CompiledMemoryEngine", "CompiledNocEngine", "ConvLayerSizes", "ConvReport", "NocEngine", "NocMonitor",
        "StepReport", "StreamSink", "StreamSource"]


def test_a_part_is_documented_as_one_and_a_misspelled_name_gets_a_hint(capsys):
    assert main(["list", "NocMonitor"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["NocMonitor  (archmodel.models.network.network)",
                         "  a part that a model, a workload or the test harness builds: not instanced by name "
                         "in a .arch file", ""]
    assert lines[3].startswith("  Watches a Noc: ends the measurement")
    assert main(["list", "NocMonitr"]) == 2
    assert capsys.readouterr().err == "error: no model named 'NocMonitr'\nhint: did you mean 'NocMonitor'?\n"
    assert main(["list", "Fifo"]) == 0
    assert "``" not in capsys.readouterr().out


def test_every_model_show_prints_for_a_bundled_system_is_one_list_knows(capsys):
    assert main(["list"]) == 0  # loads the catalogue and the parts as list does
    known = set(catalogue()) | set(parts())
    shown = {comp.model_name for path in SYSTEMS for comp in Tree(load(path).top).components
             if not isinstance(comp, ModuleComponent)}
    assert "NocMonitor" in shown and shown <= known, shown - known


def test_systems_are_listed_by_name_with_their_description(capsys):
    assert main(["list", "--systems"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert [line.split()[0] for line in lines] == [path.stem for path in SYSTEMS]
    assert ["snitch_cluster", "One Manticore cluster running GEMM with operands streamed by DMA from an ideal memory."] in [
            line.split(None, 1) for line in lines]
    assert captured.err == f"run one with: archmodel run NAME (the files are in {data_path('topologies')})\n"
    assert main(["list", "Fifo", "--systems"]) == 2


def test_a_bundled_system_runs_checks_and_shows_by_name_from_anywhere(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = data_path("topologies") / "pipeline.arch"
    assert main(["check", "pipeline"]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {path}: system Pipeline, ")
    assert main(["run", "pipeline", "-q", "--stats", "s.json"]) == 0
    assert capsys.readouterr().err.startswith("stopped at ")
    assert main(["show", "pipeline"]) == 0
    assert capsys.readouterr().out.startswith(f"system Pipeline ({path})")
    assert main(["run", "pipelin"]) == 2
    assert capsys.readouterr().err == ("error: 'pipelin' is not a .arch file, a builder MODULE:FUNCTION or a "
                                       "bundled system\nhint: did you mean 'pipeline'?\n")


@pytest.mark.parametrize("command", [[], ["run"], ["check"], ["show"], ["list"], ["sweep"]])
def test_help_is_plain_text(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out
    assert text.startswith("usage: archmodel") and "``" not in text and ":class:" not in text
