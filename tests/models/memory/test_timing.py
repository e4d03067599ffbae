"""Timing presets and address mapping."""

import pytest

from archmodel.kernel import ArchError, Component, ParameterError
from archmodel.models.memory import (NAMED_ORDERS, PRESETS, AddressMapping, DramController,
                                     fast_subarray_timing, preset)


def test_ddr4_2400r_figures_are_the_validation_ones():
    t = preset("DDR4-2400R")
    assert (t.tCK_ps, t.CL, t.tRCD, t.tRP, t.tRAS, t.tRC, t.CWL, t.tBL) == (833, 16, 16, 16, 39, 55, 12, 4)
    assert (t.tCCD_S, t.tCCD_L, t.tRRD_S, t.tRRD_L, t.tFAW, t.tWTR_S, t.tWTR_L, t.tWR, t.tRTP) == (
        4, 6, 4, 6, 26, 3, 9, 18, 9)
    assert (t.tRFC, t.tREFI) == (433, 9364)


def test_every_preset_is_consistent_and_has_a_clock():
    assert set(PRESETS) == {"DDR4-2400R", "DDR4-3200AA", "HBM2", "DDR5-4800B", "HBM2E"}
    for t in PRESETS.values():
        assert t.tRC >= t.tRAS + t.tRP
        assert t.validated() is t


def test_an_impossible_timing_set_is_an_error_with_a_hint():
    with pytest.raises(ArchError) as err:
        preset("DDR4-2400R").override(tRC=50)
    assert str(err.value) == ("error: DDR4-2400R: tRC (50) is less than tRAS + tRP (55)\n"
                              "hint: a row stays open tRAS and precharges tRP before the bank can activate "
                              "again: raise tRC to at least 55 or lower tRAS + tRP")


def test_the_controller_reports_an_impossible_override_at_its_path():
    with pytest.raises(ParameterError, match=r"top.dram: DDR4-3200AA: tRC \(60\) is less than tRAS \+ tRP"):
        DramController("dram", Component("top"), standard="DDR4-3200AA", tRC=60)


def test_overrides_change_the_preset():
    top = Component("top")
    dram = DramController("dram", top, tRCD=18, tRC=57)
    assert dram.timing.tRCD == 18 and dram.timing.tRC == 57 and dram.timing.tRP == 16


def test_reference_mapping_keeps_consecutive_bursts_in_one_row():
    t = preset("DDR4-2400R")
    m = AddressMapping(t, "RoBaRaCoCh")
    assert m.decode(0) == (0, 0, 0, 0, 0, 0)
    assert m.decode(64) == (0, 0, 0, 0, 0, 1)
    assert m.decode(64 * 128) == (0, 0, 1, 0, 0, 0)  # next row-sized block: next bank group
    assert m.decode(64 * 128 * 4) == (0, 0, 0, 1, 0, 0)  # then the next bank
    assert m.decode(64 * 128 * 16) == (0, 0, 0, 0, 1, 0)  # then the next row
    assert m.capacity_bytes == 8 << 30


@pytest.mark.parametrize("order", NAMED_ORDERS)
def test_every_order_round_trips(order):
    t = preset("DDR4-2400R")
    m = AddressMapping(t, order)
    for fields in [(0, 0, 3, 2, 12345, 77), (0, 0, 1, 3, 65535, 127), (0, 0, 0, 0, 1, 0)]:
        assert m.decode(m.encode(*fields)) == fields


def test_rocobarach_spreads_consecutive_bursts_over_bank_groups():
    m = AddressMapping(preset("DDR4-2400R"), "RoCoBaRaCh")
    groups = [m.decode(64 * i)[2] for i in range(4)]
    assert groups == [0, 1, 2, 3]


def test_a_bad_order_is_an_error():
    with pytest.raises(ArchError, match="not an order of the fields"):
        AddressMapping(preset("DDR4-2400R"), "RoBaXxCoCh")


def test_fast_subarray_timing_scales_the_array_timings_by_the_tl_dram_near_segment_ratios():
    fast = fast_subarray_timing(preset("DDR4-2400R"))
    # ceil(16 x 3/5), ceil(16 x 3/5), ceil(39 x 10/15), max(ceil(55 x 13/20), 26 + 10)
    assert (fast.tRCD, fast.tRP, fast.tRAS, fast.tRC) == (10, 10, 26, 36)
    assert (fast.CL, fast.tCCD_L, fast.tFAW, fast.tRFC) == (16, 6, 26, 433)
    fast = fast_subarray_timing(preset("DDR4-3200AA"))
    assert (fast.tRCD, fast.tRP, fast.tRAS, fast.tRC) == (14, 14, 35, 49)
    assert fast.name == "DDR4-3200AA fast subarray"
