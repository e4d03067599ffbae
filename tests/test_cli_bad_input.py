"""Bad input is exit 2 with a sentence and, where there is one, a location; never a
traceback (issue 12, classes 6 and 8)."""

import json

import pytest

from archmodel.cli import main
from archmodel.kernel import ArchError, Component, Simulator
from archmodel.models.compute.assembler import assemble_file

PAIR = """system S {
    src : Source(count = 3)
    sink : Sink()
    src.out -> sink.inp
}
"""


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.err


def test_a_negative_seed_is_refused_by_the_command_line_and_the_simulator(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "topologies/pipeline.arch", "--seed", "-1"])
    assert stop.value.code == 2
    assert "argument --seed: must be at least 0, got -1" in capsys.readouterr().err
    with pytest.raises(ArchError, match="the seed must be a whole number of at least 0, got -1"):
        Simulator(Component("top"), seed=-1)


def test_a_builder_module_that_does_not_parse_is_bad_input_at_its_line(tmp_path, capsys):
    builder = tmp_path / "broken_builder.py"
    builder.write_text("import archmodel\n\ndef build(:\n    pass\n")
    code, err = _run(capsys, "run", f"{builder}:build")
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"{builder}:3:11: error: the builder module does not parse: invalid syntax")


def test_a_builder_without_a_module_name_is_bad_input(capsys):
    code, err = _run(capsys, "run", ":build")
    assert code == 2 and err.startswith("error: ':build' is not a builder")


def test_a_bare_word_for_a_string_parameter_suggests_the_quotes(capsys):
    code, err = _run(capsys, "check", "topologies/dragonfly.arch", "-p", "routing=valiant")
    assert code == 2
    assert "-p routing:1:1: error: 'valiant' is not defined" in err
    assert """hint: a string is written in quotes: '"valiant"'""" in err
    assert _run(capsys, "check", "topologies/dragonfly.arch", "-p", 'routing="valiant"')[0] == 0


def test_check_finds_a_misspelt_traffic_pattern_that_run_would_reject(capsys):
    code, err = _run(capsys, "check", "topologies/mesh8x8.arch", "-p", 'traffic="unifrom"')
    assert code == 2
    assert "topologies/mesh8x8.arch:16:" in err
    assert "parameter 'traffic' of 'Noc' must be one of 'none', 'uniform'," in err
    assert "\nhint: did you mean 'uniform'? (traffic: str = 'none' -- " in err


def test_a_number_of_thousands_of_digits_is_out_of_range_not_a_crash(tmp_path, capsys):
    top = tmp_path / "digits.arch"
    top.write_text(PAIR.replace("count = 3", "count = " + "9" * 5000))
    code, err = _run(capsys, "check", top)
    assert code == 2 and "Traceback" not in err
    assert f"{top}:2:26: error: the number 99999999999999999999... is out of range" in err
    assert len(err) < 1000  # the line is quoted as a window, not 5000 characters
    code, err = _run(capsys, "check", "topologies/pipeline.arch", "-p", "messages=1" + "0" * 400)
    assert code == 2 and "is out of range" in err


def test_an_assembly_file_that_is_not_utf8_is_an_error_at_its_first_bad_byte(tmp_path):
    source = tmp_path / "kernel.S"
    source.write_bytes(b"    li a0, 1\n    li a1, 2 # \xff\n")
    with pytest.raises(ArchError) as err:
        assemble_file(source)
    assert str(err.value).startswith(f"{source}:2:16: error: the file is not UTF-8 text: byte 0xff")


def test_an_unstable_measurement_is_not_a_success(tmp_path, capsys):
    # Class 7: offered 1 flit/terminal/cycle on a 4x4 mesh saturates it; the packets of the
    # window cannot drain in 100 cycles.
    top = tmp_path / "hot.arch"
    top.write_text("""system Hot {
    net : Noc(topology = "mesh(4, 4)", traffic = "uniform", rate = 1.0, sample_period = 200,
              warmup_periods = 1, sample_periods = 1, drain_limit = 100, watchdog = 100)
}
""")
    stats = tmp_path / "s.json"
    code, err = _run(capsys, "run", top, "-q", "--stats", stats)
    assert code == 3
    assert "unstable at 500 ns" in err and "error: the measurement is unstable" in err
    assert json.loads(stats.read_text())["manifest"]["outcome"] == "unstable"
    assert "did not all arrive before the drain limit" in err
    # BookSim's rule (the default) ends it earlier when the running average latency passes its
    # threshold at a sample boundary: here at the end of the warm-up, 200 cycles in
    top.write_text(top.read_text().replace("drain_limit = 100", "drain_limit = 100, latency_threshold = 20"))
    code, err = _run(capsys, "run", top, "-q")
    assert code == 3
    assert ("unstable at 200 ns" in err and "error: the measurement is unstable: the running average packet latency "
            "passed 20 cycles at 200 ns (BookSim's rule; stability = \"drain\" waits for the drain limit instead)" in err)
    top.write_text(top.read_text().replace(", latency_threshold = 20", ""))
    # below saturation the same measurement ends measured, exit 0, and says so
    top.write_text(top.read_text().replace("rate = 1.0", "rate = 0.1"))
    code, err = _run(capsys, "run", top, "-q", "--stats", stats)
    assert code == 0 and "measured at" in err
    assert json.loads(stats.read_text())["manifest"]["outcome"] == "measured"


