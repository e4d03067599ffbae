"""Channel handshakes as waveform lines: what each traced channel shows, edge by edge.

For every traced channel, seen at its sender's clock edges: ``valid`` (the sender offered a
message at this edge), ``ready`` (the channel could accept one at this edge: a credit was
held and the link was free), ``fire`` (a transfer happened), ``occupancy`` (credits in use
after the edge) and ``data`` (a short summary of the last message offered). The handshake of
edge ``t`` is shown from ``t`` until the sender's next edge, so ``fire`` is exactly ``valid and
ready`` on screen.

The kernel reports a channel when an edge uses it (``channel.traced`` on: ``offered``,
``fired``, ``payload``, then ``credits`` and ``busy_until`` after the commit); pulses that fall
and ``ready`` that follows a returning credit at an edge that does not use the channel are
found here, by looking at the channel again at the edge they fall due.
"""

from __future__ import annotations

import heapq
from operator import attrgetter
from typing import Any, Callable

from vcd.writer import Variable

from .lines import Memo, escaped_text, summarize_payload, wire_line, wire_lines

_BY_ORDER = attrgetter("order")
_TRACE_OF = attrgetter("var")
_NO_LINES = ("", "")
# The flag lines of a trace none of whose changes was shown yet (see ChannelTrace.change_lines).
_NO_FLAG_LINES: tuple[None, ...] = (None,) * 64


# valid, fire and ready are shown together as one number: valid * 4 + fire * 2 + ready.
VALID, FIRE, READY = 4, 2, 1
_PULSES = VALID | FIRE
# What an edge of the sender shows: (offered, fired) -> flags; ready is what the sender saw.
_OFFERED_FLAGS = (VALID, VALID | FIRE | READY)  # indexed by fired


def settle(touched: list) -> None:
    """Clear the flags of the channels used at an edge, as the kernel does when no observer
    reads them."""
    for channel in touched:
        channel.marked = channel.offered = channel.fired = channel.took = False


class ChannelTrace:
    """One traced channel: its VCD variables and value-change lines (``""`` or None for a
    signal not selected), the values last shown, and the credit state after the last edge
    that used it."""

    # What the pass over the channels used reads at every edge comes first, together: a
    # slot's place is its offset in the object, and the pass goes over a thousand traces per
    # edge on a large design, so fewer cache lines per trace is less waiting on memory.
    __slots__ = ("channel", "flags", "credits", "busy", "next_eval", "period", "phase", "flag_lines",
                 "data_tail", "payload", "data", "credit_lines", "order", "occupancy_line", "capacity", "domain",
                 "vars", "valid_lines", "fire_lines", "ready_lines")

    def __init__(self, channel, order: int):
        self.channel = channel
        self.order = order
        self.domain = channel.src_owner.domain
        self.period = self.domain.period_ps
        self.phase = self.domain.phase_ps
        self.capacity = channel.capacity
        self.vars: dict[str, Variable] = {}
        # valid, fire and ready lines are indexed by the new value (a bool).
        self.valid_lines = self.fire_lines = self.ready_lines = _NO_LINES
        # The lines of a change of flags, old * 8 + new, made when first needed.
        self.flag_lines: list[str | None] | tuple[None, ...] = _NO_FLAG_LINES
        # The occupancy's lines, capacity - credits: a list indexed by the credits for a
        # narrow wire (the pass compares and keeps the credits anyway), else made.
        self.credit_lines: list[str] | None = None
        self.occupancy_line: Callable[[int], str] | None = None
        self.data_tail: str | None = None  # the data line is the escaped text, then this
        self.credits = channel.credits
        self.busy = channel.busy_until
        self.flags = READY if self.credits > 0 else 0
        self.data = ""
        self.payload = None
        self.next_eval: int | None = None

    def values(self) -> dict[str, Any]:
        """The value each signal shows now, by signal name."""
        flags = self.flags
        return {"valid": int(flags & VALID != 0), "ready": flags & READY, "fire": int(flags & FIRE != 0),
                "occupancy": self.capacity - self.credits, "data": self.data}

    def show(self, signal: str, var: Variable) -> None:
        """Write ``signal`` as ``var`` from now on."""
        self.vars[signal] = var
        if signal == "data":
            self.data_tail = f" {var.ident}\n"
        elif signal == "occupancy":
            lines = wire_lines(var)
            self.occupancy_line = wire_line(var) if lines is None else lines.__getitem__
            if lines is not None:
                # (credits run from 0 to the capacity, which the wire's width holds)
                self.credit_lines = [lines[self.capacity - credits] for credits in range(self.capacity + 1)]
        else:
            setattr(self, f"{signal}_lines", (f"0{var.ident}\n", f"1{var.ident}\n"))
        self.flag_lines = _NO_FLAG_LINES

    @property
    def silent(self) -> bool:
        """Whether a change of flags may give no line: valid, fire or ready is not shown."""
        return _NO_LINES in (self.valid_lines, self.fire_lines, self.ready_lines)

    def change_lines(self, change: int) -> str:
        """The lines of the flags going from ``change // 8`` to ``change % 8``: valid, fire,
        then ready, each if it changes (and is selected)."""
        old, new = change >> 3, change & 7
        text = "".join(lines[new & bit != 0] for bit, lines in
                       ((VALID, self.valid_lines), (FIRE, self.fire_lines), (READY, self.ready_lines))
                       if (old ^ new) & bit)
        if self.flag_lines is _NO_FLAG_LINES:
            self.flag_lines = [None] * 64
        self.flag_lines[change] = text  # type: ignore[index]
        return text


