"""A sweep's CSV: valid after every row, widened in place when a row brings new columns, read
back typed for resuming, and never mixed with another sweep's rows."""

import csv

import pytest

from archmodel.experiments.results import ResultsFile, row_key
from archmodel.experiments.runner import RUN_COLUMNS
from archmodel.kernel import ArchError


def _row(rate, **stats):
    return {"rate": rate, "seed": 0, "outcome": "measured", "message": "", "simulated_ps": 1000, "ticks": 10,
            "wall_s": 0.5, "cpu_s": 0.25, "input_sha256": "0123abc", **stats}


def test_rows_append_and_a_new_column_widens_the_file(tmp_path):
    path = tmp_path / "s.csv"
    results = ResultsFile(path, ["rate"])
    results.start()
    assert path.read_text() == ",".join(["rate", *RUN_COLUMNS]) + "\n"
    results.add(_row(0.1, **{"T.a": 1}))
    results.add(_row(0.2, **{"T.a": 2}))
    assert [r["T.a"] for r in csv.DictReader(path.open())] == ["1", "2"]
    results.add(_row(0.3, **{"T.a": 3, "T.b": None, "T.c": 1.5}))  # a bigger system: more statistics
    rows = list(csv.DictReader(path.open()))
    assert [(r["rate"], r["T.a"], r["T.b"], r["T.c"]) for r in rows] == [("0.1", "1", "", ""), ("0.2", "2", "", ""),
                                                                         ("0.3", "3", "", "1.5")]
    results.close()


def test_rows_read_back_typed_with_the_keys_of_their_points(tmp_path):
    path = tmp_path / "s.csv"
    first = ResultsFile(path, ["rate"])
    first.start()
    first.add(_row(0.1, **{"T.a": 1, "T.msg": "x"}))
    first.add({**_row(0.2), "outcome": "bad-input", "message": "line 1\nline 2"})
    first.finish([])
    again = ResultsFile(path, ["rate"])
    assert again.rows[0]["rate"] == 0.1 and again.rows[0]["T.a"] == 1 and again.rows[0]["input_sha256"] == "0123abc"
    assert again.rows[1]["message"] == "line 1\nline 2"
    assert again.done() == {(("0.1",), "0", "0123abc"), (("0.2",), "0", "0123abc")}
    assert again.done(retry_failed=True, failed=("bad-input",)) == {(("0.1",), "0", "0123abc")}
    assert row_key(again.rows[0], ["rate"]) == (("0.1",), "0", "0123abc")


def test_finish_puts_rows_in_point_order_and_keeps_rows_of_other_points_after(tmp_path):
    path = tmp_path / "s.csv"
    results = ResultsFile(path, ["rate"])
    results.start()
    for rate in (0.3, 0.1, 0.9, 0.2):
        results.add(_row(rate))
    results.finish([((str(r),), "0", "0123abc") for r in (0.1, 0.2, 0.3)])
    assert [r["rate"] for r in csv.DictReader(path.open())] == ["0.1", "0.2", "0.3", "0.9"]


def test_another_sweeps_file_is_refused_unless_fresh(tmp_path):
    path = tmp_path / "s.csv"
    results = ResultsFile(path, ["rate"])
    results.start()
    with pytest.raises(ArchError) as caught:
        ResultsFile(path, ["rate", "depth"])
    assert caught.value.message == f"{path} holds another sweep (parameter columns: rate; this one has: rate, depth)"
    assert ResultsFile(path, ["rate", "depth"], fresh=True).rows == []
