"""A client request's pieces and the reorder buffer that answers whole requests: a request
cut into pieces (device bursts, or one channel's share) at multiples of a power of two
(:func:`split`, or :class:`Bursts` where only some pieces are asked for), the
:class:`Job` that follows its pieces through service, and the :class:`ResponseOrder` that
answers each request once all its pieces are, in request order per client (see
:mod:`.splitting`).
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Sequence
from itertools import repeat
from typing import Any

from ..messages import MemRequest, MemResponse

NEVER = 1 << 62
"""A cycle later than any simulation reaches (no response is due)."""


def split(address: int, size: int, piece_bytes: int) -> list[tuple[int, int]]:
    """``(address, size)`` pieces of a request, cut at multiples of ``piece_bytes`` (a power
    of two), in address order."""
    end = address + size
    first = (address | (piece_bytes - 1)) + 1  # the first cut after address
    if first >= end:
        return [(address, size)] if size > 0 else []
    last = end & -piece_bytes  # the last cut before end
    # the whole pieces between the cuts, made in C (a request of a DMA burst has dozens)
    pieces = [(address, first - address), *zip(range(first, last, piece_bytes), repeat(piece_bytes))]
    if last < end:
        pieces.append((last, end - last))
    return pieces


class Bursts(Sequence):
    """The pieces :func:`split` cuts ``size`` bytes from ``address`` into, at multiples of
    ``piece_bytes`` (a power of two), worked out when asked for: a controller whose compiled
    core cuts a request into its bursts itself reads only how many there are and, for its
    answer bounds, an address or two."""

    __slots__ = ("address", "size", "piece_bytes", "count")

    def __init__(self, address: int, size: int, piece_bytes: int):
        self.address = address
        self.size = size
        self.piece_bytes = piece_bytes
        self.count = (address + size - 1) // piece_bytes - address // piece_bytes + 1 if size > 0 else 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self.count))]
        if i < 0:
            i += self.count
        if not 0 <= i < self.count:
            raise IndexError(i)
        end = self.address + self.size
        start = self.address if i == 0 else (self.address & -self.piece_bytes) + i * self.piece_bytes
        stop = min(end, (start | (self.piece_bytes - 1)) + 1)
        return start, stop - start


class Job:
    """One client request in service: its pieces, how many of them entered service and how
    many are still to finish, the cycle the last known piece finishes, and its read data.
    ``slot``: the job slot a compiled scheduling core names it by (-1: none), which then
    counts its pieces until the last finishes (see :meth:`ResponseOrder.job_done`).
    ``client_jobs``: its client's jobs in the :class:`ResponseOrder` while it is one of them
    (None: not tracked)."""

    __slots__ = ("message", "pieces", "entered", "left", "done", "data", "seq", "tracked", "slot", "client_jobs")

    def __init__(self, message: MemRequest, pieces: list[tuple[int, int]], data, seq: int, tracked: bool):
        self.message = message
        self.pieces = pieces
        self.entered = 0
        self.left = len(pieces)
        self.done = 0
        self.data = data
        self.seq = seq
        self.tracked = tracked
        self.slot = -1
        self.client_jobs: deque | None = None

    @property
    def write(self) -> bool:
        return self.message.is_write

    @property
    def waiting(self) -> bool:
        """Some pieces have not entered service yet."""
        return self.entered < len(self.pieces)

    def response(self) -> MemResponse:
        """The one response to the whole request."""
        m = self.message
        data = None if m.is_write else bytes(self.data)
        return MemResponse(tag=m.tag, data=data, source=m.source, created_ps=m.created_ps)


class ResponseOrder:
    """The reorder buffer of a memory: jobs by client in arrival order, and a heap of the
    responses that may leave (``(due cycle, seq, job)``, each the oldest unanswered job of its
    client with every piece finished)."""

    def __init__(self) -> None:
        self._clients: dict[Any, deque[Job]] = {}
        self._ready: list[tuple[int, int, Job]] = []
        self._seq = 0
        self.jobs = 0
        # An attribute kept with the heap, not a property: a controller reads it a few times
        # per DRAM cycle.
        self.due = NEVER
        """The cycle the next response may leave (:data:`NEVER` if none may)."""

    def open(self, message: MemRequest, pieces: list[tuple[int, int]], data=None, track: bool = True) -> Job:
        """Start serving ``message`` as ``pieces``; ``data`` is its read data if known now (a
        controller reads its store at arrival) or a buffer the pieces fill. With ``track``
        false (no response port) nothing is remembered."""
        self._seq += 1
        job = Job(message, pieces, data, self._seq, track)
        if track:
            queue = self._clients.get(message.source)
            if queue is None:
                queue = self._clients[message.source] = deque()
            queue.append(job)
            # (kept on the job: its client's queue is looked up again as it finishes and is
            # answered, and a client's key may be a nested tuple, hashed anew at each look-up)
            job.client_jobs = queue
            self.jobs += 1
        return job

    def piece_done(self, job: Job, cycle: int, offset: int = -1, data: bytes | None = None) -> None:
        """One piece of ``job`` finishes at ``cycle``; ``data`` (read bytes at ``offset`` of the
        request) fills the buffer when the data comes with the piece."""
        if data is not None:
            job.data[offset:offset + len(data)] = data
        if cycle > job.done:
            job.done = cycle
        job.left -= 1
        if job.left == 0 and job.tracked and job.client_jobs[0] is job:
            heapq.heappush(self._ready, (job.done, job.seq, job))
            self.due = self._ready[0][0]

    def job_done(self, job: Job, cycle: int) -> None:
        """Every piece of ``job`` has finished, the last at ``cycle`` (as :meth:`piece_done` for
        each, where whoever finishes the pieces counts them: a compiled core does)."""
        if cycle > job.done:
            job.done = cycle
        job.left = 0
        if job.tracked and job.client_jobs[0] is job:
            heapq.heappush(self._ready, (job.done, job.seq, job))
            self.due = self._ready[0][0]

    def head(self) -> MemResponse:
        """The response that may leave first (call only when ``due`` has come)."""
        return self._ready[0][2].response()

    def pop(self) -> None:
        """The head response left: its client's next job may follow once it is finished."""
        _, _, job = heapq.heappop(self._ready)
        self.jobs -= 1
        queue = job.client_jobs
        queue.popleft()
        if not queue:
            del self._clients[job.message.source]
        elif queue[0].left == 0:
            nxt = queue[0]
            heapq.heappush(self._ready, (nxt.done, nxt.seq, nxt))
        self.due = self._ready[0][0] if self._ready else NEVER

    def unfinished(self):
        """The jobs with pieces still to finish, every client's, oldest first per client."""
        for queue in self._clients.values():
            for job in queue:
                if job.left:
                    yield job

    def heads(self):
        """Each client's oldest unanswered job: the only one of its jobs whose response can
        leave next."""
        for queue in self._clients.values():
            yield queue[0]

    def head_of(self, source) -> Job | None:
        """The oldest unanswered job of client ``source`` (None: it has none here): the only
        one of its jobs whose response can leave next."""
        queue = self._clients.get(source)
        return queue[0] if queue else None

    def has_client(self, source) -> bool:
        """Whether ``source`` has a request here still to be answered."""
        return source in self._clients

    def __len__(self) -> int:
        return self.jobs
