"""The three schedules of one data-parallel training step, as a program of tasks per GPU.

* **ZeRO-3** (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
  Parameter Models", SC 2020): parameters, gradients and Adam state are sharded over all
  ``P`` GPUs. Per layer: all-gather the parameters before its forward, again before its
  backward, reduce-scatter its gradients after the backward. The all-gather of the next
  layer runs while this one computes (``prefetch`` layers ahead).
* **FCDP** (Park et al., "FCDP: Fully Cached Data Parallel for Communication-Avoiding
  Large-Scale Training", arXiv 2602.06499): the forward all-gather crosses nodes first
  (rails), and each GPU copies the node slice it then holds to host memory over PCIe
  while the gather finishes inside the node; the backward reads the slice back and
  all-gathers inside the node only. Across nodes: one all-gather and one reduce-scatter.
  Its placement rule (``placement = "auto"``): a slice stays in GPU memory instead when the
  GPU has room for it after the step's peak, the layers the backward needs first first.
* **FCDP with PEFT**: the frozen weights live in the host cache across steps (read over
  PCIe and gathered inside the node, forward and backward); only the adapters (fraction
  ``trainable_fraction`` of every block) are gathered across nodes, cached, and have their
  gradients reduce-scattered across nodes.

Bytes: FP16 parameters and gradients (2 bytes each), FP32 Adam state (12 bytes per
trainable parameter), as in the ZeRO paper's mixed-precision accounting. A layer's buffer
is padded to a multiple of ``P`` shards of ``ceil(2 * params / P)`` bytes. The backward of
a layer waits for the reduce-scatter of the layer two before it (at most two gradient
buffers live), so memory stays bounded however slow the network.
"""

from __future__ import annotations

import attrs

from archmodel.kernel import ArchError, Registry, did_you_mean
from archmodel.models.training import RankProgram, Send, Task, collective, grouped, shard_bytes

from .shapes import ModelShape

SCHEDULES: Registry[str] = Registry("schedule", {
    "zero3": "ZeRO-3: everything sharded over all GPUs; a layer's parameters all-gathered before its forward "
             "and again before its backward, its gradients reduce-scattered after",
    "fcdp": "FCDP: the forward all-gather crosses nodes first and each GPU caches its node slice; the backward "
            "reads it back and gathers inside the node only",
    "fcdp_peft": "FCDP with PEFT: the frozen weights live in the host cache; only the adapters "
                 "(trainable_fraction) are gathered across nodes and have their gradients reduce-scattered",
})
"""The training schedules a step runs (``schedule``; the module docstring describes them)."""

PLACEMENTS: Registry[str] = Registry("placement", {
    "host": "every cached slice in host memory, over PCIe",
    "auto": "a slice stays in GPU memory when the GPU has room for it after the step's peak, else host memory",
})
"""Where FCDP keeps its cache of gathered parameters (``placement``)."""
PARAM_BYTES = 2
OPTIMIZER_BYTES = 12


def schedule_name(name: str) -> str:
    """``name`` if it is a schedule, else an error with the closest one."""
    if name in SCHEDULES:
        return name
    close = did_you_mean(str(name), SCHEDULES)
    raise ArchError(f"unknown schedule '{name}'", hint=(f"{close} " if close else "") + "schedules: " + ", ".join(SCHEDULES))


