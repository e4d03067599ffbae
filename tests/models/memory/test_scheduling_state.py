"""Snapshot and restore of the DRAM controller's scheduling state: a run continued from a
snapshot, in the same controller or in another one, issues the same commands and ends with
the same statistics as the run never interrupted."""

import pytest

from archmodel.kernel import Component, ModelAssertion, Simulator
from archmodel.models.memory import DramController, compiled_core, synthetic_stream
from archmodel.models.memory.timing import dram_clock, preset
from archmodel.models.messages import MemRequest

from .wiring import ported_controller

STANDARD = "DDR4-2400R"


def _controller(engine, **params):
    top = Component("top", clock=dram_clock(preset(STANDARD)))
    dram = DramController("dram", top, standard=STANDARD, engine=engine, stop_when_done=True, **params)
    log = []
    dram.add_command_listener(lambda *fields: log.append(fields))
    return top, dram, log


def _trace(dram, seed, count=4000):
    return synthetic_stream("hot", count, capacity_bytes=dram.address_map.capacity_bytes,
                            burst_bytes=dram.burst_bytes, seed=seed, write_fraction=1 / 3, hot_bytes=1 << 14)


def _stats(sim):
    return {s.path: s.summary() for s in sim.all_stats()}


def _uninterrupted(engine, **params):
    top, dram, log = _controller(engine, **params)
    dram.attach_stream(_trace(dram, 1))
    sim = Simulator(top)
    sim.run()
    return sim.now, log, _stats(sim)


def _engines(first, second):
    # numba is a dependency: a machine without it is a broken install, not a reason to skip
    assert "compiled" not in (first, second) or compiled_core.available(), "numba is not installed"


# the compiled core runs only ahead, so it has no lookahead-0 case
@pytest.mark.parametrize("engine, lookahead", [("python", 0), ("python", 512), ("compiled", 512)])
def test_restoring_a_snapshot_into_the_same_controller_mid_run_changes_nothing(engine, lookahead):
    _engines(engine, engine)
    expected = _uninterrupted(engine, lookahead_cycles=lookahead)
    top, dram, log = _controller(engine, lookahead_cycles=lookahead)
    dram.attach_stream(_trace(dram, 1))
    sim = Simulator(top)
    sim.run(until_ps=10_000_000)
    state = dram.snapshot()
    assert state.queued > 0 and any(row >= 0 for row in state.open_rows) and state.counters["refs"] > 0
    dram.restore(state)
    assert dram.engine_in_use == engine
    sim.run()
    assert (sim.now, log, _stats(sim)) == expected


def test_a_run_returning_before_a_restored_compiled_core_works_leaves_the_restored_statistics():
    """The compiled core built at a restore has not loaded the queue-depth levels yet: a run
    returning before its first call (its settle hands over what the core holds) leaves the
    restored statistics as they are, and the run goes on as if never interrupted."""
    _engines("compiled", "compiled")
    expected = _uninterrupted("compiled")
    top, dram, log = _controller("compiled")
    dram.attach_stream(_trace(dram, 1))
    sim = Simulator(top)
    sim.run(until_ps=10_000_000)
    dram.restore(dram.snapshot())
    restored = _stats(sim)
    assert sim.run(until_ps=sim.now).reason == "limit"
    assert _stats(sim) == restored
    sim.run()
    assert (sim.now, log, _stats(sim)) == expected


@pytest.mark.parametrize("first, second, scheduler", [
    ("python", "python", "frfcfs"), ("compiled", "compiled", "frfcfs"), ("compiled", "python", "frfcfs"),
    ("python", "compiled", "frfcfs"), ("python", "python", "frfcfs_cap"), ("compiled", "python", "frfcfs_cap")])
def test_another_controller_continues_from_a_snapshot_as_the_first_would_have(first, second, scheduler):
    """The second controller ran a different trace to the same time; after the restore it
    does what the first would have done (whichever engine each uses), so the first's commands
    before the snapshot and the second's after it are the uninterrupted run's."""
    _engines(first, second)
    expected = _uninterrupted("python", scheduler=scheduler, row_hit_cap=2)
    limit = 9_000_000
    top, dram, log = _controller(first, scheduler=scheduler, row_hit_cap=2)
    dram.attach_stream(_trace(dram, 1))
    Simulator(top).run(until_ps=limit)
    state = dram.snapshot()
    other_top, other, other_log = _controller(second, scheduler=scheduler, row_hit_cap=2)
    other.attach_stream(_trace(other, 2))
    sim = Simulator(other_top)
    sim.run(until_ps=limit)
    other.restore(state)
    done = len(log)
    del other_log[:]
    sim.run()
    assert sim.now == expected[0]
    assert log[:done] + other_log == expected[1]
    assert {path.replace("top.", "", 1): v for path, v in _stats(sim).items()} == {
        path.replace("top.", "", 1): v for path, v in expected[2].items()}


@pytest.mark.parametrize("first, second", [("python", "compiled"), ("compiled", "python")])
def test_a_snapshot_carries_the_round_of_idle_first_refreshes(first, second):
    # taken in the middle of a round: the sets already refreshed in it must stay out of the
    # choice after the restore, on either engine
    _engines(first, second)
    params = dict(refresh="per_bank", refresh_order="idle_first")
    expected = _uninterrupted("python", **params)
    limit = 9_000_000
    top, dram, log = _controller(first, **params)
    dram.attach_stream(_trace(dram, 1))
    Simulator(top).run(until_ps=limit)
    state = dram.snapshot()
    sets = dram.timing.tREFI // dram.timing.tREFIpb
    assert 0 < state.refpb_done < (1 << sets) - 1 and state.refpb_done != (1 << bin(state.refpb_done).count("1")) - 1
    other_top, other, other_log = _controller(second, **params)
    other.attach_stream(_trace(other, 2))
    sim = Simulator(other_top)
    sim.run(until_ps=limit)
    other.restore(state)
    done = len(log)
    del other_log[:]
    sim.run()
    assert log[:done] + other_log == expected[1] and sim.now == expected[0]


def test_a_snapshot_refuses_requests_in_flight_from_a_port():
    requests = [MemRequest(address=64 * i, size_bytes=256, tag=i) for i in range(8)]
    top, src, dram, sink, checker = ported_controller(STANDARD, requests)
    sim = Simulator(top)
    sim.run(until_ps=20_000)
    with pytest.raises(ModelAssertion, match="requests from 'req' are in flight"):
        dram.snapshot()
