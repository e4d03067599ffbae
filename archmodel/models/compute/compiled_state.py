"""The cluster's state in arrays, for the batches of the compiled loop (:mod:`.compiled_batches`).

:func:`~.compiled_batches.run_compiled`, which the cluster's tick calls, copies the Python model's state
(cores, streamers, I$, TCDM arbitration, DMA engine) into the int64/float64 arrays of
:mod:`compiled_cluster` (a :class:`Resident`), runs a batch of cycles there and sleeps
until the batch's end. The state stays in the arrays between batches while only the
outside world set the batch's end (a response on its way, the memory's next tick, a burst
to send): at the next tick Python does the DMA port's part of that cycle (receive a
response, start a queued transfer, send a burst) on the arrays (the DMA engine's part of the
state, :mod:`.compiled_dma_state`) and the loop goes on. It
is copied back into the Python objects, and the Python model steps the next cycle itself,
whenever a core needs Python there (a fault, an instruction the loop leaves out), and
before anything could read it: at a progress report, the watchdog's deadline, the run's
limit, and when the last core has finished.

While the state is held in arrays the Python objects are behind; only the cluster reads
them then, and every return from ``Simulator.run`` brings them up to date (the cluster's
``settle``). A run stopped from outside the cluster in the middle of a batch (another model
calling ``stop()``, an error elsewhere) shows the cluster at the end of its last batch.
"""

from __future__ import annotations

from collections import OrderedDict
from operator import attrgetter

import numpy as np

from archmodel.kernel.compiled import argument_layout, compiled_entry

from .compiled_layout import (C_CBASE, C_SEQ_GEN, G_CHECKED, G_CHECKED_EXIT, G_CONFLICTS, G_EXIT, G_DMA_COMPLETED,
                              G_DMA_REPS, G_DMA_SRC, G_GRANTS, G_IC_HITS, G_IC_MISSES, G_IC_N, G_N_HALTED, S_ACTIVE,
                              S_ADJ, S_BOUNDS, S_CFGB, S_CFGS, S_COUNT, S_DIMS, S_HEAD, S_IDX, S_JB, S_JBASE, S_JDIMS,
                              S_JN, S_JOB_WRITES, S_JREPEAT, S_JS, S_JWRITES, S_LAUNCHED, S_LEFT, S_REPEAT, S_RUN,
                              S_RUN_LEN, S_USES, S_WRITES, S_ADDR, S_IBASE, S_IBASE_CFG, S_ICFG, S_ICOUNT, S_ILAST,
                              S_IND, S_INEXT, S_IOFF, S_IQ_COUNT, S_IQ_DEPTH, S_IQ_HEAD, S_IQ_READY, S_IQ_WORD,
                              S_ISERVE, S_ISHIFT, S_ISIZE, S_IWORDS, S_JICFG, S_JIBASE, S_JIND, S_WIDTH,
                              encode_programs)
from .isa import SSR_INDEX_CREDITS
from .compiled_cluster import _compiled_cluster_cycles
from .compiled_cluster_memory import OFF as MEMORY_OUTSIDE
from .compiled_dma_state import ResidentDma
from .isa import LSU_FP_STORE, LSU_STORE

_STREAM_HEAD = attrgetter("writes", "active", "job_writes", "addr", "left")
_STREAM_MIDDLE = attrgetter("dims", "uses", "repeat")
_STREAM_TAIL = attrgetter("run", "run_len", "launched", "rid", "depth")
_NO_JOB = [0] * 12
_CORE_FIELDS = attrgetter("ip", "stall_until", "halted", "done", "done_cycle", "at_barrier", "barrier_since",
                          "cur_line")
_CORE_COUNTERS = attrgetter("n_instr", "n_fpu", "n_flops", "s_raw", "s_offload", "s_lsu", "s_icache", "s_sync",
                            "s_stream", "s_fdep", "fp_pending_until", "ssr_on", "seq_on", "seq_inner", "seq_n",
                            "seq_reps", "seq_it", "seq_pos", "seq_smax", "seq_mask")


