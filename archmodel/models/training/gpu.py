"""A GPU running one training step: a compute stream and communication streams executing a
program of tasks, with its links to the other GPUs of its node, its NIC and its host memory.

The workload (:mod:`archmodel.workloads.training`) gives every GPU its tasks; the GPU knows
nothing of ZeRO or FCDP, only of computing for a while, running its part of a collective
(:class:`~.transfer.RankProgram`) and allocating and freeing device memory.
"""

from __future__ import annotations

from collections import deque

import attrs

from archmodel.kernel import Component, Counter, Formula, In, Level, Out, Param, at_least, model

from .forwarding import Forwarder
from .transfer import RankProgram, Transfer

PS_PER_MS = 10**9


@attrs.define(eq=False)
class Task:
    """One step of a GPU's program, on one of its streams.

    A stream runs its tasks in order; a task also waits for every task of ``after`` (on
    any stream of the same GPU). ``kind`` is ``"compute"`` (busy for ``duration_ps``) or
    ``"comm"`` (runs ``program``, its part of a collective or a host copy). ``alloc_bytes``
    of device memory are taken when it starts and ``free_bytes`` given back when it ends.
    ``started_ps``/``done_ps`` are filled in by the simulation."""

    name: str
    stream: str
    kind: str
    duration_ps: int = 0
    program: RankProgram | None = None
    after: tuple = ()
    alloc_bytes: int = 0
    free_bytes: int = 0
    started_ps: int | None = attrs.field(default=None, init=False)
    done_ps: int | None = attrs.field(default=None, init=False)
    pending: int = attrs.field(default=0, init=False, repr=False)

    @property
    def done(self) -> bool:
        return self.done_ps is not None


def busy_union(intervals: list) -> list:
    """Merge (start, end) intervals into disjoint sorted ones."""
    merged: list = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def overlap_ps(a: list, b: list) -> int:
    """Time covered by both of two sets of disjoint sorted intervals."""
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


