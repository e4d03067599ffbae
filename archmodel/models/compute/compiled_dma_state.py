"""The Snitch cluster's DMA engine in the compiled loop's arrays (:class:`ResidentDma`, the
base of :class:`~.compiled_state.Resident`): the running transfer's bursts, the lanes, the
read buffers, the words to write, the reads outstanding, copied in and out of the
:class:`~.dma.SnitchDma`; and the engine's outside port's part of a cycle
(:meth:`ResidentDma.port_step`), which Python does between batches on those arrays: start a
queued transfer, take a response (its words handed to the loop), send a burst. The loop
(:mod:`.compiled_dma`) does the rest of the engine's cycle."""

from __future__ import annotations

from itertools import chain
from typing import Any

import numpy as np

from archmodel.kernel import ModelAssertion
from archmodel.models.messages import MemRequest

from .compiled_layout import (D_BHEAD, D_CUR, D_EXT, D_ID, D_INBOUND, D_N_BUSY, D_N_IN, D_N_OUT, D_NB,
                              D_OUTSTANDING, D_P_HEAD, D_PENDING, D_QLEN, D_RB_COUNT, D_RB_HEAD, D_RSP_LOCAL,
                              D_RSP_WORDS, D_SEND_FROM, D_SUBMITTED, D_WIDTH, D_WIF, D_WW_COUNT, D_WW_HEAD, Q_WIDTH,
                              R_ISSUED, R_LEFT, R_LOCAL, R_OUTSIDE, R_SIZE, R_WIDTH)

NEVER_SEND = 1 << 62
"""A ``D_SEND_FROM`` no cycle reaches: the loop never stops for the burst waiting to go."""


