"""Builders used by the CLI tests (``archmodel run tests.cli_systems:NAME``)."""

from archmodel.kernel import ClockDomain, Component, Counter, Param, at_least, connect, model

from tests.kernel.components import Consumer, Producer
from tests.kernel.test_scheduler import Hoarder, Noisy


def pair(count: int = 10, latency: int = 2):
    """A producer sending ``count`` integers to a consumer over one channel."""
    top = Component("pair", clock=ClockDomain("clk", 1000))
    producer = Producer("p", top, count=count)
    consumer = Consumer("c", top)
    connect(producer.out, consumer.inp, latency=latency)
    return top


def deadlock():
    """Two components that fill each other's input and never take anything."""
    top = Component("stuck")
    a, b = Hoarder("a", top), Hoarder("b", top)
    connect(a.out, b.inp, capacity=2)
    connect(b.out, a.inp, capacity=2)
    return top


def random_pair():
    """Two components drawing random numbers, for seed tests."""
    top = Component("dice")
    Noisy("a", top, n=3)
    Noisy("b", top, n=3)
    return top


def broken(depth: int = 0):
    """A builder whose component rejects its parameter."""
    top = Component("broken")
    Producer("p", top, count=-depth - 1)
    return top


def not_a_component():
    return 42


def endless():
    """A producer that never runs out, for interrupt tests."""
    return pair(count=10**12, latency=1)


@model(catalogue=False)
class Settler(Component):
    """Ticks every cycle for ``cycles`` cycles and counts the times a run returned to it
    (``settle()``): how many slices the run was cut into."""

    cycles = Param(int, 1, "cycles to tick", check=at_least(1))
    settles = Counter("calls", "settle() calls")

    def tick(self):
        if self.cycle + 1 >= self.cycles:
            self.sleep()

    def settle(self):
        self.settles.add()


def settling(cycles: int = 1):
    """One component ticking ``cycles`` cycles that counts how often the run settles it."""
    top = Component("slices", clock=ClockDomain("clk", 1000))
    Settler("s", top, cycles=cycles)
    return top
