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
    assert capsys.readouterr().err == (
        "error: broken.p: parameter 'count' must be at least 0, got -1\n"
        "hint: count: int = 5 -- messages to send\n")
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


def _pipeline(tmp_path):
    """A copy of the bundled pipeline system (and the module it imports) in ``tmp_path``."""
    from archmodel.paths import data_path
    for folder, name in (("topologies", "pipeline.arch"), ("library", "stages.arch")):
        (tmp_path / name).write_text((data_path(folder) / name).read_text())
    return tmp_path / "pipeline.arch"


def test_an_output_that_would_replace_an_input_or_another_output_is_bad_input_before_the_run(tmp_path, capsys):
    arch = _pipeline(tmp_path)
    original = arch.read_text()
    stats = tmp_path / "s.json"
    cases = [
        (["--stats", str(arch)], f"error: --stats {arch} would overwrite the input {arch}"),
        (["--vcd", str(arch)], f"error: --vcd {arch} would overwrite the input {arch}"),
        (["--vcd", str(tmp_path / "x.gtkw")],
         f"error: the waveform's save file {tmp_path / 'x.gtkw'} is also --vcd: one would overwrite the other"),
        (["--vcd", str(tmp_path / "w.vcd"), "--stats", str(tmp_path / "w.gtkw")],
         f"error: --stats {tmp_path / 'w.gtkw'} is also the waveform's save file: one would overwrite the other"),
        (["--vcd", str(stats), "--stats", str(stats)],
         f"error: --stats {stats} is also --vcd: one would overwrite the other"),
    ]
    for options, message in cases:
        assert main(["run", str(arch), "-q", *options]) == 2
        err = capsys.readouterr().err
        assert err.splitlines()[0] == message, err
        assert arch.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipeline.arch", "stages.arch"]  # nothing written


def test_statistics_are_written_whole_before_a_reader_of_the_table_goes_away(tmp_path):
    arch = _pipeline(tmp_path)
    stats = tmp_path / "s.json"
    done = subprocess.run(f"{sys.executable} -m archmodel.cli run {arch} --stats {stats} | head -1",
                          shell=True, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0
    assert json.loads(stats.read_text())["manifest"]["outcome"] in ("quiescent", "stopped")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]  # no temporary left


def test_a_waveform_replaces_the_old_one_only_when_it_is_complete(tmp_path, capsys):
    arch = _pipeline(tmp_path)
    vcd = tmp_path / "w.vcd"
    assert main(["run", str(arch), "-q", "--vcd", str(vcd)]) == 0
    first = vcd.read_text()
    assert first.rstrip().splitlines()[-1].startswith("#")  # closed with a final timestamp
    assert main(["run", str(arch), "-q", "--vcd", str(vcd), "--cycles", "5"]) == 0
    assert vcd.read_text() != first and (tmp_path / "w.gtkw").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_a_watchdog_of_no_cycles_is_bad_input_not_a_false_deadlock(capsys):
    from archmodel.paths import data_path
    import pytest
    with pytest.raises(SystemExit) as done:
        main(["run", str(data_path("topologies") / "pipeline.arch"), "-q", "--watchdog", "0"])
    assert done.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        "archmodel run: error: argument --watchdog: must be at least 1 cycle, got 0"
