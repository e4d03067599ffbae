"""VCD waveforms of a running simulation, with a GTKWave save file beside them.

:class:`VcdTracer` is a simulator observer (``sim.add_observer(tracer)``); models never
import it. What it records, in a scope tree that mirrors the component hierarchy:

* every selected register of a component, as a variable of the component's scope
  (``top.fifo.count``): ``bool`` as a 1-bit wire, ``int`` as ``reg.width`` bits (truncated
  to that width, two's complement for negatives, as hardware would), ``float`` as a real,
  ``str`` (a component state) and anything else as a GTKWave string;
* for every selected channel, a scope named after the sending port (``top.src.out``)
  holding the handshake as seen at the sender's clock edges: ``valid`` (the sender offered
  a message at this edge, with ``send`` or a failed ``try_send``), ``ready`` (the channel
  could accept one at this edge: a credit was held and the link was free), ``fire`` (a
  transfer happened), ``occupancy`` (credits in use after the edge) and ``data`` (a short
  summary of the last message offered).

A value shown from time ``t`` is the value after the edge at ``t``, like a flip-flop's
output; the handshake of edge ``t`` is shown from ``t`` until the sender's next edge, so
``fire`` is exactly ``valid and ready`` on screen. Timescale is 1 ps.

The file is deterministic: the same design and seed give the same bytes whatever the tick
order (changes within a time point are written in a fixed order) and no wall-clock date is
written. ``close()`` (or leaving the ``with`` block) always leaves a well-formed VCD ending
with a final timestamp, even after an exception, a deadlock or Ctrl-C.
"""

from __future__ import annotations

import os
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from vcd.common import VarType

from archmodel import __version__
from archmodel.kernel import ArchError, Channel, ModelAssertion, Register, Simulator
from archmodel.outputs import partial_path

from .gtkw import Group, Trace, write_save_file
from .handshake import Handshakes, settle
from .header import VcdHeader
from .lines import (BitsMemo, TextMemo, ascii_text, commit, commit_changes, commit_ordered, commit_watched,
                    in_handle_order,
                    order_of, register_texts, summarize_payload, text_of)
from .selection import Selection

CHANNEL_SIGNALS = ("valid", "ready", "fire", "occupancy", "data")
_FOREVER = 1 << 62
_HANDLE = itemgetter(0)
# Lines (or parts of lines) gathered before one write: a write per edge costs more than the
# lines of a small design. Not many more: the parts are read again by the join (and once more
# when the list is cleared), and on a large design those of a few edges back are out of the
# cache by then (a ring of 1,024 queues gives 1,500 parts per edge). An edge of _WRITE_NOW
# characters or more (the handshake lines of a time no edge used) is written at once.
_WRITE_EVERY = 1024
_WRITE_NOW = 4096


def _connected_outputs(sim) -> dict:
    return {comp: [p for p in comp.ports if p.decl.direction == "out" and p.channel is not None]
            for comp in sim.components}


def signal_names(sim) -> list[str]:
    """Every signal a trace of ``sim`` can record: each register, and the handshake signals
    of each connected output port."""
    return list(_each_signal_name(sim))


def _each_signal_name(sim) -> Iterator[str]:
    # (named only when a selection is checked against them: not at all for "*")
    for comp in sim.components:
        for reg in comp.registers:
            yield reg.path
    for ports in _connected_outputs(sim).values():
        for port in ports:
            for signal in CHANNEL_SIGNALS:
                yield f"{port.path}.{signal}"


