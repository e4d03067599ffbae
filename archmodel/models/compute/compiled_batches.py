"""The compiled loop's batches of a Snitch cluster, on the state that :mod:`.compiled_state`
holds in arrays.

:func:`run_compiled` is what the cluster's tick calls: it makes (or takes up) the cluster's
:class:`~.compiled_state.Resident` state, does the DMA port's part of the cycle, finds how far
nothing outside can disturb the cluster (the lookahead horizon, or the loop playing its ideal
memory inside, :mod:`.compiled_cluster_memory`), runs the loop to there and sleeps until the
batch's end (or stays awake when that is the next cycle). A batch ends at the latest where the
DMA waits to send a burst (:func:`_send_stop`), and one that ends at the next cycle asks the
lookahead nothing: a cluster whose DMA finds its port without a credit while its cores compute
runs a cycle per tick at the cost of the loop's call and the port's look. When nothing but a
response or the port taking its next burst can change what the cluster does
(:func:`waits_only_for_the_port`), it sleeps until the kernel wakes it for one or its own next
event comes, and runs the cycles slept through in one batch on waking. A read burst waiting
for the port stops no batch at all: the cores run to the horizon and the burst goes at the
edge its credit returns (:func:`send_lagging_reads`). :func:`release` copies the state back
into the Python objects.
"""

from __future__ import annotations

import zlib

from archmodel.kernel import ModelAssertion

from .compiled_cluster_memory import OFF as MEMORY_OUTSIDE
from .compiled_cluster_memory import InnerMemory
from .compiled_layout import (C_AT_BAR, C_N_FPU, D_CUR, D_INBOUND, D_N_DONE, D_N_IN, D_NB, D_OUTSTANDING, D_PENDING,
                              D_QLEN, D_RB_COUNT, D_RB_HEAD, D_SEND_FROM, D_SUBMITTED, D_WIF, R_LEFT, EXIT_REASONS,
                              G_EXIT, G_FINISHED, G_N_HALTED, G_WAIT_ON_DMA)
from .compiled_dma_state import NEVER_SEND
from .compiled_state import Resident


def dma_waits_on_responses(cluster) -> bool:
    """Whether, as the compiled loop holds the cluster's state, its DMA engine has sent every
    burst it can of its transfer and waits for responses: it sends nothing more on
    ``ext_req`` before one of them arrives (the next transfer starts once this one is done,
    and this one's next read burst needs an outstanding slot back), whatever the cores do.
    The state held is that of the batch's end: the loop sends nothing before it."""
    resident = cluster.resident
    if resident is None:
        return False
    dm = resident.dm_ints
    if not dm[D_CUR]:
        return False
    if dm[D_INBOUND]:
        return dm[D_PENDING] > 0 and (dm[D_NB] == 0 or dm[D_PENDING] >= dm[D_OUTSTANDING])
    return dm[D_NB] == 0 and dm[D_RB_COUNT] == 0 and dm[D_WIF] > 0


def _dma_blocked(cluster) -> bool:
    """Whether the DMA's next move outside is a burst to send on ``ext_req``, which found the
    port not ready (so a returning credit, or the link freeing, wakes the cluster) and is
    not ready still."""
    dm = cluster.resident.dm_ints
    channel = cluster.ext_req.channel
    if not dm[D_CUR] or channel is None or not channel.blocked:
        return False
    if channel.credits > 0 and channel.busy_until <= cluster.sim.now:
        return False
    if dm[D_INBOUND]:
        return dm[D_NB] > 0 and dm[D_PENDING] < dm[D_OUTSTANDING]
    return dm[D_RB_COUNT] > 0


def waits_only_for_the_port(cluster) -> bool:
    """Whether the cluster, as the compiled loop holds it at its batch's end, can do nothing
    seen outside it, nor anything the loop leaves to Python, before a response arrives on
    ``ext_rsp`` or ``ext_req`` can take its next burst: its DMA waits for responses
    (:func:`dma_waits_on_responses`) or for the port (:func:`_dma_blocked`), no transfer
    submitted in the batch is still to hand over, every core still running is at the
    barrier or spins on the DMA, and one spins, so the barrier cannot open (the loop says so
    at the batch's end: ``G_WAIT_ON_DMA``). The loop's cycles until then are its own (stall
    counters, the DMA's busy cycles and lanes, the spinning core's instructions): the cluster
    may sleep until the kernel wakes it (a message, a credit, the link freeing) or its own
    next event comes, and run them in one batch when it wakes (:func:`run_compiled`)."""
    resident = cluster.resident
    if resident is None:
        return False
    dm = resident.dm_ints
    if dm[D_SUBMITTED] or not dm[D_CUR] or not resident.g_ints[G_WAIT_ON_DMA]:
        return False  # (with no transfer running the DMA waits for nothing)
    return dma_waits_on_responses(cluster) or _dma_blocked(cluster)