@attrs.frozen
class StepOptions:
    """How the step runs: the schedule, the micro-batch per GPU, prefetch depth, activation
    checkpointing, the collective algorithm and its form, chunks per piece, the PEFT
    trainable fraction and FCDP's cache placement."""

    schedule: str = "fcdp"
    micro_batch: int = 1
    prefetch: int = 1
    checkpointing: bool = True
    algorithm: str = "ring"
    hierarchical: bool = True
    chunks: int = 1
    trainable_fraction: float = 0.01
    placement: str = "host"
    layer_times_ps: tuple | None = None

    def __attrs_post_init__(self):
        schedule_name(self.schedule)
        for what in ("micro_batch", "chunks"):
            value = getattr(self, what)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ArchError(f"{what} must be a positive integer, got {value!r}")
        if not isinstance(self.prefetch, int) or isinstance(self.prefetch, bool) or self.prefetch < 0:
            raise ArchError(f"prefetch must be a non-negative integer, got {self.prefetch!r}")
        if not 0 < self.trainable_fraction <= 1:
            raise ArchError(f"trainable_fraction must be in (0, 1], got {self.trainable_fraction!r}")
        if self.layer_times_ps is not None and not all(isinstance(t, int) and t > 0 for t in self.layer_times_ps):
            raise ArchError(f"layer times must be positive, got {list(self.layer_times_ps)!r}")
        if self.placement not in PLACEMENTS:
            raise ArchError(f"unknown placement '{self.placement}'", hint="placements: " + ", ".join(PLACEMENTS))


@attrs.frozen
class Layer:
    """One layer of the step: its parameters (``trainable`` of them updated), FLOPs and the
    activation bytes it keeps from forward to backward (``kept``) or needs while it runs.
    ``forward_ps``, when given (a measured time table), replaces the forward FLOPs over the
    GPU's rate; the backward then takes it times the backward-to-forward FLOP ratio."""

    name: str
    params: int
    trainable: int
    forward_flops: int
    backward_flops: int
    kept: int
    work_forward: int
    work_backward: int
    forward_ps: int | None = None


def step_layers(shape: ModelShape, options: StepOptions) -> list[Layer]:
    """The blocks then the head, with their costs under ``options``."""
    b = options.micro_batch
    peft = options.schedule == "fcdp_peft"
    layers = []
    for index in range(shape.layers):
        flops = shape.block_forward_flops(b)
        act = shape.block_activation_bytes(b)
        # Backward: input gradients (one forward's worth) and weight gradients (another),
        # which PEFT skips for frozen weights; checkpointing recomputes the forward first.
        backward = flops * (1 if peft else 2) + (flops if options.checkpointing else 0)
        trainable = round(options.trainable_fraction * shape.block_params) if peft else shape.block_params
        if options.checkpointing:
            kept, work = shape.checkpoint_bytes(b), act
        else:
            kept, work = act, 0
        layers.append(Layer(f"L{index}", shape.block_params, trainable, flops, backward, kept, work, work))
    head = shape.head_forward_flops(b)
    logits = shape.head_activation_bytes(b)
    layers.append(Layer("head", shape.embedding_params, 0 if peft else shape.embedding_params, head,
                        head * (1 if peft else 2), shape.checkpoint_bytes(b), logits, logits))
    times = options.layer_times_ps
    if times is not None:
        if len(times) not in (shape.layers, shape.layers + 1):
            raise ArchError(f"the layer time table has {len(times)} entries for {shape.layers} blocks",
                            hint=f"give {shape.layers} forward times (the head's from its FLOPs) or "
                                 f"{shape.layers + 1} (blocks, then the head)")
        layers = [attrs.evolve(layer, forward_ps=t) for layer, t in zip(layers, times)] + layers[len(times):]
    return layers


@attrs.define
class StepPlan:
    """What a schedule gives the cluster: tasks and held bytes per GPU endpoint, the peak
    device memory it plans for, the host bytes each node caches, and which layers' slices
    stay on the GPU."""

    tasks: dict
    static_bytes: int
    peak_bytes: int
    host_bytes: int
    on_gpu: tuple
    layers: list
    shards: dict  # layer name -> (frozen or full shard, trainable shard) in bytes


def _host_copy(host: int, nbytes: int, tag, read: bool) -> RankProgram:
    return RankProgram((Send(host, nbytes, tag, request=read),), (tag,))


