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

from archmodel.kernel import ParameterError

from .commands import ACT, COMMAND_COUNT, PRE, PREA, RD, REF, REFPB, WR
from .timing import DramTiming

SCOPES = ("bank", "bankgroup", "rank", "other_rank", "window")
_LEVELS = {"bank": 0, "bankgroup": 1, "rank": 2, "other_rank": 3}


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


def refresh_commands(refresh: str) -> tuple[int, ...]:
    """The commands a controller with refresh mode ``refresh`` (all_bank, per_bank, none) never issues."""
    return {"all_bank": (REFPB,), "per_bank": (REF, PREA), "none": (REF, PREA, REFPB)}[refresh]


def next_allowed_updates(t: DramTiming, omit=(), never=()) -> tuple[list, int]:
    """The constraints of ``t`` as next-allowed updates: for each command, the (level, then,
    cycles) triples it sets (level 0 bank, 1 bank group, 2 rank, 3 the other ranks; the
    largest cycles of the rules with the same key), and the four-activate window's cycles (0
    if omitted). Rules named in ``omit`` are left out (a name that is none is an error), and
    so are rules for the commands in ``never``, which need no next-allowed cycles."""
    rules = scheduler_constraints(t)
    known = {c.name for c in rules}
    for name in omit:
        if name not in known:
            raise ParameterError(f"omit_constraints names no constraint '{name}'",
                                 hint="constraints are: " + ", ".join(sorted(known)))
    merged: dict[tuple[int, int, int], int] = {}
    faw = 0
    for c in rules:
        if c.name in omit or c.then in never:
            continue
        if c.scope == "window":
            faw = c.cycles
            continue
        key = (c.first, _LEVELS[c.scope], c.then)
        merged[key] = max(merged.get(key, 0), c.cycles)
    updates: list[list] = [[] for _ in range(COMMAND_COUNT)]
    for (first, level, then), cycles in sorted(merged.items()):
        updates[first].append((level, then, cycles))
    return updates, faw
