"""How requests enter a :class:`~.controller.DramController` besides its ``req`` port (a mixin of
the controller, which holds the state): an attached stream, as Ramulator's trace frontend
feeds its controller, and the requests that enter at the next cycle once a burst has left a
queue."""

from __future__ import annotations

from collections.abc import Iterable


class TakesStreams:
    """The controller's attached stream (see :meth:`attach_stream`). The controller provides
    ``_stream``, ``_stream_head``, ``_job``, ``_enter``, ``_enqueue``, ``_decode``, the queue
    counts and capacities and ``burst_bytes``."""

    def attach_stream(self, requests: Iterable) -> None:
        """Feed requests from an iterable inside the controller, as Ramulator's trace
        frontend does: items are ``(cycle, address, is_write)``; each enters the queue at
        its cycle or, when the queue is full, as soon as there is room (so an untimed trace,
        cycle 0 everywhere, keeps the queues full). No responses are sent for them."""
        self._stream = iter(requests)
        self._stream_head = next(self._stream, None)

    def _take_next_cycle(self, c: int) -> None:
        """A burst left a queue at cycle c, so there may be room: requests due by the next
        cycle enter now (at c + 1), before the command of that cycle is chosen."""
        job = self._job
        if job is not None:
            self._enter(c + 1, job)
        head = self._stream_head
        if head is not None and head[0] <= c + 1 and (
                self._wq_count < self.write_queue if head[2] else self._rq_count < self.read_queue):
            self._pull_stream(c + 1)

    def _pull_stream(self, c: int) -> None:
        """Queue the stream's requests due by cycle c, in order, while their queues have room."""
        head = self._stream_head
        stream = self._stream
        while head is not None and head[0] <= c:
            if head[2]:
                if self._wq_count >= self.write_queue:
                    break
            elif self._rq_count >= self.read_queue:
                break
            bank, row, column = self._decode(head[1])
            self._enqueue(c, head[1], head[2], None, self.burst_bytes, bank, row, column)
            head = next(stream, None)
        self._stream_head = head
