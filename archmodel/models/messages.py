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


_REQUEST_FIELDS = ("address", "size_bytes", "is_write", "data", "source", "tag", "created_ps", "origin")
_RESPONSE_FIELDS = ("tag", "data", "source", "created_ps")
if tuple(f.name for f in attrs.fields(MemRequest)) != _REQUEST_FIELDS or \
        tuple(f.name for f in attrs.fields(MemResponse)) != _RESPONSE_FIELDS:
    raise AssertionError("MemRequest or MemResponse changed its fields: update retagged and restored")


def retagged(request: MemRequest, tag: int, source: Any) -> MemRequest:
    """``attrs.evolve(request, tag=tag, source=source)``, built field by field: evolve looks
    the fields up at every call, and a network node or interface forwards every request once
    (a subclass, with fields of its own, goes through evolve)."""
    if type(request) is not MemRequest:
        return attrs.evolve(request, tag=tag, source=source)
    return MemRequest(request.address, request.size_bytes, request.is_write, request.data, source, tag,
                      request.created_ps, request.origin)


def restored(response: MemResponse, tag: int, source: Any) -> MemResponse:
    """``attrs.evolve(response, tag=tag, source=source)``, as :func:`retagged`: the response
    with the tag and source of the request it answers, as that request's sender knows them."""
    if type(response) is not MemResponse:
        return attrs.evolve(response, tag=tag, source=source)
    return MemResponse(tag, response.data, source, response.created_ps)


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
