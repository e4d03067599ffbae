"""Small designs that log what they do at every edge, and a VCD reader, for the trace tests."""

from __future__ import annotations

import bisect
import re

from vcd.reader import TokenKind, tokenize

from archmodel.kernel import ClockDomain, Component, In, Out, Param, connect, model


@model(catalogue=False)
class LoggedCounter(Component):
    """Counts edges in an 8-bit register, with a state string, a flag and a running mean;
    logs the values it gives its registers at every edge."""

    fail_at = Param(int, -1, "cycle at which to raise a model assertion (-1: never)")
    interrupt_at = Param(int, -1, "cycle at which to raise KeyboardInterrupt (-1: never)")

    def setup(self):
        self.count = self.register("count", 0, width=8)
        self.phase = self.register("phase", "idle")
        self.odd = self.register("odd", False)
        self.mean = self.register("mean", 0.0)
        self.log: dict[int, dict] = {}

    def tick(self):
        if self.cycle == self.fail_at:
            self.fail("stopping on purpose")
        if self.cycle == self.interrupt_at:
            raise KeyboardInterrupt
        count = (self.count.value + 1) % 256
        values = {"count": count, "phase": "counting up" if count % 3 else "tick 3",
                  "odd": bool(count % 2), "mean": self.mean.value + (count - self.mean.value) / 4}
        for name, value in values.items():
            getattr(self, name).set(value)
        self.log[self.now] = values


@model(catalogue=False)
class StallingSource(Component):
    """Offers 0, 1, 2... with ``try_send``, pausing at random edges; logs per edge what it
    offered, whether it was ready and whether the message went, and the occupancy it saw."""

    out = Out("numbers")
    pause = Param(float, 0.3, "probability of not offering at an edge")

    def setup(self):
        self.next_value = 0
        self.log: dict[int, dict] = {}

    def tick(self):
        entry = {"ready": self.out.ready, "occupancy": self.out.channel.occupancy,
                 "valid": False, "fire": False}
        if self.rng.random() >= self.pause:
            entry["valid"] = True
            entry["data"] = f"item {self.next_value}"
            entry["fire"] = self.out.try_send(f"item {self.next_value}")
            if entry["fire"]:
                self.next_value += 1
        self.log[self.now] = entry


@model(catalogue=False)
class SlowSink(Component):
    """Takes a waiting message at random edges (back-pressure); logs what it took."""

    inp = In("numbers")
    take = Param(float, 0.5, "probability of taking a waiting message at an edge")

    def setup(self):
        self.taken: list[tuple[int, str]] = []
        self.held = self.register("held", 0, width=16)

    def tick(self):
        if self.inp.valid and self.rng.random() < self.take:
            self.taken.append((self.now, self.inp.recv()))
            self.held.set(self.held.value + 1)


@model(catalogue=False)
class Napper(Component):
    """Sends one message, then sleeps ``gap`` cycles, ``bursts`` times (idle skipping)."""

    out = Out("numbers")
    gap = Param(int, 40, "cycles asleep between messages")
    bursts = Param(int, 3, "messages to send")

    def setup(self):
        self.sent_at: list[int] = []
        self.resume_at = 0

    def tick(self):
        if self.now < self.resume_at:  # woken early by a returning credit
            self.sleep()
        elif len(self.sent_at) < self.bursts and self.out.try_send(len(self.sent_at)):
            self.sent_at.append(self.now)
            self.resume_at = self.now + self.gap * self.domain.period_ps
            self.sleep_for(self.gap)
        else:
            self.sleep()


@model(catalogue=False)
class Taker(Component):
    """Takes every message when it arrives and sleeps otherwise."""

    inp = In("numbers")

    def tick(self):
        if self.inp.valid:
            self.inp.recv()
        else:
            self.sleep()


def counter_and_pair(fail_at: int = -1, interrupt_at: int = -1, sink_clock: ClockDomain | None = None,
                     pairs: int = 1):
    """``top`` with a counter and a source -> sink pair inside ``top.pair`` (more pairs are
    ``top.pair1``, ``top.pair2``...)."""
    top = Component("top", clock=ClockDomain("clk", 1000))
    LoggedCounter("counter", top, fail_at=fail_at, interrupt_at=interrupt_at)
    for index in range(pairs):
        pair = Component(f"pair{index or ''}", top)
        source = StallingSource("src", pair)
        sink = SlowSink("dst", pair, clock=sink_clock)
        connect(source.out, sink.inp, latency=2, capacity=3)
    return top


class Waveform:
    """A VCD read back with pyvcd's tokenizer: signal names, values over time, timestamps."""

    def __init__(self, path):
        self.vars: dict[str, tuple[str, str, int]] = {}  # name -> (id, type, size)
        self.changes: dict[str, list[tuple[int, object]]] = {}
        self.times: list[int] = []
        self.scopes: list[str] = []
        by_id: dict[str, list[str]] = {}
        scope: list[str] = []
        now = None
        with open(path, "rb") as stream:
            for token in tokenize(stream):
                kind = token.kind
                if kind is TokenKind.SCOPE:
                    scope.append(token.scope.ident)
                    self.scopes.append(".".join(scope))
                elif kind is TokenKind.UPSCOPE:
                    scope.pop()
                elif kind is TokenKind.VAR:
                    name = ".".join(scope + [token.var.reference])
                    self.vars[name] = (token.var.id_code, token.var.type_.value, token.var.size)
                    self.changes[name] = []
                    by_id.setdefault(token.var.id_code, []).append(name)
                elif kind is TokenKind.CHANGE_TIME:
                    now = token.time_change
                    self.times.append(now)
                elif kind in _VALUE_KINDS:
                    change = token.data
                    value = change.value
                    if kind is TokenKind.CHANGE_STRING:
                        value = _unescape(value)
                    elif kind is TokenKind.CHANGE_SCALAR and value in ("0", "1"):
                        value = int(value)
                    for name in by_id[change.id_code]:
                        self.changes[name].append((now, value))

    @property
    def end(self) -> int:
        return self.times[-1]

    def at(self, name: str, time_ps: int):
        """The value of ``name`` at ``time_ps`` (the last change at or before it)."""
        changes = self.changes[name]
        index = bisect.bisect_right([t for t, _ in changes], time_ps) - 1
        if index < 0:
            raise KeyError(f"{name} has no value at {time_ps} ps")
        return changes[index][1]

    def edges(self, name: str) -> list[tuple[int, object]]:
        """The changes of ``name`` with repeated values removed."""
        out: list[tuple[int, object]] = []
        for time_ps, value in self.changes[name]:
            if out and out[-1][0] == time_ps:
                out[-1] = (time_ps, value)
            elif not out or out[-1][1] != value:
                out.append((time_ps, value))
        return out


_VALUE_KINDS = {TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR, TokenKind.CHANGE_REAL,
                TokenKind.CHANGE_STRING}
_ESCAPES = {"\\t": "\t", "\\n": "\n", "\\r": "\r", "\\x20": " ", "\\\\": "\\"}


def _unescape(text: str) -> str:
    return re.sub(r"\\(?:x20|[tnr\\])", lambda m: _ESCAPES[m.group()], text)
