"""A statistic counting the clock edges a condition held, for models that sleep through them."""

from __future__ import annotations

from archmodel.kernel import Stat


class ConditionCycles(Stat):
    """Counts the edges a condition held (cycles full, cycles stalled), in the owner's clock.

    A sleeping model does not tick, so it cannot count edge by edge. Instead it calls
    ``begin(cycle)`` at the first edge the condition holds and ``end(cycle)`` at the first
    edge it no longer does; the edges in between count, and a condition still holding when
    the statistics are read counts up to and including the current edge.
    """

    kind = "counter"

    def __init__(self, doc: str = ""):
        super().__init__("cycles", doc)

    def reset(self) -> None:
        self.closed = 0
        self.since: int | None = None

    def begin(self, cycle: int) -> None:
        """The condition holds at edge ``cycle`` (no effect if it already held)."""
        if self.since is None:
            self.since = cycle

    def end(self, cycle: int) -> None:
        """The condition no longer holds at edge ``cycle`` (no effect if it did not hold)."""
        if self.since is not None:
            self.closed += cycle - self.since
            self.since = None

    @property
    def active(self) -> bool:
        return self.since is not None

    @property
    def value(self) -> int:
        if self.since is None:
            return self.closed
        return self.closed + self.owner.cycle - self.since + 1

    def summary(self) -> dict:
        return {"value": self.value}
