"""A core that plays a workload's memory references: an abstraction of an out-of-order core
that only keeps what bounds memory-level parallelism."""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from archmodel.kernel import ENGINES, Component, Counter, Formula, In, Out, Param, at_least, model
from archmodel.models.messages import MemRequest


class References:
    """A stream of memory references as parallel numpy arrays (one entry per reference).

    ``address`` (byte address), ``size`` (bytes, 1 to 8), ``write`` (bool), ``gap`` (compute
    cycles before the reference may issue, counted from the previous issue), ``dep`` (how many
    references back the one whose loaded value this address depends on; 0 for none), and
    ``value`` (the 64-bit pattern a write stores, or a read must return, in its low ``size``
    bytes, little-endian), and ``check`` (whether a read's value is known in advance: false for
    a read that races with another core's write, whose answer depends on timing).
    Workloads build them; :class:`ReferenceCore` plays them.
    """

    __slots__ = ("address", "size", "write", "gap", "dep", "value", "check")

    def __init__(self, address, size, write, gap, dep, value, check=None):
        n = len(address)
        self.address = np.asarray(address, dtype=np.int64)
        self.size = np.asarray(size, dtype=np.int64)
        self.write = np.asarray(write, dtype=bool)
        self.gap = np.asarray(gap, dtype=np.int64)
        self.dep = np.asarray(dep, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.uint64)
        self.check = np.ones(n, dtype=bool) if check is None else np.asarray(check, dtype=bool)
        for name in ("size", "write", "gap", "dep", "value", "check"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"references: '{name}' has {len(getattr(self, name))} entries, 'address' has {n}")
        if n and (self.size.min() < 1 or self.size.max() > 8):
            raise ValueError("references: every size must be 1 to 8 bytes")
        if n and (self.dep.min() < 0 or (self.dep > np.arange(n)).any()):
            raise ValueError("references: a dependence must point back to an earlier reference")

    def __len__(self) -> int:
        return len(self.address)

    def part(self, start: int, end: int) -> "References":
        """References start .. end - 1 as a stream of their own (a dependence reaching before
        ``start`` becomes none)."""
        dep = self.dep[start:end]
        dep = np.where(dep > np.arange(end - start), 0, dep)
        return References(*(getattr(self, name)[start:end] for name in self.__slots__[:4]), dep,
                          self.value[start:end], self.check[start:end])

    @classmethod
    def concatenate(cls, parts: list["References"]) -> "References":
        """One stream of several, in order (dependences stay inside their part)."""
        return cls(*(np.concatenate([getattr(p, name) for p in parts]) for name in cls.__slots__))


class Barrier:
    """Cores that finish a phase wait here until every core has; they are released
    ``latency_cycles`` after the last one arrives (a hardware barrier or a tree of flags in
    the shared cache costs about that much)."""

    def __init__(self, cores: int, latency_cycles: int = 20):
        self.cores = cores
        self.latency_cycles = latency_cycles
        self.waiting: list = []
        self.episodes = 0

    def arrive(self, core: "ReferenceCore") -> None:
        """``core`` finished its phase; the last to arrive releases everyone."""
        self.waiting.append(core)
        if len(self.waiting) == self.cores:
            release = core.sim.now + self.latency_cycles * core.domain.period_ps
            waiting, self.waiting = self.waiting, []
            self.episodes += 1
            for other in waiting:
                other.release(release)


