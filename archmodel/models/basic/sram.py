"""A banked, multi-ported on-chip memory that holds real data."""

from __future__ import annotations

from collections import deque

import numpy as np

from archmodel.kernel import (Component, Counter, Formula, In, Out, Param, ParameterError, at_least,
                              in_range, model)

from ..messages import MemResponse


@model
class Sram(Component):
    """A banked multi-port SRAM holding real data, with bank conflicts and a fixed latency.

    ``size_bytes`` of storage (a numpy byte array) behind ``port_count`` request/response
    port pairs.

    Words of ``word_bytes`` bytes are interleaved over the banks: ``bank = (address //
    word_bytes) % banks``. At each edge every bank serves at most one request; ports whose
    head requests want the same bank are granted round robin from the port after the bank's
    last grant, and the losers wait (each waiting request-edge counts one ``bank_conflicts``),
    as in the word-interleaved TCDM of PULP/Snitch clusters (Zaruba et al., "Snitch", IEEE TC
    2021: 32 banks of 64-bit words, one-cycle access). A request granted at edge t is done at
    once (a read sees every write granted before it) and its response leaves on the same
    port's ``resp`` at edge t + ``latency_cycles``; responses leave in request order. Each
    port keeps ``latency_cycles`` responses in flight, so a port whose responses are held
    back stops taking requests.

    Requests are :class:`~archmodel.models.messages.MemRequest`: ``size_bytes`` a power of
    two up to ``word_bytes``, ``address`` a multiple of it (naturally aligned, so an access
    never spans two banks). A read returns the bytes; a write stores ``data`` and returns an
    acknowledgement with no data. An access outside the memory or misaligned stops the run
    with a ModelAssertion naming the port and the address.

    Leaves out: bank-internal timing (precharge, refresh), wide accesses spanning banks,
    atomics, energy.
    """

    # Its bytes are one array allocated whole: capped so a typo cannot exhaust memory.
    size_bytes = Param(int, 128 * 1024, "capacity (at most 1 GiB)", unit="bytes", check=in_range(1, 1 << 30))
    banks = Param(int, 32, "independently accessible banks (at most 65536)", check=in_range(1, 1 << 16))
    word_bytes = Param(int, 8, "bytes per bank word; the interleaving granule", unit="bytes",
                       check=at_least(1))
    latency_cycles = Param(int, 1, "edges from grant to response", unit="cycles", check=at_least(1))
    port_count = Param(int, 1, "request/response port pairs", check=at_least(1))
    req = In("memory requests", count="port_count")
    resp = Out("responses, in request order per port", count="port_count")
    reads = Counter("requests", "reads served")
    writes = Counter("requests", "writes served")
    bytes_moved = Counter("bytes", "bytes read and written")
    bank_conflicts = Counter("requests", "request-edges spent waiting for a bank granted to another port")
    accesses_per_cycle = Formula("requests/cycle", "mean accesses served per edge",
                                 lambda s: (s.reads.value + s.writes.value) / s.elapsed_cycles)

    def setup(self) -> None:
        if self.size_bytes % self.word_bytes:
            raise ParameterError(f"{self.path}: parameter 'size_bytes' must be a multiple of word_bytes "
                                 f"({self.word_bytes}), got {self.size_bytes}")
        self.data = np.zeros(self.size_bytes, dtype=np.uint8)
        self.responses = [deque() for _ in range(self.port_count)]  # (due cycle, MemResponse)
        self.bank_priority = [0] * self.banks

    def load(self, address: int, data: bytes | np.ndarray) -> None:
        """Set memory contents directly (a backdoor for tests and workload set-up)."""
        data = np.frombuffer(bytes(data), dtype=np.uint8)
        if address < 0 or address + data.size > self.size_bytes:
            raise ValueError(f"{self.path}: load of {data.size} bytes at {address:#x} is outside the memory")
        self.data[address:address + data.size] = data

    def peek(self, address: int, size: int) -> bytes:
        """Read memory contents directly, without timing."""
        return bytes(self.data[address:address + size])

    def _bank_of(self, port: int, request) -> int:
        address, size = request.address, request.size_bytes
        where = f"req[{port}]: {'write' if request.is_write else 'read'} of {size} bytes at address {address:#x}"
        if size < 1 or size > self.word_bytes or size & (size - 1):
            self.fail(f"{where}: the size must be a power of two up to the {self.word_bytes}-byte word")
        if address < 0 or address + size > self.size_bytes:
            self.fail(f"{where} is outside the {self.size_bytes}-byte memory")
        if address % size:
            self.fail(f"{where} is misaligned (the address must be a multiple of the size)")
        if request.is_write and (request.data is None or len(request.data) != size):
            got = "no data" if request.data is None else f"{len(request.data)} bytes of data"
            self.fail(f"{where} carries {got}")
        return (address // self.word_bytes) % self.banks

    def _access(self, request) -> MemResponse:
        address, size = request.address, request.size_bytes
        self.bytes_moved.add(size)
        if request.is_write:
            self.writes.add()
            self.data[address:address + size] = np.frombuffer(bytes(request.data), dtype=np.uint8)
            data = None
        else:
            self.reads.add()
            data = bytes(self.data[address:address + size])
        return MemResponse(tag=request.tag, data=data, source=request.source, created_ps=request.created_ps)

    def tick(self) -> None:
        cycle = self.cycle
        moved = False
        for port, queue in enumerate(self.responses):
            if queue and queue[0][0] <= cycle and self.resp[port].try_send(queue[0][1]):
                queue.popleft()
                moved = True
        wanted: dict[int, list[int]] = {}
        for port, inp in enumerate(self.req):
            if len(self.responses[port]) < self.latency_cycles and inp.valid:
                wanted.setdefault(self._bank_of(port, inp.peek()), []).append(port)
        for bank, ports in wanted.items():
            start = self.bank_priority[bank]
            winner = min(ports, key=lambda p: (p - start) % self.port_count)
            self.bank_conflicts.add(len(ports) - 1)
            response = self._access(self.req[winner].recv())
            self.responses[winner].append((cycle + self.latency_cycles, response))
            self.bank_priority[bank] = (winner + 1) % self.port_count
            moved = True
        if moved:
            return
        # Nothing could move: responses are held back (a credit wakes us), not yet due, or
        # there is no request (an arrival wakes us).
        self.sleep()
        due = [queue[0][0] for queue in self.responses if queue and queue[0][0] > cycle]
        if due:
            self.wake_in(min(due) - cycle)
