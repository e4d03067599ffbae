"""One system run as several parts, each by a simulator of its own, in processes of their own.

A system whose parts exchange no message during a run (Manticore's four chiplets running a
GEMM whose operands each die holds in its own HBM) runs as fast on two cores as each half
does on one. :func:`split` cuts the top's children into balanced parts; a
:class:`Simulator` given a :class:`Partition` runs only that part's components, with a
:class:`PartitionEdge` standing in for the components of other parts at the end of every
channel between them; :func:`run_partitioned` forks one process per part and brings their
statistics back.

The split is speculative, and exact or nothing. A stand-in never sends, so the lookahead
(:mod:`.lookahead`) counts nothing coming from another part, which holds exactly as long as
the parts exchange nothing; a message that arrives at a stand-in ends that part's run: the
parts were not independent, and :func:`run_partitioned` returns :class:`Declined` (the other
parts are stopped at once) so the caller runs the whole system in one simulator instead. So
does every end a part cannot decide alone: quiescence, an error, a watchdog, a model's own
``stop`` other than the workload's end. Otherwise each part is the
whole run restricted to its components (a simulator's results depend only on what reaches a
component over its channels, never on tick order or on how the run is sliced), and the run
ends as the whole would: when the last part's workload ends (each part that ended earlier
runs on to that time, so its statistics cover the same span) or at the limit.
"""

from __future__ import annotations

import threading
import traceback
from typing import TYPE_CHECKING, Any, Callable

import attrs

from .component import Component
from .stats import Reported
from .tree import Tree

if TYPE_CHECKING:
    from .simulator import Simulator

PROGRESS_EVERY_S = 0.5
"""How often (wall-clock seconds) the parts say how far they have run."""

CROSSED = "crossed"
"""The stop reason of a part whose component sent a message to another part."""

WORKLOAD_END = "workload finished"
"""The stop reason of a workload whose clusters all finished (a ``run`` statement's end):
the one ``stop`` a part may decide alone, since the whole ends when every part's has."""


class Partition:
    """The components one simulator of a split runs: every component under ``roots`` (and
    the top itself, for the partition that ``holds_top``). ``index`` numbers it in its split."""

    def __init__(self, index: int, roots: list[Component], holds_top: bool):
        self.index = index
        self.roots = roots
        self.holds_top = holds_top

    def member_ids(self, top: Component) -> set[int]:
        """The ids of the components this partition runs."""
        members = {id(comp) for root in self.roots for comp in root.walk()}
        if self.holds_top:
            members.add(id(top))
        return members

    def describe(self) -> str:
        """The roots' paths, for messages."""
        return ", ".join(root.path for root in self.roots)

    def view(self, tree: Tree) -> tuple[list[Component], list]:
        """The components and channels of ``tree`` that a simulator of this partition runs:
        its own components and a :class:`PartitionEdge` for each component of another part
        at the end of a channel of theirs, and every channel with one end here (those
        leading to or from another part are rewired to its stand-in: this tree is then this
        simulator's alone)."""
        members = self.member_ids(tree.top)
        components = [comp for comp in tree.components if id(comp) in members]
        edges: dict[int, PartitionEdge] = {}
        channels = []
        for channel in tree.channels:
            sends_here = id(channel.src_owner) in members
            takes_here = id(channel.dst_owner) in members
            if sends_here and not takes_here:
                edge = _edge_for(edges, channel.dst_owner)
                channel.dst_owner = edge
                edge.add_input(channel)
            elif takes_here and not sends_here:
                edge = _edge_for(edges, channel.src_owner)
                channel.src_owner = edge
                edge.add_output(channel)
            elif not sends_here:
                continue
            channels.append(channel)
        return components + list(edges.values()), channels


def _edge_for(edges: dict, remote: Component) -> PartitionEdge:
    edge = edges.get(id(remote))
    if edge is None:
        edge = edges[id(remote)] = PartitionEdge(remote)
    return edge


