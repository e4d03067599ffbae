"""Small builders shared by the memory tests."""

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import DramController, DramTimingChecker
from archmodel.models.memory.timing import dram_clock, preset


def controller_with_checker(standard="DDR4-2400R", **params):
    """A controller fed by an attached stream, every command it issues handed to a checker."""
    clock = dram_clock(preset(standard))
    top = Component("top", clock=clock)
    params.setdefault("stop_when_done", True)
    dram = DramController("dram", top, standard=standard, **params)
    checker = DramTimingChecker("checker", top, standard=standard)
    checker.watch(dram)
    return top, dram, checker


def ported_controller(standard, messages, cycles=None, **params):
    """Source -> controller -> Sink, all in the DRAM clock, with a checker on the command bus."""
    clock = dram_clock(preset(standard))
    top = Component("top", clock=clock)
    src = Source("src", top, pattern="list", messages=messages, cycles=cycles, wrap_in_packet=False)
    dram = DramController("dram", top, standard=standard, **params)
    sink = Sink("sink", top, stop_after=len(messages))
    checker = DramTimingChecker("checker", top, standard=standard)
    connect(src.out, dram.req)
    connect(dram.resp, sink.inp)
    connect(dram.cmd, checker.cmd)
    return top, src, dram, sink, checker


def run(top, seed=0):
    sim = Simulator(top, seed=seed)
    sim.run()
    return sim
