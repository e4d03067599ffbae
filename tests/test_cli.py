"""The command line: run, list, show; exit codes; statistics JSON with its manifest."""

import json
import subprocess
import sys

from archmodel.cli import main


def test_run_prints_statistics_and_writes_json_with_a_manifest(tmp_path, capsys):
    stats = tmp_path / "stats.json"
    code = main(["run", "tests.cli_systems:pair", "-p", "count=7", "--stats", str(stats)])
    out, err = capsys.readouterr()
    assert code == 0
    assert "pair.c.received" in out and "messages" in out
    assert "quiescent at 9 ns" in err
    document = json.loads(stats.read_text())
    assert document["statistics"]["pair.c.received"]["value"] == 7
    manifest = document["manifest"]
    assert manifest["build_parameters"] == {"count": 7}
    assert manifest["parameters"]["pair.p"] == {"count": 7}
    assert manifest["seed"] == 0 and manifest["outcome"] == "quiescent"
    assert manifest["input_sha256"] and manifest["archmodel_version"]


def test_cycles_and_until_limit_the_run(tmp_path, capsys):
    stats = tmp_path / "s.json"
    assert main(["run", "tests.cli_systems:pair", "-p", "count=100", "--cycles", "10",
                 "--stats", str(stats), "-q"]) == 0
    # Latency 2: messages sent at cycles 0..9 and received at 2..9 within 10 cycles.
    assert json.loads(stats.read_text())["statistics"]["pair.c.received"]["value"] == 8
    assert main(["run", "tests.cli_systems:pair", "-p", "count=100", "--until", "20ns",
                 "--stats", str(stats), "-q"]) == 0
    assert json.loads(stats.read_text())["statistics"]["pair.c.received"]["value"] == 19
    assert "limit at 20 ns" in capsys.readouterr().err


def test_same_seed_same_statistics_different_seed_different(tmp_path):
    def run(seed, name):
        path = tmp_path / name
        assert main(["run", "tests.cli_systems:random_pair", "--seed", str(seed), "--stats", str(path), "-q"]) == 0
        return path.read_text()

    assert run(3, "a.json") == run(3, "b.json")


def test_deadlock_exits_1_and_still_writes_statistics(tmp_path, capsys):
    stats = tmp_path / "s.json"
    assert main(["run", "tests.cli_systems:deadlock", "--stats", str(stats), "-q"]) == 1
    err = capsys.readouterr().err
    assert "error: deadlock at 2 ns" in err and "wait cycle: stuck.a -> stuck.b -> stuck.a" in err
    assert json.loads(stats.read_text())["manifest"]["outcome"] == "failed"


def test_bad_input_exits_2_with_one_clear_message(capsys):
    assert main(["run", "tests.cli_systems:brokn"]) == 2
    assert capsys.readouterr().err == (
        "error: module 'tests.cli_systems' has no function 'brokn'\nhint: did you mean 'broken'?\n")
    assert main(["run", "tests.cli_systems:broken"]) == 2
    assert capsys.readouterr().err == "error: broken.p: parameter 'count' must be at least 0, got -1\n"
    assert main(["run", "tests.cli_systems:pair", "-p", "colour=3"]) == 2
    assert "unexpected keyword argument 'colour'" in capsys.readouterr().err
    assert main(["run", "tests.cli_systems:not_a_component"]) == 2
    assert capsys.readouterr().err == "error: tests.cli_systems:not_a_component returned int, not a Component\n"
    assert main(["run", "tests.cli_systems:pair", "--until", "4 GHz"]) == 2
    assert "error: '4 GHz' is not a time" in capsys.readouterr().err
    assert main(["run", "no_such_module_xyz:build"]) == 2
    assert "cannot import module 'no_such_module_xyz'" in capsys.readouterr().err


def test_console_script_prints_no_traceback():
    result = subprocess.run([sys.executable, "-m", "archmodel.cli", "run", "tests.cli_systems:broken"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("error: broken.p: parameter 'count'")


def test_show_prints_the_hierarchy(capsys):
    assert main(["show", "tests.cli_systems:pair", "-p", "count=3"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:3] == ["pair : Component() @ clk", "  p : Producer(count=3) @ clk",
                                    "  c : Consumer() @ clk"]
    assert "channels: 1" in out


def test_stats_as_csv_with_the_manifest_on_a_comment_line(tmp_path):
    import csv

    path = tmp_path / "stats.csv"
    assert main(["run", "tests.cli_systems:pair", "-p", "count=4", "--stats", str(path), "-q"]) == 0
    first, *rest = path.read_text().splitlines()
    assert first.startswith("# manifest ") and json.loads(first[len("# manifest "):])["seed"] == 0
    rows = list(csv.DictReader(rest))
    assert rows[0]["statistic"] == "pair.c.received"
    assert (rows[0]["value"], rows[0]["unit"]) == ("4", "messages")


def test_a_trace_selection_that_matches_nothing_is_bad_input_before_the_run(tmp_path, capsys):
    vcd = tmp_path / "x.vcd"
    assert main(["run", "tests.cli_systems:pair", "--vcd", str(vcd), "--trace", "pair.nothing*", "-q"]) == 2
    assert capsys.readouterr().err == ("error: trace selection 'pair.nothing*' matches no signal\n"
                                       "hint: did you mean 'pair.p.out.*'?\n")