class _Programs:
    """The encoded programs of a cluster's cores, kept while the same programs are loaded."""

    def __init__(self, cores):
        self.key = tuple(id(c.instrs) for c in cores)
        self.table, self.objects, bases = encode_programs(cores)
        self.base_of = {id(c): b for c, b in zip(cores, bases)}
        self._index_of: dict | None = None

    @property
    def index_of(self) -> dict:
        """The table row of each instruction object, by id: made when a state that holds
        instructions (an FREP body, an offload queue) is first loaded, not at a first load,
        which holds none."""
        if self._index_of is None:
            self._index_of = {id(ins): k for k, ins in enumerate(self.objects)}
        return self._index_of


def _programs(cluster) -> _Programs:
    cores = cluster.core_list
    programs = cluster.compiled_programs
    if programs is None or programs.key != tuple(id(c.instrs) for c in cores):
        programs = cluster.compiled_programs = _Programs(cores)
    return programs


def _streamer_row(s) -> list:
    """The S_* row of streamer ``s`` (booleans become 0/1 in the int64 array)."""
    indirection = None
    if s.jobs:
        base, dims, bounds, strides, repeat, writes, indirection = s.jobs[0]
        job = [base, dims, *bounds, *[0] * (4 - dims), *strides, *[0] * (4 - dims), repeat, writes]
    else:
        job = _NO_JOB
    ready = [0] * S_IQ_DEPTH
    words = [0] * S_IQ_DEPTH
    for k, (at, bits) in enumerate(s.iq):
        ready[k], words[k] = at, bits - (1 << 64) if bits >= 1 << 63 else bits
    row = [*_STREAM_HEAD(s), *s.idx, *s.bounds, *s.adj, *_STREAM_MIDDLE(s), *s.cfg_bounds, *s.cfg_strides,
           *_STREAM_TAIL(s), 0, len(s.fifo), len(s.jobs), *job,
           s.indirect, s.idx_cfg, s.idx_base, indirection is not None, *(indirection or (0, 0)), s.i_base,
           s.i_size, s.i_shift, s.i_next, s.i_words, s.i_off, 0, len(s.iq), *ready, *words, s.i_serve, s.i_last,
           s.i_count]
    return row


def _write_streamer(s, st: list, ready: list, value: list, uses: list, depth_cap: int) -> None:
    s.writes, s.active, s.job_writes = bool(st[S_WRITES]), bool(st[S_ACTIVE]), bool(st[S_JOB_WRITES])
    s.addr, s.left = st[S_ADDR], st[S_LEFT]
    s.idx = st[S_IDX:S_IDX + 4]
    s.bounds = st[S_BOUNDS:S_BOUNDS + 4]
    s.adj = st[S_ADJ:S_ADJ + 4]
    s.dims, s.uses, s.repeat = st[S_DIMS], st[S_USES], st[S_REPEAT]
    s.cfg_bounds[:] = st[S_CFGB:S_CFGB + 4]
    s.cfg_strides[:] = st[S_CFGS:S_CFGS + 4]
    s.run, s.run_len, s.launched = st[S_RUN], st[S_RUN_LEN], bool(st[S_LAUNCHED])
    s.adj0 = s.adj[0]
    s.indirect, s.idx_cfg, s.idx_base = bool(st[S_IND]), st[S_ICFG], st[S_IBASE_CFG]
    s.i_base, s.i_size, s.i_shift, s.i_next = st[S_IBASE], st[S_ISIZE], st[S_ISHIFT], st[S_INEXT]
    s.i_words, s.i_off, s.i_serve, s.i_last = st[S_IWORDS], st[S_IOFF], bool(st[S_ISERVE]), bool(st[S_ILAST])
    s.i_count = st[S_ICOUNT]
    s.iq.clear()
    for k in range(st[S_IQ_COUNT]):
        at = (st[S_IQ_HEAD] + k) % S_IQ_DEPTH
        s.iq.append([st[S_IQ_READY + at], st[S_IQ_WORD + at] & 0xFFFF_FFFF_FFFF_FFFF])
    s.reads_stream = s.active and not s.job_writes and not s.indirect
    s.jobs.clear()
    if st[S_JN]:
        dims = st[S_JDIMS]
        s.jobs.append((st[S_JBASE], dims, st[S_JB:S_JB + dims], st[S_JS:S_JS + dims], st[S_JREPEAT],
                       bool(st[S_JWRITES]), (st[S_JICFG], st[S_JIBASE]) if st[S_JIND] else None))
    fifo = s.fifo
    fifo.clear()
    head = st[S_HEAD]
    for k in range(st[S_COUNT]):
        at = (head + k) % depth_cap
        if uses[at] < 0:
            fifo.append([ready[at], value[at]])
        else:
            fifo.append([ready[at], value[at], uses[at]])


