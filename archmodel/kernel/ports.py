"""Ports: the typed ends of channels, declared on a model like pins on a datasheet.

``In`` and ``Out`` are declarations (class attributes); each component instance gets
``InPort``/``OutPort`` objects in their place, or a list of them for a port array
(``In("requests", count="ports")`` sizes the array from a parameter).
"""

from __future__ import annotations

from math import ceil
from typing import TYPE_CHECKING, Any

from .errors import ModelAssertion

if TYPE_CHECKING:
    from .channel import Channel
    from .component import Component


class PortDecl:
    """The declaration of a port or port array."""

    direction = ""

    def __init__(self, doc: str = "", *, width: int | None = None, required: bool = True,
                 count: str | int | None = None, pair: str | None = None, carries: str | None = None):
        if carries not in (None, "requests", "answers"):
            raise ValueError(f"carries={carries!r}: 'requests', 'answers' or None")
        self.doc = doc
        self.width = width
        self.required = required
        self.count = count
        self.pair = pair  # the port that must be connected whenever this one is (requests and their answers)
        # what this port of a pair carries: a requester's output carries requests and its input
        # their answers (the default); a memory's input carries requests, its output the answers
        self.carries = carries or ("requests" if self.direction == "out" else "answers")
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def describe(self) -> str:
        """One catalogue line: ``inp: in [count=ports] width 64 -- requests``."""
        bits = [self.name + ":", self.direction]
        if self.count is not None:
            bits.append(f"[{self.count}]")
        if self.width is not None:
            bits.append(f"width {self.width}")
        if not self.required:
            bits.append("(optional)")
        return " ".join(bits) + f" -- {self.doc}"


class In(PortDecl):
    """An input port: receives messages from one channel."""

    direction = "in"


class Out(PortDecl):
    """An output port: sends messages into one channel."""

    direction = "out"


class Port:
    """A port of one component instance; ``channel`` is set by ``connect``."""

    __slots__ = ("owner", "name", "decl", "channel")
    channel: Channel  # None until connect() (see ``connected``)

    def __init__(self, owner: Component, name: str, decl: PortDecl):
        self.owner = owner
        self.name = name
        self.decl = decl
        self.channel = None  # type: ignore[assignment]

    @property
    def path(self) -> str:
        return f"{self.owner.path}.{self.name}"

    @property
    def width(self) -> int | None:
        return self.decl.width

    @property
    def connected(self) -> bool:
        return self.channel is not None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class InPort(Port):
    """Receiving end. ``valid`` says a message has arrived; ``recv()`` takes it and returns
    its credit to the sender at the end of this edge (ready may depend on valid)."""

    __slots__ = ()

    @property
    def valid(self) -> bool:
        """A message has arrived, waits at the head of the channel, and none was taken yet
        at this edge (a receiver takes at most one message per edge)."""
        ch = self.channel
        flight = ch.flight
        now = ch.sim.now
        return bool(flight) and flight[0][0] <= now and ch.taken_at != now

    def peek(self) -> Any:
        """The message ``recv()`` would return now, or ``None`` when not ``valid``."""
        ch = self.channel
        flight = ch.flight
        now = ch.sim.now
        if flight and flight[0][0] <= now and ch.taken_at != now:
            return flight[0][1]
        return None

    def recv(self) -> Any:
        """Take the head message; its credit returns to the sender at commit."""
        ch = self.channel
        flight = ch.flight
        sim = ch.sim
        now = sim.now
        if not flight or flight[0][0] > now or ch.taken_at == now:
            raise ModelAssertion(f"{self.path}: recv() while not valid (nothing arrived, or a message "
                                 "was already taken at this edge); check valid first")
        ch.taken_at = now
        msg = flight.popleft()[1]
        ch.received += 1
        sim.transfers += 1
        if not ch.returning:
            ch.credit_returns.append(ch)
        ch.returning += 1
        if ch.traced:
            ch.took = True
            if not ch.marked:  # listed once per edge for the observers; no call: it runs per transfer
                ch.marked = True
                ch.traced_used.append(ch)
        return msg

    def wake_on_arrivals_after(self, time_ps: int) -> None:
        """Let the messages arriving on this port up to ``time_ps`` not wake the owner while it
        sleeps (later ones wake it as usual): it can do nothing with them before then, and
        will look at them at an edge it wakes at by itself. For a model waiting for room for
        the message at the head, which the ones behind it cannot overtake: a memory that has
        already scheduled the cycles up to ``time_ps`` takes nothing before, and its ticks
        at their arrivals would be for nothing. Call it before sleeping (the messages already
        on their way are looked at then); a later call replaces the time. It holds for a
        message waiting behind one taken at this edge too, which the owner could not see (it
        would otherwise be woken at its next edge to look)."""
        self.channel.quiet_until = time_ps

    def __len__(self) -> int:
        """Messages that have arrived and wait to be taken (whether or not one may still be
        taken at this edge)."""
        now = self.channel.sim.now
        return sum(1 for arrival, _ in self.channel.flight if arrival <= now)


