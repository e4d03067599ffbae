"""What one simulated training step measured, read from the parts after the run."""

from __future__ import annotations

import attrs

from archmodel.kernel import Component, Formula, model
from archmodel.models.training import LINK_CLASSES, link_class

PS_PER_MS = 10**9


@attrs.frozen
class StepResult:
    """One step: its time and the split of the slowest GPU's time into compute, exposed
    communication and overlap (ps), the peak device memory over all GPUs, and payload bytes
    per link class (``inter-node``, ``intra-node``, ``host PCIe``, ``NIC PCIe``)."""

    schedule: str
    model: str
    params: int
    step_ps: int
    compute_ps: int
    exposed_ps: int
    overlap_ps: int
    comm_ps: int
    peak_bytes: int
    planned_peak_bytes: int
    link_bytes: dict
    finished: bool

    def table(self) -> str:
        """The result as aligned lines."""
        rows = [("schedule", self.schedule), ("model", f"{self.model} ({self.params / 1e9:.2f} B parameters)"),
                ("step time", f"{self.step_ps / PS_PER_MS:.3f} ms"),
                ("  compute", f"{self.compute_ps / PS_PER_MS:.3f} ms"),
                ("  exposed communication", f"{self.exposed_ps / PS_PER_MS:.3f} ms"),
                ("  overlapped communication", f"{self.overlap_ps / PS_PER_MS:.3f} ms"),
                ("peak device memory", f"{self.peak_bytes / 2**30:.2f} GiB (planned {self.planned_peak_bytes / 2**30:.2f})")]
        rows += [(f"{kind} bytes", f"{self.link_bytes[kind]:,}") for kind in LINK_CLASSES]
        return "\n".join(f"{k:<28} {v}" for k, v in rows)


@model(catalogue=False)
class StepReport(Component):
    """The training step's figures as statistics of the system (``archmodel run`` prints
    them): a structural part the ``train_step`` workload adds beside the cluster."""

    step_time = Formula("ms", "step time: the slowest GPU, first task to last", lambda c: c.result().step_ps / PS_PER_MS)
    compute_time = Formula("ms", "compute of the slowest GPU", lambda c: c.result().compute_ps / PS_PER_MS)
    exposed_comm = Formula("ms", "communication not hidden behind compute (slowest GPU)",
                           lambda c: c.result().exposed_ps / PS_PER_MS)
    overlapped_comm = Formula("ms", "communication hidden behind compute (slowest GPU)",
                              lambda c: c.result().overlap_ps / PS_PER_MS)
    peak_memory = Formula("bytes", "peak device memory over all GPUs", lambda c: c.result().peak_bytes)
    inter_node_bytes = Formula("bytes", "payload bytes on NIC-to-NIC links", lambda c: c.result().link_bytes["inter-node"])
    intra_node_bytes = Formula("bytes", "payload bytes on GPU-to-GPU links", lambda c: c.result().link_bytes["intra-node"])
    host_pcie_bytes = Formula("bytes", "payload bytes between GPUs and host memory",
                              lambda c: c.result().link_bytes["host PCIe"])
    nic_pcie_bytes = Formula("bytes", "payload bytes between GPUs and NICs", lambda c: c.result().link_bytes["NIC PCIe"])

    def setup(self) -> None:
        self.gpus: list = []
        self.parts: list = []
        self.schedule = ""
        self.model = ""
        self.params_count = 0
        self.planned_peak = 0

    def watch(self, gpus: list, parts: list, *, schedule: str, model: str, params: int, planned_peak: int) -> None:
        """Report on ``gpus`` and the links of ``parts`` (every forwarding part)."""
        self.gpus, self.parts = list(gpus), list(parts)
        self.schedule, self.model, self.params_count, self.planned_peak = schedule, model, params, planned_peak

    def result(self) -> StepResult:
        """The figures as they stand (after the run: the whole step)."""
        slowest = max(self.gpus, key=lambda g: (g.step_ps(), g.path))
        link_bytes = dict.fromkeys(LINK_CLASSES, 0)
        for part in self.parts:
            for index, port in enumerate(part.out):
                if port.channel is not None:
                    kind = link_class(port.channel)
                    if kind is not None:
                        link_bytes[kind] += part.port_bytes(index)
        return StepResult(self.schedule, self.model, self.params_count, slowest.step_ps(), slowest.compute_ps(),
                          slowest.exposed_ps(), slowest.overlap_ps(), slowest.comm_ps(),
                          max(g.memory.maximum for g in self.gpus), self.planned_peak, link_bytes,
                          all(g.finished() for g in self.gpus))
