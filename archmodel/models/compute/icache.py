"""The cluster's shared instruction cache."""

from __future__ import annotations

from collections import OrderedDict

from archmodel.kernel import Component, Formula, Param, at_least, model


@model
class SnitchICache(Component):
    """The instruction cache shared by the cores of a Snitch cluster (8 KiB in Manticore).

    Fully associative with LRU replacement over ``size_bytes / line_bytes`` lines. A core
    asks for a line when its own L0 buffer misses: a hit costs ``hit_cycles``, a miss
    ``miss_cycles`` (the refill from outside, not modelled as traffic); a core asking for a
    line another core is already refilling waits for that refill only. Programs live in
    their own instruction address space, so fetches never contend with data.

    The line size and latencies are assumptions (the Manticore papers give the capacity
    only). Leaves out: set conflicts, refill bandwidth, prefetching.
    """

    size_bytes = Param(int, 8 * 1024, "capacity", unit="bytes", check=at_least(4))
    line_bytes = Param(int, 32, "bytes per line (a power of two)", unit="bytes", check=at_least(4))
    hit_cycles = Param(int, 1, "extra cycles of an L0 miss that hits", unit="cycles", check=at_least(0))
    miss_cycles = Param(int, 20, "extra cycles of a miss", unit="cycles", check=at_least(0))

    hits = Formula("fetches", "line fetches that hit", lambda c: c.n_hits)
    misses = Formula("fetches", "line fetches that missed", lambda c: c.n_misses)

    def setup(self) -> None:
        self.lines: OrderedDict = OrderedDict()  # line address -> cycle its refill completes
        self.capacity = max(1, self.size_bytes // self.line_bytes)
        self.n_hits = self.n_misses = 0

    def invalidate(self) -> None:
        """Drop every line (new programs replace the old at the same instruction addresses)."""
        self.lines.clear()

    def fetch(self, word_address: int, cycle: int) -> int:
        """Extra cycles a core waits for the line holding instruction word ``word_address``."""
        line = word_address // (self.line_bytes // 4)
        ready = self.lines.get(line)
        if ready is not None:
            self.lines.move_to_end(line)
            self.n_hits += 1
            return max(self.hit_cycles, ready - cycle)
        self.n_misses += 1
        self.lines[line] = cycle + self.miss_cycles
        if len(self.lines) > self.capacity:
            self.lines.popitem(last=False)
        return self.miss_cycles
