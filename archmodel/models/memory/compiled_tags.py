"""The tag store of :mod:`.cache_array` as one numba loop, for long reference streams that
need hit and miss counts but no timing (sweeping cache geometries over a workload's trace).

:func:`play` runs a whole stream through a set-associative, write-back, write-allocate
cache under LRU or SRRIP and returns the counts; randomized tests hold it to
:class:`~.cache_array.CacheArray` access by access. The timed :class:`~.cache.Cache` stays
Python.
"""

from __future__ import annotations

import numpy as np

from archmodel.kernel.compiled import jit

from .cache_array import RRPV_INSERT, RRPV_MAX

COMPILED_POLICIES = ("lru", "srrip")


@jit(allocates=True)  # its tag store and ages are arrays of its own
def _play(lines, writes, sets, ways, srrip, write_hits_touch, hit_out):  # pragma: no cover - compiled
    tags = np.full((sets, ways), -1, dtype=np.int64)
    age = np.zeros((sets, ways), dtype=np.int64)  # LRU: last use; SRRIP: RRPV
    dirty = np.zeros((sets, ways), dtype=np.bool_)
    if srrip:
        age[:, :] = RRPV_MAX
    clock = 0
    hits = read_hits = writebacks = 0
    for k in range(len(lines)):
        line = lines[k]
        write = writes[k]
        s = line % sets
        clock += 1
        way = -1
        for w in range(ways):
            if tags[s, w] == line:
                way = w
                break
        if way >= 0:
            hits += 1
            hit_out[k] = True
            if not write:
                read_hits += 1
            if write_hits_touch or not write:
                age[s, way] = 0 if srrip else clock
            if write:
                dirty[s, way] = True
            continue
        victim = -1
        for w in range(ways):
            if tags[s, w] == -1:
                victim = w
                break
        if victim < 0:
            if srrip:
                while victim < 0:
                    for w in range(ways):
                        if age[s, w] == RRPV_MAX:
                            victim = w
                            break
                    if victim < 0:
                        for w in range(ways):
                            age[s, w] += 1
            else:
                victim = 0
                for w in range(1, ways):
                    if age[s, w] < age[s, victim]:
                        victim = w
            if dirty[s, victim]:
                writebacks += 1
        tags[s, victim] = line
        dirty[s, victim] = write
        age[s, victim] = RRPV_INSERT if srrip else clock
    return hits, read_hits, writebacks, int(dirty.sum())


def play(lines, writes, sets: int, ways: int, policy: str = "lru", write_hits_touch: bool = True) -> dict:
    """Counts of a stream of line numbers (and write flags) through a cache of ``sets`` x
    ``ways``: accesses, hits, read hits, misses, write-backs, dirty lines left, and the
    per-access hit flags."""
    if policy not in COMPILED_POLICIES:
        raise ValueError(f"the compiled tag store offers {', '.join(COMPILED_POLICIES)}, not '{policy}'")
    lines = np.ascontiguousarray(lines, dtype=np.int64)
    writes = np.ascontiguousarray(writes, dtype=np.bool_)
    hit = np.zeros(len(lines), dtype=np.bool_)
    hits, read_hits, writebacks, dirty = _play(lines, writes, sets, ways, policy == "srrip", write_hits_touch, hit)
    return {"accesses": len(lines), "hits": int(hits), "read_hits": int(read_hits), "misses": len(lines) - int(hits),
            "writebacks": int(writebacks), "dirty_left": int(dirty), "hit": hit}
