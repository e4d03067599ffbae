"""The compiled tag store against the Python one, access by access, on random streams and
geometries (LRU and SRRIP, with and without write hits updating recency)."""

import numpy as np
import pytest

from archmodel.models.memory import CacheArray
from archmodel.models.memory.compiled_tags import play


@pytest.mark.parametrize("seed", range(12))
def test_the_compiled_tag_store_matches_the_python_one_access_by_access(seed):
    rng = np.random.default_rng(seed)
    sets = int(rng.choice([1, 2, 16, 64]))
    ways = int(rng.choice([1, 2, 4, 8, 16]))
    policy = ["lru", "srrip"][seed % 2]
    touch = bool(seed % 3)
    n = 5000
    span = int(sets * ways * rng.choice([1, 2, 8]))
    lines = np.where(rng.random(n) < 0.5, rng.integers(0, span, n), np.arange(n) // 4)
    writes = rng.random(n) < 0.3
    array = CacheArray(sets, ways, policy, write_hits_touch=touch)
    want_hit, writebacks = [], 0
    for line, write in zip(lines.tolist(), writes.tolist()):
        hit, _, dirty = array.access(line, write)
        want_hit.append(hit)
        writebacks += dirty
    got = play(lines, writes, sets, ways, policy, write_hits_touch=touch)
    assert got["hit"].tolist() == want_hit
    assert (got["hits"], got["writebacks"], got["dirty_left"]) == (sum(want_hit), writebacks, len(array.dirty))


def test_random_replacement_is_python_only():
    with pytest.raises(ValueError) as err:
        play([1, 2], [False, False], 1, 2, "random")
    assert str(err.value) == "the compiled tag store offers lru, srrip, not 'random'"
