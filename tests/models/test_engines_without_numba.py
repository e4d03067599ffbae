"""Where numba cannot run (missing, or outside the tested versions), every family's
``engine="auto"`` runs the Python model, and says why where it reports a reason."""

import numpy as np
import pytest

from archmodel.kernel import Simulator, compiled
from archmodel.models.memory import DramController, compiled_core
from archmodel.models.network import Noc
from archmodel.models.network.compiled_engine import refusal
from archmodel.workloads.snitch import SETUPS, build_system

from .compute.test_compiled_reference import build, random_case, random_stream
from .network.test_compiled_engine import REFERENCE

UNTESTED = "0.50.0"


@pytest.fixture(params=[False, True], ids=["numba", "untested numba"])
def untested(request, monkeypatch):
    if request.param:
        monkeypatch.setattr(compiled, "_installed_version", lambda: UNTESTED)
        monkeypatch.setattr(compiled, "_numba", None)
    return request.param


def _why() -> str:
    return f"numba {UNTESTED} is outside the tested versions ({compiled.NUMBA_REQUIREMENT})"


def test_the_cluster_runs_python_on_auto(untested):
    top = build_system(engine="auto")
    cluster = top.child("cluster")
    SETUPS["gemm"](cluster, top.child("memory"), m=16, n=16, k=8)
    Simulator(top).run()
    assert (cluster.n_compiled_cycles == 0) == untested


def test_the_reference_pair_runs_python_on_auto(untested):
    rng = np.random.default_rng(5)
    stream, initial = random_stream(rng, 60, span_lines=4)
    top, core, cache, memory = build("auto", stream, initial, dict(random_case(rng, 60), ends=[]), "ideal")
    Simulator(top).run()
    assert core.done and (core.compiled is None) == untested


def test_the_network_refuses_the_loop_on_auto(untested):
    noc = Noc("net", engine="auto", vcs=2, buffer_depth=4, traffic="uniform", rate=0.05, **REFERENCE)
    assert refusal(noc) == (_why() if untested else None)
    assert noc.stepping == ("fast" if untested else "compiled")


def test_the_dram_core_names_the_reason(untested):
    controller = DramController("mem", standard="DDR4-2400R")
    assert compiled_core.unsupported_reason(controller) == (_why() if untested else None)
