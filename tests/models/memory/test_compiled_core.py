"""The compiled scheduling core of the DRAM controller: the same commands at the same cycles and
the same statistics as the Python path, and no timing violation."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, ParameterError
from archmodel.models.memory import DramController, DramTimingChecker, compiled_core, synthetic_stream
from archmodel.models.memory.commands import RD, WR
from archmodel.models.memory.timing import dram_clock, preset
from archmodel.models.messages import MemRequest

from .wiring import controller_with_checker, ported_controller, run


def _needs_numba():
    assert compiled_core.available(), "numba is not installed: pip install numba (the compiled DRAM core uses it)"


def _stream(dram, pattern, count, seed, write_fraction, gap=0):
    items = synthetic_stream(pattern, count, capacity_bytes=dram.address_map.capacity_bytes,
                             burst_bytes=dram.burst_bytes, seed=seed, write_fraction=write_fraction,
                             hot_bytes=1 << 14, stride_bytes=4096)
    if not gap:
        return items
    # A timed trace: requests arrive while others wait, so arrivals meet a chosen command.
    cycles = np.cumsum(np.random.default_rng(seed).integers(0, gap, count)).tolist()
    return [(c, address, write) for c, (_, address, write) in zip(cycles, items)]


def _record(engine, standard, pattern, count, seed, write_fraction, gap=0, **params):
    top = Component("top", clock=dram_clock(preset(standard)))
    params.setdefault("stop_when_done", True)
    dram = DramController("dram", top, standard=standard, engine=engine, **params)
    overrides = {"ranks": params["ranks"]} if "ranks" in params else None
    checker = DramTimingChecker("checker", top, standard=standard, overrides=overrides)
    checker.watch(dram)
    log = []
    dram.add_command_listener(lambda *fields: log.append(fields))
    dram.attach_stream(_stream(dram, pattern, count, seed, write_fraction, gap))
    sim = run(top)
    stats = {s.path: s.summary() for s in sim.all_stats()}
    assert dram.engine_in_use == engine
    return sim.now, log, stats, dram, checker


def _same(*args, **params):
    """Run one trace on both engines; return the compiled run after checking it against the Python one."""
    _needs_numba()
    python = _record("python", *args, **params)
    compiled = _record("compiled", *args, **params)
    assert compiled[1] == python[1]  # (cycle, command, rank, bank group, bank, flat bank, row, column)
    assert compiled[2] == python[2]  # every statistic of the controller and the checker
    assert compiled[0] == python[0]  # the run ends at the same time
    return compiled


@pytest.mark.parametrize("standard", ["DDR4-2400R", "DDR4-3200AA"])
@pytest.mark.parametrize("pattern, write_fraction", [("sequential", 0.0), ("random", 0.0), ("random", 1 / 3),
                                                     ("sequential", 1 / 3)])
@pytest.mark.parametrize("seed", [1, 2])
def test_the_compiled_core_issues_what_the_python_path_issues(standard, pattern, write_fraction, seed):
    now, log, stats, dram, checker = _same(standard, pattern, 6000, seed, write_fraction)
    assert len(log) > 6000 and dram.refs.value > 0 and checker.violation_count.value == 0
    if write_fraction:
        # Write drains happened: writes were served in runs between reads.
        columns = [fields[1] for fields in log if fields[1] in (RD, WR)]
        switches = sum(1 for a, b in zip(columns, columns[1:]) if a != b)
        assert 10 < switches < len(columns) / 4


def test_refilling_the_stream_in_the_middle_of_a_cycle_changes_nothing(monkeypatch):
    monkeypatch.setattr(compiled_core, "STREAM_CHUNK", 3)
    _same("DDR4-2400R", "hot", 3000, 4, 0.5)
    _same("DDR4-3200AA", "random", 3000, 5, 1 / 3, gap=8)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(standard=st.sampled_from(["DDR4-2400R", "DDR4-3200AA", "DDR5-4800B", "HBM2", "HBM2E"]),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]),
       # (the order matters only with per-bank refresh, so idle_first comes with it)
       refresh=st.sampled_from([("all_bank", "round_robin"), ("per_bank", "round_robin"), ("per_bank", "idle_first"),
                                ("none", "round_robin")]),
       pattern=st.sampled_from(["sequential", "random", "hot", "strided"]),
       write_fraction=st.sampled_from([0.0, 1 / 3, 0.7]),
       gap=st.sampled_from([0, 3, 12]),
       read_queue=st.sampled_from([1, 4, 32, 64]),
       write_queue=st.sampled_from([1, 6, 32, 64]),  # (64: Manticore's HBM2E)
       lookahead=st.sampled_from([1, 64, 512]),
       ranks=st.sampled_from([1, 2]),
       mapping=st.sampled_from(["RoBaRaCoCh", "RoBaRaCoBgCh"]))
def test_any_supported_configuration_runs_the_same_compiled(standard, scheduler, refresh, pattern, write_fraction,
                                                             gap, read_queue, write_queue, lookahead, ranks, mapping):
    refresh, refresh_order = refresh
    params = dict(scheduler=scheduler, refresh=refresh, refresh_order=refresh_order, read_queue=read_queue,
                  write_queue=write_queue, lookahead_cycles=lookahead, stop_when_done=refresh != "none",
                  mapping=mapping)
    # Without refresh and without stop_when_done the run ends when the controller goes quiet.
    if ranks > 1:
        params["ranks"] = ranks
    count = 1500
    now, log, stats, dram, checker = _same(standard, pattern, count, 9, write_fraction, gap, **params)
    assert dram.reads.value + dram.writes.value == count
    if refresh != "none":  # (without refresh the checker rightly reports the missing refreshes)
        assert checker.violation_count.value == 0, checker.violations[:3]


@pytest.mark.parametrize("standard", ["DDR4-2400R", "DDR4-3200AA"])
def test_the_checker_finds_no_violation_in_the_compiled_core_on_random_traffic(standard):
    _needs_numba()
    top, dram, checker = controller_with_checker(standard, engine="compiled")
    dram.attach_stream(_stream(dram, "random", 100_000, 7, 1 / 3))
    run(top)
    assert dram.engine_in_use == "compiled"
    assert dram.reads.value + dram.writes.value == 100_000
    assert checker.commands.value > 200_000 and dram.refs.value > 0
    assert checker.violation_count.value == 0, checker.violations[:3]


def test_the_checker_catches_a_constraint_dropped_from_the_compiled_core():
    _needs_numba()
    top, dram, checker = controller_with_checker("DDR4-2400R", engine="compiled", omit_constraints=("tFAW",))
    dram.attach_stream(_stream(dram, "random", 3000, 3, 1 / 3))
    run(top)
    assert checker.by_constraint.get("tFAW", 0) > 0


def test_auto_keeps_the_python_path_where_the_core_does_not_apply():
    requests = [MemRequest(address=64 * i, size_bytes=64, tag=i) for i in range(4)]
    top, src, dram, sink, checker = ported_controller("DDR4-2400R", requests)
    run(top)
    assert dram.engine_in_use == "python" and len(sink.messages) == 4
    top, dram, checker = controller_with_checker("DDR4-2400R", page_policy="closed")
    dram.attach_stream(_stream(dram, "random", 200, 1, 0.0))
    run(top)
    assert dram.engine_in_use == "python" and dram.reads.value == 200


def test_engine_compiled_where_it_does_not_apply_is_an_error_naming_the_reason():
    top, dram, checker = controller_with_checker("DDR4-2400R", engine="compiled", page_policy="closed")
    dram.attach_stream(_stream(dram, "random", 10, 1, 0.0))
    with pytest.raises(ParameterError, match="page_policy closed"):
        run(top)


def test_every_array_the_core_reads_is_its_part_of_the_one_array_a_call_passes():
    """A call hands numba the core's fixed-size arrays as one (and the buffer's columns as one
    2-D array): the arrays the driver, the snapshot and the answer bounds read must be views
    of it, each its own part, or they would read copies the calls never change."""
    _needs_numba()
    *_, dram, _ = _record("python", "DDR4-2400R", "random", 50, 1, 1 / 3)
    core = compiled_core.CompiledCore(dram, dram.snapshot(), ports=True)
    arrays = [core.nxt, *core.upd, core.gbase, core.rbase, core.rank_of, core.rows, core.hits_run, core.faw,
              core.needs, *core.queues, *core.entries, core.free, core.cmd_log, core.opened, core.job_left]
    assert all(np.shares_memory(array, core.ints) for array in arrays)
    assert sum(array.size for array in arrays) == core.ints.size
    assert all(np.shares_memory(column, core.buffer_rows) for column in core.buffer)
