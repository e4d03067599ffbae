"""The Snitch cluster's DMA engine: 1D/2D transfers between the TCDM and an outside port."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Formula, Param, at_least, model
from archmodel.models.messages import MemRequest

from .program import Instruction
from .tcdm import WordLane


class _Lane(WordLane):
    """One 64-bit lane of the DMA's TCDM side."""

    __slots__ = ()

    def grant(self, cycle: int) -> None:
        dma = self.owner
        offset = self.addr - dma.tcdm_base
        entry = self.entry
        self.entry = None
        if entry[0] is None:  # write 8 bytes into the TCDM
            dma.tcdm_data[offset:offset + 8] = entry[1]
        else:  # read 8 bytes into a burst buffer
            burst, at = entry[0], entry[1]
            burst[3][at:at + 8] = dma.tcdm_data[offset:offset + 8]
            burst[4] -= 1


class _Transfer:
    __slots__ = ("id", "inbound", "bursts", "size", "instruction")

    def __init__(self, ident: int, inbound: bool, bursts: deque, size: int, instruction: Instruction):
        self.id = ident
        self.inbound = inbound
        self.bursts = bursts  # (outside address, tcdm address, bytes)
        self.size = size
        self.instruction = instruction  # the dmcpy that started it

    @property
    def where(self) -> str:
        """The ``dmcpy``'s ``file:line: source text``, for messages (made only for one)."""
        return self.instruction.where()


