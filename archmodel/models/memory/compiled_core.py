"""A compiled scheduling core for :class:`~.controller.DramController` (numba), for long traces.

When the controller runs ahead of simulated time (an attached request stream, no port, no
observer), nothing outside sees its work cycle by cycle, so the work of one tick (the cycles up
to ``lookahead_cycles`` ahead) can run in compiled code. This module holds the same state the
Python path keeps (per-bank open rows, next-allowed cycles per command, the four-activate
windows, refresh, the read and write queues) in numpy arrays and one ``@njit`` function that
does the work of :meth:`DramController._cycle` for the cycles of one tick, with the same
decisions in the same order: FR-FCFS (and FCFS, FR-FCFS with a row-hit cap), open page,
all-bank refresh (or none), write drain between the watermarks, read forwarding from pending
writes. The commands it issues come back as records (cycle, command, bank, row, column) that
the controller hands to its command listeners; counters, latency samples and queue-depth levels
are updated exactly as the Python path updates them. Anything else (closed or adaptive page,
per-bank refresh, ports, waveforms) stays on the Python path.

Used by the controller's ``engine`` parameter. numba is a dependency of archmodel; on a
platform where it cannot be installed, ``auto`` uses the Python path.
"""

from __future__ import annotations

import importlib.util
import itertools

import numpy as np

from archmodel.kernel import ParameterError

from .commands import PREA, REF

_NEVER = 1 << 62

# Scalar state, at these indices of one int64 array.
(SEQ, RQC, WQC, WMODE, DIRTY, HAS_BEST, BEST_T, BEST_SEQ, BEST_B, BEST_K, BEST_E, REF_DUE, REF_PENDING,
 OPEN_BANKS, ACTIVE_SINCE, POS, BUF_LEN, EXHAUSTED, FREE_TOP,
 RL_VALUE, RL_MAX, RL_AREA, RL_SINCE, WL_VALUE, WL_MAX, WL_AREA, WL_SINCE,
 N_CMD, N_RSAMPLE, N_WSAMPLE, OUT_WAKE, OUT_C, OUT_PHASE,
 ACTS, PRES, PREAS, RDS, WRS, REFS, READS, WRITES, BYTES_READ, BYTES_WRITTEN, FORWARDED,
 HITS, MISSES, CONFLICTS, ACTIVE_CYCLES, STATE_SIZE) = range(49)
COUNTER_SLOTS = {"acts": ACTS, "pres": PRES, "preas": PREAS, "rds": RDS, "wrs": WRS, "refs": REFS,
                 "reads": READS, "writes": WRITES, "bytes_read": BYTES_READ, "bytes_written": BYTES_WRITTEN,
                 "forwarded_reads": FORWARDED, "row_hits": HITS, "row_misses": MISSES,
                 "row_conflicts": CONFLICTS, "active_cycles": ACTIVE_CYCLES}
COUNTER_FIRST = ACTS

# Configuration, at these indices of one int64 array.
(C_BANKS, C_BANKS_PER_RANK, C_RANKS, C_CL, C_CWL, C_TBL, C_TREFI, C_FAW, C_HIGH, C_LOW, C_RQ_CAP, C_WQ_CAP,
 C_FCFS, C_CAP, C_BURST, C_FORWARD, C_PHASE, C_PERIOD, C_WATCH_DONE, CONFIG_SIZE) = range(20)

# What one call of the core ended with.
DONE, STOP_NOW, HELD_STOP, HELD_GO, UNDERRUN = range(5)
_MISS_KIND, _HIT_KIND, _CONFLICT_KIND = 2, 1, 3


def available() -> bool:
    """True when numba is installed, so the compiled core can run."""
    return importlib.util.find_spec("numba") is not None


def unsupported_reason(controller) -> str | None:
    """Why the compiled core cannot serve this controller's configuration, or None."""
    if not available():
        return "numba is not installed"
    if controller.page_policy != "open":
        return f"page_policy {controller.page_policy} (the compiled core does open page)"
    if controller.refresh not in ("all_bank", "none"):
        return f"refresh {controller.refresh} (the compiled core does all_bank or none)"
    return None


STREAM_CHUNK = 1 << 15
"""Stream requests decoded into the core's arrays at a time (a test makes it tiny to check
that refilling in the middle of a cycle changes nothing)."""

_KERNEL = None


def kernel():
    """The compiled core (compiled on first use, then loaded from numba's on-disk cache)."""
    global _KERNEL
    if _KERNEL is None:
        from .compiled_core_kernel import run
        _KERNEL = run
    return _KERNEL


