"""The tag store of a set-associative cache: which lines it holds, which are dirty, which
wait for their fill, and the replacement policy that picks a victim.

It has no notion of time and holds no data: :class:`~.cache.Cache` keeps the line bytes and
the MSHRs around it, and benchmarks and cross-checks (pycachesim) drive it alone on a
reference stream. Addresses are line numbers (byte address // line size); a line lives in
set ``line % sets``.

Policies:

* ``lru``: the least recently used line of the set is the victim (a hit or fill makes a line
  the most recent).
* ``srrip``: static re-reference interval prediction (Jaleel, Theobald, Steely, Emer,
  "High Performance Cache Replacement Using Re-Reference Interval Prediction", ISCA 2010)
  with 2-bit RRPVs: a fill predicts a long interval (RRPV 2), a hit a near one (RRPV 0, the
  paper's hit-priority form); the victim is the first way with RRPV 3, ageing every way of
  the set by one until there is one.
* ``random``: a way drawn uniformly from the cache's own random stream.

Every policy fills an invalid way first (the lowest one).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from archmodel.kernel import Registry

POLICIES: Registry[str] = Registry("replacement policy", {
    "lru": "evict the least recently used line of the set",
    "srrip": "static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit RRPVs, "
             "lines inserted at a long re-reference interval",
    "random": "evict a way drawn from the cache's own random stream",
})
"""The replacement policies a cache offers (the ``Cache.policy`` vocabulary)."""

RRPV_BITS = 2
RRPV_MAX = (1 << RRPV_BITS) - 1
RRPV_INSERT = RRPV_MAX - 1


class CacheArray:
    """The tags of ``sets`` x ``ways`` lines under ``policy``.

    ``write_hits_touch`` false leaves the replacement state alone on a write hit (a store
    only marks the line dirty), as pycachesim does; real LRU caches count a write as a use.

    :meth:`contains` finds a line; :meth:`touch` records a hit; :meth:`victim` names the line a
    fill of a set would evict (None while a way is free); :meth:`install` puts a line in
    (after :meth:`evict` made room). :meth:`access` does all of that for one reference, as
    an untimed cache does, and is what the cross-checks drive.
    """

    def __init__(self, sets: int, ways: int, policy: str = "lru", rng: np.random.Generator | None = None,
                 write_hits_touch: bool = True):
        if sets < 1 or ways < 1:
            raise ValueError(f"a cache needs at least one set and one way, got {sets} sets of {ways} ways")
        if policy not in POLICIES:
            raise ValueError(f"unknown replacement policy '{policy}': {POLICIES.hint(policy)}")
        self.sets = sets
        self.ways = ways
        self.policy = policy
        self.write_hits_touch = write_hits_touch
        self.rng = rng if rng is not None else np.random.default_rng(0)
        # Per set: line -> way, in recency order for LRU (least recent first). An OrderedDict
        # keeps both the lookup and the LRU order in C.
        self.resident: list[OrderedDict] = [OrderedDict() for _ in range(sets)]
        self.dirty: set[int] = set()
        self.pending: set[int] = set()  # lines allocated whose fill has not arrived
        if policy == "srrip":
            self.rrpv = [[RRPV_MAX] * ways for _ in range(sets)]
        self.line_of_way = [[-1] * ways for _ in range(sets)]

    @property
    def lines(self) -> int:
        """Lines the cache holds when full."""
        return self.sets * self.ways

    def contains(self, line: int) -> bool:
        """Whether ``line`` has a way (valid or waiting for its fill)."""
        return line in self.resident[line % self.sets]

    def touch(self, line: int) -> None:
        """A hit on ``line`` (which must be resident): update the policy's state."""
        s = line % self.sets
        if self.policy == "lru":
            self.resident[s].move_to_end(line)
        elif self.policy == "srrip":
            self.rrpv[s][self.resident[s][line]] = 0

    def victim(self, line: int) -> int | None:
        """The line a fill of ``line``'s set would evict now, or None while a way is free.
        SRRIP ages the set to find it (its state changes, as the hardware's does on a miss)."""
        s = line % self.sets
        held = self.resident[s]
        if len(held) < self.ways:
            return None
        if self.policy == "lru":
            return next(iter(held))
        if self.policy == "srrip":
            rrpv = self.rrpv[s]
            while True:
                for way in range(self.ways):
                    if rrpv[way] == RRPV_MAX:
                        return self.line_of_way[s][way]
                for way in range(self.ways):
                    rrpv[way] += 1
        return self.line_of_way[s][int(self.rng.integers(self.ways))]

    def evict(self, line: int) -> bool:
        """Remove ``line``; returns whether it was dirty (its bytes must go to memory)."""
        s = line % self.sets
        way = self.resident[s].pop(line)
        self.line_of_way[s][way] = -1
        if line in self.dirty:
            self.dirty.discard(line)
            return True
        return False

    def install(self, line: int, dirty: bool = False, pending: bool = False) -> None:
        """Put ``line`` in a free way of its set (the lowest), as the most recently used."""
        s = line % self.sets
        ways = self.line_of_way[s]
        way = ways.index(-1)
        ways[way] = line
        self.resident[s][line] = way
        if self.policy == "srrip":
            self.rrpv[s][way] = RRPV_INSERT
        if dirty:
            self.dirty.add(line)
        if pending:
            self.pending.add(line)

    def access(self, line: int, write: bool = False) -> tuple[bool, int | None, bool]:
        """One reference, untimed: (hit, evicted line or None, whether it was dirty). A write
        marks the line dirty (write-back, write-allocate)."""
        if line in self.resident[line % self.sets]:
            if self.write_hits_touch or not write:
                self.touch(line)
            if write:
                self.dirty.add(line)
            return True, None, False
        victim = self.victim(line)
        dirty = self.evict(victim) if victim is not None else False
        self.install(line, dirty=write)
        return False, victim, dirty

    def resident_lines(self) -> list[int]:
        """Every line held, set by set."""
        return [line for held in self.resident for line in held]


class MissClassifier:
    """Hill's three Cs for the misses of a cache of ``lines`` lines: compulsory (the line was
    never referenced before), capacity (a fully associative LRU cache of the same size would
    miss too), conflict (it would hit). Feed it every reference with :meth:`classify`."""

    def __init__(self, lines: int):
        self.capacity = lines
        self.seen: set[int] = set()
        self.fully_associative: OrderedDict = OrderedDict()

    def reference(self, line: int) -> bool:
        """Record a reference in the fully associative shadow; returns whether it hit there."""
        shadow = self.fully_associative
        if line in shadow:
            shadow.move_to_end(line)
            return True
        if len(shadow) >= self.capacity:
            shadow.popitem(last=False)
        shadow[line] = None
        return False

    def classify(self, line: int, hit: bool) -> str | None:
        """The kind of miss of a reference to ``line`` (None for a hit), after recording it."""
        first = line not in self.seen
        if first:
            self.seen.add(line)
        shadow_hit = self.reference(line)
        if hit:
            return None
        if first:
            return "compulsory"
        return "conflict" if shadow_hit else "capacity"
