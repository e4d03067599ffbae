"""Elaboration semantics with exact expectations: units, clocks, links, arrays, generation."""

from fractions import Fraction

import pytest

import archmodel.models  # noqa: F401
from archmodel.kernel import Simulator
from archmodel.lang import LanguageErrors, load, parse
from archmodel.lang.units import Quantity, TIME, period_ps, quantity, to_ps


def elaborate(tmp_path, text, **kwargs):
    path = tmp_path / "t.arch"
    path.write_text(text)
    return load(path, **kwargs)


def errors_of(tmp_path, text):
    with pytest.raises(LanguageErrors) as info:
        elaborate(tmp_path, text)
    return [e.message for e in info.value.errors]


def test_times_round_to_the_nearest_ps_and_frequencies_to_periods():
    assert to_ps(quantity(Fraction("2.5"), "ns")) == 2500
    assert to_ps(quantity(Fraction("0.0005"), "ns")) == 0  # half a ps rounds to even
    assert to_ps(quantity(Fraction("0.0015"), "ns")) == 2
    assert period_ps(quantity(3, "GHz")) == 333
    assert period_ps(quantity(Fraction("1.6"), "GHz")) == 625
    assert quantity(64, "GB/s") == Quantity(Fraction(512 * 10**9), (-1, 1))
    assert quantity(1, "GHz").dim == (-1, 0) and quantity(1, "ns").dim == TIME


def test_link_latency_in_time_is_ceiled_to_receiver_cycles_and_bandwidth_sets_width(tmp_path):
    top = elaborate(tmp_path, """
system T {
    clock fast = 1 GHz
    clock slow = 400 MHz
    a : Source(count = 1)
    b : Fifo() in slow
    c : Sink()
    a.out -> b.inp with link(latency = 2.6 ns, bandwidth = 16 GB/s)
    b.out -> c.inp with link(latency = 3, capacity = 7, width = 4 B)
}""").top
    sim = Simulator(top)
    first, second = sim.channels
    assert (first.latency, first.capacity, first.width_bits) == (2, 3, 128)  # 2.6 ns / 2.5 ns -> 2; 16 GB/s * 1 ns
    assert (second.latency, second.capacity, second.width_bits) == (3, 7, 32)
    assert [d.period_ps for d in sim.domains] == [1000, 2500]


def test_model_parameters_take_units_by_declared_unit_or_name_suffix(tmp_path):
    top = elaborate(tmp_path, """
system T {
    clock clk = 500 MHz
    m : Sram(size_bytes = 64 KiB, word_bytes = 64 bit, latency_cycles = 5 ns, port_count = 1)
    d : DelayLine(latency_cycles = 3)
    m.resp[0] -> m.req[0]
    d.out -> d.inp
}""").top
    sram, delay = top.children
    assert (sram.size_bytes, sram.word_bytes, sram.latency_cycles) == (65536, 8, 3)  # 5 ns at 2 ns -> 3 cycles
    assert delay.latency_cycles == 3
    assert errors_of(tmp_path, "system T { m : Sram(size_bytes = 3 bit) }") == [
        "parameter 'size_bytes' of 'Sram' is not a whole number of bytes (0.375 B)"]
    assert errors_of(tmp_path, "system T { m : Sram(size_bytes = 2 ns) }") == [
        "parameter 'size_bytes' of 'Sram' expects a data size, got a time (2 ns)"]


def test_arrays_slices_wildcards_for_if_and_expose(tmp_path):
    top = elaborate(tmp_path, """
const N = 6
module Pair(deep: bool = false) {
    a : Fifo(depth = 2)
    if deep { b : Fifo(depth = 3) a.out -> b.inp expose b.out as out } else { expose a.out as out }
    expose a.inp as inp
}
system T {
    src[N] : Source(count = 2)
    p[N]   : Pair(deep = true)
    arb    : RoundRobinArbiter(inputs = N)
    snk    : Sink()
    src[0 .. 3].out -> p[0 .. 3].inp
    for i in 3 .. N { src[i].out -> p[i].inp }
    p[*].out -> arb.inp
    arb.out -> snk.inp
}""").top
    sim = Simulator(top)
    assert len(sim.channels) == 6 + 6 + 6 + 1
    assert sim.run().reason == "quiescent"
    assert top.child("snk").received.value == 12
    assert top.child("p[5]").child("b").depth == 3


def test_expressions_builtins_and_exact_arithmetic(tmp_path):
    top = elaborate(tmp_path, """
const A = max(3, log2(1024), ceil(7 / 2))
const B = (1 GHz) * (4 ns)
const C = 64 GB/s * 2 ns / 1 B
system T { f : Fifo(depth = A + B + C) g : Fifo(depth = floor(2.5) ** 3) f.out -> g.inp g.out -> f.inp }
""").top
    assert top.child("f").depth == 10 + 4 + 128
    assert top.child("g").depth == 8


