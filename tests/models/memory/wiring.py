"""Small builders shared by the memory tests."""

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.messages import MemRequest
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import (DramController, DramTimingChecker, InDramCacheController, SubarrayTimingChecker,
                                     synthetic_stream)
from archmodel.models.memory.timing import dram_clock, preset


def controller_with_checker(standard="DDR4-2400R", **params):
    """A controller fed by an attached stream, every command it issues handed to a checker."""
    clock = dram_clock(preset(standard))
    top = Component("top", clock=clock)
    params.setdefault("stop_when_done", True)
    dram = DramController("dram", top, standard=standard, **params)
    overrides = {"ranks": params["ranks"]} if "ranks" in params else None
    checker = DramTimingChecker("checker", top, standard=standard, overrides=overrides)
    checker.watch(dram)
    return top, dram, checker


def attach_synthetic(dram, pattern, count, write_fraction, seed=11):
    """Attach ``count`` requests of a synthetic pattern (strides of 4 KiB, a 64 KiB hot region)."""
    dram.attach_stream(synthetic_stream(pattern, count, capacity_bytes=dram.address_map.capacity_bytes,
                                        burst_bytes=dram.burst_bytes, seed=seed, write_fraction=write_fraction,
                                        stride_bytes=4096, hot_bytes=1 << 16))


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


def writes_then_reads(count, read_bytes=64):
    """``count`` requests alternating write and read over 15 bursts in three rows' worth of
    addresses (each write 64 bytes of its index, each read ``read_bytes``), so reads keep
    meeting earlier writes of their bytes; and the data each read (by tag) must return."""
    requests = []
    for i in range(count):
        address = (i % 5) * 64 + (i % 3) * (1 << 20)
        if i % 2 == 0:
            requests.append(MemRequest(address=address, size_bytes=64, is_write=True, data=bytes([i]) * 64, tag=i))
        else:
            requests.append(MemRequest(address=address, size_bytes=read_bytes, tag=i))
    last = {}
    expected = {}
    for r in requests:
        if r.is_write:
            last[r.address] = r.data
        else:
            expected[r.tag] = b"".join(last.get(r.address + o, bytes(64)) for o in range(0, read_bytes, 64))
    return requests, expected
