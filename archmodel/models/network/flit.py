"""What travels on a network: packets, their flits, and the word a link carries each cycle.

A :class:`NetPacket` is one message from a source terminal to a destination terminal, cut into
``size`` flits. A :class:`Flit` belongs to one packet; the head carries the route, body and
tail flits follow it through the virtual channel the head allocated. Each cycle a link carries
at most one :class:`LinkWord` per direction: a flit (or none) and a returned credit (or none),
the way a router's credit wires run beside the flit wires of the opposite direction.

Flits and packets are plain slotted objects, not frozen attrs classes, because they are made
by the million. A flit is held by exactly one component at a time; a router rewrites its
``vc`` (and a packet's routing state) as hardware rewrites a header, and nothing else does.
"""

from __future__ import annotations

from typing import Any


class NetPacket:
    """A packet from terminal ``source`` to terminal ``dest`` of ``size`` flits.

    ``created_ps`` is when the traffic generator (or the model feeding the interface) made it,
    ``injected_ps`` when its head entered the network; the ejecting interface measures packet
    latency from creation (source queueing included) and network latency from injection, as
    BookSim does. ``payload`` is the message it carries between models; ``measured`` marks it
    as created in a measurement window. ``intermediate`` is routing state (Valiant/UGAL: the
    intermediate group, ``None`` until the source router decides, -1 for minimal).
    """

    __slots__ = ("id", "source", "dest", "size", "created_ps", "injected_ps", "payload", "measured",
                 "intermediate", "hops")

    def __init__(self, id: int, source: int, dest: int, size: int, created_ps: int = 0,
                 payload: Any = None, measured: bool = False):
        self.id = id
        self.source = source
        self.dest = dest
        self.size = size
        self.created_ps = created_ps
        self.injected_ps = -1
        self.payload = payload
        self.measured = measured
        self.intermediate = None
        self.hops = 0

    def flits(self) -> list["Flit"]:
        """The packet cut into flits: head first, tail last (one flit is both)."""
        last = self.size - 1
        return [Flit(self, i, i == 0, i == last) for i in range(self.size)]

    def __repr__(self) -> str:
        return f"<NetPacket {self.id} {self.source}->{self.dest} x{self.size}>"


class Flit:
    """Flit ``index`` of ``packet``; ``vc`` is the virtual channel it occupies at the next input
    buffer (set by the sender), ``arrived_ps`` when it entered the buffer it sits in."""

    __slots__ = ("packet", "index", "head", "tail", "vc", "arrived_ps")

    def __init__(self, packet: NetPacket, index: int, head: bool, tail: bool):
        self.packet = packet
        self.index = index
        self.head = head
        self.tail = tail
        self.vc = 0
        self.arrived_ps = 0

    def __repr__(self) -> str:
        kind = "HT" if self.head and self.tail else "H" if self.head else "T" if self.tail else "B"
        p = self.packet
        return f"{kind}{p.id}.{self.index} {p.source}->{p.dest} vc{self.vc}"


NO_CREDIT = -1

MAX_VCS = 256
"""The most virtual channels per port a router takes (BookSim configurations use up to 16;
each VC is a buffer, an allocator row and a credit counter, so 10**30 would exhaust memory)."""
MAX_BUFFER_DEPTH = 1 << 16
"""The deepest VC buffer a router takes, in flits."""
"""The credit field of a :data:`LinkWord` that returns no credit."""

LinkWord = tuple
"""What a link carries in one cycle: ``(flit or None, vc whose credit returns or NO_CREDIT)``."""

