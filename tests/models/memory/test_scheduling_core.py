"""The DRAM scheduling core both controllers share: the drain watermarks of each rule, the rule
as a parameter of DramController (the in-DRAM cache's is tested in test_indram_cache.py), and
the bank activity that background energy reads (``active_cycles_so_far``,
``banks_open_since``, ``background_pj``)."""

import pytest

from archmodel.kernel import Component, ParameterError, Simulator
from archmodel.models.memory import PRESETS, AddressMapping, InDramCacheController
from archmodel.models.memory.commands import ACT, PRE, RD
from archmodel.models.memory.energy import DramEnergy
from archmodel.models.memory.scheduling_core import drain_watermarks
from archmodel.models.memory.timing import dram_clock

from .test_write_drain import WRITE_BANK, _drain_run
from .wiring import controller_with_checker

T = PRESETS["DDR4-2400R"]


def test_each_drain_rule_rounds_its_watermarks_its_own_way():
    assert drain_watermarks(0.8, 0.2, 32) == (26, 6)
    assert drain_watermarks(0.8, 0.2, 32, "inclusive") == (25, 6)
    assert drain_watermarks(0.8, 0.2, 10, "inclusive") == (8, 2)
    assert drain_watermarks(0.8, 0.2, 10, "ramulator2") == (9, 1)
    assert drain_watermarks(0.1, 0.0, 4, "inclusive") == (1, 0)  # at least one write starts a drain
    with pytest.raises(ParameterError, match="unknown write-drain rule 'ramulator'"):
        drain_watermarks(0.8, 0.2, 32, "ramulator")


@pytest.mark.parametrize("rule, starts_at_340", [("inclusive", True), ("ramulator2", False)])
def test_the_controller_takes_the_in_dram_caches_drain_rule_as_a_parameter(rule, starts_at_340):
    # 25 writes fill the queue to 25 at cycle 340 while reads wait: the inclusive rule drains
    # at once, Ramulator 2's (more than 80% of 32) only once no read waits.
    log, _ = _drain_run("python", 25, write_drain=rule)
    first = next((c, k) for c, k, bank, _ in log if bank == WRITE_BANK)
    assert (first == (340, ACT)) is starts_at_340
    assert starts_at_340 or first[0] > 340


def test_bank_activity_counts_the_cycles_a_bank_is_open_the_open_stretch_included():
    # (lookahead_cycles 0: run ahead, the controller would have done cycle 39's PRE by cycle 20)
    top, dram, _ = controller_with_checker("DDR4-2400R", page_policy="closed", refresh="none", stop_when_done=False,
                                           lookahead_cycles=0, engine="python")
    log = []
    dram.add_command_listener(lambda cycle, kind, *rest: log.append((cycle, kind)))
    dram.attach_stream([(0, AddressMapping(T).encode(bank=1, row=5), False)])
    sim = Simulator(top)
    sim.run(cycles=20)
    # ACT at 0; the row is still open: the open stretch counts up to now.
    assert dram.banks_open_since == 0 and dram.active_cycles.value == 0
    assert dram.active_cycles_so_far == dram.elapsed_cycles
    sim.run(cycles=100)
    assert log == [(0, ACT), (16, RD), (39, PRE)]
    assert dram.banks_open_since is None and dram.active_cycles.value == dram.active_cycles_so_far == 39


def test_background_energy_is_active_standby_while_open_and_precharged_standby_otherwise():
    e = DramEnergy(T)
    assert e.background_pj(39, 40) == 39 * e.active_pj_per_cycle + 1 * e.precharged_pj_per_cycle
    assert e.background_pj(0, 10) == 10 * e.precharged_pj_per_cycle
    assert e.background_pj(12, 10) == 12 * e.active_pj_per_cycle  # (never a negative idle time)


def test_the_in_dram_caches_energy_is_its_commands_plus_the_background_of_its_bank_activity():
    top = Component("top", clock=dram_clock(T))
    dram = InDramCacheController("dram", top, standard="DDR4-2400R", cache="none")
    dram.attach_cores([[(1, 5, 0, False), (1, 5, 1, False)]])
    Simulator(top, seed=1).run()
    e = dram.energy
    assert (dram.acts.value, dram.reads.value, dram.writes.value, dram.refs.value) == (1, 2, 0, 0)
    # The row stays open (open page) from its ACT at cycle 0 to the end of the run.
    assert dram.banks_open_since == 0 and dram.active_cycles_so_far == dram.elapsed_cycles
    expected = e.act_pre_pj + 2 * e.read_pj + e.background_pj(dram.elapsed_cycles, dram.elapsed_cycles)
    assert dram.energy_nj.value == pytest.approx(expected / 1000, rel=1e-12)
    assert dram.reloc_energy_nj.value == 0 and dram.pres.value == 0
