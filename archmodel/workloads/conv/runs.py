"""Lowerings of layers run back to back on one Snitch cluster, in the simulation of the system
the cluster is part of.

A :class:`NetworkSchedule` says what to run: every chosen lowering of every layer (a slice of
``slice_steps`` steps scaled to the layer, see :func:`slice_of`, or the whole layer), and with
``whole_chosen`` each layer's fastest lowering again on the whole layer. A
:class:`ClusterRuns` runs its jobs one after another on a cluster wired to whatever memory its
DMA port reaches (an ideal memory, an HBM pseudo-channel, DRAM behind an interleaver or a
network): a job's input, kernel and output region go into that memory through its
``backdoor_write``, its programs are loaded and the cluster woken; when the cluster finishes,
the output is read back through ``backdoor_read`` and compared with numpy (a difference stops
the run), the job's cycles, FPU operations and DMA bytes are the differences of the cluster's
counters over the job, and the next job starts at the next cycle. The memory keeps its state
from one job to the next (open rows, queues, refresh), as it would between a network's layers;
the instruction cache is invalidated with each new program.

Scaling a slice to its layer: the layer takes ``slice cycles / fraction`` where ``fraction``
is the slice's share of the (band, block, chunk) steps weighted by rows (CPO/CPS: by stored
non-zeros). This holds because every step of a layer does the same work on the same sizes:
the GEMMs' timing does not depend on the values, and the CPO/CPS work of a band follows its
non-zeros, which random activations of one density spread evenly over the bands. What the
scaling repeats wrongly is the once-per-run prologue (the first fetch) and epilogue (the last
write-back); ``benchmarks/conv.py`` compares slices with whole layers. A batch larger than 1
runs image 0 and counts ``batch`` times its cycles.
"""

from __future__ import annotations

import math
from typing import Callable, Generator

import attrs
import numpy as np

from archmodel.kernel import ArchError
from archmodel.models.compute import SnitchCluster

from .kernels import setup_conv
from .layers import Layer, activations, weights
from .lowering import METHODS, lowered_size
from .tiling import plan


@attrs.frozen
class MethodTiming:
    """One lowering of one layer on the cluster. ``cycles`` and ``dma_bytes`` are the
    layer's (the slice's scaled by 1 / ``fraction``); ``tcdm_bytes`` is the TCDM holding the
    lowered input (its two buffers, and CPO/CPS's compacted tile); ``lowered_bytes`` the
    whole layer's lowered input; ``compact_cycles`` the layer's cycles in the CPO/CPS
    compaction (scaled as ``cycles``)."""

    method: str
    cycles: int
    slice_cycles: int
    fraction: float
    fpu_utilisation: float
    dma_bytes: int
    tcdm_bytes: int
    lowered_bytes: int
    tiling: str
    steps: int
    compact_cycles: int = 0


@attrs.frozen
class LayerTiming:
    """Every timed lowering of one layer."""

    layer: Layer
    density: float | None
    methods: dict

    @property
    def chosen(self) -> str:
        """The fastest lowering (ties: the earlier in METHODS)."""
        return min(self.methods, key=lambda m: (self.methods[m].cycles, METHODS.index(m)))

    def compression(self, method: str) -> float:
        """im2col's lowered bytes over ``method``'s."""
        stored = self.methods[method].lowered_bytes
        return lowered_size("im2col", self.layer).bytes / stored if stored else math.inf


