"""The bytes a memory holds: a sparse store of pages allocated on first write, and the
functional (backdoor) interface every memory model offers on top of it.

A store of ``size_bytes`` costs nothing until it is written: an 8 GiB HBM stack that a
workload touches in a few places holds only those pages. Bytes never written read as zero.
"""

from __future__ import annotations

from archmodel.kernel import Param

PAGE_BYTES = 4096
"""Bytes per allocated page: small enough that scattered accesses stay cheap, large enough
that a sequential copy allocates few pages."""


class BackingStore:
    """``size_bytes`` of memory as pages of ``page_bytes`` allocated on first write.

    Offsets run from 0 to ``size_bytes - 1``; reads and writes may have any size and
    alignment and span pages. The owner checks bounds (with its own error message); a store
    only asserts them.
    """

    __slots__ = ("size_bytes", "page_bytes", "pages", "_shift")

    def __init__(self, size_bytes: int, page_bytes: int = PAGE_BYTES):
        if page_bytes < 1 or page_bytes & (page_bytes - 1):
            raise ValueError(f"page_bytes must be a power of two, got {page_bytes}")
        self.size_bytes = size_bytes
        self.page_bytes = page_bytes
        self.pages: dict[int, bytearray] = {}
        self._shift = page_bytes.bit_length() - 1

    @property
    def allocated_bytes(self) -> int:
        """Bytes of pages allocated so far."""
        return len(self.pages) * self.page_bytes

    def write(self, offset: int, data: bytes) -> None:
        """Store ``data`` from ``offset`` on, allocating the pages it touches."""
        assert 0 <= offset and offset + len(data) <= self.size_bytes, (offset, len(data), self.size_bytes)
        page_bytes, shift, pages = self.page_bytes, self._shift, self.pages
        done, size = 0, len(data)
        view = memoryview(data)
        while done < size:
            at = offset + done
            index, inside = at >> shift, at & (page_bytes - 1)
            chunk = min(size - done, page_bytes - inside)
            page = pages.get(index)
            if page is None:
                page = pages[index] = bytearray(page_bytes)
            page[inside:inside + chunk] = view[done:done + chunk]
            done += chunk

    def read(self, offset: int, size: int) -> bytes:
        """``size`` bytes from ``offset`` on (zeros where nothing was written)."""
        assert 0 <= offset and offset + size <= self.size_bytes, (offset, size, self.size_bytes)
        page_bytes, shift, pages = self.page_bytes, self._shift, self.pages
        inside = offset & (page_bytes - 1)
        if inside + size <= page_bytes:
            # One page: the common case of a burst.
            page = pages.get(offset >> shift)
            return bytes(page[inside:inside + size]) if page is not None else bytes(size)
        out = bytearray(size)
        done = 0
        while done < size:
            at = offset + done
            index, inside = at >> shift, at & (page_bytes - 1)
            chunk = min(size - done, page_bytes - inside)
            page = pages.get(index)
            if page is not None:
                out[done:done + chunk] = page[inside:inside + chunk]
            done += chunk
        return bytes(out)


def range_text(base: int, size_bytes: int) -> str:
    """``0x0 .. 0x1ffff, 131072 bytes``: how errors name a memory's address range."""
    return f"{base:#x} .. {base + size_bytes - 1:#x}, {size_bytes} bytes"


class FunctionalMemory:
    """The functional side of a memory model (a mixin for components): ``base_address``,
    ``size_bytes`` and :meth:`backdoor_write`/:meth:`backdoor_read` over ``self.store``, a
    :class:`BackingStore` of ``size_bytes`` that the model creates in ``setup()``.

    ``store_offset(address, size)`` maps an absolute address to the store's offset, or returns
    None when it lies outside; a model whose store is not contiguous in the address space
    (one channel of several) overrides it.
    """

    base_address = Param(int, 0, "the first byte address this memory answers to (requests and backdoor "
                         "accesses use absolute addresses)", unit="bytes")

    @property
    def size_bytes(self) -> int:
        """Capacity in bytes."""
        return self.store.size_bytes

    def store_offset(self, address: int, size: int) -> int | None:
        """The offset in the backing store of ``size`` bytes at ``address``, or None when they
        do not all lie in this memory."""
        offset = address - self.base_address
        if offset < 0 or offset + size > self.store.size_bytes:
            return None
        return offset

    def address_range(self) -> str:
        """The addresses this memory answers to, as errors print them."""
        return range_text(self.base_address, self.size_bytes)

    def _backdoor_offset(self, what: str, address: int, size: int) -> int:
        offset = self.store_offset(address, size)
        if offset is None:
            raise ValueError(f"{self.path}: backdoor {what} of {size} bytes at {address:#x} is outside this memory "
                             f"({self.address_range()})")
        return offset

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Place bytes without simulated time (loading inputs); any size and alignment."""
        self.store.write(self._backdoor_offset("write", address, len(data)), data)

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read bytes without simulated time (checking results); unwritten bytes are zero."""
        return self.store.read(self._backdoor_offset("read", address, size), size)