if S_IQ_DEPTH != SSR_INDEX_CREDITS or S_ICOUNT + 1 != S_WIDTH:
    raise AssertionError("compiled_layout's ISSR columns disagree with the ISA table or the row width")


class _Replays:
    """The replay functions of one FREP body position's stagger copies, made when the
    Python model first replays one (``SnitchCore.seq_issue`` entries are indexed the same
    way): a batch that ends inside a replay hands the body back without building them."""

    __slots__ = ("core", "copies", "made")

    def __init__(self, core, copies: list):
        self.core = core
        self.copies = copies
        self.made = [None] * len(copies)

    def __getitem__(self, k: int):
        issue = self.made[k]
        if issue is None:
            issue = self.made[k] = self.core.replay_function(self.copies[k])
        return issue


def _restore_sequencer(core, recorded: list) -> None:
    """The FREP body the loop recorded, as the core's stagger copies and replay functions."""
    body = [[ins.stagger_copy(k, core.seq_mask) for k in range(core.seq_smax + 1)] for ins in recorded]
    core.seq_body = body
    core.seq_issue = [_Replays(core, copies) for copies in body]


_SCALARS = (0, 0, False, False)  # what run() passes before the arrays: start, end, check_only, port_done


def _entry_of(loop, arrays: tuple):
    """The compiled entry of ``loop`` (the numba dispatcher of the cluster loop) for
    ``arrays`` after run()'s four scalars
    (:func:`~archmodel.kernel.compiled.compiled_entry`); None until the dispatcher holds it.
    Calling it skips the typing of 46 arguments at every batch, about half of a short
    batch's call."""
    return compiled_entry(loop, _SCALARS + arrays)


