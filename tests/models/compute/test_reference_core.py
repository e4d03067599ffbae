"""ReferenceCore: the window bounds references in flight, a dependent reference waits for its
source while independent ones run ahead, references to one word keep program order, phases
meet at a barrier, a store buffer lets stores retire once issued, and a wrong read answer
stops the run naming the reference."""

import numpy as np
import pytest

from archmodel.kernel import ClockDomain, Component, ModelAssertion, Simulator, connect
from archmodel.models.compute import Barrier, FixedLatencyMemory, ReferenceCore, References


def refs(addresses, writes=None, deps=None, gaps=None, values=None):
    n = len(addresses)
    return References(addresses, [8] * n, writes or [False] * n, gaps or [0] * n, deps or [0] * n,
                      values or [0] * n)


def system(streams, window=4, latency=10, phase_ends=None, store_buffer=0):
    top = Component("top", clock=ClockDomain("clk", 1000))
    mem = FixedLatencyMemory("mem", top, base_address=0, size_bytes=1 << 16, latency_cycles=latency,
                             bytes_per_cycle=64)
    cores = []
    barrier = Barrier(len(streams)) if phase_ends else None
    for k, stream in enumerate(streams):
        core = ReferenceCore(f"core{k}", top, window=window, store_buffer=store_buffer)
        core.load(stream, phase_ends[k] if phase_ends else None, barrier)
        cores.append(core)
    if len(cores) == 1:
        connect(cores[0].req, mem.req)
        connect(mem.rsp, cores[0].resp)
    return top, cores, mem


def test_the_window_bounds_references_in_flight():
    # 8 independent reads on a memory answering 1 + 10 cycles after it takes each: a round
    # trip of 13 cycles (the links both ways). With a window of 1 each waits for the last,
    # with 8 they enter one a cycle and overlap.
    done = {}
    for window in (1, 8):
        top, (core,), mem = system([refs([8 * i for i in range(8)])], window=window)
        Simulator(top).run()
        done[window] = core.done_cycle
    assert done[1] == 8 * 13
    assert done[8] == 13 + 7


def test_a_dependent_reference_waits_and_independent_ones_run_ahead():
    # reference 1 needs reference 0's value; 2 and 3 need nothing and issue before 1
    top, (core,), mem = system([refs([0, 64, 128, 192], deps=[0, 1, 0, 0])], window=4)
    Simulator(top).run()
    # 0 issues at cycle 0, 2 and 3 at 2 and 3 (one enters a cycle), 1 once 0's answer is in
    # at 13: done at 13 + 13
    assert core.done_cycle == 26
    assert core.dependence_stalls.value > 0


def test_references_to_one_word_keep_program_order():
    # a read of word 0 behind a write to it, the write waiting for a slow load: the read
    # must see the write's value, so it may not overtake it
    stream = refs([64, 0, 0], writes=[False, True, False], deps=[0, 1, 0], values=[0, 7, 7])
    top, (core,), mem = system([stream], window=4)
    Simulator(top).run()
    assert core.done and mem.backdoor_read(0, 8) == (7).to_bytes(8, "little")


def test_with_a_store_buffer_stores_retire_once_issued_and_free_their_entry_when_answered():
    # 4 stores then 4 reads through a window of 1 on a 13-cycle round trip. Without a store
    # buffer every reference waits for its answer: 8 x 13. With 4 entries the stores enter
    # and leave the window one a cycle (0..3), the reads then go one at a time from cycle 4,
    # so the last answer comes at 4 + 4 x 13; with 1 entry each store waits for the one
    # before it to be answered.
    stream = refs([8 * i for i in range(8)], writes=[True] * 4 + [False] * 4)
    done, stalls = {}, {}
    for entries in (0, 1, 4):
        top, (core,), mem = system([stream], window=1, store_buffer=entries)
        Simulator(top).run()
        done[entries], stalls[entries] = core.done_cycle, core.store_buffer_stalls.value
    assert done[0] == 8 * 13
    assert done[4] == 4 + 4 * 13 and stalls[4] == 0
    assert done[4] < done[1] < done[0] and stalls[1] > 0


def test_a_store_in_the_store_buffer_keeps_program_order_to_its_word_and_holds_the_barrier():
    # the read of word 0 behind the store to it still sees the store; the phase's last
    # reference is a store, so the barrier (and the core's end) waits for its answer
    stream = refs([64, 0, 0, 8], writes=[False, True, False, True], deps=[0, 1, 0, 0], values=[0, 7, 7, 9])
    top, (core,), mem = system([stream], window=4, store_buffer=2)
    Simulator(top).run()
    assert core.done and mem.backdoor_read(0, 16) == (7).to_bytes(8, "little") + (9).to_bytes(8, "little")
    # the store to word 0 issues when the load at 64 is answered (13), the read of the word
    # the cycle after (one issue a cycle), answered a round trip later
    assert core.done_cycle == 14 + 13


def test_phases_meet_at_the_barrier():
    # two cores on their own memories: a short first phase and a long one; both start
    # phase two only after the slower finished phase one (plus the barrier's 20 cycles)
    top = Component("top", clock=ClockDomain("clk", 1000))
    barrier = Barrier(2)
    cores = []
    for k, first in enumerate((1, 6)):
        mem = FixedLatencyMemory(f"mem{k}", top, base_address=0, size_bytes=1 << 16, latency_cycles=10)
        core = ReferenceCore(f"core{k}", top, window=1)
        core.load(refs([8 * i for i in range(first + 1)]), [first], barrier)
        connect(core.req, mem.req)
        connect(mem.rsp, core.resp)
        cores.append(core)
    Simulator(top).run()
    # the slower core's phase one ends at 6 * 13, both go on 20 cycles later
    assert cores[0].done_cycle == cores[1].done_cycle == 6 * 13 + 20 + 13
    assert cores[0].barrier_cycles.value == 6 * 13 + 20 - 13
    assert barrier.episodes == 1


def test_a_wrong_read_answer_names_the_reference():
    top, (core,), mem = system([refs([0, 8], values=[0, 5])])
    with pytest.raises(ModelAssertion) as err:
        Simulator(top).run()
    assert str(err.value).endswith("reference 1: read of 8 bytes at 0x8 returned 0000000000000000, "
                                   "the workload expects 0500000000000000")


def test_a_stream_checks_its_arrays():
    with pytest.raises(ValueError) as err:
        References([0, 8], [8, 8], [False, False], [0, 0], [0, 2], [0, 0])
    assert str(err.value) == "references: a dependence must point back to an earlier reference"
    assert len(References.concatenate([refs([0]), refs([8, 16])])) == 3
    assert np.array_equal(refs([0, 8]).check, [True, True])
