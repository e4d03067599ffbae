"""The tag store and replacement of an in-DRAM cache (a mixin of
:class:`~.indram_cache.InDramCacheController`, which holds the state): which cache row
serves a request, when a unit has missed often enough to be cached, and the relocations
that cache it and write a dirty victim back, stepped one command at a time (FIGCache's
benefit-based replacement over a fully associative tag store per bank, LISA-VILLA's rows
per subarray group)."""

from __future__ import annotations

from .commands import ACT, PRE, RELOC


class Op:
    """A relocation in one bank: ACT src, ACT dst, RELOC x count, PRE."""

    __slots__ = ("src", "dst", "count", "step", "done", "entry")

    def __init__(self, src, dst, count, entry):
        self.src, self.dst, self.count, self.entry = src, dst, count, entry
        self.step = 0
        self.done = 0


class Req:
    """One queued request: ``seq`` orders requests by arrival, ``index`` is its place in its
    core's stream; a burst of a request from ``req`` has core None and its job as index."""

    __slots__ = ("core", "index", "seq", "bank", "row", "column", "write", "arrival", "opened")

    def __init__(self, core, index, seq, bank, row, column, write, arrival):
        self.core, self.index, self.seq = core, index, seq
        self.opened = False  # a PRE or ACT was issued for it (not a row hit)
        self.bank, self.row, self.column, self.write, self.arrival = bank, row, column, write, arrival


class SegmentCache:
    """The cache's tags, insertion and replacement (see the module docstring)."""

    def _lookup(self, req: Req):
        """(row, column) that serves req now: its cache row if its unit is cached."""
        tag = (req.row, req.column // self._unit)
        slot = self._tags[req.bank].get(tag)
        if slot is None:
            return req.row, req.column, None
        if self.cache == "lisa_villa":
            return self.layout.rows + slot, req.column, slot
        row = self.layout.rows + slot // self._segs
        return row, (slot % self._segs) * self.segment_bursts + req.column % self.segment_bursts, slot

    def _villa_slot_range(self, row):
        per = self.cache_rows_per_bank // self.layout.groups
        g = self.layout.group_of(row)
        return range(g * per, (g + 1) * per)

    def _insert(self, b: int, req: Req) -> None:
        """Plan the relocation that caches req's unit (and the write-back of a dirty victim)."""
        tag = (req.row, req.column // self._unit)
        if tag in self._pending_tags[b]:
            return
        states = self._slot_state[b]
        if self.cache == "lisa_villa":
            candidates = [s for s in self._villa_slot_range(req.row)]
            free = [s for s in candidates if states[s] is None]
        else:
            candidates = range(self._slots)
            free = self._free[b][-1:]
        if free:
            slot = free[0]
            if self.cache != "lisa_villa":
                self._free[b].pop()
        else:
            slot = min((s for s in candidates if states[s] is not None and states[s][0] not in self._pending_tags[b]),
                       key=lambda s: states[s][1], default=None)
            if slot is None:
                return
            victim = states[slot]
            del self._tags[b][victim[0]]
            if victim[2]:
                self.writebacks.add()
                cache_row = self._slot_row(slot)
                self._ops[b].append(Op(cache_row, victim[0][0], self._unit, None))
            states[slot] = None
        self._pending_tags[b].add(tag)
        self._ops[b].append(Op(req.row, self._slot_row(slot), self._unit, (tag, slot)))
        self._inserts[b] += 1
        if self._inserts[b] % self.aging_inserts == 0:
            for s in states:
                if s is not None:
                    s[1] >>= 1

    def _slot_row(self, slot: int) -> int:
        return self.layout.rows + (slot if self.cache == "lisa_villa" else slot // self._segs)

    def _hot(self, b: int, req: Req) -> bool:
        """Count a miss to req's unit; True once the unit has missed ``insert_threshold`` times
        (the counts halve every ``aging_inserts`` misses of the bank, so only recent reuse counts)."""
        if self._threshold == 1:
            return True
        counts = self._miss_counts[b]
        tag = (req.row, req.column // self._unit)
        seen = counts.get(tag, 0) + 1
        self._misses_since_aging[b] += 1
        if self._misses_since_aging[b] >= self.aging_inserts:
            self._misses_since_aging[b] = 0
            self._miss_counts[b] = {k: v >> 1 for k, v in counts.items() if v > 1}
            counts = self._miss_counts[b]
        if seen >= self._threshold:
            counts.pop(tag, None)
            return True
        counts[tag] = seen
        return False

    def _bank_held(self, b: int) -> bool:
        """A relocation under way holds its bank: a refresh does not precharge it."""
        return bool(self._ops[b])

    def _op_ready_at(self, b: int) -> int:
        """The cycle the next command of bank b's head relocation may issue."""
        op = self._ops[b][0]
        opened = self._open[b]
        if op.step == 0:
            if opened and opened[0] != op.src:
                return self._bank_ready(b, PRE)
            return self._bank_ready(b, ACT)
        return self._bank_ready(b, (ACT, ACT, RELOC, PRE)[op.step])

    def _step_op(self, c: int, b: int) -> bool:
        """Advance the head relocation of bank b by one command if it can issue now."""
        op = self._ops[b][0]
        opened = self._open[b]
        if op.step == 0:
            if opened and opened[0] != op.src:
                if self._bank_ready(b, PRE) <= c:
                    self._issue(c, PRE, b, extra=True)
                    return True
                return False
            if not opened:
                if self._bank_ready(b, ACT) <= c:
                    self._issue(c, ACT, b, op.src, extra=True)
                    op.step = 1
                    return True
                return False
            op.step = 1
        if op.step == 1:
            if self._bank_ready(b, ACT) <= c:
                self._issue(c, ACT, b, op.dst, extra=True)
                op.step = 2
                return True
            return False
        if op.step == 2:
            if self._bank_ready(b, RELOC) <= c:
                whole = self.cache == "lisa_villa"
                self._issue(c, RELOC, b, op.dst, -1 if whole else op.done, extra=True)
                op.done += self._unit if whole else 1
                if op.done >= op.count:
                    op.step = 3
                return True
            return False
        if self._bank_ready(b, PRE) <= c:
            self._issue(c, PRE, b, extra=True)
            self._ops[b].pop(0)
            self.relocations.add()
            if op.entry is not None:
                tag, slot = op.entry
                self._pending_tags[b].discard(tag)
                self._tags[b][tag] = slot
                self._slot_state[b][slot] = [tag, 0, False]
            return True
        return False