class PartitionEdge(Component):
    """Stands in for ``remote``, a component another simulator of the split runs, at the
    ends of the channels between it and this partition. It never sends (the split assumes
    the parts exchange nothing), and a message that reaches it stops the run with reason
    :data:`CROSSED`, naming the channel in ``crossed``."""

    def __init__(self, remote: Component):
        super().__init__("partition_edge", clock=remote.domain)
        self.domain = remote.domain
        self.remote_path = remote.path
        self.crossed: str | None = None
        self._in_channels = []
        self._out_channels = []
        self._wake_edge = None

    def add_input(self, channel: Any) -> None:
        """A channel from this partition to the remote component now ends here."""
        self._in_channels.append(channel)

    def add_output(self, channel: Any) -> None:
        """A channel from the remote component to this partition now starts here."""
        self._out_channels.append(channel)

    def inputs(self) -> list:
        """The channels from this partition to the remote component."""
        return list(self._in_channels)

    def outputs(self) -> list:
        """The channels from the remote component to this partition."""
        return list(self._out_channels)

    def tick(self) -> None:
        for channel in self._in_channels:
            if channel.flight:
                self.crossed = channel.name
                self.sim.stop(CROSSED)
                return
        self.sleep()

    def earliest_send_ps(self, port: Any) -> int | None:
        # never: the split holds only while the remote part sends nothing here
        return None


def split(top: Component, count: int) -> list[Partition]:
    """The top's children cut into at most ``count`` partitions of about as many components
    each (the largest first, each to the partition with the fewest so far); the first also
    holds the top. Fewer than two children give one partition."""
    children = list(top.children)
    count = max(1, min(count, len(children)))
    sizes = {id(child): sum(1 for _ in child.walk()) for child in children}
    groups: list[list[Component]] = [[] for _ in range(count)]
    loads = [0] * count
    for child in sorted(children, key=lambda c: -sizes[id(c)]):
        lightest = loads.index(min(loads))
        groups[lightest].append(child)
        loads[lightest] += sizes[id(child)]
    order = {id(child): i for i, child in enumerate(children)}
    return [Partition(i, sorted(group, key=lambda c: order[id(c)]), i == 0) for i, group in enumerate(groups)]


@attrs.frozen
class PartitionedRun:
    """A run :func:`run_partitioned` finished: how it ended (``reason``: the workload's end
    or ``"limit"``), at ``time_ps``, where each part's own run ended (``part_ends_ps``, before
    those that ended sooner ran on to ``time_ps``), the component ticks and transfers of every
    part, and every component's statistics as its part reported them (path ->
    :class:`Reported`)."""

    reason: str
    time_ps: int
    part_ends_ps: tuple
    ticks: int
    transfers: int
    statistics: dict


@attrs.frozen
class Declined:
    """Why a split run gave up (the caller runs the whole system in one simulator)."""

    why: str


def _part_figures(sim: Simulator) -> dict:
    """Every statistic of this part as (kind, unit, description, summary), by path (the
    stand-ins have none)."""
    return {stat.path: (stat.kind, stat.unit, stat.doc, stat.summary()) for stat in sim.all_stats()}


def _crossed(sim: Simulator) -> str | None:
    """The channel on which a message left this part, if one did."""
    return next((c.crossed for c in sim.components if isinstance(c, PartitionEdge) and c.crossed), None)


def _unusable_end(sim: Simulator, partition: Partition, reason: str) -> str | None:
    """Why the whole run cannot be told from this part's end (None: it can)."""
    crossed = _crossed(sim)
    if crossed is not None:
        return f"a message crossed between parts on {crossed}"
    if reason not in (WORKLOAD_END, "limit"):
        return f"part {partition.describe()} ended {reason!r}, which only the whole system can decide"
    return None


def _report_progress(sim: Simulator, progress: Any, index: int, done: threading.Event) -> None:
    """Copy the time ``sim`` has reached into ``progress[index]`` twice a second until
    ``done``: the run is one call of the engine (slices would cut the compiled models' batches
    and make them hand their state over at every one), and the parent's bar follows this."""
    while not done.wait(PROGRESS_EVERY_S):
        progress[index] = sim.now


