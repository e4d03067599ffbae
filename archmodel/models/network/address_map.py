"""Address maps: which network terminal owns which bytes, for memory-mapped traffic.

An :class:`AddressMap` is a set of non-overlapping byte ranges ``[start, end)``, each owned by one
terminal of a network (the terminal whose interface has the memory on its ``to_memory`` port),
or interleaved over several in blocks of ``interleave_bytes`` (block k of the range at its
k-th terminal, round robin), as a NoC spreads addresses over memory controllers.
Requester interfaces look a request up in it to find the packet's destination, and forward
functional accesses (``backdoor_read``/``backdoor_write``) through it to the memory that owns the
bytes, so a workload that finds "the memory at the other end of my port" can load and check
data through a network as it would on a direct connection.
"""

from __future__ import annotations

from bisect import bisect_right

import attrs

from archmodel.kernel import ParameterError


def hex_address(address: int) -> str:
    """An address as errors show it: hexadecimal with a ``_`` every four digits (``0x8000_0000``)."""
    return f"{address:#_x}"


@attrs.frozen
class AddressRange:
    """Bytes ``[start, end)`` owned by ``terminal``, or with ``interleave`` (several terminals)
    spread over them in blocks of ``block_bytes``; ``label`` names the owner in errors (the
    memory's instance name when the range came from a ``.arch`` file, else ``terminal N``)."""

    start: int
    end: int
    terminal: int
    label: str = ""
    interleave: tuple = ()
    block_bytes: int = 0

    @property
    def terminals(self) -> tuple:
        """Every terminal that owns some of the range's bytes."""
        return self.interleave or (self.terminal,)

    def owner(self, address: int) -> int:
        """The terminal owning the byte at ``address`` (inside the range)."""
        if not self.interleave:
            return self.terminal
        return self.interleave[(address - self.start) // self.block_bytes % len(self.interleave)]

    def piece_end(self, address: int) -> int:
        """The end of the bytes from ``address`` on that one terminal owns: the range's end, or
        the end of its interleave block."""
        if not self.interleave:
            return self.end
        return min(self.end, self.start + ((address - self.start) // self.block_bytes + 1) * self.block_bytes)

    def __str__(self) -> str:
        owner = self.label or (f"terminals {list(self.interleave)} in {self.block_bytes}-byte blocks"
                               if self.interleave else f"terminal {self.terminal}")
        return f"{hex_address(self.start)} .. {hex_address(self.end)} -> {owner}"


class AddressMap:
    """Non-overlapping address ranges, each owned by a terminal, looked up by address.

    ``entries`` are :class:`AddressRange` objects or ``(start, end, terminal)`` triples, the
    terminal a list of terminals for a range interleaved over them in ``interleave_bytes``
    blocks; a range that is empty, owned by a terminal outside ``0 .. terminals - 1``, or
    overlapping another is a ParameterError naming the ranges (``owner`` prefixes the message). Gaps
    between ranges are allowed; a timing request landing in one is the requester's run-time
    error. ``memory_ports`` (terminal -> the ``to_memory`` port used there) is bound by whoever
    wires the interfaces, for the functional path.
    """

    def __init__(self, entries=(), terminals: int | None = None, owner: str = "", interleave_bytes: int = 4096):
        self.ranges: list[AddressRange] = []
        self.starts: list[int] = []
        self.memory_ports: dict = {}
        prefix = f"{owner}: " if owner else ""
        for entry in entries:
            item = entry if isinstance(entry, AddressRange) else _as_range(entry, prefix, interleave_bytes)
            for terminal in item.terminals:
                if terminals is not None and not 0 <= terminal < terminals:
                    raise ParameterError(f"{prefix}address range {item}: the network has terminals "
                                         f"0 .. {terminals - 1}")
            self.add(item, prefix)

    def add(self, item: AddressRange, prefix: str = "") -> None:
        """Add a range; ParameterError if it is empty or overlaps one already present."""
        if item.end <= item.start:
            raise ParameterError(f"{prefix}address range {item} is empty: its end must lie above its start")
        clash = self.overlapping(item)
        if clash is not None:
            raise ParameterError(f"{prefix}address range {item} overlaps {clash}",
                                 hint="every byte belongs to one memory; make the ranges disjoint")
        k = bisect_right(self.starts, item.start)
        self.starts.insert(k, item.start)
        self.ranges.insert(k, item)

    def overlapping(self, item: AddressRange) -> AddressRange | None:
        """A range already present that shares a byte with ``item``, or None."""
        k = bisect_right(self.starts, item.start)
        for neighbour in self.ranges[max(0, k - 1):k + 1]:
            if neighbour.start < item.end and item.start < neighbour.end:
                return neighbour
        return None

    def find(self, address: int) -> AddressRange | None:
        """The range holding ``address``, or None when it falls in no range."""
        k = bisect_right(self.starts, address) - 1
        if k >= 0 and address < self.ranges[k].end:
            return self.ranges[k]
        return None

    def owners(self) -> set:
        """Every terminal that owns some mapped bytes."""
        return {terminal for item in self.ranges for terminal in item.terminals}

    def describe(self) -> str:
        """The ranges, for errors: ``0x0 .. 0x10_0000 -> terminal 1, ...``."""
        return ", ".join(str(r) for r in self.ranges) or "no ranges"

    @property
    def lowest(self) -> int:
        """The first mapped byte address."""
        return self.ranges[0].start if self.ranges else 0

    @property
    def span(self) -> int:
        """Bytes from the first mapped address to the end of the last range (gaps included)."""
        return self.ranges[-1].end - self.ranges[0].start if self.ranges else 0

    # -- the functional path -------------------------------------------------------------------
    def pieces(self, address: int, size: int):
        """``(memory, address, size)`` for each range that ``size`` bytes at ``address`` touch, in
        address order; ValueError naming the first unmapped address."""
        end = address + size
        while address < end:
            item = self.find(address)
            if item is None:
                raise ValueError(f"no address range holds {hex_address(address)} (mapped: {self.describe()})")
            step = min(end, item.piece_end(address)) - address
            yield self.memory(item, item.owner(address)), address, step
            address += step

    def memory(self, item: AddressRange, terminal: int):
        """The component at the other end of the ``to_memory`` port of ``terminal`` (an owner of
        ``item``'s bytes)."""
        port = self.memory_ports.get(terminal)
        if port is None or not port.connected:
            raise ValueError(f"address range {item}: no memory is connected to terminal {terminal}'s "
                             "to_memory port")
        memory = port.channel.dst_owner
        if not hasattr(memory, "backdoor_read"):
            raise ValueError(f"address range {item}: {memory.path} at terminal {terminal} offers no "
                             "backdoor_read/backdoor_write")
        return memory

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read ``size`` bytes without simulated time from the memories that own them."""
        return b"".join(memory.backdoor_read(a, n) for memory, a, n in self.pieces(address, size))

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Write ``data`` without simulated time to the memories that own its bytes."""
        offset = 0
        for memory, a, n in self.pieces(address, len(data)):
            memory.backdoor_write(a, bytes(data[offset:offset + n]))
            offset += n


def _as_range(entry, prefix: str, interleave_bytes: int) -> AddressRange:
    try:
        start, end, terminal = entry
    except (TypeError, ValueError):
        raise ParameterError(f"{prefix}address map entry {entry!r} is not (start, end, terminal)") from None
    owners = list(terminal) if isinstance(terminal, (list, tuple)) else [terminal]
    if not owners or not all(isinstance(v, int) and not isinstance(v, bool) for v in [start, end] + owners):
        raise ParameterError(f"{prefix}address map entry {entry!r} must hold integers (start, end, and a terminal "
                             "or a list of terminals)")
    if len(owners) == 1:
        return AddressRange(start, end, owners[0])
    if len(set(owners)) != len(owners):
        raise ParameterError(f"{prefix}address map entry {entry!r} names a terminal twice")
    if interleave_bytes < 1 or interleave_bytes & (interleave_bytes - 1) or (end - start) % interleave_bytes \
            or start % interleave_bytes:
        raise ParameterError(f"{prefix}address range {hex_address(start)} .. {hex_address(end)} is interleaved in "
                             f"{interleave_bytes}-byte blocks, so its ends must be multiples of the block",
                             hint="interleave_bytes must be a power of two; align the range to it")
    return AddressRange(start, end, owners[0], interleave=tuple(owners), block_bytes=interleave_bytes)


class ForwardsFunctionalAccess:
    """The functional (backdoor) interface of a memory, forwarded through ``self.memory_map``
    to the memories that own the bytes: what a requester-side port owner offers, so that a
    workload finding this component at the end of its memory port loads data through it."""

    memory_map: AddressMap | None = None

    def _mapped(self) -> AddressMap:
        if self.memory_map is None:
            raise ValueError(f"{self.path} has no address map: it forwards no memory accesses")
        return self.memory_map

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read bytes without simulated time from the memory (or memories) owning them."""
        return self._mapped().backdoor_read(address, size)

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Write bytes without simulated time to the memory (or memories) owning them."""
        self._mapped().backdoor_write(address, data)

    @property
    def base_address(self) -> int:
        """The lowest mapped address."""
        return self._mapped().lowest

    @property
    def size_bytes(self) -> int:
        """Bytes from the lowest mapped address to the end of the highest range."""
        return self._mapped().span
