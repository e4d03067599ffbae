"""Training traffic: one data-parallel step of a GPT-style model under ZeRO-3, FCDP or FCDP
with PEFT, on a cluster described in ``.arch`` (``library/training.arch``).

``run train_step(model = "7b", schedule = "fcdp") on node[*]`` binds it: the targets are the
nodes (each holding :class:`~archmodel.models.training.Gpu` s, a
:class:`~archmodel.models.training.HostMemory` and links), GPU endpoints are numbered node by
node, routes come from the wiring (:func:`~archmodel.models.training.install_routes`), the
schedule (:mod:`.schedules`) gives every GPU its tasks, and a :class:`~.report.StepReport`
beside the cluster reports the step. Shapes: :mod:`.shapes`.
"""

from __future__ import annotations


from archmodel.kernel import ArchError, Component, did_you_mean
from archmodel.models.training import Forwarder, Gpu, HostMemory, install_routes

from .report import StepReport, StepResult
from .schedules import SCHEDULES, StepOptions, StepPlan, plan_step, schedule_name, step_layers
from .shapes import SHAPES, ModelShape, model_shape

__all__ = ["SCHEDULES", "SHAPES", "ModelShape", "StepOptions", "StepPlan", "StepReport", "StepResult", "WORKLOADS",
           "bind_train_step", "model_shape", "plan_step", "step_layers"]


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


def _root(part: Component) -> Component:
    while part.parent is not None:
        part = part.parent
    return part


def _cluster(targets: list) -> tuple[list, list]:
    """The GPUs of every target node, in order, and each node's host memory (or None)."""
    if not targets:
        raise ArchError("train_step needs the nodes to run on, e.g. run train_step(...) on node[*]")
    nodes, hosts = [], []
    for target in targets:
        if not isinstance(target, Component):
            raise ArchError(f"train_step runs on nodes (instances holding GPUs), not on port {target.path}")
        gpus = [c for c in target.walk() if isinstance(c, Gpu)]
        if not gpus:
            raise ArchError(f"{target.path} holds no Gpu", hint="target the nodes of the cluster, e.g. on node[*]")
        found = [c for c in target.walk() if isinstance(c, HostMemory)]
        if len(found) > 1:
            raise ArchError(f"{target.path} holds {len(found)} host memories; a node has one")
        nodes.append(gpus)
        hosts.append(found[0] if found else None)
    counts = sorted({len(gpus) for gpus in nodes})
    if len(counts) > 1:
        raise ArchError(f"the nodes hold different numbers of GPUs ({', '.join(map(str, counts))})",
                        hint="the hierarchical collectives need the same number of GPUs in every node")
    return nodes, hosts


def _times_ps(table) -> tuple | None:
    """A per-layer forward time table in microseconds (plain numbers) as ps."""
    if table is None:
        return None
    entries = table if isinstance(table, (list, tuple)) else [table]
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and t > 0 for t in entries):
        raise ArchError(f"layer_times_us must be a list of positive numbers (microseconds), got {table!r}")
    return tuple(round(t * 10**6) for t in entries)


def _fitting_hint(options: StepOptions) -> str:
    ways = ["use more GPUs"]
    if options.micro_batch > 1:
        ways.append("a smaller micro_batch")
    if not options.checkpointing:
        ways.append("checkpointing = true")
    if options.prefetch > 0:
        ways.append("prefetch = 0")
    return ", ".join(ways[:-1]) + " or " + ways[-1] if len(ways) > 1 else ways[0]


def _check_reach(nodes: list, hosts: list, reach: dict, endpoint: dict, needs_host: bool) -> None:
    gpus = [g for node in nodes for g in node]
    for gpu in gpus:
        missing = [other for other in gpus if endpoint[other] not in reach[gpu]]
        if missing:
            other = missing[0]
            raise ArchError(f"{gpu.path} cannot reach {other.path}: no path over the links "
                            f"({len(missing)} of the other {len(gpus) - 1} GPUs are out of reach)",
                            hint="every node must be connected to the others: check the fabric topology "
                                 "and the wiring of each node to it")
    if needs_host:
        for node, host in zip(nodes, hosts):
            if host is None:
                raise ArchError(f"{node[0].parent.path if node[0].parent else node[0].path} has no HostMemory, "
                                "and the schedule caches parameters in host memory",
                                hint="add one (see GpuNode in library/training.arch), or use schedule = \"zero3\"")
            for gpu in node:
                if endpoint[host] not in reach[gpu]:
                    raise ArchError(f"{gpu.path} cannot reach its host memory {host.path}",
                                    hint="connect the GPU's PCIe link to the host memory")