class _Builder:
    """Appends the tasks of a step to every GPU's program."""

    def __init__(self, shape, options, nodes, hosts, tflops):
        self.options = options
        self.nodes = nodes
        self.hosts = hosts
        self.tflops = tflops
        self.gpus = [e for node in nodes for e in node]
        self.n, self.g = len(nodes), len(nodes[0])
        self.p = self.n * self.g
        self.node_of = {e: a for a, node in enumerate(nodes) for e in node}
        self.rails = [[node[i] for node in nodes] for i in range(self.g)]
        self.layers = step_layers(shape, options)
        self.tasks = {e: [] for e in self.gpus}
        self.compute = {e: [] for e in self.gpus}
        self.reduced = {e: [] for e in self.gpus}

    def add(self, e, task: Task) -> Task:
        self.tasks[e].append(task)
        return task

    def duration(self, e, flops: int) -> int:
        return round(flops / self.tflops[e])

    def gate(self, e, pos: int) -> tuple:
        """The compute task a gather for position ``pos`` waits for (the prefetch window)."""
        before = pos - 1 - self.options.prefetch
        return (self.compute[e][before],) if before >= 0 else ()

    def phases(self, e, name, stream, phases, after=(), alloc=0, free=0) -> list:
        """A task per phase of a collective on one stream; the first takes ``alloc`` when
        it starts, the last frees ``free``."""
        made = []
        for k, (label, programs) in enumerate(phases):
            made.append(self.add(e, Task(f"{name} {label}", stream, "comm", program=programs[e],
                                         after=after if k == 0 else ())))
        if made:
            made[0].alloc_bytes += alloc
            made[-1].free_bytes += free
        return made

    def gather(self, kind, nbytes, key):
        o = self.options
        return collective(kind, self.nodes, nbytes, key, algorithm=o.algorithm, hierarchical=o.hierarchical,
                          chunks=o.chunks)

    def level(self, kind, groups, shard, key, label):
        o = self.options
        return [(label, ph) for ph in grouped(kind, groups, shard, key, algorithm=o.algorithm, chunks=o.chunks)]

    def computing(self, e, layer, backward, deps, alloc, free) -> Task:
        flops = layer.backward_flops if backward else layer.forward_flops
        if layer.forward_ps is not None:
            duration = round(layer.forward_ps * flops / layer.forward_flops)
        else:
            duration = self.duration(e, flops)
        name = f"{'bwd' if backward else 'fwd'} {layer.name}"
        task = self.add(e, Task(name, "compute", "compute", duration, after=tuple(deps),
                                alloc_bytes=alloc, free_bytes=free))
        self.compute[e].append(task)
        return task

    def backward_deps(self, e, bpos: int) -> tuple:
        """A backward waits for the reduce-scatter two layers before it: at most two
        gradient buffers live."""
        return (self.reduced[e][bpos - 2],) if bpos >= 2 and self.reduced[e][bpos - 2] is not None else ()

    def reduce(self, e, layer, backward: Task, grads: list, grad_bytes: int) -> None:
        """The reduce-scatter of a layer's gradients after its backward; it frees them."""
        rs = self.phases(e, f"RS {layer.name}", "reduce", grads, after=(backward,), free=grad_bytes)
        if not rs:
            backward.free_bytes += grad_bytes
        self.reduced[e].append(rs[-1] if rs else None)


def _order(layers):
    return [(layer, False) for layer in layers] + [(layer, True) for layer in reversed(layers)]


def _zero3(b: _Builder) -> None:
    for pos, (layer, backward) in enumerate(_order(b.layers)):
        full = b.p * shard_bytes(PARAM_BYTES * layer.params, b.p)
        phases = b.gather("all_gather", PARAM_BYTES * layer.params, ("ag", pos))
        grads = b.gather("reduce_scatter", PARAM_BYTES * layer.params, ("rs", pos)) if backward else []
        for e in b.gpus:
            ag = b.phases(e, f"AG {'bwd' if backward else 'fwd'} {layer.name}", "gather", phases,
                          after=b.gate(e, pos), alloc=full)
            lone = 0 if ag else full  # one GPU: nothing to gather, the compute takes the layer
            deps = list(ag[-1:])
            if backward:
                deps += b.backward_deps(e, pos - len(b.layers))
                c = b.computing(e, layer, True, deps, lone + layer.work_backward + full,
                                full + layer.work_backward + layer.kept)
                b.reduce(e, layer, c, grads, full)
            else:
                b.computing(e, layer, False, deps, lone + layer.kept + layer.work_forward, full + layer.work_forward)


