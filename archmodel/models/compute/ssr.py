"""Stream semantic registers: affine address generators with data FIFOs (Schuiki et al., IEEE TC
2020), and the indirection extension of Snitch's SSRs 0 and 1 (ISSRs, Scheffler et al., IEEE TC
2023; ``snitch_ssr_indirector`` in the Snitch RTL)."""

from __future__ import annotations

from collections import deque

from .isa import SSR_INDEX_CREDITS


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

    **Indirect jobs** (``ssrN_irptr`` / ``ssrN_iwptr``, as the RTL's indirector): the job
    walks an array of ``bound0 + 1`` unsigned indices of ``2**size`` bytes in the TCDM (the
    address written; ``idx_cfg`` bits 0-7 the size, 8-15 the shift) and reads or writes the
    element at ``idx_base + (index << (3 + shift))`` for each, in order; ``repeat`` applies
    to reads as for affine jobs. The index words come from the TCDM through the streamer's
    own port, as the RTL's ``tcdm_mux`` merges the index and data requests of an SSR: each
    cycle the port presents one request, an index word fetch (while fewer than
    :data:`~.isa.SSR_INDEX_CREDITS` words are buffered or in flight and words are left) or
    the data request of the next index (once the word holding it has arrived), and when
    both could go they take turns, granted one after the other. An index word serves the
    ``8 / 2**size`` indices it holds (the first word from the array's byte offset in it),
    so 32-bit indices cost one index fetch per two elements on the same port, and the
    index fetches contend for the banks like any request. A data address outside the TCDM
    stops the run naming the element (checked when its request would be presented).
    """

    __slots__ = ("index", "rid", "depth", "fifo", "jobs", "active", "writes", "addr", "left", "idx", "bounds",
                 "adj", "dims", "uses", "repeat", "cfg_bounds", "cfg_strides", "mem", "base", "latency",
                 "core", "job_writes", "reads_stream",
                 "run", "run_len", "adj0", "launched",
                 "mem_bits", "indirect", "idx_cfg", "idx_base", "i_base", "i_size", "i_shift", "i_next", "i_words", "i_off",
                 "iq", "i_serve", "i_last", "i_count")

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
        self.mem_bits = mem.cast("B").cast("Q")  # and as unsigned 64-bit words (index words)
        self.base = base
        self.latency = latency
        self.job_writes = False  # the running job's direction (``writes`` is the latest job's)
        self.reads_stream = False  # a read job is running (the TCDM grants those inline)
        # Steps along dimension 0 that need no bound check (see _refill): the common step
        # is then one add, and idx[0]/left catch up when the run is used up.
        self.run = self.run_len = 0
        self.adj0 = 0
        self.launched = False  # a job was ever started (for the fault of reading a dead stream)
        # indirection: the configuration registers, and the running indirect job's state
        self.idx_cfg = 0  # bits 0-7 log2 of the index bytes, 8-15 the shift
        self.idx_base = 0
        self.indirect = False  # the running job is indirect
        self.i_base = self.i_size = self.i_shift = 0  # the running job's base, index bytes and shift
        self.i_next = 0  # address of the next index word to fetch
        self.i_words = 0  # index words left to fetch
        self.i_off = 0  # byte offset of the next index in the head word of ``iq``
        self.iq: deque = deque()  # fetched index words: [ready_cycle, bits as an unsigned int]
        self.i_serve = False  # the request presented this cycle fetches an index word
        self.i_last = False  # the last request granted fetched an index word (the two take turns)
        self.i_count = 0  # elements of the running indirect job served so far

    def launch(self, base_addr: int, dims: int, writes: bool, indirect: bool = False) -> None:
        """Queue a job over dimensions 0..dims-1 from the current configuration (indirect:
        ``base_addr`` is the index array's, over ``bound0 + 1`` indices)."""
        bounds = self.cfg_bounds[:dims]
        strides = self.cfg_strides[:dims]
        self.jobs.append((base_addr, dims, bounds, strides, self.repeat, writes,
                          (self.idx_cfg, self.idx_base) if indirect else None))
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
        base_addr, dims, bounds, strides, repeat, writes, indirection = self.jobs.popleft()
        self.active = True
        self.indirect = indirection is not None
        if self.indirect:
            cfg, self.i_base = indirection
            self.i_size = 1 << (cfg & 0xFF)
            self.i_shift = 3 + ((cfg >> 8) & 0xFF)
            self.i_next = base_addr & ~7
            self.i_off = base_addr & 7
            self.i_words = (self.i_off + (bounds[0] + 1) * self.i_size + 7) >> 3
            self.iq.clear()
            self.i_last = False
            self.i_count = 0
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
        self.reads_stream = not writes and not self.indirect  # the TCDM grants these inline
        self.adj0 = self.adj[0]
        self._refill()
        self.core.streaming = [s for s in self.core.ssrs if s.active]

    def _refill(self) -> None:
        # The next ``run`` steps stay inside dimension 0 and leave at least one element: each
        # is idx[0] += 1, left -= 1, addr += adj[0], exactly what step_address would do.
        self.run = self.run_len = max(0, min(self.left - 1, self.bounds[0] - self.idx[0]))

    def step_address(self) -> None:
        """One address step after the run of unchecked steps is used up (the run's steps
        are counted here, and the next run is worked out as _refill does, inlined: this
        runs once per dimension-0 row of every stream; the TCDM's grant of a read stream,
        inlined there, calls it too)."""
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
        if self.indirect:
            self._grant_indirect(cycle)
            return
        if self.job_writes:
            self.mem[(self.addr - self.base) >> 3] = self.fifo.popleft()[1]
        else:
            self.fifo.append([cycle + self.latency, self.mem[(self.addr - self.base) >> 3], self.uses])
        if self.run:
            self.run -= 1
            self.addr += self.adj0
        else:
            self.step_address()

    @property
    def busy(self) -> bool:
        """A write stream with data or addresses left (a read stream never holds a core up)."""
        return self.writes and (self.active or bool(self.fifo))

    # -- indirect jobs -------------------------------------------------------------------------
    def extent_indirect(self, index_addr: int) -> tuple[int, int]:
        """First and last byte address of the index array an indirect job at ``index_addr`` reads."""
        size = 1 << (self.idx_cfg & 0xFF)
        return index_addr, index_addr + (self.cfg_bounds[0] + 1) * size - 1

    def element_address(self) -> int:
        """The address the next index of the running indirect job names (its word has arrived)."""
        word = self.iq[0][1]
        size = self.i_size
        index = (word >> (8 * self.i_off)) & ((1 << (8 * size)) - 1)
        return self.i_base + (index << self.i_shift)

    def present(self, cycle: int) -> bool:
        """Whether the running indirect job presents a request this cycle (``addr`` and
        ``i_serve`` say which): an index word fetch or the next element's, taking turns
        when both could go."""
        iq = self.iq
        fetch = self.i_words > 0 and len(iq) < SSR_INDEX_CREDITS
        data = bool(iq) and iq[0][0] <= cycle
        if data:
            fifo = self.fifo
            if self.job_writes:
                data = bool(fifo) and fifo[0][0] <= cycle
            else:
                data = len(fifo) < self.depth
        if fetch and (not data or not self.i_last):
            self.i_serve = True
            self.addr = self.i_next
            return True
        if data:
            self.i_serve = False
            self.addr = self.element_address()
            return True
        return False

    def _grant_indirect(self, cycle: int) -> None:
        if self.i_serve:
            at = (self.i_next - self.base) >> 3
            self.iq.append([cycle + self.latency, self.mem_bits[at]])
            self.i_next += 8
            self.i_words -= 1
            self.i_last = True
            return
        self.i_last = False
        at = (self.addr - self.base) >> 3
        if self.job_writes:
            self.mem[at] = self.fifo.popleft()[1]
        else:
            self.fifo.append([cycle + self.latency, self.mem[at], self.uses])
        self.i_count += 1
        self.left -= 1
        off = self.i_off + self.i_size
        if off == 8 or self.left == 0:
            self.iq.popleft()
            off = 0
        self.i_off = off
        if self.left == 0:
            self._next_job()

