"""A die-to-die link: lanes, SerDes latency, optional link-level retry."""

from __future__ import annotations

import math
import random
from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, in_range, model


@model
class DieToDieLink(Component):
    """One direction of a die-to-die (chiplet) link carrying network link words, e.g. between
    two routers on different dies (UCIe/AIB-style parallel lanes).

    A flit of ``flit_bits`` is serialised over ``lanes`` lanes of ``lane_bits`` bits per cycle
    (``ceil(flit_bits / (lanes * lane_bits))`` cycles), then spends ``serdes_cycles`` in the
    transmit and receive SerDes and the channel. Returned credits ride along without
    serialisation cost. With ``error_rate`` (bit error ratio) above zero each flit is corrupted
    with probability ``1 - (1 - error_rate) ** flit_bits``; the receiver NACKs it and the sender
    replays it and everything after it (go-back-N) ``retry_cycles`` later, so order is kept.
    The link always accepts what its sender offers (the routers' credits bound it); put its
    latency into the credit round trip when sizing buffers. Leaves out: lane failure and
    repair, FEC, power.
    """

    lanes = Param(int, 16, "data lanes", check=at_least(1))
    lane_bits = Param(int, 2, "bits per lane per cycle (e.g. 2 for 2 Gb/s lanes at 1 GHz)", check=at_least(1))
    flit_bits = Param(int, 128, "bits per flit", unit="bits", check=at_least(1))
    serdes_cycles = Param(int, 4, "SerDes and channel latency", unit="cycles", check=at_least(1))
    error_rate = Param(float, 0.0, "bit error ratio", check=in_range(0.0, 1.0))
    retry_cycles = Param(int, 8, "replay delay after an error (NACK round trip)", unit="cycles", check=at_least(1))
    inp = In("link words from the sending router")
    out = Out("link words to the receiving router")
    flits = Counter("flits", "flits carried")
    retries = Counter("flits", "flits replayed after an error")
    busy_cycles = Counter("cycles", "cycles spent serialising flits")

    def setup(self) -> None:
        self.beats = math.ceil(self.flit_bits / (self.lanes * self.lane_bits))
        self.fail_p = 1.0 - (1.0 - self.error_rate) ** self.flit_bits
        self.wire: deque = deque()  # (deliver_ps, word)
        self.free_ps = 0

    def start(self) -> None:
        self.period = self.domain.period_ps
        self.random = random.Random(int(self.rng.integers(1 << 62)))

    def tick(self) -> None:
        now = self.sim.now
        if self.inp.valid:
            word = self.inp.recv()
            flit, _ = word
            leave = max(now, self.free_ps)
            if flit is not None:
                cost = self.beats
                while self.fail_p and self.random.random() < self.fail_p:
                    self.retries.value += 1
                    cost += self.beats + self.retry_cycles
                self.flits.value += 1
                self.busy_cycles.value += cost
                self.free_ps = leave + cost * self.period
                leave = self.free_ps - self.period
            self.wire.append((leave + self.serdes_cycles * self.period, word))
        if self.wire and self.wire[0][0] <= now:
            self.out.send(self.wire.popleft()[1])
        if self.wire:
            self.sleep()
            self.wake_at(max(self.wire[0][0], now + self.period))
        else:
            self.sleep()