def test_dimension_errors_name_both_sides(tmp_path):
    assert errors_of(tmp_path, "const X = 1 ns + 1 GHz\nsystem T {}") == ["cannot add a time and a frequency"]
    assert errors_of(tmp_path, "system T { clock c = 4 B }") == ["clock 'c' expects a frequency, got a data size (4 B)"]


def test_module_parameter_types_and_enums(tmp_path):
    top = elaborate(tmp_path, """
module M(kind: enum(fast, slow) = slow, size: bytes = 1 KiB, m: model = Fifo) {
    x : m(depth = 2)
    x.out -> x.inp
}
system T { a : M(kind = fast, size = 2 KiB, m = DelayLine) b : M() }""")
    a, b = top.top.children
    assert a.arch_params["kind"] == "fast" and str(a.arch_params["size"]) == "2 KiB"
    assert a.child("x").model_name == "DelayLine" and b.child("x").model_name == "Fifo"
    assert b.arch_params["kind"] == "slow"
    assert errors_of(tmp_path, "module M(k: enum(a, b) = a) {}\nsystem T { m : M(k = c) }") == [
        "'c' is not defined"]


def test_instance_limit_is_configurable(tmp_path):
    from archmodel.lang import Limits
    with pytest.raises(LanguageErrors) as info:
        elaborate(tmp_path, "system T { f[11] : Fifo() }", limits=Limits(max_instances=10))
    assert info.value.errors[0].message == "array 'f' of 11 instances would exceed the limit of 10 instances"


def test_parser_spans_are_one_based_and_end_exclusive():
    parsed = parse("system S {\n  q : Fifo(depth = 2)\n}\n", "s.arch")
    instance = parsed.modules[0].body[0]
    assert (instance.name_span.line, instance.name_span.col, instance.name_span.end_col) == (2, 3, 4)
    assert (instance.model.name_span.col, instance.model.name_span.end_col) == (7, 11)


def test_hex_numbers_and_address_ranges_become_an_address_map(tmp_path):
    top = elaborate(tmp_path, """
const BASE = 0x8000_0000
system T {
    net : Noc(topology = "mesh(2, 2)",
              address_map = [BASE .. BASE + 0x10_0000 -> 1, 0x0 .. 64 KiB -> 2 + 1, 0xFF_0000 .. 0xff_0010 -> 0])
}
""").top
    assert top.child("net").address_map == [(0x8000_0000, 0x8010_0000, 1), (0, 65536, 3), (0xFF0000, 0xFF0010, 0)]
    assert top.child("net").memory_port("mem_req", 2).path == "T.net.ni[2].mem_req"


def test_address_range_errors_name_the_range(tmp_path):
    assert errors_of(tmp_path, """
system T {
    net : Noc(topology = "mesh(2, 2)", address_map = [0x0 .. 2 ns -> 1, 0x0 .. 8 bit -> 1, 0 .. 1 -> -1])
}
""") == ["an address range's end expects a data size, got a time (2 ns)"]
    assert errors_of(tmp_path, """
system T {
    net : Noc(topology = "mesh(2, 2)", address_map = [0x0 .. 4 bit -> 1])
}
""") == ["an address range's end is not a whole number of bytes (0.5 B)"]


def test_range_builds_the_terminal_list_of_an_interleaved_address_range(tmp_path):
    top = elaborate(tmp_path, """
const N = 3
system T { f : Fifo(depth = range(2, 2 + N)[2]) g : Fifo(depth = 1) f.out -> g.inp g.out -> f.inp }
""").top
    assert top.child("f").depth == 4
    assert errors_of(tmp_path, "system T { f : Fifo(depth = range(4)[0]) }") == [
        "'range' takes two arguments (first, end exclusive), got 1"]


def test_an_indexed_array_evaluates_its_arguments_per_element(tmp_path):
    top = elaborate(tmp_path, """
module Stage(n: int = 1) { f : Fifo(depth = n) g : Fifo(depth = 1) f.out -> g.inp g.out -> f.inp }
system T {
    s[i in 3] : Stage(n = 2 * i + 1)
    f[j in 2] : Fifo(depth = 5 + j)
    f[0].out -> f[1].inp
    f[1].out -> f[0].inp
}
""").top
    assert [top.child(f"s[{i}]").child("f").depth for i in range(3)] == [1, 3, 5]
    assert [top.child(f"f[{j}]").depth for j in range(2)] == [5, 6]