@attrs.frozen
class _Cached:
    """One layer as FCDP caches it: the frozen (or, without PEFT, whole) and trainable parts
    of a GPU's shard, the slice a GPU caches (its rail's shards), the gathered layer."""

    frozen: int
    trainable: int
    slice: int
    full: int
    on_gpu: bool


def _fcdp_forward(b: _Builder, e, pos: int, layer: Layer, c: _Cached, inter: list, intra: list, peft: bool):
    """The pieces from the other nodes first (FCDP: the whole layer's; PEFT: the adapters',
    the frozen slice read from the host meanwhile), copied to the host as they come, then
    the gather inside the node."""
    gate = b.gate(e, pos)
    host = b.hosts[b.node_of[e]]
    across = b.phases(e, f"AG fwd {layer.name}", "gather", inter, after=gate)
    read = []
    if peft and c.frozen and not c.on_gpu:
        read = [b.add(e, Task(f"read frozen {layer.name}", "host", "comm", after=gate,
                              program=_host_copy(host, b.n * c.frozen, ("frozen", pos, e), True)))]
    written = b.n * c.trainable if peft else c.slice  # PEFT's frozen weights are cached already
    if written and not c.on_gpu:
        b.add(e, Task(f"cache {layer.name}", "host", "comm", after=tuple(across[-1:]) or gate,
                      program=_host_copy(host, written, ("cache", pos, e), False)))
    inside = b.phases(e, f"AG fwd {layer.name}", "gather", intra, after=tuple(read) or (() if across else gate))
    chain = across + read + inside
    if chain:
        chain[0].alloc_bytes += c.full
    deps = (inside[-1:] or across[-1:]) + read
    b.computing(e, layer, False, deps, (0 if chain else c.full) + layer.kept + layer.work_forward,
                c.full - (c.slice if c.on_gpu else 0) + layer.work_forward)


def _fcdp_backward(b: _Builder, e, pos: int, layer: Layer, c: _Cached, intra: list, grads: list, grad_full: int):
    """The slice back from the host (or from GPU memory), the gather inside the node, the
    backward, and the reduce-scatter of the gradients there are."""
    gate = b.gate(e, pos)
    fetch = []
    if not c.on_gpu:
        fetch = [b.add(e, Task(f"read {layer.name}", "host", "comm", after=gate,
                               program=_host_copy(b.hosts[b.node_of[e]], c.slice, ("fetch", pos, e), True)))]
    alloc = c.full - (c.slice if c.on_gpu else 0)  # a slice kept on the GPU is held already
    inside = b.phases(e, f"AG bwd {layer.name}", "gather", intra, after=tuple(fetch) or gate)
    chain = fetch + inside
    if chain:
        chain[0].alloc_bytes += alloc
    deps = chain[-1:] + list(b.backward_deps(e, pos - len(b.layers)))
    task = b.computing(e, layer, True, deps, (0 if chain else alloc) + layer.work_backward + grad_full,
                       c.full + layer.work_backward + layer.kept)
    b.reduce(e, layer, task, grads, grad_full)


