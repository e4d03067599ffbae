"""Ctrl-C, SIGTERM and SIGHUP stop a run cleanly: exit 130, 143 or 129, a well-formed VCD, the
statistics gathered so far."""

import json
import signal
import subprocess
import sys
import time

import pytest
from vcd.reader import TokenKind, tokenize


@pytest.mark.parametrize("stop, code, said", [
    (signal.SIGINT, 130, "interrupted"),
    (signal.SIGTERM, 143, "stopped by SIGTERM"),
    (signal.SIGHUP, 129, "stopped by SIGHUP"),
])
def test_ctrl_c_sigterm_and_sighup_close_the_vcd_and_write_statistics(tmp_path, stop, code, said):
    vcd_path, stats_path = tmp_path / "run.vcd", tmp_path / "run.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "archmodel.cli", "run", "tests.cli_systems:endless", "-q",
         "--vcd", str(vcd_path), "--stats", str(stats_path), "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