@model
class ReferenceCore(Component):
    """Plays a :class:`References` stream on ``req``/``resp`` through a window of ``window``
    references, an abstraction of an out-of-order core's reorder buffer and load/store queue.

    References enter the window in program order, one per cycle at most: reference i enters
    ``gap[i]`` cycles after reference i-1 did (the instructions between them, dispatched at
    one per cycle) and only while fewer than ``window`` references are unretired. A reference
    in the window issues once the reference whose value its address needs (``dep[i]`` back:
    the load of a neighbour id before the load of that neighbour's data) has been answered;
    each cycle the oldest such reference issues, so independent loads run ahead of a
    dependent one that waits, except that references to the same 8-byte word issue in
    program order (the memory then serves them in that order: a load sees the older store).
    References retire in order once answered. With
    ``check_reads`` every read answer is compared with the value the workload computed for
    it: a mismatch stops the run, naming the reference.

    With a ``store_buffer`` of N entries a store retires once it has issued (in order, as an
    out-of-order core retires a store whose address and data are known and leaves its write
    to the store buffer), so a store that misses in the cache no longer holds the window;
    its entry, taken when the store enters the window, frees when the memory answers it,
    and a store finding all N entries taken waits to enter. Without one (0) a store stays
    in the window until answered, as a load does.

    A stream may come in phases (``load(stream, phase_ends, barrier)``, or
    ``load_phases(phases, barrier)`` with the phases made one at a time as the core reaches
    them, so a long run holds one phase's references at once): at the end of a phase the
    core waits for all its answers, arrives at the :class:`Barrier` it shares with the other
    cores, and goes on when released. A reference's tag is its index in its phase.

    The core is done at the cycle its last answer arrives (stores in the store buffer
    included: a phase's end drains it, as the fence of a barrier does); ``on_finish``
    callbacks then run.

    Leaves out: instruction fetch, branch prediction, the register dataflow of compute
    instructions (compute is a count of cycles that only delays dispatch), store-to-load
    forwarding, speculation past an unknown store address (a load waits only for older
    references to its own word), and more than one memory port.

    ``engine``: ``compiled`` computes the core and the cache it reaches alone in one numba
    loop, many cycles at once (:mod:`.compiled_reference`, which says where it applies),
    with the same cycles and statistics; ``python`` runs the Python models; ``auto`` takes
    the compiled loop where it applies.
    """

    window = Param(int, 16, "references in the window at most (reorder buffer / load-store queue entries)",
                   check=at_least(1))
    store_buffer = Param(int, 0, "store buffer entries: a store retires once issued and holds an entry until "
                         "answered (0: none, a store holds its window slot until answered; Haswell has 42, "
                         "Skylake 56)", check=at_least(0))
    check_reads = Param(bool, True, "compare every read answer with the workload's expected value")
    engine = Param(str, "auto", "compiled: the core and its private cache in one numba loop (where it applies); "
                   "python: the Python models; auto: compiled where it applies", check=ENGINES.check)

    req = Out("memory references (MemRequest)", pair="resp")
    resp = In("answers (MemResponse), any order (matched by tag)")

    references = Counter("references", "references played")
    reads = Counter("references", "read references")
    writes = Counter("references", "write references")
    compute_cycles = Counter("cycles", "cycles of compute between references")
    window_stalls = Counter("cycles", "cycles the next reference could not enter because the window was full")
    store_buffer_stalls = Counter("cycles", "cycles the next reference, a store, could not enter because every "
                                  "store buffer entry was taken")
    dependence_stalls = Counter("cycles", "cycles nothing issued while every waiting reference waited for the "
                                "value its address needs")
    barrier_cycles = Counter("cycles", "cycles from a phase's last answer to the barrier's release")
    cycles = Formula("cycles", "cycles from the first edge to the last answer", lambda c: c.done_cycle + 1
                     if c.done_cycle >= 0 else c.elapsed_cycles)

    def setup(self) -> None:
        self.stream: References | None = None  # the phase being played
        self.done_cycle = -1
        self._finish: list[Callable] = []
        self._phases, self._upcoming, self._barrier = iter(()), None, None
        self.compiled = None  # the compiled pair (core and cache) when the run computes in it
        self._stores = 0  # stores holding a store buffer entry (entered, not answered)

    def load(self, stream: References, phase_ends: list[int] | None = None, barrier: Barrier | None = None) -> None:
        """The references to play from the first edge; with ``phase_ends`` (the index after
        each phase's last reference, every phase but the last) the core meets ``barrier``
        after each of those phases (a dependence reaches no further back than its phase's
        start: the barrier answered everything before)."""
        bounds = [0, *(phase_ends or []), len(stream)]
        self.load_phases((stream.part(a, b) for a, b in zip(bounds, bounds[1:])), barrier)

    def load_phases(self, phases: Iterable[References], barrier: Barrier | None = None) -> None:
        """Play ``phases`` in order, meeting ``barrier`` between them; each phase is taken
        from the iterable when the core is released into it (so it may be made then)."""
        self._phases = iter(phases)
        self._barrier = barrier
        self.stream = None
        self._take_phase()
        if self._upcoming is not None and barrier is None:
            raise ValueError(f"{self.path}: phases need a barrier shared with the other cores")

    def _take_phase(self) -> None:
        """The next phase becomes the one played (and the one after it is looked up, so the
        core knows whether a barrier ends this one)."""
        stream = self._upcoming if self.stream is not None else next(self._phases, None)
        self._upcoming = next(self._phases, None) if stream is not None else None
        self.stream = stream
        if stream is None:
            return
        self._addr = stream.address.tolist()
        self._size = stream.size.tolist()
        self._write = stream.write.tolist()
        self._gap = stream.gap.tolist()
        self._dep = stream.dep.tolist()
        self._value = stream.value.tolist()
        self._check = stream.check.tolist()

    def next_phase(self) -> References | None:
        """Move on to the next phase and return it (None: that was the last); for a compiled
        form that plays the phases itself."""
        self._take_phase()
        return self.stream

    @property
    def more_phases(self) -> bool:
        """Whether a barrier and another phase follow the one being played."""
        return self._upcoming is not None

    @property
    def barrier(self) -> Barrier | None:
        """The barrier the core meets between phases."""
        return self._barrier

    def on_finish(self, callback: Callable) -> None:
        """Call ``callback(core)`` once the last answer arrived."""
        self._finish.append(callback)

    def start(self) -> None:
        self._waiting: list[int] = []  # in the window, not issued, in program order
        self._stalls = {}  # stall counter -> the cycle its stall began
        self._held = False  # arrived at the barrier, not released yet
        self._earliest = 0  # the first cycle the next reference may enter
        self._last_entry = -1  # the cycle the last reference entered
        self._stores = 0  # stores holding a store buffer entry (entered, not answered)
        self._begin_phase()
        self._choose_engine()

    def _begin_phase(self) -> None:
        """Start playing the current phase: its first reference enters ``gap[0]`` cycles after
        the previous phase's last one did, and not before the barrier's release."""
        n = len(self._addr) if self.stream is not None else 0
        self._entered = 0  # the next reference to enter the window
        self._retired = 0  # every reference before this one is answered
        self._answered = bytearray(n)
        self._issued = bytearray(n)  # (stores only, with a store buffer: they retire once issued)
        if n:
            self._earliest = max(self._earliest, self._last_entry + 1 + self._gap[0])
            self.compute_cycles.value += self._gap[0]

    def _choose_engine(self) -> None:
        """Hand the run to the compiled pair when ``engine`` asks for it and it applies."""
        if self.engine == "python":
            return
        if self.store_buffer:
            if self.engine == "compiled":
                self.fail("engine 'compiled' does not apply: the compiled pair has no store buffer "
                          "(use engine = \"auto\" or store_buffer = 0)")
            return
        from .compiled_reference import CompiledPair, unsupported
        channel = self.req.channel
        cache = channel.dst_owner if channel is not None else None
        why = unsupported(self, cache)
        if why is not None:
            if self.engine == "compiled":
                self.fail(f"engine 'compiled' does not apply: {why} (use engine = \"auto\")")
            return
        self.compiled = CompiledPair(self, cache)
        cache.drive_with(self.compiled)

    def earliest_send_ps(self, port) -> int | None:
        """Never while the compiled pair runs: its requests stay inside the pair."""
        return None if self.compiled is not None else super().earliest_send_ps(port)

    def reaction_ps(self, inp, out) -> int | None:
        """None while the compiled pair runs (nothing arrives, nothing leaves)."""
        return None if self.compiled is not None else super().reaction_ps(inp, out)

    def finish_at(self, cycle: int) -> None:
        """The compiled pair took the last answer at ``cycle``: the core is done."""
        self._finished(cycle)

    @property
    def done(self) -> bool:
        """Every reference is answered."""
        return self.done_cycle >= 0

    def tick(self) -> None:
        c = self.cycle
        if self.stream is None or self.done_cycle >= 0 or self.compiled is not None:
            self.sleep()
            return
        if self.resp.valid:
            self._answer(c, self.resp.recv())
        if self._retired == len(self._addr) and self._upcoming is None and not self._stores:
            self._finished(c)
            self.sleep()
            return
        self._enter(c)
        issued = self._issue(c)
        if issued or len(self.resp):
            return
        if self._waiting:
            self._stall(c, self.dependence_stalls)
        # Nothing more this cycle: an answer, a credit, the release or the next entry wakes it.
        at_barrier = self._upcoming is not None and self._entered == len(self._addr)
        more = self._entered < len(self._addr) and not at_barrier
        if more and self._entered - self._retired < self.window and not self._buffer_full(self._entered):
            self.sleep_for(max(1, self._earliest - c))
        else:
            if more:
                # The window (or the store buffer) is full: the next reference stalls from the
                # cycle it could enter, though the core sleeps through it (until an answer
                # retires one or frees an entry).
                full = self.window_stalls if self._entered - self._retired >= self.window else self.store_buffer_stalls
                self._stall(max(c, self._earliest), full)
            self.sleep()

    def _buffer_full(self, i: int) -> bool:
        """Reference ``i`` is a store and every store buffer entry is taken."""
        return bool(self.store_buffer) and self._write[i] and self._stores >= self.store_buffer

    def _enter(self, c: int) -> None:
        """Let the next reference into the window, or meet the barrier at a phase end."""
        i = self._entered
        if self._upcoming is not None and i == len(self._addr):
            if not self._held and self._retired == i and not self._stores:
                self._held = True
                self._barrier_since = c
                self._barrier.arrive(self)
            return
        if i >= len(self._addr) or c < self._earliest:
            return
        if i - self._retired >= self.window:
            self._stall(c, self.window_stalls)
            return
        self._end_stall(c, self.window_stalls)
        if self._buffer_full(i):
            self._stall(c, self.store_buffer_stalls)
            return
        self._end_stall(c, self.store_buffer_stalls)
        if self.store_buffer and self._write[i]:
            self._stores += 1
        self._waiting.append(i)
        self._entered = i + 1
        self._last_entry = c
        if i + 1 < len(self._addr):
            gap = self._gap[i + 1]
            self.compute_cycles.value += gap
            self._earliest = c + 1 + gap

    def _issue(self, c: int) -> bool:
        """Send the oldest reference in the window whose address is known."""
        answered = self._answered
        older = None  # 8-byte words of older references still waiting: a younger one to them waits too
        for k, i in enumerate(self._waiting):
            dep = self._dep[i]
            first, last = self._addr[i] >> 3, (self._addr[i] + self._size[i] - 1) >> 3
            if older is not None and (first in older or last in older):
                older.update((first, last))
                continue
            if dep and not answered[i - dep]:
                if older is None:
                    older = set()
                older.update((first, last))
                continue
            write = self._write[i]
            size = self._size[i]
            data = self._value[i].to_bytes(8, "little")[:size] if write else None
            request = MemRequest(address=self._addr[i], size_bytes=size, is_write=write, data=data,
                                 source=self.path, tag=i, created_ps=self.sim.now)
            if not self.req.try_send(request):
                return False
            del self._waiting[k]
            self._end_stall(c, self.dependence_stalls)
            self.references.value += 1
            if write:
                self.writes.value += 1
                if self.store_buffer:
                    self._issued[i] = 1
                    self._retire()
            else:
                self.reads.value += 1
            return True
        return False

    def release(self, at_ps: int) -> None:
        """The barrier lets this core go on at ``at_ps``."""
        self._held = False
        period = self.domain.period_ps
        cycle = -(-(at_ps - self.domain.phase_ps) // period)
        self.barrier_cycles.value += cycle - self._barrier_since
        self._earliest = max(self._earliest, cycle)
        self._take_phase()
        self._begin_phase()
        self.wake_at(at_ps)

    def _stall(self, c: int, counter) -> None:
        self._stalls.setdefault(counter, c)

    def _end_stall(self, c: int, counter) -> None:
        since = self._stalls.pop(counter, None)
        if since is not None:
            counter.value += c - since

    def _answer(self, c: int, answer) -> None:
        i = answer.tag
        if not 0 <= i < len(self._addr) or self._answered[i]:
            self.fail(f"an answer with tag {i} matches no reference in flight")
        if self.check_reads and not self._write[i] and self._check[i]:
            want = self._value[i].to_bytes(8, "little")[:self._size[i]]
            if answer.data != want:
                self.fail(f"reference {i}: read of {self._size[i]} bytes at {self._addr[i]:#x} returned "
                          f"{answer.data.hex()}, the workload expects {want.hex()}")
        self._answered[i] = 1
        if self.store_buffer and self._write[i]:
            self._stores -= 1
        self._retire()
        if self._retired == len(self._addr) and self._upcoming is None and not self._stores:
            self._finished(c)

    def _retire(self) -> None:
        """Retire, in order, the answered references and the issued stores (with a store
        buffer, which then holds them until answered)."""
        n, answered, issued = len(self._addr), self._answered, self._issued
        while self._retired < n and (answered[self._retired] or issued[self._retired]):
            self._retired += 1

    def _finished(self, c: int) -> None:
        self.done_cycle = c
        for callback in self._finish:
            callback(self)

    def holding(self) -> str | None:
        """References in the window."""
        if self.compiled is not None:
            flying = 0 if self.done else self.compiled.in_window()
        else:
            flying = self._entered - self._retired if self.stream is not None else 0
        if self._stores and self.compiled is None:
            return f"{flying} references in the window, {self._stores} stores in the store buffer"
        return f"{flying} references in the window" if flying else None
