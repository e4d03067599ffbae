"""Stream semantic registers: affine address generators with data FIFOs (Schuiki et al., IEEE TC 2020)."""

from __future__ import annotations

from collections import deque


class SsrStreamer:
    """One SSR data mover of a Snitch core: up to 4 nested affine dimensions, read or write.

    Not a component: the core that owns it asks the TCDM for a word in its own step (a read
    job while its FIFO has room, a write job while its head entry is ready), and the TCDM
    grants the request (it has an ``addr`` and a ``grant(cycle)`` like every TCDM requester;
    the TCDM inlines the grant of a read job). The core's ``streaming`` list holds its
    streamers with a job running, kept up to date here.

    A read job fetches one 64-bit word per granted request into the FIFO (entries
    ``[ready_cycle, value, uses_left]``; each element serves ``repeat + 1`` reads of the
    register); a write job drains FIFO entries the FPU pushed (``[ready_cycle, value]``) to
    successive addresses. One job may wait behind the running one (the shadow registers).
    """

    __slots__ = ("index", "rid", "depth", "fifo", "jobs", "active", "writes", "addr", "left", "idx", "bounds",
                 "adj", "dims", "uses", "repeat", "cfg_bounds", "cfg_strides", "mem", "base", "latency",
                 "core", "job_writes", "reads_stream",
                 "run", "run_len", "adj0", "launched")

    def __init__(self, core, index: int, rid: int, depth: int, mem, base: int, latency: int):
        self.core = core
        self.index = index
        self.rid = rid
        self.depth = depth
        self.fifo: deque = deque()
        self.jobs: deque = deque()
        self.active = False
        self.writes = False
        self.addr = 0
        self.left = 0
        self.idx = [0, 0, 0, 0]
        self.bounds = [0, 0, 0, 0]
        self.adj = [0, 0, 0, 0]
        self.dims = 1
        self.uses = 1
        self.repeat = 0
        self.cfg_bounds = [0, 0, 0, 0]
        self.cfg_strides = [0, 0, 0, 0]
        self.mem = mem  # the TCDM as 64-bit floats
        self.base = base
        self.latency = latency
        self.job_writes = False  # the running job's direction (``writes`` is the latest job's)
        self.reads_stream = False  # a read job is running (the TCDM grants those inline)
        # Steps along dimension 0 that need no bound check (see _refill): the common step
        # is then one add, and idx[0]/left catch up when the run is used up.
        self.run = self.run_len = 0
        self.adj0 = 0
        self.launched = False  # a job was ever started (for the fault of reading a dead stream)

    def launch(self, base_addr: int, dims: int, writes: bool) -> None:
        """Queue a job over dimensions 0..dims-1 from the current configuration."""
        bounds = self.cfg_bounds[:dims]
        strides = self.cfg_strides[:dims]
        self.jobs.append((base_addr, dims, bounds, strides, self.repeat, writes))
        self.writes = writes
        self.launched = True
        if not self.active:
            self._next_job()

    def extent(self, base_addr: int, dims: int) -> tuple[int, int, int]:
        """Lowest and highest address a job would touch, and its element count."""
        low = high = base_addr
        count = 1
        for k in range(dims):
            span = self.cfg_bounds[k] * self.cfg_strides[k]
            if span < 0:
                low += span
            else:
                high += span
            count *= self.cfg_bounds[k] + 1
        return low, high, count

    def _next_job(self) -> None:
        self.core.leave_replay_step()  # the core's fused replay steps present a fixed set of streams
        if not self.jobs:
            self.active = False
            self.reads_stream = False
            self.core.streaming = [s for s in self.core.ssrs if s.active]
            return
        base_addr, dims, bounds, strides, repeat, writes = self.jobs.popleft()
        self.active = True
        self.addr = base_addr
        self.dims = dims
        self.bounds = bounds + [0] * (4 - dims)
        adj = []
        below = 0
        for k in range(dims):
            adj.append(strides[k] - below)
            below += bounds[k] * strides[k]
        self.adj = adj + [0] * (4 - dims)
        self.idx = [0, 0, 0, 0]
        self.left = 1
        for b in bounds:
            self.left *= b + 1
        self.uses = repeat + 1
        self.job_writes = writes
        self.reads_stream = not writes
        self.adj0 = self.adj[0]
        self._refill()
        self.core.streaming = [s for s in self.core.ssrs if s.active]

    def _refill(self) -> None:
        # The next ``run`` steps stay inside dimension 0 and leave at least one element: each
        # is idx[0] += 1, left -= 1, addr += adj[0], exactly what _advance would do.
        self.run = self.run_len = max(0, min(self.left - 1, self.bounds[0] - self.idx[0]))

    def _advance(self) -> None:
        """One address step after the run of unchecked steps is used up (the run's steps
        are counted here, and the next run is worked out as _refill does, inlined: this
        runs once per dimension-0 row of every stream)."""
        idx = self.idx
        run_len = self.run_len
        idx[0] += run_len
        left = self.left - run_len - 1
        self.left = left
        if left == 0:
            self._next_job()
            return
        bounds = self.bounds
        if idx[0] < bounds[0]:
            idx[0] += 1
            self.addr += self.adj[0]
        else:
            k = 1
            while True:
                idx[k - 1] = 0
                if idx[k] < bounds[k]:
                    idx[k] += 1
                    self.addr += self.adj[k]
                    break
                k += 1
        run = bounds[0] - idx[0]
        if run >= left:
            run = left - 1
        self.run = self.run_len = run

    def grant(self, cycle: int) -> None:
        """The TCDM serves this streamer's request at ``cycle``."""
        if self.job_writes:
            self.mem[(self.addr - self.base) >> 3] = self.fifo.popleft()[1]
        else:
            self.fifo.append([cycle + self.latency, self.mem[(self.addr - self.base) >> 3], self.uses])
        if self.run:
            self.run -= 1
            self.addr += self.adj0
        else:
            self._advance()

    @property
    def busy(self) -> bool:
        """A write stream with data or addresses left (a read stream never holds a core up)."""
        return self.writes and (self.active or bool(self.fifo))
