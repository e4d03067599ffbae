"""A core that plays a workload's memory references: an abstraction of an out-of-order core
that only keeps what bounds memory-level parallelism."""

from __future__ import annotations

from typing import Callable

import numpy as np

from archmodel.kernel import Component, Counter, Formula, In, Out, Param, at_least, model
from archmodel.models.messages import MemRequest


class References:
    """A stream of memory references as parallel numpy arrays (one entry per reference).

    ``address`` (byte address), ``size`` (bytes, 1 to 8), ``write`` (bool), ``gap`` (compute
    cycles before the reference may issue, counted from the previous issue), ``dep`` (how many
    references back the one whose loaded value this address depends on; 0 for none), and
    ``value`` (the 64-bit pattern a write stores, or a read must return, in its low ``size``
    bytes, little-endian). Workloads build them; :class:`ReferenceCore` plays them.
    """

    __slots__ = ("address", "size", "write", "gap", "dep", "value")

    def __init__(self, address, size, write, gap, dep, value):
        n = len(address)
        self.address = np.asarray(address, dtype=np.int64)
        self.size = np.asarray(size, dtype=np.int64)
        self.write = np.asarray(write, dtype=bool)
        self.gap = np.asarray(gap, dtype=np.int64)
        self.dep = np.asarray(dep, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.uint64)
        for name in ("size", "write", "gap", "dep", "value"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"references: '{name}' has {len(getattr(self, name))} entries, 'address' has {n}")
        if n and (self.size.min() < 1 or self.size.max() > 8):
            raise ValueError("references: every size must be 1 to 8 bytes")
        if n and (self.dep.min() < 0 or (self.dep > np.arange(n)).any()):
            raise ValueError("references: a dependence must point back to an earlier reference")

    def __len__(self) -> int:
        return len(self.address)

    @classmethod
    def concatenate(cls, parts: list["References"]) -> "References":
        """One stream of several, in order (dependences stay inside their part)."""
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in cls.__slots__))


@model
class ReferenceCore(Component):
    """Plays a :class:`References` stream on ``req``/``resp``, with at most ``window``
    references in flight, like the load/store queue of an out-of-order core.

    Reference i issues (one per cycle at most) once all of these hold: ``gap[i]`` cycles of
    compute have passed since reference i-1 issued (the instructions between them, at one
    per cycle); fewer than ``window`` references are in flight; and the reference whose value
    it needs (``dep[i]`` back, the load of a neighbour id before the load of that neighbour's
    data) has been answered. Answers come back in order (the memory answers a port in
    request order), so a reference retires when it and every older one are answered, as
    from a reorder buffer. With ``check_reads`` every read answer is compared with the value
    the workload computed for it: a mismatch stops the run, naming the reference.

    The core is done at the cycle its last answer arrives; ``on_finish`` callbacks then run.

    Leaves out: instruction fetch, branch prediction, the register dataflow of compute
    instructions (compute is a count of cycles), store-to-load forwarding, and more than one
    memory port.
    """

    window = Param(int, 16, "references in flight at most (load/store queue entries)", check=at_least(1))
    check_reads = Param(bool, True, "compare every read answer with the workload's expected value")

    req = Out("memory references (MemRequest)", pair="resp")
    resp = In("answers (MemResponse), in request order")

    references = Counter("references", "references played")
    reads = Counter("references", "read references")
    writes = Counter("references", "write references")
    compute_cycles = Counter("cycles", "cycles of compute between references")
    window_stalls = Counter("cycles", "cycles the next reference waited for room in the window")
    dependence_stalls = Counter("cycles", "cycles the next reference waited for the value its address needs")
    cycles = Formula("cycles", "cycles from the first edge to the last answer", lambda c: c.done_cycle + 1
                     if c.done_cycle >= 0 else c.elapsed_cycles)

    def setup(self) -> None:
        self.stream: References | None = None
        self.done_cycle = -1
        self._finish: list[Callable] = []

    def load(self, stream: References) -> None:
        """The references to play from the first edge."""
        self.stream = stream
        self._addr = stream.address.tolist()
        self._size = stream.size.tolist()
        self._write = stream.write.tolist()
        self._gap = stream.gap.tolist()
        self._dep = stream.dep.tolist()
        self._value = stream.value.tolist()

    def on_finish(self, callback: Callable) -> None:
        """Call ``callback(core)`` once the last answer arrived."""
        self._finish.append(callback)

    def start(self) -> None:
        self._next = 0  # the next reference to issue
        self._answered = 0
        self._stalled = None  # (the counter of the stall, its first cycle) while the next reference waits
        if self.stream is None or not len(self.stream):
            self._earliest = 0
            if self.stream is not None:
                self.done_cycle = 0
            return
        self._earliest = self._gap[0]  # the first cycle the next reference may issue (its compute done)
        self.compute_cycles.value += self._gap[0]

    @property
    def done(self) -> bool:
        """Every reference is answered."""
        return self.done_cycle >= 0

    def tick(self) -> None:
        c = self.cycle
        if self.stream is None or self.done_cycle >= 0:
            self.sleep()
            return
        if self.resp.valid:
            self._answer(c, self.resp.recv())
            if self.done_cycle >= 0:
                self.sleep()
                return
        i = self._next
        if i < len(self._addr):
            if c < self._earliest:
                self.sleep_for(self._earliest - c)
                return
            if i - self._answered >= self.window:
                self._stall(c, self.window_stalls)
            elif self._dep[i] and i - self._dep[i] >= self._answered:
                self._stall(c, self.dependence_stalls)
            else:
                write = self._write[i]
                size = self._size[i]
                data = self._value[i].to_bytes(8, "little")[:size] if write else None
                request = MemRequest(address=self._addr[i], size_bytes=size, is_write=write, data=data,
                                     source=self.path, tag=i, created_ps=self.sim.now)
                if self.req.try_send(request):
                    self._issued(c, i, write)
                    return
        if not len(self.resp):
            self.sleep()  # an answer or a returning credit wakes it

    def _stall(self, c: int, counter) -> None:
        if self._stalled is None or self._stalled[0] is not counter:
            self._end_stall(c)
            self._stalled = (counter, c)

    def _end_stall(self, c: int) -> None:
        if self._stalled is not None:
            counter, since = self._stalled
            counter.value += c - since
            self._stalled = None

    def _issued(self, c: int, i: int, write: bool) -> None:
        self._end_stall(c)
        self.references.value += 1
        if write:
            self.writes.value += 1
        else:
            self.reads.value += 1
        self._next = i + 1
        if i + 1 < len(self._addr):
            gap = self._gap[i + 1]
            self.compute_cycles.value += gap
            self._earliest = c + 1 + gap

    def _answer(self, c: int, answer) -> None:
        i = self._answered
        if answer.tag != i:
            self.fail(f"answer for reference {answer.tag} came while reference {i} was the oldest in flight")
        if self.check_reads and not self._write[i]:
            want = self._value[i].to_bytes(8, "little")[:self._size[i]]
            if answer.data != want:
                self.fail(f"reference {i}: read of {self._size[i]} bytes at {self._addr[i]:#x} returned "
                          f"{answer.data.hex()}, the workload expects {want.hex()}")
        self._answered = i + 1
        if self._answered == len(self._addr):
            self.done_cycle = c
            for callback in self._finish:
                callback(self)

    def holding(self) -> str | None:
        """References in flight."""
        flying = self._next - self._answered if self.stream is not None else 0
        return f"{flying} references in flight" if flying else None
