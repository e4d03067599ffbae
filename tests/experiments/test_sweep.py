"""Sweeps on a real Dask cluster of 2 workers: exactly the requested points, one row each,
written as they finish; failing points are rows; the same seed gives the same rows however
many processes run them; an interrupted sweep resumes with the rest."""

import contextlib
import csv
import os
import signal
import socket
import warnings
from pathlib import Path

import pytest

from archmodel.experiments import TIMING_COLUMNS, Executor, Sweep, parse_axis, sweep
from archmodel.experiments.runner import file_digest

CHAIN = str(Path(__file__).with_name("chain.arch"))


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _untimed(rows):
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


def test_every_point_is_a_row_written_as_it_finishes_and_failing_points_say_why(tmp_path, dask_client):
    out = tmp_path / "chain.csv"
    seen = []

    def check_file(row, finished, total):  # the CSV is complete and valid after every point
        seen.append(len(_rows(out)) == finished and total == 4)

    spec = Sweep(CHAIN, [parse_axis("messages=5,10,-1,8"), parse_axis("stall=0,0,0,1.0")], mode="zip",
                 watchdog_cycles=50)
    result = spec.run(out, executor=Executor(client=dask_client), on_row=check_file)
    assert seen == [True] * 4 and result.ran == 4 and not result.interrupted
    rows = _rows(out)
    assert [(r["messages"], r["stall"]) for r in rows] == [("5", "0"), ("10", "0"), ("-1", "0"), ("8", "1.0")]
    assert [r["outcome"] for r in rows] == ["stopped", "stopped", "bad-input", "deadlock"]
    assert [r["Chain.sink.received"] for r in rows[:2]] == ["5", "10"]
    assert [r["Chain.sink.latency.count"] for r in rows[:2]] == ["5", "10"]
    # The point's value is where it was written (the override), the model's line on the hint.
    assert rows[2]["message"].startswith("-p messages:1:1: error: parameter 'count' of 'Source' must be at least 0, "
                                         "got -1\n-1\n^^\n")
    assert f"; the value reaches the model at {CHAIN}:4:27\n" in rows[2]["message"]
    assert rows[2]["Chain.sink.received"] == "" and rows[2]["simulated_ps"] == ""
    assert rows[3]["message"].startswith("deadlock at ") and "Chain.src waits on Chain.sink" in rows[3]["message"]
    assert {r["input_sha256"] for r in rows} == {file_digest([CHAIN])}
    assert all(r["message"] == "" for r in rows[:2]) and all(float(r["wall_s"]) > 0 for r in rows)
    assert [r["outcome"] for r in result.failed] == ["bad-input", "deadlock"]


def test_the_same_seed_gives_the_same_rows_on_two_workers_and_in_one_process(dask_client):
    axes = {"rate": "0.1:0.9", "messages": "5:40"}
    two = sweep(CHAIN, axes, mode="random", samples=8, seed=11, client=dask_client, frame=False)
    one = sweep(CHAIN, axes, mode="random", samples=8, seed=11, workers=0, frame=False)
    assert len(two) == 8 and _untimed(two) == _untimed(one)
    other = sweep(CHAIN, axes, mode="random", samples=8, seed=12, workers=0, frame=False)
    assert [r["rate"] for r in other] != [r["rate"] for r in one]
    # the seed drives the simulation too: the same point with another seed takes other times
    replicas = sweep(CHAIN, {"rate": [0.3]}, params={"messages": 30}, seeds=3, client=dask_client, frame=False)
    assert [r["seed"] for r in replicas] == [0, 1, 2]
    assert len({r["Chain.sink.throughput"] for r in replicas}) > 1


def test_an_interrupted_sweep_resumes_with_the_points_not_yet_in_its_csv(tmp_path, dask_client):
    out = tmp_path / "chain.csv"
    spec = Sweep(CHAIN, [parse_axis("messages=2:24:2")])

    def stop_at_three(row, finished, total):
        if finished == 3:
            raise KeyboardInterrupt

    first = spec.run(out, executor=Executor(client=dask_client), on_row=stop_at_three)
    assert first.interrupted and first.ran == 3
    done = _rows(out)
    assert len(done) == 3 and all(r["outcome"] == "stopped" for r in done)
    again = spec.run(out, executor=Executor(client=dask_client))
    assert (again.ran, again.skipped, again.interrupted) == (9, 3, False)
    rows = _rows(out)
    assert [int(r["messages"]) for r in rows] == list(range(2, 25, 2))
    assert [int(r["Chain.sink.received"]) for r in rows] == list(range(2, 25, 2))
    assert {(r["messages"], r["wall_s"]) for r in done} <= {(r["messages"], r["wall_s"]) for r in rows}  # kept, not rerun
    assert spec.run(out, executor=Executor(client=dask_client)).ran == 0


