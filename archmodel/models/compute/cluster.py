"""The Snitch cluster: compute cores, a DMA core, TCDM, DMA engine, barrier and shared I$."""

from __future__ import annotations

import zlib
from typing import Callable

from archmodel.kernel import (ENGINES, Component, Formula, In, KeptHorizon, Out, Param, QuestionBackoff, at_least, compiled,
                              in_range, model)

from .program import Instruction
from .compiled_batches import dma_waits_on_responses, release, run_compiled
from .core import NEVER, SnitchCore
from .dma import SnitchDma
from .icache import SnitchICache
from .tcdm import SnitchTcdm
from .tcdm_port import SnitchTcdmPort

INSTRUCTION_BASE = 0x0000_1000
"""Where the first program's instructions start in the instruction address space."""


@model
class SnitchCluster(Component):
    """A Snitch cluster as in Manticore: ``cores`` compute cores and one DMA core sharing a TCDM.

    Parts (Zaruba, Schuiki, Benini, "Manticore", IEEE Micro 41(2) 2021): 8 compute cores
    (:class:`SnitchCore`) and a 9th core that drives the DMA engine (:class:`SnitchDma`,
    512 bit/cycle), a 128 KiB TCDM in 32 banks of 64-bit words (:class:`SnitchTcdm`), an
    8 KiB shared instruction cache (:class:`SnitchICache`) and a hardware barrier: reading
    the ``barrier`` CSR waits until every core has read it or finished (a finished core never
    holds the others up). Core ``i`` has ``mhartid`` i; the DMA core is ``mhartid = cores``.

    The cluster is the one component that ticks: each cycle it steps the DMA engine and
    every unfinished core, then arbitrates the TCDM for all their requests. This keeps the
    per-cycle cost to plain Python calls (no channel per core and bank); bank conflicts,
    round-robin fairness, the TCDM latency and every queue's bound are still modelled. Unless
    the run is traced, a compiled loop runs the same cycles in batches (see ``engine``). The
    outside memory port ``ext_req``/``ext_rsp`` carries
    :class:`~archmodel.models.messages.MemRequest`/``MemResponse`` bursts of the DMA to any
    memory model (its width and latency are the link's); it may stay unconnected when no
    transfer leaves the TCDM. The TCDM slave port ``tcdm_req``/``tcdm_rsp``
    (:class:`SnitchTcdmPort`) lets others (another cluster's DMA, over a network whose address
    map routes ``tcdm_global_base`` .. ``+ tcdm_bytes`` here) read and write the TCDM, its
    words contending for the banks with the cluster's own requesters; ``backdoor_read`` and
    ``backdoor_write`` reach the same global range. Workloads load programs with :meth:`load_programs`, data with
    :meth:`tcdm_array`, and check results in an :meth:`on_finish` callback; when every core
    has finished and the DMA is idle the cluster sleeps (the run ends when all is quiet).
    Hangs are the kernel watchdog's to judge: the cluster reports its progress to it, each
    unfinished core says where it is (``holding``) and, at the barrier, which cores it waits
    on (``waiting_for``), so a stuck cluster stops the run with a DeadlockError naming them.

    Leaves out: the cluster peripherals (performance counters other than mcycle/minstret,
    wake-up registers), interrupts, the shared multiply/divide unit (each core has one),
    and the cluster's AXI crossbar beyond the DMA port.
    """

    cores = Param(int, 8, "compute cores (the DMA core comes in addition; at most 1024)", check=in_range(1, 1024))
    tcdm_bytes = Param(int, 128 * 1024, "TCDM capacity (at most 64 MiB)", unit="bytes", check=in_range(64, 64 << 20))
    banks = Param(int, 32, "TCDM banks of 64-bit words (at most 1024)", check=in_range(1, 1024))
    tcdm_latency_cycles = Param(int, 1, "cycles from a TCDM grant to usable read data", unit="cycles",
                                check=at_least(1))
    fma_latency_cycles = Param(int, 3, "FP64 FMA-class latency", unit="cycles", check=at_least(1))
    ssr_fifo_depth = Param(int, 4, "words each SSR FIFO holds", check=at_least(1))
    offload_depth = Param(int, 8, "entries of each core's FP offload queue", check=at_least(1))
    icache_bytes = Param(int, 8 * 1024, "shared instruction cache (at most 16 MiB)", unit="bytes",
                         check=in_range(4, 16 << 20))
    icache_miss_cycles = Param(int, 20, "instruction cache miss penalty", unit="cycles", check=at_least(0))
    dma_lanes = Param(int, 8, "64-bit DMA lanes into the TCDM (8 = 512 bit/cycle)", check=at_least(1))
    engine = Param(str, "auto", "compiled: run the cluster's cycles in batches in one numba loop "
                   "(compiled_cluster, its state kept by compiled_state) wherever it can, the Python model "
                   "stepping the rest; python: the Python model every cycle (the reference the loop is held "
                   "to); auto: compiled unless the run is traced (waveforms need the Python model)",
                   check=ENGINES.check)

    tcdm_global_base = Param(int, 0, "where other clusters address this TCDM over tcdm_req: bytes tcdm_global_base "
                             ".. + tcdm_bytes are the TCDM's (each cluster's range its own, outside every core's "
                             "local TCDM window); 0: none, the TCDM is reached from inside only", check=at_least(0))

    ext_req = Out("DMA bursts to the outside memory (MemRequest)", required=False, pair="ext_rsp")
    ext_rsp = In("responses from the outside memory (MemResponse)", required=False, pair="ext_req")
    tcdm_req = In("requests from outside into this TCDM at its global addresses (MemRequest, any size), "
                  "served by the banks (SnitchTcdmPort)", required=False, pair="tcdm_rsp")
    tcdm_rsp = Out("responses to tcdm_req, in request order (MemResponse)", required=False, pair="tcdm_req")

    cycles = Formula("cycles", "cycles until every core finished (or so far)", lambda c: c.run_cycles())
    fpu_utilisation = Formula("%", "FP computations per compute-core cycle",
                              lambda c: 100.0 * sum(k.n_fpu for k in c.compute_cores) / (c.cores * c.run_cycles()))
    flops = Formula("flop", "floating-point operations of all cores", lambda c: sum(k.n_flops for k in c.core_list))
    gflops = Formula("GFLOP/s", "floating-point operations per second at the cluster clock",
                     lambda c: sum(k.n_flops for k in c.core_list) * 1000 / (c.run_cycles() * c.domain.period_ps))

    def setup(self) -> None:
        self.tcdm = SnitchTcdm("tcdm", self, size_bytes=self.tcdm_bytes, banks=self.banks,
                               latency_cycles=self.tcdm_latency_cycles)
        self.icache = SnitchICache("icache", self, size_bytes=self.icache_bytes, miss_cycles=self.icache_miss_cycles)
        self.dma = SnitchDma("dma", self, lanes=self.dma_lanes)
        self.core_list = [SnitchCore(f"core{i}", self, ssr_fifo_depth=self.ssr_fifo_depth,
                                     offload_depth=self.offload_depth, fma_latency_cycles=self.fma_latency_cycles)
                          for i in range(self.cores + 1)]
        self.compute_cores = self.core_list[:self.cores]
        self.dma_core = self.core_list[self.cores]
        rid = 0
        for hartid, core in enumerate(self.core_list):
            core.bind(self, hartid, rid)
            rid += 4
        self.dma.bind(self, rid)
        rid += self.dma_lanes
        self.tcdm_port = SnitchTcdmPort("tcdm_port", self, lanes=self.dma_lanes)
        self.tcdm_port.bind(self, rid, self.tcdm_global_base)
        self.tcdm.requesters = rid + self.dma_lanes
        self.running: list = []
        self.finish_callbacks: list = []
        self.done_cycle = -1
        self.waiting: list = []
        self.n_halted = len(self.core_list)
        self.first_tick = True
        self.check_at = 0
        self.check_every = None
        self.signature = None
        self.traced = None  # set at the first tick: an observer watches the run
        self.use_compiled = False  # set at the first tick from engine and traced
        self.n_compiled_cycles = 0  # cycles the compiled loop ran (tests check it is reached)
        self.n_compiled_batches = 0
        self.n_memory_inside_batches = 0  # batches that played the outside memory (compiled_cluster_memory)
        self.n_compiled_loads = 0  # times the model's state was copied into the loop's arrays
        self.compiled_exits: dict = {}  # why batches ended (compiled_layout.EXIT_REASONS), for tuning
        self.resident = None  # the state while the compiled loop holds it (compiled_state.Resident)
        # what the loop's state keeps between loads (compiled_state): the cores' programs
        # encoded, while the same are loaded, and the views of the TCDM and scratch arrays
        self.compiled_programs = None
        self.compiled_work: tuple | None = None
        # (simulation, the memory the loop may play or None), found at a simulation's first batch
        self.inner_memory_found: tuple | None = None
        self.python_cycle = -1  # a cycle the compiled loop found a core needs Python for
        self.lookahead = QuestionBackoff()  # when to ask the horizon again after short answers
        self.horizon = KeptHorizon()  # the last answer, for batches that end before it anyway
        self.n_parked_batches = 0  # times it slept waiting on its port (compiled_batches)
        self.n_parked_cycles = 0  # the cycles it ran on waking from those
        self.park_wakes: set = set()  # cycles of the wake-ups asked for then, which a response may outlive
        self.sleeps_until = 0  # the cycle the compiled loop's latest sleep asked to wake at
        self.n_lagging_sends = 0  # read bursts sent while the cores' arrays were ahead (compiled_batches)
        self.lagging_until = 0  # the cores' cycle when a run stopped inside a batch whose reads lagged

    # -- what workloads use ---------------------------------------------------------------------
    def load_programs(self, programs: list) -> None:
        """Give core ``i`` ``programs[i]`` (None leaves it idle); the last entry, if there are
        ``cores + 1``, is the DMA core's. The same Program object shares its I$ lines.
        Programs loaded after a run replace the ones before at the same instruction
        addresses, so the I$ starts empty again (as a loader's ``fence.i`` makes it)."""
        if len(programs) > len(self.core_list):
            raise ValueError(f"{self.path}: {len(programs)} programs for {len(self.core_list)} cores")
        placed: dict[int, int] = {}
        next_base = INSTRUCTION_BASE
        for core, program in zip(self.core_list, list(programs) + [None] * (len(self.core_list) - len(programs))):
            if program is not None and id(program) not in placed:
                placed[id(program)] = next_base
                next_base += (program.size_bytes + 255) // 256 * 256
            core.load(program, placed.get(id(program), 0))
        self.icache.invalidate()
        self.running = [c for c in self.core_list if not c.done]
        self.n_halted = sum(1 for c in self.core_list if c.halted)
        self.done_cycle = -1

    def tcdm_array(self, address: int, shape, dtype=None):
        """A numpy view of TCDM contents (writes to it change the modelled memory)."""
        import numpy as np
        return self.tcdm.array(address, shape, np.float64 if dtype is None else dtype)

    def on_finish(self, callback: Callable) -> None:
        """Call ``callback(cluster)`` once every core has finished and the DMA is idle."""
        self.finish_callbacks.append(callback)

    @property
    def tcdm_base(self) -> int:
        """Where the TCDM starts in the cluster's own (local) address space."""
        return self.tcdm.base_address

    def start(self) -> None:
        if self.tcdm_req.channel is None:
            return
        base, end = self.tcdm_global_base, self.tcdm_global_base + self.tcdm_bytes
        local, local_end = self.tcdm_base, self.tcdm_base + self.tcdm_bytes
        if base == 0:
            self.fail("tcdm_req is connected but tcdm_global_base is 0: give the TCDM the global address "
                      "other clusters reach it by")
        if base < local_end and local < end:
            self.fail(f"tcdm_global_base 0x{base:08x} puts the global range 0x{base:08x} .. 0x{end - 1:08x} over "
                      f"the local TCDM window 0x{local:08x} .. 0x{local_end - 1:08x}: the DMA would take it for "
                      "its own TCDM")

    def in_global_range(self, address: int, size: int) -> bool:
        """Whether ``size`` bytes at ``address`` lie in the TCDM's global range."""
        base = self.tcdm_global_base
        return base > 0 and base <= address and address + size <= base + self.tcdm_bytes

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read TCDM bytes at their global address without simulated time (for checking results)."""
        return bytes(self.tcdm.data[self._global_offset(address, size):][:size])

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Write TCDM bytes at their global address without simulated time (for loading inputs)."""
        offset = self._global_offset(address, len(data))
        self.tcdm.data[offset:offset + len(data)] = data

    def _global_offset(self, address: int, size: int) -> int:
        if not self.in_global_range(address, size):
            base = self.tcdm_global_base
            where = (f"its global range 0x{base:08x} .. 0x{base + self.tcdm_bytes - 1:08x}" if base
                     else "no global range (tcdm_global_base is 0)")
            raise ValueError(f"{self.path}: {size} bytes at 0x{address:08x} are not in the TCDM: it has {where}")
        return address - self.tcdm_global_base

    def earliest_send_ps(self, port) -> int | None:
        """The next tick, but on ``ext_req`` never without new input while the compiled loop
        holds a DMA transfer that has sent all it can and waits for responses
        (:func:`.compiled_batches.dma_waits_on_responses`): only a response arriving lets it send
        (the lookahead counts that as a reaction), so a memory scheduling ahead need not stop
        where the cluster's batch ends."""
        if port is self.ext_req and dma_waits_on_responses(self):
            return None
        return self.sim.next_tick_ps(self)

    def reaction_ps(self, inp, out) -> int | None:
        """A request taken on ``tcdm_req`` is answered on ``tcdm_rsp`` no sooner than the TCDM
        latency (its last word's grant is at the soonest the cycle it is taken)."""
        if inp is self.tcdm_req and out is self.tcdm_rsp:
            return self.tcdm_latency_cycles * self.domain.period_ps
        return 0

    def outside_memory(self):
        """The component at the other end of ``ext_req`` (None when unconnected)."""
        channel = self.ext_req.channel
        return channel.dst_owner if channel is not None else None

    def run_cycles(self) -> int:
        if self.done_cycle >= 0:
            return self.done_cycle + 1
        return self.elapsed_cycles if self.sim is not None else 0

    # -- called by the cores -------------------------------------------------------------------------
    def arrive(self, core: SnitchCore, cycle: int) -> None:
        """``core`` waits at the barrier."""
        core.stall_until = NEVER
        core.barrier_since = cycle
        self.waiting.append(core)
        self.waiting.sort(key=self.arrival_order)
        self._maybe_release(cycle)

    def arrival_order(self, core: SnitchCore) -> tuple[int, int]:
        """Where ``core`` stands among the cores waiting at the barrier: by the cycle it came,
        then by its number. One order whichever way the cores ran (stepped or in a compiled
        batch, which learns of arrivals only when the batch ends)."""
        return core.barrier_since, self.core_list.index(core)

    def halted(self, core: SnitchCore) -> None:
        self.n_halted += 1
        self._maybe_release(self.cycle)

    def finished(self, core: SnitchCore) -> None:
        self.running = [c for c in self.running if c is not core]

    def _maybe_release(self, cycle: int) -> None:
        if self.waiting and len(self.waiting) + self.n_halted == len(self.core_list):
            for core in self.waiting:
                core.s_sync += cycle - core.barrier_since
                core.release(cycle)
            self.waiting = []

    def dma_instruction(self, core: SnitchCore, ins: Instruction, cycle: int) -> bool:
        """Execute a ``dm*`` instruction of ``core``; False when it must wait."""
        if core is not self.dma_core:
            core.fault(ins, f"illegal instruction '{ins.op}': only the DMA core (mhartid {self.cores}) drives the DMA")
        dma = self.dma
        x = core.x
        op = ins.op
        cfg = dma.cfg
        if op == "dmsrc":
            cfg["src"] = x[ins.rs1] & 0xFFFFFFFF
        elif op == "dmdst":
            cfg["dst"] = x[ins.rs1] & 0xFFFFFFFF
        elif op == "dmstr":
            cfg["sstr"], cfg["dstr"] = x[ins.rs1], x[ins.rs2]
        elif op == "dmrep":
            cfg["reps"] = x[ins.rs1]
        elif op in ("dmcpyi", "dmcpy"):
            if len(dma.queue) >= dma.queue_depth:
                core.s_sync += 1
                return False
            config = ins.imm if op == "dmcpyi" else x[ins.rs2]
            if (cfg["src"] >= self.tcdm_base + self.tcdm_bytes or cfg["dst"] >= self.tcdm_base + self.tcdm_bytes) \
                    and self.ext_req.channel is None:
                core.fault(ins, "the transfer leaves the cluster but ext_req is not connected to a memory")
            ident = dma.submit(x[ins.rs1], bool(config & 2), ins)
            if isinstance(ident, str):
                core.fault(ins, ident)
            if ins.rd:
                x[ins.rd] = ident
        else:
            which = ins.imm if op == "dmstati" else x[ins.rs1]
            value = {0: dma.completed, 1: dma.next_id, 2: int(dma.busy),
                     3: int(len(dma.queue) >= dma.queue_depth)}.get(which & 3)
            if ins.rd:
                x[ins.rd] = value
        return True

    # -- the cycle ----------------------------------------------------------------------------------
    def tick(self) -> None:
        domain = self.domain
        cycle = (self.sim.now - domain.phase_ps) // domain.period_ps  # self.cycle, without two calls
        if self.first_tick:
            self.first_tick = False
            # Waveform registers are kept up to date only while an observer (a tracer) watches.
            traced = self.traced = bool(self.sim.observers)
            for part in self.core_list + [self.tcdm, self.dma]:
                part.traced = traced
            if traced and self.engine == "compiled":
                self.fail("engine 'compiled' cannot run a traced run: waveforms come from the Python model "
                          "(use engine = \"auto\")")
            # auto runs the Python model where numba cannot run (compiled raises the reason)
            self.use_compiled = not traced and (self.engine == "compiled" or
                                                (self.engine == "auto" and compiled.available()))
        dma = self.dma
        port = self.tcdm_port
        served = self.tcdm_req.channel is not None and (port.busy or self.tcdm_req.valid)
        if self.use_compiled:
            # The compiled loop leaves the slave port out: a cycle it has work in is Python's.
            if run_compiled(self, cycle, served):
                return
        elif self.resident is not None:
            release(self)  # the loop was switched off mid-run: the objects catch up first
        requests: list = []
        dma_active = False
        if dma.current is not None or dma.queue:
            dma_active = dma.step(cycle, requests, self.ext_req if self.ext_req.channel else None,
                                  self.ext_rsp if self.ext_rsp.channel else None)
        for core in self.running:
            core.step(cycle, requests)
        if served:
            port.step(cycle, requests, self.tcdm_req, self.tcdm_rsp)
        self.tcdm.arbitrate(cycle, requests)
        if not dma_active and self.finish_if_idle(cycle):
            return
        if cycle >= self.check_at:
            self.report_progress(cycle, self.progress_signature())

    def settle(self) -> None:
        """A run returned: the state the compiled loop holds goes back into the objects."""
        release(self)

    def finish_if_idle(self, cycle: int) -> bool:
        """At the end of ``cycle``: when every core has finished and the DMA is idle, the run's
        result is in (the finish callbacks run once) and the cluster sleeps; True then."""
        if self.running or self.dma.busy or self.tcdm_port.busy:
            return False
        if self.done_cycle < 0 and any(c.program is not None for c in self.core_list):
            self.done_cycle = cycle
            for callback in self.finish_callbacks:
                callback(self)
        self.sleep()
        return True

    def progress_signature(self) -> tuple:
        """What :meth:`report_progress` compares, from the Python objects (the compiled
        loop's state builds the same from its arrays: ``Resident.progress_signature``)."""
        port = self.tcdm_port
        dma = self.dma
        # (a write's answer moves no byte of the TCDM: the writes still unanswered count, since
        # a memory slowly draining a transfer's writes is progress; their count only rises
        # again as n_out does, so the pair changes whenever one is answered)
        return (sum(c.n_fpu for c in self.core_list), dma.n_in + dma.n_out + dma.n_done, dma.writes_in_flight,
                port.n_read + port.n_written + port.n_requests,
                self.n_halted, len(self.waiting), zlib.crc32(self.tcdm.data),
                tuple(tuple(c.x) for c in self.core_list), tuple(tuple(c.f) for c in self.core_list))

    def report_progress(self, cycle: int, signature: tuple) -> None:
        """At the end of ``cycle`` (``check_at`` or later), tell the watchdog whether the
        cluster's state (``signature``, see :meth:`progress_signature`) changed since the
        last report, and set the next report a quarter of the watchdog's window later."""
        # The kernel's watchdog judges hangs: work inside the cluster moves no message, so
        # the cluster tells it about progress every quarter of the watchdog's window. Progress
        # is a change of state: FP operations, DMA bytes, cores halting or reaching the
        # barrier, the TCDM's contents, any core's registers. Instructions alone are not: a
        # core spinning on a poll that cannot succeed (a DMA status that never changes, a
        # flag nobody writes) executes without changing anything. A stuck cluster then
        # stops the run with a DeadlockError whose report has each unfinished core's state
        # (SnitchCore.holding) and who waits on whom at the barrier, even while the rest
        # of the system still moves (the kernel's per-part watchdog).
        if signature != self.signature:
            self.signature = signature
            self.progress()
        if self.check_every is None:
            self.check_every = max(1, self.sim.watchdog_ps // self.domain.period_ps // 4)
        self.check_at = cycle + self.check_every
