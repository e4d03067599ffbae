"""Store-and-forward of whole messages, shared by every part that puts messages on links:
GPUs, NICs and host memories, and the NIC model itself.

A link is a kernel channel with a width and a latency (``with link(bandwidth = 10 Gbit/s,
latency = 5 us)`` in ``.arch``): a message of ``S`` bits holds it for ``ceil(S / width)``
cycles and lands ``latency`` cycles after its last beat. A part acts on a message the cycle
after it lands (one cycle to post the dependent send or the forward), so one hop of a
message of ``t`` beats on a link of latency ``L`` costs ``t + L`` cycles. Each output port
keeps a FIFO of messages for that link (unbounded: at chunk level a sender's queue is its
pending work requests, not buffer slots).

Routes come from the connection graph after elaboration (:func:`~.routing.install_routes`):
``routes[endpoint]`` is the output port toward that endpoint. A message for an endpoint
without a route stops the run naming both.
"""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model


class Forwarder:
    """Mixin of a component with port arrays ``inp`` and ``out`` that receives messages,
    keeps those for itself and forwards the rest by its routing table.

    ``endpoint`` is this part's address (None for a part that is only a transit, a NIC);
    ``transit`` says whether routes may pass through it."""

    transit = True

    def _setup_forwarding(self) -> None:
        self.endpoint: int | None = None
        self.routes: dict[int, int] = {}
        self._queues = [deque() for _ in self.out]
        self._landed: list = []
        self._port_bytes = [0] * len(self.out)
        self._busy = [self.register(f"out{i}_busy", False) for i in range(len(self.out))]
        self._busy_until = [0] * len(self.out)

    def install_routes(self, endpoint: int | None, routes: dict[int, int]) -> None:
        """Give this part its address and its routing table (endpoint -> output port)."""
        self.endpoint = endpoint
        self.routes = dict(routes)

    def port_bytes(self, index: int) -> int:
        """Payload bytes sent so far on output port ``index``."""
        return self._port_bytes[index]

    def _enqueue(self, msg, owner=None) -> None:
        port = self.routes.get(msg.dst)
        if port is None:
            self.fail(f"no route to endpoint {msg.dst} for {msg!r}")
        self._queues[port].append((msg, owner))

    def _take_landed(self) -> list:
        """The messages for this part that landed at the previous edge; those for others
        are queued toward their endpoints."""
        if not self._landed:
            return []
        landed, self._landed = self._landed, []
        me = self.endpoint
        mine = []
        for msg in landed:
            if msg.dst == me:
                mine.append(msg)
            else:
                self._enqueue(msg)
        return mine

    def _receive(self) -> None:
        """Take one message from every input; it lands now and is acted on at the next edge."""
        for port in self.inp:
            if port.channel is not None and port.valid:
                self._landed.append(port.recv())

    def _drain(self) -> None:
        """Put the head of every output queue on its link if the link is free."""
        tracing = self.sim.tracing
        for index, queue in enumerate(self._queues):
            if not queue:
                continue
            port = self.out[index]
            msg, owner = queue[0]
            if not port.try_send(msg):
                continue
            queue.popleft()
            self._port_bytes[index] += msg.payload_bytes
            self.sent_bytes.add(msg.payload_bytes)
            if owner is not None:
                self._sent(owner)
            channel = port.channel
            if tracing:
                self._busy[index].set(True)
                self._busy_until[index] = channel.busy_until
            if queue:
                port.try_send(queue[0][0])  # fails (the link is busy): marks it, so freeing wakes us

    def _sent(self, owner) -> None:
        """A message of ``owner`` (a task, for a GPU) has left: override to account it."""

    def _forwarding_sleep(self) -> None:
        """Sleep unless a landed message needs the next edge; while tracing, wake when a
        link's busy signal falls."""
        self.sleep()
        if self._landed:
            self.wake_in(1)
        if self.sim.tracing:
            now = self.now
            for index, reg in enumerate(self._busy):
                if reg.next and self._busy_until[index] <= now and not self._queues[index]:
                    reg.set(False)
                    self.progress()  # a waveform-only change, but a change: not a hang
                elif reg.next and self._busy_until[index] > now:
                    self.wake_at(self._busy_until[index])


@model
class Nic(Forwarder, Component):
    """A network interface or switch port that forwards whole messages between links: the
    node's uplink in a cluster (local ports toward its GPUs over PCIe, the rest toward other
    NICs over Ethernet or InfiniBand). Store and forward at chunk level: a chunk leaves on
    the next link the cycle after its tail arrives, so chunks pipeline through it.

    Use it as the node of a ``topology`` statement (``fabric : topology clusters(2, 1,
    local_ports = 4) of Nic()``). Leaves out: congestion control, packet loss, RDMA
    queue-pair limits, switch buffers (queues are unbounded)."""

    links = Param(int, 1, "number of input and output ports (a topology sets it)", check=at_least(1))
    inp = In("messages arriving", count="links", required=False)
    out = Out("messages leaving", count="links", required=False)
    sent_bytes = Counter("bytes", "payload bytes sent on all output links")

    def setup(self) -> None:
        self._setup_forwarding()

    def tick(self) -> None:
        mine = self._take_landed()
        if mine:
            self.fail(f"a message addressed to a NIC: {mine[0]!r}")
        self._receive()
        self._drain()
        self._forwarding_sleep()
