"""The DRAM controller's write drain, as Ramulator 2 runs it: where it starts and ends, how many
writes it issues before reads resume, and that a burst whose row was activated for it is served
before its bank is precharged, whatever the mode (both engines)."""

import pytest

from archmodel.kernel import Simulator
from archmodel.models.memory import PRESETS, AddressMapping, compiled_core, synthetic_stream
from archmodel.models.memory.commands import ACT, PRE, RD, WR
from archmodel.models.memory.scheduling_core import drain_watermarks

from .wiring import controller_with_checker, run

T = PRESETS["DDR4-2400R"]
MAP = AddressMapping(T)
READ_BANK, WRITE_BANK = 0, 4  # (bank group 0, bank 0) and (bank group 1, bank 0)


def test_the_watermarks_are_more_than_high_and_fewer_than_low_of_the_queue():
    assert drain_watermarks(0.8, 0.2, 32) == (26, 6)
    assert drain_watermarks(0.5, 0.25, 32) == (17, 7)  # exactly 8 of 32 is not fewer than a quarter
    assert drain_watermarks(1.0, 0.0, 32) == (33, -1)  # a drain only once no read waits, to the last write


def _drain_run(engine, writes, last_write=None, **params):
    """32 reads to one bank, each a row conflict (one per tRC, so reads wait for some 1,700
    cycles), and ``writes`` writes along one row of a bank in another bank group, one every 10
    cycles, the last at cycle 340 (to another row of the reads' bank if ``last_write``).
    Returns the commands as (cycle, command, flat bank, row) and the controller."""
    reads = [(0, MAP.encode(bankgroup=0, bank=0, row=r, column=0), False) for r in range(1, 33)]
    first = 340 - 10 * (writes - 1)
    trace = [(first + 10 * i, MAP.encode(bankgroup=1, bank=0, row=5, column=i), True) for i in range(writes)]
    if last_write is not None:
        trace[-1] = (340, MAP.encode(bankgroup=0, bank=0, row=last_write, column=0), True)
    top, dram, checker = controller_with_checker(engine=engine, **params)
    log = []
    dram.add_command_listener(lambda c, k, rank, group, bank, flat, row, column: log.append((c, k, flat, row)))
    dram.attach_stream(reads + trace)
    run(top)
    assert checker.violation_count.value == 0, checker.violations[:3]
    assert dram.engine_in_use == engine
    assert dram.reads.value == 32 and dram.writes.value == writes
    return log, dram


ENGINES = ["python", "compiled"]


@pytest.fixture(params=ENGINES)
def engine(request):
    if request.param == "compiled":
        assert compiled_core.available(), "numba is not installed: pip install numba"
    return request.param


@pytest.mark.parametrize("high, low, start, end", [(0.8, 0.2, 26, 6), (0.5, 0.25, 17, 7)])
def test_a_drain_starts_at_the_write_that_passes_the_high_mark_and_ends_below_the_low_one(engine, high, low,
                                                                                         start, end):
    log, dram = _drain_run(engine, start, write_high=high, write_low=low)
    writes = [(c, k) for c, k, bank, _ in log if bank == WRITE_BANK]
    # Nothing of the writes before the one that fills the queue to `start` arrives (cycle 340);
    # then the drain opens their row at once (no ACT of the reads' bank within tRRD_S).
    assert writes[0] == (340, ACT)
    # It writes until `end` are left (fewer than `low` of the queue) and reads go on.
    drained = []
    for c, k, bank, _ in log:
        if c < 340:
            continue
        if k in (RD, PRE, ACT) and bank == READ_BANK:
            if drained:
                break
            continue
        if k == WR:
            drained.append(c)
    assert len(drained) == start - end
    # The writes left wait for the next drain: the one the reads' end starts (no read waits).
    last_read = max(c for c, k, _, _ in log if k == RD)
    assert [c > last_read for c, k in writes if k == WR] == [False] * (start - end) + [True] * end


