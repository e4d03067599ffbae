"""A fixed-latency pipeline that stalls as a whole under backpressure."""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model

from .condition_cycles import ConditionCycles


@model
class DelayLine(Component):
    """A fixed-latency pipeline: each message leaves exactly latency_cycles edges after it entered.

    The pipe has ``latency_cycles`` stages; only backpressure from the output delays a message.

    One message may enter and one leave per edge. When the message at the end of the pipe
    cannot leave because the output is not ready, the whole pipe stalls, as an RTL pipeline
    with a global stall does: no message advances and none is taken in, so the spacing
    between messages (bubbles included) is kept and every message in the pipe is delayed by
    the stalled cycles. ``depth`` caps the messages inside at once (default: one per stage);
    a smaller depth models a pipe that cannot overlap that many operations.

    Use it for a fixed-latency unit (an FPU pipeline, a pipelined link stage) whose timing is
    known from its datasheet. Leaves out: elastic buffering that squeezes out bubbles (put a
    Fifo behind it), and variable latency.
    """

    latency_cycles = Param(int, 1, "edges from taking a message in to sending it on", unit="cycles",
                           check=at_least(1))
    depth = Param(int, None, "messages inside at once (default latency_cycles)", unit="messages",
                  check=at_least(1))
    inp = In("messages to delay")
    out = Out("the same messages, latency_cycles later")
    passed = Counter("messages", "messages sent on")
    stalled_cycles = ConditionCycles("edges the pipe was stalled by the output")

    def setup(self) -> None:
        self.capacity = self.depth if self.depth is not None else self.latency_cycles
        # (pipe time at which the message leaves, message); pipe time stops while stalled.
        self.pipe: deque = deque()
        self.stall_total = 0
        self.count = self.register("count", 0, width=max(1, self.capacity.bit_length()))

    def tick(self) -> None:
        cycle = self.cycle
        stalls = self.stalled_cycles
        if stalls.active:
            self.stall_total += cycle - stalls.since
            stalls.end(cycle)
        pipe_now = cycle - self.stall_total
        pipe = self.pipe
        sent = False
        if pipe and pipe[0][0] <= pipe_now:
            if not self.out.try_send(pipe[0][1]):
                stalls.begin(cycle)
                self.sleep()  # a returning credit or a freed link wakes us
                return
            pipe.popleft()
            self.passed.add()
            sent = True
        taken = len(pipe) < self.capacity and self.inp.valid
        if taken:
            pipe.append((pipe_now + self.latency_cycles, self.inp.recv()))
        if sent != taken:
            self.count.set(len(pipe))
        if taken or sent:
            return  # look again next edge: another message may wait, or the next one be due
        if pipe:
            self.sleep_for(pipe[0][0] - pipe_now)  # an arrival may wake us earlier
        else:
            self.sleep()