class OutPort(Port):
    """Sending end. ``ready`` says a credit is held and the link is free (a sender sends at
    most one message per edge, and a message of several beats holds the link for all of
    them); ``send(msg)`` transfers (the message arrives ``latency`` receiver cycles later)."""

    __slots__ = ()

    @property
    def ready(self) -> bool:
        """A credit is held and the link is free. Finding it not ready marks the sender as
        waiting: if it then sleeps, it is woken at its first edge with both (a credit returning
        while a long message still holds the link wakes it once the link frees)."""
        ch = self.channel
        if ch.credits > 0 and ch.busy_until <= ch.sim.now:
            return True
        ch.blocked = True
        return False

    def unblocks_from_ps(self) -> int:
        """A lower bound on the time this port next changes for a sender that found it not
        ready and sends nothing meanwhile: the time its busy link frees, or just after the
        receiver can first take the message at the head of the channel (its credit returns
        at that edge's commit, so a sender edge at that same time still finds none); the
        sooner of the two, now if neither applies. :attr:`ready` cannot hold before it, nor
        is a sleeping blocked sender woken for the port before it. The receiver bounds its
        takes (:meth:`Component.earliest_take_ps`), so a model computing ahead while blocked
        on this port need not stop at every edge to look."""
        ch = self.channel
        now = ch.sim.now
        soonest = ch.busy_until if ch.busy_until > now else None
        # (any credit returning wakes a blocked sender, whether or not it holds others)
        taken = ch.next_take_ps()
        if taken is not None and (soonest is None or taken + 1 < soonest):
            soonest = taken + 1
        return now if soonest is None else soonest

    def send(self, msg: Any, bits: int | None = None) -> None:
        """Transfer ``msg``; an error if not ``ready`` (valid/payload are held until transfer,
        so a model that may be blocked should use ``try_send``). ``bits`` (or the message's
        ``size_bits``) sets the serialisation time on a channel with a width."""
        if not self.try_send(msg, bits):
            ch = self.channel
            raise ModelAssertion(
                f"{self.path}: send() while not ready ({ch.credits} credits, link busy until "
                f"{ch.busy_until} ps at {ch.sim.now} ps); check ready or use try_send()")

    def try_send(self, msg: Any, bits: int | None = None) -> bool:
        """Send if ready and return True; otherwise record valid-without-ready and return False
        (the sender is then woken when the channel becomes ready, should it sleep)."""
        ch = self.channel
        sim = ch.sim
        now = sim.now
        if ch.credits <= 0 or ch.busy_until > now:
            ch.blocked = True  # valid is held: the returning credit or freed link must wake it
            if ch.traced:
                ch.offered = True
                ch.payload = msg
                if not ch.marked:
                    ch.marked = True
                    ch.traced_used.append(ch)
            return False
        # The transfer itself lives here rather than in send(): try_send is the common call.
        ch.credits -= 1
        ch.blocked = False
        if ch.width_bits:
            size = bits if bits is not None else getattr(msg, "size_bits", ch.width_bits)
            beats = max(1, ceil(size / ch.width_bits))
            ch.busy_until = now + beats * ch.src_period
            ch.beats += beats
            tail = now + (beats - 1) * ch.src_period
            arrival = ch.dst_domain.edge_after(tail) + ch.tail_delay
        else:
            ch.busy_until = now + ch.src_period
            ch.beats += 1
            if ch.same_domain:
                arrival = now + ch.delay
            else:
                arrival = ch.dst_domain.edge_after(now) + ch.tail_delay
        _put_in_flight(ch, sim, arrival, msg)
        if ch.traced:
            ch.offered = True
            ch.fired = True
            ch.payload = msg
            if not ch.marked:
                ch.marked = True
                ch.traced_used.append(ch)
        return True

    def send_ahead(self, msg: Any, at_ps: int, bits: int | None = None) -> None:
        """Send ``msg`` as the sender would at its own later edge ``at_ps``, for a model that
        computes several cycles at once (see ``Component.settle``): the message arrives as
        if sent then (serialised over the channel's width as :meth:`try_send` does, ``bits``
        or the message's ``size_bits`` long), and the credit is spent now. The sender must
        have known, when it computed that cycle, that the channel would be ready then: it
        holds a credit now (credits only return, so it holds one then too), ``at_ps`` is an
        edge of its clock no earlier than now, and the link is free by then (so the messages
        it sends this way go in the order of their times, and arrive in it). Ahead of time a
        message cannot be traced at its edge, so a traced channel refuses it; so do the
        broken conditions above, each with a :class:`ModelAssertion` naming the port."""
        ch = self.channel
        sim = ch.sim
        domain = self.owner.domain
        problem = None
        if ch.traced:
            problem = "the channel is traced (send at the edge itself)"
        elif at_ps < sim.now or (at_ps - domain.phase_ps) % domain.period_ps:
            problem = f"{at_ps} ps is not an edge of {domain.name} at or after now ({sim.now} ps)"
        elif ch.credits <= 0 or ch.busy_until > at_ps:
            problem = f"{ch.credits} credits, link busy until {ch.busy_until} ps"
        if problem is not None:
            raise ModelAssertion(f"{self.path}: send_ahead() at {at_ps} ps refused: {problem}")
        if ch.width_bits:
            size = bits if bits is not None else getattr(msg, "size_bits", ch.width_bits)
            beats = max(1, ceil(size / ch.width_bits))
            arrival = ch.dst_domain.edge_after(at_ps + (beats - 1) * ch.src_period) + ch.tail_delay
        else:
            beats = 1
            arrival = at_ps + ch.delay if ch.same_domain else ch.dst_domain.edge_after(at_ps) + ch.tail_delay
        ch.credits -= 1
        ch.blocked = False
        ch.busy_until = at_ps + beats * ch.src_period
        ch.beats += beats
        _put_in_flight(ch, sim, arrival, msg)