def slice_of(tiling, slice_steps: int | None) -> dict:
    """The :func:`~.kernels.setup_conv` arguments of the slice: up to ``slice_steps`` steps,
    first the chunks of one filter block of the middle band, then more bands around it."""
    if slice_steps is None:
        return {}
    if slice_steps < 1:
        raise ArchError(f"slice must be a positive number of steps, got {slice_steps}")
    chunks = min(tiling.chunks, slice_steps)
    count = min(len(tiling.bands), max(1, slice_steps // chunks))
    first = (len(tiling.bands) - count) // 2
    return {"bands": range(first, first + count), "blocks": 1, "chunks": chunks}


@attrs.frozen
class Job:
    """One lowering of one layer (with its activations and weights) to run: all of it
    (``slice_steps`` None) or a slice."""

    layer: Layer
    method: str
    x: np.ndarray = attrs.field(repr=False)
    w: np.ndarray = attrs.field(repr=False)
    slice_steps: int | None
    indirect: bool = False


class NetworkSchedule:
    """The jobs timing ``layers`` under ``methods``: layer ``k`` draws its activations and
    weights with ``seed + k``; ``whole_chosen`` then runs each layer's fastest method on the
    whole layer (its slice-scaled timing replaced by the measured one; the choice stays the
    slices'). ``seeds`` gives each layer's seed instead (a selection of a network's layers
    keeps the seeds they have in it); ``data``, a list of (activations, weights) per layer,
    replaces the drawn ones. ``indirect``: CPO's SpMV gathers through indirect streams
    (:mod:`.indirect`) where its tiling allows. ``rows`` holds a :class:`LayerTiming` per
    layer done."""

    def __init__(self, layers: list[Layer], density: float | None, methods, *, seed: int = 0,
                 slice_steps: int | None = 16, whole_chosen: bool = False, seeds: list | None = None,
                 data: list | None = None, indirect: bool = False):
        self.layers = list(layers)
        self.density = density
        self.methods = list(methods)
        self.seeds = list(seeds) if seeds is not None else [seed + k for k in range(len(self.layers))]
        self.slice_steps = slice_steps
        self.whole_chosen = whole_chosen
        self.data = data
        self.indirect = indirect
        self.rows: list[LayerTiming] = []

    def jobs(self) -> Generator[Job, MethodTiming, None]:
        """The jobs in order; each is sent back its :class:`MethodTiming`."""
        for k, layer in enumerate(self.layers):
            x, w = self.data[k] if self.data is not None else \
                (activations(layer, self.density, self.seeds[k]), weights(layer, self.seeds[k]))
            timed = {}
            for method in self.methods:
                timed[method] = yield Job(layer, method, x, w, self.slice_steps, self.indirect)
            if self.whole_chosen and self.slice_steps is not None:
                chosen = LayerTiming(layer, self.density, timed).chosen
                timed[chosen] = yield Job(layer, chosen, x, w, None, self.indirect)
            self.rows.append(LayerTiming(layer, self.density, timed))


class ClusterRuns:
    """Runs the jobs of ``schedule`` one after another on ``cluster`` and the memory at its
    DMA port (or ``memory``), from the cycle :meth:`begin` is called at (before the
    simulation: its first). ``on_layer(row)`` is called as each layer's timing is complete,
    ``on_end(rows)`` after the last job (the simulation goes on; the caller stops it if it
    must, a DRAM refreshes for ever)."""

    def __init__(self, cluster: SnitchCluster, schedule: NetworkSchedule, memory=None, *,
                 on_layer: Callable | None = None, on_end: Callable | None = None):
        self.cluster = cluster
        self.memory = memory
        self.schedule = schedule
        self.on_layer = on_layer
        self.on_end = on_end
        self.jobs = schedule.jobs()
        self.job: Job | None = None
        self.placed = None
        self.first_cycle = 0
        self.counted = (0, 0)
        self.n_jobs = 0
        self.n_cycles = 0  # cycles of every job run (slices as run, not scaled)
        self.n_dma_bytes = 0  # bytes the DMA moved in them
        cluster.on_finish(self._finished)

    def begin(self) -> None:
        """Set up the first job."""
        self._start(next(self.jobs, None), 0)

    def _counters(self) -> tuple[int, int]:
        cluster = self.cluster
        return sum(c.n_fpu for c in cluster.compute_cores), cluster.dma.n_in + cluster.dma.n_out

    def _start(self, job: Job | None, first_cycle: int) -> None:
        self.job = job
        if job is None:
            if self.on_end is not None:
                self.on_end(self.schedule.rows)
            return
        cluster = self.cluster
        one = attrs.evolve(job.layer, batch=1)
        x = job.x[:1]
        try:
            tiling = plan(one, job.method, cluster.tcdm_bytes, cluster.cores,
                          one_row=job.indirect and job.method == "cpo")
            self.placed = setup_conv(cluster, self.memory, one, job.method, x, job.w, tiling=tiling,
                                     register_check=False, indirect=job.indirect, **slice_of(tiling, job.slice_steps))
        except ValueError as err:
            raise ArchError(str(err)) from None
        cluster.result_ok = False
        self.first_cycle = first_cycle
        self.counted = self._counters()

    def _finished(self, cluster: SnitchCluster) -> None:
        job, placed = self.job, self.placed
        if job is None:
            return
        placed.check(cluster)  # stops the run unless the output in the memory is numpy's
        cycles = cluster.run_cycles() - self.first_cycle
        fpu, dma = (now - then for now, then in zip(self._counters(), self.counted))
        self.n_jobs += 1
        self.n_cycles += cycles
        self.n_dma_bytes += dma
        scale = job.layer.batch / placed.fraction
        one = attrs.evolve(job.layer, batch=1)
        timing = MethodTiming(
            job.method, round(cycles * scale), cycles, placed.fraction, 100.0 * fpu / (cluster.cores * cycles),
            round(dma * scale), placed.tcdm_input_bytes,
            lowered_size(job.method, one, activations=job.x[:1]).bytes * job.layer.batch, str(placed.tiling),
            placed.steps, round(placed.compact_cycles(cluster) * scale))
        done = len(self.schedule.rows)
        try:
            following = self.jobs.send(timing)
        except StopIteration:
            following = None
        if len(self.schedule.rows) > done and self.on_layer is not None:
            self.on_layer(self.schedule.rows[-1])
        self._start(following, cluster.run_cycles())
        if following is not None:
            cluster.wake_in(1)
