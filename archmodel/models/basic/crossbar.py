"""A crossbar switch routing each message to the output its destination names."""

from __future__ import annotations

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model


@model
class Crossbar(Component):
    """An inputs x outputs crossbar routing each message to the output its destination names.

    Each message goes to ``out[d]`` where ``d`` is its ``dest_field`` attribute
    (``Packet.dest`` by default). At each edge every output that is ready grants one of the inputs whose head message is
    for it, round robin from the input after its last grant, as in a separable input-queued
    switch with one queue per input (Dally and Towles, Principles and Practices of
    Interconnection Networks, 19.1). So per edge each input forwards at most one message and
    each output receives at most one; a head message waiting for a busy output blocks the
    messages behind it (head-of-line blocking).

    A destination that is not an output index stops the run with a ModelAssertion naming the
    input and the message. Leaves out: virtual output queues, speedup, multicast.
    """

    inputs = Param(int, 2, "number of input ports", check=at_least(1))
    outputs = Param(int, 2, "number of output ports", check=at_least(1))
    dest_field = Param(str, "dest", "message attribute holding the output index")
    inp = In("messages to route", count="inputs")
    out = Out("routed messages", count="outputs")
    forwarded = Counter("messages", "messages sent to an output")
    conflicts = Counter("grants", "grants made while another input also wanted that output")

    def setup(self) -> None:
        self.priority = [0] * self.outputs

    def _destination(self, index: int, msg) -> int:
        dest = getattr(msg, self.dest_field, None)
        if isinstance(dest, bool) or not isinstance(dest, int) or not 0 <= dest < self.outputs:
            self.fail(f"inp[{index}] received {msg!r} whose {self.dest_field} is {dest!r}, "
                      f"not an output index 0..{self.outputs - 1}")
        return dest

    def tick(self) -> None:
        requests: dict[int, list[int]] = {}
        for index, port in enumerate(self.inp):
            if port.valid:
                requests.setdefault(self._destination(index, port.peek()), []).append(index)
        moved = False
        for dest, requesters in requests.items():
            start = self.priority[dest]
            winner = min(requesters, key=lambda i: (i - start) % self.inputs)
            if not self.out[dest].try_send(self.inp[winner].peek()):
                continue
            self.inp[winner].recv()
            if len(requesters) > 1:
                self.conflicts.add()
            self.priority[dest] = (winner + 1) % self.inputs
            self.forwarded.add()
            moved = True
        if not moved:
            self.sleep()  # an arrival or a returning credit wakes us