def test_a_ctrl_c_while_the_study_is_sent_acts_once_it_is_sent_and_cancels_the_points(dask_client, monkeypatch):
    spec = Sweep(CHAIN, [parse_axis("messages=2:24:2")])
    sent = []
    scatter = dask_client.scatter

    def interrupted_scatter(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C as the send begins
        sent.append(scatter(*args, **kwargs))
        return sent[-1]

    cancelled: list = []
    cancel = dask_client.cancel

    def recorded_cancel(futures, **kwargs):
        cancelled.extend(futures)
        return cancel(futures, **kwargs)

    monkeypatch.setattr(dask_client, "scatter", interrupted_scatter)
    monkeypatch.setattr(dask_client, "cancel", recorded_cancel)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # (a background test run ignores it)
    try:
        result = spec.run(None, executor=Executor(client=dask_client))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.interrupted and result.ran == 0
    assert len(sent) == 1  # the send was not cut in half
    assert len(cancelled) == 12  # every point sent, then cancelled


def test_local_workers_start_beside_another_dask_cluster_without_a_port_warning():
    with socket.socket() as busy:  # another cluster's scheduler holds Dask's default port
        with contextlib.suppress(OSError):  # (held already by one: as good)
            busy.bind(("127.0.0.1", 8787))
            busy.listen()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "Port 8787 is already in use" stops the start
            with Executor(workers=1) as executor:
                assert executor.describe() == "1 local Dask worker process"


def test_metrics_select_columns_and_a_notebook_gets_a_frame(dask_client):
    pandas = pytest.importorskip("pandas")
    frame = sweep(CHAIN, {"messages": [3, 6]}, metrics=("*.received", "Chain.sink.latency.p9[0-9]"), client=dask_client)
    assert isinstance(frame, pandas.DataFrame)
    assert [c for c in frame.columns if c.startswith("Chain.")] == ["Chain.sink.received", "Chain.sink.latency.p99"]
    assert frame["Chain.sink.received"].tolist() == [3, 6]


def test_retry_failed_runs_only_the_failed_points_again_and_fresh_all(tmp_path):
    out = tmp_path / "chain.csv"
    spec = Sweep(CHAIN, [parse_axis("messages=3,-1,5")])
    first = spec.run(out, executor=Executor(workers=0))
    assert [r["outcome"] for r in first.rows] == ["stopped", "bad-input", "stopped"]
    again = spec.run(out, executor=Executor(workers=0), retry_failed=True)
    assert (again.ran, again.skipped) == (1, 2)
    assert [r["messages"] for r in _rows(out)] == ["3", "-1", "5"]  # the failed row replaced, not doubled
    assert spec.run(out, executor=Executor(workers=0), fresh=True).ran == 3
    assert len(_rows(out)) == 3


def test_a_network_sweep_gives_booksim_measurements_as_the_measure_module_does(tmp_path):
    from archmodel.lang import load
    from archmodel.experiments.network import measure_top

    arch = tmp_path / "small.arch"
    arch.write_text('system Small(rate: float = 0.1) {\n'
                    '    net : Noc(topology = "mesh(3, 3)", vcs = 2, traffic = "uniform", rate = rate,\n'
                    '              warmup_periods = 1, sample_period = 200)\n}\n')
    rows = sweep(str(arch), {"rate": [0.1, 0.45]}, workers=0, frame=False)
    for row in rows:
        point = measure_top(load(str(arch), params={"rate": repr(row["rate"])}).top, seed=0)
        assert row["outcome"] == ("measured" if point["stable"] else "unstable")
        assert (row["Small.net.packet_latency"], row["Small.net.network_latency"], row["Small.net.accepted"],
                row["Small.net.packet_latency.p99"]) == \
            (point["packet_latency"], point["network_latency"], point["accepted"], point["p99_latency"])
