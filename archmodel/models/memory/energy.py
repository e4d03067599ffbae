"""DRAM energy from datasheet IDD currents, in the style of DRAMPower (Chandrasekar et al.,
DATE 2012/2013): each command costs the current above the standby current it adds, for as
long as it lasts; the background costs active standby (IDD3N) while any bank is open and
precharge standby (IDD2N) otherwise.

Per device, with tCK in ns, currents in mA and VDD in V (so mA x V x ns = pJ):

- ACT+PRE pair: VDD x (IDD0 x tRC - (IDD3N x tRAS + IDD2N x (tRC - tRAS))) x tCK
- RD burst: VDD x (IDD4R - IDD3N) x tBL x tCK; WR burst: the same with IDD4W
- REF: VDD x (IDD5B - IDD3N) x tRFC x tCK; a per-bank REF costs its share of one bank set
- background: VDD x (IDD3N x active cycles + IDD2N x precharged cycles) x tCK

A rank is ``devices_per_rank`` devices. Leaves out: IDD2P/IDD3P power-down, self refresh,
I/O and termination power, VPP (DDR4 IPP) currents.
"""

from __future__ import annotations

from .timing import DramTiming


class DramEnergy:
    """Energy per command (pJ, whole rank) for one timing preset, and the total of a run."""

    def __init__(self, timing: DramTiming):
        t = timing
        scale = t.vdd * t.tCK_ps / 1000 * t.devices_per_rank
        self.act_pre_pj = scale * (t.idd0 * t.tRC - (t.idd3n * t.tRAS + t.idd2n * (t.tRC - t.tRAS)))
        self.read_pj = scale * (t.idd4r - t.idd3n) * t.tBL
        self.write_pj = scale * (t.idd4w - t.idd3n) * t.tBL
        self.refresh_pj = scale * (t.idd5b - t.idd3n) * t.tRFC
        sets = max(1, t.tREFI // t.tREFIpb)
        self.refresh_pb_pj = scale * (t.idd5b - t.idd3n) * t.tRFCpb / sets
        self.active_pj_per_cycle = scale * t.idd3n
        self.precharged_pj_per_cycle = scale * t.idd2n
        self.ranks = t.ranks

    def breakdown_nj(self, acts: int, reads: int, writes: int, refreshes: int, refreshes_pb: int,
                     active_cycles: int, total_cycles: int) -> dict[str, float]:
        """Energy by component in nJ for the given command counts and cycles."""
        return {
            "act_pre": acts * self.act_pre_pj / 1000,
            "read": reads * self.read_pj / 1000,
            "write": writes * self.write_pj / 1000,
            "refresh": (refreshes * self.refresh_pj * self.ranks + refreshes_pb * self.refresh_pb_pj) / 1000,
            "background": self.background_pj(active_cycles, total_cycles) / 1000,
        }

    def background_pj(self, active_cycles: int, total_cycles: int) -> float:
        """Standby energy in pJ of ``total_cycles`` cycles of which ``active_cycles`` had a bank
        open (counted per rank; the rest of each rank's cycles are precharged standby)."""
        idle = max(0, total_cycles * self.ranks - active_cycles)
        return active_cycles * self.active_pj_per_cycle + idle * self.precharged_pj_per_cycle

    def total_nj(self, controller) -> float:
        """A controller's DRAM energy so far, in nJ. The controller is a
        :class:`~.scheduling_core.DramSchedulingCore` (its public ``active_cycles_so_far`` and
        ``elapsed_cycles``) with the command counters ``acts``, ``rds``, ``wrs``, ``refs`` and
        ``refpbs``."""
        c = controller
        parts = self.breakdown_nj(c.acts.value, c.rds.value, c.wrs.value, c.refs.value, c.refpbs.value,
                                  c.active_cycles_so_far, c.elapsed_cycles)
        return sum(parts.values())