class VcdTracer:
    """Write a VCD of the selected registers and channel handshakes, and a ``.gtkw`` beside it.

    ``select`` is a sequence of glob patterns over signal names (``"top.cluster0.*"``,
    ``"*.count"``); ``start_ps``/``end_ps`` bound the traced time window (inclusive): changes
    outside it are not written, and the values at ``start_ps`` are the initial values, so the
    waveform is exact inside the window. ``gtkw=False`` skips the save file;
    ``summarize`` turns a channel payload into the short ``data`` text.

    Use it as ``with VcdTracer("waves/run.vcd") as tracer: sim.add_observer(tracer); sim.run()``
    or call :meth:`close` yourself (it is idempotent). One tracer observes one simulator.
    Until it is closed the VCD grows at ``writing_path``, a hidden name of this process's
    beside ``path``; closing renames it (and then the save file, written the same way) into
    place, so a file at ``path`` is always a whole waveform.
    """

    def __init__(self, path: str | os.PathLike, select: Sequence[str] | str = ("*",),
                 start_ps: int | None = None, end_ps: int | None = None, gtkw: bool = True,
                 summarize: Callable[[Any], str] = summarize_payload):
        for label, value in (("start_ps", start_ps), ("end_ps", end_ps)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise ArchError(f"trace window {label} must be a non-negative integer number of ps, got {value!r}")
        if start_ps is not None and end_ps is not None and end_ps < start_ps:
            raise ArchError(f"trace window ends ({end_ps} ps) before it starts ({start_ps} ps)")
        self.path = Path(path)
        self.gtkw_path = self.path.with_suffix(".gtkw") if gtkw else None
        if self.gtkw_path is not None and self.gtkw_path == self.path:
            raise ArchError(f"the waveform {self.path} would be replaced by its GTKWave save file of the same name",
                            hint=f"name the waveform {self.path.with_suffix('.vcd')}")
        self.selection = Selection(select)
        self.start_ps = start_ps
        self.end_ps = end_ps
        self.summarize = summarize
        self.signals: list[str] = []  # selected signal names, in VCD order
        self.groups: list[Group] = []  # what the .gtkw shows
        self.sim: Simulator | None = None
        self.closed = False
        # Written under a name of this process's own (writing_path) and renamed into place when
        # closed, so an earlier waveform of the same name stays whole until this one is, and
        # two runs writing the same name never share a file.
        self.writing_path = partial_path(self.path)
        self._stream = open(self.writing_path, "w", encoding="utf-8", newline="\n", buffering=1 << 16)
        self._header: VcdHeader | None = None  # the variables, until the header is written
        self._write = self._stream.write
        self._pending: list[str] = []  # lines (or their parts) not yet written, in file order
        self._last_ts: int | None = None  # the last timestamp given after the header
        self._handles: list[tuple[Any, int | None]] = []  # per register handle: (var, mask)
        self._lines: list = []  # per register handle: what its reg.var becomes while live
        self._handle_of_tail: dict[str, int] = {}  # the end of a register's lines -> its handle
        self._makes: dict[str, Callable[[Any], str]] = {}  # ... -> what makes a text its texts lack
        self._bits: dict[int, BitsMemo] = {}  # per mask
        self._bits_users: dict[int, list[int]] = {}  # per mask: the handles of its registers
        self._texts: TextMemo | None = None  # of every string register
        self._ordered: list = []  # the last register list found in handle order
        self._commit_ordered: Callable = commit_ordered  # its loop (commit_watched if all are watched)
        self._seen: list = []  # the register list of the last edge not known to be in order
        self._disordered: list = []  # the last register list found out of handle order
        self._in_order: list = []  # its registers, in handle order (the unwatched first)
        self._registers: list = []
        # The default summary is ASCII already; another is made so.
        self._handshakes = Handshakes(summarize if summarize is summarize_payload
                                      else lambda payload: ascii_text(str(summarize(payload))))
        self._lo = start_ps or 0
        self._hi = _FOREVER if end_ps is None else end_ps
        self._live = False  # inside the window: values are being written
        self._done = False  # past the window: nothing more to write
        self._slow_from = 0  # observer calls at or after this time take the slow path
        self._silent = False  # whether a change of flags may give no line

    # -- observer protocol ------------------------------------------------------------------
    def begin(self, sim: Simulator) -> None:
        """Register every selected signal (before anything is written, as VCD requires)."""
        if self.closed:
            raise ArchError(f"VCD tracer for {self.path} is closed; make a new one")
        if self.sim is not None:
            raise ArchError(f"VCD tracer for {self.path} already observes a simulator; make one tracer per simulator")
        for other in sim.observers:
            if isinstance(other, VcdTracer) and other is not self and other.sim is sim and not other.closed:
                raise ArchError(f"{sim.top.path} already has a VCD tracer writing {other.path}",
                                hint="select several scopes with one tracer: select=('a.*', 'b.*')")
        # The kernel leaves the commit to the first observer that offers it: the tracer must be
        # that one (it writes while it commits).
        earlier = sim.observers[:sim.observers.index(self)] if self in sim.observers else sim.observers
        for other in earlier:
            if hasattr(other, "commit_registers") or hasattr(other, "settle_channels"):
                raise ArchError(f"{sim.top.path} already has an observer ({type(other).__name__}) that commits "
                                "its registers or settles its channels; the VCD tracer does both",
                                hint="attach the VCD tracer before that observer")
        self.sim = sim
        # Attached to a simulator that has already run: the waveform starts now.
        self._lo = max(self._lo, sim.now)
        writer = VcdHeader(comment=f"top {sim.top.path}, seed {sim.seed}", version=f"archmodel {__version__}")
        self._header = writer
        outputs = self.check(sim)
        selects = self.selection.selects
        for comp in sim.components:
            # (a component's path is made up its hierarchy at every call: once here, and its
            # registers' and ports' paths from it, as theirs are made)
            comp_path = comp.path
            group = Group(comp_path)
            for reg in comp.registers:
                if selects(f"{comp_path}.{reg.name}"):
                    group.traces.append(self._add_register(writer, comp_path, reg))
            for port in outputs[comp]:
                path = f"{comp_path}.{port.name}"
                chosen = [s for s in CHANNEL_SIGNALS if selects(f"{path}.{s}")]
                if chosen:
                    group.subgroups.append(self._add_channel(writer, path, port, chosen))
            if group.traces or group.subgroups:
                self.groups.append(group)
        # (a change of flags gives no line if valid, fire or ready is not shown)
        self._silent = any(trace.silent for trace in self._handshakes.traces)
        self._refresh_threshold()

    def check(self, sim: Simulator) -> dict:
        """Raise an ArchError if a selection pattern matches no signal of ``sim`` (call it
        before running to fail early); returns each component's connected output ports."""
        self.selection.check_matches(_each_signal_name(sim))
        return _connected_outputs(sim)

    def commit_registers(self, t: int, dirty: list[Register]) -> None:
        """Write the registers changing at ``t`` and commit every register of ``dirty``: the
        kernel leaves its commit to the tracer, which reads each register anyway."""
        if t >= self._slow_from and not self._advance(t):
            commit(dirty)
            return
        # Lines go out in handle order, whatever order ticks filled ``dirty`` in, so that the
        # file is the same under shuffling. The same registers tend to change in the same
        # order at every edge: a list found in handle order is remembered and needs no check
        # of the order, and a list found out of order is sorted once and remembered.
        pending = self._pending
        start = len(pending)
        stamp = f"#{t}\n" if t != self._last_ts else None
        if stamp is not None:
            pending.append(stamp)
        if dirty == self._ordered:
            stopped = self._commit_ordered(dirty, pending, self._makes)
            if stopped is not None:
                self._stopped(dirty, dirty, stopped, start + (stamp is not None))
        else:
            self._commit_unknown(dirty, start + (stamp is not None))
        # (the stamp is the last thing written when no register changed: it goes again)
        if pending and pending[-1] is stamp:
            pending.pop()
        elif stamp is not None:
            self._last_ts = t
        if len(pending) > _WRITE_EVERY:
            self._write("".join(pending))
            pending.clear()

    def _commit_unknown(self, dirty: list[Register], first: int) -> None:
        """:meth:`commit_registers` for a register list other than the last one found in
        handle order: the last one found out of it, or one not known (checked as it goes)."""
        pending = self._pending
        if dirty == self._disordered:
            stopped = commit_ordered(self._in_order, pending, self._makes)
            if stopped is not None:
                self._stopped(dirty, self._in_order, stopped, first)
            return
        stopped = commit_changes(dirty, pending, self._handle_of_tail, self._makes)
        if stopped is not None:
            self._two_runs(dirty, stopped, first)
        # (checked once it comes twice running: some designs change the list every edge)
        elif dirty != self._seen:
            self._seen = dirty.copy()
        elif in_handle_order(dirty, self._handle_of_tail):
            self._ordered = self._seen
            self._commit_ordered = commit_watched if all(reg.var is not None for reg in dirty) else commit_ordered

    def _two_runs(self, dirty: list[Register], stopped: Register, first: int) -> None:
        """:func:`commit_changes` stopped at ``stopped`` in ``dirty``, an edge's register list
        not known before: go on from there, checked again, and if the rest is in handle order
        and all of it comes before the lines given so far (the list is a rotation of one in
        order, as on a ring whose changing components move round by one), put the rest's
        lines first; otherwise sort them all and remember ``dirty`` (see :meth:`_stopped`).
        A rotation is not remembered: the next list is mostly another rotation, and the
        checked loop costs less than sorting the list to remember it."""
        pending, handles = self._pending, self._handle_of_tail
        rest = dirty[dirty.index(stopped):]
        middle = len(pending)
        again = commit_changes(rest, pending, handles, self._makes)
        if again is None:
            # (lines are two parts each, the tail second: a tail names its register's handle)
            if middle == first or len(pending) == middle or handles[pending[-1]] < handles[pending[first + 1]]:
                pending[first:] = pending[middle:] + pending[first:middle]
            else:
                self._commit_rest(rest, len(rest), first)
            return
        self._commit_rest(rest, rest.index(again), first)
        self._disordered = dirty.copy()
        self._in_order = sorted(dirty, key=order_of(handles))

    def _stopped(self, dirty: list[Register], regs: list[Register], stopped: Register, first: int) -> None:
        """An edge's loop over ``regs`` (``dirty`` or the same in handle order) stopped at
        ``stopped``: finish the edge, whose lines begin at ``pending[first]``, and remember
        ``dirty`` as out of order, with its registers sorted."""
        self._commit_rest(regs, regs.index(stopped), first)
        self._disordered = dirty.copy()
        self._in_order = sorted(dirty, key=order_of(self._handle_of_tail))

    def settle_channels(self, t: int, touched: list[Channel]) -> None:
        """Update the handshake of the channels used at ``t`` (called after commit) and clear
        their flags for the next edge, in the same pass."""
        if t >= self._slow_from:
            if self._done:
                settle(touched)
                return
            self._advance(t)
            if self._done:
                settle(touched)
                return
        if not self._live:
            self._handshakes.touch(t, touched, [])
            self._refresh_threshold()
            return
        # The lines go straight into the pending ones, after this edge's timestamp if the
        # registers gave none, which goes again if no line follows it.
        pending = self._pending
        start = len(pending)
        stamp = t != self._last_ts
        if stamp:
            pending.append(f"#{t}\n")
        self._handshakes.touch(t, touched, pending)
        if stamp:
            if len(pending) == start + 1 or self._silent and not any(pending[start + 1:]):
                del pending[start:]
            else:
                self._last_ts = t
        if len(pending) > _WRITE_EVERY:
            self._write("".join(pending))
            pending.clear()
        self._refresh_threshold()

    def flush(self, sim: Simulator) -> None:
        """Write everything known up to now to disk (the end of every ``run()`` call)."""
        if self.closed or self.sim is None:
            return
        if not self._done:
            self._advance(sim.now + 1)
            self._refresh_threshold()
        self._write_pending()
        self._stream.flush()

    # -- closing --------------------------------------------------------------------------
    def close(self) -> None:
        """Finish the VCD with a final timestamp (the end of the last cycle simulated, or the
        window end), close it and write the ``.gtkw``. Safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        written = False
        try:
            if self._header is None:
                self._write(VcdHeader(version=f"archmodel {__version__}").text(None))
                final = 0
            else:
                final = min(self._natural_end(), self._hi)
                if not self._done:
                    self._advance(final)
                    if not self._live and not self._done:
                        self._enter()
                final = max(final, self._lo)
                self._write_pending()
                if self._last_ts is None:
                    # Never entered the window: the header, then the end (as pyvcd's close(final)).
                    header = self._header
                    self._write(header.text(self._lo))
                    if not header.vars or final > self._lo:
                        self._write(f"#{final}\n")
                elif final > self._last_ts:
                    self._write(f"#{final}\n")
            self._stream.close()  # the last buffer goes out here: a full disk shows now
            written = True
        finally:
            self._release()
            if not written:
                # A waveform that could not be finished is not put in place: a truncated
                # VCD would still parse. The previous file of that name, if any, stays.
                try:
                    self._stream.close()
                except OSError:
                    pass
                self.writing_path.unlink(missing_ok=True)
        os.replace(self.writing_path, self.path)
        if self.gtkw_path is not None:
            partial = partial_path(self.gtkw_path)
            try:
                write_save_file(partial, self.path, self.groups, self._lo, final, named=self.gtkw_path)
            except OSError:
                partial.unlink(missing_ok=True)
                raise
            os.replace(partial, self.gtkw_path)

    def __enter__(self) -> "VcdTracer":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()

    # -- signals ----------------------------------------------------------------------------
    def _add_register(self, writer: VcdHeader, comp_path: str, reg) -> Trace:
        value = reg.value
        path = f"{comp_path}.{reg.name}"  # (reg.path)
        if isinstance(value, bool) or (isinstance(value, int) and reg.width == 1):
            var = writer.add(comp_path, reg.name, VarType.reg, 1, int(value) & 1)
            mask, trace = 1, Trace(path, "bin")
        elif isinstance(value, int):
            width = reg.width if reg.width and reg.width > 0 else 32
            mask = (1 << width) - 1
            var = writer.add(comp_path, reg.name, VarType.reg, width, value & mask)
            trace = Trace(f"{path}[{width - 1}:0]", "dec")
        elif isinstance(value, float):
            var = writer.add(comp_path, reg.name, VarType.real, None, value)
            mask, trace = None, Trace(path, "real")
        else:
            var = writer.add(comp_path, reg.name, VarType.string, None, ascii_text(str(value)))
            mask, trace = 0, Trace(path, "ascii")
        self._handles.append((var, mask))
        # What reg.var holds while the window is open: (texts, tail), see commit_changes.
        if mask == 0 and self._texts is None:
            self._texts = TextMemo(var)
        texts, make, tail = register_texts(var, mask, self._bits, self._texts, self._table_made)
        if mask:
            self._bits_users.setdefault(mask, []).append(len(self._lines))
        self._handle_of_tail[tail] = len(self._lines)
        self._makes[tail] = make
        self._lines.append((texts, tail))
        self._registers.append(reg)
        self.signals.append(path)
        return trace

    def _add_channel(self, writer: VcdHeader, path: str, port, chosen: list[str]) -> Group:
        """Trace the channel of the output ``port`` (whose path is ``path``) as the ``chosen`` signals."""
        channel = port.channel
        trace = self._handshakes.add(channel)
        group = Group(path)
        occupancy_bits = max(1, channel.capacity.bit_length())
        values = trace.values()
        for signal in chosen:
            init = values[signal]
            if signal == "data":
                var = writer.add(path, signal, VarType.string, None, init)
                group.traces.append(Trace(f"{path}.data", "ascii"))
                self._handshakes.show_data(trace, var)
            else:
                if signal == "occupancy":
                    var = writer.add(path, signal, VarType.wire, occupancy_bits, init)
                    name = f"{path}.occupancy" + (f"[{occupancy_bits - 1}:0]" if occupancy_bits > 1 else "")
                    group.traces.append(Trace(name, "dec"))
                else:
                    var = writer.add(path, signal, VarType.wire, 1, init)
                    group.traces.append(Trace(f"{path}.{signal}", "bin"))
                trace.show(signal, var)
            self.signals.append(f"{path}.{signal}")
        return group

    def _table_made(self, memo: BitsMemo) -> None:
        """``memo``'s bits are a table now (see :class:`BitsMemo`): its registers' lines look
        their bits up there, from the next register on if an edge is being written."""
        lines, registers = self._lines, self._registers
        for handle in self._bits_users.get(memo.mask, ()):
            line = lines[handle] = (memo.texts, lines[handle][1])
            reg = registers[handle]
            if reg.var is not None:
                reg.var = line

    def _explain_bad_value(self, selected: list) -> None:
        assert self.sim is not None
        for reg in selected:
            var, mask = self._handles[self._handle_of_tail[reg.var[1]]]
            expected = "a string" if mask == 0 else ("a number" if mask is None else "an int or bool")
            if mask and not isinstance(reg.next, int) or mask is None and not isinstance(reg.next, (int, float)):
                raise ModelAssertion(f"{reg.path} at {self.sim.now} ps: register traced as {expected} "
                                     f"(its initial value was {type(var.value).__name__}) was set to {reg.next!r}")

    # -- time and the window -------------------------------------------------------------
    def _natural_end(self) -> int:
        """The end of the last cycle simulated: the next edge of the fastest clock."""
        sim = self.sim
        assert sim is not None
        return min((d.edge_after(sim.now) for d in sim.domains), default=sim.now)

    def _refresh_threshold(self) -> None:
        if self._done:
            self._slow_from = -1
            return
        threshold = self._hi + 1
        due = self._handshakes.next_due
        if due is not None and due + 1 < threshold:
            threshold = due + 1
        if not self._live and self._lo < threshold:
            threshold = self._lo
        self._slow_from = threshold

    def _advance(self, t: int) -> bool:
        """Catch up to time ``t``: show the handshake falls due before ``t``, enter or leave
        the window. Returns whether changes at ``t`` are to be written."""
        if self._done:
            return False
        handshakes, lo, hi = self._handshakes, self._lo, self._hi
        while (at := handshakes.next_due) is not None and at < t:
            if at > hi:
                break
            if not self._live and at >= lo:
                self._enter()
            at, lines = handshakes.fall_due()
            if self._live:
                self._emit(at, lines)
        if t > hi:
            if not self._live:
                self._enter()
            self._leave()
            return False
        if not self._live:
            if t < lo:
                self._refresh_threshold()
                return False
            self._enter()
        self._refresh_threshold()
        return True

    def _enter(self) -> None:
        """Start writing: the values now held are the initial values at the window start,
        dumped with the header; every later change is written by this tracer."""
        self._live = True
        header = self._header
        assert header is not None, "entered only after begin()"
        handles = self._handles
        # A variable holds the value it was registered with until one that differs is given
        # (as pyvcd's change() before the header: formatted, so that a value it cannot show
        # fails here, and kept).
        for index, reg in enumerate(self._registers):
            var, mask = handles[index]
            value = reg.value
            value = value & mask if mask else (value if mask is None else ascii_text(str(value)))
            if value != var.value:
                var.format_value(value, False)
                var.value = value
            reg.var = self._lines[index]
        for trace in self._handshakes.traces:
            values = trace.values()
            for signal, var in trace.vars.items():
                if values[signal] != var.value:
                    var.format_value(values[signal], False)
                    var.value = values[signal]
        self._write(header.text(self._lo))
        self._stream.flush()
        self._last_ts = self._lo

    def _leave(self) -> None:
        self._done = True
        self._live = False
        self._release()
        self._refresh_threshold()

    def _release(self) -> None:
        """Stop the kernel doing work for this tracer."""
        for reg in self._registers:
            reg.var = None
        self._handshakes.release()

    def _emit(self, t: int, lines: list[str]) -> None:
        """Write the value-change lines of time ``t`` (some may be empty)."""
        text = "".join(lines)
        if text:
            pending = self._pending
            if t != self._last_ts:
                self._last_ts = t
                pending.append(f"#{t}\n")
            pending.append(text)
            if len(pending) > _WRITE_EVERY or len(text) > _WRITE_NOW:
                self._write_pending()

    def _write_pending(self) -> None:
        """Write the lines gathered so far (before the header or a final timestamp, and before a flush)."""
        if self._pending:
            self._write("".join(self._pending))
            self._pending.clear()

    def _commit_rest(self, regs: list, stop: int, first: int) -> None:
        """Finish an edge that :func:`commit_changes` stopped at ``regs[stop]``: commit the
        rest, making the line of a value no memo can hold (an unhashable state) or naming a
        value of the wrong type, and put the edge's lines (from ``pending[first]`` on) in
        handle order."""
        pending = self._pending
        parts = pending[first:]  # the lines of regs[:stop], in handle order, in two parts each
        del pending[first:]
        tails = parts[1::2]
        # (a tail names its variable, so it says whose line it ends)
        lines = list(zip(map(self._handle_of_tail.__getitem__, tails), map(str.__add__, parts[::2], tails)))
        for reg in regs[stop:]:
            value = reg.next
            watched = reg.var
            if watched is not None and value != reg.value:
                texts, tail = watched
                handle = self._handle_of_tail[tail]
                try:
                    line = text_of(texts, self._makes[tail], value) + tail
                except (TypeError, ValueError):
                    self._explain_bad_value([reg])
                    var, mask = self._handles[handle]
                    if mask != 0:
                        raise
                    # (a string register holding a value that cannot be a memo's key)
                    line = var.format_value(ascii_text(str(value)), True) + "\n"
                lines.append((handle, line))
            reg.value = value
            reg.queued = False
        lines.sort(key=_HANDLE)
        pending.extend(line for _, line in lines)
