"""``archmodel sweep`` from the command line: Ctrl-C leaves a valid CSV of the finished points
and a re-run finishes the rest; an existing scheduler runs the same command; builders sweep
too; a failed point makes the exit code 1; bad specs are exit 2 with the reason."""

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from archmodel.cli import main
from tests.terminal import start_from_a_terminal

CHAIN = str(Path(__file__).with_name("chain.arch"))
ROOT = Path(__file__).resolve().parents[2]


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _start(command, out, env, **popen):
    """Start the sweep as a terminal starts a command (see ``start_from_a_terminal``): a test
    run started as a background job ignores SIGINT, and the sweep would inherit that."""
    return start_from_a_terminal(command, text=True, env=env, cwd=out.parent, **popen)


def _interrupt(command, out, env, stop, **popen):
    """Start the sweep, send ``stop`` once its CSV has 2 rows; returns (exit code, stderr)."""
    proc = _start(command, out, env, **popen)
    deadline = time.monotonic() + 120
    while not out.exists() or len(_rows(out)) < 2:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the sweep never got going"
        time.sleep(0.05)
    stop(proc)
    stdout, stderr = proc.communicate(timeout=60)
    assert "Traceback" not in stderr + stdout
    return proc.returncode, stderr


def _command(out):
    return [sys.executable, "-m", "archmodel.cli", "sweep", CHAIN, "--sweep", "messages=500:12000:500",
            "--csv", str(out)]


ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def test_ctrl_c_leaves_the_finished_points_and_a_rerun_on_a_scheduler_finishes_the_rest(tmp_path, dask_client):
    out = tmp_path / "chain.csv"
    command, env = _command(out), ENV
    # its own process group, as a terminal's job: Ctrl-C reaches the driver and its workers
    code, stderr = _interrupt(command + ["--workers", "2"], out, env, lambda p: os.killpg(p.pid, signal.SIGINT),
                              start_new_session=True)
    assert code == 130, stderr
    assert "interrupted: the CSV holds the finished points; run the same command again to resume" in stderr
    finished = _rows(out)
    assert 2 <= len(finished) < 24 and all(r["outcome"] == "stopped" for r in finished)
    assert all(r["Chain.sink.received"] == r["messages"] for r in finished)
    # the same command on an existing cluster: only the points not in the CSV run
    done = subprocess.run(command + ["--scheduler", dask_client.scheduler.address], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"24 of 24 points in {out}: {24 - len(finished)} run now" in done.stderr
    assert f", {len(finished)} already there" in done.stderr
    rows = _rows(out)
    assert [int(r["messages"]) for r in rows] == list(range(500, 12001, 500))
    assert all(r["Chain.sink.received"] == r["messages"] for r in rows)


# A Dask worker preload that holds the worker's start, and so its cluster's, until the test
# has sent its Ctrl-C: the signal lands while the sweep's driver waits for its workers.
HELD_START = """
import time
from pathlib import Path


def dask_setup(worker):
    \"\"\"Say the worker is starting; wait until the test says go.\"\"\"
    Path({started!r}).touch()
    deadline = time.monotonic() + 60
    while not Path({go!r}).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
"""


def test_ctrl_c_while_the_workers_start_stops_the_sweep_once_they_are_up(tmp_path):
    out, started, go = tmp_path / "chain.csv", tmp_path / "started", tmp_path / "go"
    preload = tmp_path / "held_start.py"
    preload.write_text(HELD_START.format(started=str(started), go=str(go)))
    env = {**ENV, "DASK_DISTRIBUTED__WORKER__PRELOAD": json.dumps([str(preload)])}
    proc = _start(_command(out) + ["--workers", "2"], out, env, start_new_session=True)
    deadline = time.monotonic() + 120
    while not started.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no worker started"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)  # the driver, and workers still starting
    go.touch()
    stdout, stderr = proc.communicate(timeout=120)
    assert "Traceback" not in stderr + stdout
    assert proc.returncode == 130, stderr  # (it was ignored: the sweep ran all 24 points, exit 0)
    assert f"0 of 24 points in {out}: 0 run now" in stderr
    assert "interrupted: the CSV holds the finished points; run the same command again to resume" in stderr
    assert _rows(out) == []


def test_sigterm_stops_a_sweep_in_this_process_with_exit_143(tmp_path):
    out = tmp_path / "chain.csv"
    code, stderr = _interrupt(_command(out) + ["--workers", "0"], out, ENV, lambda p: p.send_signal(signal.SIGTERM))
    assert code == 143, stderr
    assert "stopped by SIGTERM: the CSV holds the finished points; run the same command again to resume" in stderr
    rows = _rows(out)
    assert 2 <= len(rows) < 24 and all(r["Chain.sink.received"] == r["messages"] for r in rows)


def test_a_sweep_started_under_nohup_ignores_sighup_and_still_stops_on_sigterm(tmp_path):
    out = tmp_path / "chain.csv"

    def hang_up_then_terminate(proc):
        proc.send_signal(signal.SIGHUP)  # the terminal closed: nohup's sweep goes on
        time.sleep(1.0)
        assert proc.poll() is None, "SIGHUP stopped a sweep started with it ignored"
        proc.send_signal(signal.SIGTERM)

    code, stderr = _interrupt(_command(out) + ["--workers", "0"], out, ENV, hang_up_then_terminate,
                              ignored=(signal.SIGHUP,))
    assert code == 143, stderr
    assert "stopped by SIGTERM: the CSV holds the finished points" in stderr


def test_a_sigterm_as_the_local_workers_start_stops_the_sweep_and_closes_them(tmp_path, monkeypatch, capsys):
    import distributed

    started = []
    real = distributed.LocalCluster

    def sigterm_as_it_starts(*args, **kwargs):
        started.append(real(*args, **kwargs))
        os.kill(os.getpid(), signal.SIGTERM)  # a batch scheduler's stop, as the start ends
        return started[-1]

    monkeypatch.setattr(distributed, "LocalCluster", sigterm_as_it_starts)
    out = tmp_path / "chain.csv"
    assert main(["sweep", CHAIN, "--sweep", "messages=2,4", "--workers", "1", "--csv", str(out)]) == 143
    assert "stopped by SIGTERM: the CSV holds the finished points" in capsys.readouterr().err
    assert len(started) == 1 and started[0].status.name == "closed"  # not left running


def test_a_builder_sweeps_on_a_scheduler_and_a_failed_point_makes_exit_code_1(tmp_path, dask_client, capsys):
    out = tmp_path / "pair.csv"
    assert main(["sweep", "tests.cli_systems:pair", "--sweep", "count=3,7", "-p", "latency=4",
                 "--scheduler", dask_client.scheduler.address, "--csv", str(out)]) == 0
    rows = _rows(out)
    assert [(r["latency"], r["count"], r["pair.c.received"]) for r in rows] == [("4", "3", "3"), ("4", "7", "7")]
    out2 = tmp_path / "chain.csv"
    assert main(["sweep", CHAIN, "--sweep", "messages=4,-1", "--workers", "0", "--csv", str(out2),
                 "--plot", "x=messages,y=Chain.sink.received"]) == 1
    printed = capsys.readouterr()
    assert "[2/2] messages=-1: bad-input in " in printed.out
    assert ": -p messages:1:1: error: parameter 'count' of 'Source' must be at least 0, got -1" in printed.out
    assert f"2 of 2 points in {out2}: 2 run now" in printed.err and "; 1 failed (bad-input 1)" in printed.err
    assert out2.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


BUILDER = """
import os

from tests.cli_systems import pair


def dies(code: int = 0):
    \"\"\"A pair of components, or the end of the worker process that builds it.\"\"\"
    if code:
        os._exit(code)
    return pair(count=5)
"""


def test_a_builder_from_a_file_reaches_the_workers_and_a_worker_that_dies_loses_only_its_point(tmp_path, dask_client,
                                                                                                   capsys):
    builder, out = tmp_path / "dying.py", tmp_path / "dies.csv"
    builder.write_text(BUILDER)
    assert main(["sweep", f"{builder}:dies", "--sweep", "code=0,3", "--scheduler", dask_client.scheduler.address,
                 "--csv", str(out)]) == 1
    rows = _rows(out)
    assert [(r["code"], r["outcome"], r["pair.c.received"]) for r in rows] == [("0", "quiescent", "5"), ("3", "lost", "")]
    assert rows[1]["message"].startswith("KilledWorker: ")
    assert "; 1 failed (lost 1)" in capsys.readouterr().err
    dask_client.wait_for_workers(2, timeout=60)  # the nanny restarts the worker for the next tests


def test_a_scheduler_file_names_the_cluster(tmp_path, dask_client, capsys):
    scheduler_file, out = tmp_path / "scheduler.json", tmp_path / "c.csv"
    # what 'dask scheduler --scheduler-file' writes, in the part a client reads (this Dask's
    # Client.write_scheduler_file fails once workers report metrics keyed by tuples)
    scheduler_file.write_text(json.dumps({"type": "Scheduler", "address": dask_client.scheduler.address}))
    assert main(["sweep", CHAIN, "--sweep", "messages=4,8", "--scheduler", str(scheduler_file), "--csv", str(out)]) == 0
    assert [r["Chain.sink.received"] for r in _rows(out)] == ["4", "8"]
    printed = capsys.readouterr()
    assert f"2 points on the Dask scheduler at {scheduler_file}" in printed.err
    assert "[1/2] messages=" in printed.out and " s left)" in printed.out


def test_a_dry_run_lists_the_points_and_which_the_csv_holds(tmp_path, capsys):
    out = tmp_path / "c.csv"
    assert main(["sweep", CHAIN, "--sweep", "messages=4,8", "--workers", "0", "--csv", str(out)]) == 0
    capsys.readouterr()
    assert main(["sweep", CHAIN, "--sweep", "messages=4,8,16", "-p", "rate=0.5", "--workers", "0", "--csv", str(out),
                 "--dry-run"]) == 2  # another sweep: it fixes rate too
    assert main(["sweep", CHAIN, "--sweep", "messages=4,8,16", "--seeds", "2", "--workers", "0", "--csv", str(out),
                 "--dry-run"]) == 0
    assert capsys.readouterr().out == ("messages=4 seed=0: in the CSV\nmessages=4 seed=1: to run\n"
                                       "messages=8 seed=0: in the CSV\nmessages=8 seed=1: to run\n"
                                       "messages=16 seed=0: to run\nmessages=16 seed=1: to run\n"
                                       "6 points, 4 to run\n")
    assert len(_rows(out)) == 2


def test_a_plot_with_hue_and_seeds_draws_a_png(tmp_path):
    out, png = tmp_path / "c.csv", tmp_path / "fig" / "c.png"
    assert main(["sweep", CHAIN, "--sweep", "messages=4,8", "--sweep", "rate=0.3,0.6", "--seeds", "2",
                 "--workers", "0", "--csv", str(out), "--png", str(png),
                 "--plot", "x=messages,y=Chain.sink.throughput,hue=rate"]) == 0
    assert len(_rows(out)) == 8
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("extra, message", [
    (["--sweep", "mesages=1,2"], "error: --sweep mesages: the top has no parameter 'mesages'\n"
                                 "hint: did you mean 'messages'?\n"),
    (["--sweep", "messages=1,2", "--metric", "Chain.sink.recieved"],
     "error: --metric 'Chain.sink.recieved' matches no statistic of Chain\nhint: did you mean 'Chain.sink.received'?\n"),
    (["--sweep", "messages=1,2", "--plot", "x=messages"],
     "error: --plot 'x=messages' needs x= and y=\n"
     "hint: for example: --plot x=rate,y=Mesh8x8.net.packet_latency,hue=depth, or --plot noc\n"),
    (["--sweep", "messages=1,2", "--plot", "x=messages,y=Chain.sink.recieved"],
     "error: --plot: y 'Chain.sink.recieved' is not a column of this sweep\nhint: did you mean 'Chain.sink.received'?\n"),
    (["--sweep", "messages=1,2", "--plot", "x=messages,z=1"],
     "error: --plot 'x=messages,z=1': 'z=1' is not x=COLUMN, y=COLUMN, hue=COLUMN or noc\n"
     "hint: for example: --plot x=rate,y=Mesh8x8.net.packet_latency,hue=depth, or --plot noc\n"),
    (["--sweep", "messages=1,2", "--plot", "noc"], "error: --plot noc: the system has no Noc\n"
                                                    "hint: plot columns with --plot x=...,y=...\n"),
    (["--sweep", "messages=1,2", "--sweep", "rate=0.5", "--zip"],
     "error: --zip pairs the i-th values of every --sweep, so they must be equally long: messages has 2, rate has 1\n"),
    (["--sweep", "messages=1,2", "--samples", "3", "--zip"],
     "error: --samples draws random points; --zip pairs lists: give one of them\n"),
    (["--sweep", "messages=1,2", "--workers", "-1"], "error: --workers must be 0 (this process) or more, got -1\n"),
    (["--sweep", "messages=1,2", "--csv", CHAIN], f"error: --csv {CHAIN} would overwrite the input {CHAIN}\n"
                                                  "hint: write the outputs somewhere else, e.g. waves/\n"),
])
def test_bad_sweeps_are_exit_2_with_the_reason(tmp_path, capsys, extra, message):
    args = ["sweep", CHAIN, "--workers", "0", "--csv", str(tmp_path / "x.csv")] + extra
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err == message
    assert not (tmp_path / "x.csv").exists()
