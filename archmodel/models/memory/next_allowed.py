"""Next-allowed cycles of a channel's banks, bank groups and ranks (a mixin of both DRAM
controllers, which hold the state): the timing constraints of :mod:`.constraints` compiled per
command and bank into "advance slot i to cycle c + n" updates (Ramulator's approach), the
four-activate window, and the earliest cycle a command may issue to a bank.

``_nxt`` has :data:`~.commands.COMMAND_COUNT` slots per bank, then per bank group, then per
rank; ``_bases[b]`` is bank b's (bank slot, group slot, rank slot, rank, bank group within the
rank, bank within the group). A timing rule is written once, in :mod:`.constraints`, for the
reference controller and the in-DRAM cache controller alike; the in-DRAM cache compiles a
second table for its fast subarrays' array timing (:meth:`_compile_table`)."""

from __future__ import annotations

from archmodel.kernel import ParameterError

from .commands import ACT, COMMAND_COUNT, PREA, REF, REFPB
from .constraints import next_allowed_updates
from .splitting import NEVER


class NextAllowedCycles:
    """The next-allowed cycles of a channel (see the module docstring). The controller
    provides ``timing`` and ``path``; it calls :meth:`_setup_next_allowed` in its setup."""

    def _setup_next_allowed(self, omit=(), never=()) -> None:
        """Every command allowed from cycle 0 on every bank of ``timing``, under its
        constraints less those named in ``omit`` and those of the commands in ``never``."""
        t = self.timing
        self._bank_count = n = t.ranks * t.banks
        g_count = t.ranks * t.bankgroups
        self._bases = []
        for b in range(n):
            rank, gid = b // t.banks, b // t.banks_per_group
            self._bases.append((b * COMMAND_COUNT, (n + gid) * COMMAND_COUNT, (n + g_count + rank) * COMMAND_COUNT,
                                rank, gid % t.bankgroups, b % t.banks_per_group))
        self._rank_of = [b // t.banks for b in range(n)]
        self._nxt = [0] * ((n + g_count + t.ranks) * COMMAND_COUNT)
        self._refpb_sets = max(1, t.tREFI // t.tREFIpb)
        self._omit, self._never = omit, never
        self._updates, self._faw_cycles = self._constraint_updates(t)
        self._faw = [[-NEVER] * 4 for _ in range(t.ranks)]
        # The (next-array index, cycles) updates of command k on bank b, at k * banks + b.
        self._compiled = self._compile_table(self._updates)

    def _constraint_updates(self, timing) -> tuple[list, int]:
        """The (level, then, cycles) updates per command, and tFAW, of ``timing``."""
        try:
            return next_allowed_updates(timing, self._omit, self._never)
        except ParameterError as err:
            raise ParameterError(f"{self.path}: {err.message}", hint=err.hint) from None

    def _compile_table(self, updates) -> list[list[tuple[int, int]]]:
        """Per command k and bank b, at k * banks + b: the (next-array index, cycles) pairs of
        ``updates`` (from :meth:`_constraint_updates`) that it advances."""
        return [self._compile_updates(k, b, updates) for k in range(COMMAND_COUNT) for b in range(self._bank_count)]

    def _compile_updates(self, k: int, b: int, updates=None) -> list[tuple[int, int]]:
        """The (next-array index, cycles) pairs command k on bank b advances."""
        t = self.timing
        bases = self._bases
        rank = bases[b][3]
        rank_banks = range(rank * t.banks, (rank + 1) * t.banks)
        rank_wide = k in (PREA, REF)
        out = []
        for level, then, cycles in (self._updates if updates is None else updates)[k]:
            if level == 0:
                targets = rank_banks if rank_wide else (
                    [x for x in rank_banks if x % self._refpb_sets == b % self._refpb_sets] if k == REFPB else (b,))
                out += [(x * COMMAND_COUNT + then, cycles) for x in targets]
            elif level == 1:
                groups = sorted({bases[x][1] for x in rank_banks}) if rank_wide else [bases[b][1]]
                out += [(g + then, cycles) for g in groups]
            elif level == 2:
                out.append((bases[b][2] + then, cycles))
            else:
                out += [(bases[r * t.banks][2] + then, cycles) for r in range(t.ranks) if r != rank]
        return out

    def _apply(self, k: int, b: int, c: int, table=None) -> None:
        """Advance the next-allowed cycles after command k on bank b at cycle c (by the
        compiled ``table``, default the channel's)."""
        nxt = self._nxt
        for i, cycles in (self._compiled if table is None else table)[k * self._bank_count + b]:
            v = c + cycles
            if nxt[i] < v:
                nxt[i] = v

    def _window_act(self, b: int, c: int) -> None:
        """An ACT to bank b at cycle c enters its rank's four-activate window: the next ACT of
        the rank is the fifth after the four in the window."""
        window = self._faw[self._rank_of[b]]
        window.pop(0)
        window.append(c)
        if self._faw_cycles:
            i = self._bases[b][2] + ACT
            v = window[0] + self._faw_cycles
            if self._nxt[i] < v:
                self._nxt[i] = v

    def _ready(self, b: int, k: int) -> int:
        """The first cycle command k may issue to bank b."""
        bb, gb, rb = self._bases[b][:3]
        nxt = self._nxt
        return max(nxt[bb + k], nxt[gb + k], nxt[rb + k])

    def _command_fields(self, c: int, k: int, b: int, row: int, column: int) -> tuple:
        """The fields of :class:`~.commands.DramCommand` for command k to bank b at cycle c
        (rank-wide REF and PREA name no bank group or bank)."""
        base = self._bases[b]
        if k == REF or k == PREA:
            return (c, k, base[3], -1, -1, -1, row, column)
        return (c, k, base[3], base[4], base[5], b, row, column)
