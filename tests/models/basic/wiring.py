"""Wiring shared by the basic-model tests."""

from archmodel.kernel import ClockDomain, Component, connect


def new_top(period_ps: int = 1000) -> Component:
    """An empty top-level component on a clock of ``period_ps``."""
    return Component("top", clock=ClockDomain("clk", period_ps))


def chain(*parts, latency: int = 1, capacity: int | None = None) -> None:
    """Connect ``out`` of each part to ``inp`` of the next."""
    for upstream, downstream in zip(parts, parts[1:]):
        connect(upstream.out, downstream.inp, latency=latency, capacity=capacity)
