"""An independent JEDEC timing checker: watches the command bus and checks every command
against every constraint, so a scheduler bug cannot hide.

It shares nothing with the controller's scheduler but the timing preset: its rules are
written here from the JEDEC definitions as "at least N cycles since the last X on the same
bank / bank group / rank", checked against a history of issued commands (the scheduler
instead propagates next-allowed cycles forward), plus the four-activate window, the bank
protocol (no RD to a closed bank, no ACT to an open one, no REF with a row open) and the
refresh interval (at most 9 x tREFI between refreshes of a rank, JEDEC's postponement limit).
"""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Counter, In, Param, model

from .bank import BankProtocol
from .commands import COMMAND_NAMES
from .timing import PRESETS, DramTiming, dram_clock, preset


def jedec_rules(t: DramTiming) -> list[tuple[str, str, str, str, int]]:
    """(constraint, earlier command, later command, scope, minimum cycles) for preset t.

    Scopes: ``bank`` (the same bank; a rank-wide command counts on every bank of its rank),
    ``bankgroup``, ``rank``, ``other_rank``.
    """
    rules = [
        ("tRCD", "ACT", "RD", "bank", t.tRCD),
        ("tRCDWR", "ACT", "WR", "bank", t.tRCDWR),
        ("tRAS", "ACT", "PRE", "bank", t.tRAS),
        ("tRAS", "ACT", "PREA", "bank", t.tRAS),
        ("tRC", "ACT", "ACT", "bank", t.tRC),
        ("tRP", "PRE", "ACT", "bank", t.tRP),
        ("tRP", "PREA", "ACT", "bank", t.tRP),
        ("tRP", "PRE", "REF", "bank", t.tRP),
        ("tRP", "PREA", "REF", "bank", t.tRP),
        ("tRP", "PRE", "REFpb", "bank", t.tRP),
        ("tRRD_S", "ACT", "ACT", "rank", t.tRRD_S),
        ("tRRD_L", "ACT", "ACT", "bankgroup", t.tRRD_L),
        ("tCCD_S", "RD", "RD", "rank", t.tCCD_S),
        ("tCCD_L", "RD", "RD", "bankgroup", t.tCCD_L),
        ("tCCD_S", "WR", "WR", "rank", t.tCCD_S),
        ("tCCD_L", "WR", "WR", "bankgroup", t.tCCD_L),
        # Read to write: the read burst must leave the bus, plus turnaround and preamble.
        ("tRTW", "RD", "WR", "rank", t.CL + t.tBL + 2 - t.CWL),
        # Write to read: the write burst ends CWL + tBL after WR, then tWTR.
        ("tWTR_S", "WR", "RD", "rank", t.CWL + t.tBL + t.tWTR_S),
        ("tWTR_L", "WR", "RD", "bankgroup", t.CWL + t.tBL + t.tWTR_L),
        ("tRTP", "RD", "PRE", "bank", t.tRTP),
        ("tRTP", "RD", "PREA", "bank", t.tRTP),
        ("tWR", "WR", "PRE", "bank", t.CWL + t.tBL + t.tWR),
        ("tWR", "WR", "PREA", "bank", t.CWL + t.tBL + t.tWR),
        ("tRFC", "REF", "ACT", "bank", t.tRFC),
        ("tRFC", "REF", "REF", "rank", t.tRFC),
        ("tRFCpb", "REFpb", "ACT", "bank", t.tRFCpb),
        ("tRFCpb", "REFpb", "REFpb", "bank", t.tRFCpb),
    ]
    if t.ranks > 1:
        rules += [
            ("tRTRS", "RD", "RD", "other_rank", t.tBL + t.tRTRS),
            ("tRTRS", "WR", "WR", "other_rank", t.tBL + t.tRTRS),
            ("tRTRS", "RD", "WR", "other_rank", t.CL + t.tBL + t.tRTRS - t.CWL),
            ("tRTRS", "WR", "RD", "other_rank", t.CWL + t.tBL + t.tRTRS - t.CL),
        ]
    return rules


