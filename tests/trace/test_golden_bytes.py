"""The tracer's bytes stay as they were: randomized designs traced (everything, a window, a
selection, shuffled tick order; run in two slices) give exactly the files in tests/trace/golden,
which the writer of before the batched register lines wrote. ``ARCH_UPDATE_GOLDEN=1`` writes
them again, for a change meant to alter them."""

import os
from pathlib import Path

import pytest

from archmodel.kernel import Simulator
from archmodel.trace import VcdTracer

from .designs import Waveform
from .random_design import GOLDEN_RUNS, random_design

GOLDEN = Path(__file__).parent / "golden"


def traced(tmp_path: Path, seed: int, cycles: int, args: dict) -> Path:
    args = dict(args)
    sim = Simulator(random_design(seed), seed=seed, shuffle=args.pop("shuffle", False))
    path = tmp_path / f"random{seed}.vcd"
    with VcdTracer(path, gtkw=False, **args) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=cycles // 2)
        sim.run(cycles=cycles)
    return path


@pytest.mark.parametrize("seed, cycles, args", GOLDEN_RUNS, ids=[f"seed{run[0]}" for run in GOLDEN_RUNS])
def test_randomized_designs_give_the_pinned_bytes(tmp_path, seed, cycles, args):
    path = traced(tmp_path, seed, cycles, args)
    golden = GOLDEN / f"random{seed}.vcd"
    if os.environ.get("ARCH_UPDATE_GOLDEN"):
        golden.write_bytes(path.read_bytes())
    assert path.read_bytes() == golden.read_bytes()
    Waveform(path)  # and pyvcd's reader takes it


def test_the_pinned_files_hold_every_kind_of_change():
    text = "".join((GOLDEN / f"random{run[0]}.vcd").read_text() for run in GOLDEN_RUNS)
    kinds = {line[0] for line in text.split("$enddefinitions")[-1].splitlines() if line}
    assert {"#", "0", "1", "b", "r", "s"} <= kinds