def _catch_up(cluster, resident, cycle: int) -> None:
    """Run the cycles a cluster slept through waiting on its port (see
    :func:`waits_only_for_the_port`), up to ``cycle``, in one batch: nothing arrived in them
    and the port stayed as it was, so the DMA port's part of each is the loop's own (a burst
    waiting to go stays waiting)."""
    start = resident.next_cycle
    resident.dm[D_SEND_FROM] = NEVER_SEND  # (while the cluster slept the port did not change)
    ran = resident.run(start, cycle)
    resident.dm[D_SEND_FROM] = 0  # (the port's part of the next cycle looks again)
    if ran != cycle - start:
        raise ModelAssertion(f"{cluster.path}: slept from cycle {start} waiting on its port, but the loop "
                             f"stopped at cycle {start + ran} before {cycle} ({EXIT_REASONS[resident.g[G_EXIT]]})")
    resident.parked = False
    resident.next_cycle = cycle
    cluster.n_compiled_cycles += ran
    cluster.n_parked_cycles += ran


def _count_exit(cluster, reason: str) -> None:
    cluster.compiled_exits[reason] = cluster.compiled_exits.get(reason, 0) + 1


def release(cluster) -> None:
    """Copy a cluster's state held in arrays back into its Python objects (see the module
    docstring); nothing to do when none is held. A cluster asleep waiting for a response
    first runs the cycles up to the current edge, and ticks at the next one (or, parked at
    the end of a batch that ran past now, at that end, where its state is)."""
    resident = cluster.resident
    if resident is not None and resident.parked:
        domain = cluster.domain
        cycle = domain.cycle_of(cluster.sim.now) + 1
        if cycle > resident.next_cycle:
            _catch_up(cluster, resident, cycle)
        else:
            # (it parked at the end of a batch that ran past this edge, and a run stopped from
            # outside before then: the state handed back is that end's, so it ticks there)
            cycle = resident.next_cycle
        resident.parked = False
        cluster.sleeps_until = cycle
        cluster.wake_at(domain.phase_ps + cycle * domain.period_ps)
    if resident is not None:
        cluster.resident = None
        if resident.sends_lag and resident.next_cycle > cluster.domain.cycle_of(cluster.sim.now) + 1:
            # (a run stopped from outside inside a batch whose reads lag: the next edges
            # before the batch's end are for those alone)
            cluster.lagging_until = resident.next_cycle
        resident.store()


def send_lagging_reads(cluster, resident, cycle: int, served: bool) -> None:
    """The DMA port's part of ``cycle`` for a cluster whose cores' arrays are already at a
    later cycle, its DMA's read bursts lagging (``Resident.sends_lag``, see
    :meth:`~.compiled_dma_state.ResidentDma._blocked`): at this edge ``SnitchDma.step`` would take
    no response (none can come before the arrays' cycle) and send the next read burst if
    the port is ready, nothing else it does depending on that. The cluster stays awake for
    the next edge while the port might take another, else sleeps until the arrays' cycle
    (or, parked, until woken); a returning credit wakes it sooner. ``resident`` is None
    after a run stopped inside such a batch: the state is loaded again, as it was."""
    if resident is None:
        resident = cluster.resident = Resident(cluster)
        resident.next_cycle, resident.sends_lag = cluster.lagging_until, True
        cluster.lagging_until = 0
    rsp = cluster.ext_rsp
    if served or rsp.valid:
        raise ModelAssertion(f"{cluster.path}: a message came in at cycle {cycle}, before the lookahead "
                             f"horizon at cycle {resident.next_cycle} its cores ran to")
    dm = resident.dm_ints
    req = cluster.ext_req
    if dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING] and req.ready:
        kept = cluster.horizon
        holds = kept.holds_through(cluster, cluster.sim.now)
        resident.send_read(req)
        if holds:  # (its answer comes after the outstanding ones: the horizon kept still holds)
            kept.keep(cluster, kept.until_ps)
        cluster.n_lagging_sends += 1
        cluster.lookahead.reset()  # (as after any send: the memory's answer moved)
        if dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING]:
            return  # awake at the next edge: the port may take the next burst there
    if resident.next_cycle == cycle + 1:
        return
    cluster.sleep()
    if not resident.parked:
        domain = cluster.domain
        cluster.wake_at(domain.phase_ps + resident.next_cycle * domain.period_ps)


