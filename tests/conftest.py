"""Checks every test shares: none writes into the checkout's ``waves/`` folder (a test that
runs a system with a ``trace`` statement, or ``--vcd`` without a path, works in ``tmp_path``)."""

from pathlib import Path

import pytest

WAVES = Path(__file__).resolve().parents[1] / "waves"


def _waves() -> set[str]:
    return set(p.name for p in WAVES.iterdir()) if WAVES.is_dir() else set()


@pytest.fixture(autouse=True)
def _leaves_the_checkout_alone():
    before = _waves()
    yield
    written = sorted(_waves() - before)
    assert not written, f"the test wrote into the checkout's waves/: {', '.join(written)} (run it in tmp_path)"