def test_one_write_fewer_starts_no_drain_while_reads_wait(engine):
    log, dram = _drain_run(engine, 25)
    last_read = max(c for c, k, _, _ in log if k == RD)
    assert min(c for c, k, bank, _ in log if bank == WRITE_BANK) > last_read


def test_a_read_whose_row_was_opened_before_the_drain_is_served_in_it(engine):
    # The 7th read's row is opened at cycle 330 (one per tRC = 55 from cycle 0); the 26th write,
    # to another row of that bank, arrives at 340 and starts the drain. The read's RD still
    # goes at 330 + tRCD, and the bank is precharged for the write only after it (at tRAS),
    # as Ramulator 2 serves its active buffer first: no activation is wasted.
    log, dram = _drain_run(engine, 26, last_write=40)
    bank0 = [(c, k, row) for c, k, bank, row in log if bank == READ_BANK and 320 <= c <= 420]
    assert bank0 == [(330, ACT, 7), (330 + T.tRCD, RD, 7), (330 + T.tRAS, PRE, -1),
                     (330 + T.tRAS + T.tRP, ACT, 40), (bank0[4][0], WR, 40)]
    assert min(c for c, k, bank, _ in log if bank == WRITE_BANK) == 340  # the drain began before the RD
    assert dram.acts.value == dram.row_misses.value + dram.row_conflicts.value


@pytest.mark.parametrize("standard", ["DDR4-2400R", "DDR4-3200AA"])
def test_every_activation_serves_the_burst_it_was_issued_for_on_a_read_write_mix(engine, standard):
    # Before a drain kept the rows opened for reads, about 4% of the ACTs of a 2:1 mix were
    # precharged unused and issued again.
    top, dram, checker = controller_with_checker(standard, engine=engine)
    dram.attach_stream(synthetic_stream("random", 8000, capacity_bytes=dram.address_map.capacity_bytes,
                                        burst_bytes=dram.burst_bytes, seed=3, write_fraction=1 / 3))
    run(top)
    assert dram.refs.value > 0 and dram.reads.value + dram.writes.value == 8000
    assert dram.acts.value == dram.row_misses.value + dram.row_conflicts.value
    assert checker.violation_count.value == 0


def _mix_controller(engine):
    # (scheduling at most one cycle ahead, so a run to a time stops the work near it)
    top, dram, checker = controller_with_checker(engine=engine, lookahead_cycles=1)
    log = []
    dram.add_command_listener(lambda *fields: log.append(fields))
    dram.attach_stream(synthetic_stream("random", 4000, capacity_bytes=dram.address_map.capacity_bytes,
                                        burst_bytes=dram.burst_bytes, seed=8, write_fraction=1 / 3))
    return top, dram, log


def _read_opened_beside_a_drain(state) -> bool:
    """A bank's open row waits for a read it was opened for while writes drain, one of them to
    another row of that bank (without the opened read the drain would precharge the row)."""
    return state.write_mode and any(
        seq >= 0 and any(item[0] == seq for item in state.read_queues[b])
        and any(item[2] != state.open_rows[b] for item in state.write_queues[b])
        for b, seq in enumerate(state.opened))


SNAPSHOT_PS = 146 * 833  # cycle 146 of DDR4-2400R: a drain beside a row opened for a read (asserted)


@pytest.mark.parametrize("first, second", [("python", "compiled"), ("compiled", "python")])
def test_a_snapshot_beside_a_drain_continues_on_either_engine(first, second):
    for name in (first, second):
        assert name == "python" or compiled_core.available(), "numba is not installed"
    top, dram, expected = _mix_controller("python")
    run(top)
    top, dram, log = _mix_controller(first)
    sim = Simulator(top)
    sim.run(until_ps=SNAPSHOT_PS)
    state = dram.snapshot()
    assert _read_opened_beside_a_drain(state)
    done = len(log)
    other_top, other, other_log = _mix_controller(second)
    other_sim = Simulator(other_top)
    other_sim.run(until_ps=SNAPSHOT_PS)
    other.restore(state)
    del other_log[:]
    other_sim.run()
    assert log[:done] + other_log == expected
