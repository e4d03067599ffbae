"""The DRAM controller with per-bank command queues (``queue = "per_bank"``, DRAMSim3's
organisation): round robin over banks, the first ready command of a bank's queue, the
write-after-read check, one burst into the banks per cycle, bounded queues, no timing
constraint violated on any traffic, and the engine it runs on."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import ParameterError
from archmodel.models.memory import PRESETS, AddressMapping, synthetic_stream
from archmodel.models.memory.commands import ACT, PRE, RD, WR

from .test_port_ahead import assert_alike, run_both
from .test_splitting import _random_requests, check_against_a_bytearray
from .wiring import attach_synthetic, controller_with_checker, ported_controller, run, writes_then_reads

T = PRESETS["DDR4-2400R"]
MAP = AddressMapping(T)


def _commands(trace, **params):
    """Run a timed trace; return its commands as (cycle, command, flat bank, row, column)."""
    params.setdefault("queue", "per_bank")
    top, dram, checker = controller_with_checker(**params)
    log = []
    dram.add_command_listener(lambda c, k, rank, group, bank, flat, row, column: log.append((c, k, flat, row,
                                                                                           column)))
    dram.attach_stream(trace)
    run(top)
    assert checker.violation_count.value == 0, checker.violations[:3]
    assert dram.reads.value + dram.writes.value == len(trace)
    return [entry for entry in log if entry[1] in (ACT, PRE, RD, WR)], dram


def test_banks_take_turns_after_the_one_that_issued_last():
    # Reads to bank group 3, 2, 1, 0 (flat banks 12, 8, 4, 0), all at cycle 0. One burst a
    # cycle moves into its bank's queue (12 at cycle 0, 8 at 1, 4 at 2, 0 at 3), after the
    # command of that cycle, so the first ACT goes at cycle 1. The next three ACTs are held by
    # tRRD_S and each goes to the next bank in turn after the last that issued: 0, then 4,
    # then 8, not the oldest first as the shared queue's FR-FCFS does.
    trace = [(0, MAP.encode(bankgroup=g, bank=0, row=1, column=0), False) for g in (3, 2, 1, 0)]
    log, dram = _commands(trace)
    acts = [(c, b) for c, k, b, _, _ in log if k == ACT]
    assert acts == [(1, 12), (1 + T.tRRD_S, 0), (1 + 2 * T.tRRD_S, 4), (1 + 3 * T.tRRD_S, 8)]
    shared, _ = _commands(trace, queue="shared")
    assert [(c, b) for c, k, b, _, _ in shared if k == ACT] == [(0, 12), (T.tRRD_S, 8), (2 * T.tRRD_S, 4),
                                                               (3 * T.tRRD_S, 0)]


def test_an_unloaded_read_takes_one_cycle_more_than_with_the_shared_queue():
    # (the cycle its burst moves into the bank's queue)
    trace = [(0, MAP.encode(bankgroup=1, bank=2, row=7, column=3), False)]
    for queue, extra in (("shared", 0), ("per_bank", 1)):
        log, dram = _commands(trace, queue=queue)
        assert list(dram.read_latency.samples) == [extra + T.tRCD + T.CL + T.tBL]


def test_later_hits_to_the_open_row_go_before_the_head_of_the_queue_is_precharged():
    # One bank: row 1 column 0, row 2, then row 1 columns 1 to 5. The first ready command of
    # the bank's queue goes: the hits, one per tCCD_L, before the precharge that only the head
    # (the row 2 read) may ask for, and only once no hit to the open row waits.
    rows = [(1, 0), (2, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]
    trace = [(0, MAP.encode(bankgroup=0, bank=0, row=r, column=col), False) for r, col in rows]
    log, dram = _commands(trace)
    first_rd = 1 + T.tRCD
    last_rd = first_rd + 5 * T.tCCD_L
    assert [(c, k, row, col) for c, k, _, row, col in log] == (
        [(1, ACT, 1, -1)] + [(first_rd + i * T.tCCD_L, RD, 1, i) for i in range(6)]
        + [(last_rd + T.tRTP, PRE, -1, -1), (last_rd + T.tRTP + T.tRP, ACT, 2, -1),
           (last_rd + T.tRTP + T.tRP + T.tRCD, RD, 2, 0)])
    assert dram.row_hits.value == 5 and dram.row_misses.value == 1 and dram.row_conflicts.value == 1


def test_a_write_waits_for_an_earlier_read_of_its_burst_in_the_queue():
    # Queue of bank 0: write Y, read X, write X (a drain for Y as no read waits, reads again
    # for X, a drain for the second write). The write of X would be ready tCCD_L after Y's,
    # the read only after the write-to-read turnaround: the write waits for the read.
    x = MAP.encode(bankgroup=0, bank=0, row=1, column=3)
    y = MAP.encode(bankgroup=0, bank=0, row=1, column=0)
    log, dram = _commands([(0, y, True), (1, x, False), (2, x, True)])
    wr_y = 1 + T.tRCDWR
    rd_x = wr_y + T.CWL + T.tBL + T.tWTR_L
    assert [(c, k, col) for c, k, _, _, col in log] == [(1, ACT, -1), (wr_y, WR, 0), (rd_x, RD, 3),
                                                        (log[3][0], WR, 3)]
    assert log[3][0] > rd_x


def test_each_bank_queue_holds_at_most_its_depth():
    top, dram, checker = controller_with_checker(queue="per_bank", command_queue=3)
    rng = random.Random(2)
    # Bank groups 0 and 2, bank 1 (flat banks 1 and 9), random rows and columns, a third writes.
    trace = [(0, MAP.encode(bankgroup=rng.choice((0, 2)), bank=1, row=rng.randrange(64),
                            column=rng.randrange(128)), rng.random() < 1 / 3) for _ in range(3000)]
    dram.attach_stream(trace)
    run(top)
    assert dram.reads.value + dram.writes.value == 3000 and checker.violation_count.value == 0
    # The untimed trace keeps both banks' queues full, 3 bursts each, and the read queue too.
    assert dram.command_queue_depth.maximum == 2 * 3
    assert dram.read_queue_depth.maximum == 32


@settings(max_examples=10, deadline=None, derandomize=True)
@given(standard=st.sampled_from(sorted(PRESETS)),
       refresh=st.sampled_from(["all_bank", "none"]),
       pattern=st.sampled_from(["sequential", "random", "hot", "strided"]),
       write_fraction=st.sampled_from([0.0, 1 / 3, 0.9]),
       queue=st.integers(2, 32),
       depth=st.integers(1, 8),
       ranks=st.sampled_from([1, 2]))
def test_per_bank_queues_obey_every_constraint_and_serve_every_request(standard, refresh, pattern, write_fraction,
                                                                      queue, depth, ranks):
    params = dict(queue="per_bank", command_queue=depth, refresh=refresh, read_queue=queue, write_queue=queue,
                  stop_when_done=refresh != "none")
    top, dram, checker = controller_with_checker(standard, ranks=ranks, **params)
    count = 1500
    attach_synthetic(dram, pattern, count, write_fraction)
    run(top)
    assert dram.reads.value + dram.writes.value == count
    if refresh != "none":  # (without refresh the checker rightly reports the missing refreshes)
        assert checker.violation_count.value == 0, checker.violations[:3]


def test_through_its_ports_every_read_sees_the_earlier_writes_and_is_answered():
    requests, expected = writes_then_reads(60, read_bytes=128)
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests, queue="per_bank")
    run(top)
    assert {m.tag: m.data for m in sink.messages if m.data is not None} == expected
    assert [m.tag for m in sink.messages] == [r.tag for r in requests]
    assert checker.violation_count.value == 0


def _record(lookahead):
    top, dram, checker = controller_with_checker("DDR4-3200AA", queue="per_bank", lookahead_cycles=lookahead)
    log = []
    dram.add_command_listener(lambda *fields: log.append(fields))
    dram.attach_stream(synthetic_stream("random", 3000, capacity_bytes=dram.address_map.capacity_bytes,
                                        burst_bytes=dram.burst_bytes, seed=5, write_fraction=1 / 3))
    sim = run(top)
    return sim.now, log, {s.path: s.summary() for s in sim.all_stats()}


def test_scheduling_ahead_of_simulated_time_changes_nothing_with_per_bank_queues():
    exact, ahead = _record(0), _record(512)
    assert len(exact[1]) > 6000 and exact == ahead


def test_auto_runs_per_bank_queues_on_the_python_path_and_compiled_is_an_error():
    top, dram, checker = controller_with_checker(queue="per_bank")
    dram.attach_stream(synthetic_stream("random", 200, capacity_bytes=dram.address_map.capacity_bytes,
                                        burst_bytes=dram.burst_bytes, seed=1))
    run(top)
    assert dram.engine_in_use == "python" and dram.reads.value == 200
    top, dram, checker = controller_with_checker(queue="per_bank", engine="compiled")
    dram.attach_stream([(0, 0, False)])
    with pytest.raises(ParameterError, match=r"engine compiled does not apply: queue per_bank \(the compiled core "
                                             r"does the shared queue\)"):
        run(top)


@pytest.mark.parametrize("name, value, allowed", [("page_policy", "closed", "open"),
                                                  ("refresh", "per_bank", "all_bank or none"),
                                                  ("scheduler", "fcfs", "frfcfs or frfcfs_cap")])
def test_what_per_bank_queues_do_not_take_is_an_error_with_a_hint(name, value, allowed):
    with pytest.raises(ParameterError) as err:
        controller_with_checker(queue="per_bank", **{name: value})
    assert err.value.message == f"top.dram: queue per_bank does not take {name} {value}"
    assert err.value.hint == f"with per-bank command queues {name} is {allowed}"


def test_a_snapshot_of_per_bank_queues_is_an_error():
    top, dram, checker = controller_with_checker(queue="per_bank")
    with pytest.raises(ParameterError, match="not queue per_bank's"):
        dram.snapshot()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       depth=st.sampled_from([1, 8]), spread=st.sampled_from([0, 400, 4000]), stall=st.sampled_from([0.0, 0.3]))
def test_through_the_ports_per_bank_queues_scheduled_ahead_match_the_cycle_by_cycle_reference(seed, standard, depth,
                                                                                             spread, stall):
    base, span = 0, 1 << 14
    requests = _random_requests(seed, 40, span, base)
    cycles = sorted(random.Random(seed + 7).randrange(0, spread + 1) for _ in requests)
    reference, ahead = run_both(standard, requests, cycles, stall=stall, seed=seed, queue="per_bank",
                                command_queue=depth)
    assert_alike(reference, ahead)
    assert ahead["ticks"] <= reference["ticks"]
    check_against_a_bytearray(requests, ahead["sink"].messages, base, span, ahead["dram"])
