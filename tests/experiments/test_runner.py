"""One point's run, as a worker does it: the row of a deterministic system exactly, a limit,
an exception in model code, and an input that changed since the driver hashed it."""

from pathlib import Path

from archmodel.experiments import Point, Study, run_point
from archmodel.experiments.runner import file_digest, stat_columns

CHAIN = str(Path(__file__).with_name("chain.arch"))


def _point(**params):
    return Point(tuple((k, str(v)) for k, v in params.items()), seed=0)


def test_a_point_row_holds_its_parameters_outcome_and_statistics():
    study = Study(CHAIN, file_digest([CHAIN]), metrics=("Chain.sink.*",))
    row = run_point(study, _point(messages=5, rate=1.0))
    assert {k: row[k] for k in ("messages", "rate", "seed", "outcome", "message", "input_sha256")} == \
        {"messages": 5, "rate": 1.0, "seed": 0, "outcome": "stopped", "message": "", "input_sha256": file_digest([CHAIN])}
    # one message per 1 ns edge from t=0, each 2 ns on the link: the fifth arrives at 6 ns
    assert row["simulated_ps"] == 6000
    assert row["Chain.sink.received"] == 5 and row["Chain.sink.latency"] == 2000.0
    assert row["Chain.sink.latency.p99"] == 2000.0 and row["Chain.sink.latency.count"] == 5
    assert not any(k.startswith("Chain.src.") for k in row)  # not selected by --metric
    limited = run_point(Study(CHAIN, file_digest([CHAIN]), cycles=3), _point(messages=5, rate=1.0))
    assert (limited["outcome"], limited["simulated_ps"], limited["Chain.sink.received"]) == ("limit", 2000, 1)


def test_model_code_that_raises_is_a_crashed_row_with_its_traceback():
    def broken(depth: int = 0):
        raise ValueError(f"depth {depth} is odd")

    row = run_point(Study(broken, "", top=None), _point(depth=3))
    assert row["outcome"] == "crashed" and row["depth"] == 3
    assert row["message"].startswith("Traceback (most recent call last):")
    assert row["message"].rstrip().endswith("ValueError: depth 3 is odd")


def test_an_input_edited_during_the_sweep_is_bad_input(tmp_path):
    path = tmp_path / "chain.arch"
    path.write_text(Path(CHAIN).read_text())
    study = Study(str(path), file_digest([path]))
    path.write_text(Path(CHAIN).read_text().replace("messages: int = 10", "messages: int = 11"))
    row = run_point(study, _point(messages=4))
    assert row["outcome"] == "bad-input"
    assert row["message"] == (f"error: the input changed during the sweep: {path} no longer has the SHA-256 "
                              f"{study.input_sha256}\nhint: run the sweep again (its CSV keeps the finished points)")


def test_the_columns_a_metric_is_checked_against_are_the_columns_a_run_fills():
    # the pipeline has counters, formulas, a distribution (the sink's latency) and levels (FIFOs)
    from archmodel.kernel import Simulator
    from archmodel.lang import load
    from archmodel.paths import data_path

    path = str(data_path("topologies") / "pipeline.arch")
    row = run_point(Study(path, file_digest(load(path).sources.files)), _point(messages=20))
    assert row["outcome"] == "stopped"
    expected = stat_columns(Simulator(load(path, params={"messages": "20"}).top).all_stats())
    assert any(c.endswith(".occupancy.max") for c in expected) and any(c.endswith(".latency.p99") for c in expected)
    assert [c for c in row if c.startswith("Pipeline.")] == expected