class CompiledCore:
    """The controller's scheduling state in arrays, and the driver of the compiled core.

    Built from a controller that has not issued anything yet; from then on it owns the
    controller's queues, bank state and stream, and writes the figures the rest of the
    controller reads (statistics, queue counts, the stream head) back after every call.
    ``chunk`` is how many stream requests are decoded into the arrays at a time.
    """

    def __init__(self, controller, chunk: int | None = None):
        self.dram = d = controller
        t = d.timing
        n = d._bank_count
        self.run = kernel()
        self.chunk = max(1, chunk or STREAM_CHUNK)
        cf = np.zeros(CONFIG_SIZE, dtype=np.int64)
        cf[C_BANKS] = n
        cf[C_BANKS_PER_RANK] = t.banks
        cf[C_RANKS] = t.ranks
        cf[C_CL], cf[C_CWL], cf[C_TBL], cf[C_TREFI] = t.CL, t.CWL, t.tBL, t.tREFI
        cf[C_FAW] = d._faw_cycles
        cf[C_HIGH], cf[C_LOW] = d._high, d._low
        cf[C_RQ_CAP], cf[C_WQ_CAP] = d.read_queue, d.write_queue
        cf[C_FCFS] = d.scheduler == "fcfs"
        cf[C_CAP] = min(d._cap, _NEVER)
        cf[C_BURST] = d.burst_bytes
        cf[C_FORWARD] = d.forward_cycles
        cf[C_PHASE], cf[C_PERIOD] = d._phase, d._period
        cf[C_WATCH_DONE] = bool(d.stop_when_done)
        self.cf = cf
        st = np.zeros(STATE_SIZE, dtype=np.int64)
        st[SEQ] = d._seq
        st[DIRTY] = 1
        st[REF_DUE] = d._refresh_due
        st[FREE_TOP] = d.read_queue + d.write_queue
        self.st = st
        self.nxt = np.array(d._nxt, dtype=np.int64)
        ptr, idx, cyc = [0], [], []
        for updates in d._compiled:
            idx += [i for i, _ in updates]
            cyc += [v for _, v in updates]
            ptr.append(len(idx))
        self.upd = (np.array(ptr, dtype=np.int64), np.array(idx, dtype=np.int64), np.array(cyc, dtype=np.int64))
        self.gbase = np.array([base[1] for base in d._bases], dtype=np.int64)
        self.rbase = np.array([base[2] for base in d._bases], dtype=np.int64)
        self.rank_of = np.array(d._rank_of, dtype=np.int64)
        self.rows = np.full(n, -1, dtype=np.int64)
        self.hits_run = np.zeros(n, dtype=np.int64)
        self.faw = np.array(d._faw, dtype=np.int64).reshape(t.ranks, 4)
        self.needs = np.zeros(t.ranks, dtype=np.int64)
        self.queues = (np.zeros((n, d.read_queue), dtype=np.int64), np.zeros(n, dtype=np.int64),
                       np.zeros((n, d.write_queue), dtype=np.int64), np.zeros(n, dtype=np.int64))
        size = d.read_queue + d.write_queue
        self.entries = tuple(np.zeros(size, dtype=np.int64) for _ in range(6))  # seq arrival row column burst kind
        self.free = np.arange(size, dtype=np.int64)
        self.buffer = tuple(np.zeros(self.chunk, dtype=np.int64) for _ in range(6))  # cycle bank row column burst write
        out = d.lookahead_cycles + 2
        self.cmd_log = np.zeros((out, 5), dtype=np.int64)
        self.rsamples = np.zeros(out + self.chunk, dtype=np.float64)
        self.wsamples = np.zeros(out, dtype=np.float64)
        m = d.address_map
        (self._rs, self._rm), (self._gs, self._gm), (self._bs, self._bm) = m._ra, m._bg, m._ba
        (self._os, self._om), (self._ks, self._km) = m._ro, m._co
        self._groups, self._per_group = t.bankgroups, t.banks_per_group
        self._stream = d._stream
        if d._stream_head is not None:
            self._stream = itertools.chain([d._stream_head], d._stream)
        self.refill()
        self.counters = [(getattr(d, name), slot) for name, slot in COUNTER_SLOTS.items()]

    def refill(self) -> None:
        """Keep the unread stream requests at the front of the buffer and decode more behind them."""
        st = self.st
        if st[EXHAUSTED]:
            return
        pos, length = int(st[POS]), int(st[BUF_LEN])
        left = length - pos
        if left:
            for column in self.buffer:
                column[:left] = column[pos:length]
        want = self.chunk - left
        items = list(itertools.islice(self._stream, want))
        got = len(items)
        if got < want:
            st[EXHAUSTED] = 1
        if got:
            cycles, addresses, writes = zip(*items)
            a = np.array(addresses, dtype=np.int64)
            cycle, bank, row, column, burst, write = self.buffer
            end = left + got
            cycle[left:end] = cycles
            bank[left:end] = ((((a >> self._rs) & self._rm) * self._groups + ((a >> self._gs) & self._gm))
                              * self._per_group + ((a >> self._bs) & self._bm))
            row[left:end] = (a >> self._os) & self._om
            column[left:end] = (a >> self._ks) & self._km
            burst[left:end] = a & self.dram._burst_mask
            write[left:end] = writes
        st[POS] = 0
        st[BUF_LEN] = left + got

    def advance(self, c: int) -> int:
        """Do the work of the tick at cycle c (the controller's run-ahead loop); return the
        cycle to wake at, having set the controller's held edge or stopped the run as the
        Python loop would."""
        d = self.dram
        st = self.st
        horizon = c + d._ahead
        first = c
        phase = 0
        levels = (d.read_queue_depth, d.write_queue_depth)
        st[RL_VALUE:RL_SINCE + 1] = (levels[0].value, levels[0].maximum, levels[0]._area, levels[0]._since)
        st[WL_VALUE:WL_SINCE + 1] = (levels[1].value, levels[1].maximum, levels[1]._area, levels[1]._since)
        st[COUNTER_FIRST:] = 0
        st[N_CMD] = st[N_RSAMPLE] = st[N_WSAMPLE] = 0
        rq_ids, rq_len, wq_ids, wq_len = self.queues
        e_seq, e_arr, e_row, e_col, e_burst, e_kind = self.entries
        s_cycle, s_bank, s_row, s_col, s_burst, s_write = self.buffer
        upd_ptr, upd_idx, upd_cyc = self.upd
        while True:
            if st[BUF_LEN] - st[POS] < 64:
                self.refill()
            status = self.run(st, self.cf, c, first, horizon, phase, self.nxt, upd_ptr, upd_idx, upd_cyc,
                              self.gbase, self.rbase, self.rank_of, self.rows, self.hits_run, self.faw, self.needs,
                              rq_ids, rq_len, wq_ids, wq_len, e_seq, e_arr, e_row, e_col, e_burst, e_kind, self.free,
                              s_cycle, s_bank, s_row, s_col, s_burst, s_write, self.cmd_log, self.rsamples,
                              self.wsamples)
            if status != UNDERRUN:
                break
            self.flush()
            self.refill()
            c = int(st[OUT_C])
            phase = int(st[OUT_PHASE])
        self.flush()
        wake = int(st[OUT_WAKE])
        if status == STOP_NOW:
            d.sim.stop("stream done")
        elif status == HELD_STOP:
            d._held = True
        elif status == HELD_GO:
            d._held = False
        return wake

    def flush(self) -> None:
        """Hand this call's commands, samples and counts to the controller's statistics and listeners."""
        d = self.dram
        st = self.st
        for stat, slot in self.counters:
            if st[slot]:
                stat.value += int(st[slot])
        st[COUNTER_FIRST:] = 0
        for level, base in ((d.read_queue_depth, RL_VALUE), (d.write_queue_depth, WL_VALUE)):
            level.value, level.maximum, level._area, level._since = (int(v) for v in st[base:base + 4])
        if st[N_RSAMPLE]:
            d.read_latency.samples.frombytes(self.rsamples[:st[N_RSAMPLE]].tobytes())
        if st[N_WSAMPLE]:
            d.write_latency.samples.frombytes(self.wsamples[:st[N_WSAMPLE]].tobytes())
        n = int(st[N_CMD])
        if n and d._listeners:
            t = d.timing
            per_rank, per_group = t.banks, t.banks_per_group
            for c, k, b, row, column in self.cmd_log[:n].tolist():
                rank = b // per_rank
                if k == REF or k == PREA:
                    fields = (c, k, rank, -1, -1, -1, row, column)
                else:
                    fields = (c, k, rank, (b // per_group) % t.bankgroups, b % per_group, b, row, column)
                for listener in d._listeners:
                    listener(*fields)
        st[N_CMD] = st[N_RSAMPLE] = st[N_WSAMPLE] = 0
        d._seq = int(st[SEQ])
        d._rq_count = int(st[RQC])
        d._wq_count = int(st[WQC])
        d._open_banks = int(st[OPEN_BANKS])
        d._active_since = int(st[ACTIVE_SINCE])
        d._refresh_due = int(st[REF_DUE])
        d._write_mode = bool(st[WMODE])
        # The controller's own code reads the stream head only as "is there one" (``idle``).
        d._stream_head = None if st[POS] >= st[BUF_LEN] and st[EXHAUSTED] else (0, 0, False)


def core_for(controller):
    """The compiled core for this controller's run from its first tick, or None for the Python
    path (``engine = "auto"`` when the core does not apply; ``"compiled"`` then fails)."""
    d = controller
    core = d._core
    if core is not None:
        if not d._ahead:
            d.fail("engine: the compiled core cannot hand its work back to the Python path once an observer "
                   "watches (attach tracers before the run, or use engine = 'python')")
        return core
    reason = unsupported_reason(d)
    if reason is None and not d._ahead:
        reason = ("a port is connected or an observer watches" if d.lookahead_cycles
                  else "lookahead_cycles is 0")
    if reason is None and d._stream is None:
        reason = "no request stream is attached"
    if reason is None and (d._seq or d._rq_count or d._wq_count):
        reason = "the controller has already served requests on the Python path"
    if reason is None:
        return CompiledCore(d)
    if d.engine == "compiled":
        raise ParameterError(f"{d.path}: engine compiled does not apply: {reason}",
                             hint='engine = "auto" picks the compiled core where it applies, the Python path elsewhere')
    return None
