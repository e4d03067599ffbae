"""The banks of an in-DRAM cache controller as its commands see them (a mixin of
:class:`~.indram_cache.InDramCacheController`, which holds the state): next-allowed cycles
per bank, bank group and rank, each ACT under the array timing of the row it opens (a fast
subarray's for FIGCache-Fast and LISA-VILLA cache rows, :class:`~.subarrays.SubarrayLayout`),
up to two rows open in a bank during a relocation (a second ACT tRCD of the first row after
it, RELOC once both are open, PRE tRELOC after the last RELOC or ``lisa_hop_cycles`` per hop of
a whole-row LISA movement), and the energy of each command (DRAMPower style,
:class:`~.energy.DramEnergy`, a fast row's ACT/PRE at its own tRAS and tRC)."""

from __future__ import annotations

from .commands import ACT, PRE, PREA, REF, REFPB, RELOC
from .next_allowed import NextAllowedCycles


class SubarrayBanks(NextAllowedCycles):
    """Command timing, issue and energy of subarray-aware banks (see the module docstring).
    The controller provides ``timing``, ``layout``, ``energy``, ``fast_energy``, ``tRELOC``,
    ``lisa_hop_cycles``, the command counters, ``bank_states``, ``_stale`` (the banks whose
    candidate changes), the listeners and ``elapsed_cycles``.

    The next-allowed cycles are :class:`~.next_allowed.NextAllowedCycles`', under the
    constraints of :mod:`.constraints` that :class:`~.controller.DramController` obeys; an ACT
    of a fast row advances them by the fast subarray's array timing, a PRE by the slowest
    open row's. Added here: the second ACT of a relocation and RELOC."""

    def _setup_banks(self, banks: int) -> None:
        """Every bank closed, every command allowed from cycle 0."""
        self._setup_next_allowed(never=(REFPB, PREA))  # one rank, all-bank refresh, a PRE per bank
        self._open: list[list[int]] = [[] for _ in range(banks)]  # open rows (two during a relocation)
        self._rows = [-1] * banks  # each bank's first open row (-1: closed), as the command choice reads it
        # A fast row's ACT and PRE: the fast subarray's array timing (column, bus and refresh
        # timings are the same, see .timing.fast_subarray_timing).
        self._fast_compiled = self._compile_table(self._constraint_updates(self.layout.fast)[0])
        # The second ACT of a relocation may follow the first by that row's tRCD (not tRC).
        self._act2 = [0] * banks
        self._act_energy = 0.0
        self._reloc_energy = 0.0

    def energy_total_nj(self) -> float:
        """DRAM energy so far in nJ: the ACT/PRE pairs at each row's array timing, RELOCs and
        LISA hops, column bursts from DRAM (not forwarded reads), refreshes, and background
        (:meth:`.energy.DramEnergy.background_pj` of the active cycles so far)."""
        e = self.energy
        col = ((self.reads.value - self.forwarded_reads.value) * e.read_pj + self.writes.value * e.write_pj
               + self.refs.value * e.refresh_pj)
        background = e.background_pj(self.active_cycles_so_far, self.elapsed_cycles)
        return (self._act_energy + self._reloc_energy + col + background) / 1000

    @property
    def reloc_energy_pj(self) -> float:
        """The part of the energy spent on RELOCs and LISA hops so far, in pJ."""
        return self._reloc_energy

    def _bank_ready(self, b: int, k: int) -> int:
        """The first cycle command k (ACT, PRE, RD, WR, RELOC) may issue to bank b; an ACT
        into an open bank is a relocation's second one."""
        if k == ACT and self._open[b]:
            bb, gb, rb = self._bases[b][:3]
            nxt = self._nxt
            return max(self._act2[b], nxt[gb + ACT], nxt[rb + ACT])
        return self._ready(b, k)

    def _issue(self, c: int, kind: int, b: int, row: int = -1, column: int = -1, extra: bool = False) -> None:
        """Issue command ``kind`` to bank b at cycle c (``extra``: for a relocation): advance
        the next-allowed cycles, the open rows, the counters and the energy, and publish it."""
        layout = self.layout
        self._stale.add(b)
        if kind == ACT:
            rt = layout.timing_of(row)
            fast = rt is layout.fast
            self.acts.add()
            self._act_energy += (self.fast_energy if fast else self.energy).act_pre_pj
            if not self._open[b]:
                self._bank_opens(c)
                self._rows[b] = row
            self._open[b].append(row)
            self._apply(ACT, b, c, self._fast_compiled if fast else None)
            self._window_act(b, c)
            v = c + rt.tRCD
            if self._act2[b] < v:
                self._act2[b] = v
            i = self._bases[b][0] + RELOC
            if self._nxt[i] < v:
                self._nxt[i] = v
            self.bank_states[b].set("open" if len(self._open[b]) == 1 else "relocating")
        elif kind == PRE:
            self.pres.add()
            # The slowest open row's tRP (a fast row alone precharges sooner).
            fast = all(layout.timing_of(x) is layout.fast for x in self._open[b])
            self._open[b] = []
            self._rows[b] = -1
            self._bank_closes(c)
            self._apply(PRE, b, c, self._fast_compiled if fast else None)
            self.bank_states[b].set("closed")
        elif kind == RELOC:
            hops = 0 if column >= 0 else layout.hops(*self._open[b])
            cost = self.tRELOC if column >= 0 else self.lisa_hop_cycles * hops
            bb = self._bases[b][0]
            for i in (bb + RELOC, bb + PRE):
                if self._nxt[i] < c + cost:
                    self._nxt[i] = c + cost
            self.reloc_commands.add()
            # A LISA hop latches the row into the next subarray's row buffer: one fast ACT/PRE each.
            self._reloc_energy += self.energy.read_pj if column >= 0 else self.fast_energy.act_pre_pj * hops
        else:
            self._apply(kind, b, c)
            if kind == REF:
                self.refs.add()
        if extra:
            self.extra_commands.add()
        if self._listeners or self._cmd_on:
            self._publish(self._command_fields(c, kind, b, row, column))
