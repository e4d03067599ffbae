"""The scheduler: elaboration, two-phase edges, idle skipping, commit and the watchdog.

Each processed time point runs in two phases. First every awake component of every clock
domain with an edge at that time runs ``tick()``; then the kernel commits: registers take
their next values and freed credits return to senders. Every connection is registered
(channel latency >= 1 receiver cycle), so no tick can observe another tick of the same
time point and results do not depend on tick order (``shuffle=True`` proves it in tests).

When no component is awake the kernel jumps straight to the next requested wake-up, kept
in a heap ordered by (time, sequence) as SimPy does, so idle time costs nothing.
"""

from __future__ import annotations

import heapq
import itertools
import random
from typing import TYPE_CHECKING, Any

import attrs
import networkx as nx

from .component import Component
from .errors import ArchError, DeadlockError, SimulationError
from .lookahead import ConnectionGraph, arrival_in_flight_ps, earliest_arrival_ps
from .time import ClockDomain, format_time
from .tree import Tree

if TYPE_CHECKING:
    from .partition import Partition


def _sequence(entry: tuple) -> int:
    return entry[0]


def _reported(part: Component, reported: dict) -> int:
    """Progress reported by ``part`` and every part it belongs to, memoised in ``reported``."""
    chain = []
    total = 0
    above: Component | None = part
    while above is not None:
        known = reported.get(above)
        if known is not None:
            total = known
            break
        chain.append(above)
        above = above.parent
    for unknown in reversed(chain):
        total += unknown.progress_count
        reported[unknown] = total
    return total


class _Schedule:
    """One simulator's scheduling state for one clock domain (domains themselves are plain
    values that several simulators may share)."""

    __slots__ = ("domain", "period_ps", "awake", "slept", "next_edge")

    def __init__(self, domain: ClockDomain):
        self.domain = domain
        self.period_ps = domain.period_ps
        self.awake: list[Component] = []  # components that tick at the next edge
        self.slept = False  # some component fell asleep during this edge
        self.next_edge: int | None = None  # None while every component of the domain sleeps


@attrs.frozen
class RunResult:
    """Why and when a call to :meth:`Simulator.run` returned."""

    reason: str  # "quiescent" (nothing left to do), "limit" (time/cycles reached), "stopped"
    time_ps: int
    ticks: int


