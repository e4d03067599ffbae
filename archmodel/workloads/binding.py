"""The Snitch kernels as workloads of the language's ``run NAME(args) on targets`` statement.

A binder receives the list of target components a ``run`` statement selects. The kernels of
one cluster (:mod:`.snitch`) run on each target with its own data (in disjoint parts of the
memory they share), except a streamed ``gemm`` on several clusters, which is one GEMM whose
rows they share; the kernels across clusters (:mod:`.multicluster`, ``gemm_clusters`` and
the others) take every target as a part of one problem. Either way the run ends once every
cluster with a program has finished.
"""

from __future__ import annotations

import inspect
from typing import Callable

from archmodel.kernel import ArchError
from archmodel.kernel.partition import WORKLOAD_END
from archmodel.models.compute import SnitchCluster

from .multicluster import ACROSS, setup_gemm_shared
from .snitch import SETUPS


def _clusters(name: str, targets, args) -> list:
    clusters = [t for t in targets if isinstance(t, SnitchCluster)]
    if not clusters or len(clusters) != len(targets):
        raise ArchError(f"workload '{name}' runs on SnitchCluster instances",
                        hint="target a cluster, e.g. run gemm(...) on node.cluster")
    if args:
        raise ArchError(f"workload '{name}' takes named arguments only, e.g. {name}(n = 1024)")
    return clusters


def _binder(name: str, setup: Callable, across: bool) -> Callable:
    def bind(targets, *args, **kwargs):
        clusters = _clusters(name, targets, args)
        try:
            if across:
                setup(clusters, None, **kwargs)
            elif name == "gemm" and kwargs.get("streamed") and len(clusters) > 1:
                # one GEMM, its rows shared out: the operands live once in the memory they all reach
                setup_gemm_shared(clusters, None, **{k: v for k, v in kwargs.items() if k != "streamed"})
            else:
                places_outside = "region" in inspect.signature(setup).parameters
                regions = _regions(clusters) if places_outside else [None] * len(clusters)
                for cluster, region in zip(clusters, regions):
                    if region is None:
                        setup(cluster, None, **kwargs)
                    else:
                        setup(cluster, None, region=region, **kwargs)
            for cluster in clusters:
                cluster.on_finish(end_when_every_cluster_finished)
        except TypeError as err:
            raise ArchError(f"workload '{name}': {err}".replace(f"{setup.__name__}() ", "")) from None
        except ValueError as err:
            raise ArchError(f"workload '{name}': {err}") from None
        except MemoryError:  # operands sized by the .arch file beyond what the host can hold
            raise ArchError(f"workload '{name}': its operands do not fit in this computer's memory") from None
    bind.__doc__ = setup.__doc__
    return bind


def end_when_every_cluster_finished(cluster: SnitchCluster) -> None:
    """A workload of a ``run`` statement ends the simulation once every cluster with a program
    has finished: the memories next to them may never fall quiet (DRAM refreshes for ever)."""
    for part in cluster.sim.components:
        if isinstance(part, SnitchCluster) and part.done_cycle < 0 \
                and any(core.program is not None for core in part.core_list):
            return
    cluster.sim.stop(WORKLOAD_END)


def _regions(clusters: list) -> list:
    """Disjoint parts of the outside memory for clusters that run the same kernel on their own
    data: several clusters on one memory would otherwise place their data at the same
    addresses. None for a cluster without an outside memory (its kernel must be resident)."""
    memories = [c.outside_memory() for c in clusters]
    if len(clusters) == 1 or any(m is None or not hasattr(m, "size_bytes") for m in memories):
        return [None] * len(clusters)
    regions = []
    for j, memory in enumerate(memories):
        share = memory.size_bytes // len(clusters) // 4096 * 4096
        regions.append((memory.base_address + j * share, share))
    return regions


KERNELS = {**{name: _binder(name, setup, False) for name, setup in SETUPS.items()},
           **{name: _binder(name, setup, True) for name, setup in ACROSS.items()}}
"""Binders for ``run NAME(args) on cluster`` (or ``on cluster[*]``) in .arch files."""
