"""The scheduler's timing constraints: named rules ``first -> then >= cycles`` at a scope,
compiled into "next allowed cycle" updates (Ramulator's approach).

Each :class:`Constraint` says: after command ``first`` on a bank, command ``then`` may not
issue on the same ``scope`` (``bank``, ``bankgroup``, ``rank``, or ``other_rank``: any other
rank of the channel) before ``cycles`` have passed. The four-activate window is not a pair
rule and has its own entry, named ``tFAW`` with ``first = then = ACT`` and scope
``window``. The set is injectable (``DramController(omit_constraints=...)``) so a test can
drop one and watch the independent checker catch the violation.
"""

from __future__ import annotations

import attrs

from .commands import ACT, PRE, PREA, RD, REF, REFPB, WR
from .timing import DramTiming

SCOPES = ("bank", "bankgroup", "rank", "other_rank", "window")


@attrs.frozen
class Constraint:
    """``then`` may follow ``first`` on the same ``scope`` only ``cycles`` later."""

    name: str
    first: int
    then: int
    scope: str
    cycles: int


def scheduler_constraints(t: DramTiming) -> list[Constraint]:
    """Every constraint the reference controller obeys, named after the JEDEC parameter that
    sets it (derived ones say what they add up)."""
    rules = [
        ("tRCD", ACT, RD, "bank", t.tRCD),
        ("tRCDWR", ACT, WR, "bank", t.tRCDWR),
        ("tRAS", ACT, PRE, "bank", t.tRAS),
        ("tRC", ACT, ACT, "bank", t.tRC),
        ("tRRD_L", ACT, ACT, "bankgroup", t.tRRD_L),
        ("tRRD_S", ACT, ACT, "rank", t.tRRD_S),
        ("tFAW", ACT, ACT, "window", t.tFAW),
        ("tRP", PRE, ACT, "bank", t.tRP),
        ("tRP(PREA)", PREA, ACT, "bank", t.tRP),
        ("tRP(REF)", PRE, REF, "rank", t.tRP),
        ("tRP(PREA-REF)", PREA, REF, "rank", t.tRP),
        ("tRP(REFpb)", PRE, REFPB, "bank", t.tRP),
        ("tRFC", REF, ACT, "bank", t.tRFC),
        ("tRFC(REF)", REF, REF, "rank", t.tRFC),
        ("tRFCpb", REFPB, ACT, "bank", t.tRFCpb),
        ("tRFCpb(REFpb)", REFPB, REFPB, "bank", t.tRFCpb),
        ("tRRD(REFpb)", REFPB, ACT, "rank", t.tRRD_S),
        ("tRRD(ACT-REFpb)", ACT, REFPB, "rank", t.tRRD_S),
        ("tCCD_L", RD, RD, "bankgroup", t.tCCD_L),
        ("tCCD_S", RD, RD, "rank", t.tCCD_S),
        ("tCCD_L(WR)", WR, WR, "bankgroup", t.tCCD_L),
        ("tCCD_S(WR)", WR, WR, "rank", t.tCCD_S),
        ("tRTW", RD, WR, "rank", t.read_to_write),
        ("tWTR_L", WR, RD, "bankgroup", t.write_to_read_l),
        ("tWTR_S", WR, RD, "rank", t.write_to_read_s),
        ("tRTP", RD, PRE, "bank", t.tRTP),
        ("tRTP(PREA)", RD, PREA, "rank", t.tRTP),
        ("tWR", WR, PRE, "bank", t.write_to_precharge),
        ("tWR(PREA)", WR, PREA, "rank", t.write_to_precharge),
        ("tRAS(PREA)", ACT, PREA, "rank", t.tRAS),
    ]
    if t.ranks > 1:
        rules += [
            ("tRTRS(RD)", RD, RD, "other_rank", t.tBL + t.tRTRS),
            ("tRTRS(WR)", WR, WR, "other_rank", t.tBL + t.tRTRS),
            ("tRTRS(RD-WR)", RD, WR, "other_rank", t.CL + t.tBL + t.tRTRS - t.CWL),
            ("tRTRS(WR-RD)", WR, RD, "other_rank", t.CWL + t.tBL + t.tRTRS - t.CL),
        ]
    return [Constraint(*rule) for rule in rules]