def _put_in_flight(ch: Channel, sim: Any, arrival: int, msg: Any) -> None:
    """A sent message is on its way: counted, and its receiver woken for its arrival."""
    ch.flight.append((arrival, msg))
    ch.sent += 1
    sim.transfers += 1
    receiver = ch.dst_owner
    if not receiver._awake:
        if arrival > ch.quiet_until:
            sim._wake_later(receiver, arrival)
    elif receiver.doze_end_ps > arrival and arrival > ch.quiet_until:
        receiver.doze_end_ps = arrival  # (Component.doze_until: its doze ends at the arrival)
        d = receiver._sched  # (its clock domain's next edge, later while all of it dozes)
        if d.next_edge is not None and d.next_edge > arrival:
            d.next_edge = receiver.domain.edge_at_or_after(arrival)


def unpaired_port(port: Port) -> tuple[str, str] | None:
    """(message, hint) when ``port`` is connected and the port its declaration pairs it with
    is not (a request port whose answers could never come back, or an answer port with no
    requests), else None. In a port array the partner is the pair array's port of the same
    index."""
    name = port.decl.pair
    if name is None or port.channel is None:
        return None
    partner = getattr(port.owner, name)
    if isinstance(partner, list):
        partner = partner[int(port.name[port.name.rindex("[") + 1:-1])]
    if partner.channel is not None:
        return None
    port_path, _ = _wired_name(port)
    partner_path, other = _wired_name(partner)
    # the partner's end of the missing connection: an output's partner is an input, and the other way
    wiring = f"{other} -> ..." if port.decl.direction == "in" else f"... -> {other}"
    if port.decl.carries == "requests":
        hint = f"connect the answers back: {wiring}"
        why = "requests sent there would never be answered" if port.decl.direction == "out" else \
            "requests taken there could never be answered"
    else:
        hint = f"connect the requests: {wiring}"
        why = "answers would go out of a port that takes no requests" if port.decl.direction == "out" else \
            "answers would come to a port that sends no requests"
    return f"{port_path} is connected but {partner_path} is not: {why}", hint


def _wired_name(port: Port) -> tuple[str, str]:
    """``port``'s path and its name beside its component's (``cl.ext_rsp``) as a system
    wires it: a component that offers its parts' ports as its own (``exposed``: a Noc's
    ``to_memory[1]`` is its interface's port) names them so."""
    owner: Component | None = port.owner
    while owner is not None:
        for name, offered in (getattr(owner, "exposed", None) or {}).items():
            labels = enumerate(offered) if isinstance(offered, list) else ((None, offered),)
            for i, candidate in labels:
                if candidate is port:
                    label = name if i is None else f"{name}[{i}]"
                    return f"{owner.path}.{label}", f"{owner.name}.{label}"
        owner = owner.parent
    return port.path, f"{port.owner.name}.{port.name}"