def progress_signature(cluster, resident) -> tuple:
    """``SnitchCluster.progress_signature`` of the state ``resident`` holds in arrays, read
    from them (the objects are behind): a progress report needs no copy back. The cores
    the arrays leave out finished before they were loaded; their objects hold their state."""
    dm, cs = resident.dm, resident.cs
    row_of = {id(core): c for c, core in enumerate(resident.running)}
    fpu_done, xs, fs = cs[:, C_N_FPU].tolist(), resident.x.tolist(), resident.f.tolist()
    fpu, x_rows, f_rows = 0, [], []
    for core in cluster.core_list:
        c = row_of.get(id(core))
        if c is None:
            fpu += core.n_fpu
            x_rows.append(tuple(core.x))
            f_rows.append(tuple(core.f))
        else:
            fpu += fpu_done[c]
            x_rows.append(tuple(xs[c]))
            f_rows.append(tuple(fs[c]))
    port = cluster.tcdm_port
    moved_in, moved_out, done = dm[D_N_IN:D_N_DONE + 1].tolist()
    return (fpu, moved_in + moved_out + done, int(dm[D_WIF]), port.n_read + port.n_written + port.n_requests,
            int(resident.g[G_N_HALTED]), int(cs[:, C_AT_BAR].sum()), zlib.crc32(cluster.tcdm.data),
            tuple(x_rows), tuple(f_rows))


SHORT_HORIZON = 8
"""Cycles below which a horizon counts as short: asking again soon would cost more than the
cycles it can give (a lookahead question walks the system's wiring)."""


def _run_end(cluster) -> int:
    """The cycle before which every batch of ``cluster`` stops for the run itself: its
    limit and the watchdog's deadline, so the objects show the state of those edges."""
    sim, domain = cluster.sim, cluster.domain
    phase, period = domain.phase_ps, domain.period_ps
    run_end = (sim.watchdog_deadline_ps - phase) // period + 1
    limit = sim.limit_ps
    if limit is not None and (limit - phase) // period + 1 < run_end:
        run_end = (limit - phase) // period + 1
    return run_end


def _hard_end(cluster) -> int:
    """The cycle before which every batch of ``cluster`` stops: :func:`_run_end`, and the
    next progress report (``check_at``), which runs a batch of its own cycle alone and
    reports at that edge, as the Python model does at the end of its step."""
    run_end = _run_end(cluster)
    return cluster.check_at if cluster.check_at < run_end else run_end


def _undisturbed_end(cluster, cycle: int, end: int, hard_end: int) -> int:
    """The end of a batch from ``cycle`` that nothing outside can disturb, at most ``end``
    (``hard_end``: :func:`_hard_end`, which the caller has worked out).
    A batch of one cycle needs no question (what arrives at this cycle has arrived), so after
    short horizons the cluster runs one-cycle batches for a while before it asks again
    (``cluster.lookahead``, a QuestionBackoff): in a busy system, where every horizon is a
    cycle or two away, asking each time would cost more than the loop saves. A question
    looks as far as the run's own bounds (:func:`_hard_end`), and its answer is kept
    (``cluster.horizon``, a KeptHorizon): a later batch that ends before it (at the port's
    take bound, while the DMA waits for it) asks nothing."""
    sim, domain = cluster.sim, cluster.domain
    held = sim.arrival_in_flight_ps(cluster)
    if held is not None:  # (a response on its way on every input: the horizon is known, no question)
        return max(cycle + 1, min(end, domain.cycle_of(held - 1) + 1))
    phase, period = domain.phase_ps, domain.period_ps
    if cluster.horizon.holds_through(cluster, phase + end * period):
        return end
    if not cluster.lookahead.should_ask():
        return cycle + 1
    limit = phase + hard_end * period
    until = sim.undisturbed_until_ps(cluster, limit)
    cluster.horizon.keep(cluster, limit if until is None else until)
    if until is not None and until >= phase + end * period:
        until = None
    if until is None:
        # (the answer leaves the batch all of ``end``, which the DMA's next burst or the run's
        # own bounds may set close: not a short answer)
        cluster.lookahead.answered(True)
        return end
    horizon = max(cycle + 1, min(end, domain.cycle_of(until - 1) + 1))
    cluster.lookahead.answered(horizon == end or horizon - cycle >= SHORT_HORIZON)
    return horizon