def bind_train_step(targets, *args, **kwargs) -> StepPlan:
    """``run train_step(model = "7b", schedule = "fcdp") on node[*]``: one training step of
    ``model`` (``1.3b``, ``7b``, ``13b``, or ``layers`` and ``hidden``) under ``schedule``
    (``zero3``, ``fcdp``, ``fcdp_peft``) on the target nodes. Options: ``micro_batch``
    sequences per GPU, ``seq`` tokens each, ``prefetch`` layers gathered ahead,
    ``checkpointing`` of activations, collective ``algorithm`` (``ring``, ``tree``) and
    form (``hierarchical``), ``chunks`` per piece, the PEFT ``trainable_fraction`` and
    FCDP's cache ``placement`` (``host``, or ``auto``: keep slices on the GPU when they fit),
    and ``layer_times_us``, a measured forward time per block (then the head) instead of
    FLOPs over the GPUs' rate."""
    if args:
        raise ArchError("train_step takes named arguments only, e.g. train_step(model = \"7b\", schedule = \"fcdp\")")
    unknown = [k for k in kwargs if k not in _ARGUMENTS]
    if unknown:
        raise ArchError(f"train_step has no argument '{unknown[0]}'",
                        hint=did_you_mean(unknown[0], _ARGUMENTS) or "arguments: " + ", ".join(_ARGUMENTS))
    return _bind(targets, **{**_ARGUMENTS, **kwargs})


_ARGUMENTS = {"model": None, "layers": None, "hidden": None, "heads": None, "seq": None, "schedule": "fcdp",
              "micro_batch": 1, "prefetch": 1, "checkpointing": True, "algorithm": "ring", "hierarchical": True,
              "chunks": 1, "trainable_fraction": 0.01, "placement": "host", "layer_times_us": None}


def _bind(targets, *, model, layers, hidden, heads, seq, schedule, micro_batch, prefetch, checkpointing,
          algorithm, hierarchical, chunks, trainable_fraction, placement, layer_times_us) -> StepPlan:
    if model is None and layers is None and hidden is None:
        model = "7b"
    shape = model_shape(model, layers=layers, hidden=hidden, heads=heads, seq=seq)
    for what, value in (("checkpointing", checkpointing), ("hierarchical", hierarchical)):
        if not isinstance(value, bool):
            raise ArchError(f"{what} must be true or false, got {value!r}")
    if not isinstance(trainable_fraction, (int, float)) or isinstance(trainable_fraction, bool):
        raise ArchError(f"trainable_fraction must be a number, got {trainable_fraction!r}")
    options = StepOptions(schedule_name(schedule), micro_batch, prefetch, checkpointing, algorithm, hierarchical,
                          chunks, float(trainable_fraction), placement, _times_ps(layer_times_us))
    nodes, hosts = _cluster(targets)
    root = _root(targets[0])
    parts = [c for c in root.walk() if isinstance(c, Forwarder)]
    gpus = [g for node in nodes for g in node]
    endpoint = {g: i for i, g in enumerate(gpus)}
    for a, host in enumerate(hosts):
        if host is not None:
            endpoint[host] = len(gpus) + a
    reach = install_routes(parts, endpoint)
    ids = [[endpoint[g] for g in node] for node in nodes]
    host_ids = [endpoint.get(h) for h in hosts]
    plan = plan_step(shape, options, ids, host_ids, {endpoint[g]: g.sustained_tflops for g in gpus},
                     min(g.memory_bytes for g in gpus))
    _check_reach(nodes, hosts, reach, endpoint, needs_host=options.schedule != "zero3" and plan.host_bytes > 0)
    for gpu in gpus:
        if plan.peak_bytes > gpu.memory_bytes:
            raise ArchError(f"model '{shape.name}' does not fit {gpu.path} under schedule '{options.schedule}': "
                            f"the step needs {plan.peak_bytes:,} bytes ({_gib(plan.peak_bytes)}) of its "
                            f"{gpu.memory_bytes:,} ({_gib(gpu.memory_bytes)}), "
                            f"{plan.peak_bytes - gpu.memory_bytes:,} bytes too many",
                            hint=f"held state {_gib(plan.static_bytes)}; " + _fitting_hint(options))
    for host in hosts:
        if host is not None and plan.host_bytes > host.capacity_bytes:
            raise ArchError(f"schedule '{options.schedule}' caches {plan.host_bytes:,} bytes in {host.path}, "
                            f"which holds {host.capacity_bytes:,}: {plan.host_bytes - host.capacity_bytes:,} "
                            "bytes too many", hint="give the host more capacity_bytes, or placement = \"auto\"")
    for gpu in gpus:
        gpu.load(plan.tasks[endpoint[gpu]], plan.static_bytes)
    name = "step"
    while any(c.name == name for c in root.children):
        name += "_"
    report = StepReport(name, root)
    report.watch(gpus, parts, schedule=options.schedule, model=shape.name, params=shape.params,
                 planned_peak=plan.peak_bytes)
    return plan


WORKLOADS = {"train_step": bind_train_step}
"""Binders for ``run NAME(args) on nodes`` in .arch files."""
