"""BookSim 2's measurement of a network under synthetic traffic, with its stability rule."""

from __future__ import annotations

from archmodel.kernel import Registry

STABILITY_RULES: Registry[str] = Registry("stability rule", {
    "latency": "BookSim's: unstable once the running average packet latency passes a threshold at a sample "
               "boundary",
    "drain": "this project's own: unstable when the measured packets have not all arrived drain_limit cycles "
             "after the window",
})
"""How a measurement is judged unstable (a Noc's ``stability`` parameter)."""


class NetworkMeasurement:
    """BookSim's measurement: packets created in ``[start_ps, end_ps)`` are measured and
    tracked until their tails arrive while injection goes on; accepted throughput counts the
    flits that arrive during the window. The run stops when the window has closed and every
    measured packet has arrived.

    With ``sample_cycles`` set (synthetic traffic) it also keeps BookSim's stability check: at
    every sample boundary (each ``sample_cycles`` from cycle 0, through the warm-up, the window
    and the drain; BookSim checks the drain every 1000 cycles, its reference sample period) the
    running average latency is that of the packets delivered in the current statistics and of
    every packet in flight, source queue included, aged to the boundary; past
    ``threshold_cycles`` the point is unstable (under the ``latency`` rule the run stops there).
    The statistics start afresh at the start of every even warm-up period and of the window,
    hold every packet delivered during the warm-up and only measured packets from the window on,
    as BookSim's ``_plat_stats``. A boundary is judged before anything at its edge happens, as
    BookSim judges after the last step before it; events call :meth:`reach` (and the monitor at
    the boundary's edge), so the order in which components tick does not matter.

    Times are in cycles until :meth:`scale` turns them into ps.
    """

    def __init__(self, noc, start_ps: int, end_ps: int, sample_cycles: int | None = None, warmup_periods: int = 0,
                 threshold_cycles: int = 500, rule: str = "drain"):
        self.noc = noc
        self.start_ps, self.end_ps = start_ps, end_ps
        # measured packets not arrived yet; packets created in the window and outside it
        self.outstanding = self.measured = self.unmeasured = 0
        self.accepted_flits = self.offered_flits = 0
        self.sample_cycles, self.warmup_periods = sample_cycles, warmup_periods
        self.threshold_cycles, self.rule = threshold_cycles, rule
        # packets created and not delivered, and the sum of their creation times
        self.flight = self.flight_created_ps = 0
        # the latencies (ps) and count of the packets delivered in the current statistics
        self.done_ps = self.done = 0
        self.next_check_ps = None  # the next sample boundary
        self.exceeded_ps = None  # the first boundary whose running average passed the threshold
        self.latency_unstable = False  # the latency rule ended the run
        self.period = 1

    def scale(self, phase: int, period: int) -> None:
        """Turn the window (and the sample period) from cycles into ps on a clock of ``period``
        ps with its first edge at ``phase``."""
        self.start_ps = phase + self.start_ps * period
        self.end_ps = phase + self.end_ps * period
        self.phase, self.period = phase, period
        if self.sample_cycles is not None:
            self.next_check_ps = phase + self.sample_cycles * period

    def created(self, packet) -> None:
        """An interface created ``packet`` (measured or not)."""
        self.reach(packet.created_ps)
        self.flight += 1
        self.flight_created_ps += packet.created_ps
        if packet.measured:
            self.outstanding += 1
            self.measured += 1
            self.offered_flits += packet.size
        else:
            self.unmeasured += 1

    def delivered(self, packet, now: int, period: int) -> None:
        """``packet``'s tail arrived at ``now``."""
        self.reach(now)
        self.flight -= 1
        self.flight_created_ps -= packet.created_ps
        if packet.measured or now < self.start_ps:
            self.done_ps += now - packet.created_ps
            self.done += 1
        if not packet.measured:
            return
        noc = self.noc
        noc.packet_latency.samples.append((now - packet.created_ps) // period)
        noc.network_latency.samples.append((now - packet.injected_ps) // period)
        self.outstanding -= 1
        if self.outstanding == 0 and now >= self.end_ps and noc.stop_when_measured and not self.latency_unstable:
            # The last measured packet arrived in time even when the monitor, ticking earlier
            # in this edge, judged the drain limit passed: the run ends measured either way.
            noc.monitor.unstable = False
            noc.sim.stop("measured")

    def running_latency(self, now: int) -> float | None:
        """The running average latency (cycles) at ``now`` of the packets delivered in the
        current statistics and of those in flight, or None with neither."""
        n = self.done + self.flight
        if n == 0:
            return None
        return (self.done_ps + self.flight * now - self.flight_created_ps) / (n * self.period)

    def reach(self, now: int) -> None:
        """Judge every sample boundary up to ``now`` not judged yet, before anything at ``now``
        is recorded."""
        while self.next_check_ps is not None and self.next_check_ps <= now:
            at = self.next_check_ps
            n = self.done + self.flight
            # In integers, as the compiled loop: total latency (ps) over n packets past the threshold.
            if n and self.done_ps + self.flight * at - self.flight_created_ps > self.threshold_cycles * n * self.period:
                if self.exceeded_ps is None:
                    self.exceeded_ps = at
                noc = self.noc
                if self.rule == "latency" and noc.stop_when_measured and not self.latency_unstable:
                    self.latency_unstable = True
                    noc.monitor.unstable = True
                    noc.sim.stop("unstable")
            k = (at - self.phase) // (self.sample_cycles * self.period)
            if (k < self.warmup_periods and k % 2 == 0) or k == self.warmup_periods:
                self.done_ps = self.done = 0
            self.next_check_ps = at + self.sample_cycles * self.period
