"""The tracer's bytes stay as they were: randomized designs traced (everything, a window, a
selection, shuffled tick order; run in two slices) give exactly the bytes whose SHA-256
digests tests/trace/golden_vcd.sha256 holds, which the writer of before the batched register
lines wrote (the waveforms themselves are not kept in git). ``ARCH_UPDATE_GOLDEN=1`` writes the
digests again, for a change meant to alter them."""

import hashlib
import os
from pathlib import Path

import pytest

from archmodel.kernel import Simulator
from archmodel.trace import VcdTracer

from .designs import Waveform
from .random_design import GOLDEN_RUNS, random_design

DIGESTS = Path(__file__).parent / "golden_vcd.sha256"


def traced(tmp_path: Path, seed: int, cycles: int, args: dict) -> Path:
    args = dict(args)
    sim = Simulator(random_design(seed), seed=seed, shuffle=args.pop("shuffle", False))
    path = tmp_path / f"random{seed}.vcd"
    with VcdTracer(path, gtkw=False, **args) as tracer:
        sim.add_observer(tracer)
        sim.run(cycles=cycles // 2)
        sim.run(cycles=cycles)
    return path


def pinned_digests() -> dict[str, str]:
    """File name -> SHA-256 of its pinned bytes (``sha256sum`` format)."""
    pairs = (line.split() for line in DIGESTS.read_text().splitlines() if line.strip())
    return {name: digest for digest, name in pairs}


def update_digest(name: str, digest: str) -> None:
    digests = pinned_digests() | {name: digest}
    DIGESTS.write_text("".join(f"{digests[key]}  {key}\n" for key in sorted(digests)))


@pytest.mark.parametrize("seed, cycles, args", GOLDEN_RUNS, ids=[f"seed{run[0]}" for run in GOLDEN_RUNS])
def test_randomized_designs_give_the_pinned_bytes(tmp_path, seed, cycles, args):
    path = traced(tmp_path, seed, cycles, args)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if os.environ.get("ARCH_UPDATE_GOLDEN"):
        update_digest(path.name, digest)
    assert digest == pinned_digests()[path.name]
    Waveform(path)  # and pyvcd's reader takes it


def test_the_pinned_runs_hold_every_kind_of_change(tmp_path):
    text = "".join(traced(tmp_path, *run).read_text() for run in GOLDEN_RUNS)
    kinds = {line[0] for line in text.split("$enddefinitions")[-1].splitlines() if line}
    assert {"#", "0", "1", "b", "r", "s"} <= kinds
