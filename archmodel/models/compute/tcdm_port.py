"""The cluster's TCDM slave port: other clusters' DMAs read and write this TCDM from outside."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Formula, Param, at_least, model
from archmodel.models.messages import MemResponse

from .tcdm import WordLane

RESPONSES_WAITING = 2
"""Responses the port holds before it takes no further request (pushing back on the network)."""


class _Word(WordLane):
    """One 64-bit lane of the slave port, carrying one word of a request: ``entry`` is (the
    request in service, first byte in the word, last byte + 1, offset in the request)."""

    __slots__ = ()

    def grant(self, cycle: int) -> None:
        self.owner.granted(self, cycle)


class _Serving:
    """The request whose words the lanes present to the banks."""

    __slots__ = ("request", "words", "left", "data")

    def __init__(self, request, words: deque, data: bytearray | None):
        self.request = request
        self.words = words  # (local word address, first byte, last byte + 1, offset in the request)
        self.left = len(words)
        self.data = data  # the read data as it is gathered


@model
class SnitchTcdmPort(Component):
    """The TCDM slave port of a Snitch cluster: MemRequests from outside served by the banks.

    In Manticore every cluster's TCDM is reachable over the wide (512-bit) network, so that
    one cluster's DMA moves data in or out of another's TCDM (Zaruba et al., IEEE Micro
    2021). The cluster owns the ports (``tcdm_req``/``tcdm_rsp``) and steps this engine every
    cycle it runs in Python. Addresses are global: byte ``a`` of the range
    ``[global_base, global_base + tcdm_bytes)`` is byte ``a - global_base`` of the TCDM.

    Service: requests are taken one at a time, in arrival order, at the cycle they are
    offered (while fewer than :data:`RESPONSES_WAITING` responses wait to leave). A request of
    any size and alignment touches the 64-bit words its bytes lie in; ``lanes`` word lanes
    (8: 64 B/cycle, the wide network's width) present one word each per cycle to the TCDM
    arbitration, where they contend for banks with the cores, their streamers and the DMA
    lanes like any other requester (one grant per bank per cycle, round robin over requester
    ids; the port's lanes have the ids after the DMA's). A granted word is read or written
    at its grant (only the request's bytes of it); when the request's last word is granted
    at cycle ``g``, its response (the read bytes, or a write acknowledgement, with the
    request's ``tag`` and ``source``) leaves at cycle ``g + tcdm_latency_cycles`` or as soon
    after as ``tcdm_rsp`` takes it. A request of ``s`` bytes at an 8-byte-aligned address
    with no conflicts is answered ``ceil(s / 8 / lanes) - 1 + latency`` cycles after it was
    taken; the next request is taken the cycle after the last word's grant.

    A request outside the global range stops the run naming the address, the range and the
    requester. Leaves out: atomics, several requests in service at once, a read that sees a
    core's write in the same cycle before its grant (writes take effect at their grant).
    """

    lanes = Param(int, 8, "64-bit word lanes into the TCDM (8 = 64 B/cycle)", check=at_least(1))

    bytes_read = Formula("bytes", "bytes read from outside", lambda p: p.n_read)
    bytes_written = Formula("bytes", "bytes written from outside", lambda p: p.n_written)
    requests = Formula("requests", "requests answered", lambda p: p.n_requests)

    def setup(self) -> None:
        self.serving: _Serving | None = None
        self.responses: deque = deque()  # (cycle it may leave, MemResponse)
        self.lane_objs: list = []
        self.n_read = self.n_written = self.n_requests = 0
        self.global_base = 0

    def bind(self, cluster, rid_base: int, global_base: int) -> None:
        """Attach the lanes to the cluster's TCDM (requester ids from ``rid_base``)."""
        self.cluster = cluster
        self.tcdm = cluster.tcdm
        self.global_base = global_base
        self.lane_objs = [_Word(self, rid_base + i) for i in range(self.lanes)]

    @property
    def busy(self) -> bool:
        """A request in service or a response waiting to leave."""
        return self.serving is not None or bool(self.responses)

    def holding(self) -> str | None:
        """The request in service and the responses waiting, for the deadlock report."""
        words = len(self.serving.words) if self.serving is not None else 0
        return (f"{words} word(s) of a request not yet presented to the banks, {len(self.responses)} response(s) "
                "waiting to leave") if self.busy else None

    def step(self, cycle: int, requests: list, req_port, rsp_port) -> None:
        """One cycle: send a due response, take a request, present words to the banks."""
        responses = self.responses
        if responses and responses[0][0] <= cycle and rsp_port.try_send(responses[0][1]):
            responses.popleft()
        if self.serving is None and len(responses) < RESPONSES_WAITING and req_port.valid:
            self._take(req_port.recv())
        serving = self.serving
        if serving is None:
            return
        words = serving.words
        for lane in self.lane_objs:
            if lane.entry is None and words:
                entry = words.popleft()
                lane.entry = (serving, entry[1], entry[2], entry[3])
                lane.addr = entry[0]
            if lane.entry is not None:
                requests.append(lane)

    def _take(self, request) -> None:
        size = request.size_bytes
        offset = request.address - self.global_base
        if size <= 0 or offset < 0 or offset + size > self.tcdm.size_bytes:
            self.fail(f"request of {size} bytes at 0x{request.address:08x} from {request.source!r} is outside "
                      f"this TCDM (0x{self.global_base:08x} .. 0x{self.global_base + self.tcdm.size_bytes - 1:08x})")
        if request.is_write and (request.data is None or len(request.data) != size):
            self.fail(f"write of {size} bytes at 0x{request.address:08x} from {request.source!r} carries "
                      f"{0 if request.data is None else len(request.data)} bytes of data")
        words = deque()
        base = self.tcdm.base_address
        at = offset
        while at < offset + size:
            word = at & ~7
            end = min(word + 8, offset + size)
            words.append((base + word, at - word, end - word, at - offset))
            at = end
        self.serving = _Serving(request, words, None if request.is_write else bytearray(size))

    def granted(self, lane: _Word, cycle: int) -> None:
        """The TCDM granted ``lane``'s word at ``cycle``: read or write its bytes."""
        serving, lo, hi, at = lane.entry
        lane.entry = None
        word = lane.addr - self.tcdm.base_address
        data = self.tcdm.data
        request = serving.request
        if serving.data is None:
            data[word + lo:word + hi] = request.data[at:at + hi - lo]
            self.n_written += hi - lo
        else:
            serving.data[at:at + hi - lo] = data[word + lo:word + hi]
            self.n_read += hi - lo
        serving.left -= 1
        if serving.left == 0:
            data_out = None if serving.data is None else bytes(serving.data)
            self.responses.append((cycle + self.tcdm.latency_cycles,
                                   MemResponse(tag=request.tag, data=data_out, source=request.source,
                                               created_ps=request.created_ps)))
            self.n_requests += 1
            self.serving = None