@model
class Gpu(Forwarder, Component):
    """A GPU as a training step sees it: a compute stream whose tasks last their FLOPs over
    ``sustained_tflops`` (or the time the workload gives), communication streams that run
    collectives as messages over its links, and device memory of ``memory_bytes``.

    Ports: ``inp``/``out`` arrays, one per link; a ``topology`` statement sizes them
    (local ports first: the NIC and the host memory, then one per neighbouring GPU). It
    forwards messages for others (a PCIe switch or NVLink relay) by its routing table.
    Registers ``phase`` (the compute stream's task, ``fwd_L3``; ``idle`` between) and ``comm``
    (the communication tasks running, comma separated) show the step in a waveform;
    ``out<i>_busy`` each link.

    Defaults: an A100-SXM4-80GB (312 TFLOP/s dense FP16/BF16, NVIDIA A100 datasheet), of
    which large GPT layers sustain about half (Narayanan et al., SC 2021, report 44-52%).
    Leaves out: kernel launch gaps, the optimizer step, memory fragmentation."""

    links = Param(int, 1, "number of input and output ports (a topology sets it)", check=at_least(1))
    memory_bytes = Param(int, 80 * 1024**3, "device memory capacity", unit="bytes", check=at_least(1))
    sustained_tflops = Param(float, 150.0, "sustained dense FP16 rate on transformer layers, TFLOP/s",
                             check=at_least(1e-6))
    inp = In("messages from links", count="links", required=False)
    out = Out("messages to links", count="links", required=False)
    sent_bytes = Counter("bytes", "payload bytes sent on all output links")
    memory = Level("bytes", "device memory in use (max: the peak)")
    step_time = Formula("ms", "from the first task's start to the last task's end",
                        lambda c: c.step_ps() / PS_PER_MS)
    compute_time = Formula("ms", "time the compute stream is busy", lambda c: c.compute_ps() / PS_PER_MS)
    exposed_comm_time = Formula("ms", "step time not covered by compute (waiting for communication)",
                                lambda c: c.exposed_ps() / PS_PER_MS)
    overlap_time = Formula("ms", "time compute and communication run together",
                           lambda c: c.overlap_ps() / PS_PER_MS)

    def setup(self) -> None:
        self._setup_forwarding()
        self.phase = self.register("phase", "idle")
        self.comm = self.register("comm", "")
        self.tasks: list[Task] = []
        self._streams: dict[str, deque] = {}
        self._current: dict[str, Task | None] = {}  # the task each stream runs
        self._freed = False
        self._running: list[Task] = []
        self._compute: Task | None = None
        self._compute_end = 0
        self._arrived: set = set()
        self._expect: dict = {}
        self._waiting: dict = {}
        self._static_bytes = 0

    # -- the program ------------------------------------------------------------------------------
    def load(self, tasks: list[Task], static_bytes: int = 0) -> None:
        """Give the GPU its program for the step; ``static_bytes`` are held throughout
        (sharded parameters, gradients and optimizer state, cached activations)."""
        self.tasks = list(tasks)
        self._streams = {}
        self._current = {}
        for task in self.tasks:
            self._streams.setdefault(task.stream, deque()).append(task)
        self._static_bytes = static_bytes

    def start(self) -> None:
        if self._static_bytes:
            self.memory.set(self._static_bytes)

    def tick(self) -> None:
        for msg in self._take_landed():
            self._arrive(msg)
        self._receive()
        if self._compute is not None and self.now >= self._compute_end:
            task, self._compute = self._compute, None
            self._finish(task)
        self._advance()
        self._drain()
        while self._freed:  # a task that ended while sending lets its stream start the next
            self._freed = False
            self._advance()
            self._drain()
        self._forwarding_sleep()
        if self._compute is not None:
            self.wake_at(self._compute_end)

    def _advance(self) -> None:
        """Start the next task of every idle stream once its predecessors are done (a
        stream runs one task at a time, in order)."""
        started = True
        current = self._current
        while started:
            started = False
            for stream, queue in self._streams.items():
                if queue and current.get(stream) is None and all(t.done for t in queue[0].after):
                    head = queue.popleft()
                    current[stream] = head
                    self._begin(head)
                    started = True

    def _begin(self, task: Task) -> None:
        now = self.now
        task.started_ps = now
        self.progress()
        if task.alloc_bytes:
            self.memory.set(self.memory.value + task.alloc_bytes)
        if task.kind == "compute":
            self._compute = task
            self._compute_end = now + task.duration_ps
            self.phase.set(task.name.replace(" ", "_"))  # VCD strings hold no spaces
            if task.duration_ps == 0:
                self._compute = None
                self._finish(task)
            return
        program = task.program
        arrived = self._arrived
        have = set()
        for tag in program.receives:
            if tag in arrived:
                arrived.discard(tag)
                have.add(tag)
            else:
                self._expect[tag] = task
        task.pending = len(program.receives) - len(have) + len(program.sends)
        self._running.append(task)
        self._show_comm()
        for send in program.sends:
            missing = [tag for tag in send.needs if tag not in have]
            if missing:
                entry = [len(missing), send, task]
                for tag in missing:
                    self._waiting.setdefault(tag, []).append(entry)
            else:
                self._post(send, task)
        self._check_done(task)

    def _post(self, send, task: Task) -> None:
        self._enqueue(Transfer(self.endpoint, send.dst, send.nbytes, send.tag, request=send.request), task)

    def _sent(self, task: Task) -> None:
        task.pending -= 1
        self._check_done(task)

    def _arrive(self, msg: Transfer) -> None:
        tag = msg.tag
        task = self._expect.pop(tag, None)
        if task is None:
            self._arrived.add(tag)  # a neighbour started this collective before we did
        else:
            task.pending -= 1
        for entry in self._waiting.pop(tag, ()):
            entry[0] -= 1
            if entry[0] == 0:
                self._post(entry[1], entry[2])
        if task is not None:
            self._check_done(task)

    def _check_done(self, task: Task) -> None:
        if task.pending == 0 and task.done_ps is None and task.started_ps is not None:
            self._running.remove(task)
            self._finish(task)
            self._show_comm()

    def _finish(self, task: Task) -> None:
        task.done_ps = self.now
        self._current[task.stream] = None
        self._freed = True
        self.progress()
        if task.free_bytes:
            self.memory.set(self.memory.value - task.free_bytes)
        if task.kind == "compute":
            self.phase.set("idle")

    def _show_comm(self) -> None:
        if self.sim.tracing:
            self.comm.set(",".join(t.name.replace(" ", "_") for t in self._running))

    # -- what the step measured -------------------------------------------------------------------
    def _intervals(self, kind: str) -> list:
        return busy_union([(t.started_ps, t.done_ps) for t in self.tasks if t.kind == kind and t.done])

    def step_ps(self) -> int:
        """From the first task's start to the last task's end (0 before any ran)."""
        done = [t for t in self.tasks if t.done]
        if not done:
            return 0
        return max(t.done_ps for t in done) - min(t.started_ps for t in done)

    def compute_ps(self) -> int:
        """Time the compute stream was busy."""
        return sum(end - start for start, end in self._intervals("compute"))

    def comm_ps(self) -> int:
        """Time at least one communication task was running."""
        return sum(end - start for start, end in self._intervals("comm"))

    def overlap_ps(self) -> int:
        """Time compute and communication ran together."""
        return overlap_ps(self._intervals("compute"), self._intervals("comm"))

    def exposed_ps(self) -> int:
        """Step time in which the GPU did not compute: communication it had to wait for."""
        return self.step_ps() - self.compute_ps()

    def finished(self) -> bool:
        """Every task of the program has run."""
        return all(t.done for t in self.tasks)
