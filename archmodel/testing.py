"""A harness for unit-testing a component model in a few lines, PyMTL3 style.

Put the device under test between scripted sources and checking sinks, inject stall delays
on either side, and state the messages (and, if you like, the exact cycles) expected on each
output::

    from archmodel.testing import Harness

    def test_fifo_passes_messages_in_order():
        h = Harness(Fifo("dut", depth=2),
                    inputs={"inp": [1, 2, 3]},
                    outputs={"out": [1, 2, 3]},
                    arrival_cycles={"out": [3, 4, 5]})
        h.run(max_cycles=50)

``run`` returns when every sink has seen all its messages. It fails with an
``AssertionError`` that carries a per-cycle line trace when a message differs, arrives at the
wrong cycle, or the cycle limit passes first, so a failing test shows what happened.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable

from .kernel import Component, In, Out, Param, Simulator, at_least, connect, model


@model(catalogue=False)
class StreamSource(Component):
    """Sends a scripted list of messages, one per cycle at most, with injected stalls:
    ``initial_delay`` cycles before the first and ``interval_delay`` cycles between messages."""

    initial_delay = Param(int, 0, "cycles to wait before the first message", check=at_least(0))
    interval_delay = Param(int, 0, "idle cycles after each message", check=at_least(0))
    out = Out("the scripted messages, in order")

    def setup(self) -> None:
        self.pending: deque = deque()
        self.wait = self.initial_delay
        self.sent_log: list[tuple[int, Any]] = []

    def load(self, messages: Iterable[Any]) -> None:
        """Queue messages to send."""
        self.pending.extend(messages)

    def tick(self) -> None:
        if not self.pending:
            self.sleep()
            return
        if self.wait > 0:
            self.wait -= 1
            return
        if self.out.try_send(self.pending[0]):
            self.sent_log.append((self.cycle, self.pending.popleft()))
            self.wait = self.interval_delay

    def line_trace(self) -> str:
        return f"{len(self.pending):>3} left"


@model(catalogue=False)
class StreamSink(Component):
    """Takes messages, with injected stalls, and checks them against the expected list (and,
    optionally, the cycle each must arrive at). ``log`` keeps (cycle, message) of every arrival."""

    initial_delay = Param(int, 0, "cycles before the sink is first ready", check=at_least(0))
    interval_delay = Param(int, 0, "cycles the sink is not ready after each message", check=at_least(0))
    inp = In("messages to check")

    def setup(self) -> None:
        self.expected: deque = deque()
        self.expected_cycles: deque | None = None
        self.wait = self.initial_delay
        self.log: list[tuple[int, Any]] = []
        self.error: str | None = None

    def expect(self, messages: Iterable[Any], cycles: Iterable[int] | None = None) -> None:
        """Set the messages to expect, in order, and optionally their arrival cycles."""
        self.expected.extend(messages)
        if cycles is not None:
            self.expected_cycles = deque(cycles)
            if len(self.expected_cycles) != len(self.expected):
                raise ValueError(f"{self.path}: {len(self.expected)} messages but "
                                 f"{len(self.expected_cycles)} arrival cycles")

    @property
    def done(self) -> bool:
        return not self.expected

    def tick(self) -> None:
        if self.wait > 0:
            self.wait -= 1
            return
        if not self.inp.valid:
            self.sleep()
            return
        msg = self.inp.recv()
        cycle = self.cycle
        self.log.append((cycle, msg))
        self.wait = self.interval_delay
        if self.error is not None:
            return
        if not self.expected:
            self.error = f"{self.path}: unexpected extra message {msg!r} at cycle {cycle}"
            self.sim.stop("error")
            return
        want = self.expected.popleft()
        if msg != want:
            self.error = f"{self.path}: message {len(self.log) - 1} is {msg!r} at cycle {cycle}, expected {want!r}"
        elif self.expected_cycles is not None:
            want_cycle = self.expected_cycles.popleft()
            if cycle != want_cycle:
                self.error = (f"{self.path}: message {len(self.log) - 1} ({msg!r}) arrived at cycle {cycle}, "
                              f"expected cycle {want_cycle}")
        if self.error is not None:
            self.sim.stop("error")

    def line_trace(self) -> str:
        return f"{len(self.log):>3} got"


def default_line_trace(comp: Component) -> str:
    """A component's registers and port handshake state, for line traces."""
    if hasattr(comp, "line_trace"):
        return comp.line_trace()
    parts = [f"{reg.name}={reg.value}" for reg in comp.registers]
    for port in comp.ports:
        if port.channel is None:
            continue
        if port.decl.direction == "in":
            parts.append(f"{port.name}:{'v' if port.valid else '.'}")
        else:
            parts.append(f"{port.name}:{'r' if port.ready else '.'}")
    return " ".join(parts)


