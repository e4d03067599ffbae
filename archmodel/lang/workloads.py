"""The registry that ``run workload(args) on targets`` statements resolve against.

A workload is a binder ``fn(targets, *args, **kwargs)`` under its name; elaboration calls it
with the list of target components once the system is built. Importing this module registers
the tables of the built-in families (the workloads do not import the language, so it is this
module that reads them): the Snitch kernels (:mod:`archmodel.workloads.binding`), the training
step (:mod:`archmodel.workloads.training`), the graph algorithms
(:mod:`archmodel.workloads.graph.workload`) and the convolution sizes
(:mod:`archmodel.workloads.conv.workload`). A plugin adds its own with
:func:`register_workload`. Any other name is an 'unknown workload' error listing the known
ones.
"""

from __future__ import annotations

from typing import Callable

from ..kernel import Registry

WORKLOADS: Registry[Callable] = Registry("workload")
"""Every workload binder by the name a ``run`` statement gives (``WORKLOADS.lookup`` is the
'unknown workload' error with its hint)."""


def register_workload(name: str) -> Callable[[Callable], Callable]:
    """Decorator: make a workload binder usable by name in ``run`` statements."""
    return WORKLOADS.register(name)


def workloads() -> dict[str, Callable]:
    """All registered workloads by name, sorted."""
    return dict(sorted(WORKLOADS.items()))


def _register_builtin() -> None:
    # The workload families register here; lang may import workloads (not the reverse).
    from archmodel.workloads.conv.workload import WORKLOADS as CONV_WORKLOADS
    from archmodel.workloads.graph.workload import WORKLOADS as GRAPH_WORKLOADS
    from archmodel.workloads.binding import KERNELS
    from archmodel.workloads.training import WORKLOADS as TRAINING

    for name, binder in {**KERNELS, **TRAINING, **GRAPH_WORKLOADS, **CONV_WORKLOADS}.items():
        if name not in WORKLOADS:
            WORKLOADS.add(name, binder)


_register_builtin()
