"""A traffic source: synthetic, scripted or file-driven message streams."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Iterator

import attrs

from archmodel.kernel import (ArchError, Component, Counter, Out, Param, ParameterError, Span, at_least,
                              Registry, in_range, model)

from ..messages import Packet
from .condition_cycles import ConditionCycles


SOURCE_PATTERNS: Registry[str] = Registry("source pattern", {
    "constant": "back to back, one per edge while the output is ready (closed loop)",
    "bernoulli": "a message at each edge with probability rate (open loop, queued in the source)",
    "list": "the payloads in messages, due at the edges in cycles if given",
    "file": "the 'cycle payload' lines of trace_file",
})
"""When a :class:`Source`'s messages are due (its ``pattern``)."""


@model
class Source(Component):
    """Injects messages following a traffic pattern: constant, Bernoulli, a list or a file.

    At most one message leaves per edge.

    ``pattern`` chooses when each message is due:

    - ``constant``: back to back, one per edge while the output is ready (closed loop: the
      next message is due the edge after the previous one left).
    - ``bernoulli``: at each edge a message is generated with probability ``rate`` from the
      source's own random stream (open loop, as BookSim's injection process: messages not
      yet sent queue up in the source).
    - ``list``: the payloads in ``messages``, due at the edges in ``cycles`` if given
      (non-decreasing), else back to back.
    - ``file``: the text file ``trace_file``, one ``cycle payload`` pair per line (payload an
      integer, decimal or 0x hex, or else a word); blank lines and ``#`` comments are skipped.
      A malformed line is an ArchError naming the file and line.

    ``count`` caps the number of messages. ``payload(i, rng)`` makes the payload of message i
    for the synthetic patterns (default: i). Each payload travels in a
    :class:`~archmodel.models.messages.Packet` to ``dest`` (an int, or ``dest(i, rng)``),
    ``size_bits`` long, numbered by ``seq``; with ``wrap_in_packet=False`` payloads are sent
    as they are (e.g. MemRequests), with their ``created_ps`` field set if they have one.
    ``created_ps`` is when the message was due, so latency measured downstream includes the
    edges it waited in the source because the output was not ready (``stalled_cycles``).

    Leaves out: bursty (Markov-modulated) and self-similar processes; write them as lists.
    """

    pattern = Param(str, "constant", "when messages are due: constant, bernoulli, list or file",
                    check=SOURCE_PATTERNS.check)
    rate = Param(float, 1.0, "probability of a new message per edge (bernoulli)", unit="messages/cycle",
                 check=in_range(0.0, 1.0))
    count = Param(int, None, "messages to send (default: all listed, or unlimited)", unit="messages",
                  check=at_least(0))
    messages = Param((list, tuple), None, "payloads to send (list)")
    cycles = Param((list, tuple), None, "edge at which each listed payload is due (list)")
    trace_file = Param(str, None, "text file of 'cycle payload' lines (file)")
    payload = Param(Callable, None, "payload(i, rng) for synthetic patterns (default i)")
    dest = Param((int, Callable), 0, "Packet destination, or dest(i, rng)")
    size_bits = Param(int, 64, "Packet length on the wire", unit="bits", check=at_least(1))
    source_id = Param((int, str), None, "Packet source (default: this component's path)")
    wrap_in_packet = Param(bool, True, "wrap each payload in a Packet; False sends payloads as they are")
    out = Out("the generated messages")
    sent = Counter("messages", "messages sent")
    stalled_cycles = ConditionCycles("edges a due message waited because the output was not ready")

    def setup(self) -> None:
        self.script: list[tuple[int | None, Any]] | None = None
        if self.pattern == "list":
            self.script = self._listed()
        elif self.pattern == "file":
            self.script = self._read_trace()
        if self.script is not None and self.count is not None:
            self.script = self.script[:self.count]
        self.index = 0
        self.last_sent_cycle = -1

    def _listed(self) -> list:
        if self.messages is None:
            raise ParameterError(f"{self.path}: pattern 'list' needs the parameter 'messages'")
        if self.cycles is None:
            return [(None, m) for m in self.messages]
        if len(self.cycles) != len(self.messages):
            raise ParameterError(f"{self.path}: {len(self.messages)} messages but {len(self.cycles)} cycles",
                                 hint="give one send cycle per message, or none")
        for i, cycle in enumerate(self.cycles):
            if not isinstance(cycle, int) or isinstance(cycle, bool) or cycle < 0:
                raise ParameterError(f"{self.path}: cycles[{i}] must be a cycle number >= 0, got {cycle!r}")
            if i and cycle < self.cycles[i - 1]:
                raise ParameterError(f"{self.path}: cycles must not decrease, but cycles[{i}] = {cycle} "
                                     f"follows {self.cycles[i - 1]}")
        return list(zip(self.cycles, self.messages))

    def _read_trace(self) -> list:
        name = self.trace_file
        if name is None:
            raise ParameterError(f"{self.path}: pattern 'file' needs the parameter 'trace_file'")
        try:
            with open(name, encoding="utf-8") as handle:
                lines = handle.readlines()
        except OSError as err:
            raise ArchError(f"{self.path}: cannot read traffic file '{name}': {err.strerror}") from None
        script = []
        previous = 0
        for number, line in enumerate(lines, start=1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            where = Span(name, number, 1)
            fields = text.split()
            if len(fields) != 2:
                raise ArchError(f"expected 'cycle payload', got {text!r}", span=where)
            try:
                cycle = int(fields[0])
            except ValueError:
                raise ArchError(f"the cycle {fields[0]!r} is not a whole number", span=where) from None
            if cycle < 0:
                raise ArchError(f"the cycle {cycle} is negative", span=where)
            if cycle < previous:
                raise ArchError(f"cycle {cycle} comes before the previous line's cycle {previous}",
                                hint="list the lines in time order", span=where)
            previous = cycle
            script.append((cycle, _parse_payload(fields[1])))
        return script

    def _messages(self) -> Iterator[tuple[int, Any]]:
        """(due edge, payload) of every message, in order."""
        if self.script is not None:
            for cycle, item in self.script:
                yield (cycle if cycle is not None else self.last_sent_cycle + 1), item
            return
        make = self.payload
        i = 0
        due = -1
        while self.count is None or i < self.count:
            if self.pattern == "constant":
                due = self.last_sent_cycle + 1
            else:
                if self.rate <= 0:
                    return
                due += int(self.rng.geometric(self.rate))  # edges until the next success
            yield due, (make(i, self.rng) if make is not None else i)
            i += 1

    def start(self) -> None:
        self.upcoming = self._messages()
        self._advance()

    def _advance(self) -> None:
        """Find the next message's due edge; it is built when due, once."""
        self.next_due, self.next_item = next(self.upcoming, (None, None))
        self.outgoing = None

    def _build(self, item, created_ps: int):
        if not self.wrap_in_packet:
            if attrs.has(type(item)) and any(f.name == "created_ps" for f in attrs.fields(type(item))):
                return attrs.evolve(item, created_ps=created_ps)
            return item
        i = self.index
        dest = self.dest(i, self.rng) if callable(self.dest) else self.dest
        source = self.source_id if self.source_id is not None else self.path
        return Packet(source=source, dest=dest, payload=item, size_bits=self.size_bits,
                      created_ps=created_ps, seq=i)

    def tick(self) -> None:
        cycle = self.cycle
        due = self.next_due
        if due is None:
            self.sleep()
            return
        if due > cycle:
            self.sleep_for(due - cycle)
            return
        if self.outgoing is None:
            domain = self.domain
            self.outgoing = self._build(self.next_item, domain.phase_ps + due * domain.period_ps)
        if not self.out.try_send(self.outgoing):
            self.stalled_cycles.begin(cycle)
            self.sleep()  # a returning credit or a freed link wakes us
            return
        self.stalled_cycles.end(cycle)
        self.sent.add()
        self.index += 1
        self.last_sent_cycle = cycle
        self._advance()
        if self.next_due is None:
            self.sleep()
        elif self.next_due > cycle + 1:
            self.sleep_for(self.next_due - cycle)


def _parse_payload(text: str):
    """An integer (decimal, or hex with 0x) if the text is one, else the text itself."""
    try:
        return int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text)
    except ValueError:
        return text