class ResidentDma:
    """The DMA engine's part of a cluster's state in the compiled loop's arrays (see the
    module docstring); :class:`~.compiled_state.Resident` holds the rest and runs the loop."""

    cluster: Any
    programs: Any
    dm_ints: memoryview

    def can_run(self, cycle: int) -> bool:
        """Whether the cores can run ``cycle`` in the loop (:meth:`.compiled_state.Resident.can_run`)."""
        raise NotImplementedError

    def _load_dma(self, dma) -> None:
        """Copy the engine's state (running transfer, lanes, read buffers, words to write,
        reads outstanding, queued transfers' count) into the arrays."""
        self.transfer = transfer = dma.current
        self.lanes = lanes = np.zeros((len(dma.lane_objs), 4), np.int64)
        self.rb = rb = np.zeros((2, R_WIDTH), np.int64)
        self.rbuf = rbuf = np.zeros((2, dma.burst_bytes // 8), np.int64)
        words = dma.write_words
        self.ww = ww = np.zeros((len(words) + (dma.outstanding + 1) * dma.burst_bytes // 8, 2), np.int64)
        if words:
            ww[:len(words), 0] = [entry[2] for entry in words]
            ww[:len(words), 1] = np.frombuffer(b"".join(entry[1] for entry in words), np.int64)
        self.pend = pend = np.zeros((dma.outstanding, 2), np.int64)
        for k, (local, size) in enumerate(dma.pending_reads):
            pend[k] = (local, size)
        # a read response's words, which the loop queues for the lanes (_stage_response)
        self.staged = np.zeros(max(1, dma.burst_bytes // 8), np.int64)
        self._hold_bursts(np.array(list(transfer.bursts) if transfer is not None and transfer.bursts else [(0, 0, 0)],
                                   np.int64))
        for slot, burst in enumerate(dma.read_bursts):
            rb[slot] = (burst[0], burst[1], burst[2], burst[4], burst[5])
            rbuf[slot, :burst[2] // 8] = np.frombuffer(bytes(burst[3]), np.int64)
        slots = {id(burst): slot for slot, burst in enumerate(dma.read_bursts)}
        for k, lane in enumerate(dma.lane_objs):
            entry = lane.entry
            if entry is not None:
                if entry[0] is None:
                    lanes[k] = (1, lane.addr, int.from_bytes(entry[1], "little", signed=True), 0)
                else:
                    lanes[k] = (1, lane.addr, slots[id(entry[0])], entry[1])
        self.submitted = np.zeros((dma.queue_depth, Q_WIDTH), np.int64)
        dm = self.dm = np.zeros(D_WIDTH, np.int64)
        dm[:D_RB_COUNT + 1] = [transfer is not None, transfer is not None and transfer.inbound,
                               transfer.id if transfer is not None else 0, 0,
                               len(transfer.bursts) if transfer is not None else 0, len(dma.pending_reads),
                               dma.writes_in_flight, dma.outstanding, len(dma.queue), dma.queue_depth, dma.n_in,
                               dma.n_out, dma.n_done, dma.n_busy, dma.lane_objs[0].rid, 0, len(words), 0,
                               len(dma.read_bursts)]
        dm[D_EXT] = self.cluster.ext_req.channel is not None
        # (the port's part of a cycle reads and writes these items through memoryviews: an item
        # costs a fraction of a numpy row's)
        self.pend_ints, self.rb_ints = memoryview(pend.reshape(-1)), memoryview(rb.reshape(-1))
        self.staged_bytes = memoryview(self.staged).cast("B")

    def _hold_bursts(self, bursts: np.ndarray) -> None:
        """Give the loop ``bursts`` (rows: outside address, TCDM address, bytes), the running
        transfer's from row ``D_BHEAD`` on."""
        self.bursts = bursts
        self.bursts_ints = memoryview(bursts.reshape(-1))

    def _queue_submitted(self) -> None:
        """Make the transfers the DMA core started in the loop SnitchDma transfers, with the
        ids the loop gave them."""
        dma, dm = self.cluster.dma, self.dm_ints
        objects = self.programs.objects
        for src, dst, size, reps, sstr, dstr, ins, ident in self.submitted[:dm[D_SUBMITTED]].tolist():
            queued = dma.queue_transfer(src, dst, size, reps, sstr, dstr, objects[ins])
            if queued != ident:  # the loop checked the transfer and counted the ids as the engine does
                raise ModelAssertion(f"{self.cluster.path}: transfer {ident} from the compiled loop became {queued!r}")
        dm[D_SUBMITTED] = 0

    def port_step(self, inside: bool = False, check: int | None = None) -> bool | None:
        """The DMA port's part of this cycle, as ``SnitchDma.step`` does it, on the arrays:
        start a queued transfer, take a response, send a burst (the loop does the rest, the
        responses and bursts too when it plays the memory: ``inside``). Whether a response
        was taken or a burst sent; None when ``check`` (the cycle) is given and, before the
        first of those or a transfer's start, the cores cannot run it in the loop (a call of
        the loop that only checks): nothing then moved that the Python model's step of the
        cycle would do again (what did happen, it does alike: find the port not ready, move
        a transfer's bursts into the read buffers, queue the transfers the loop started)."""
        cluster = self.cluster
        dm = self.dm_ints
        if dm[D_SUBMITTED]:
            self._queue_submitted()
        if not dm[D_CUR]:
            dma = cluster.dma
            if not dma.queue:
                return False
            if check is not None:
                if not self.can_run(check):
                    return None
                check = None
            self.transfer = transfer = dma.current = dma.queue.popleft()
            dm[D_CUR], dm[D_INBOUND], dm[D_ID], dm[D_QLEN] = 1, transfer.inbound, transfer.id, len(dma.queue)
            n = len(transfer.bursts)
            if n:
                rows = np.fromiter(chain.from_iterable(transfer.bursts), np.int64, 3 * n).reshape(n, 3)
                if n > len(self.bursts):
                    self._hold_bursts(rows)
                else:
                    # (into the buffer the loop holds, whose arguments stay as they are; the loop reads
                    # the rows from D_BHEAD, D_NB of them)
                    self.bursts[:n] = rows
            dm[D_BHEAD], dm[D_NB] = 0, n
        if inside:
            return False
        moved = False
        rsp = cluster.ext_rsp
        if rsp.channel is not None and rsp.valid:
            if check is not None:
                if not self.can_run(check):
                    return None
                check = None
            data = rsp.recv().data
            moved = True
            if data is None:
                dm[D_WIF] -= 1
            else:
                head, pend = dm[D_P_HEAD], self.pend_ints
                local, size = pend[2 * head], pend[2 * head + 1]
                dm[D_P_HEAD] = head + 1 if 2 * head + 2 < len(pend) else 0
                dm[D_PENDING] -= 1
                self._stage_response(local, size, data)
        req = cluster.ext_req
        dm[D_SEND_FROM] = 0
        if dm[D_INBOUND]:
            if dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING]:
                if not req.ready:
                    self._blocked(req)
                    return moved
                if check is not None and not self.can_run(check):
                    return None
                self.send_read(req)
                if dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING] and not req.ready:
                    # the next burst waits for the link this one holds: it lags (see _blocked),
                    # rather than stop the batch at the next cycle to find the port not ready
                    self._blocked(req)
                return True
            return moved
        rb = self.rb_ints
        while dm[D_NB] and dm[D_RB_COUNT] < 2:
            slot = (dm[D_RB_HEAD] + dm[D_RB_COUNT]) % 2
            row, at, bursts = 3 * dm[D_BHEAD], R_WIDTH * slot, self.bursts_ints
            size = bursts[row + 2]
            rb[at + R_OUTSIDE], rb[at + R_LOCAL], rb[at + R_SIZE] = bursts[row], bursts[row + 1], size
            rb[at + R_LEFT], rb[at + R_ISSUED] = size >> 3, 0
            self.rbuf[slot] = 0
            dm[D_BHEAD] += 1
            dm[D_NB] -= 1
            dm[D_RB_COUNT] += 1
        head = dm[D_RB_HEAD]
        if dm[D_RB_COUNT] and rb[R_WIDTH * head + R_LEFT] == 0:
            if not req.ready:
                self._blocked(req)
                return moved
            if check is not None and not self.can_run(check):
                return None
            size = rb[R_WIDTH * head + R_SIZE]
            req.send(MemRequest(address=rb[R_WIDTH * head + R_OUTSIDE], size_bytes=size, is_write=True,
                                data=self.rbuf[head, :size >> 3].tobytes(), source="dma",
                                created_ps=cluster.sim.now))
            dm[D_WIF] += 1
            dm[D_N_OUT] += size
            dm[D_RB_HEAD] = (head + 1) % 2
            dm[D_RB_COUNT] -= 1
            return True
        return moved

    def send_read(self, req) -> None:
        """Send the running inbound transfer's next read burst on ``req`` (ready), as
        ``SnitchDma.step`` does, and count it outstanding."""
        dm, bursts, pend = self.dm_ints, self.bursts_ints, self.pend_ints
        row = 3 * dm[D_BHEAD]
        local, size = bursts[row + 1], bursts[row + 2]
        req.send(MemRequest(address=bursts[row], size_bytes=size, source="dma", tag=local,
                            created_ps=self.cluster.sim.now))
        slot = 2 * (dm[D_P_HEAD] + dm[D_PENDING])
        if slot >= len(pend):
            slot -= len(pend)  # (head + count of a ring lies less than twice its length on)
        pend[slot], pend[slot + 1] = local, size
        dm[D_PENDING] += 1
        dm[D_BHEAD] += 1
        dm[D_NB] -= 1

    def _blocked(self, req) -> None:
        """The DMA engine waits to send a burst on ``req``, which is not ready.

        A read burst (reads are outstanding then: only one of ours holds the credit or the
        link): sending it changes nothing the cores can see before its response, which comes
        after the oldest outstanding one's (a memory answers a source in request order, as
        the engine's ``pending_reads`` expects), itself no sooner than the lookahead horizon.
        So the loop need not stop for it (``sends_lag``): it goes when the kernel wakes the
        cluster for the returning credit, the cores' arrays ahead
        (:func:`~.compiled_batches.send_lagging_reads`). A write, whose data the lanes read
        from the TCDM: the loop need not stop for it before the first cycle at which the
        port can change (:meth:`~archmodel.kernel.OutPort.unblocks_from_ps`), which wakes
        the cluster, so no batch may run past it either."""
        dm = self.dm_ints
        if dm[D_INBOUND] and dm[D_PENDING]:
            dm[D_SEND_FROM] = NEVER_SEND
            self.sends_lag = True
            return
        domain = self.cluster.domain
        dm[D_SEND_FROM] = -((domain.phase_ps - req.unblocks_from_ps()) // domain.period_ps)

    def _stage_response(self, local: int, size: int, data: bytes) -> None:
        """Hand the loop a read burst's ``size`` bytes for the TCDM from ``local``: it queues
        their words for the lanes (``write_words``) before its first cycle
        (:func:`~.compiled_dma._take_staged`), in numba rather than in numpy's calls here."""
        dm, ww = self.dm_ints, self.ww
        count, cap, n = dm[D_WW_COUNT], len(ww), size >> 3
        if count + n > cap:  # more came back than the lanes took: grow the ring
            order = (dm[D_WW_HEAD] + np.arange(count)) % cap
            grown = np.zeros((2 * (count + n), 2), np.int64)
            grown[:count] = ww[order]
            self.ww = grown
            dm[D_WW_HEAD] = 0
        if n > len(self.staged) or dm[D_RSP_WORDS]:
            raise ModelAssertion(f"{self.cluster.path}: a read response of {size} bytes for a burst buffer of "
                                 f"{8 * len(self.staged)}, {dm[D_RSP_WORDS]} words staged before")
        self.staged_bytes[:8 * n] = data if len(data) == 8 * n else data[:8 * n]
        dm[D_RSP_LOCAL], dm[D_RSP_WORDS] = local, n


    def _store_dma(self, dma) -> None:
        """Copy the arrays back into the engine (the transfers the loop started queued first)."""
        self._queue_submitted()
        dm = self.dm
        if dm[D_RSP_WORDS]:  # (every batch's call of the loop takes them first)
            raise ModelAssertion(f"{self.cluster.path}: a read response's words were never handed to the loop")
        dma.n_in, dma.n_out, dma.n_done, dma.n_busy = dm[D_N_IN:D_N_BUSY + 1].tolist()
        transfer = self.transfer
        dma.current = transfer if dm[D_CUR] else None
        if transfer is not None:
            transfer.bursts.clear()
            transfer.bursts.extend(tuple(b) for b in self.bursts[dm[D_BHEAD]:dm[D_BHEAD] + dm[D_NB]].tolist())
        dma.writes_in_flight = int(dm[D_WIF])
        dma.pending_reads.clear()
        for k in range(dm[D_PENDING]):
            dma.pending_reads.append(tuple(self.pend[(dm[D_P_HEAD] + k) % len(self.pend)].tolist()))
        words = dma.write_words
        words.clear()
        ww = self.ww
        cap = len(ww)
        order = (dm[D_WW_HEAD] + np.arange(dm[D_WW_COUNT])) % cap
        data = ww[order, 1].tobytes()
        for k, addr in enumerate(ww[order, 0].tolist()):
            words.append((None, data[8 * k:8 * k + 8], addr))
        dma.read_bursts.clear()
        by_slot = {}
        for j in range(dm[D_RB_COUNT]):
            slot = (dm[D_RB_HEAD] + j) % 2
            outside, local, size, left, issued = self.rb[slot].tolist()
            burst = by_slot[slot] = [outside, local, size, bytearray(self.rbuf[slot, :size // 8].tobytes()), left,
                                     issued]
            dma.read_bursts.append(burst)
        for k, lane in enumerate(dma.lane_objs):
            busy, addr, bits, at = self.lanes[k].tolist()
            if not busy:
                lane.entry = None
                continue
            lane.addr = addr
            if dm[D_INBOUND]:
                lane.entry = (None, bits.to_bytes(8, "little", signed=True), addr)
            else:
                lane.entry = (by_slot[bits], at)