@model
class DramTimingChecker(Component):
    """Checks every command on a DRAM command bus against every JEDEC constraint.

    Connect ``cmd`` to a :class:`~.controller.DramController`'s ``cmd`` (latency 1) and give
    it the same ``standard`` and overrides. Each violation is counted and kept as a sentence
    in ``violations`` (``fail_on_violation`` stops the run at the first). Checks: every
    same-bank, same-bank-group, same-rank and other-rank gap of :func:`jedec_rules`, the
    four-activate window tFAW, the bank protocol, and the refresh interval (9 x tREFI).

    Leaves out: data-bus contents, ODT timing, power-down exit timings.
    """

    standard = Param(str, "DDR4-2400R", "timing preset", check=lambda v: None if v in PRESETS else
                     "must be one of " + ", ".join(PRESETS))
    overrides = Param(dict, None, "timing overrides the controller was given (name -> cycles)")
    fail_on_violation = Param(bool, False, "stop the run at the first violation")
    keep = Param(int, 100, "violations kept as sentences (all are counted)")
    cmd = In("commands (DramCommand) as issued")
    commands = Counter("commands", "commands checked")
    violation_count = Counter("violations", "constraint or protocol violations found")

    def setup(self) -> None:
        t = preset(self.standard)
        if self.overrides:
            t = t.override(**self.overrides)
        self.timing = t
        if self.clock is None:
            self.clock = dram_clock(t)
        self.violations: list[str] = []
        self.by_constraint: dict[str, int] = {}
        self._rules: dict[str, list] = {}
        for name, first, then, scope, cycles in jedec_rules(t):
            self._rules.setdefault(then, []).append((name, first, scope, cycles))
        banks = t.ranks * t.banks
        self._banks = [BankProtocol() for _ in range(banks)]
        self._last_bank: list[dict[str, int]] = [{} for _ in range(banks)]
        self._last_group: dict[tuple[int, int], dict[str, int]] = {}
        self._last_rank: list[dict[str, int]] = [{} for _ in range(t.ranks)]
        self._acts: list[deque] = [deque(maxlen=4) for _ in range(t.ranks)]
        self._last_refresh = [0] * t.ranks
        self._sets = max(1, t.tREFI // t.tREFIpb)

    def _flag(self, constraint: str, text: str) -> None:
        self.violation_count.add()
        self.by_constraint[constraint] = self.by_constraint.get(constraint, 0) + 1
        if len(self.violations) < self.keep:
            self.violations.append(text)
        if self.fail_on_violation:
            self.fail(text)

    def _targets(self, command) -> list[int]:
        t = self.timing
        name = COMMAND_NAMES[command.kind]
        if name in ("REF", "PREA"):
            return list(range(command.rank * t.banks, (command.rank + 1) * t.banks))
        if name == "REFpb":
            return [b for b in range(command.rank * t.banks, (command.rank + 1) * t.banks)
                    if b % self._sets == command.flat_bank % self._sets]
        return [command.flat_bank]

    def check(self, command) -> None:
        """Check one command and record it in the history."""
        self.commands.add()
        t = self.timing
        name = COMMAND_NAMES[command.kind]
        c = command.cycle
        rank = command.rank
        banks = self._targets(command)
        for rule_name, first, scope, cycles in self._rules.get(name, ()):
            if scope == "bank":
                # PREA closes only the open banks; on a closed bank it does nothing.
                history = [self._last_bank[b].get(first) for b in banks
                           if name != "PREA" or self._banks[b].open_row >= 0]
            elif scope == "bankgroup":
                if command.bankgroup < 0:
                    continue
                history = [self._last_group.get((rank, command.bankgroup), {}).get(first)]
            elif scope == "rank":
                history = [self._last_rank[rank].get(first)]
            else:
                history = [self._last_rank[r].get(first) for r in range(t.ranks) if r != rank]
            for last in history:
                if last is not None and c - last < cycles:
                    self._flag(rule_name, f"{command}: {rule_name} needs {cycles} cycles after {first} "
                                          f"(cycle {last}), got {c - last}")
                    break
        if name == "ACT":
            window = self._acts[rank]
            if len(window) == 4 and c - window[0] < t.tFAW:
                self._flag("tFAW", f"{command}: fifth ACT within tFAW ({t.tFAW} cycles) of cycle {window[0]}")
            window.append(c)
        if name in ("REF", "REFpb") or (name != "REF" and c - self._last_refresh[rank] > 9 * t.tREFI):
            if name == "REF":
                self._last_refresh[rank] = c
            elif name == "REFpb":
                self._last_refresh[rank] = c
            else:
                self._flag("tREFI", f"{command}: no refresh of rank {rank} for more than 9 x tREFI")
                self._last_refresh[rank] = c
        for b in banks:
            problem = self._banks[b].check(name, command.row)
            if problem is not None and name != "PREA":
                self._flag("protocol", f"{command}: {problem}")
            self._banks[b].apply(name, command.row)
            self._last_bank[b][name] = c
        if command.bankgroup >= 0:
            self._last_group.setdefault((rank, command.bankgroup), {})[name] = c
        self._last_rank[rank][name] = c

    def tick(self) -> None:
        port = self.cmd
        if port.valid:
            self.check(port.recv())
        if not len(port):
            self.sleep()
