"""Bad input raises one ArchError whose text names the component, the port and the reason."""

import pytest

from archmodel.kernel import (ArchError, ClockDomain, Component, In, Out, Param, ParameterError,
                              PortError, Simulator, at_least, connect, model, parse_time)


@model(catalogue=False)
class Box(Component):
    """A component with typed parameters and ports of declared widths."""

    depth = Param(int, 2, "entries", check=at_least(1))
    name_tag = Param(str, "box", "a label")
    rate = Param(float, 0.5, "a fraction")
    inp = In("8-bit data", width=8)
    out = Out("8-bit data", width=8)
    wide = Out("16-bit data", width=16, required=False)


def error_text(exc_info) -> str:
    return exc_info.value.render()


def test_wrong_parameter_type():
    top = Component("top")
    with pytest.raises(ParameterError) as err:
        Box("b", top, depth="4")
    assert error_text(err) == ("error: top.b: parameter 'depth' expects int, got str '4'\n"
                               "hint: depth: int = 2 -- entries")


def test_bool_is_not_an_int_but_an_int_is_a_float():
    top = Component("top")
    with pytest.raises(ParameterError, match="parameter 'depth' expects int, got bool True"):
        Box("b", top, depth=True)
    assert Box("c", top, rate=1).rate == 1


def test_out_of_range_parameter():
    with pytest.raises(ParameterError) as err:
        Box("b", Component("top"), depth=0)
    assert error_text(err) == "error: top.b: parameter 'depth' must be at least 1, got 0\nhint: depth: int = 2 -- entries"


def test_unknown_parameter_suggests_the_closest():
    with pytest.raises(ParameterError) as err:
        Box("b", Component("top"), dpeth=3)
    assert error_text(err) == "error: top.b: 'Box' has no parameter 'dpeth'\nhint: did you mean 'depth'?"


def test_negative_latency_names_the_channel():
    top = Component("top")
    a, b = Box("a", top), Box("b", top)
    with pytest.raises(ParameterError) as err:
        connect(a.out, b.inp, latency=-1)
    assert error_text(err) == (
        "error: channel top.a.out -> top.b.inp: latency must be at least 1 cycle, got -1\n"
        "hint: every connection is registered, so results never depend on tick order")


def test_output_to_output():
    top = Component("top")
    a, b = Box("a", top), Box("b", top)
    with pytest.raises(PortError) as err:
        connect(a.out, b.out)
    assert error_text(err) == ("error: cannot connect output top.a.out to output top.b.out: "
                               "a channel goes from an output to an input")


def test_input_driven_twice():
    top = Component("top")
    a, b, c = Box("a", top), Box("b", top), Box("c", top)
    connect(a.out, c.inp)
    with pytest.raises(PortError) as err:
        connect(b.out, c.inp)
    assert error_text(err) == (
        "error: input top.c.inp is already driven by top.a.out; cannot also connect top.b.out\n"
        "hint: merge the streams with an arbiter")


def test_width_mismatch():
    top = Component("top")
    a, b = Box("a", top), Box("b", top)
    with pytest.raises(PortError) as err:
        connect(a.wide, b.inp)
    assert error_text(err) == "error: cannot connect top.a.wide with width 16 to top.b.inp with width 8"


def test_unconnected_required_port_is_found_at_elaboration():
    top = Component("top")
    a, b = Box("a", top), Box("b", top)
    connect(a.out, b.inp)
    with pytest.raises(PortError) as err:
        Simulator(top)
    assert error_text(err) == (
        "error: top.a: required input port 'inp' is not connected\n"
        "hint: connect it, or declare it In(..., required=False)")


def test_duplicate_child_name():
    top = Component("top")
    Box("b", top)
    with pytest.raises(ArchError, match="top already has a part named 'b'"):
        Box("b", top)


def test_clock_and_time_errors():
    with pytest.raises(ArchError, match="period must be a positive integer number of ps, got 0"):
        ClockDomain("c", 0)
    assert parse_time("10us") == 10_000_000
    assert parse_time("2.5 ns") == 2500
    with pytest.raises(ArchError) as err:
        parse_time("4 GHz")
    assert error_text(err) == ("error: '4 GHz' is not a time\n"
                               "hint: write a number and a unit: ps, ns, us, ms or s, e.g. 10us")
    with pytest.raises(ArchError, match="not a whole number of picoseconds"):
        parse_time("0.5ps")


def test_a_parameter_may_not_shadow_a_component_attribute():
    with pytest.raises(ArchError) as err:
        @model(catalogue=False)
        class Clash(Component):
            """Declares a parameter called ports."""

            ports = Param(int, 2, "how many")
    assert err.value.message == "model 'Clash': parameter name 'ports' is taken by Component"