@model
class SnitchDma(Component):
    """The cluster DMA engine driven by the DMA core's ``dm*`` instructions.

    A transfer copies ``size`` bytes per row (``reps`` rows with source and destination
    strides for 2D) between the TCDM and the outside memory port, in either direction. It is
    cut into bursts of at most ``burst_bytes`` that never cross a row nor a multiple of
    ``burst_bytes`` in the outside address space (as an AXI DMA's bursts never cross a 4 KiB
    boundary; so a burst never spans two interleaved memories or address ranges whose
    blocks are multiples of it). Inbound, the engine
    issues read bursts (up to ``outstanding`` in flight) and writes the returned data into
    the TCDM through ``lanes`` 64-bit lanes, 512 bit/cycle with 8 lanes (Zaruba et al., IEEE
    Micro 2021), each lane contending for its bank; outbound it reads a burst through the
    lanes and sends it as one write. Transfers run one after another in issue order; ids
    count from 0 and ``dmstati rd, 0`` returns the last completed one.

    Sizes, addresses and strides must be multiples of 8 bytes. Leaves out: TCDM-to-TCDM and
    outside-to-outside copies, error responses.
    """

    lanes = Param(int, 8, "64-bit lanes into the TCDM (8 = 512 bit/cycle)", check=at_least(1))
    burst_bytes = Param(int, 1024, "largest burst sent to the outside port", unit="bytes", check=at_least(8))
    outstanding = Param(int, 8, "read bursts in flight", check=at_least(1))
    queue_depth = Param(int, 4, "transfers waiting behind the running one", check=at_least(1))

    bytes_in = Formula("bytes", "bytes copied into the TCDM", lambda d: d.n_in)
    bytes_out = Formula("bytes", "bytes copied out of the TCDM", lambda d: d.n_out)
    transfers = Formula("transfers", "transfers completed", lambda d: d.n_done)
    busy_cycles = Formula("cycles", "cycles with a transfer in progress", lambda d: d.n_busy)
    bandwidth = Formula("GB/s", "bytes moved per simulated time", lambda d: (d.n_in + d.n_out) * 1000 / d.elapsed_ps)

    def setup(self) -> None:
        self.queue: deque = deque()
        self.current: _Transfer | None = None
        self.next_id = 0
        self.completed = -1
        self.lane_objs: list = []
        self.pending_reads: deque = deque()  # (tcdm address, bytes) per outstanding read burst
        self.write_words: deque = deque()  # (None, 8 bytes, tcdm address)
        self.read_bursts: deque = deque()  # [outside addr, tcdm addr, bytes, buffer, words left, words issued]
        self.writes_in_flight = 0
        self.n_in = self.n_out = self.n_done = self.n_busy = 0
        self.busy_reg = self.register("busy", False)
        self.inflight_reg = self.register("bytes_in_flight", 0, 32)
        self.traced = None
        self.cfg = {"src": 0, "dst": 0, "sstr": 0, "dstr": 0, "reps": 1}

    def bind(self, cluster, rid_base: int) -> None:
        """Attach the lanes to the cluster's TCDM and outside port."""
        self.cluster = cluster
        tcdm = cluster.tcdm
        self.tcdm_base = tcdm.base_address
        self.tcdm_end = tcdm.base_address + tcdm.size_bytes
        self.tcdm_data = tcdm.data
        self.lane_objs = [_Lane(self, rid_base + i) for i in range(self.lanes)]

    @property
    def busy(self) -> bool:
        return self.current is not None or bool(self.queue)

    def holding(self) -> str | None:
        """The running transfer and what it waits for, for the kernel's deadlock report."""
        self.cluster.settle()  # (the compiled loop may hold the engine's state: the objects catch up)
        if not self.busy:
            return None
        transfer = self.current if self.current is not None else self.queue[0]
        return (f"transfer {transfer.id} ({transfer.where}) with {len(transfer.bursts)} burst(s) not yet sent, "
                f"{len(self.pending_reads)} read(s) and {self.writes_in_flight} write(s) unanswered, "
                f"{len(self.queue)} transfer(s) queued behind")

    def waiting_for(self) -> list:
        """The outside memory, while a transfer runs."""
        memory = self.cluster.outside_memory()
        return [memory] if memory is not None and self.busy else []

    def in_tcdm(self, addr: int, size: int) -> bool:
        return self.tcdm_base <= addr and addr + size <= self.tcdm_end

    def start(self) -> None:
        pass

    def submit(self, size: int, two_d: bool, instruction: Instruction) -> int | str:
        """Queue a transfer from the configuration registers for the ``dmcpy`` ``instruction``;
        its id, or a reason it is illegal."""
        cfg = self.cfg
        if two_d:
            return self.queue_transfer(cfg["src"], cfg["dst"], size, cfg["reps"], cfg["sstr"], cfg["dstr"],
                                       instruction)
        return self.queue_transfer(cfg["src"], cfg["dst"], size, 1, 0, 0, instruction)

    def queue_transfer(self, src: int, dst: int, size: int, reps: int, sstr: int, dstr: int,
                       instruction: Instruction) -> int | str:
        """Queue a transfer of ``reps`` rows of ``size`` bytes for the ``dmcpy`` ``instruction``;
        its id, or a reason it is illegal (``submit`` with the configuration registers read)."""
        if size <= 0 or reps <= 0:
            return f"transfer of {size} bytes x {reps} rows is empty"
        if size % 8 or src % 8 or dst % 8 or sstr % 8 or dstr % 8:
            return "DMA sizes, addresses and strides must be multiples of 8 bytes"
        src_local = self.in_tcdm(src, size) and self.in_tcdm(src + (reps - 1) * sstr, size)
        dst_local = self.in_tcdm(dst, size) and self.in_tcdm(dst + (reps - 1) * dstr, size)
        if src_local == dst_local:
            return (f"DMA copies between the TCDM and the outside memory; 0x{src:08x} -> 0x{dst:08x} "
                    f"{'stays inside' if src_local else 'has no end in'} the TCDM")
        bursts: deque = deque()
        for row in range(reps):
            s, d = src + row * sstr, dst + row * dstr
            outside, local = (s, d) if dst_local else (d, s)
            done = 0
            while done < size:
                chunk = min(self.burst_bytes - (outside + done) % self.burst_bytes, size - done)
                bursts.append((outside + done, local + done, chunk))
                done += chunk
        ident = self.next_id
        self.next_id += 1
        self.queue.append(_Transfer(ident, dst_local, bursts, size * reps, instruction))
        return ident

    def step(self, cycle: int, requests: list, req_port, rsp_port) -> bool:
        """One cycle of the engine; True while it has work."""
        if self.current is None:
            if not self.queue:
                return False
            self.current = self.queue.popleft()
            if self.traced:
                self.busy_reg.set(True)
        self.n_busy += 1
        transfer = self.current
        if rsp_port is not None and rsp_port.valid:
            response = rsp_port.recv()
            if response.data is not None:
                local, size = self.pending_reads.popleft()
                data = response.data
                for at in range(0, size, 8):
                    self.write_words.append((None, data[at:at + 8], local + at))
            else:
                self.writes_in_flight -= 1
        if transfer.inbound:
            if transfer.bursts and len(self.pending_reads) < self.outstanding and req_port.ready:
                outside, local, size = transfer.bursts.popleft()
                req_port.send(MemRequest(address=outside, size_bytes=size, source="dma", tag=local,
                                         created_ps=self.sim.now))
                self.pending_reads.append((local, size))
            words = self.write_words
            for lane in self.lane_objs:
                if lane.entry is None and words:
                    entry = words.popleft()
                    lane.entry = entry
                    lane.addr = entry[2]
                    self.n_in += 8
                if lane.entry is not None:
                    requests.append(lane)
            finished = not transfer.bursts and not self.pending_reads and not words and \
                all(lane.entry is None for lane in self.lane_objs)
        else:
            bursts = self.read_bursts
            while transfer.bursts and len(bursts) < 2:
                outside, local, size = transfer.bursts.popleft()
                bursts.append([outside, local, size, bytearray(size), size // 8, 0])
            head = bursts[0] if bursts else None
            if head is not None and head[4] == 0 and req_port.ready:
                req_port.send(MemRequest(address=head[0], size_bytes=head[2], is_write=True, data=bytes(head[3]),
                                         source="dma", created_ps=self.sim.now))
                self.writes_in_flight += 1
                self.n_out += head[2]
                bursts.popleft()
            for lane in self.lane_objs:
                if lane.entry is None:
                    for burst in bursts:
                        if burst[5] * 8 < burst[2]:
                            at = burst[5] * 8
                            burst[5] += 1
                            lane.entry = (burst, at)
                            lane.addr = burst[1] + at
                            break
                if lane.entry is not None:
                    requests.append(lane)
            finished = not transfer.bursts and not bursts and not self.writes_in_flight and \
                all(lane.entry is None for lane in self.lane_objs)
        if self.traced:
            inflight = sum(size for _, size in self.pending_reads) + 8 * len(self.write_words)
            if self.inflight_reg.value != inflight:
                self.inflight_reg.set(inflight)
        if finished:
            self.completed = transfer.id
            self.n_done += 1
            self.current = None
            if self.traced and not self.queue:
                self.busy_reg.set(False)
        return True
