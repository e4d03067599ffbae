"""Request frontends: trace readers (Ramulator and DRAMSim3 formats), synthetic streams, and a
traffic generator component that drives a controller's ``req`` port.

A stream is an iterator of ``(cycle, address, is_write)``: feed it to
:meth:`~.controller.DramController.attach_stream` (in-controller, as Ramulator's frontend),
or to :class:`DramTrafficGenerator`, which sends each as a MemRequest through a channel.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import numpy as np

from archmodel.kernel import (ArchError, Component, Counter, Out, Param, Registry, Span, at_least, in_range, model,
                              read_lines)

from ..messages import MemRequest
from .timing import preset


def _address(text: str, path: str, number: int) -> int:
    try:
        value = int(text, 16) if text.lower().startswith("0x") else int(text)
    except ValueError:
        raise ArchError(f"'{text}' is not an address (write 0x... or a decimal number)",
                        span=Span(path, number, 1)) from None
    if value < 0:
        raise ArchError(f"the address {text} is negative", span=Span(path, number, 1))
    return value


def ramulator_trace(path: str, with_lines: bool = False) -> Iterator[tuple]:
    """Ramulator's load/store trace: one ``LD 0xADDR`` or ``ST 0xADDR`` per line, untimed
    (every request is due at cycle 0: the controller takes them as fast as it can). Blank
    lines and ``#`` comments are skipped; a malformed line is an ArchError naming file and line.
    Items are ``(cycle, address, is_write)``, with the line's :class:`Span` fourth if
    ``with_lines``."""
    for number, line in read_lines(path, "trace"):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        if len(fields) != 2 or fields[0] not in ("LD", "ST"):
            raise ArchError(f"expected 'LD 0xADDR' or 'ST 0xADDR', got {text!r}", span=Span(path, number, 1))
        request = 0, _address(fields[1], path, number), fields[0] == "ST"
        yield (*request, Span(path, number, 1)) if with_lines else request


def dramsim3_trace(path: str, with_lines: bool = False) -> Iterator[tuple]:
    """DRAMSim3's trace: ``0xADDR READ|WRITE cycle`` per line, cycles non-decreasing (in
    DRAM cycles). A malformed line is an ArchError naming file and line. Items as
    :func:`ramulator_trace`'s."""
    previous = 0
    for number, line in read_lines(path, "trace"):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        fields = text.split()
        where = Span(path, number, 1)
        if len(fields) != 3 or fields[1] not in ("READ", "WRITE"):
            raise ArchError(f"expected '0xADDR READ|WRITE cycle', got {text!r}", span=where)
        try:
            cycle = int(fields[2])
        except ValueError:
            raise ArchError(f"the cycle {fields[2]!r} is not a whole number", span=where) from None
        if cycle < previous:
            raise ArchError(f"cycle {cycle} comes before the previous line's cycle {previous}",
                            hint="list the lines in time order", span=where)
        previous = cycle
        request = cycle, _address(fields[0], path, number), fields[1] == "WRITE"
        yield (*request, Span(path, number, 1)) if with_lines else request