@pytest.mark.parametrize("option, path, message", [
    ("--stats", "{tmp}/a_file/s.json", "cannot write --stats {tmp}/a_file/s.json: {tmp}/a_file is a file, not a folder"),
    ("--stats", "{tmp}", "--stats {tmp} is a folder"),
    ("--stats", "/dev/full", "--stats /dev/full is not a regular file"),
    ("--vcd", "/dev/null", "--vcd /dev/null is not a regular file"),
    ("--vcd", "/proc/waves.vcd", "cannot write --vcd /proc/waves.vcd: "),
])
def test_an_output_that_cannot_be_written_is_bad_input_before_the_run(tmp_path, capsys, option, path, message):
    # Class 3: checked before the run, exit 2, nothing written (a device is never replaced).
    (tmp_path / "a_file").write_text("keep me\n")
    code, err = _run(capsys, "run", "topologies/pipeline.arch", "-q", option, path.format(tmp=tmp_path))
    assert code == 2 and "Traceback" not in err
    assert message.format(tmp=tmp_path) in err
    assert "after" not in err  # the run never started
    assert (tmp_path / "a_file").read_text() == "keep me\n"


def test_a_full_disk_at_the_end_writes_what_it_can_says_what_failed_and_exits_1(tmp_path, capsys, monkeypatch):
    # Class 3: the waveform hits a full disk; the statistics are still written whole, the
    # VCD is not put in place truncated (the older one of that name stays), and the exit is 1.
    import archmodel.trace.vcd_tracer as vcd_tracer

    real_open = open

    class FullDisk:
        def __init__(self, handle):
            self.handle, self.written = handle, 0

        def write(self, text):
            self.written += len(text)
            if self.written > 2000:
                raise OSError(28, "No space left on device")
            return self.handle.write(text)

        def __getattr__(self, name):
            return getattr(self.handle, name)

    monkeypatch.setattr(vcd_tracer, "open", lambda *a, **k: FullDisk(real_open(*a, **k)), raising=False)
    vcd, stats = tmp_path / "w.vcd", tmp_path / "s.json"
    vcd.write_text("the previous waveform\n")
    code, err = _run(capsys, "run", "topologies/pipeline.arch", "-q", "--vcd", vcd, "--stats", stats)
    assert code == 1 and "Traceback" not in err
    assert "No space left on device" in err
    assert vcd.read_text() == "the previous waveform\n"
    assert json.loads(stats.read_text())["manifest"]["outcome"] == "failed"
    assert not list(tmp_path.glob(".*.partial"))


def test_a_sweep_table_that_cannot_be_written_is_bad_input_before_any_point(capsys):
    code, err = _run(capsys, "sweep", "topologies/mesh8x8.arch", "--sweep", "rate=0.1", "--workers", "0",
                     "--csv", "/proc/sweep.csv")
    assert code == 2 and err.startswith("error: cannot write --csv /proc/sweep.csv: ")


def test_a_sweep_of_a_billion_points_is_refused_before_they_are_made(capsys):
    # Class 4: rate=0:1:1e-12 would build 10^12 points.
    code, err = _run(capsys, "sweep", "topologies/mesh8x8.arch", "--sweep", "rate=0:1:1e-12", "--dry-run")
    assert code == 2
    assert "--sweep 'rate=0:1:1e-12' has 1,000,000,000,001 values, more than a sweep may have (1,000,000)" in err


def test_show_checks_its_graph_file_first_and_writes_it_whole(tmp_path, capsys):
    code, err = _run(capsys, "show", "topologies/pipeline.arch", "--dot", tmp_path)
    assert code == 2 and f"--dot {tmp_path} is a folder" in err
    dot = tmp_path / "g.dot"
    assert _run(capsys, "show", "topologies/pipeline.arch", "--dot", dot)[0] == 0
    assert dot.read_text().startswith("digraph") and not list(tmp_path.glob(".*.partial"))
