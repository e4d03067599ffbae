"""Small builders shared by the memory tests."""

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import DramController, DramTimingChecker, InDramCacheController, SubarrayTimingChecker
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


def ported_cache(messages, cycles=None, standard="DDR4-2400R", **params):
    """Source -> in-DRAM cache controller (no synthetic cores) -> Sink, with its subarray checker."""
    clock = dram_clock(preset(standard))
    top = Component("top", clock=clock)
    src = Source("src", top, pattern="list", messages=messages, cycles=cycles, wrap_in_packet=False)
    params.setdefault("cores", 0)
    mem = InDramCacheController("mem", top, standard=standard, **params)
    sink = Sink("sink", top, stop_after=len(messages))
    checker = SubarrayTimingChecker("checker", top, standard=standard, cache=mem.cache,
                                    cache_rows_per_bank=mem.cache_rows_per_bank, tRELOC=mem.tRELOC,
                                    villa_subarrays=mem.villa_subarrays, lisa_hop_cycles=mem.lisa_hop_cycles)
    connect(src.out, mem.req)
    connect(mem.resp, sink.inp)
    connect(mem.cmd, checker.cmd)
    return top, src, mem, sink, checker


def run(top, seed=0):
    sim = Simulator(top, seed=seed)
    sim.run()
    return sim
