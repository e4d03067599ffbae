"""The memory image of a graph workload, and the builder of the references a sweep over it
makes.

:class:`MemoryImage` lays arrays out one after another (each on a 4 KiB page boundary, as an
allocator would place large arrays) from a base address and knows their initial bytes;
:class:`Region` turns element indices into byte addresses. :func:`sweep` builds, with numpy
and no Python loop per edge, the references of a loop nest "for each vertex: a few
references, then a few per edge, then a few more", each reference carrying the value it
reads or writes, so a core can check every answer.
"""

from __future__ import annotations

import attrs
import numpy as np

from archmodel.models.compute import References

PAGE = 4096


@attrs.frozen
class Region:
    """An array at ``base`` of ``count`` elements of ``dtype``."""

    name: str
    base: int
    dtype: np.dtype
    count: int

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def size_bytes(self) -> int:
        return self.count * self.dtype.itemsize

    def at(self, index) -> np.ndarray:
        """Byte addresses of elements ``index``."""
        return self.base + np.asarray(index, dtype=np.int64) * self.dtype.itemsize


class MemoryImage:
    """Arrays placed from ``base`` in a memory of ``capacity`` bytes; :meth:`load` writes the
    initial contents through any ``backdoor_write``."""

    def __init__(self, base: int, capacity: int):
        self.base = base
        self.capacity = capacity
        self.regions: dict[str, Region] = {}
        self._initial: dict[str, np.ndarray] = {}
        self._next = base

    def add(self, name: str, data: np.ndarray | None = None, *, dtype=None, count: int | None = None) -> Region:
        """Place an array: ``data`` (its initial contents) or ``count`` zeroed elements of ``dtype``."""
        if data is not None:
            data = np.ascontiguousarray(data)
            dtype, count = data.dtype, len(data)
        region = Region(name, self._next, np.dtype(dtype), int(count))
        end = region.base + region.size_bytes
        self._next = -(-end // PAGE) * PAGE
        self.regions[name] = region
        if data is not None:
            self._initial[name] = data
        return region

    @property
    def used_bytes(self) -> int:
        """Bytes from the base to the end of the last array."""
        return self._next - self.base

    def check_fits(self, what: str) -> None:
        """A clear error when the arrays need more than the memory holds."""
        if self.used_bytes > self.capacity:
            largest = sorted(self.regions.values(), key=lambda r: -r.size_bytes)[:3]
            detail = ", ".join(f"{r.name} {r.size_bytes} B" for r in largest)
            raise ValueError(f"{what} needs {self.used_bytes} bytes of memory from {self.base:#x} but the modelled "
                             f"memory holds {self.capacity} bytes (largest arrays: {detail})")

    def load(self, memory) -> None:
        """Write every array's initial contents into ``memory`` (through ``backdoor_write``)."""
        for name, data in self._initial.items():
            memory.backdoor_write(self.regions[name].base, data.tobytes())

    def read(self, memory, name: str) -> np.ndarray:
        """An array as ``memory`` holds it now (through ``backdoor_read``)."""
        region = self.regions[name]
        return np.frombuffer(memory.backdoor_read(region.base, region.size_bytes), dtype=region.dtype).copy()


def bits(values, dtype) -> np.ndarray:
    """Values of ``dtype`` as the uint64 patterns :class:`References` carries (low bytes)."""
    dtype = np.dtype(dtype)
    raw = np.ascontiguousarray(np.asarray(values).astype(dtype))
    unsigned = np.dtype(f"u{dtype.itemsize}")
    return raw.view(unsigned).astype(np.uint64)


@attrs.frozen
class Ref:
    """One reference of a loop body: element ``index`` of ``region`` (one per vertex or per
    edge of the sweep), read or written, carrying ``value``; ``dep`` references back within
    the body is the load its address needs (0: none); ``gap`` compute cycles before it;
    ``when`` (booleans) keeps only some instances (a write that happens only on a change);
    ``check`` false marks instances whose read value depends on timing (races)."""

    region: Region
    index: np.ndarray
    value: np.ndarray
    write: bool = False
    dep: int = 0
    gap: int = 0
    when: np.ndarray | None = None
    check: np.ndarray | None = None


def sweep(degrees: np.ndarray, head: list[Ref], edge: list[Ref], tail: list[Ref]) -> References:
    """The references of ``for i: head; for each of degrees[i] edges: edge; tail``, in program
    order. Head and tail refs have one instance per vertex i, edge refs one per edge (edges
    of vertex 0 first). Instances dropped by ``when`` are removed and dependences renumbered."""
    degrees = np.asarray(degrees, dtype=np.int64)
    nv, ne = len(degrees), int(degrees.sum())
    h, p, t = len(head), len(edge), len(tail)
    block = h + p * degrees + t
    start = np.zeros(nv, dtype=np.int64)
    if nv:
        np.cumsum(block[:-1], out=start[1:])
    total = int(block.sum())
    address = np.zeros(total, dtype=np.int64)
    size = np.zeros(total, dtype=np.int64)
    write = np.zeros(total, dtype=bool)
    gap = np.zeros(total, dtype=np.int64)
    source = np.full(total, -1, dtype=np.int64)  # absolute index of the load a reference depends on
    value = np.zeros(total, dtype=np.uint64)
    keep = np.ones(total, dtype=bool)
    check = np.ones(total, dtype=bool)
    vertex_of_edge = np.repeat(np.arange(nv), degrees)
    first_edge = np.zeros(nv, dtype=np.int64)
    if nv:
        np.cumsum(degrees[:-1], out=first_edge[1:])
    edge_rank = np.arange(ne) - first_edge[vertex_of_edge]

    def place(refs, positions_of):
        for k, ref in enumerate(refs):
            pos = positions_of(k)
            address[pos] = ref.region.at(ref.index)
            size[pos] = ref.region.itemsize
            write[pos] = ref.write
            gap[pos] = ref.gap
            value[pos] = ref.value
            if ref.dep:
                source[pos] = pos - ref.dep
            if ref.when is not None:
                keep[pos] = ref.when
            if ref.check is not None:
                check[pos] = ref.check

    place(head, lambda k: start + k)
    place(edge, lambda k: start[vertex_of_edge] + h + edge_rank * p + k)
    place(tail, lambda k: start + h + degrees * p + k)
    if not keep.all():
        new_index = np.cumsum(keep) - 1
        dependent = source >= 0
        if (dependent & keep & ~keep[np.maximum(source, 0)]).any():
            raise ValueError("a kept reference depends on one that was dropped")
        dep = np.where(dependent, new_index - new_index[np.maximum(source, 0)], 0)[keep]
        return References(address[keep], size[keep], write[keep], gap[keep], dep, value[keep], check[keep])
    dep = np.where(source >= 0, np.arange(total) - source, 0)
    return References(address, size, write, gap, dep, value, check)