def _fcdp(b: _Builder, on_gpu: set, peft: bool) -> None:
    """FCDP and FCDP with PEFT: the slice a GPU holds after the cross-node gather (its
    rail's pieces) is what it caches; the backward (and, with PEFT, the forward's frozen
    part) gathers it inside the node only."""
    n, g, p = b.n, b.g, b.p
    for pos, (layer, backward) in enumerate(_order(b.layers)):
        frozen_params = layer.params - layer.trainable if peft else layer.params
        s_f = shard_bytes(PARAM_BYTES * frozen_params, p) if frozen_params else 0
        s_t = shard_bytes(PARAM_BYTES * layer.trainable, p) if peft and layer.trainable else 0
        c = _Cached(s_f, s_t, n * (s_f + s_t), p * (s_f + s_t), layer.name in on_gpu)
        intra = b.level("all_gather", b.nodes, n * (s_f + s_t), ("agi", pos), "intra") if g > 1 else []
        if not backward:
            crossing = s_t if peft else s_f  # the part gathered across nodes
            inter = b.level("all_gather", b.rails, crossing, ("agx", pos), "inter") if crossing and n > 1 else []
            for e in b.gpus:
                _fcdp_forward(b, e, pos, layer, c, inter, intra, peft)
            continue
        updated = layer.trainable if peft else layer.params
        grads = b.gather("reduce_scatter", PARAM_BYTES * updated, ("rs", pos)) if updated else []
        grad_full = p * shard_bytes(PARAM_BYTES * updated, p) if updated else 0
        for e in b.gpus:
            _fcdp_backward(b, e, pos, layer, c, intra, grads, grad_full)


def _static_bytes(layers, options, p: int) -> int:
    """Per GPU: the FP16 shard of every parameter, and FP16 gradients and FP32 Adam state
    of the trainable ones."""
    total = 0
    for layer in layers:
        frozen = layer.params - layer.trainable
        total += shard_bytes(PARAM_BYTES * frozen, p) if frozen else 0
        if layer.trainable:
            s = shard_bytes(PARAM_BYTES * layer.trainable, p)
            total += s + s + OPTIMIZER_BYTES // PARAM_BYTES * s
    return total


def _peak(layers, options, p: int, static: int) -> int:
    """The most device memory the step can hold at once: held state, every layer's kept
    activations, the largest working set, ``prefetch + 1`` gathered layers and two
    gradient buffers."""
    full = [p * shard_bytes(PARAM_BYTES * layer.params, p) for layer in layers]
    grads = [p * shard_bytes(PARAM_BYTES * layer.trainable, p) if layer.trainable else 0 for layer in layers]
    work = max(max(layer.work_forward, layer.work_backward) for layer in layers)
    return (static + sum(layer.kept for layer in layers) + work + (options.prefetch + 1) * max(full)
            + 2 * max(grads))


def plan_step(shape: ModelShape, options: StepOptions, nodes: list[list[int]], hosts: list[int],
              tflops: dict, memory_bytes: int) -> StepPlan:
    """The tasks of one step of ``shape`` under ``options`` on GPUs ``nodes`` (endpoints per
    node) with host memories ``hosts`` (one endpoint per node), GPU rates ``tflops`` by
    endpoint and the smallest GPU's ``memory_bytes`` (for FCDP's placement rule)."""
    b = _Builder(shape, options, nodes, hosts, tflops)
    p, n = b.p, b.n
    static = _static_bytes(b.layers, options, p)
    peak = _peak(b.layers, options, p, static)
    shards, on_gpu, cached = {}, [], 0
    for layer in b.layers:
        frozen = layer.params - layer.trainable if options.schedule == "fcdp_peft" else layer.params
        trainable = layer.trainable if options.schedule == "fcdp_peft" else 0
        shards[layer.name] = (shard_bytes(PARAM_BYTES * frozen, p) if frozen else 0,
                              shard_bytes(PARAM_BYTES * trainable, p) if trainable else 0)
    if options.schedule == "zero3":
        _zero3(b)
    else:
        room = memory_bytes - peak
        for layer in reversed(b.layers):  # the backward needs the last layers first
            slice_bytes = n * sum(shards[layer.name])
            if options.placement == "auto" and slice_bytes <= room:
                on_gpu.append(layer.name)
                room -= slice_bytes
                peak += slice_bytes
            else:
                cached += b.g * slice_bytes
        _fcdp(b, set(on_gpu), options.schedule == "fcdp_peft")
    return StepPlan(b.tasks, static, peak, cached, tuple(on_gpu), b.layers, shards)
