"""``archmodel check`` and ``show`` look at a system without an engine."""

import pytest

from archmodel.cli import main
from archmodel.kernel import Simulator
from archmodel.paths import data_path


@pytest.fixture
def no_engine(monkeypatch):
    def refuse(self, *args, **kwargs):
        raise AssertionError("a Simulator was made")

    monkeypatch.setattr(Simulator, "__init__", refuse)


def test_check_and_show_of_a_system_and_a_builder_make_no_simulator(no_engine, capsys, tmp_path):
    pipeline = str(data_path("topologies") / "pipeline.arch")
    assert main(["check", pipeline]) == 0
    assert capsys.readouterr().out == (f"ok: {pipeline}: system Pipeline, 15 components (15 instances), "
                                       "9 channels, 2 clock domains\n")
    assert main(["show", pipeline, "--dot", str(tmp_path / "g.dot")]) == 0
    assert "instances: 4 DelayLine, 4 Fifo, 1 Pipeline, 1 Sink, 1 Source, 4 Stage" in capsys.readouterr().out
    assert main(["show", "tests.cli_systems:pair"]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == ["clocks: clk 1000 ps", "instances: 1 Component, 1 Consumer, 1 Producer",
                                                         "channels: 1"]