class Handshakes:
    """The handshakes of every traced channel of one tracer: the lines of what changed at an
    edge that used channels, and the edges at which to look at a channel again.

    ``summarize`` gives the ASCII ``data`` text of a payload.
    """

    def __init__(self, summarize: Callable[[Any], str]):
        self.summarize = summarize
        self.traces: list[ChannelTrace] = []
        # The last list of channels used that was put in trace order, and that order: the
        # same channels are often used at two edges running (on a ring, every other edge).
        self._touched: list = []
        self._ordered: list[ChannelTrace] = []
        # A time -> the traces to look at then (an entry is stale if the trace's next_eval
        # has moved since), and a heap of those times.
        self._due: dict[int, list[ChannelTrace]] = {}
        self._due_times: list[int] = []
        self._texts: Memo[str] = Memo(self._escaped)  # payload summary -> its escaped text
        self._data_var: Variable | None = None  # any data variable: all escape alike
        # The summaries of int payloads, the commonest, and their escaped texts, looked up
        # rather than made (only for the default summary, which is a function of the value).
        self._numbers: Memo[tuple[str, str]] | None = Memo(self._number_texts) if summarize is summarize_payload else None

    def add(self, channel) -> ChannelTrace:
        """Trace ``channel`` (the kernel reports its edges from now on); returns its trace,
        whose signals are then given variables with :meth:`ChannelTrace.show`."""
        trace = ChannelTrace(channel, len(self.traces))
        channel.traced = True
        channel.var = trace
        self.traces.append(trace)
        return trace

    def show_data(self, trace: ChannelTrace, var: Variable) -> None:
        """Write ``trace``'s data signal as the string variable ``var``."""
        trace.show("data", var)
        if self._data_var is None:
            self._data_var = var

    def release(self) -> None:
        """The kernel stops reporting the traced channels."""
        for trace in self.traces:
            trace.channel.traced = False
            trace.channel.var = None

    @property
    def next_due(self) -> int | None:
        """The earliest time at which a channel is to be looked at again, if any."""
        return self._due_times[0] if self._due_times else None

    def touch(self, t: int, touched: list, lines: list[str]) -> None:
        """Append to ``lines`` the lines of what changed at ``t`` on the channels the kernel
        reports as used, in trace order, each line as one or two parts (a part may be empty
        for a trace that is :attr:`ChannelTrace.silent`); clears each channel's flags for its
        next edge, as the kernel would (see :func:`settle`)."""
        if touched == self._touched:
            traces = self._ordered
        else:
            traces = list(map(_TRACE_OF, touched))
            try:
                traces.sort(key=_BY_ORDER)
                self._touched = touched.copy()
                self._ordered = traces
            except AttributeError:
                # (channels another observer traces, not this one: their flags are cleared here)
                settle([ch for ch in touched if ch.var is None])
                traces = sorted(filter(None, traces), key=_BY_ORDER)
        due, summarize = self._due, self.summarize
        texts, make_text = self._texts.texts, self._texts.make
        numbers = self._numbers
        number_texts: dict[Any, tuple[str, str]] = {} if numbers is None else numbers.texts
        # (int payloads are looked up only for the default summary: never a type otherwise)
        number = int if numbers is not None else None
        bucket_at: int | None = None
        bucket: list[ChannelTrace] = []
        # One pass per channel used, written out in this loop (no call per channel or per
        # line) because it runs for every channel used at every edge.
        for trace in traces:
            channel = trace.channel
            credits = channel.credits
            busy = channel.busy_until
            if channel.offered:
                # An edge of the sender: show what happened at it. Ready is what the sender
                # saw before acting: with an offer, whether it went. A pulse is up (valid),
                # so the trace is looked at again at the sender's next edge.
                flags = _OFFERED_FLAGS[channel.fired]
                channel.marked = channel.offered = channel.fired = channel.took = False
                at: int | None = t + trace.period
                if flags != trace.flags:
                    change = trace.flags << 3 | flags
                    trace.flags = flags
                    lines.append(trace.flag_lines[change] or trace.change_lines(change))
                if trace.data_tail is not None:
                    payload = channel.payload
                    if payload is not trace.payload or not trace.data:
                        trace.payload = payload
                        if payload.__class__ is number:
                            # (an int's summary and its escaped text, found in one lookup)
                            try:
                                data, text = number_texts[payload]
                            except KeyError:
                                assert numbers is not None, "numbers has texts"
                                data, text = numbers.make(payload)
                            if data != trace.data:
                                trace.data = data
                                # (the text and the tail as two parts: joined with the rest,
                                # no string per line)
                                lines.append(text)
                                lines.append(trace.data_tail)
                        else:
                            data = summarize(payload)
                            if data != trace.data:
                                trace.data = data
                                try:
                                    lines.append(texts[data])
                                except KeyError:
                                    lines.append(make_text(data))
                                lines.append(trace.data_tail)
            elif t % trace.period == trace.phase:  # (the phase is below the period)
                # A sender edge without an offer: ready is the credit state left by the
                # previous edge. (Nothing was offered, so nothing fired: two flags to clear.)
                channel.marked = channel.took = False
                flags = READY if trace.credits > 0 and trace.busy <= t else 0
                next_edge = t + trace.period
                if flags != trace.flags:
                    change = trace.flags << 3 | flags
                    trace.flags = flags
                    lines.append(trace.flag_lines[change] or trace.change_lines(change))
                # When to look again (no pulse is up: flags is READY or 0): at the next
                # sender edge if ready is to change by then, when a busy link frees, or only
                # when the channel is used again.
                if credits > 0:
                    if busy <= next_edge:
                        at = None if flags else next_edge
                    else:
                        at = next_edge if flags else trace.domain.edge_at_or_after(busy)
                else:
                    at = next_edge if flags else None
            else:
                # A receiver edge in another clock domain: only the credit state moves.
                channel.marked = channel.took = False
                flags = trace.flags
                next_edge = trace.domain.edge_after(t)
                # When to look again: at the next sender edge while a pulse is up or ready
                # is about to change, when a busy link frees, or only when it is used again.
                if flags & _PULSES or (flags & READY) != (credits > 0 and busy <= next_edge):
                    at = next_edge
                elif credits > 0 and busy > next_edge:
                    at = trace.domain.edge_at_or_after(busy)
                else:
                    at = None
            trace.busy = busy
            # (the occupancy is capacity - credits: it changes when the credits do)
            if credits != trace.credits:
                trace.credits = credits
                credit_lines = trace.credit_lines
                if credit_lines is not None:
                    lines.append(credit_lines[credits])
                elif trace.occupancy_line is not None:
                    lines.append(trace.occupancy_line(trace.capacity - credits))
            # (_schedule, written out)
            if trace.next_eval != at:
                trace.next_eval = at
                if at is not None:
                    if at != bucket_at:
                        # (most traces of an edge are due at the same next edge)
                        bucket_at = at
                        found = due.get(at)
                        if found is None:
                            found = due[at] = []
                            heapq.heappush(self._due_times, at)
                        bucket = found
                    bucket.append(trace)

    def fall_due(self) -> tuple[int, list[str]]:
        """Look at the channels due at the earliest due time, which no edge used: returns
        that time and the lines of what changed then (pulses fall, ready follows credits)."""
        at = heapq.heappop(self._due_times)
        traces = [trace for trace in self._due.pop(at) if trace.next_eval == at]
        if len(traces) > 1:
            traces.sort(key=_BY_ORDER)
        lines: list[str] = []
        for trace in traces:
            if trace.next_eval != at:
                continue  # due twice at this time: looked at once
            trace.next_eval = None
            # Pulses fall; ready follows the credits.
            flags = READY if trace.credits > 0 and trace.busy <= at else 0
            if flags != trace.flags:
                change = trace.flags << 3 | flags
                trace.flags = flags
                lines.append(trace.flag_lines[change] or trace.change_lines(change))
            if trace.credits > 0 and trace.busy > at:
                self._schedule(trace, trace.domain.edge_at_or_after(trace.busy))
        return at, lines

    def _number_texts(self, payload: int) -> tuple[str, str]:
        data = self.summarize(payload)
        texts = self._texts
        try:
            return data, texts.texts[data]
        except KeyError:
            return data, texts.make(data)

    def _escaped(self, text: str) -> str:
        assert self._data_var is not None, "data texts are made only for a channel showing data"
        return escaped_text(self._data_var, text)

    def _schedule(self, trace: ChannelTrace, at: int) -> None:
        trace.next_eval = at
        bucket = self._due.get(at)
        if bucket is None:
            bucket = self._due[at] = []
            heapq.heappush(self._due_times, at)
        bucket.append(trace)
