"""The compiled network's loops (the synthetic whole-run loop, the memory-traffic edge and the
parts they share) are compiled once and then loaded from numba's on-disk cache: a second
process with the same cache compiles none of them, and runs alike."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# Runs a small memory-traffic system on the compiled network and a small synthetic compiled
# Noc, and prints the network functions numba compiled meanwhile (its own compile events: a
# function loaded from the cache raises none) with what the runs gave.
_RUN_BOTH = """
import json
from numba.core.event import install_recorder
from tests.models.network.test_compiled_engine import REFERENCE, VCS
from tests.models.network.test_compiled_memory import run_system
from tests.models.network.test_engine import delivered_packets

with install_recorder("numba:compile") as recorder:
    memory, noc = run_system(0, "compiled")
    synthetic = delivered_packets("compiled", 1, **dict(REFERENCE, **VCS["2x4"], topology="mesh(3, 3)",
                                  traffic="uniform", rate=0.1, warmup_periods=1, sample_period=100,
                                  drain_limit=200, watchdog=100))
compiled = sorted({event.data["dispatcher"].py_func.__name__ for _, event in recorder.buffer
                   if event.data["dispatcher"].py_func.__module__.startswith("archmodel.models.network.")})
print(json.dumps(dict(stepping=noc.stepping, compiled=compiled, results=repr((memory, synthetic)))))
"""


def _run(cache: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", _RUN_BOTH], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "NUMBA_CACHE_DIR": str(cache)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_second_process_loads_the_network_loops_from_the_cache_and_compiles_none(tmp_path):
    first = _run(tmp_path / "cache")
    assert first["stepping"] == "compiled"
    assert {"edge", "quiet_until", "run", "step_routers", "tie_coin"} <= set(first["compiled"])
    second = _run(tmp_path / "cache")
    assert second["compiled"] == []
    assert second["results"] == first["results"]
