"""Channels: registered, credit-flow-controlled links between an output and an input port.

A channel has a latency (>= 1 cycle, counted in the receiver's clock), a capacity in
credits, and optionally a width in bits per sender cycle. The stream rules hold: a transfer
happens iff the sender is valid and the channel ready; valid and payload are held until the
transfer; valid never depends on ready; ready may depend on valid.

Timing, for a message sent at sender edge ``t``:

* without a width it arrives at the receiver's ``latency``-th edge strictly after ``t``
  (same clock: ``t + latency * period``);
* with a width, a message of ``S`` bits occupies the link for ``ceil(S / width)`` sender
  cycles and its tail arrives ``latency`` receiver edges after the last beat leaves;
* each side moves at most one message per edge: the sender one send, the receiver one
  ``recv()``;
* the credit freed by ``recv()`` at edge ``t`` is usable by the sender from its first edge
  after ``t``. With the default capacity of ``latency + 1`` a channel sustains one message
  per cycle.

``credits`` and ``occupancy`` are the sender's view and change as it sends; other components
must not read them during the tick phase (their value would depend on tick order). Tracers
read them after the commit.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from .budget import count_instance
from .errors import ParameterError, PortError
from .ports import InPort, OutPort, Port
from .time import ClockDomain

if TYPE_CHECKING:
    from .simulator import Simulator


class Channel:
    """A point-to-point link; created by :func:`connect`, bound by the Simulator.

    What an observer (a tracer) may use, read-only unless said otherwise:

    * ``traced``: the observer sets it to have the channel's edges reported (and back to
      False when it stops); while it is off the kernel records nothing for it;
    * ``var``: the observer's handle for this channel, ``None`` while no observer traces it
      (the kernel never reads it);
    * at an edge that used a traced channel the kernel hands it to the observer's
      ``channels(t, touched)``, after the commit, with ``offered`` (the sender sent, or
      offered with a failed ``try_send``), ``fired`` (a message went), ``took`` (the
      receiver took one) and ``payload`` (the message last offered); the first three are
      cleared after the observers have seen them;
    * ``credits``, ``occupancy``, ``capacity`` and ``busy_until`` (the sender's first edge at
      which the link is free again), as left by the commit.
    """

    __slots__ = (
        "src", "dst", "latency", "capacity", "width_bits", "credits", "flight", "returning",
        "busy_until", "taken_at", "quiet_until", "blocked", "sent", "received", "beats", "sim", "src_owner", "dst_owner", "dst_domain",
        "src_period", "same_domain", "delay", "tail_delay", "credit_returns", "traced_used",
        "traced", "var", "offered", "fired", "took", "payload", "marked",
    )
    # Set by bind() once both ends have clock domains; None before.
    sim: Simulator
    dst_domain: ClockDomain
    credit_returns: list
    traced_used: list

    def __init__(self, src: OutPort, dst: InPort, latency: int, capacity: int, width_bits: int | None):
        count_instance(lambda: f"{src.path} -> {dst.path}")  # channels count against the limit too
        self.src = src
        self.dst = dst
        self.latency = latency
        self.capacity = capacity
        self.width_bits = width_bits
        self.credits = capacity
        self.flight: deque = deque()  # (arrival_ps, message), in arrival order
        self.returning = 0  # credits freed this edge, handed back at commit
        self.busy_until = 0  # the sender's first edge at which the link is free again
        self.taken_at = -1  # the receiver's edge at which it last took a message
        self.quiet_until = -1  # arrivals up to this time wake no receiver (InPort.wake_on_arrivals_after)
        self.blocked = False  # the sender found it not ready and has not sent since
        self.sent = 0
        self.received = 0
        self.beats = 0
        self.src_owner = src.owner
        self.dst_owner = dst.owner
        self.sim = None  # type: ignore[assignment]
        self.dst_domain = None  # type: ignore[assignment]
        self.src_period = 0
        self.same_domain = False
        self.delay = 0
        self.tail_delay = 0
        # The simulator's lists, set by bind(): the channels whose receiver took a message at
        # this time point (its commit returns their credits) and the traced channels used then
        # (handed to its observers after the commit). The ports append to them.
        self.credit_returns = None  # type: ignore[assignment]
        self.traced_used = None  # type: ignore[assignment]
        self.traced = False
        self.var: Any = None
        self.offered = self.fired = self.took = False
        self.payload: Any = None
        self.marked = False

    @property
    def name(self) -> str:
        """``src.path -> dst.path``, as errors and reports name the channel."""
        return f"{self.src.path} -> {self.dst.path}"

    @property
    def occupancy(self) -> int:
        """Credits in use: messages in flight or waiting, plus credits not yet returned."""
        return self.capacity - self.credits

    def next_take_ps(self) -> int | None:
        """A lower bound on the time the receiver next takes a message from this channel,
        freeing a credit that is back at that edge's commit: now for one taken at this time
        point; for a message on its way, its arrival, the receiver's next edge if it took one
        now (at most one per edge), and the receiver's own bound on its takes
        (:meth:`Component.earliest_take_ps`); None with nothing on its way (no credit frees
        without a new send). For senders and models bounding when a blocked port frees."""
        now = self.sim.now
        if self.returning:
            return now
        if self.flight:
            return max(self.flight[0][0], now if self.taken_at != now else now + 1,
                       self.dst_owner.earliest_take_ps(self.dst))
        return None

    def bind(self, sim: Simulator, credit_returns: list, traced_used: list) -> None:
        """Fix the timing constants once both ends have clock domains, and take the lists of
        ``sim``'s commit the ports append this channel to (see ``credit_returns`` and
        ``traced_used`` in ``__init__``)."""
        self.sim = sim
        self.credit_returns = credit_returns
        self.traced_used = traced_used
        src_domain = self.src_owner.domain
        self.dst_domain = self.dst_owner.domain
        self.src_period = src_domain.period_ps
        self.same_domain = src_domain is self.dst_domain
        self.delay = self.latency * self.dst_domain.period_ps
        self.tail_delay = (self.latency - 1) * self.dst_domain.period_ps

    def __repr__(self) -> str:
        return f"<Channel {self.name} latency={self.latency} capacity={self.capacity}>"


def _port_kind(port: Port) -> str:
    return "output" if isinstance(port, OutPort) else "input"


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _link_problem(latency: Any, capacity: Any, width_bits: Any) -> tuple[str, str | None] | None:
    """What is wrong with a link's attributes, as (message, hint), or None."""
    if not _is_count(latency):
        return f"latency must be an integer number of cycles, got {latency!r}", None
    if latency < 1:
        return (f"latency must be at least 1 cycle, got {latency}",
                "every connection is registered, so results never depend on tick order")
    if not _is_count(capacity) or capacity < 1:
        return f"capacity must be a positive integer number of credits, got {capacity!r}", None
    if width_bits is not None and (not _is_count(width_bits) or width_bits < 1):
        return f"width must be a positive integer number of bits, got {width_bits!r}", None
    return None


