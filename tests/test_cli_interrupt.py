"""Ctrl-C, SIGTERM and SIGHUP stop a run cleanly: exit 130, 143 or 129, a well-formed VCD, the
statistics gathered so far."""

import json
import os
import signal
import sys
import time

import pytest
from vcd.reader import TokenKind, tokenize

from tests.terminal import start_from_a_terminal


@pytest.mark.parametrize("stop, code, said", [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "stopped by SIGTERM"),
    (signal.SIGHUP, 129, "stopped by SIGHUP"),
])
def test_ctrl_c_sigterm_and_sighup_close_the_vcd_and_write_statistics(tmp_path, stop, code, said):
    vcd_path, stats_path = tmp_path / "run.vcd", tmp_path / "run.json"
    proc = start_from_a_terminal([sys.executable, "-m", "archmodel.cli", "run", "tests.cli_systems:endless", "-q",
                   "--vcd", str(vcd_path), "--stats", str(stats_path), "--progress"], text=True)
    deadline = time.monotonic() + 60
    # the VCD grows under a temporary name of the run's own until it is closed
    growing = tmp_path / f".run.vcd.{proc.pid}.partial"
    while not growing.exists() or growing.stat().st_size < 20_000:
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the run never got going"
        time.sleep(0.05)
    proc.send_signal(stop)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert f"{said}: waveform closed and statistics so far written" in err
    document = json.loads(stats_path.read_text())
    assert document["manifest"]["outcome"] == "interrupted"
    received = document["statistics"]["pair.c.received"]["value"]
    assert received > 0
    # The VCD parses to the end, and its last timestamp is not before the last edge simulated.
    with open(vcd_path, "rb") as stream:
        times = [tok.data for tok in tokenize(stream) if tok.kind is TokenKind.CHANGE_TIME]
    assert times and times[-1] >= document["manifest"]["simulated_ps"]
    assert (tmp_path / "run.gtkw").exists() and not growing.exists()


def test_a_run_started_under_nohup_ignores_sighup_and_still_stops_on_sigterm(tmp_path):
    stats_path = tmp_path / "run.json"
    proc = start_from_a_terminal([sys.executable, "-m", "archmodel.cli", "run", "tests.cli_systems:endless", "-q",
                   "--stats", str(stats_path), "--progress"], ignored=(signal.SIGHUP,))
    os.set_blocking(proc.stderr.fileno(), False)
    seen, deadline = b"", time.monotonic() + 60
    while seen.count(b"simulated") < 3:  # the progress bar has moved: the run is under way
        assert proc.poll() is None, seen.decode(errors="replace")
        assert time.monotonic() < deadline, "the run never got going"
        seen += proc.stderr.read() or b""
        time.sleep(0.05)
    proc.send_signal(signal.SIGHUP)  # the terminal closed: nohup's run goes on
    time.sleep(1.0)
    assert proc.poll() is None, "SIGHUP stopped a run started with it ignored"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    err = (seen + err).decode(errors="replace")
    assert proc.returncode == 143, err
    assert "stopped by SIGTERM: statistics so far written" in err
    assert json.loads(stats_path.read_text())["manifest"]["outcome"] == "interrupted"


def test_ctrl_c_stops_the_compiled_network_within_a_batch_with_its_statistics_so_far(tmp_path):
    # The compiled loop hands back to the kernel between batches of bounded length, so the
    # first Ctrl-C takes effect at once (it used to wait for the whole measurement) and the
    # statistics are those of the cycles simulated (they used to be empty, at 0 ps).
    system = tmp_path / "long.arch"
    system.write_text("""system Long {
    net : Noc(topology = "mesh(8, 8)", engine = "compiled", traffic = "uniform", rate = 0.2,
              warmup_periods = 0, sample_period = 100000000, sample_periods = 1)
}
""")
    stats_path = tmp_path / "s.json"
    proc = start_from_a_terminal([sys.executable, "-m", "archmodel.cli", "run", str(system), "-q", "--progress",
                   "--stats", str(stats_path)])
    os.set_blocking(proc.stderr.fileno(), False)
    seen, deadline = b"", time.monotonic() + 120
    while seen.count(b"simulated") < 3:  # the progress bar has moved: the loop is running
        assert proc.poll() is None, seen.decode(errors="replace")
        assert time.monotonic() < deadline, "the run never got going"
        seen += proc.stderr.read() or b""
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - signalled < 30
    assert proc.returncode == 130, err.decode(errors="replace")
    document = json.loads(stats_path.read_text())
    assert document["manifest"]["outcome"] == "interrupted"
    simulated = document["manifest"]["simulated_ps"]
    statistics = document["statistics"]
    created = sum(v["value"] for k, v in statistics.items() if k.endswith(".created"))
    assert simulated > 0 and created > 0
    # about 0.2 packets per terminal per cycle up to the time reported (a batch may run past it)
    assert created >= 0.2 * 64 * (simulated // 1000) * 0.9
