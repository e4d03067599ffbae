"""A first-in first-out queue between two channels."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Formula, In, Level, Out, Param, at_least, model

from .condition_cycles import ConditionCycles


@model
class Fifo(Component):
    """A first-in first-out queue of up to depth messages.

    At each edge the head message leaves if the output is ready, then one waiting input
    message is taken in if there is room, counting a slot freed in the same edge (dequeue
    before enqueue, as PyMTL3's PipeQueue and Bluespec's mkPipelineFIFO). So at most one
    message enters and one leaves per cycle, a message taken in at edge t leaves at edge
    t + 1 at the earliest, and even ``depth = 1`` sustains one message per cycle. Behind
    latency-1 channels a message sent at edge t reaches the next model at edge t + 3.

    The Fifo sleeps after an edge at which nothing moved (empty with no input waiting, or
    unable to send and either full or without input); an arrival, a returning credit or a
    freed link wakes it, so a Fifo blocked for a million cycles costs nothing meanwhile.

    Leaves out: bypass (a message cannot pass through in the edge it arrives, because every
    connection is registered), and any width change or message splitting.
    """

    depth = Param(int, 2, "messages the queue holds", unit="messages", check=at_least(1))
    inp = In("messages to queue")
    out = Out("messages in arrival order")
    # The channels already count every transfer; reading them keeps the tick loop lean.
    enqueued = Formula("messages", "messages taken in", lambda fifo: fifo.inp.channel.received)
    dequeued = Formula("messages", "messages sent on", lambda fifo: fifo.out.channel.sent)
    occupancy = Level("messages", "messages held (time-weighted mean, max)")
    full_cycles = ConditionCycles("edges after which the queue held depth messages")

    def setup(self) -> None:
        self.queue: deque = deque()
        self.count = self.register("count", 0, width=max(1, self.depth.bit_length()))

    def tick(self) -> None:
        queue = self.queue
        sent = bool(queue) and self.out.try_send(queue[0])
        if sent:
            queue.popleft()
        taken = len(queue) < self.depth and self.inp.valid
        if taken:
            queue.append(self.inp.recv())
        if sent != taken:
            # The occupancy changed by one: it can only have become full, or stopped being so.
            held = len(queue)
            self.occupancy.set(held)
            self.count.set(held)
            if held == self.depth:
                self.full_cycles.begin(self.cycle)
            elif sent and held == self.depth - 1:
                self.full_cycles.end(self.cycle)
        if not (sent or taken):
            # Idle or blocked: an arrival, a returning credit or a freed link wakes us.
            self.sleep()
