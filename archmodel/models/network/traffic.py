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

from archmodel.kernel import ArchError

PATTERNS = ("uniform", "transpose", "bitcomp", "bitrev", "shuffle", "tornado", "neighbor", "hotspot")


def _bits(n: int, name: str) -> int:
    bits = n.bit_length() - 1
    if n < 2 or 1 << bits != n:
        raise ArchError(f"traffic '{name}' needs a power-of-two number of terminals, got {n}")
    return bits


def make_pattern(name: str, terminals: int, dims: tuple | None = None,
                 hotspots: tuple = (0,), hotspot_fraction: float = 0.5) -> Callable:
    """The pattern ``name`` as a function ``dest(source, rng)``.

    ``dims`` (the radix of each dimension, when terminals form a k-ary n-cube or mesh, one per
    router) lets transpose, tornado and neighbour work per dimension, as BookSim's do.
    """
    n = terminals
    if name == "uniform":
        return lambda src, rng: rng.randrange(n)
    if name == "bitcomp":
        mask = (1 << _bits(n, name)) - 1
        return lambda src, rng: ~src & mask
    if name == "bitrev":
        bits = _bits(n, name)
        return lambda src, rng: int(format(src, f"0{bits}b")[::-1], 2)
    if name == "shuffle":
        bits = _bits(n, name)
        mask = (1 << bits) - 1
        return lambda src, rng: ((src << 1) & mask) | (src >> (bits - 1))
    if name == "transpose":
        if dims and len(dims) == 2 and dims[0] == dims[1]:
            k = dims[0]
            return lambda src, rng: (src % k) * k + src // k
        bits = _bits(n, name)
        if bits % 2:
            raise ArchError(f"traffic 'transpose' needs an even number of address bits, got {n} terminals")
        half = bits // 2
        mask = (1 << bits) - 1
        return lambda src, rng: ((src >> half) | (src << half)) & mask
    if name in ("tornado", "neighbor"):
        radices = dims if dims else (n,)

        def per_dimension(src, rng, radices=radices, tornado=name == "tornado"):
            dest, scale = 0, 1
            for k in radices:
                digit = (src // scale) % k
                shift = (math.ceil(k / 2) - 1) if tornado else 1
                dest += ((digit + shift) % k) * scale
                scale *= k
            return dest
        return per_dimension
    if name == "hotspot":
        spots = tuple(hotspots)
        if not spots or not all(0 <= h < n for h in spots):
            raise ArchError(f"hotspots must be terminals 0 .. {n - 1}, got {spots}")

        def hotspot(src, rng):
            if rng.random() < hotspot_fraction:
                return spots[rng.randrange(len(spots))]
            return rng.randrange(n)
        return hotspot
    raise ArchError(f"unknown traffic pattern '{name}'", hint="patterns: " + ", ".join(PATTERNS))


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
        self.on = None

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


def make_process(name: str, p: float, alpha: float = 0.1, beta: float = 0.1):
    """The injection process ``name`` (``bernoulli`` or ``onoff``) at ``p`` packets/cycle."""
    if name == "bernoulli":
        return BernoulliProcess(p)
    if name == "onoff":
        return OnOffProcess(p, alpha, beta)
    raise ArchError(f"unknown injection process '{name}'", hint="bernoulli or onoff")
