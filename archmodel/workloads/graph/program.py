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
        """References over every phase and core."""
        return sum(len(r) for phase in self.phases for r in phase)


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
