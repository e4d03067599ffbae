"""The bundled example: cores issuing random loads and stores to a banked SRAM on its own clock.

``cores`` traffic sources at 1 GHz send 8-byte requests (one third stores) with Bernoulli
injection to a multi-port SRAM clocked at 800 MHz; responses come back to one sink per core,
which measures round-trip latency and bandwidth. Every request crosses a clock domain twice
through registered channels. Raise ``rate`` towards 0.8 and bank conflicts and latency grow:
four ports at 800 MHz can serve at most 3.2 requests per core-clock nanosecond in all.

    archmodel run archmodel.examples.banked_memory:build --vcd waves/banked_memory.vcd
    archmodel run archmodel.examples.banked_memory:build -p rate=0.7 -p banks=4
"""

from __future__ import annotations

from archmodel.kernel import ClockDomain, Component, connect
from archmodel.models.basic import Sink, Source, Sram
from archmodel.models.messages import MemRequest

WORD_BYTES = 8


def build(cores: int = 4, banks: int = 8, rate: float = 0.4, requests: int = 500,
          memory_kib: int = 64, latency_cycles: int = 2, mem_mhz: int = 800) -> Component:
    """Build the system; every argument can be set with ``-p NAME=VALUE`` on the command line."""
    core_clock = ClockDomain("core", 1000)
    mem_clock = ClockDomain.from_frequency("mem", mem_mhz * 1_000_000)
    top = Component("soc", clock=core_clock)
    sram = Sram("sram", top, clock=mem_clock, size_bytes=memory_kib * 1024, banks=banks,
                word_bytes=WORD_BYTES, latency_cycles=latency_cycles, port_count=cores)
    words = memory_kib * 1024 // WORD_BYTES
    for core in range(cores):
        def request(i, rng, core=core):
            address = int(rng.integers(0, words)) * WORD_BYTES
            if rng.random() < 1 / 3:
                data = bytes(rng.integers(0, 256, WORD_BYTES, dtype="uint8"))
                return MemRequest(address, WORD_BYTES, is_write=True, data=data, source=core, tag=i)
            return MemRequest(address, WORD_BYTES, source=core, tag=i)

        source = Source(f"core{core}", top, pattern="bernoulli", rate=rate, count=requests,
                        payload=request, wrap_in_packet=False)
        sink = Sink(f"resp{core}", top, record=False)
        connect(source.out, sram.req[core], latency=2)
        connect(sram.resp[core], sink.inp, latency=2)
    return top
