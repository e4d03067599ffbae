"""An independent JEDEC timing checker: watches the command bus and checks every command
against every constraint, so a scheduler bug cannot hide.

It shares nothing with the controller's scheduler but the timing preset: its rules are
written here from the JEDEC definitions as "at least N cycles since the last X on the same
bank / bank group / rank", checked against a history of issued commands (the scheduler
instead propagates next-allowed cycles forward), plus the four-activate window, the bank
protocol (no RD to a closed bank, no ACT to an open one, no REF with a row open) and the
refresh interval (at most 9 x tREFI between refreshes of a rank, JEDEC's postponement limit)
and the order of per-bank refreshes: a rank's bank sets may take their REFpb in any order, but
no set twice before every set had one (a round of tREFI/tREFIpb REFpbs refreshes each bank once,
as LPDDR4 and HBM2's REFSB require), nor a set more than 2 x tREFI after its last (the first of
one round and the last of the next).
"""

from __future__ import annotations

from collections import deque

from archmodel.kernel import Component, Counter, In, Param, model

from .bank import BankProtocol
from .commands import ACT, COMMAND_NAMES, PRE, PREA, REF, REFPB, RELOC, DramCommand
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

    Either connect ``cmd`` to a :class:`~.controller.DramController`'s ``cmd`` (latency 1),
    as a ``.arch`` system does, or call ``checker.watch(controller)``: the controller then
    hands each command straight to :meth:`observe` as it issues it (no channel message per
    command, and the controller may schedule ahead of simulated time, see its
    ``lookahead_cycles``). Give it the same ``standard`` and overrides. Each violation is
    counted and kept as a sentence in ``violations`` (``fail_on_violation`` stops the run at
    the first). Checks: every same-bank, same-bank-group, same-rank and other-rank gap of
    :func:`jedec_rules`, the four-activate window tFAW, the bank protocol, and the refresh
    interval (9 x tREFI) and the per-bank refresh order (each bank set once per round).

    Leaves out: data-bus contents, ODT timing, power-down exit timings.
    """

    standard = Param(str, "DDR4-2400R", "timing preset", check=PRESETS.check)
    overrides = Param(dict, None, "timing overrides the controller was given (name -> cycles)")
    fail_on_violation = Param(bool, False, "stop the run at the first violation")
    keep = Param(int, 100, "violations kept as sentences (all are counted)")
    cmd = In("commands (DramCommand) as issued", required=False)
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
        # Per later command: its (name, earlier command, cycles) rules by scope (bank, bank
        # group, rank, other ranks).
        scopes = {"bank": 0, "bankgroup": 1, "rank": 2, "other_rank": 3}
        self._rules = [([], [], [], []) for _ in COMMAND_NAMES]
        for name, first, then, scope, cycles in jedec_rules(t):
            self._rules[COMMAND_NAMES.index(then)][scopes[scope]].append((name, COMMAND_NAMES.index(first), cycles))
        self._bankgroups = t.bankgroups
        self._faw = t.tFAW
        banks = t.ranks * t.banks
        self._banks = [BankProtocol() for _ in range(banks)]
        kinds = len(COMMAND_NAMES)
        # Cycle of the last command of each kind per bank, bank group and rank (-1: none yet).
        self._last_bank = [[-1] * kinds for _ in range(banks)]
        self._last_group = [[-1] * kinds for _ in range(t.ranks * t.bankgroups)]
        self._last_rank = [[-1] * kinds for _ in range(t.ranks)]
        self._acts: list[deque] = [deque(maxlen=4) for _ in range(t.ranks)]
        self._last_refresh = [0] * t.ranks
        self._sets = max(1, t.tREFI // t.tREFIpb)
        self._refresh_limit = 9 * t.tREFI
        self._set_limit = 2 * t.tREFI
        # Per rank: bit s set once bank set s had its REFpb in the round under way, and each
        # set's last REFpb (-1: none yet).
        self._round = [0] * t.ranks
        self._last_refpb = [[-1] * self._sets for _ in range(t.ranks)]
        self._rank_banks = [tuple(range(r * t.banks, (r + 1) * t.banks)) for r in range(t.ranks)]

    def watch(self, controller) -> None:
        """Check every command ``controller`` issues, handed over directly as it issues it."""
        controller.add_command_listener(self.observe)

    def _flag(self, constraint: str, text: str) -> None:
        self.violation_count.add()
        self.by_constraint[constraint] = self.by_constraint.get(constraint, 0) + 1
        if len(self.violations) < self.keep:
            self.violations.append(text)
        if self.fail_on_violation:
            self.fail(text)

    def check(self, command: DramCommand) -> None:
        """Check one command and record it in the history."""
        self.observe(command.cycle, command.kind, command.rank, command.bankgroup, command.bank,
                     command.flat_bank, command.row, command.column)

    def observe(self, c: int, kind: int, rank: int, bankgroup: int, bank: int, flat_bank: int,
                row: int = -1, column: int = -1) -> None:
        """Check the command ``kind`` (an index of COMMAND_NAMES) issued at cycle ``c`` to a
        bank (``flat_bank`` is its index in the channel; -1 for rank-wide commands), and
        record it in the history."""
        self.commands.add()
        if kind == REF or kind == PREA:
            banks = self._rank_banks[rank]
        elif kind == REFPB:
            banks = [b for b in self._rank_banks[rank] if b % self._sets == flat_bank % self._sets]
        else:
            banks = (flat_bank,)
        bank_rules, group_rules, rank_rules, other_rules = self._rules[kind]
        late = None
        if bank_rules:
            if len(banks) == 1:
                history = self._last_bank[flat_bank]
                for rule in bank_rules:
                    last = history[rule[1]]
                    if last >= 0 and c - last < rule[2]:
                        late = (late or []) + [(rule, last)]
            else:
                for rule in bank_rules:
                    # PREA closes only the open banks; on a closed bank it does nothing.
                    last = max((self._last_bank[b][rule[1]] for b in banks
                                if kind != PREA or self._banks[b].open_row >= 0), default=-1)
                    if last >= 0 and c - last < rule[2]:
                        late = (late or []) + [(rule, last)]
        if group_rules and bankgroup >= 0:
            history = self._last_group[rank * self._bankgroups + bankgroup]
            for rule in group_rules:
                last = history[rule[1]]
                if last >= 0 and c - last < rule[2]:
                    late = (late or []) + [(rule, last)]
        if rank_rules:
            history = self._last_rank[rank]
            for rule in rank_rules:
                last = history[rule[1]]
                if last >= 0 and c - last < rule[2]:
                    late = (late or []) + [(rule, last)]
        for rule in other_rules:
            last = max((self._last_rank[r][rule[1]] for r in range(len(self._last_rank)) if r != rank), default=-1)
            if last >= 0 and c - last < rule[2]:
                late = (late or []) + [(rule, last)]
        if late is not None:
            where = self._describe(c, kind, rank, bankgroup, bank, flat_bank, row)
            for (rule_name, first, cycles), last in late:
                self._flag(rule_name, f"{where}: {rule_name} needs {cycles} cycles after {COMMAND_NAMES[first]} "
                                      f"(cycle {last}), got {c - last}")
        if kind == ACT:
            window = self._acts[rank]
            if len(window) == 4 and c - window[0] < self._faw:
                self._flag("tFAW", f"{self._describe(c, kind, rank, bankgroup, bank, flat_bank, row)}: fifth ACT "
                                   f"within tFAW ({self._faw} cycles) of cycle {window[0]}")
            window.append(c)
        if kind == REFPB:
            self._refpb_order(c, rank, bankgroup, bank, flat_bank)
        elif kind == REF:
            self._round[rank] = 0  # (an all-bank refresh refreshes every set at once)
        if kind == REF or kind == REFPB:
            self._last_refresh[rank] = c
        elif c - self._last_refresh[rank] > self._refresh_limit:
            self._flag("tREFI", f"{self._describe(c, kind, rank, bankgroup, bank, flat_bank, row)}: no refresh "
                                f"of rank {rank} for more than 9 x tREFI")
            self._last_refresh[rank] = c
        name = COMMAND_NAMES[kind]
        for b in banks:
            protocol = self._banks[b]
            # The legal cases are decided here; BankProtocol words the others.
            open_row = protocol.open_row
            legal = (kind == PRE or kind == PREA or (open_row < 0 if kind == ACT or kind == REF or kind == REFPB
                                                     else open_row == row or (kind == RELOC and open_row >= 0)))
            if not legal:
                problem = protocol.check(name, row)
                if problem is not None:
                    self._flag("protocol", f"{self._describe(c, kind, rank, bankgroup, bank, flat_bank, row)}: "
                                           f"{problem}")
            protocol.apply(name, row)
            self._last_bank[b][kind] = c
        if bankgroup >= 0:
            self._last_group[rank * self._bankgroups + bankgroup][kind] = c
        self._last_rank[rank][kind] = c

    def _refpb_order(self, c: int, rank: int, bankgroup: int, bank: int, flat_bank: int) -> None:
        """Check a REFpb's bank set against the round of per-bank refreshes of its rank."""
        s = flat_bank % self._sets
        done = self._round[rank]
        where = None
        if (done >> s) & 1:
            where = self._describe(c, REFPB, rank, bankgroup, bank, flat_bank, -1)
            missing = [x for x in range(self._sets) if not (done >> x) & 1]
            self._flag("REFpb order", f"{where}: bank set {s} of rank {rank} refreshed again before bank set "
                                      f"{missing[0]} was refreshed once")
            done = 0
        last = self._last_refpb[rank][s]
        if last >= 0 and c - last > self._set_limit:
            where = where or self._describe(c, REFPB, rank, bankgroup, bank, flat_bank, -1)
            self._flag("REFpb order", f"{where}: bank set {s} of rank {rank} not refreshed for {c - last} cycles, "
                                      f"more than 2 x tREFI")
        self._last_refpb[rank][s] = c
        done |= 1 << s
        self._round[rank] = 0 if done == (1 << self._sets) - 1 else done

    @staticmethod
    def _describe(c, kind, rank, bankgroup, bank, flat_bank, row) -> str:
        return str(DramCommand(c, kind, rank, bankgroup, bank, flat_bank, row))

    def tick(self) -> None:
        port = self.cmd
        if not port.connected:
            self.sleep()  # it watches a controller directly: nothing arrives on the port
            return
        if port.valid:
            self.check(port.recv())
        if not len(port):
            self.sleep()
