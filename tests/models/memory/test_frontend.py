"""Trace readers, synthetic streams and the traffic generator component."""

import pytest

from archmodel.kernel import ArchError, Component, Simulator, Span, connect
from archmodel.models.basic import Sink
from archmodel.models.memory import (DramController, DramTrafficGenerator, dramsim3_trace, ramulator_trace,
                                     synthetic_stream)
from archmodel.models.memory.timing import dram_clock, preset


def test_ramulator_trace_reads_loads_and_stores(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("LD 0x40\n# comment\n\nST 0x80\nLD 192\n")
    assert list(ramulator_trace(str(path))) == [(0, 0x40, False), (0, 0x80, True), (0, 192, False)]
    where = [Span(str(path), line, 1) for line in (1, 4, 5)]
    assert list(ramulator_trace(str(path), with_lines=True)) == [(0, 0x40, False, where[0]), (0, 0x80, True, where[1]),
                                                                 (0, 192, False, where[2])]


def test_dramsim3_trace_reads_timed_requests(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("0x40 READ 0\n0x1000 WRITE 5\n")
    assert list(dramsim3_trace(str(path))) == [(0, 0x40, False), (5, 0x1000, True)]
    assert list(dramsim3_trace(str(path), with_lines=True)) == [(0, 0x40, False, Span(str(path), 1, 1)),
                                                                (5, 0x1000, True, Span(str(path), 2, 1))]


@pytest.mark.parametrize("reader, text, message", [
    (ramulator_trace, "LD 0x40\nLOAD 0x80\n", ":2:1: error: expected 'LD 0xADDR' or 'ST 0xADDR', got 'LOAD 0x80'"),
    (ramulator_trace, "LD 0x4g\n", ":1:1: error: '0x4g' is not an address"),
    (dramsim3_trace, "0x40 READ 3\n0x80 READ 1\n", ":2:1: error: cycle 1 comes before the previous line's cycle 3"),
    (dramsim3_trace, "0x40 FETCH 3\n", ":1:1: error: expected '0xADDR READ|WRITE cycle', got '0x40 FETCH 3'"),
])
def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path, reader, text, message):
    path = tmp_path / "bad.trace"
    path.write_text(text)
    with pytest.raises(ArchError) as err:
        list(reader(str(path)))
    assert str(err.value).startswith(str(path) + message)


def test_synthetic_streams_are_burst_aligned_and_seeded():
    a = list(synthetic_stream("random", 100, capacity_bytes=1 << 20, seed=4, write_fraction=1 / 3))
    b = list(synthetic_stream("random", 100, capacity_bytes=1 << 20, seed=4, write_fraction=1 / 3))
    assert a == b and all(addr % 64 == 0 and addr < 1 << 20 for _, addr, _ in a)
    assert 15 < sum(w for _, _, w in a) < 50
    seq = [addr for _, addr, _ in synthetic_stream("sequential", 4, capacity_bytes=1 << 20)]
    assert seq == [0, 64, 128, 192]
    hot = [addr for _, addr, _ in synthetic_stream("hot", 1000, capacity_bytes=1 << 30, hot_bytes=4096, seed=1)]
    assert sum(addr < 4096 for addr in hot) > 850


def test_a_dramsim3_trace_drives_the_controller_through_its_port(tmp_path):
    path = tmp_path / "t.trace"
    path.write_text("".join(f"{hex(64 * i)} {'WRITE' if i % 3 == 2 else 'READ'} {4 * i}\n" for i in range(30)))
    top = Component("top", clock=dram_clock(preset("DDR4-2400R")))
    gen = DramTrafficGenerator("gen", top, pattern="dramsim3", trace_file=str(path))
    dram = DramController("dram", top)
    sink = Sink("sink", top, stop_after=30)
    connect(gen.out, dram.req)
    connect(dram.resp, sink.inp)
    sim = Simulator(top)
    sim.run()
    assert gen.sent.value == 30 and sink.received.value == 30
    # Writes are acknowledged when accepted; they reach DRAM when the idle controller drains them.
    sim.run(until_ps=sim.now + 200 * dram.domain.period_ps)
    assert dram.idle
    assert dram.reads.value == 20 and dram.writes.value == 10


def test_a_trace_that_is_not_utf8_is_an_error_at_its_first_bad_byte(tmp_path):
    path = tmp_path / "latin1.trace"
    path.write_bytes(b"LD 0x40\nST 0x8\xe9\n")
    with pytest.raises(ArchError) as err:
        list(ramulator_trace(str(path)))
    assert str(err.value).startswith(f"{path}:2:7: error: the file is not UTF-8 text: byte 0xe9")


def test_a_trace_address_outside_the_memory_is_bad_input_at_its_line(tmp_path):
    path = tmp_path / "far.trace"
    path.write_text("LD 0x40\n# the next one is past 8 GiB\nLD 0x7000000000\n")
    top = Component("top", clock=dram_clock(preset("DDR4-2400R")))
    gen = DramTrafficGenerator("gen", top, pattern="ramulator", trace_file=str(path))
    dram = DramController("dram", top, engine="python")
    sink = Sink("sink", top, stop_after=2)
    connect(gen.out, dram.req)
    connect(dram.resp, sink.inp)
    with pytest.raises(ArchError) as err:
        Simulator(top).run()
    assert str(err.value).startswith(f"{path}:3:1: error: top.dram: req: read of 64 bytes at 0x7000000000 "
                                     "from 'top.gen' is outside this memory (0x0 .. 0x1ffffffff")


def _trace_through_ports(tmp_path, text):
    path = tmp_path / "timed.trace"
    path.write_text(text)
    top = Component("top", clock=dram_clock(preset("DDR4-2400R")))
    gen = DramTrafficGenerator("gen", top, pattern="dramsim3", trace_file=str(path))
    dram = DramController("dram", top)
    sink = Sink("sink", top)
    connect(gen.out, dram.req)
    connect(dram.resp, sink.inp)
    return top, dram, sink


def test_an_empty_trace_is_quiescent_at_once_not_refreshing_for_ever(tmp_path):
    top, dram, sink = _trace_through_ports(tmp_path, "# nothing to replay\n")
    result = Simulator(top).run()
    assert result.reason == "quiescent" and result.time_ps == 0
    assert dram.refs.value == 0 and sink.received.value == 0


def test_refresh_goes_on_through_a_quiet_stretch_and_the_run_ends_with_the_last_answer(tmp_path):
    # two reads 30000 cycles apart (tREFI is 9364 cycles): three refreshes fall in between,
    # none after the second answer, where only refresh would be left to do
    top, dram, sink = _trace_through_ports(tmp_path, "0x40 READ 0\n0x80 READ 30000\n")
    sim = Simulator(top)
    result = sim.run()
    assert sink.received.value == 2 and result.reason == "quiescent"
    assert dram.refs.value == 30000 // preset("DDR4-2400R").tREFI == 3
    assert result.time_ps == sink.arrivals[-1].time_ps
