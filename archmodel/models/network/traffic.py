"""Synthetic traffic: destination patterns and injection processes, as BookSim 2 defines them.

A pattern maps a source terminal to a destination terminal (drawing from ``rng``, a
``random.Random``, where it is random). Terminals are numbered as the topology's
:class:`~archmodel.models.network.routing.PortMap` numbers them; on a k x k mesh with one
terminal per router, terminal ``y * k + x`` sits at (x, y). Bit patterns need a power-of-two
terminal count. Injection processes give the gap in cycles to the next packet.
"""

from __future__ import annotations

import math
from typing import Callable

from archmodel.kernel import ArchError, Registry

PatternBuilder = Callable[..., Callable]
"""What a pattern's entry in :data:`TRAFFIC_PATTERNS` is: ``(terminals, dims, hotspots,
hotspot_fraction) -> dest(source, rng)``."""

TRAFFIC_PATTERNS: Registry[PatternBuilder] = Registry("traffic pattern")
"""The synthetic destination patterns, by name, each a :data:`PatternBuilder`; a Noc's or a
network interface's ``traffic`` parameter takes these names (and ``none``)."""


def _bits(n: int, name: str) -> int:
    bits = n.bit_length() - 1
    if n < 2 or 1 << bits != n:
        raise ArchError(f"traffic '{name}' needs a power-of-two number of terminals, got {n}")
    return bits


@TRAFFIC_PATTERNS.register("uniform")
def _uniform(n: int, dims, hotspots, fraction) -> Callable:
    return lambda src, rng: rng.randrange(n)


@TRAFFIC_PATTERNS.register("transpose")
def _transpose(n: int, dims, hotspots, fraction) -> Callable:
    if dims and len(dims) == 2 and dims[0] == dims[1]:
        k = dims[0]
        return lambda src, rng: (src % k) * k + src // k
    bits = _bits(n, "transpose")
    if bits % 2:
        raise ArchError(f"traffic 'transpose' needs an even number of address bits, got {n} terminals")
    half = bits // 2
    mask = (1 << bits) - 1
    return lambda src, rng: ((src >> half) | (src << half)) & mask


@TRAFFIC_PATTERNS.register("bitcomp")
def _bitcomp(n: int, dims, hotspots, fraction) -> Callable:
    mask = (1 << _bits(n, "bitcomp")) - 1
    return lambda src, rng: ~src & mask


@TRAFFIC_PATTERNS.register("bitrev")
def _bitrev(n: int, dims, hotspots, fraction) -> Callable:
    bits = _bits(n, "bitrev")
    return lambda src, rng: int(format(src, f"0{bits}b")[::-1], 2)


@TRAFFIC_PATTERNS.register("shuffle")
def _shuffle(n: int, dims, hotspots, fraction) -> Callable:
    bits = _bits(n, "shuffle")
    mask = (1 << bits) - 1
    return lambda src, rng: ((src << 1) & mask) | (src >> (bits - 1))


def _per_dimension(n: int, dims, tornado: bool) -> Callable:
    """Tornado (half way round less one) or neighbour (one on) in every dimension."""
    radices = dims if dims else (n,)

    def per_dimension(src, rng):
        dest, scale = 0, 1
        for k in radices:
            digit = (src // scale) % k
            shift = (math.ceil(k / 2) - 1) if tornado else 1
            dest += ((digit + shift) % k) * scale
            scale *= k
        return dest
    return per_dimension


TRAFFIC_PATTERNS.add("tornado", lambda n, dims, hotspots, fraction: _per_dimension(n, dims, True))
TRAFFIC_PATTERNS.add("neighbor", lambda n, dims, hotspots, fraction: _per_dimension(n, dims, False))


@TRAFFIC_PATTERNS.register("hotspot")
def _hotspot(n: int, dims, hotspots, fraction) -> Callable:
    spots = tuple(hotspots)
    if not spots or not all(0 <= h < n for h in spots):
        raise ArchError(f"hotspots must be terminals 0 .. {n - 1}, got {spots}")

    def hotspot(src, rng):
        if rng.random() < fraction:
            return spots[rng.randrange(len(spots))]
        return rng.randrange(n)
    return hotspot


PATTERNS = tuple(TRAFFIC_PATTERNS)
"""The names of the built-in patterns, in registration order."""


def make_pattern(name: str, terminals: int, dims: tuple | None = None,
                 hotspots: tuple = (0,), hotspot_fraction: float = 0.5) -> Callable:
    """The pattern ``name`` (see :data:`TRAFFIC_PATTERNS`) as a function ``dest(source, rng)``.

    ``dims`` (the radix of each dimension, when terminals form a k-ary n-cube or mesh, one per
    router) lets transpose, tornado and neighbour work per dimension, as BookSim's do.
    """
    return TRAFFIC_PATTERNS.lookup(name)(terminals, dims, hotspots, hotspot_fraction)


def geometric(rng, p: float) -> int:
    """Cycles until the first success of a Bernoulli(p) trial per cycle (>= 1)."""
    if p >= 1.0:
        return 1
    u = rng.random()
    return int(math.log(1.0 - u) / math.log(1.0 - p)) + 1


class BernoulliProcess:
    """A packet each cycle with probability ``p``: gaps are geometric."""

    def __init__(self, p: float):
        self.p = p

    def gap(self, rng) -> int:
        return geometric(rng, self.p)


class OnOffProcess:
    """Bursty injection (BookSim's on/off): a two-state Markov chain per cycle, off -> on with
    probability ``alpha``, on -> off with ``beta``; while on, a packet with probability
    ``p * (alpha + beta) / alpha``, so the long-run rate is ``p``."""

    def __init__(self, p: float, alpha: float, beta: float):
        if not (0 < alpha <= 1 and 0 < beta <= 1):
            raise ArchError(f"on/off injection needs 0 < alpha, beta <= 1, got {alpha}, {beta}")
        self.on_rate = p * (alpha + beta) / alpha
        if self.on_rate > 1:
            raise ArchError(f"on/off injection: rate {p} needs {self.on_rate:.3g} packets per on-cycle; "
                            "raise alpha or lower beta")
        self.alpha, self.beta = alpha, beta
        self.on: bool | None = None  # drawn at the first gap

    def gap(self, rng) -> int:
        if self.on is None:  # start in the stationary distribution
            self.on = rng.random() < self.alpha / (self.alpha + self.beta)
        cycles = 0
        while True:
            cycles += 1
            if self.on:
                if rng.random() < self.beta:
                    self.on = False
            elif rng.random() < self.alpha:
                self.on = True
            if self.on and rng.random() < self.on_rate:
                return cycles


INJECTION_PROCESSES: Registry[Callable] = Registry("injection process", {
    "bernoulli": lambda p, alpha, beta: BernoulliProcess(p),
    "onoff": OnOffProcess,
})
"""The injection processes, by name, each ``(p, alpha, beta) -> process`` (``alpha`` and
``beta`` the on/off chain's, unused by ``bernoulli``); a Noc's or a network interface's
``injection`` parameter takes these names."""


def make_process(name: str, p: float, alpha: float = 0.1, beta: float = 0.1):
    """The injection process ``name`` (see :data:`INJECTION_PROCESSES`) at ``p`` packets/cycle."""
    return INJECTION_PROCESSES.lookup(name)(p, alpha, beta)
