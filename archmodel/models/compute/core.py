"""The Snitch core: integer pipeline, FP subsystem, LSU, SSRs and the FREP sequencer."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Formula, Param, at_least, model

from .isa import (F_COMP, F_FROMINT, F_LOAD, F_SSR_ENABLE, F_STORE, F_TOINT, K_ALU, K_BARRIER, K_BRANCH, K_CSR,
                  K_DMA, K_FENCE, K_FP, K_FREP, K_HALT, K_JAL, K_JALR, K_LOAD, K_MUL, K_STORE)
from .program import Instruction, Program
from .fast_paths import compile_replay_step
from .fp_subsystem import NEVER, FpSubsystem
from .ssr_config import SsrConfiguration
from .isa import LSU_FP_LOAD, LSU_FP_STORE, LSU_LOAD, LSU_STORE
from .isa import s32 as _s32
from .ssr import SsrStreamer



class _Lsu:
    """The core's port into the TCDM: one request per cycle from an in-order queue.

    Entries are ``(address, kind, register, value, size, signed)``; kind 0 integer load,
    1 integer store, 2 FP load, 3 FP store."""

    __slots__ = ("core", "rid", "queue", "addr")
    reads_stream = False  # the TCDM grants SSR read streams inline, everything else by grant()

    def __init__(self, core, rid: int):
        self.core = core
        self.rid = rid
        self.queue: deque = deque()
        self.addr = 0

    def grant(self, cycle: int) -> None:
        core = self.core
        addr, kind, reg, value, size, signed = self.queue.popleft()
        offset = addr - core.tcdm_base
        ready = cycle + core.tcdm_latency
        if kind == LSU_FP_LOAD:
            if size == 8:
                core.f[reg] = core.mem_d[offset >> 3]
            else:
                core.f[reg] = core.mem_f[offset >> 2]
            core.f_ready[reg] = ready
        elif kind == LSU_FP_STORE:
            if size == 8:
                core.mem_d[offset >> 3] = value
            else:
                core.mem_f[offset >> 2] = value
        elif kind == LSU_LOAD:
            raw = int.from_bytes(core.mem_b[offset:offset + size], "little", signed=signed)
            if reg:
                core.x[reg] = raw
                core.x_ready[reg] = ready
        else:
            core.mem_b[offset:offset + size] = (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        if self.queue:
            self.addr = self.queue[0][0]


@model
class SnitchCore(FpSubsystem, SsrConfiguration, Component):
    """One Snitch core of a cluster: RV32IM integer pipeline, FP64 subsystem, SSRs and FREP.

    Models, each cycle (Zaruba et al., "Snitch", IEEE TC 2021; Schuiki et al., "Stream
    Semantic Registers", IEEE TC 2020):

    * a single-issue in-order integer pipeline: one instruction per cycle at best, with a
      register scoreboard (a read of a register whose load, multiply or FP-to-integer result
      is outstanding stalls issue); taken branches cost no extra cycle;
    * an offload queue (``offload_depth`` entries, one cycle of latency) that carries FP
      instructions, with their integer operands read at offload, to the FP subsystem, so the
      two overlap; the FP subsystem issues in order, one instruction per cycle, with a
      scoreboard over the FP registers and per-operation latencies (FP64 FMA-class 3 cycles,
      FP32 2, comparisons/moves 1; see ``isa.FP_OPS``);
    * a load/store queue of ``lsu_depth`` requests, presented to the TCDM one per cycle in
      order (integer and FP loads/stores share it);
    * 3 SSR streamers (:class:`~archmodel.models.compute.ssr.SsrStreamer`) with
      ``ssr_fifo_depth``-entry FIFOs, each with its own TCDM port;
    * the FREP sequencer: a 16-entry buffer replaying FP instructions (block or per
      instruction, with register staggering) while the integer core runs ahead;
    * an L0 instruction buffer of ``l0_lines`` lines in front of the cluster's shared I$.

    The core is ticked by its :class:`SnitchCluster` (it has no tick of its own), which
    arbitrates the TCDM for all cores in one step; see the cluster for what is abstracted.
    Runtime faults (misaligned or out-of-TCDM access, an illegal instruction) stop the run
    naming the core, pc and source line.

    Leaves out: the register file's port limits (an FP instruction may read three registers
    a cycle), FP exceptions and rounding modes (FMA is computed as a*b + c, rounded twice),
    interrupts, atomics, the integer core's own pipeline stages (branch and load-use latency
    are the TCDM latency), and the SSR shadow registers beyond one queued job.
    """

    offload_depth = Param(int, 8, "FP instructions the offload queue holds", check=at_least(1))
    lsu_depth = Param(int, 4, "outstanding loads/stores of the core", check=at_least(1))
    ssr_fifo_depth = Param(int, 4, "words each SSR data FIFO holds", check=at_least(1))
    l0_lines = Param(int, 8, "instruction lines the core's L0 buffer holds (an assumption)", check=at_least(1))
    fma_latency_cycles = Param(int, 3, "FP64 FMA-class result latency", unit="cycles", check=at_least(1))

    fast_paths = True
    """Replay FREP bodies through compiled functions, park an integer core waiting for the
    offload queue, and step a parked core's replay by fused per-position steps. All are
    exact; tests turn them off to compare against the plain code."""

    instructions = Formula("instructions", "instructions issued by the integer core", lambda c: c.n_instr)
    fpu_ops = Formula("instructions", "FP computations issued (loads/stores excluded)", lambda c: c.n_fpu)
    flops = Formula("flop", "floating-point operations (an FMA counts 2)", lambda c: c.n_flops)
    cycles = Formula("cycles", "cycles until this core finished (or so far)", lambda c: c.run_cycles())
    fpu_utilisation = Formula("%", "FP computations per cycle until the core finished",
                              lambda c: 100.0 * c.n_fpu / c.run_cycles())
    stall_raw = Formula("cycles", "integer issue stalled on a register scoreboard", lambda c: c.s_raw)
    stall_offload = Formula("cycles", "integer issue stalled: offload queue full", lambda c: c.s_offload)
    stall_lsu = Formula("cycles", "issue stalled: load/store queue full", lambda c: c.s_lsu)
    stall_icache = Formula("cycles", "integer issue stalled on an instruction fetch", lambda c: c.s_icache)
    stall_sync = Formula("cycles", "integer issue waiting at a barrier, fence or busy SSR", lambda c: c.s_sync)
    fpu_wait_stream = Formula("cycles", "FP issue waiting for SSR data or FIFO space", lambda c: c.s_stream)
    fpu_wait_dependency = Formula("cycles", "FP issue waiting on an FP register", lambda c: c.s_fdep)

    def setup(self) -> None:
        self.pc_reg = self.register("pc", 0, 32)
        self.fpu_busy_reg = self.register("fpu_busy", False)
        self.fifo_regs = [self.register(f"ssr{i}_fifo", 0, 4) for i in range(3)]
        self.state_reg = self.register("state", "idle")
        self.hartid = 0
        self.program: Program | None = None
        self.instrs: list = []
        self.ibase = 0
        self.ip = 0
        self.x = [0] * 32
        self.x_ready = [0] * 32
        self.f = [0.0] * 32
        self.f_ready = [0] * 32
        self.halted = True
        self.done = True
        self.done_cycle = -1
        self.stall_until = 0
        self.queue: deque = deque()
        self.ssr_on = False
        self.seq_on = False
        self.seq_inner = False
        self.seq_n = self.seq_reps = self.seq_it = self.seq_pos = 0
        self.seq_smax = self.seq_mask = 0
        self.seq_body: list = []
        self.seq_issue: list = []  # the compiled replay function of each seq_body entry
        self.compiled: dict = {}  # replay functions of this core's FREP bodies, see _compiled
        self.fp_pending_until = 0
        self.at_barrier = False
        self.barrier_since = 0  # the cycle this core reached the barrier it waits at
        self.parked = False  # stalled on a full offload queue; see _may_park
        self.replay_steps: dict = {}  # fused steps of FREP bodies, see _install_replay_step
        self.n_replay_steps = 0  # how often fused steps took over (tests check they are reached)
        self.cur_line = -1
        self.l0: deque = deque()
        self.n_instr = self.n_fpu = self.n_flops = 0
        self.s_raw = self.s_offload = self.s_lsu = self.s_icache = self.s_sync = self.s_stream = self.s_fdep = 0
        self.traced = None
        self.cluster = None
        self.lsu = None
        self.ssrs: list = []

    def bind(self, cluster, hartid: int, rid_base: int) -> None:
        """Attach this core to its cluster's TCDM (called by the cluster)."""
        self.cluster = cluster
        self.hartid = hartid
        tcdm = cluster.tcdm
        self.tcdm_base = tcdm.base_address
        self.tcdm_end = tcdm.base_address + tcdm.size_bytes
        self.tcdm_latency = tcdm.latency_cycles
        self.mem_b, self.mem_d, self.mem_f = tcdm.data, tcdm.words, tcdm.singles
        self.lsu = _Lsu(self, rid_base)
        self.ssr_rid = rid_base + 1
        self._reset_streamers()
        self.line_shift = (cluster.icache.line_bytes // 4).bit_length() - 1

    def _reset_streamers(self) -> None:
        self.streaming: list = []  # the streamers with a job running (kept by SsrStreamer)
        self.ssrs = [SsrStreamer(self, i, self.ssr_rid + i, self.ssr_fifo_depth, self.mem_d, self.tcdm_base,
                                 self.tcdm_latency) for i in range(3)]

    def load(self, program: Program | None, ibase: int) -> None:
        """Give this core a program starting at instruction address ``ibase`` (None: idle)."""
        self.program = program
        self.ibase = ibase
        self.leave_replay_step()
        self.replay_steps = {}
        # what the program before left behind (a loaded core starts as from reset): its
        # instruction lines, and the FREP body the sequencer last recorded
        self.l0.clear()
        self.cur_line = -1
        self.seq_on = self.seq_inner = False
        self.seq_n = self.seq_reps = self.seq_it = self.seq_pos = 0
        self.seq_body, self.seq_issue = [], []
        self.ssr_on = False
        if self.cluster is not None:  # and the SSRs' configuration (a repeat count, say) and data
            self._reset_streamers()
        if program is None:
            self.instrs = []
            self.halted = self.done = True
            return
        instrs = program.instructions
        if self.fma_latency_cycles != 3:
            instrs = [self._with_fma_latency(i) for i in instrs]
        self.instrs = instrs
        self.halted = self.done = False
        self.ip = 0
        self.parked = False
        self.compiled = {}
        self.x = [0] * 32
        self.x[2] = 0  # sp: programs keep no stack
        self.state_reg.set("run")

    def _with_fma_latency(self, ins: Instruction) -> Instruction:
        if ins.kind == K_FP and ins.fkind == F_COMP and ins.latency == 3:
            copy = ins.stagger_copy(0, 0)
            copy = Instruction.__new__(Instruction)
            for slot in Instruction.__slots__:
                setattr(copy, slot, getattr(ins, slot))
            copy.latency = self.fma_latency_cycles
            return copy
        return ins

    def run_cycles(self) -> int:
        """Cycles from time 0 until this core finished (or until now)."""
        if self.done_cycle >= 0:
            return self.done_cycle + 1
        return self.elapsed_cycles if self.sim is not None else 0

    def pc_of(self, ip: int) -> int:
        return self.ibase + 4 * ip

    def fault(self, ins: Instruction, reason: str) -> None:
        """Stop the run: a runtime fault at ``ins``."""
        self.fail(f"core {self.hartid} at pc 0x{self.pc_of(ins.index):08x} ({ins.where()}): {reason}")

    def stream_exhausted(self, ins: Instruction, stream: int) -> None:
        """Stop the run: ``ins`` reads stream register ft``stream`` whose SSR has no data left
        and no job to fetch more (never configured, or its job is used up) after the integer
        core has halted. Until then the FP subsystem waits, as the RTL's lane holds its
        valid low on an empty FIFO (``snitch_ssr``: ``lane_valid_o = ~fifo_empty``): the
        integer core may still start the job the instruction reads. Once it has halted none
        can come and the core would wait forever (an FREP stagger that walks an operand onto
        ft0..ft2 is the usual cause)."""
        s = self.ssrs[stream]
        why = "its jobs are used up" if s.launched else "it was never started"
        written = self.instrs[ins.index]
        staggered = f", the FREP stagger turned ft{stream} into a stream register" if stream not in written.fsrc else ""
        self.fault(ins, f"reads ft{stream} but SSR {stream} has no data and no job left ({why}{staggered})")

    def not_a_write_stream(self, ins: Instruction, stream: int) -> None:
        """Stop the run: ``ins`` writes stream register ft``stream`` whose latest SSR job reads
        (or that no job was ever started on)."""
        if self.ssrs[stream].launched:
            self.fault(ins, f"writes ft{stream} but SSR {stream} is configured for reading")
        staggered = (f", the FREP stagger turned ft{stream} into a stream register"
                     if self.instrs[ins.index].rd != stream else "")
        self.fault(ins, f"writes ft{stream} but SSR {stream} has no write job (it was never started{staggered})")

    def _check_access(self, ins: Instruction, addr: int, size: int) -> None:
        if addr % size:
            self.fault(ins, f"misaligned {size}-byte access to 0x{addr:08x}")
        if not self.tcdm_base <= addr <= self.tcdm_end - size:
            self.fault(ins, f"access to 0x{addr:08x} is outside the TCDM "
                            f"(0x{self.tcdm_base:08x} .. 0x{self.tcdm_end - 1:08x})")

    # -- the integer core ---------------------------------------------------------------------
    def int_step(self, cycle: int) -> None:
        """Issue at most one integer-pipeline instruction."""
        if self.stall_until > cycle:
            return
        ip = self.ip
        if ip >> self.line_shift != self.cur_line:
            line = ip >> self.line_shift
            self.cur_line = line
            if line not in self.l0:
                self.l0.append(line)
                if len(self.l0) > self.l0_lines:
                    self.l0.popleft()
                wait = self.cluster.icache.fetch((self.ibase >> 2) + (line << self.line_shift), cycle)
                if wait:
                    self.stall_until = cycle + wait
                    self.s_icache += wait
                    return
        if ip >= len(self.instrs):
            self.fail(f"core {self.hartid} ran past the end of its program ({self.program.name}): "
                      "end it with ecall")
        ins = self.instrs[ip]
        x = self.x
        x_ready = self.x_ready
        if x_ready[ins.xs1] > cycle or x_ready[ins.xs2] > cycle:
            self.s_raw += 1
            return
        kind = ins.kind
        if kind == K_ALU:
            if ins.rd:
                x[ins.rd] = _s32(ins.fn(x[ins.rs1], ins.imm if ins.uses_imm else x[ins.rs2]))
            self.ip = ip + 1
        elif kind == K_BRANCH:
            self.ip = ins.target if ins.fn(x[ins.rs1], x[ins.rs2]) else ip + 1
        elif kind == K_FP:
            if len(self.queue) >= self.offload_depth:
                self.s_offload += 1
                self.parked = self.fast_paths and self._may_park()
                return
            fkind = ins.fkind
            operand = 0
            if fkind == F_LOAD or fkind == F_STORE:
                operand = _s32(x[ins.rs1] + ins.imm) & 0xFFFFFFFF
                self._check_access(ins, operand, ins.size)
            elif fkind == F_FROMINT:
                operand = x[ins.rs1]
            elif fkind == F_SSR_ENABLE:
                operand = ins.imm if ins.uses_imm else x[ins.rs1]
            elif fkind == F_TOINT and ins.rd:
                x_ready[ins.rd] = NEVER
            self.queue.append((ins, operand))
            self.ip = ip + 1
        elif kind == K_FREP:
            if len(self.queue) >= self.offload_depth:
                self.s_offload += 1
                self.parked = self.fast_paths and self._may_park()
                return
            self.queue.append((ins, x[ins.rs1]))
            self.ip = ip + 1
        elif kind == K_LOAD or kind == K_STORE:
            lsu = self.lsu
            if len(lsu.queue) >= self.lsu_depth:
                self.s_lsu += 1
                return
            addr = _s32(x[ins.rs1] + ins.imm) & 0xFFFFFFFF
            self._check_access(ins, addr, ins.size)
            if not lsu.queue:
                lsu.addr = addr
            if kind == K_LOAD:
                lsu.queue.append((addr, LSU_LOAD, ins.rd, 0, ins.size, ins.signed))
                if ins.rd:
                    x_ready[ins.rd] = NEVER
            else:
                lsu.queue.append((addr, LSU_STORE, 0, x[ins.rs2], ins.size, False))
            self.ip = ip + 1
        elif kind == K_MUL:
            if ins.rd:
                x[ins.rd] = _s32(ins.fn(x[ins.rs1], x[ins.rs2]))
                x_ready[ins.rd] = cycle + ins.latency
            self.ip = ip + 1
        elif kind == K_JAL:
            if ins.op == "auipc":
                if ins.rd:
                    x[ins.rd] = _s32(self.pc_of(ip) + ins.imm)
                self.ip = ip + 1
            else:
                if ins.rd:
                    x[ins.rd] = self.pc_of(ip + 1)
                self.ip = ins.target
        elif kind == K_JALR:
            target = (x[ins.rs1] + ins.imm) & ~1
            if ins.rd:
                x[ins.rd] = self.pc_of(ip + 1)
            index, rest = divmod(target - self.ibase, 4)
            if rest or not 0 <= index < len(self.instrs):
                self.fault(ins, f"jump to 0x{target & 0xFFFFFFFF:08x}, which is not an instruction of this program")
            self.ip = index
        elif kind == K_CSR:
            if not self._csr(ins, cycle):
                return
            self.ip = ip + 1
        elif kind == K_BARRIER:
            if not self.at_barrier:
                if not self.fp_idle(cycle):
                    self.s_sync += 1
                    return
                self.at_barrier = True
                self.state_reg.set("barrier")
                self.cluster.arrive(self, cycle)
            self.s_sync += 1
            return
        elif kind == K_DMA:
            if not self.cluster.dma_instruction(self, ins, cycle):
                return
            self.ip = ip + 1
        elif kind == K_HALT:
            self.halted = True
            self.state_reg.set("halt")
            self.ip = ip + 1
            self.n_instr += 1
            self.cluster.halted(self)
            return
        elif kind == K_FENCE:
            if not self.fp_idle(cycle):
                self.s_sync += 1
                return
            self.ip = ip + 1
        else:  # K_NOP
            self.ip = ip + 1
        self.n_instr += 1

    def release(self, cycle: int) -> None:
        """The barrier this core waits at has opened."""
        self.at_barrier = False
        self.ip += 1
        self.n_instr += 1
        self.stall_until = cycle + 1
        self.state_reg.set("run")

    def _csr(self, ins: Instruction, cycle: int) -> bool:
        name = ins.csr
        x = self.x
        op = ins.op
        new = ins.imm if ins.uses_imm else x[ins.rs1]
        if name == "mhartid":
            old = self.hartid
        elif name == "mcycle":
            old = cycle & 0xFFFFFFFF
        elif name == "minstret":
            old = self.n_instr & 0xFFFFFFFF
        else:
            return self.ssr_csr(ins, name, op, new)
        if op not in ("csrrs", "csrrsi") or (ins.uses_imm and ins.imm) or (not ins.uses_imm and ins.rs1):
            if name in ("mhartid", "mcycle", "minstret"):
                self.fault(ins, f"CSR {name} is read-only")
        if ins.rd:
            x[ins.rd] = old
        return True

    def _may_park(self) -> bool:
        """Whether the integer core, stalled on a full offload queue with its operands ready,
        stays stalled for that reason until the queue has room (so ``step`` may count the
        stall without re-running the issue checks). Operands once ready stay ready unless a
        load or FP-to-integer result still on its way writes them again: park only without
        such writes pending."""
        for entry in self.lsu.queue:
            if entry[1] == 0:
                return False
        for ins, _ in self.queue:
            if ins.fkind == F_TOINT:
                return False
        return True

    def step(self, cycle: int, requests: list) -> None:
        """One cycle of the whole core; TCDM requests go to ``requests``."""
        if self.seq_on and self.seq_it:
            computed = self.seq_issue[self.seq_pos][self.seq_it % (self.seq_smax + 1)](cycle)  # fp_step's replay
        else:
            computed = self.fp_step(cycle)
        if self.parked:
            if len(self.queue) >= self.offload_depth:
                self.s_offload += 1
            else:
                self.parked = False
                self.int_step(cycle)
        elif not self.halted and self.stall_until <= cycle:
            self.int_step(cycle)
        if self.lsu.queue:
            requests.append(self.lsu)
        # the streamers ask for a word (see SsrStreamer)
        for s in self.streaming:
            if s.indirect:
                if s.present(cycle):
                    if not self.tcdm_base <= s.addr < self.tcdm_end:
                        self.stream_fault(s, s.addr)
                    requests.append(s)
                continue
            fifo = s.fifo
            if s.job_writes:
                if fifo and fifo[0][0] <= cycle:
                    requests.append(s)
            elif len(fifo) < s.depth:
                requests.append(s)
        if self.traced:
            self._trace(computed)
        if self.halted and not self.done and self.fp_idle(cycle):
            self.done = True
            self.done_cycle = cycle
            self.cluster.finished(self)
        elif self.parked and self.seq_on and self.seq_it and self.fast_paths and not self.traced:
            self._install_replay_step()

    # A parked core replaying an FREP does the same few things every cycle until the replay
    # ends or one of its stream jobs does (the offload queue, the LSU and the SSR
    # configuration cannot change meanwhile): it then steps by fused functions, one per body
    # position, that the cluster calls instead of ``step`` (see compile_replay_step).
    def _install_replay_step(self) -> None:
        if self.seq_inner or self.lsu.queue or len(self.queue) < self.offload_depth:
            return
        if any(s.indirect for s in self.streaming):
            return  # the fused steps present affine streams' requests only
        # The same FREP body (same instructions, stagger, streams) comes back for every row
        # of a kernel: its fused steps are built once per core.
        # The directions of all three streamers decide which faults a step must still check.
        key = (tuple((ins.index, ins.rd, ins.rs1, ins.rs2, ins.rs3) for copies in self.seq_body for ins in copies),
               self.seq_smax, self.ssr_on, tuple((s.index, s.job_writes) for s in self.streaming),
               tuple(s.writes for s in self.ssrs))
        table = self.replay_steps.get(key)
        if table is None:
            if len(self.replay_steps) >= 8:  # a kernel cycles through a few; unrolled code through many
                self.replay_steps.clear()
            table = self.replay_steps[key] = self._replay_step_table()
        if table:
            self.step = table[self.seq_it % (self.seq_smax + 1)][self.seq_pos]
            self.n_replay_steps += 1

    def _replay_step_table(self) -> list:
        """The fused steps of the current FREP body, per stagger copy and position (empty
        when some instruction needs the general path)."""
        requesters = tuple((s.index, s.job_writes) for s in self.streaming)
        copies = self.seq_smax + 1
        n = self.seq_n
        rows = []
        for k in range(copies):
            row = []
            for pos in range(n):
                ins = self.seq_body[pos][k]
                if ins.fkind != F_COMP:
                    return []
                streams = self.ssr_on and ins.ssr_path
                if streams:
                    if ins.dup_stream or any(r < 3 and self.ssrs[r].writes for r in ins.fsrc):
                        return []
                    if ins.rd < 3 and not self.ssrs[ins.rd].writes:
                        return []
                row.append((ins, streams))
            rows.append(row)
        table = [[None] * n for _ in range(copies)]
        firsts = [None] * copies
        for k in range(copies):
            for pos in reversed(range(n)):
                ins, streams = rows[k][pos]
                last = pos == n - 1
                successors = firsts if last else [table[k][pos + 1]]
                table[k][pos] = compile_replay_step(ins, streams, requesters, last)(self, ins, ins.fn, successors)
            firsts[k] = table[k][0]
        return table

    def leave_replay_step(self) -> None:
        """Step by the general ``step`` again (a stream job ended, or the FREP did)."""
        self.__dict__.pop("step", None)

    def _trace(self, computed: bool) -> None:
        pc = self.pc_of(self.ip)
        if self.pc_reg.value != pc:
            self.pc_reg.set(pc)
        if self.fpu_busy_reg.value != computed:
            self.fpu_busy_reg.set(computed)
        for reg, s in zip(self.fifo_regs, self.ssrs):
            level = len(s.fifo)
            if reg.value != level:
                reg.set(level)

    def describe_state(self) -> str:
        """Where this core is, for a hang report."""
        if self.done:
            return f"core {self.hartid}: finished"
        ins = self.instrs[self.ip] if self.ip < len(self.instrs) else None
        where = f"pc 0x{self.pc_of(self.ip):08x} ({ins.where()})" if ins else "past the end"
        if self.halted:
            where = "halted, FP subsystem busy"
        elif self.at_barrier:
            where += " waiting at the barrier"
        return (f"core {self.hartid}: {where}; "
                f"offload queue {len(self.queue)}, frep {'on' if self.seq_on else 'off'}, "
                f"SSR FIFOs {[len(s.fifo) for s in self.ssrs]}, SSR jobs {[int(s.active) + len(s.jobs) for s in self.ssrs]}")

    def holding(self) -> str | None:
        """An unfinished program, described for the kernel's deadlock report (the cluster
        reports this core's progress to the watchdog, see SnitchCluster)."""
        if self.cluster is not None:
            self.cluster.settle()  # (the compiled loop may hold the core's state: the objects catch up)
        if self.done:
            return None
        return "an unfinished program: " + self.describe_state()

    def waiting_for(self) -> list:
        """At the barrier: the cores that have not reached it and have not halted."""
        if not self.at_barrier:
            return []
        return [c for c in self.cluster.core_list if not c.halted and not c.at_barrier]
