"""Message types shared by the model families: memory requests and responses, and packets.

Messages are frozen attrs classes, so a model can never change a message another model still
holds; ``attrs.evolve`` makes a changed copy. Every message offers ``size_bits``, the number
of bits it occupies on a channel with a width (``connect(..., width_bits=...)``), so a
narrow link serialises it over ``ceil(size_bits / width_bits)`` cycles. ``created_ps`` is the
time the message came into being, so the model that finally consumes it can measure latency.
"""

from __future__ import annotations

from typing import Any

import attrs

from archmodel.kernel import Span

CONTROL_BITS = 64
"""Bits of a message that carries no data (a read request, a write acknowledgement): one
address-and-control word, as on a 64-bit AXI or TileLink request channel."""


@attrs.frozen
class MemRequest:
    """A read or write of ``size_bytes`` bytes at ``address``.

    ``data`` holds the bytes to write (``len(data) == size_bytes``) and is ``None`` for a
    read. ``source`` names the requester and ``tag`` tells its outstanding requests apart;
    both come back unchanged in the :class:`MemResponse`. ``origin`` is the line of an input
    file the request was read from (a trace), so a memory that must refuse it can say where
    it came from, as bad input.
    """

    address: int
    size_bytes: int
    is_write: bool = False
    data: bytes | None = None
    source: Any = None
    tag: int = 0
    created_ps: int = 0
    origin: Span | None = None

    @property
    def size_bits(self) -> int:
        """Control word plus write data."""
        return CONTROL_BITS + (8 * self.size_bytes if self.is_write else 0)


@attrs.frozen
class MemResponse:
    """The answer to a :class:`MemRequest`: the bytes read, or ``None`` for a write
    acknowledgement. ``created_ps`` is copied from the request, so latency measured on the
    response is the round trip."""

    tag: int
    data: bytes | None = None
    source: Any = None
    created_ps: int = 0

    @property
    def size_bits(self) -> int:
        """Read data, or one control word for a write acknowledgement."""
        return 8 * len(self.data) if self.data else CONTROL_BITS


@attrs.frozen
class Packet:
    """A unit of traffic from ``source`` to ``dest`` carrying any ``payload``.

    ``size_bits`` is its length on the wire; ``seq`` numbers the packets of one source,
    so a sink can check order and spot loss or duplication.
    """

    source: Any
    dest: Any
    payload: Any = None
    size_bits: int = 64
    created_ps: int = 0
    seq: int = 0
