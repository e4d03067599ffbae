"""A Tree is the elaborated tree without an engine: clocks resolved, domains and channels
listed, a tree no run could start with refused; the Simulator sees the same lists."""

import pytest

from archmodel.kernel import ClockDomain, Component, PortError, Simulator, Tree, connect

from .components import Consumer, Producer


def _system():
    top = Component("top")
    slow = ClockDomain("slow", 2500)
    fast = Component("fast", top, clock=ClockDomain("fast", 500))
    p, c = Producer("p", fast), Consumer("c", top, clock=slow)
    q, d = Producer("q", top), Consumer("d", fast)
    connect(p.out, c.inp)
    connect(q.out, d.inp)
    return top


def test_clocks_resolve_from_the_parent_and_the_default_and_lists_follow_the_tree():
    top = _system()
    tree = Tree(top)
    assert [c.path for c in tree.components] == ["top", "top.fast", "top.fast.p", "top.fast.d", "top.c", "top.q"]
    assert [(d.name, d.period_ps) for d in tree.domains] == [("clk", 1000), ("fast", 500), ("slow", 2500)]
    assert [c.domain.name for c in tree.components] == ["clk", "fast", "fast", "fast", "slow", "clk"]
    assert [ch.name for ch in tree.channels] == ["top.fast.p.out -> top.c.inp", "top.q.out -> top.fast.d.inp"]
    assert [s.path for s in tree.all_stats()] == ["top.fast.d.received", "top.c.received"]
    sim = Simulator(top)
    assert (sim.components, sim.domains, sim.channels) == (tree.components, tree.domains, tree.channels)


def test_a_required_port_left_open_is_refused_without_an_engine():
    top = Component("top")
    Consumer("c", top)
    with pytest.raises(PortError) as refused:
        Tree(top)
    assert refused.value.render() == ("error: top.c: required input port 'inp' is not connected\n"
                                      "hint: connect it, or declare it In(..., required=False)")
