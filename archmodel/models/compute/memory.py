"""An ideal outside memory for clusters: fixed latency, limited bandwidth, real data."""

from __future__ import annotations

import math
from collections import deque

from archmodel.kernel import Component, Formula, In, Out, Param, at_least, in_range, model
from archmodel.models.messages import MemResponse


@model
class FixedLatencyMemory(Component):
    """A memory that serves requests in order at ``bytes_per_cycle``, ``latency_cycles`` later.

    A request of S bytes occupies the memory for ceil(S / bytes_per_cycle) cycles after the
    previous one; its response (the read data, or a write acknowledgement) is offered
    ``latency_cycles`` after that. Holds ``size_bytes`` of real data from ``base_address``
    (reachable without simulated time through :meth:`backdoor_write`/:meth:`backdoor_read`,
    which workloads use to place inputs and check results). Stands in for DRAM/HBM until
    those models exist; the bandwidth limit makes roofline experiments possible.

    Leaves out: banks, rows, refresh, reordering, several ports.
    """

    # Its bytes are one array, allocated whole (the compiled cluster reads it directly):
    # capped at 1 GiB so that a typo cannot exhaust the machine's memory at elaboration.
    size_bytes = Param(int, 16 * 1024 * 1024, "capacity (at most 1 GiB)", unit="bytes", check=in_range(8, 1 << 30))
    base_address = Param(int, 0x8000_0000, "first byte address")
    latency_cycles = Param(int, 50, "cycles from the end of service to the response", unit="cycles",
                           check=at_least(1))
    bytes_per_cycle = Param(int, 64, "bytes served per cycle", unit="bytes", check=at_least(1))
    req = In("MemRequests (reads and writes)")
    rsp = Out("MemResponses, in request order")

    bytes_read = Formula("bytes", "bytes read", lambda m: m.n_read)
    bytes_written = Formula("bytes", "bytes written", lambda m: m.n_written)
    busy_cycles = Formula("cycles", "cycles spent serving requests", lambda m: m.n_busy)

    def setup(self) -> None:
        self.data = bytearray(self.size_bytes)
        self.free_cycle = 0
        self.ready: deque = deque()  # (cycle the response may leave, response)
        self.n_read = self.n_written = self.n_busy = 0
        self.ready_changes = 0  # requests taken and responses sent: see bounds_version

    def offset_of(self, address: int, size: int) -> int:
        """The offset of ``address`` in :attr:`data`; an access of ``size`` bytes outside this
        memory stops the run, naming both."""
        offset = address - self.base_address
        if offset < 0 or offset + size > self.size_bytes:
            self.fail(f"access of {size} bytes at 0x{address:08x} is outside this memory "
                      f"(0x{self.base_address:08x} .. 0x{self.base_address + self.size_bytes - 1:08x})")
        return offset

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Place bytes without simulated time (for loading inputs)."""
        offset = address - self.base_address
        if offset < 0 or offset + len(data) > self.size_bytes:
            raise ValueError(f"{self.path}: {len(data)} bytes at 0x{address:08x} do not fit")
        self.data[offset:offset + len(data)] = data

    def backdoor_read(self, address: int, size: int) -> bytes:
        """Read bytes without simulated time (for checking results)."""
        offset = address - self.base_address
        return bytes(self.data[offset:offset + size])

    def earliest_send_ps(self, port) -> int | None:
        """The next response is due when its service and latency are over; with none
        pending, only a new request can make one (see :meth:`reaction_ps`)."""
        if not self.ready:
            return None
        domain = self.domain
        return domain.phase_ps + self.ready[0][0] * domain.period_ps

    def bounds_version(self) -> int:
        """Grows with every request taken and response sent: the only changes to the
        response queue that :meth:`earliest_send_ps` reads."""
        return self.ready_changes

    def reaction_ps(self, inp, out) -> int:
        """A request taken at cycle c is served from c for at least one cycle, then waits
        ``latency_cycles``: its response leaves at cycle c + 1 + latency at the soonest."""
        return (1 + self.latency_cycles) * self.domain.period_ps

    def least_reaction_ps(self, inp, out) -> int:
        """As :meth:`reaction_ps`, which follows from the parameters alone."""
        return self.reaction_ps(inp, out)

    @property
    def idle(self) -> bool:
        """No response waiting to leave."""
        return not self.ready

    def service_state(self) -> tuple[int, int, int, int]:
        """(the cycle the memory is free from, bytes read, bytes written, busy cycles): the
        state a compiled form that plays this memory inside its own loop starts from (see
        :mod:`.compiled_reference`)."""
        return self.free_cycle, self.n_read, self.n_written, self.n_busy

    def resume_service(self, free_cycle: int, read: int, written: int, busy: int, sent=(), waiting=(),
                       from_cycle: int = 0) -> None:
        """Take back the state of :meth:`service_state` from a compiled form that played this
        memory (its bytes it wrote into :attr:`data` directly). A form that stops while
        answers are under way hands them back too: ``sent``, the responses it sent at its
        own cycles and not yet received, as (cycle, response), go onto ``rsp`` as sent then
        (``OutPort.send_ahead``); ``waiting``, the responses of requests taken and not yet
        sent, as (cycle due, response) in order, wait here, and the memory ticks again from
        ``from_cycle`` (the first cycle the form did not compute) to send them."""
        self.free_cycle, self.n_read, self.n_written, self.n_busy = free_cycle, read, written, busy
        domain = self.domain
        for cycle, response in sent:
            self.rsp.send_ahead(response, domain.phase_ps + cycle * domain.period_ps)
        self.ready.extend(waiting)
        if self.ready:
            self.wake_at(domain.phase_ps + max(self.ready[0][0], from_cycle) * domain.period_ps)
        # the compiled form served requests this memory's own tick never saw: whatever a caller
        # kept of its bounds (keyed on bounds_version) is to be worked out again
        self.ready_changes += 1

    def tick(self) -> None:
        cycle = self.cycle
        if self.req.valid:
            request = self.req.recv()
            offset = self.offset_of(request.address, request.size_bytes)
            service = math.ceil(request.size_bytes / self.bytes_per_cycle)
            start = max(cycle, self.free_cycle)
            self.free_cycle = start + service
            self.n_busy += service
            if request.is_write:
                self.data[offset:offset + request.size_bytes] = request.data
                self.n_written += request.size_bytes
                response = MemResponse(tag=request.tag, source=request.source, created_ps=request.created_ps)
            else:
                self.n_read += request.size_bytes
                response = MemResponse(tag=request.tag, data=bytes(self.data[offset:offset + request.size_bytes]),
                                       source=request.source, created_ps=request.created_ps)
            self.ready.append((self.free_cycle + self.latency_cycles, response))
            self.ready_changes += 1
        if self.ready and self.ready[0][0] <= cycle:
            if self.rsp.try_send(self.ready[0][1]):
                self.ready.popleft()
                self.ready_changes += 1
        if self.ready:
            wait = self.ready[0][0] - cycle
            if wait > 1:
                self.sleep_for(wait)
        else:
            self.sleep()