class Simulator:
    """Elaborates a component tree and runs it.

    ``seed`` feeds every component's RNG stream; ``watchdog_cycles`` is how many edges of the
    fastest clock may pass with messages pending and no transfer before a deadlock is
    reported; ``shuffle`` randomises tick order each edge (a test of order independence),
    drawing from ``shuffle_seed`` (default: ``seed``) so the order can vary with the model fixed.
    ``partition`` (see :mod:`.partition`) runs only its part of the tree, with stand-ins at
    the channels to other parts (the tree is then this simulator's alone). ``progress``
    says whether whoever runs it shows progress (True, False, or None: not said); a model
    with long phases of its own (a workload's layers) may show a bar for them.
    """

    def __init__(self, top: Component, *, seed: int = 0, watchdog_cycles: int = 100_000,
                 shuffle: bool = False, shuffle_seed: int | None = None, progress: bool | None = None,
                 partition: Partition | None = None):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            # numpy's generators (every component's stream) take whole numbers from 0 up only
            raise ArchError(f"the seed must be a whole number of at least 0, got {seed!r}")
        self.top = top
        self.partition = partition
        self.seed = seed
        self.progress = progress
        self.now = 0
        self.ticks = 0
        self.transfers = 0
        self.stopped: str | None = None
        # The time the current run() stops at (inclusive), None without a limit: a model that
        # computes several cycles at once (a compiled inner loop) stops its batch there.
        self.limit_ps: int | None = None
        self.shuffle = random.Random(seed if shuffle_seed is None else shuffle_seed) if shuffle else None
        self._wakes: list = []
        # Wake-ups for upkeep only (a DRAM refresh with no request outstanding): (time, seq,
        # component). They keep time going while anything else happens, but a system with
        # nothing else left to do is quiescent, not busy for ever.
        self._upkeep: list = []
        self._seq = itertools.count()
        # Wake-ups for one time (nearly always the next edge) skip the heap: (sequence, component).
        self._soon: list = []
        self._soon_at = -1  # their time, while _soon holds any (no edge is at -1)
        self._wake_table_at: tuple | None = None  # the key _wake_table_cached holds for
        self._wake_table_cached: dict = {}
        self._dirty: list = []
        self._credit_returns: list = []
        self._touched: list = []
        self.observers: list = []
        # The observers' parts of the commit (see add_observer): those shown the registers
        # before the commit and the one committing them in its own pass (None: the kernel
        # does), and the same for the channels used.
        self._register_watchers: list = []
        self._register_committer: Any = None
        self._channel_watchers: list = []
        self._channel_settler: Any = None
        self.components: list[Component] = []
        self.domains: list[ClockDomain] = []
        self._schedules: list[_Schedule] = []
        self.channels: list = []
        self.registers: list = []
        self._elaborate()
        fastest = min(d.period_ps for d in self.domains) if self.domains else 1
        self.watchdog_ps = watchdog_cycles * fastest
        self._last_progress = (0, 0)
        self._parts_seen: dict = {}  # holder -> (progress signature, since when unchanged)
        self._parts_check_at = 0
        self._started = False

    # -- elaboration --------------------------------------------------------------------
    def _elaborate(self) -> None:
        self.tree = tree = Tree(self.top)
        if self.partition is None:
            self.components, self.domains, self.channels = tree.components, tree.domains, tree.channels
        else:
            self.components, self.channels = self.partition.view(tree)
            # (in the order components first use them, as the tree's)
            self.domains = list({id(comp.domain): comp.domain for comp in self.components}.values())
        schedules: dict[int, _Schedule] = {}
        for domain in self.domains:
            sched = schedules[id(domain)] = _Schedule(domain)
            self._schedules.append(sched)
        for comp in self.components:
            comp.sim = self
            comp._sched = schedules[id(comp.domain)]
            for reg in comp.registers:
                reg._commit = self._dirty
                self.registers.append(reg)
            comp._wake_edge = None  # the edge of this component's latest wake-up entry
        for ch in self.channels:
            ch.bind(self, self._credit_returns, self._touched)
        for comp in self.components:
            comp._declares_sends = type(comp).earliest_send_ps is not Component.earliest_send_ps
        self.connection_graph = ConnectionGraph(self)
        self._holders = [c for c in self.components if type(c).holding is not Component.holding]
        self._settlers = [c for c in self.components if type(c).settle is not Component.settle]

    def _begin(self) -> None:
        self._started = True
        for comp in self.components:
            if type(comp).tick is not Component.tick:
                comp._awake = True
                comp._sched.awake.append(comp)
        for sched in self._schedules:
            if sched.awake:
                sched.next_edge = sched.domain.phase_ps
        for comp in self.components:
            comp.start()
        for obs in self.observers:
            obs.begin(self)

    # -- wake-ups -------------------------------------------------------------------------
    def wake_at(self, comp: Component, time_ps: int) -> None:
        """Schedule ``comp`` to tick at its first edge at or after ``time_ps`` (> now)."""
        edge = comp.domain.edge_at_or_after(time_ps)
        if edge <= self.now and self._started:
            edge = comp.domain.edge_after(self.now)
        # A second entry for the same edge would be popped as a no-op: skip it.
        if comp._wake_edge != edge:
            comp._wake_edge = edge
            self._push_wake(comp, edge)

    def wake_for_upkeep_at(self, comp: Component, time_ps: int) -> None:
        """Schedule ``comp`` to tick at its first edge at or after ``time_ps`` for upkeep only
        (work no other component waits for or sees, such as a refresh while no request is
        outstanding): should nothing else be left to happen, the run ends quiescent instead."""
        edge = comp.domain.edge_at_or_after(time_ps)
        if edge <= self.now and self._started:
            edge = comp.domain.edge_after(self.now)
        heapq.heappush(self._upkeep, (edge, next(self._seq), comp))

    def _wake_later(self, comp: Component, time_ps: int) -> None:
        # wake_at for a time after now, as send, sleep and credit returns ask: the time is
        # almost always an edge already, so the rounding is skipped when it is.
        domain = comp.domain
        if (time_ps - domain.phase_ps) % domain.period_ps:
            time_ps = domain.edge_at_or_after(time_ps)
        if comp._wake_edge != time_ps:
            comp._wake_edge = time_ps
            self._push_wake(comp, time_ps)

    def _push_wake(self, comp: Component, edge: int) -> None:
        # Wake-ups are taken in (time, sequence) order whether they wait in the heap or in
        # the list of wake-ups for one time, which is filled while it is empty or for its time.
        soon = self._soon
        if edge == self._soon_at or not soon:
            self._soon_at = edge
            soon.append((next(self._seq), comp))
        else:
            heapq.heappush(self._wakes, (edge, next(self._seq), comp))

    def _fell_asleep(self, comp: Component) -> None:
        # Messages already waiting were seen, so only future arrivals wake it (those the
        # receiver lets not wake it aside), except after it took one at this edge: it could
        # not see the next, so it looks at the next edge, unless the port lets arrivals up to
        # a later time not wake it (the next arrived before then: the receiver said it can do
        # nothing with it before then and looks at it by itself). A busy link wakes it when it
        # frees only if it was waiting to send.
        now = self.now
        soonest = None
        for ch in comp._in_channels:
            flight = ch.flight
            if not flight:
                continue
            quiet = ch.quiet_until
            if ch.taken_at == now and flight[0][0] <= now and quiet <= now:
                soonest = now + comp.domain.period_ps
                continue
            after = quiet if quiet > now else now
            if flight[-1][0] <= after:
                continue  # (every message on it has arrived, or arrives unseen: nothing wakes it)
            for arrival, _ in flight:
                if arrival > after:
                    if soonest is None or arrival < soonest:
                        soonest = arrival
                    break
        for ch in comp._out_channels:
            if ch.blocked and ch.busy_until > now and (soonest is None or ch.busy_until < soonest):
                soonest = ch.busy_until
        if soonest is not None:
            self._wake_later(comp, soonest)

    def idle_until(self, time_ps: int) -> None:
        """Let time pass to ``time_ps`` with nothing happening (a part of a split run whose
        work ended before the whole's, so that its statistics cover the whole run's span):
        an error if anything is due by then."""
        due = self.next_event_ps()
        if due is not None and due <= time_ps:
            raise SimulationError(f"idle_until({time_ps} ps): something is due at {due} ps")
        self.now = max(self.now, time_ps)

    def take_run(self, time_ps: int, ticks: int, transfers: int) -> None:
        """This simulator's system was run by others (the parts of a split run, which hand
        their components the statistics they reported): take the run's end time and
        counts, as a run of its own would have left them."""
        self.now = time_ps
        self.ticks = ticks
        self.transfers = transfers

    def stop(self, reason: str = "stopped") -> None:
        """End the run after the current time point (a model calls this when its work is done)."""
        self.stopped = reason

    # -- running --------------------------------------------------------------------------
    def run(self, until_ps: int | None = None, cycles: int | None = None,
            clock: ClockDomain | None = None, others_busy: bool = False) -> RunResult:
        """Run until nothing is left to do, ``until_ps`` (inclusive), ``cycles`` edges of
        ``clock`` (default: the top's clock) from time 0, or a model calls ``stop()``.
        ``others_busy``: the rest of the system, run elsewhere (a split run's other parts),
        keeps time going up to the limit, so wake-ups for upkeep are taken as they come
        instead of ending the run quiescent once nothing else is left here.

        May be called repeatedly to run in slices; a run that reaches its limit leaves ``now``
        at the limit. Raises DeadlockError when work is pending and nothing can move.
        """
        if not self._started:
            self._begin()
        limit = self.limit_of(until_ps, cycles, clock)
        self.stopped = None
        self.limit_ps = limit
        try:
            reason = self._loop(limit, others_busy)
        finally:
            for comp in self._settlers:
                comp.settle()
            for obs in self.observers:
                obs.flush(self)
        return RunResult(reason, self.now, self.ticks)

    def limit_of(self, until_ps: int | None = None, cycles: int | None = None,
                 clock: ClockDomain | None = None) -> int | None:
        """The time :meth:`run` with these arguments stops at (inclusive): ``until_ps`` or the
        ``cycles``-th edge of ``clock`` (default: the top's clock) from time 0, whichever comes
        first; None without either. A driver that runs in slices (a progress bar) asks here."""
        limit = until_ps
        if cycles is not None:
            clk = clock or self.top.domain
            edge = clk.phase_ps + (cycles - 1) * clk.period_ps
            limit = edge if limit is None else min(limit, edge)
        return limit

    def _loop(self, limit: int | None, others_busy: bool = False) -> str:
        wakes = self._wakes
        domains = self._schedules
        heappop = heapq.heappop
        heappush = heapq.heappush
        seq = self._seq
        soon = self._soon
        upkeep = self._upkeep
        dirty = self._dirty
        credit_returns = self._credit_returns
        observers = self.observers
        shuffle = self.shuffle
        single = domains[0] if len(domains) == 1 else None
        while True:
            # The next time point: the earliest edge of a domain with awake components, or wake-up.
            if single is not None:
                t = single.next_edge
            else:
                t = None
                for d in domains:
                    e = d.next_edge
                    if e is not None and (t is None or e < t):
                        t = e
            if wakes and (t is None or wakes[0][0] < t):
                t = wakes[0][0]
            if soon and (t is None or self._soon_at < t):
                t = self._soon_at
            if upkeep:
                if t is None and not others_busy and not self._pending_messages():
                    return "quiescent"
                if t is None or upkeep[0][0] < t:
                    t = upkeep[0][0]
            if t is None:
                return self._quiescent()
            if limit is not None and t > limit:
                # Time reaches the limit even when nothing happens there, so statistics and
                # elapsed cycles read after the run cover the whole slice.
                self.now = max(self.now, limit)
                return "limit"
            self.now = t
            if soon and self._soon_at == t:
                due = soon
                if wakes and wakes[0][0] == t:
                    due = list(soon)
                    while wakes and wakes[0][0] == t:
                        _, number, comp = heappop(wakes)
                        due.append((number, comp))
                    due.sort(key=_sequence)
                for _, comp in due:
                    if not comp._awake:
                        comp._awake = True
                        d = comp._sched
                        d.awake.append(comp)
                        d.next_edge = t
                    else:
                        comp.doze_end_ps = t  # (a wake-up ends a doze: Component.doze_until)
                        comp._sched.next_edge = t
                soon.clear()
            while wakes and wakes[0][0] == t:
                comp = heappop(wakes)[2]
                if not comp._awake:
                    comp._awake = True
                    d = comp._sched
                    d.awake.append(comp)
                    d.next_edge = t
                else:
                    comp.doze_end_ps = t
                    comp._sched.next_edge = t
            # (as for the wake-ups above, written out: a call per wake-up costs in this loop)
            while upkeep and upkeep[0][0] == t:
                comp = heappop(upkeep)[2]
                if not comp._awake:
                    comp._awake = True
                    d = comp._sched
                    d.awake.append(comp)
                    d.next_edge = t
                else:
                    comp.doze_end_ps = t
                    comp._sched.next_edge = t
            for d in domains:
                if d.next_edge != t:
                    continue
                awake = d.awake
                if shuffle is not None:
                    shuffle.shuffle(awake)
                for comp in awake:
                    comp.tick()
                self.ticks += len(awake)
                if d.slept:
                    d.slept = False
                    d.awake = awake = [c for c in awake if c._awake]
                if awake:
                    following = t + d.period_ps
                    for comp in awake:
                        if comp.doze_end_ps <= following:
                            break
                    else:
                        # Every awake component dozes past the next edge: skip to the
                        # soonest doze end (an arrival, a returning credit or a wake-up
                        # brings it forward, and this edge with it).
                        following = d.domain.edge_at_or_after(min(comp.doze_end_ps for comp in awake))
                    d.next_edge = following
                else:
                    d.next_edge = None
            # Commit phase.
            if dirty:
                if observers:
                    for obs in self._register_watchers:
                        obs.registers(t, dirty)
                    committer = self._register_committer
                else:
                    committer = None
                if committer is None:
                    for reg in dirty:
                        reg.value = reg.next
                        reg.queued = False
                else:
                    committer(t, dirty)  # (reads and commits in one pass)
                dirty.clear()
            if credit_returns:
                for ch in credit_returns:
                    ch.credits += ch.returning
                    ch.returning = 0
                    sender = ch.src_owner
                    if not ch.blocked:
                        continue
                    # With one domain every time point is one of its edges.
                    edge = t + single.period_ps if single is not None else sender.domain.edge_after(t)
                    if sender._awake:
                        if sender.doze_end_ps > edge:
                            sender.doze_end_ps = edge  # (Component.doze_until: its doze ends then)
                            d = sender._sched
                            if d.next_edge > edge:
                                d.next_edge = edge
                    else:
                        if ch.busy_until > edge:
                            # A wide message still holds the link then: the sender can send
                            # once it frees, where it asked to be woken as it fell asleep
                            # (asked again here, should a wake-up of its own have come since).
                            self._wake_later(sender, ch.busy_until)
                        elif sender._wake_edge != edge:
                            sender._wake_edge = edge
                            if edge == self._soon_at or not soon:
                                self._soon_at = edge
                                soon.append((next(seq), sender))
                            else:
                                heappush(wakes, (edge, next(seq), sender))
                credit_returns.clear()
            if self._touched:
                for obs in self._channel_watchers:
                    obs.channels(t, self._touched)
                if self._channel_settler is None:
                    for ch in self._touched:
                        ch.marked = ch.offered = ch.fired = ch.took = False
                else:
                    self._channel_settler(t, self._touched)
                self._touched.clear()
            # Watchdog: has anything moved recently?
            if self.transfers != self._last_progress[1]:
                self._last_progress = (t, self.transfers)
            elif t - self._last_progress[0] > self.watchdog_ps:
                if self._pending_messages():
                    raise DeadlockError(self.deadlock_report(
                        f"no transfer for {format_time(t - self._last_progress[0])} while messages are pending"))
                # Nothing is pending, and a message becomes pending only by a send, which is
                # progress: restart the window instead of scanning every channel each edge.
                self._last_progress = (t, self.transfers)
            if t >= self._parts_check_at and self._holders:
                self._check_parts(t)
            if self.stopped is not None:
                return "stopped"

    def undisturbed_until_ps(self, comp: Component, within_ps: int | None = None) -> int | None:
        """The earliest time a message from elsewhere can arrive at one of ``comp``'s inputs
        (None: never, as things stand), by conservative lookahead over the connection graph
        (:mod:`.lookahead`): only what is wired to ``comp`` counts, through channel latencies
        and the bounds models declare (:meth:`Component.earliest_send_ps`,
        :meth:`Component.reaction_ps`). A model that computes several of its cycles at once
        may run the cycles before that time, provided it sends nothing meanwhile. A caller
        that cannot use a horizon beyond ``within_ps`` (the end of its batch anyway) says so,
        and gets None for anything from there on, found sooner."""
        return earliest_arrival_ps(self, comp, within_ps)

    def arrival_in_flight_ps(self, comp: Component) -> int | None:
        """The earliest arrival at ``comp`` when every one of its inputs holds a message on
        its way (None otherwise): :meth:`undisturbed_until_ps` without asking any sender,
        for a model that asks questions sparingly (see :mod:`.lookahead`)."""
        return arrival_in_flight_ps(self, comp)

    def next_event_ps(self) -> int | None:
        """The earliest time anything is due (an awake domain's edge, a requested wake-up),
        None when nothing is: a caller running in slices may jump there."""
        times = [d.next_edge for d in self._schedules if d.next_edge is not None]
        if self._wakes:
            times.append(self._wakes[0][0])
        if self._upkeep:
            times.append(self._upkeep[0][0])
        if self._soon:
            times.append(self._soon_at)
        return min(times, default=None)

    def edge_pending(self, comp: Component) -> bool:
        """Whether the current time point is an edge of ``comp``'s clock domain whose ticks
        are not over: True while the domain's components tick there, and before (asked from
        a domain ticked first); False between time points, once they have ticked, and where
        the domain skips the time point (every awake component of it dozing), so a dozing
        component asked then has that edge behind it (with its own record of the ticks it
        had, it tells whether it was ticked at this one yet)."""
        return comp._sched.next_edge == self.now

    def next_tick_ps(self, comp: Component) -> int | None:
        """When ``comp`` next ticks as things stand: now while it is awake, its earliest
        requested wake-up while it sleeps, None when it sleeps with nothing requested (a
        message or credit may still wake it)."""
        if comp._awake:
            return self.now
        return self._wake_table().get(comp)

    def wake_times(self) -> dict:
        """The earliest requested wake-up of every sleeping component that has one."""
        return {comp: time_ps for comp, time_ps in self._wake_table().items() if not comp._awake}

    def _wake_table(self) -> dict:
        # The earliest requested wake-up of every component with one, awake or not (a caller
        # looks at _awake first): the lookahead asks at every question, many times per time
        # point. Wake-ups are taken only as a time point begins, and while it lasts the
        # lists only grow, so the table holds until time moves or one of them grows.
        key = (self.now, len(self._wakes), len(self._upkeep), len(self._soon))
        if self._wake_table_at == key:
            return self._wake_table_cached
        times: dict = {}
        for time_ps, _, other in itertools.chain(self._wakes, self._upkeep):
            if other not in times or time_ps < times[other]:
                times[other] = time_ps
        if self._soon:
            at = self._soon_at
            for _, other in self._soon:
                if other not in times or at < times[other]:
                    times[other] = at
        self._wake_table_at, self._wake_table_cached = key, times
        return times

    def _check_parts(self, t: int) -> None:
        """The per-part watchdog, every quarter window: a component that holds work and has
        neither moved a message on its channels nor reported progress (itself or a part it
        belongs to) for a whole window is stuck, however busy the rest of the system is."""
        self._parts_check_at = t + max(1, self.watchdog_ps // 4)
        seen = self._parts_seen
        reported: dict = {}
        window = self.watchdog_ps
        for comp in self._holders:
            # What changes when comp makes progress: messages on its channels, and progress
            # reported by it or by any part it belongs to (a core's cluster reports for its
            # cores). Every term only ever grows, so their sum changes exactly when one does.
            signature = comp.progress_count
            parent = comp.parent
            if parent is not None:
                above = reported.get(parent)
                signature += _reported(parent, reported) if above is None else above
            for ch in comp._out_channels:
                signature += ch.sent
            for ch in comp._in_channels:
                signature += ch.received
            last = seen.get(comp)
            # A part that moved starts a new window whatever it holds, so only one that did
            # not is asked what it holds (the question costs more than the signature).
            if last is None or last[0] != signature:
                seen[comp] = (signature, t)
                continue
            held = comp.holding()
            if held is None:
                seen[comp] = (signature, t)
            elif t - last[1] > window:
                raise DeadlockError(self.deadlock_report(
                    f"{comp.path} holds {held} and has made no progress for {format_time(t - last[1])} "
                    "while the rest of the system moves"))

    @property
    def watchdog_deadline_ps(self) -> int:
        """The last time the current run can reach without a transfer or reported progress
        before the watchdog may stop it: a model that computes several cycles at once
        stops its batch there, so a hang is reported with the state the edge-by-edge
        model has at that time."""
        return self._last_progress[0] + self.watchdog_ps

    def _pending_messages(self) -> bool:
        # Messages in channels, or held inside components that say so (see Component.holding).
        return any(ch.flight for ch in self.channels) or any(c.holding() for c in self._holders)

    @property
    def started(self) -> bool:
        """The first :meth:`run` has begun: every component's ``start`` has run and time
        moves from edge to edge, so a model asked for work between runs (a driver's
        ``send_packet``) schedules it at the next edge instead of at time 0."""
        return self._started

    @property
    def tracing(self) -> bool:
        """An observer (a tracer) is attached: registers may be watched, so models that keep
        waveform-only registers up to date can skip that work when this is False."""
        return bool(self.observers)

    def _quiescent(self) -> str:
        if self._pending_messages():
            raise DeadlockError(self.deadlock_report("every component is asleep while messages are pending"))
        return "quiescent"

    def deadlock_report(self, why: str) -> str:
        """Which channels are full or hold messages, who waits on whom, and any wait cycle."""
        lines = [f"deadlock at {format_time(self.now)}: {why}"]
        waits = nx.DiGraph()
        for ch in self.channels:
            if not ch.flight and ch.credits:
                continue
            state = "full" if ch.credits == 0 else "not full"
            lines.append(f"  channel {ch.name}: {len(ch.flight)} message(s) waiting, "
                         f"{ch.occupancy}/{ch.capacity} credits in use ({state})")
            if ch.credits == 0:
                waits.add_edge(ch.src_owner.path, ch.dst_owner.path, channel=ch.name)
        for comp in self._holders:
            held = comp.holding()
            if held:
                lines.append(f"  {comp.path} holds {held}")
                for other in comp.waiting_for():
                    if not waits.has_edge(comp.path, other.path):
                        waits.add_edge(comp.path, other.path, channel=None)
        for sender, receiver, data in waits.edges(data=True):
            why = f"channel {data['channel']} is full" if data["channel"] else "it holds work"
            lines.append(f"  {sender} waits on {receiver} ({why})")
        try:
            cycle = nx.find_cycle(waits)
            names = [edge[0] for edge in cycle] + [cycle[0][0]]
            lines.append("  wait cycle: " + " -> ".join(names))
        except nx.NetworkXNoCycle:
            pass
        return "\n".join(lines)

    # -- results ----------------------------------------------------------------------------
    def all_stats(self) -> list:
        """Every statistic of this simulator's components, in hierarchy order."""
        return [stat for comp in self.components for stat in comp.stats]

    def add_observer(self, observer: Any) -> None:
        """Attach an observer (a tracer): it sees register and channel changes at commit.

        An observer has ``begin(sim)`` (called before the first edge, or now if the run has
        begun), ``registers(t, dirty)`` (the registers set at edge ``t``, before the commit:
        ``reg.next`` is the new value), ``channels(t, touched)`` (the traced channels used at
        ``t``, after the commit) and ``flush(sim)`` (at the end of every :meth:`run`).

        An observer that reads every register or channel anyway may do the kernel's pass
        over them in its own: ``commit_registers(t, dirty)`` in place of ``registers`` reads
        the registers and commits each (``value = next``, ``queued = False``), and
        ``settle_channels(t, touched)`` in place of ``channels`` reads the channels and clears
        each one's ``marked``, ``offered``, ``fired`` and ``took``. The other observers see
        them first. The first observer added that offers a pass takes it; a later one is
        called with ``registers``/``channels`` instead (or may refuse in ``begin``).
        """
        if self._started:
            observer.begin(self)  # (refused, it is not attached)
        self.observers.append(observer)
        if hasattr(observer, "commit_registers") and self._register_committer is None:
            self._register_committer = observer.commit_registers
        else:
            self._register_watchers.append(observer)
        if hasattr(observer, "settle_channels") and self._channel_settler is None:
            self._channel_settler = observer.settle_channels
        else:
            self._channel_watchers.append(observer)

