"""A read response taken between batches (``ResidentDma.port_step``): Python stages its words
and the loop queues them for the lanes at the words ring's tail before its first cycle
(``compiled_dma._take_staged``), as ``SnitchDma.step`` appends them to ``write_words``; Python
grows the ring first when the lanes are behind. (The randomized tests hold whole runs to the
Python model; this holds the ring's order where it wraps and grows.)"""

from types import SimpleNamespace

import numpy as np
import pytest

from archmodel.kernel import ModelAssertion
from archmodel.models.compute import compiled_cluster, compiled_dma
from archmodel.models.compute.compiled_dma_state import ResidentDma
from archmodel.models.compute.compiled_layout import D_RSP_LOCAL, D_RSP_WORDS, D_WIDTH, D_WW_COUNT, D_WW_HEAD


def _engine(ring: list, head: int, queued: int, burst_words: int) -> ResidentDma:
    """The DMA's arrays alone: a words ring of ``ring`` rows, ``queued`` of them from ``head``."""
    dma = ResidentDma()
    dma.cluster = SimpleNamespace(path="top.cluster")
    dma.dm = np.zeros(D_WIDTH, np.int64)
    dma.dm_ints = memoryview(dma.dm)
    dma.dm[D_WW_HEAD], dma.dm[D_WW_COUNT] = head, queued
    dma.ww = np.array(ring, np.int64)
    dma.staged = np.zeros(burst_words, np.int64)
    dma.staged_bytes = memoryview(dma.staged).cast("B")
    return dma


def _words(*values: int) -> bytes:
    return np.array(values, np.int64).tobytes()


def test_the_loop_queues_a_staged_response_at_the_rings_tail_where_it_wraps():
    compiled_cluster._compiled_cluster_cycles()  # (the loop's parts are numba's now)
    dma = _engine([[-1, -1]] * 6, head=4, queued=1, burst_words=4)
    dma._stage_response(0x1000, 32, _words(10, 11, -12, 13))
    assert dma.dm[D_RSP_LOCAL] == 0x1000 and dma.dm[D_RSP_WORDS] == 4 and dma.dm[D_WW_COUNT] == 1
    compiled_dma._take_staged(dma.dm, dma.ww, dma.staged)
    assert dma.ww.tolist() == [[0x1008, 11], [0x1010, -12], [0x1018, 13], [-1, -1], [-1, -1], [0x1000, 10]]
    assert dma.dm[D_WW_COUNT] == 5 and dma.dm[D_WW_HEAD] == 4 and dma.dm[D_RSP_WORDS] == 0


def test_a_response_the_lanes_have_no_room_for_grows_the_ring_in_order_first():
    dma = _engine([[0x20, 2], [-1, -1], [0x10, 1]], head=2, queued=2, burst_words=4)
    dma._stage_response(0x2000, 24, _words(7, 8, 9, 99))  # (a response's bytes past the burst's are not its)
    assert dma.dm[D_WW_HEAD] == 0 and dma.ww[:2].tolist() == [[0x10, 1], [0x20, 2]] and len(dma.ww) == 10
    compiled_dma._take_staged(dma.dm, dma.ww, dma.staged)
    assert dma.ww[:5].tolist() == [[0x10, 1], [0x20, 2], [0x2000, 7], [0x2008, 8], [0x2010, 9]]
    assert dma.dm[D_WW_COUNT] == 5


def test_a_second_response_before_the_loop_took_the_first_is_refused():
    dma = _engine([[0, 0]] * 8, head=0, queued=0, burst_words=2)
    dma._stage_response(0x2000, 16, _words(1, 2))
    with pytest.raises(ModelAssertion, match="staged before"):
        dma._stage_response(0x3000, 16, _words(3, 4))