class Resident(ResidentDma):
    """The state of one cluster in the compiled loop's arrays (see the module docstring)."""

    def __init__(self, cluster):
        self.cluster = cluster
        cluster.n_compiled_loads += 1
        self.running = running = list(cluster.running)
        self.programs = programs = _programs(cluster)
        self.next_cycle = -1  # the cycle the arrays have reached (the cluster's next tick)
        self.parked = False  # asleep waiting on its port (compiled_batches.waits_only_for_the_port)
        # the cores ran ahead of the DMA's read requests, which are sent at the kernel's edges
        # (compiled_batches.send_lagging_reads); see _blocked
        self.sends_lag = False
        ncores = len(running)
        dma_core = cluster.dma_core
        self.cs = np.array([[*_CORE_FIELDS(core), len(core.l0), *_CORE_COUNTERS(core), len(core.seq_body), 0,
                             len(core.queue), 0, len(core.lsu.queue), programs.base_of[id(core)], len(core.instrs),
                             core.hartid, core.ibase, core.offload_depth, core.lsu_depth, core.line_shift,
                             core.l0_lines, core is dma_core, core.lsu.rid, 0] for core in running], np.int64)
        self.x = np.array([core.x for core in running], np.int64)
        self.x_ready = np.array([core.x_ready for core in running], np.int64)
        self.f = np.array([core.f for core in running], np.float64)
        self.f_ready = np.array([core.f_ready for core in running], np.int64)
        self.body = body = np.zeros((ncores, 16), np.int64)
        self.l0 = l0 = np.zeros((ncores, max(core.l0_lines for core in running) + 1), np.int64)
        self.oq = oq = np.zeros((ncores, max(core.offload_depth for core in running), 2), np.int64)
        self.lq = lq = np.zeros((ncores, max(core.lsu_depth for core in running), 6), np.int64)
        self.lq_fval = lq_fval = np.zeros((ncores, lq.shape[1]), np.float64)
        for c, core in enumerate(running):
            for k, copies in enumerate(core.seq_body):
                body[c, k] = programs.index_of[id(copies[0])]
            l0[c, :len(core.l0)] = list(core.l0)
            for k, (ins, operand) in enumerate(core.queue):
                oq[c, k] = (programs.index_of[id(ins)], operand)
            for k, (addr, kind, reg, value, size, signed) in enumerate(core.lsu.queue):
                lq[c, k] = (addr, kind, reg, value if kind == LSU_STORE else 0, size, signed)
                lq_fval[c, k] = value if kind == LSU_FP_STORE else 0.0
        self.streamers = streamers = [s for core in running for s in core.ssrs]
        self.ss = np.array([_streamer_row(s) for s in streamers], np.int64)
        depth = max(s.depth for s in streamers)
        self.fq_ready = fq_ready = np.zeros((len(streamers), depth), np.int64)
        self.fq_val = fq_val = np.zeros((len(streamers), depth), np.float64)
        self.fq_uses = fq_uses = np.full((len(streamers), depth), -1, np.int64)
        for g, s in enumerate(streamers):
            for k, entry in enumerate(s.fifo):
                fq_ready[g, k], fq_val[g, k] = entry[0], entry[1]
                if len(entry) > 2:
                    fq_uses[g, k] = entry[2]
        self.before = (self.ss.copy(), fq_ready.copy(), fq_val.copy(), fq_uses.copy())
        tcdm, icache, dma = cluster.tcdm, cluster.icache, cluster.dma
        lines = icache.lines
        cap = icache.capacity
        self.ic_line = np.zeros(cap, np.int64)
        self.ic = np.zeros((2, cap), np.int64)
        self.ic_line[:len(lines)] = list(lines)
        self.ic[0, :len(lines)] = list(lines.values())
        self.ic[1, :len(lines)] = np.arange(len(lines))  # least recently used first, as the OrderedDict
        cfg = dma.cfg
        self.g = np.array([cluster.n_halted, len(cluster.waiting), len(cluster.core_list), len(lines), len(lines),
                           icache.n_hits, icache.n_misses, cap, icache.hit_cycles, icache.miss_cycles,
                           icache.line_bytes // 4, tcdm.n_grants, tcdm.n_conflicts, dma.completed, dma.next_id,
                           cfg["src"], cfg["dst"], cfg["sstr"], cfg["dstr"], cfg["reps"], tcdm.base_address,
                           tcdm.base_address + tcdm.size_bytes, tcdm.banks, tcdm.latency_cycles, tcdm.requesters, 0,
                           0, 0, -1, 0], np.int64)
        self.rr = np.array(tcdm.rr, np.int64)
        self.per_bank = np.array(tcdm.conflicts_per_bank, np.int64)
        work = cluster.compiled_work
        if work is None:
            data = tcdm.data
            nreq = 4 * len(cluster.core_list) + cluster.dma_lanes
            work = cluster.compiled_work = (np.frombuffer(data, np.float64), np.frombuffer(data, np.float32),
                                             np.frombuffer(data, np.uint8), np.frombuffer(data, np.int64),
                                             np.zeros((nreq, 4), np.int64), np.full(tcdm.banks, -1, np.int64))
        self.words, self.singles, self.mbytes, self.words_i64, self.reqs, self.owner = work
        self.memory = MEMORY_OUTSIDE  # the loop's memory arguments (compiled_cluster_memory)
        # the loop's arguments (_arrays) per memory it is given (outside, or the one it plays):
        # made at the first batch with each
        self._operands: dict = {}
        self._call: tuple = (None, None, None)  # those of the last batch (run() makes them at the first)
        self._load_dma(dma)
        # (Python's looks between batches read these through memoryviews: an item costs half a numpy scalar's)
        self.table_ints, self.cs_ints, self.g_ints, self.dm_ints = map(memoryview,
                                                                       (programs.table, self.cs, self.g, self.dm))

    # -- the batches ---------------------------------------------------------------------------------
    def can_run(self, cycle: int) -> bool:
        """Whether the cores can run ``cycle`` in the loop (else ``G_EXIT`` says why), the
        state unchanged: the loop's answer at the end of the batch that stopped before
        ``cycle`` (nothing Python does between batches changes what it looked at before it
        asks), else a call of the loop that only checks."""
        g = self.g_ints
        if g[G_CHECKED] == cycle:
            if g[G_CHECKED_EXIT]:
                g[G_EXIT] = g[G_CHECKED_EXIT]
                return False
            return True
        return self.run(cycle, cycle + 1, check_only=True) == 1

    def run(self, start: int, end: int, check_only: bool = False, port_done: bool = False) -> int:
        """Run cycles ``start`` .. ``end`` - 1 in the loop (see _cluster_cycles)."""
        call = self._call
        if call[0] is not self.bursts or call[1] is not self.ww or call[2] is not self.memory:
            call = self._call = self._operands_now()
        entry = call[3]
        if entry is not None:
            return entry(start, end, check_only, port_done, *call[4])
        loop = _compiled_cluster_cycles()
        ran = loop(start, end, check_only, port_done, *call[4])
        self._call = self._operands[id(self.memory)] = (*call[:3], _entry_of(loop, call[4]), call[4])
        return ran

    def _operands_now(self) -> tuple:
        """The loop's arguments for the arrays held now (see :meth:`_arrays`): those kept for
        this memory while no array was replaced since, else made anew."""
        memory = self.memory
        kept = self._operands.get(id(memory))
        if kept is not None and kept[0] is self.bursts and kept[1] is self.ww and kept[2] is memory:
            return kept  # (the loop plays the memory in this batch and not the last, or the other way)
        operands = self._arrays()
        # a transfer's bursts grown past their buffer (or a grown ww) like the arrays they replace:
        # the same entry takes them, without typing the other 40-odd again; a state loaded again
        # finds the entry of its layouts
        alike = kept is not None and kept[2] is memory and argument_layout(kept[0]) == argument_layout(
            self.bursts) and argument_layout(kept[1]) == argument_layout(self.ww)
        entry = kept[3] if alike else _entry_of(_compiled_cluster_cycles(), operands[4])
        operands = self._operands[id(memory)] = (*operands[:3], entry, operands[4])
        return operands

    def _arrays(self) -> tuple:
        """The loop's array arguments, kept between batches (a batch or two per cycle of a busy
        cluster: gathering 40-odd attributes each time costs more than the dispatch), with the
        arrays that may be replaced meanwhile (``bursts`` at a new transfer, ``ww`` when it
        grows, ``memory`` while the loop plays the memory), so :meth:`run` sees a change, and
        the loop's compiled entry for their types once known (:func:`_entry_of`)."""
        return (self.bursts, self.ww, self.memory, None,
                (self.g, self.cs, self.programs.table, self.x, self.x_ready, self.f, self.f_ready, self.body, self.l0,
                 self.oq, self.lq, self.lq_fval, self.ss, self.fq_ready, self.fq_val, self.fq_uses, self.ic,
                 self.ic_line, self.words, self.singles, self.mbytes, self.words_i64, self.rr, self.per_bank,
                 self.reqs, self.owner, self.dm, self.bursts, self.ww, self.lanes, self.rb, self.rbuf, self.submitted,
                 self.pend, self.staged, *self.memory))

    # -- back into the Python objects ------------------------------------------------------------------
    def store(self) -> None:
        """Copy the arrays back into the Python model's objects."""
        cluster, g = self.cluster, self.g
        objects = self.programs.objects
        tcdm, icache, dma = cluster.tcdm, cluster.icache, cluster.dma
        tcdm.rr[:] = self.rr.tolist()
        tcdm.conflicts_per_bank[:] = self.per_bank.tolist()
        tcdm.n_grants, tcdm.n_conflicts = int(g[G_GRANTS]), int(g[G_CONFLICTS])
        if (icache.n_hits, icache.n_misses) != (g[G_IC_HITS], g[G_IC_MISSES]):
            order = np.argsort(self.ic[1, :g[G_IC_N]])
            icache.lines = OrderedDict(zip(self.ic_line[order].tolist(), self.ic[0, order].tolist()))
            icache.n_hits, icache.n_misses = int(g[G_IC_HITS]), int(g[G_IC_MISSES])
        cfg = dma.cfg
        cfg["src"], cfg["dst"], cfg["sstr"], cfg["dstr"], cfg["reps"] = self.g[G_DMA_SRC:G_DMA_REPS + 1].tolist()
        dma.completed = int(g[G_DMA_COMPLETED])
        cluster.n_halted = int(g[G_N_HALTED])
        rows = self.cs.tolist()
        xs, x_readys, fs, f_readys = self.x.tolist(), self.x_ready.tolist(), self.f.tolist(), self.f_ready.tolist()
        ss, fq_ready, fq_val, fq_uses = self.ss, self.fq_ready, self.fq_val, self.fq_uses
        before = self.before
        touched = ((ss != before[0]).any(1) | (fq_ready != before[1]).any(1) | (fq_uses != before[3]).any(1)
                   | (fq_val.view(np.int64) != before[2].view(np.int64)).any(1)).tolist()
        states, ready_at, values, uses = ss.tolist(), fq_ready.tolist(), fq_val.tolist(), fq_uses.tolist()
        depth_cap = fq_ready.shape[1]
        oq, lq, lq_fval, l0, body = self.oq, self.lq, self.lq_fval, self.l0, self.body
        waiting = []
        for c, core in enumerate(self.running):
            row = rows[c]
            was = (core.halted, core.at_barrier)
            (core.ip, core.stall_until, halted, done, core.done_cycle, at_barrier, core.barrier_since, core.cur_line,
             l0n, core.n_instr, core.n_fpu, core.n_flops, core.s_raw, core.s_offload, core.s_lsu, core.s_icache,
             core.s_sync, core.s_stream, core.s_fdep, core.fp_pending_until, ssr_on, seq_on, seq_inner, core.seq_n,
             core.seq_reps, core.seq_it, core.seq_pos, core.seq_smax, core.seq_mask, recorded, q_head, q_count,
             l_head, l_count) = row[:C_CBASE]
            core.halted, core.done, core.at_barrier = bool(halted), bool(done), bool(at_barrier)
            core.ssr_on, core.seq_on, core.seq_inner = bool(ssr_on), bool(seq_on), bool(seq_inner)
            if at_barrier:
                waiting.append(core)
            if was != (core.halted, core.at_barrier):
                core.state_reg.set("halt" if core.halted else ("barrier" if core.at_barrier else "run"))
            core.x[:], core.x_ready[:], core.f[:], core.f_ready[:] = xs[c], x_readys[c], fs[c], f_readys[c]
            core.l0.clear()
            core.l0.extend(l0[c, :l0n].tolist())
            if row[C_SEQ_GEN] or len(core.seq_body) != recorded:
                _restore_sequencer(core, [objects[i] for i in body[c, :recorded].tolist()])
            queue = core.queue
            queue.clear()
            depth = oq.shape[1]
            for k in range(q_count):
                index, operand = oq[c, (q_head + k) % depth].tolist()
                queue.append((objects[index], operand))
            lsu = core.lsu
            lsu.queue.clear()
            depth = lq.shape[1]
            for k in range(l_count):
                slot = (l_head + k) % depth
                addr, kind, reg, value, size, signed = lq[c, slot].tolist()
                lsu.queue.append((addr, kind, reg, float(lq_fval[c, slot]) if kind == LSU_FP_STORE else value, size,
                                  bool(signed)))
            if lsu.queue:
                lsu.addr = lsu.queue[0][0]
            core.parked = False  # the plain issue checks are exact; the core parks again when it stalls
            core.leave_replay_step()
            for k, s in enumerate(core.ssrs):
                g_index = 3 * c + k
                if touched[g_index]:
                    _write_streamer(s, states[g_index], ready_at[g_index], values[g_index], uses[g_index], depth_cap)
            core.streaming = [s for s in core.ssrs if s.active]
        # the cores at the barrier, those that came in the batch among them, in the order they came
        came = [c for c in waiting if c not in cluster.waiting]
        cluster.waiting = sorted([c for c in cluster.waiting if c.at_barrier] + came, key=cluster.arrival_order)
        if any(core.done for core in self.running):
            cluster.running = [c for c in cluster.running if not c.done]
        self._store_dma(dma)
