"""Param is the one authority on a parameter: its check, its unit, its vocabulary."""

import pytest

from archmodel.kernel import (ArchError, Component, Param, ParamGroup, ParameterError, Registry, at_least, model,
                              one_of, unit_from_name)


@model(catalogue=False)
class Probe(Component):
    """Parameters of every kind the tests below need."""

    depth = Param(int, 2, "entries", unit="messages", check=at_least(1))
    delay = Param(int, 0, "a time with no unit in its name", unit="ps")
    size_bytes = Param(int, 64, "a size whose unit the name gives")
    width = Param(int, 8, "a plain number")
    needed = Param(str, doc="a required one")


def test_the_unit_is_the_declared_one_else_the_name_suffix_else_none():
    decls = Probe.param_declarations()
    assert [decls[k].unit for k in ("depth", "delay", "size_bytes", "width")] == ["messages", "ps", "bytes", None]
    assert decls["size_bytes"].describe() == "size_bytes: int = 64 [bytes] -- a size whose unit the name gives"
    assert unit_from_name("latency_cycles") == "cycles" and unit_from_name("rate") is None


def test_a_declared_unit_that_contradicts_the_name_is_refused():
    with pytest.raises(ArchError, match="parameter 'size_bytes' is declared in bits but its name says bytes"):
        @model(catalogue=False)
        class Contradiction(Component):
            size_bytes = Param(int, 1, "wrong", unit="bits")


def test_check_params_names_the_model_without_a_path_and_the_path_with_one():
    with pytest.raises(ParameterError) as err:
        Probe.check_params({"needed": "x", "depth": 0})
    assert (err.value.message, err.value.param) == ("parameter 'depth' of 'Probe' must be at least 1, got 0", "depth")
    assert err.value.hint == "depth: int = 2 [messages] -- entries"
    with pytest.raises(ParameterError) as err:
        Probe("p", Component("top"), needed="x", depth=0)
    assert err.value.message == "top.p: parameter 'depth' must be at least 1, got 0"


def test_check_params_reports_unknown_then_missing_then_values():
    with pytest.raises(ParameterError) as err:
        Probe.check_params({"dpeth": 3})
    assert (err.value.message, err.value.hint, err.value.param) == (
        "'Probe' has no parameter 'dpeth'", "did you mean 'depth'?", "dpeth")
    with pytest.raises(ParameterError) as err:
        Probe.check_params({"depth": 3})
    assert (err.value.message, err.value.param) == ("'Probe' is missing required parameter 'needed'", "needed")
    with pytest.raises(ParameterError) as err:
        Probe.check_params({"needed": 3})
    assert err.value.message == "parameter 'needed' of 'Probe' expects str, got int 3"
    params = Probe.check_params({"needed": "x", "width": 16})
    assert (params.needed, params.width, params.depth) == ("x", 16, 2)


def test_a_check_that_cannot_compare_a_value_says_so():
    @model(catalogue=False)
    class Listed(Component):
        sizes = Param((list, tuple), (), "positive sizes", check=lambda v: None if all(s > 0 for s in v) else "must be positive")

    with pytest.raises(ParameterError, match=r"parameter 'sizes' of 'Listed' has an unusable value, got \[1, 'a'\]"):
        Listed.check_params({"sizes": [1, "a"]})


ROUTES = Registry("route", {"north": 1, "south": 2})


def test_a_registry_is_the_check_the_lookup_and_the_hint():
    assert ROUTES.check("north") is None
    assert ROUTES.check("nrth") == "must be one of 'north', 'south'"
    assert ROUTES.check("nrth").hint == "did you mean 'north'?"  # for the error's hint line
    assert ROUTES.check("x") == "must be one of 'north', 'south'" and ROUTES.check("x").hint is None
    assert ROUTES.lookup("south") == 2
    with pytest.raises(ArchError) as err:
        ROUTES.lookup("Sotuh")
    assert (err.value.message, err.value.hint) == ("unknown route 'Sotuh'", "did you mean 'south'?")
    with pytest.raises(ArchError) as err:
        ROUTES.lookup("zzz")
    assert err.value.hint == "routes: north, south"


def test_a_name_registered_later_is_accepted_by_the_check_at_once():
    colours = Registry("colour", {"red": None})

    @model(catalogue=False)
    class Painted(Component):
        colour = Param(str, "red", "paint", check=colours.check)

    with pytest.raises(ParameterError, match="must be one of 'red'"):
        Painted.check_params({"colour": "blue"})
    colours.add("blue", None)
    assert Painted.check_params({"colour": "blue"}).colour == "blue"
    assert Painted.param_declaration("colour").choices == ["red", "blue"]  # the datasheet lists them


def test_a_misspelt_name_of_a_vocabulary_is_hinted_on_the_hint_line_and_the_datasheet_lists_the_names():
    @model(catalogue=False)
    class Steered(Component):
        route = Param(str, "north", "where to go", check=ROUTES.check)
        mode = Param(str, "fast", "how", check=one_of("fast", "slow"))
        depth = Param(int, 1, "no vocabulary", check=at_least(1))

    with pytest.raises(ParameterError) as err:
        Steered.check_params({"route": "sooth"})
    assert err.value.message == "parameter 'route' of 'Steered' must be one of 'north', 'south', got 'sooth'"
    assert err.value.hint == "did you mean 'south'? (route: str = 'north' -- where to go)"
    with pytest.raises(ParameterError) as err:
        Steered.check_params({"mode": "zzz"})
    assert err.value.hint == "mode: str = 'fast' -- how"  # nothing close: the declaration alone
    decls = Steered.param_declarations()
    assert (decls["mode"].choices, decls["depth"].choices) == (["fast", "slow"], None)
    assert "  route: str = 'north' -- where to go\n      one of: north, south\n" in Steered.documentation()


def test_a_param_group_declares_another_models_parameters_and_reads_as_their_values():
    @model(catalogue=False)
    class Holder(Component):
        first = Param(int, 1, "its own")
        probe_params = ParamGroup(Probe, "depth", "delay")

    decls = Holder.param_declarations()
    assert list(decls) == ["first", "depth", "delay"]
    for name in ("depth", "delay"):
        mine, theirs = decls[name], Probe.param_declarations()[name]
        assert (mine.type, mine.default, mine.unit, mine.check, mine.doc) == \
            (theirs.type, theirs.default, theirs.unit, theirs.check, theirs.doc)
    holder = Holder("h", depth=5)
    assert holder.probe_params == {"depth": 5, "delay": 0}
    with pytest.raises(ParameterError, match="parameter 'depth' must be at least 1, got 0"):
        Holder("g", depth=0)


def test_a_param_group_refuses_a_parameter_declared_twice():
    with pytest.raises(ArchError, match="parameter 'depth' is declared and also taken from 'Probe'"):
        @model(catalogue=False)
        class Twice(Component):
            depth = Param(int, 1, "again")
            probe_params = ParamGroup(Probe, "depth")


def test_the_public_declarations_are_read_only():
    with pytest.raises(TypeError):
        Probe.param_declarations()["x"] = Param(int, 0)  # type: ignore[index]
    assert list(Probe.port_declarations()) == [] and list(Probe.stat_declarations()) == []
    top = Component("top")
    child = Probe("p", top, needed="x")
    assert top.find_child("p") is child and top.find_child("q") is None
