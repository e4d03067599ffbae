"""What an algorithm hands to the cores: the phases of references (per core, with a barrier
between phases), the answer it computed, and which array holds that answer at the end.

Compute cycles between references (the ``gap`` of :class:`~.image.Ref`) model the
instructions of the loop bodies of a compiled graph kernel at about one per cycle: loop
control, the comparison or arithmetic on the loaded value. They are the same for the
baseline and the Cagra variants, so only the memory references differ between them.
"""

from __future__ import annotations

import attrs
import numpy as np

from archmodel.models.compute import References

EDGE_CYCLES = 2
"""Cycles of loop control and arithmetic per edge (increment, compare, the add or min)."""
VERTEX_CYCLES = 3
"""Cycles per vertex outside the edge loop (bounds, the final arithmetic, the loop branch)."""


@attrs.define
class Program:
    """``phases[k][c]``: the references core c makes in phase k (all cores finish a phase
    before any starts the next). ``answer`` is the result in the graph's own vertex ids;
    ``output`` names the region holding ``output_values`` when the run ends."""

    name: str
    phases: list
    answer: np.ndarray
    output: str
    output_values: np.ndarray
    iterations: int = 1

    @property
    def references(self) -> int:
        """References over every phase and core (of streamed phases: those made so far by
        feeding cores, else all of them, made again to count)."""
        if isinstance(self.phases, Phases) and self.phases.made:
            return self.phases.references
        return sum(len(r) for phase in self.phases for r in phase)


class Phases:
    """Phases made one at a time, for runs too long to hold every reference at once: ``make``
    is a generator function yielding each phase (a list of References, one per core) in
    order. Iterating makes them afresh; :meth:`feeds` hands each core its part of each phase
    as it reaches it, making a phase once for all cores and dropping it when every core
    took it (cores meet at a barrier between phases, so they move through them together)."""

    def __init__(self, count: int, make):
        self.count = count
        self.make = make
        self.references = 0  # made so far by the feeds
        self.made = 0  # phases made so far by the feeds

    def __len__(self) -> int:
        return self.count

    def __iter__(self):
        return iter(self.make())

    def feeds(self, cores: int) -> list:
        """One iterator per core over its part of each phase."""
        source = iter(self.make())
        current: dict = {}  # phase index -> [its parts, cores yet to take it]

        def feed(c: int):
            for k in range(self.count):
                if k not in current:
                    phase = next(source)
                    current[k] = [phase, cores]
                    self.made += 1
                    self.references += sum(len(r) for r in phase)
                entry = current[k]
                part = entry[0][c]
                entry[1] -= 1
                if not entry[1]:
                    del current[k]
                yield part
        return [feed(c) for c in range(cores)]


def feeds(phases, cores: int) -> list:
    """One iterator per core over its part of each phase, of a list or of :class:`Phases`."""
    if isinstance(phases, Phases):
        return phases.feeds(cores)
    return [iter([phase[c] for phase in phases]) for c in range(cores)]


def empty() -> References:
    """A phase in which a core has nothing to do."""
    z = np.zeros(0, dtype=np.int64)
    return References(z, z, z.astype(bool), z, z, z.astype(np.uint64))


def split_by_cost(cost: np.ndarray, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous ranges of indices with about equal total ``cost`` (vertex plus
    edge work), as a static parallel-for schedule splits a loop."""
    n = len(cost)
    if parts <= 1 or n == 0:
        return [(0, n)] + [(n, n)] * (parts - 1)
    total = np.cumsum(cost)
    cuts = np.searchsorted(total, total[-1] * np.arange(1, parts) / parts, side="left") + 1
    cuts = np.minimum(np.maximum.accumulate(cuts), n)
    bounds = [0, *cuts.tolist(), n]
    return [(bounds[i], bounds[i + 1]) for i in range(parts)]
