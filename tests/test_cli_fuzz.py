"""Fuzzing the command line (issue 12): random combinations of every option of check, show
and run, with good and bad values, on small bundled systems. Whatever the combination, the
command ends with an exit code that means something (0, 1 for a failed simulation, 2 bad
input, 3 an unstable measurement), prints no Python traceback, never changes its input and
leaves no half-written file."""

import hashlib
import shutil

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from archmodel.cli import main
from archmodel.paths import data_path

TARGETS = ["pipeline.arch", "mesh4x4.arch", "dram_ddr4.arch", "arbiter_tree.arch"]
PARAMS = ["messages=3", "messages=-1", "messages=1e400", "messages=abc", "hop=3 ns", "hop=3 THz", "hop=",
          "=3", "nope=1", "rows=2", "cols=100000", "packets=5", "requests=10", "requests=1" + "0" * 5000,
          'traffic="unifrom"', "x=\xe9", "messages=2**4000"]
VALUES = ["0", "1", "-1", "7", "1e9", "abc", "", "10ns", "5 us", "-3ps", "9" * 30, "\x00", "ü"]
PATHS = ["out.vcd", "out.json", "out.csv", "sub/dir/w.vcd", "{target}", ".", "/dev/null", "/dev/full",
         "/proc/x.json", "out.gtkw", "a_file/x.json"]


def option(name, values):
    return st.tuples(st.just(name), st.sampled_from(values))


OPTIONS = st.one_of(
    option("-p", PARAMS), option("--seed", VALUES), option("--cycles", VALUES), option("--until", VALUES),
    option("--watchdog", VALUES), option("--top", ["Pipeline", "Nope", "", "Stage"]),
    option("--trace", ["*", "Pipeline.src.*", "nothing.*", "[", ""]), option("--trace-from", VALUES),
    option("--trace-to", VALUES), option("--vcd", PATHS), option("--stats", PATHS),
    option("--max-instances", VALUES), option("--import-path", [".", "/nonexistent", "a_file"]),
    option("--plugin", ["plugin.py", "missing.py", "{target}"]), option("--dot", PATHS),
)


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


@settings(max_examples=120, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(command=st.sampled_from(["check", "show", "run"]), target=st.sampled_from(TARGETS),
       options=st.lists(OPTIONS, max_size=5))
def test_any_combination_of_options_ends_cleanly(tmp_path_factory, capsys, monkeypatch, command, target, options):
    work = tmp_path_factory.mktemp("fuzz")
    monkeypatch.chdir(work)
    source = work / target
    shutil.copy(data_path("topologies") / target, source)
    (work / "a_file").write_text("a file, not a folder\n")
    (work / "plugin.py").write_text("X = 1\n")
    before = _digest(source)
    argv = [command, target]
    for name, value in options:
        if command != "show" and name == "--dot" or command != "run" and name in (
                "--seed", "--cycles", "--until", "--watchdog", "--trace", "--trace-from", "--trace-to", "--vcd",
                "--stats"):
            continue
        argv += [name, value.format(target=target)]
    if command == "run" and "--cycles" not in argv and "--until" not in argv:
        argv += ["--cycles", "300"]
    try:
        code = main(argv + ["-q"] if command == "run" else argv)
    except SystemExit as stop:  # argparse refusing an option's value
        code = stop.code
    captured = capsys.readouterr()
    event(f"{command} exit {code}")  # (shown with --hypothesis-show-statistics)
    assert code in (0, 1, 2, 3), (argv, code, captured.err)
    assert "Traceback" not in captured.err, (argv, captured.err)
    if code != 0:
        assert "error" in captured.err, (argv, captured.err)
    assert _digest(source) == before, argv
    assert (work / "a_file").read_text() == "a file, not a folder\n", argv
    assert not list(work.rglob(".*.partial")), argv


def test_the_fuzzing_reaches_success_and_every_kind_of_refusal(tmp_path, capsys, monkeypatch):
    # The property above means something only if its inputs run, fail in the parser and fail
    # in the checks: three hand-picked points of its space.
    monkeypatch.chdir(tmp_path)
    shutil.copy(data_path("topologies") / "pipeline.arch", tmp_path / "pipeline.arch")
    assert main(["run", "pipeline.arch", "--cycles", "300", "-q", "--stats", "out.json"]) == 0
    with pytest.raises(SystemExit) as stop:
        main(["run", "pipeline.arch", "--seed", "abc"])
    assert stop.value.code == 2
    assert main(["run", "pipeline.arch", "--stats", "pipeline.arch"]) == 2
    capsys.readouterr()