def synthetic_stream(kind: str, count: int, *, capacity_bytes: int, burst_bytes: int = 64, seed: int = 0,
                     write_fraction: float = 0.0, stride_bytes: int = 64, hot_bytes: int = 1 << 20,
                     hot_fraction: float = 0.9, start: int = 0) -> Iterator[tuple[int, int, bool]]:
    """``count`` untimed requests of one pattern, burst aligned, inside ``capacity_bytes``:

    - ``sequential``: consecutive bursts from ``start``;
    - ``random``: uniform over the capacity;
    - ``strided``: every ``stride_bytes``;
    - ``hot``: ``hot_fraction`` of the requests uniform in the first ``hot_bytes``, the rest
      uniform over the capacity.

    ``write_fraction`` of the requests are writes (drawn independently; 1/3 gives the 2:1
    read/write mix). Numbers come from numpy's PCG64 seeded with ``seed``."""
    rng = np.random.default_rng(seed)
    bursts = capacity_bytes // burst_bytes
    if kind == "sequential":
        index = (start // burst_bytes + np.arange(count)) % bursts
    elif kind == "random":
        index = rng.integers(0, bursts, count)
    elif kind == "strided":
        index = (start // burst_bytes + np.arange(count) * max(1, stride_bytes // burst_bytes)) % bursts
    elif kind == "hot":
        hot = max(1, hot_bytes // burst_bytes)
        index = np.where(rng.random(count) < hot_fraction, rng.integers(0, hot, count), rng.integers(0, bursts, count))
    else:
        raise ArchError(f"unknown synthetic pattern '{kind}'", hint="sequential, random, strided or hot")
    writes = rng.random(count) < write_fraction if write_fraction else np.zeros(count, dtype=bool)
    addresses = (index * burst_bytes).tolist()
    return zip(itertools.repeat(0), addresses, writes.tolist())


REQUEST_PATTERNS: Registry[str] = Registry("request pattern", {
    "sequential": "consecutive bursts (synthetic_stream)",
    "random": "uniform over the capacity (synthetic_stream)",
    "strided": "every stride_bytes (synthetic_stream)",
    "hot": "hot_fraction of the requests in the first hot_bytes, the rest uniform (synthetic_stream)",
    "ramulator": "replay trace_file in Ramulator's LD/ST format (ramulator_trace)",
    "dramsim3": "replay trace_file in DRAMSim3's timed format (dramsim3_trace)",
})
"""What a :class:`DramTrafficGenerator`'s ``pattern`` takes: the four synthetic streams and the
two trace formats."""


def _unnumbered(requests: Iterator[tuple]) -> Iterator[tuple]:
    # a synthetic request comes from no line of any file
    for request in requests:
        yield (*request, None)


@model
class DramTrafficGenerator(Component):
    """Sends a request stream as MemRequests on ``out``: a synthetic pattern or a trace file.

    ``pattern`` is sequential, random, strided, hot (see :func:`synthetic_stream`),
    ``ramulator`` or ``dramsim3`` (read ``trace_file``). At most one request leaves per edge;
    a timed trace holds each request until its cycle (of this component's clock). Writes carry
    ``burst_bytes`` bytes of data derived from the address, so a reader can check them.
    """

    pattern = Param(str, "random", "sequential, random, strided, hot, ramulator or dramsim3",
                    check=REQUEST_PATTERNS.check)
    count = Param(int, 1000, "requests (synthetic patterns)", unit="requests", check=at_least(0))
    capacity_bytes = Param(int, 1 << 30, "address range of synthetic requests", unit="bytes", check=at_least(64))
    burst_bytes = Param(int, 64, "request size", unit="bytes", check=at_least(1))
    write_fraction = Param(float, 0.0, "share of writes", check=in_range(0.0, 1.0))
    stride_bytes = Param(int, 64, "stride (strided)", unit="bytes", check=at_least(1))
    hot_bytes = Param(int, 1 << 20, "hot set size (hot)", unit="bytes", check=at_least(1))
    hot_fraction = Param(float, 0.9, "share of requests to the hot set (hot)", check=in_range(0.0, 1.0))
    trace_file = Param(str, None, "trace to replay (ramulator, dramsim3)")
    out = Out("MemRequests")
    sent = Counter("requests", "requests sent")

    def start(self) -> None:
        if self.pattern == "ramulator":
            stream = ramulator_trace(self._trace(), with_lines=True)
        elif self.pattern == "dramsim3":
            stream = dramsim3_trace(self._trace(), with_lines=True)
        else:
            stream = _unnumbered(synthetic_stream(self.pattern, self.count, capacity_bytes=self.capacity_bytes,
                                      burst_bytes=self.burst_bytes, seed=self.sim.seed,
                                      write_fraction=self.write_fraction, stride_bytes=self.stride_bytes,
                                      hot_bytes=self.hot_bytes, hot_fraction=self.hot_fraction))
        self._stream = stream
        self._head = next(stream, None)
        self._period = self.domain.period_ps

    def _trace(self) -> str:
        if self.trace_file is None:
            raise ArchError(f"{self.path}: pattern '{self.pattern}' needs the parameter 'trace_file'")
        return self.trace_file

    def tick(self) -> None:
        head = self._head
        if head is None:
            self.sleep()
            return
        cycle = (self.sim.now - self.domain.phase_ps) // self._period
        if head[0] > cycle:
            self.sleep_for(head[0] - cycle)
            return
        _, address, write, line = head
        data = (address & 0xFFFFFFFF).to_bytes(4, "little") * (self.burst_bytes // 4) if write else None
        message = MemRequest(address=address, size_bytes=self.burst_bytes, is_write=write, data=data,
                             source=self.path, tag=self.sent.value, created_ps=self.sim.now, origin=line)
        if self.out.try_send(message):
            self.sent.add()
            self._head = next(self._stream, None)
        else:
            self.sleep()


def skewed_streams(standard: str, cores: int, requests: int, seed: int, hot_segments: int = 256,
                   zipf_s: float = 1.1, segment_bursts: int = 16, write_fraction: float = 0.25,
                   cold_fraction: float = 0.1):
    """Per core, ``requests`` of (bank, row, column burst, is_write): a Zipf(``zipf_s``) choice
    among ``hot_segments`` row segments of ``segment_bursts`` bursts spread over random banks
    and rows, a random burst within the segment; ``cold_fraction`` go to uniformly random
    places. Each core has its own segments (8 cores = 8 interleaved streams)."""
    t = preset(standard)
    rng = np.random.default_rng(seed)
    banks, bursts = t.banks * t.ranks, t.bursts_per_row
    segments = bursts // segment_bursts
    ranks = np.arange(1, hot_segments + 1, dtype=float)
    weights = ranks ** -zipf_s
    weights /= weights.sum()
    out = []
    for _ in range(cores):
        seg_bank = rng.integers(0, banks, hot_segments)
        seg_row = rng.integers(0, t.rows, hot_segments)
        seg_index = rng.integers(0, segments, hot_segments)
        pick = rng.choice(hot_segments, size=requests, p=weights)
        offset = rng.integers(0, segment_bursts, requests)
        cold = rng.random(requests) < cold_fraction
        writes = rng.random(requests) < write_fraction
        stream = []
        for i in range(requests):
            if cold[i]:
                stream.append((int(rng.integers(banks)), int(rng.integers(t.rows)), int(rng.integers(bursts)),
                               bool(writes[i])))
            else:
                s = pick[i]
                stream.append((int(seg_bank[s]), int(seg_row[s]), int(seg_index[s] * segment_bursts + offset[i]),
                               bool(writes[i])))
        out.append(stream)
    return out
