"""Host memory behind PCIe: where FCDP keeps the parameters it gathered in the forward pass."""

from __future__ import annotations

from archmodel.kernel import Counter, Component, In, Level, Out, Param, at_least, model

from .forwarding import Forwarder
from .transfer import Transfer


@model
class HostMemory(Forwarder, Component):
    """A node's host DRAM reached by its GPUs over PCIe (one link pair per GPU).

    A data message addressed to it is stored and acknowledged with a control word; a read
    request is answered with the bytes asked for, on the link back to the requester, in the
    order requests arrive. The PCIe link is the bottleneck: DRAM bandwidth (tens of GB/s
    per socket) exceeds a x16 link's, so the memory's own time is left out, as are NUMA
    placement and pinned-buffer copies. ``capacity_bytes`` bounds what may be cached (a
    schedule that needs more is an error before the run)."""

    transit = False
    links = Param(int, 1, "number of PCIe link pairs (one per GPU)", check=at_least(1))
    capacity_bytes = Param(int, 512 * 1024**3, "host memory available for caching", unit="bytes", check=at_least(1))
    inp = In("writes and read requests from GPUs", count="links", required=False)
    out = Out("read data and write acknowledgements", count="links", required=False)
    sent_bytes = Counter("bytes", "payload bytes sent back to GPUs")
    written = Counter("bytes", "bytes written by GPUs")
    cached = Level("bytes", "bytes held for the GPUs (max: the peak)")

    def setup(self) -> None:
        self._setup_forwarding()

    def tick(self) -> None:
        for msg in self._take_landed():
            if msg.request:
                self._enqueue(Transfer(self.endpoint, msg.src, msg.nbytes, msg.tag))
            else:
                self.written.add(msg.nbytes)
                self.cached.set(self.cached.value + msg.nbytes)
                self._enqueue(Transfer(self.endpoint, msg.src, 0, msg.tag, ack=True))
        self._receive()
        self._drain()
        self._forwarding_sleep()

