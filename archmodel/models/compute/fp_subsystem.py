"""The Snitch core's FP subsystem (a mixin of :class:`~.core.SnitchCore`, which holds the
state): the offload queue's issue, FREP replay through the generated fast paths, SSR
operands, and the FP scoreboard."""

from __future__ import annotations

from .fast_paths import compile_issue, sequencer_step
from .isa import F_COMP, F_FROMINT, F_LOAD, F_STORE, F_TOINT, K_FREP, LSU_FP_LOAD, LSU_FP_STORE
from .program import Instruction

NEVER = 1 << 62
"""A cycle that never comes (a stall with no end yet, a register never ready)."""


class FpSubsystem:
    """The FP side of a Snitch core: :meth:`fp_step` once per cycle, :meth:`fp_idle`. The
    core provides the queue, the sequencer, the SSRs, the LSU, the FP register file and its
    scoreboard, and the cluster it stalls or faults through."""

    def fp_idle(self, cycle: int) -> bool:
        """Nothing left in the FP subsystem, the LSU or the SSR write streams."""
        if self.queue or self.seq_on or self.lsu.queue or self.fp_pending_until > cycle:
            return False
        for s in self.ssrs:
            if s.writes and (s.active or s.fifo):
                return False
        return True

    # -- the FP subsystem --------------------------------------------------------------------
    # fp_step, int_step and step run once per core and cycle, so they keep attributes in
    # locals and test the common cases first: an FREP replay runs the body instructions
    # compiled when the sequencer recorded them (see compile_issue), an integer core
    # waiting for the offload queue is parked (see _may_park); the rest takes _issue.
    def fp_step(self, cycle: int) -> bool:
        """Issue at most one FP instruction; True when the FPU computed this cycle."""
        queue = self.queue
        if self.seq_on:
            it = self.seq_it
            if it:
                return self.seq_issue[self.seq_pos][it % (self.seq_smax + 1)](cycle)
            if not queue:
                return False
            ins, operand = queue[0]
            computed = self._issue(ins, operand, cycle)
            if computed is None:
                return False
            queue.popleft()
            copies = [ins.stagger_copy(k, self.seq_mask) for k in range(self.seq_smax + 1)]
            self.seq_body.append(copies)
            self.seq_issue.append([self.replay_function(copy) for copy in copies])
            self._seq_advance()
            return computed
        if not queue:
            return False
        ins, operand = queue[0]
        if ins.kind == K_FREP:
            queue.popleft()
            self.seq_on = True
            self.seq_inner = ins.frep_inner
            self.seq_n = ins.imm
            self.seq_reps = (operand & 0xFFFFFFFF) + 1
            self.seq_it = self.seq_pos = 0
            self.seq_smax = ins.stagger_max
            self.seq_mask = ins.stagger_mask
            self.seq_body = []
            self.seq_issue = []
            return False
        computed = self._issue(ins, operand, cycle)
        if computed is None:
            return False
        queue.popleft()
        return computed

    # The FREP sequencer moves on after an issue: the method is built from the same source
    # (_SEQ_ADVANCE) that the compiled replay functions inline, so the two cannot drift apart.
    _seq_advance = sequencer_step()

    def _issue(self, ins: Instruction, operand: int, cycle: int) -> bool | None:
        """Issue ``ins`` (with the integer operand read at offload) if its operands and
        resources are ready: whether the FPU computed, or None (a stall, counted)."""
        fkind = ins.fkind
        f_ready = self.f_ready
        if fkind == F_COMP:
            rd = ins.rd
            ssr_on = self.ssr_on
            if ssr_on and ins.ssr_path:
                values = self._stream_operands(ins, cycle)
                if values is None:
                    return None
            else:
                for r in ins.fregs:
                    if f_ready[r] > cycle:
                        self.s_fdep += 1
                        return None
                f = self.f
                values = [f[r] for r in ins.fsrc]
            result = ins.fn(*values)
            done = cycle + ins.latency
            if ssr_on and rd < 3:
                self.ssrs[rd].fifo.append([done, result])
            else:
                self.f[rd] = result
                f_ready[rd] = done
            if done > self.fp_pending_until:
                self.fp_pending_until = done
            self.n_fpu += 1
            self.n_flops += ins.flops
            computed = True
        elif fkind == F_LOAD:
            rd = ins.rd
            if f_ready[rd] > cycle:
                self.s_fdep += 1
                return None
            lsu = self.lsu
            if len(lsu.queue) >= self.lsu_depth:
                self.s_lsu += 1
                return None
            if not lsu.queue:
                lsu.addr = operand
            lsu.queue.append((operand, LSU_FP_LOAD, rd, 0, ins.size, False))
            f_ready[rd] = NEVER
            computed = False
        elif fkind == F_STORE:
            if f_ready[ins.rs2] > cycle:
                self.s_fdep += 1
                return None
            lsu = self.lsu
            if len(lsu.queue) >= self.lsu_depth:
                self.s_lsu += 1
                return None
            if not lsu.queue:
                lsu.addr = operand
            lsu.queue.append((operand, LSU_FP_STORE, 0, self.f[ins.rs2], ins.size, False))
            computed = False
        elif fkind == F_TOINT:
            for r in ins.fsrc:
                if f_ready[r] > cycle:
                    self.s_fdep += 1
                    return None
            if ins.rd:
                self.x[ins.rd] = ins.fn(*[self.f[r] for r in ins.fsrc])
                self.x_ready[ins.rd] = cycle + 1
            self.n_fpu += 1
            computed = True
        elif fkind == F_FROMINT:
            rd = ins.rd
            if f_ready[rd] > cycle:
                self.s_fdep += 1
                return None
            self.f[rd] = ins.fn(operand)
            f_ready[rd] = cycle + 1
            if cycle + 1 > self.fp_pending_until:
                self.fp_pending_until = cycle + 1
            self.n_fpu += 1
            computed = True
        else:  # F_SSR_ENABLE
            op = ins.op
            if op in ("csrrw", "csrrwi"):
                self.ssr_on = bool(operand & 1)
            elif op in ("csrrs", "csrrsi"):
                self.ssr_on = self.ssr_on or bool(operand & 1)
            elif operand & 1:
                self.ssr_on = False
            computed = False
        return computed

    def replay_function(self, ins: Instruction):
        """The replay function of FREP body instruction ``ins`` for this core (cached): it
        issues the instruction and moves the sequencer on, or counts a stall."""
        streams = self.ssr_on and ins.ssr_path
        key = (ins.index, ins.rd, ins.rs1, ins.rs2, ins.rs3, streams)
        issue = self.compiled.get(key)
        if issue is None:
            if streams and ins.dup_stream or not self.fast_paths:
                def issue(cycle, ins=ins):
                    if self._issue(ins, 0, cycle) is None:
                        return False
                    self._seq_advance()
                    return True
            else:
                issue = compile_issue(ins, streams)(self, ins, ins.fn)
            self.compiled[key] = issue
        return issue

    def _stream_operands(self, ins: Instruction, cycle: int):
        """Operands of an FP computation with SSRs on; None (and a stall) if not available.

        The one general path (a stream may be read more than once); the replay functions
        of compile_issue and compile_replay_step are its straight-line copies for an
        instruction reading each stream at most once, held to it by tests/models/compute/
        test_fast_paths.py."""
        ssrs = self.ssrs
        f_ready = self.f_ready
        taken = [0, 0, 0]
        for r in ins.fsrc:
            if r < 3:
                s = ssrs[r]
                if s.writes:
                    self.fault(ins, f"reads ft{r} but SSR {r} is configured for writing")
                fifo = s.fifo
                k = taken[r]
                # the k-th read of this stream in this instruction
                if k == 0:
                    if not fifo or fifo[0][0] > cycle:
                        # an empty stream with no job waits for one the integer core may
                        # still start (the RTL's lane holds valid low), until it has halted
                        if not fifo and not s.active and self.halted:
                            self.stream_exhausted(ins, r)
                        self.s_stream += 1
                        return None
                else:
                    # the reads the ready entries at the FIFO's head can serve
                    ready = 0
                    for entry in fifo:
                        if entry[0] > cycle:
                            break
                        ready += entry[2]
                    if ready <= k:
                        total = sum(entry[2] for entry in fifo)
                        if not s.active and total <= k and self.halted:
                            self.stream_exhausted(ins, r)
                        if len(fifo) >= s.depth and total <= k:
                            self.fault(ins, f"reads ft{r} {ins.fsrc.count(r)} times, but SSR {r}'s FIFO of "
                                            f"{s.depth} element(s) serves {total} read(s) when full: raise "
                                            "ssr_fifo_depth or the stream's repeat")
                        self.s_stream += 1
                        return None
                taken[r] = k + 1
            elif f_ready[r] > cycle:
                self.s_fdep += 1
                return None
        rd = ins.rd
        if rd < 3:
            s = ssrs[rd]
            if not s.writes:
                self.not_a_write_stream(ins, rd)
            if len(s.fifo) >= s.depth:
                self.s_stream += 1
                return None
        elif f_ready[rd] > cycle:
            self.s_fdep += 1
            return None
        values = []
        f = self.f
        for r in ins.fsrc:
            if r < 3:
                fifo = ssrs[r].fifo
                entry = fifo[0]
                values.append(entry[1])
                entry[2] -= 1
                if entry[2] == 0:
                    fifo.popleft()
            else:
                values.append(f[r])
        return values
