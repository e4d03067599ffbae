"""A traffic sink: takes messages, records them, and can apply backpressure."""

from __future__ import annotations

import attrs

from archmodel.kernel import (Component, Counter, Distribution, Formula, In, Param, ParameterError,
                              at_least, in_range, model)


@attrs.frozen
class Arrival:
    """One message taken by a Sink: the edge index, the time in ps, and the message."""

    cycle: int
    time_ps: int
    message: object


@model
class Sink(Component):
    """Takes messages, records their arrival, measures latency and bandwidth, and can stall.

    It takes at most one message per edge and may refuse some edges to create backpressure.

    The sink is not ready at the edges listed in ``stall_cycles`` and, at any other edge,
    with probability ``stall_probability`` drawn from its own random stream (drawn only at
    edges where a message waits). ``latency`` samples ``now - created_ps`` **in ps** for
    every message with a ``created_ps`` field (ps, not cycles, so it stays exact across clock
    domains); ``bandwidth`` uses ``size_bits`` of the messages that have one. With
    ``stop_after`` set, the sink ends the run (``sim.stop()``) when that many messages have
    arrived. ``arrivals`` keeps an :class:`Arrival` per message (``record=False`` keeps
    only the statistics).

    Leaves out: checking the messages; compare ``arrivals`` or ``payloads`` in the test.
    """

    stall_probability = Param(float, 0.0, "chance of not being ready at an edge with a message waiting",
                              check=in_range(0.0, 1.0))
    stall_cycles = Param((list, tuple, range, set, frozenset), None, "edges at which the sink is not ready")
    stop_after = Param(int, None, "stop the simulation after this many messages", unit="messages",
                       check=at_least(1))
    record = Param(bool, True, "keep every arrival in the arrivals list")
    inp = In("messages to take")
    received = Counter("messages", "messages taken")
    received_bits = Counter("bits", "size_bits of the messages taken")
    latency = Distribution("ps", "time from a message's created_ps to its arrival here")
    bandwidth = Formula("GB/s", "received bytes per second over the whole run",
                        lambda s: s.received_bits.value / 8 / s.elapsed_ps * 1000)
    throughput = Formula("messages/cycle", "messages taken per edge over the whole run",
                         lambda s: s.received.value / s.elapsed_cycles)

    def setup(self) -> None:
        stalls = self.stall_cycles or ()
        if any(not isinstance(c, int) or isinstance(c, bool) for c in stalls):
            raise ParameterError(f"{self.path}: parameter 'stall_cycles' must hold cycle numbers, got {stalls!r}")
        self.not_ready = frozenset(stalls)
        self.arrivals: list[Arrival] = []

    @property
    def messages(self) -> list:
        """The messages taken, in order (needs ``record``)."""
        return [a.message for a in self.arrivals]

    @property
    def payloads(self) -> list:
        """The payload of each message taken (the message itself if it has none)."""
        return [getattr(a.message, "payload", a.message) for a in self.arrivals]

    @property
    def arrival_cycles(self) -> list[int]:
        """The edge at which each message was taken."""
        return [a.cycle for a in self.arrivals]

    def tick(self) -> None:
        inp = self.inp
        if not inp.valid:
            self.sleep()  # an arrival wakes us
            return
        cycle = self.cycle
        if cycle in self.not_ready:
            ready_again = cycle + 1
            while ready_again in self.not_ready:
                ready_again += 1
            self.sleep_for(ready_again - cycle)
            return
        if self.stall_probability and self.rng.random() < self.stall_probability:
            return
        msg = inp.recv()
        now = self.now
        self.received.add()
        size = getattr(msg, "size_bits", None)
        if size is not None:
            self.received_bits.add(size)
        created = getattr(msg, "created_ps", None)
        if created is not None:
            self.latency.sample(now - created)
        if self.record:
            self.arrivals.append(Arrival(cycle, now, msg))
        if self.stop_after is not None and self.received.value >= self.stop_after:
            self.sim.stop()
        if not len(inp):
            self.sleep()  # nothing else has arrived; the next arrival wakes us
