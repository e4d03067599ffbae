"""The compiled loop's batches of a Snitch cluster, on the state that :mod:`.compiled_state`
holds in arrays.

:func:`run_compiled` is what the cluster's tick calls: it makes (or takes up) the cluster's
:class:`~.compiled_state.Resident` state, does the DMA port's part of the cycle, finds how far
nothing outside can disturb the cluster (the lookahead horizon, or the loop playing its ideal
memory inside, :mod:`.compiled_cluster_memory`), runs the loop to there and sleeps until the
batch's end. :func:`release` copies the state back into the Python objects.
"""

from __future__ import annotations

from archmodel.kernel import ModelAssertion

from .compiled_cluster_memory import OFF as MEMORY_OUTSIDE
from .compiled_cluster_memory import InnerMemory
from .compiled_layout import (D_CUR, D_INBOUND, D_NB, D_OUTSTANDING, D_PENDING, D_QLEN, D_RB_COUNT, D_WIF,
                              EXIT_REASONS, G_EXIT, G_FINISHED)
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
    dm = resident.dm
    if not dm[D_CUR]:
        return False
    if dm[D_INBOUND]:
        return dm[D_PENDING] > 0 and (dm[D_NB] == 0 or dm[D_PENDING] >= dm[D_OUTSTANDING])
    return dm[D_NB] == 0 and dm[D_RB_COUNT] == 0 and dm[D_WIF] > 0


def _count_exit(cluster, reason: str) -> None:
    cluster.compiled_exits[reason] = cluster.compiled_exits.get(reason, 0) + 1


def release(cluster) -> None:
    """Copy a cluster's state held in arrays back into its Python objects (see the module
    docstring); nothing to do when none is held."""
    resident = cluster.resident
    if resident is not None:
        cluster.resident = None
        resident.store()


SHORT_HORIZON = 8
"""Cycles below which a horizon counts as short: asking again soon would cost more than the
cycles it can give (a lookahead question walks the system's wiring)."""


def _undisturbed_end(cluster, cycle: int, end: int) -> int:
    """The end of a batch from ``cycle`` that nothing outside can disturb, at most ``end``.
    A batch of one cycle needs no question (what arrives at this cycle has arrived), so after
    short horizons the cluster runs one-cycle batches for a while before it asks again
    (``cluster.lookahead``, a QuestionBackoff): in a busy system, where every horizon is a
    cycle or two away, asking each time would cost more than the loop saves."""
    sim, domain = cluster.sim, cluster.domain
    held = sim.arrival_in_flight_ps(cluster)
    if held is not None:  # (a response on its way on every input: the horizon is known, no question)
        return max(cycle + 1, min(end, domain.cycle_of(held - 1) + 1))
    if not cluster.lookahead.should_ask():
        return cycle + 1
    until = sim.undisturbed_until_ps(cluster, domain.phase_ps + end * domain.period_ps)
    if until is not None:
        end = max(cycle + 1, min(end, domain.cycle_of(until - 1) + 1))
    cluster.lookahead.answered(end - cycle >= SHORT_HORIZON)
    return end


def _inner_memory(cluster) -> InnerMemory | None:
    """The memory the cluster's loop may play (see compiled_cluster_memory), found once a
    simulation."""
    found = cluster.__dict__.get("_compiled_memory")
    if found is None or found[0] is not cluster.sim:
        found = cluster._compiled_memory = (cluster.sim, InnerMemory.wired(cluster))
    return found[1]


def run_compiled(cluster, cycle: int, served: bool = False) -> bool:
    """Run the cluster from ``cycle`` in the compiled loop as far as it can go; True when at
    least one cycle ran (the cluster then sleeps until its next cycle), False when the
    Python model must step ``cycle`` (its objects are then up to date). ``served``: the TCDM
    slave port has work at ``cycle``, which the loop leaves to Python; while the port is
    connected a batch ends before anything can reach it (the lookahead horizon)."""
    sim = cluster.sim
    domain = cluster.domain
    # A batch stops before the run's limit, the next progress report and the watchdog's
    # deadline, so the objects show the state of those edges.
    hard_end = min(cluster.check_at, domain.cycle_of(sim.watchdog_deadline_ps) + 1)
    if sim.limit_ps is not None:
        hard_end = min(hard_end, domain.cycle_of(sim.limit_ps) + 1)
    resident = cluster.resident
    if resident is not None and resident.next_cycle != cycle:
        raise ModelAssertion(f"{cluster.path}: woken at cycle {cycle} while its compiled state is at cycle "
                             f"{resident.next_cycle}")
    if cycle >= hard_end or cluster.python_cycle == cycle or served:
        release(cluster)
        return False
    if resident is None:
        if not cluster.running:
            return False
        resident = Resident(cluster)
    if not resident.run(cycle, cycle + 1, check_only=True):
        _count_exit(cluster, EXIT_REASONS[resident.g[G_EXIT]])
        cluster.resident = resident
        release(cluster)  # (a state held from earlier batches is behind in the objects)
        return False
    inner = _inner_memory(cluster)
    inside = inner is not None and inner.take_in()
    if inside:
        resident.memory = inner.arrays
        cluster.n_memory_inside_batches += 1
    req, rsp = cluster.ext_req.channel, cluster.ext_rsp.channel
    moved = (req.sent if req is not None else 0) + (rsp.received if rsp is not None else 0)
    resident.port_step(inside)
    if (req.sent if req is not None else 0) + (rsp.received if rsp is not None else 0) != moved:
        # a request went out or a response came in: the memory's answer moved, so the
        # short answers before say nothing about the next one
        cluster.lookahead.reset()
    end = hard_end
    if not inside and (resident.dm[D_CUR] or resident.dm[D_QLEN] or cluster.tcdm_req.channel is not None):
        # a burst may come back, or a request come in: stop before anything outside can reach the cluster
        end = _undisturbed_end(cluster, cycle, end)
    ran = resident.run(cycle, end, port_done=not inside)
    if inside:
        inner.hand_back(cycle + ran)
        resident.memory = MEMORY_OUTSIDE
        if ran == 0:  # (cannot happen: the rings were empty at the first cycle) Python steps it
            cluster.resident = resident
            release(cluster)
            return False
    g = resident.g
    reason = EXIT_REASONS[g[G_EXIT]] if cycle + ran < end else "end"
    _count_exit(cluster, reason)
    cluster.n_compiled_cycles += ran  # tests check the path is taken
    cluster.n_compiled_batches += 1
    resident.next_cycle = cycle + ran
    cluster.resident = resident
    if g[G_FINISHED]:
        release(cluster)
        if ran == 1:
            cluster.finish_if_idle(cycle)
        else:
            cluster.sleep_for(ran - 1)  # the tick at the last cycle finds every core finished
        return True
    if reason in ("fp", "integer"):
        cluster.python_cycle = cycle + ran
        release(cluster)
    elif cycle + ran >= hard_end:
        release(cluster)
    cluster.sleep_for(ran)
    return True
