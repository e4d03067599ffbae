"""The language converts a model's arguments by the model's own declarations (Param): the unit
comes from the declaration, not the parameter's name, and the check is the kernel's."""

import pytest

import archmodel.models  # noqa: F401
from archmodel.kernel import ParameterError
from archmodel.lang import LanguageErrors, load
from archmodel.models.network import NetworkInterface, Noc, NocRouter
from tests.lang import plugin_models  # noqa: F401  (UnitProbe)


def _load(tmp_path, text):
    path = tmp_path / "t.arch"
    path.write_text(text)
    return load(path)


def test_a_parameter_whose_name_has_no_unit_takes_the_declared_one(tmp_path):
    top = _load(tmp_path, """
system T {
    clock clk = 500 MHz
    p : UnitProbe(delay = 2 ns, hold = 3 ns, window = 1 KiB, lanes = 4)
}""").top
    probe = top.child("p")
    # 2 ns in ps; 3 ns is 1.5 cycles of 2 ns, rounded up; 1 KiB in bytes
    assert (probe.delay, probe.hold, probe.window, probe.lanes) == (2000, 2, 1024, 4)


def test_the_language_reports_the_kernels_check_at_the_argument(tmp_path):
    with pytest.raises(LanguageErrors) as info:
        _load(tmp_path, 'system T {\n    p : UnitProbe(delay = 2 ns, lanes = "four")\n}')
    [err] = info.value.errors
    assert isinstance(err, ParameterError) and err.param == "lanes"
    assert err.message == "parameter 'lanes' of 'UnitProbe' expects int, got string \"four\""
    assert (err.span.line, err.span.col) == (2, 41)  # the value "four"
    assert err.hint == plugin_models.UnitProbe.param_declaration("lanes").describe()


def test_noc_router_parameters_are_the_routers_declarations():
    """One source: the Noc declares none of the router's parameters itself."""
    noc, router = Noc.param_declarations(), NocRouter.param_declarations()
    names = Noc.router_params.names + ["routing"]
    assert len(names) == 12
    for name in names:
        ours, theirs = noc[name], router[name]
        assert (ours.type, ours.default, ours.unit, ours.check, ours.doc) == \
            (theirs.type, theirs.default, theirs.unit, theirs.check, theirs.doc), name
    # the only other name both take means two things: the Noc's whole network, the graph a
    # lone router finds its neighbours in (a .arch topology statement of routers)
    assert set(noc) & set(router) == set(names) | {"topology"}
    assert (noc["topology"].default, router["topology"].default) == ("mesh(4, 4)", "")


def test_network_interface_takes_its_routers_flow_control_parameters():
    """The interface's VCs, buffers and credit rules are the router's declarations, not copies:
    the four parameters it shares with NocRouter, and no others."""
    ours, theirs = NetworkInterface.param_declarations(), NocRouter.param_declarations()
    shared = NetworkInterface.router_buffers.names + NetworkInterface.router_credits.names
    assert shared == ["vcs", "buffer_depth", "credit_delay", "wait_for_tail_credit"]
    assert set(ours) & set(theirs) == set(shared)
    for name in shared:
        assert (ours[name].type, ours[name].default, ours[name].unit, ours[name].check, ours[name].doc) == \
            (theirs[name].type, theirs[name].default, theirs[name].unit, theirs[name].check, theirs[name].doc)