def connect(src: OutPort, dst: InPort, *, latency: int = 1, capacity: int | None = None,
            width_bits: int | None = None) -> Channel:
    """Connect an output port to an input port with a new channel and return it.

    ``capacity`` defaults to ``latency + 1`` credits (enough for one message per cycle).
    Errors name both ports and the reason.
    """
    for port in (src, dst):
        if not isinstance(port, (InPort, OutPort)):
            raise PortError(f"cannot connect {port!r}: not a port (is it a port array? index it)")
    if not isinstance(src, OutPort) or not isinstance(dst, InPort):
        raise PortError(
            f"cannot connect {_port_kind(src)} {src.path} to {_port_kind(dst)} {dst.path}: "
            "a channel goes from an output to an input",
            hint=f"swap the ends: {dst.path} -> {src.path}" if isinstance(dst, OutPort) and isinstance(src, InPort) else None)
    if src.channel is not None:
        raise PortError(f"output {src.path} already drives {src.channel.dst.path}; cannot also drive {dst.path}",
                        hint="channels are point to point; put a crossbar or fan-out model between them")
    if dst.channel is not None:
        raise PortError(f"input {dst.path} is already driven by {dst.channel.src.path}; cannot also connect {src.path}",
                        hint="merge the streams with an arbiter")
    if src.width is not None and dst.width is not None and src.width != dst.width:
        raise PortError(f"cannot connect {src.path} with width {src.width} to {dst.path} with width {dst.width}")
    if capacity is None and isinstance(latency, int):
        capacity = latency + 1
    problem = _link_problem(latency, capacity, width_bits)
    if problem is not None:
        message, hint = problem
        raise ParameterError(f"channel {src.path} -> {dst.path}: {message}", hint=hint)
    channel = Channel(src, dst, latency, capacity, width_bits)
    src.channel = channel
    dst.channel = channel
    return channel
