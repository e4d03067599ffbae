"""Checks every test shares: none writes into the checkout's ``waves/`` folder (a test that
runs a system with a ``trace`` statement, or ``--vcd`` without a path, works in ``tmp_path``);
and every property test draws the same examples run to run."""

from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw their examples from a fixed seed (each test's own), so a failure in CI
# is the one a developer sees locally, and a test does not pass or fail with the day's
# draw. A test's own @settings keeps this (it inherits from the profile loaded here).
settings.register_profile("archmodel", derandomize=True)
settings.load_profile("archmodel")

WAVES = Path(__file__).resolve().parents[1] / "waves"


def _waves() -> set[str]:
    return set(p.name for p in WAVES.iterdir()) if WAVES.is_dir() else set()


@pytest.fixture(autouse=True)
def _leaves_the_checkout_alone():
    before = _waves()
    yield
    written = sorted(_waves() - before)
    assert not written, f"the test wrote into the checkout's waves/: {', '.join(written)} (run it in tmp_path)"