def _inner_memory(cluster) -> InnerMemory | None:
    """The memory the cluster's loop may play (see compiled_cluster_memory), found once a
    simulation."""
    found = cluster.inner_memory_found
    if found is None or found[0] is not cluster.sim:
        found = cluster.inner_memory_found = (cluster.sim, InnerMemory.wired(cluster))
    return found[1]


def _send_stop(dm, rb, cycle: int) -> int:
    """The cycle at which a batch from ``cycle``, the DMA port's part of which Python has
    done, stops at the latest for the DMA (``_dma_would_exit``): a burst it waits to send on
    ``ext_req`` stays waiting in the loop (only Python sends, and while one waits the
    transfer cannot finish), so the batch stops for it at the next cycle, or at the first
    one the port can take it (``D_SEND_FROM``); NEVER_SEND when no burst waits, or a read
    burst lags (:meth:`~.compiled_dma_state.ResidentDma._blocked`). A batch
    ending there needs no horizon past it, and one ending at the next cycle no question."""
    if not dm[D_CUR]:
        return cycle + 1 if dm[D_QLEN] else NEVER_SEND
    if dm[D_INBOUND]:
        if not (dm[D_NB] and dm[D_PENDING] < dm[D_OUTSTANDING]):
            return NEVER_SEND
    elif not (dm[D_RB_COUNT] and rb[dm[D_RB_HEAD], R_LEFT] == 0):
        return NEVER_SEND
    send_from = dm[D_SEND_FROM]
    return send_from if send_from > cycle + 1 else cycle + 1


