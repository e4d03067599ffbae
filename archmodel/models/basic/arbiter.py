"""A round-robin arbiter merging several streams into one."""

from __future__ import annotations

from archmodel.kernel import Component, Counter, In, Out, Param, at_least, model


@model
class RoundRobinArbiter(Component):
    """Merges several streams into one, granting one message per edge in round-robin order.

    At each edge where the output is ready, the arbiter grants the first input holding a
    message, searching from the input after the one granted last (input 0 first), takes
    that message and sends it on. With every input busy the grant order is 0, 1, ..., N-1,
    0, ...; an input waits at most N - 1 grants. This is the classic rotating-priority
    arbiter (Dally and Towles, Principles and Practices of Interconnection Networks, 18.3).

    Besides the declared statistics, ``grants[i]`` counts the grants to input i.
    Leaves out: priorities, weights and locking (packet-granular) arbitration; the message
    is one unit however large it is.
    """

    inputs = Param(int, 2, "number of input streams", check=at_least(1))
    inp = In("the competing streams", count="inputs")
    out = Out("the merged stream")
    grants = Counter("grants", "messages granted, all inputs")
    conflict_cycles = Counter("cycles", "edges with a grant while another input also waited")

    def setup(self) -> None:
        self.grants_by_input = []
        for i in range(self.inputs):
            stat = self.add_stat(f"grants[{i}]", Counter("grants", f"messages granted to inp[{i}]"))
            self.grants_by_input.append(stat)
        self.priority = self.register("priority", 0, width=max(1, (self.inputs - 1).bit_length()))

    def tick(self) -> None:
        inputs = self.inp
        count = self.inputs
        start = self.priority.value
        granted = None
        waiting = 0
        for offset in range(count):
            index = (start + offset) % count
            if inputs[index].valid:
                waiting += 1
                if granted is None:
                    granted = index
        if granted is None or not self.out.try_send(inputs[granted].peek()):
            self.sleep()  # an arrival, a returning credit or a freed link wakes us
            return
        inputs[granted].recv()
        self.grants.add()
        self.grants_by_input[granted].add()
        if waiting > 1:
            self.conflict_cycles.add()
        self.priority.set((granted + 1) % count)
