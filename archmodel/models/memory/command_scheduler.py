"""How :class:`~.controller.DramController` schedules its commands (a mixin of the controller,
which holds the state): each bank's candidate for FR-FCFS, FCFS or capped FR-FCFS (chosen
among by :mod:`.command_choice`, oldest first among the ready), the start of a refresh, and
issuing a command: next-allowed cycles, bank state machines, the data bus, row
hit/miss/conflict statistics, and the command listeners and waveforms."""

from __future__ import annotations

from .bank import ACTIVATING, CLOSED, OPEN, PRECHARGING, REFRESHING
from .commands import ACT, COMMAND_NAMES, PRE, PREA, RD, REF, REFPB, WR, PublishesCommands
from .command_choice import CommandChoice
from .splitting import NEVER

_NEVER = NEVER
_HIT, _MISS, _CONFLICT = 1, 2, 3

class QueuedBurst:
    """One queued burst: where it goes, when it came, how it was served, and the client
    request it is a piece of (None for an attached stream's)."""

    __slots__ = ("seq", "arrival", "bank", "row", "column", "write", "job", "kind", "address", "size")

    def __init__(self, seq, arrival, bank, row, column, write, job, address, size):
        self.seq = seq
        self.arrival = arrival
        self.bank = bank
        self.row = row
        self.column = column
        self.write = write
        self.job = job
        self.kind = 0
        self.address = address
        self.size = size


