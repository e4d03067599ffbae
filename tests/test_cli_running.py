"""``archmodel run``: how a run is driven (one call, or slices for a progress bar) and the
summary line it ends with."""

import json
import re
import signal
import sys
import time

import pytest

from archmodel.cli import main
from tests.terminal import start_from_a_terminal


def _settles(tmp_path, *options) -> int:
    stats = tmp_path / "s.json"
    assert main(["run", "tests.cli_systems:settling", "-p", "cycles=25000", "-q", "--stats", str(stats),
                 *options]) == 0
    return json.loads(stats.read_text())["statistics"]["slices.s.settles"]["value"]


def test_a_run_without_a_progress_bar_is_one_call_and_a_bar_cuts_it_into_slices(tmp_path):
    assert _settles(tmp_path, "--no-progress") == 1
    # slices of 10,000 cycles of the top clock: up to 10 us, 20 us, and the rest
    assert _settles(tmp_path, "--progress") == 3


def test_cycles_go_to_the_engine_and_stop_at_that_edge_with_or_without_a_bar(tmp_path, capsys):
    for progress in ("--no-progress", "--progress"):
        assert main(["run", "tests.cli_systems:pair", "-p", "count=100", "--cycles", "10", "-q", progress]) == 0
        assert capsys.readouterr().err.rpartition("\r")[2].startswith("limit at 9 ns: 10 cycles of clk")


def test_cycles_below_one_is_bad_input(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", "tests.cli_systems:pair", "--cycles", "0"])
    assert stop.value.code == 2
    assert "argument --cycles: must be at least 1 cycle, got 0" in capsys.readouterr().err


def test_the_summary_says_simulated_cycles_of_the_top_clock_and_their_rate(capsys):
    assert main(["run", "tests.cli_systems:pair", "-p", "count=7", "-q"]) == 0
    summary = capsys.readouterr().err.splitlines()[-1]
    assert re.fullmatch(r"quiescent at 9 ns: 10 cycles of clk \(1 GHz\) in \d+\.\d\d s wall, "
                        r"[\d,]+ cycles/s, 17 component ticks", summary), summary


def test_ctrl_c_stops_a_run_of_one_engine_call_cleanly(tmp_path):
    # without a progress bar the run is one Simulator.run call: the signal still ends it at the
    # current time point, with the statistics so far
    stats_path, vcd_path = tmp_path / "s.json", tmp_path / "run.vcd"
    proc = start_from_a_terminal([sys.executable, "-m", "archmodel.cli", "run", "tests.cli_systems:endless", "-q",
                                  "--no-progress", "--stats", str(stats_path), "--vcd", str(vcd_path)], text=True)
    growing, deadline = tmp_path / f".run.vcd.{proc.pid}.partial", time.monotonic() + 60
    while not growing.exists() or growing.stat().st_size < 20_000:  # the run is going
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: waveform closed and statistics so far written" in err
    document = json.loads(stats_path.read_text())
    assert document["manifest"]["outcome"] == "interrupted"
    assert document["statistics"]["pair.c.received"]["value"] > 0