def run_compiled(cluster, cycle: int, served: bool = False) -> bool:
    """Run the cluster from ``cycle`` in the compiled loop as far as it can go; True when at
    least one cycle ran (the cluster then sleeps until its next cycle, or stays awake when
    that is the next one), False when the Python model must step ``cycle`` (its objects are
    then up to date). ``served``: the TCDM slave port has work at ``cycle``, which the loop
    leaves to Python; while the port is connected a batch ends before anything can reach it
    (the lookahead horizon).

    Whether the cores can run ``cycle`` in the loop is asked (a call of the loop that only
    checks) before the DMA port's part of the cycle moves a message or starts a transfer
    (:meth:`~.compiled_dma_state.ResidentDma.port_step`), which the Python model stepping the cycle
    would do again. When that part moves nothing (the port not ready, nothing to do) the
    batch runs without that call: if the cores cannot run ``cycle`` it runs none, and the
    Python model steps the cycle, finding the port as it was found here."""
    resident = cluster.resident
    stale = False
    if cluster.park_wakes and cycle in cluster.park_wakes:
        cluster.park_wakes.discard(cycle)
        stale = True
    # reads lag while the arrays are ahead of this edge (or, handed back by a run stopped
    # inside such a batch, until the cycle that batch reached)
    lagging = (resident.sends_lag and resident.next_cycle > cycle) if resident is not None \
        else cycle < cluster.lagging_until
    if lagging:
        # (whatever woke it: the returning credit or a stale wake-up, which finds the port as it was)
        send_lagging_reads(cluster, resident, cycle, served)
        return True
    if stale:
        if cycle < cluster.sleeps_until and not served and (resident is None or not resident.parked):
            # the wake-up asked when it slept waiting for a response, which came earlier:
            # the cluster has since gone to sleep until a later cycle of its own
            cluster.sleep()
            return True
    if resident is not None:
        if resident.parked:
            if resident.next_cycle < cycle:
                _catch_up(cluster, resident, cycle)  # a response came, or its own next event
            resident.parked = False
        resident.sends_lag = False  # (the arrays are at this edge: the port's part looks again)
        if resident.next_cycle != cycle:
            raise ModelAssertion(f"{cluster.path}: woken at cycle {cycle} while its compiled state is at cycle "
                                 f"{resident.next_cycle}")
    # (the edges above, which send lagging reads or go back to sleep, need none of this)
    sim = cluster.sim
    domain = cluster.domain
    phase, period = domain.phase_ps, domain.period_ps
    run_end = _run_end(cluster)
    hard_end = cluster.check_at if cluster.check_at < run_end else run_end
    # the progress report's cycle runs alone in the loop, the report reading the arrays
    reports = cycle == cluster.check_at and cycle + 1 <= run_end
    if (cycle >= hard_end and not reports) or cluster.python_cycle == cycle or served:
        release(cluster)
        return False
    if resident is None:
        if not cluster.running:
            return False
        resident = Resident(cluster)
    found = cluster.inner_memory_found
    inner = found[1] if found is not None and found[0] is sim else _inner_memory(cluster)
    if inner is not None:
        # (the memory goes inside only when the cores can run the cycle)
        if not resident.can_run(cycle):
            _count_exit(cluster, EXIT_REASONS[resident.g[G_EXIT]])
            cluster.resident = resident
            release(cluster)  # (a state held from earlier batches is behind in the objects)
            return False
        inside = inner.take_in()
        if inside:
            cluster.horizon.forget()  # (the memory the question asked about is played inside)
            resident.memory = inner.arrays
            cluster.n_memory_inside_batches += 1
        moved = resident.port_step(inside)
    else:
        inside = False
        moved = resident.port_step(False, cycle)
        if moved is None:  # the cores cannot run the cycle: nothing moved, the Python model steps it
            _count_exit(cluster, EXIT_REASONS[resident.g[G_EXIT]])
            cluster.resident = resident
            release(cluster)
            return False
    if moved:
        # a request went out or a response came in: the memory's answer moved, so the
        # short answers before say nothing about the next one
        cluster.lookahead.reset()
    dm = resident.dm_ints
    end = cycle + 1 if reports else hard_end
    stop = NEVER_SEND
    if not inside:
        stop = _send_stop(dm, resident.rb, cycle)
        if stop < end:
            end = stop
        if end > cycle + 1 and (dm[D_PENDING] or dm[D_WIF] or cluster.tcdm_req.channel is not None):
            # a burst may come back, or a request come in: stop before anything outside can
            # reach the cluster. (Only an answer comes on ext_rsp, one to each burst sent: with
            # none outstanding nothing comes before the DMA sends again, which ends the batch.
            # With 16 clusters on 4 DRAM channels one question in six was asked so.)
            end = _undisturbed_end(cluster, cycle, end, hard_end)
    ran = resident.run(cycle, end, port_done=not inside)
    if inside:
        inner.hand_back(cycle + ran)
        resident.memory = MEMORY_OUTSIDE
        if ran == 0:  # (cannot happen: the rings were empty at the first cycle) Python steps it
            cluster.resident = resident
            release(cluster)
            return False
    g = resident.g_ints
    if ran == 0:
        # (unchecked: the port's part of the cycle moved nothing) a core needs Python at
        # ``cycle``: the Python model steps it, its DMA port's part as found here
        _count_exit(cluster, EXIT_REASONS[g[G_EXIT]])
        cluster.resident = resident
        release(cluster)
        return False
    reason = EXIT_REASONS[g[G_EXIT]] if cycle + ran < end else ("dma" if end == stop else "end")
    exits = cluster.compiled_exits
    exits[reason] = exits.get(reason, 0) + 1
    cluster.n_compiled_cycles += ran  # tests check the path is taken
    cluster.n_compiled_batches += 1
    resident.next_cycle = cycle + ran
    cluster.resident = resident
    if g[G_FINISHED]:
        release(cluster)
        if ran == 1:
            if not cluster.finish_if_idle(cycle) and reports:  # (as the Python model's tick goes on)
                cluster.report_progress(cycle, cluster.progress_signature())
        else:
            cluster.sleeps_until = cycle + ran - 1
            cluster.sleep_for(ran - 1)  # the tick at the last cycle finds every core finished
        return True
    if reports:
        cluster.report_progress(cycle, progress_signature(cluster, resident))
        hard_end = _hard_end(cluster)
    if reason in ("fp", "integer"):
        cluster.python_cycle = cycle + ran
        if not resident.sends_lag:  # (else at that cycle's tick, after the sends before it)
            release(cluster)
    elif cycle + ran >= run_end:
        if not resident.sends_lag:
            release(cluster)
    elif not inside and g[G_WAIT_ON_DMA] and waits_only_for_the_port(cluster):
        # Nothing but a response or the port taking its burst (or its own next event: the
        # run's limit, a progress report, the watchdog) can change what it does: sleep until
        # one, not a batch at a time.
        resident.parked = True
        cluster.n_parked_batches += 1
        # (for upkeep: should a response wake it first, this wake-up, left behind, must not
        # keep a run going that would otherwise end quiescent)
        cluster.park_wakes.add(hard_end)
        cluster.sleeps_until = hard_end
        cluster.sleep()
        cluster.wake_for_upkeep_at(phase + hard_end * period)
        return True
    cluster.sleeps_until = cycle + ran
    if ran > 1:
        cluster.sleep_for(ran)
    # (else the next tick is the next cycle: the cluster stays awake for it)
    return True
