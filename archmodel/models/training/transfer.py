"""What moves between GPUs, NICs and host memories in a training step, and the per-rank
programs of sends and receives that collectives compile to.

A collective is not simulated flit by flit: each rank's part is a :class:`RankProgram`, a
list of :class:`Send` s (each waiting for the arrival of the pieces it forwards or reduces)
and the tags of the pieces it must receive, in the style of MSCCL's program representation
(Cowan et al., "MSCCLang", ASPLOS 2023). Each send becomes one :class:`Transfer` message
that the modelled links serialise by its size, so chunks pipeline through a ring exactly as
far as the links and the dependencies let them.
"""

from __future__ import annotations

from typing import Any

import attrs

from archmodel.models.messages import CONTROL_BITS


@attrs.frozen(slots=True)
class Transfer:
    """``nbytes`` bytes of a collective's piece (or a host copy) from endpoint ``src`` to
    endpoint ``dst``; ``tag`` names the piece at the receiver. ``request`` marks a read of
    ``nbytes`` bytes from a host memory (it carries only a control word; the memory answers
    with a Transfer of the same tag). ``ack`` marks a host memory's acknowledgement of a
    write (a control word)."""

    src: int
    dst: int
    nbytes: int
    tag: Any
    request: bool = False
    ack: bool = False

    @property
    def size_bits(self) -> int:
        """Payload bits, or one control word for a read request or an acknowledgement."""
        if self.request or self.ack:
            return CONTROL_BITS
        return 8 * self.nbytes

    @property
    def payload_bytes(self) -> int:
        """Bytes of data this message puts on a link (0 for a request or an ack)."""
        return 0 if self.request or self.ack else self.nbytes


@attrs.frozen(slots=True)
class Send:
    """One send of a rank's program: ``nbytes`` to endpoint ``dst`` under ``tag``, once every
    tag of ``needs`` has arrived (the piece it forwards, the partial sums it adds to).
    ``request`` makes it a read request to a host memory for ``nbytes``."""

    dst: int
    nbytes: int
    tag: Any
    needs: tuple = ()
    request: bool = False


@attrs.frozen(slots=True)
class RankProgram:
    """One rank's part of a collective: its sends and the tags it must receive. The part is
    done when every send has left the rank and every receive has arrived."""

    sends: tuple
    receives: tuple

    @property
    def bytes_sent(self) -> int:
        """Payload bytes this rank puts on its links (read requests carry none)."""
        return sum(s.nbytes for s in self.sends if not s.request)