class CommandScheduler(CommandChoice, PublishesCommands):
    """The controller's candidates and issue, on the shared choice (see the module docstring)."""

    def _refresh_bank(self, b: int) -> None:
        """Recompute bank b's candidate after its queue or state changed: its next command, as
        (bank-level ready cycle, seq, command, bank-group index, rank index, entry). A burst
        whose row was activated for it has its RD or WR as the bank's candidate whatever the
        write mode, so the bank is not precharged before it is served (Ramulator 2's active
        buffer; without it a drain that starts between a read's ACT and its RD closes the row
        again). It competes with the other banks' candidates by age, as every candidate does:
        Ramulator 2 also lets it go first when it ties with an older command, which holds back
        the activates that bound random traffic (DDR4-3200AA random reads lost 2%, where the
        model had agreed with the references within 0.3%). Otherwise the candidate comes from
        the bank's queue of the active mode. It changes only when the bank's queue or state
        does, so it is kept in ``_cands`` and in its bucket."""
        opened = self._opened.get(b)
        if opened is not None:
            self._set_candidate(b, WR if opened.write else RD, opened, opened.seq)
            return
        queue = (self._wq if self._write_mode else self._rq)[b]
        if queue and (self._rows[b] >= 0 or not self._refpb_banks or b not in self._refpb_banks):
            row = self._rows[b]
            entry = queue[0]
            if row < 0:
                k = ACT
            elif entry.row == row:
                k = WR if self._write_mode else RD
            elif self._fcfs:
                k = PRE
            else:
                for e in queue:
                    if e.row == row:
                        break
                else:
                    e = None
                if e is not None and self._hits_run[b] < self._cap:
                    entry, k = e, (WR if self._write_mode else RD)
                else:
                    k = PRE
            self._set_candidate(b, k, entry, entry.seq)
        else:
            self._drop_candidate(b)

    def _start_refresh(self) -> None:
        self._dirty = True
        if self.refresh == "all_bank":
            self._refresh_pending = True
            self._rank_needs_refresh = [True] * self.timing.ranks
        else:
            s = self._next_refresh_set()
            self._refpb_next_set = (s + 1) % self._refpb_sets
            self._refpb_banks = tuple(b for b in range(self._bank_count) if b % self._refpb_sets == s)
            self._rebuild()

    def _next_refresh_set(self) -> int:
        """The bank set a per-bank refresh falling due now takes. round_robin: the next in
        turn. idle_first: among the sets not yet refreshed in this round (a round is
        tREFI/tREFIpb refreshes, one per set, so every bank is still refreshed once per tREFI,
        in an order JEDEC leaves to the controller), the one the fewest queued bursts (read
        and write queues, every rank) target, then the one with the fewest open rows (a row
        left open is one a stream may come back to: refreshing it costs a PRE and, later, an
        ACT), the first from the round-robin turn among equals. A set a stream is using waits
        for later in the round, when its bursts may have gone (DARP, Chang et al., HPCA 2014,
        refreshes idle banks and postpones busy ones). AXPY on one HBM2E pseudo-channel:
        84.4% of the bus in turn, 86.3% by queued bursts alone, 87.2% with the open rows."""
        sets = self._refpb_sets
        s = self._refpb_next_set
        if not self._idle_first:
            return s
        done = self._refpb_done
        if done == (1 << sets) - 1:
            done = 0
        best, fewest = -1, None
        rows = self._rows
        for i in range(sets):
            x = (s + i) % sets
            if (done >> x) & 1:
                continue
            banks = range(x, self._bank_count, sets)
            key = (sum(len(self._rq[b]) + len(self._wq[b]) for b in banks), sum(rows[b] >= 0 for b in banks))
            if best < 0 or key < fewest:
                best, fewest = x, key
                if key == (0, 0):
                    break
        self._refpb_done = done | (1 << best)
        return best

    # -- issuing ------------------------------------------------------------------------
    def _issue(self, c: int) -> None:
        t_ready, _, b, k, entry = self._best
        self._best = None
        self._dirty = True
        nxt = self._nxt
        for i, cycles in self._compiled[k * self._bank_count + b]:
            v = c + cycles
            if nxt[i] < v:
                nxt[i] = v
        timing = self.timing
        traced = self._traced
        if k == RD or k == WR:
            self._column(k, b, c, entry)
        elif k == ACT:
            self.acts.value += 1
            self._bank_opens(c)
            self._rows[b] = entry.row
            self._hits_run[b] = 0
            if not self._per_bank:
                self._opened[b] = entry
            self._window_act(b, c)
            if entry.kind == 0:
                entry.kind = _MISS
            if traced:
                self._bank_state(b, ACTIVATING, c, OPEN, c + timing.tRCD, entry.row)
        elif k == PRE:
            self.pres.value += 1
            self._close(b, c)
            if entry is not None and entry.kind == 0:
                entry.kind = _CONFLICT
            if traced:
                self._bank_state(b, PRECHARGING, c, CLOSED, c + timing.tRP, -1)
        elif k == PREA:
            self.preas.add()
            first = self._bases[b][3] * timing.banks
            for x in range(first, first + timing.banks):
                if self._rows[x] >= 0:
                    self._close(x, c)
                    if traced:
                        self._bank_state(x, PRECHARGING, c, CLOSED, c + timing.tRP, -1)
        elif k == REF:
            self.refs.add()
            rank = self._bases[b][3]
            self._rank_needs_refresh[rank] = False
            if not any(self._rank_needs_refresh):
                self._refresh_pending = False
                self._refresh_due += timing.tREFI
            if traced:
                for x in range(rank * timing.banks, (rank + 1) * timing.banks):
                    self._bank_state(x, REFRESHING, c, CLOSED, c + timing.tRFC, -1)
        elif k == REFPB:
            self.refpbs.add()
            rank = self._bases[b][3]
            if traced:
                for x in self._refpb_banks:
                    if self._rank_of[x] == rank:
                        self._bank_state(x, REFRESHING, c, CLOSED, c + timing.tRFCpb, -1)
            # The set's banks of the other ranks are still due (each rank takes its own REFpb).
            self._refpb_banks = tuple(x for x in self._refpb_banks if self._rank_of[x] != rank)
            if not self._refpb_banks:
                self._refresh_due += timing.tREFIpb
        if self._per_bank:
            self._per_bank_issued(k, b)
        elif k in (PREA, REF, REFPB) or (k == PRE and entry is None and self._refpb_banks):
            self._rebuild()
        elif b in self._cands or k != PRE or entry is not None:
            self._refresh_bank(b)
        if self._cmd_on or self._listeners:
            row = entry.row if entry is not None and k in (ACT, RD, WR) else -1
            column = entry.column if entry is not None and k in (RD, WR) else -1
            self._publish(self._command_fields(c, k, b, row, column))
        if traced:
            self.command.set(COMMAND_NAMES[k])
            self._transitions.append((c + 1, self.command, "idle"))

    def _close(self, b: int, c: int) -> None:
        self._rows[b] = -1
        self._to_close.pop(b, None)
        self._bank_closes(c)

    def _column(self, k: int, b: int, c: int, entry: QueuedBurst) -> None:
        timing = self.timing
        if entry.kind == 0:
            entry.kind = _HIT
        kind = entry.kind
        if kind == _HIT:
            self.row_hits.value += 1
        elif kind == _MISS:
            self.row_misses.value += 1
        else:
            self.row_conflicts.value += 1
        self._hits_run[b] += 1
        self._opened.pop(b, None)
        if self._per_bank:
            self._leave_bank_queue(b, entry, c)
        else:
            self._dequeue(entry, c)
        if k == RD:
            self.rds.value += 1
            self.reads.value += 1
            self.bytes_read.value += entry.size
            done = c + timing.CL + timing.tBL
            self.read_latency.sample(done - entry.arrival)
            if entry.job is not None:
                self._order.piece_done(entry.job, done)
            if self._traced:
                self._data_bus("RD", c + timing.CL, done)
        else:
            self._burst_served(True, entry.address)
            self.wrs.value += 1
            self.writes.value += 1
            self.bytes_written.value += entry.size
            done = c + timing.CWL + timing.tBL
            self.write_latency.sample(done - entry.arrival)
            if self._traced:
                self._data_bus("WR", c + timing.CWL, done)
        if self.page_policy != "open":
            row = self._rows[b]
            if not any(e.row == row for e in self._rq[b]) and not any(e.row == row for e in self._wq[b]):
                self._to_close[b] = c if self.page_policy == "closed" else c + self.adaptive_idle_cycles
            else:
                self._to_close.pop(b, None)

    # -- waveforms ----------------------------------------------------------------------
    def _bank_state(self, b: int, state: str, c: int, then: str, at: int, row: int) -> None:
        self.bank_states[b].set(state)
        self.open_rows[b].set(row)
        if then != state:
            self._transitions.append((at, self.bank_states[b], then if then != OPEN or self._rows[b] >= 0 else CLOSED))

    def _data_bus(self, what: str, start: int, end: int) -> None:
        self._transitions.append((start, self.data_bus, what))
        self._transitions.append((end, self.data_bus, "idle"))

    def _apply_transitions(self, c: int) -> int:
        """Set the waveform registers whose change is due; return the next change's cycle."""
        later = []
        soonest = _NEVER
        for item in self._transitions:
            if item[0] <= c:
                item[1].set(item[2])
            else:
                later.append(item)
                if item[0] < soonest:
                    soonest = item[0]
        self._transitions = later
        return soonest