def _run_part(top: Component, partition: Partition, make_simulator: Callable, limit_ps: int | None,
              progress: Any, conn: Any) -> None:
    """A forked process's whole life: run one part, report how it ended, run on to the
    time the parent names (or give up), report its figures."""
    try:
        sim = make_simulator(top, partition)
        done = threading.Event()
        reporter = threading.Thread(target=_report_progress, args=(sim, progress, partition.index, done), daemon=True)
        reporter.start()
        try:
            result = sim.run(until_ps=limit_ps)
        finally:
            done.set()
        progress[partition.index] = sim.now
        reason = sim.stopped if sim.stopped is not None else result.reason
        conn.send(("ended", reason, sim.now, _unusable_end(sim, partition, reason)))
        order = conn.recv()
        if order[0] != "finish":
            return
        end_ps = order[1]
        if sim.now < end_ps:
            result = sim.run(until_ps=end_ps, others_busy=True)
            reason = sim.stopped if sim.stopped is not None else result.reason
            if reason not in ("limit", "quiescent") or _crossed(sim) is not None:
                conn.send(("declined", f"part {partition.describe()} ended {reason!r} after its workload"))
                return
            sim.idle_until(end_ps)
        conn.send(("figures", _part_figures(sim), sim.ticks, sim.transfers))
    except BaseException:  # any failure: the parent runs the whole system, which says it exactly
        try:
            conn.send(("ended", "error", -1, "a part raised:\n" + traceback.format_exc()))
        except OSError:
            pass
    finally:
        conn.close()


def run_partitioned(top: Component, partitions: list[Partition], make_simulator: Callable,
                    limit_ps: int | None = None,
                    on_progress: Callable[[int], None] | None = None) -> PartitionedRun | Declined:
    """Run each partition of ``top`` in a forked process of its own, with the simulator
    ``make_simulator(top, partition)`` builds, up to ``limit_ps`` (inclusive; None: until the
    workload ends), reporting the least time the parts have reached to ``on_progress`` about
    every :data:`PROGRESS_EVERY_S`. Returns the whole run's end and statistics, or :class:`Declined`
    (nothing of ``top`` was changed here: the caller may run it whole)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    progress = context.Array("q", len(partitions), lock=False)
    workers = []
    for partition in partitions:
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_run_part, args=(top, partition, make_simulator, limit_ps, progress,
                                                          child_end), daemon=True)
        process.start()
        child_end.close()
        workers.append((process, parent_end))
    finished = False  # every part reported its figures: the processes end by themselves
    try:
        ended = _await_ends([conn for _, conn in workers], progress, on_progress)
        if isinstance(ended, Declined):
            return ended
        if any(message[1] == "limit" for message in ended):
            reason, end_ps = "limit", max(message[2] for message in ended)
        else:
            reason, end_ps = WORKLOAD_END, max(message[2] for message in ended)
        for _, conn in workers:
            conn.send(("finish", end_ps))
        statistics: dict = {}
        ticks = transfers = 0
        for _, conn in workers:
            message = conn.recv()
            if message[0] != "figures":
                return Declined(message[-1])
            for path, (kind, unit, doc, summary) in message[1].items():
                statistics[path] = Reported(kind, unit, doc, summary)
            ticks += message[2]
            transfers += message[3]
        finished = True
        return PartitionedRun(reason, end_ps, tuple(message[2] for message in ended), ticks, transfers, statistics)
    finally:
        for process, conn in workers:
            conn.close()
            if not finished:  # (a part still running would only finish for nothing)
                process.kill()
            process.join()


def adopt(sim: Simulator, run: PartitionedRun) -> None:
    """Give ``sim`` (the whole system's simulator, not run itself) the end of ``run`` and
    every component the statistics its part reported, so that it reports as if it had run
    the system itself."""
    for comp in sim.components:
        comp.take_reported_stats({stat.name: run.statistics[stat.path] for stat in comp.stats})
    sim.take_run(run.time_ps, run.ticks, run.transfers)
    if run.reason == WORKLOAD_END:
        sim.stop(WORKLOAD_END)


def _await_ends(conns: list, progress: Any, on_progress: Callable[[int], None] | None) -> list | Declined:
    """Every part's "ended" message in the order of ``conns``, showing progress while they
    run; Declined as soon as one part's end cannot be used (the others need not finish)."""
    from multiprocessing.connection import wait

    ended: dict = {}
    while len(ended) < len(conns):
        ready: list[Any] = wait([c for c in conns if id(c) not in ended], timeout=PROGRESS_EVERY_S)
        for conn in ready:
            try:
                message = conn.recv()
            except EOFError:  # the process died without a word (killed from outside)
                return Declined("a part's process ended without reporting")
            if message[3] is not None:
                return Declined(message[3])
            ended[id(conn)] = message
        if on_progress is not None:
            on_progress(min(progress))
    return [ended[id(conn)] for conn in conns]


__all__ = ["CROSSED", "Declined", "Partition", "PartitionEdge", "PartitionedRun", "WORKLOAD_END", "adopt",
           "run_partitioned", "split"]
