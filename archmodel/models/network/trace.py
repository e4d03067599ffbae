"""Trace-driven injection: packets read from a text file instead of drawn from a pattern.

The format, one packet per line, whitespace separated::

    # cycle  source  dest  size_flits
    0        0       63    4
    12       5       9     1          # a comment may also end a line

``cycle`` is the network clock cycle at which the packet is created at its source's interface
(it then waits in the source queue like any other packet, so its packet latency includes
source queueing); ``source`` and ``dest`` are terminal numbers as the topology numbers them
(on a k x k mesh, terminal ``y * k + x``); ``size_flits`` is the packet length in flits.
Blank lines and everything after ``#`` are ignored. Lines need not be sorted: each source
creates its packets in cycle order, and packets of one source with the same cycle in file
order. A malformed line is an :class:`~archmodel.kernel.ArchError` naming ``file:line``.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

from archmodel.kernel import ArchError, Span, read_lines


class TracePacket(NamedTuple):
    """One line of a packet trace."""

    cycle: int
    source: int
    dest: int
    size: int


FIELDS = ("cycle", "source", "dest", "size_flits")


def parse_trace(lines: Iterable[str], name: str = "<trace>", terminals: int | None = None) -> list[TracePacket]:
    """The packets of a trace given as lines of text; ``name`` is the file name errors cite,
    ``terminals`` (when given) bounds the source and destination numbers."""
    packets = []
    for number, line in enumerate(lines, start=1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != 4:
            raise ArchError(f"expected 4 fields 'cycle source dest size_flits', got {len(fields)}: {text!r}",
                            span=Span(name, number, 1))
        values = []
        for field, label in zip(fields, FIELDS):
            try:
                values.append(int(field))
            except ValueError:
                raise ArchError(f"{label} '{field}' is not an integer", span=Span(name, number, 1)) from None
        cycle, source, dest, size = values
        if cycle < 0:
            raise ArchError(f"cycle {cycle} is negative", span=Span(name, number, 1))
        if size < 1:
            raise ArchError(f"size_flits must be at least 1, got {size}", span=Span(name, number, 1))
        for label, terminal in (("source", source), ("dest", dest)):
            if terminal < 0 or (terminals is not None and terminal >= terminals):
                bound = f"0 .. {terminals - 1}" if terminals is not None else "0 or more"
                raise ArchError(f"{label} terminal {terminal} does not exist (terminals are {bound})",
                                span=Span(name, number, 1))
        packets.append(TracePacket(cycle, source, dest, size))
    return packets


def read_trace(path: str, terminals: int | None = None) -> list[TracePacket]:
    """The packets of the trace file at ``path`` (see the module docstring for the format)."""
    return parse_trace((text for _, text in read_lines(path, "packet trace")), str(path), terminals)


def by_source(packets: Iterable[TracePacket], terminals: int) -> list[list[TracePacket]]:
    """The packets grouped per source terminal, each group in creation order."""
    groups: list[list[TracePacket]] = [[] for _ in range(terminals)]
    for packet in packets:
        groups[packet.source].append(packet)
    for group in groups:
        group.sort(key=lambda p: p.cycle)  # stable: same-cycle packets keep file order
    return groups