def run_sim(sim: Simulator, *, max_cycles: int, done: Callable[[], bool] | None = None,
            line_trace: Callable[[], str] | None = None, trace_lines: int = 40) -> int:
    """Run edge by edge until ``done()`` holds, nothing is left to do, or a model stops the
    run; return the number of cycles of the top clock that were simulated. Fails loudly at
    ``max_cycles`` with the last ``trace_lines`` lines of the per-cycle line trace."""
    clock = sim.top.domain
    trace: deque = deque(maxlen=trace_lines)
    for cycle in range(max_cycles):
        result = sim.run(until_ps=clock.phase_ps + cycle * clock.period_ps)
        if line_trace is not None:
            trace.append(f"{cycle:>6}: {line_trace()}")
        if done is not None and done():
            return cycle + 1
        if result.reason in ("quiescent", "stopped"):
            return cycle + 1
    lines = "\n".join(trace)
    raise AssertionError(f"simulation did not finish within {max_cycles} cycles\n{lines}")


class Harness:
    """Sources -> device under test -> sinks, wired by port name.

    ``inputs`` maps each input port name of ``dut`` to the messages to send; ``outputs`` maps
    each output port name to the messages expected; ``arrival_cycles`` optionally maps an
    output to the exact cycle each message must arrive at the sink. ``src_delay`` and
    ``sink_delay`` inject stalls (an int for every port, or a dict by port name). Channels
    have latency 1 and the default capacity unless ``latency`` / ``capacity`` say otherwise.
    """

    def __init__(self, dut: Component, *, inputs: dict[str, list], outputs: dict[str, list],
                 arrival_cycles: dict[str, list[int]] | None = None,
                 src_delay: int | dict = 0, sink_delay: int | dict = 0, src_initial: int | dict = 0,
                 sink_initial: int | dict = 0, latency: int = 1, capacity: int | None = None,
                 seed: int = 0, shuffle: bool = False):
        self.top = Component("top", clock=dut.clock)
        self.dut = self.top.add(dut)
        self.sources: dict[str, StreamSource] = {}
        self.sinks: dict[str, StreamSink] = {}
        pick = lambda option, name: option.get(name, 0) if isinstance(option, dict) else option  # noqa: E731
        for name, messages in inputs.items():
            src = StreamSource(f"src_{_safe(name)}", self.top, initial_delay=pick(src_initial, name),
                               interval_delay=pick(src_delay, name))
            src.load(messages)
            connect(src.out, _port(dut, name), latency=latency, capacity=capacity)
            self.sources[name] = src
        for name, messages in outputs.items():
            sink = StreamSink(f"sink_{_safe(name)}", self.top, initial_delay=pick(sink_initial, name),
                              interval_delay=pick(sink_delay, name))
            sink.expect(messages, (arrival_cycles or {}).get(name))
            connect(_port(dut, name), sink.inp, latency=latency, capacity=capacity)
            self.sinks[name] = sink
        self.sim = Simulator(self.top, seed=seed, shuffle=shuffle)

    def line_trace(self) -> str:
        """One line: every source, the device under test, every sink."""
        parts = [default_line_trace(s) for s in self.sources.values()]
        parts.append(default_line_trace(self.dut))
        parts += [default_line_trace(s) for s in self.sinks.values()]
        return " | ".join(parts)

    def run(self, max_cycles: int = 10_000) -> int:
        """Run until every sink is satisfied; return the cycles taken. Fails with a line trace."""
        sinks = list(self.sinks.values())
        trace: list[str] = []

        def record() -> str:
            line = self.line_trace()
            trace.append(line)
            return line

        cycles = run_sim(self.sim, max_cycles=max_cycles, line_trace=record,
                         done=lambda: all(s.done or s.error for s in sinks))
        errors = [s.error for s in sinks if s.error]
        unfinished = [f"{s.path}: still expecting {list(s.expected)!r}" for s in sinks if not s.done]
        if errors or unfinished:
            tail = "\n".join(f"{i:>6}: {line}" for i, line in enumerate(trace))
            raise AssertionError("\n".join(errors + unfinished) + "\n" + tail[-6000:])
        return cycles


def _safe(name: str) -> str:
    return name.replace("[", "_").replace("]", "")


def _port(comp: Component, name: str):
    base, _, index = name.partition("[")
    port = getattr(comp, base, None)
    if index:
        port = port[int(index.rstrip("]"))]
    if port is None:
        raise ValueError(f"{comp.path} has no port '{name}'")
    return port
