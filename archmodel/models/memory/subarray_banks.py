"""The banks of an in-DRAM cache controller as its commands see them (a mixin of
:class:`~.indram_cache.InDramCacheController`, which holds the state): next-allowed cycles
per bank, bank group and rank, each ACT under the array timing of the row it opens (a fast
subarray's for FIGCache-Fast and LISA-VILLA cache rows, :class:`~.subarrays.SubarrayLayout`),
up to two rows open in a bank during a relocation (a second ACT tRCD of the first row after
it, RELOC once both are open, PRE tRELOC after the last RELOC or ``lisa_hop_cycles`` per hop of
a whole-row LISA movement), and the energy of each command (DRAMPower style,
:class:`~.energy.DramEnergy`, a fast row's ACT/PRE at its own tRAS and tRC)."""

from __future__ import annotations

from .commands import ACT, PRE, RD, REF, RELOC, WR

_FAW_EMPTY = -10 ** 9  # an activate window with no ACT in it yet


class SubarrayBanks:
    """Command timing, issue and energy of subarray-aware banks (see the module docstring).
    The controller provides ``timing``, ``layout``, ``energy``, ``fast_energy``, ``tRELOC``,
    ``lisa_hop_cycles``, the command counters, ``bank_states``, ``_stale`` (the banks whose
    candidate changes), the listeners and ``elapsed_cycles``."""

    def _setup_banks(self, banks: int) -> None:
        """Every bank closed, every command allowed from cycle 0."""
        t = self.timing
        self._open: list[list[int]] = [[] for _ in range(banks)]  # open rows (two during a relocation)
        self._next = {k: [0] * banks for k in ("act", "pre", "rd", "wr", "reloc", "act2")}
        self._group_next = {k: [0] * t.bankgroups for k in ("act", "rd", "wr")}
        self._rank_next = {"act": 0, "rd": 0, "wr": 0, "ref": 0}
        self._faw = [_FAW_EMPTY] * 4
        self._bank_group = [b // t.banks_per_group for b in range(banks)]
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

    def _bg(self, b):
        return b // self.timing.banks_per_group

    def _ready_at(self, kind: str, b: int) -> int:
        """The first cycle command ``kind`` (act, pre, rd, wr, reloc) may issue to bank b."""
        nb, g, r = self._next, self._group_next, self._rank_next
        if kind == "act":
            # With a row open, the relocation's second ACT: tRCD of the first row.
            at = nb["act2"][b] if self._open[b] else nb["act"][b]
            return max(at, g["act"][self._bg(b)], r["act"], self._faw[0] + self.timing.tFAW)
        if kind == "rd":
            return max(nb["rd"][b], g["rd"][self._bg(b)], r["rd"])
        if kind == "wr":
            return max(nb["wr"][b], g["wr"][self._bg(b)], r["wr"])
        return nb[kind][b]

    def _ready(self, kind: str, b: int, c: int) -> bool:
        return c >= self._ready_at(kind, b)

    @staticmethod
    def _later(table, i, v):
        if table[i] < v:
            table[i] = v

    def _issue(self, c: int, kind: int, b: int, row: int = -1, column: int = -1, extra: bool = False) -> None:
        """Issue command ``kind`` to bank b at cycle c (``extra``: for a relocation): advance
        the next-allowed cycles, the open rows, the counters and the energy, and publish it."""
        t, nb, g, r = self.timing, self._next, self._group_next, self._rank_next
        up = self._later
        bg = self._bg(b)
        self._stale.add(b)
        if kind == ACT:
            rt = self.layout.timing_of(row)
            self.acts.add()
            energy = self.fast_energy if rt is self.layout.fast else self.energy
            self._act_energy += energy.act_pre_pj
            if not self._open[b]:
                self._bank_opens(c)
            self._open[b].append(row)
            up(nb["rd"], b, c + rt.tRCD)
            up(nb["wr"], b, c + rt.tRCDWR)
            up(nb["pre"], b, c + rt.tRAS)
            up(nb["act"], b, c + rt.tRC)
            up(nb["act2"], b, c + rt.tRCD)
            up(nb["reloc"], b, c + rt.tRCD)
            up(g["act"], bg, c + t.tRRD_L)
            r["act"] = max(r["act"], c + t.tRRD_S)
            self._faw = self._faw[1:] + [c]
            self.bank_states[b].set("open" if len(self._open[b]) == 1 else "relocating")
        elif kind == PRE:
            self.pres.add()
            tRP = max(self.layout.timing_of(x).tRP for x in self._open[b])
            self._open[b] = []
            self._bank_closes(c)
            up(nb["act"], b, c + tRP)
            r["ref"] = max(r["ref"], c + tRP)
            self.bank_states[b].set("closed")
        elif kind == RD:
            up(g["rd"], bg, c + t.tCCD_L)
            r["rd"] = max(r["rd"], c + t.tCCD_S)
            r["wr"] = max(r["wr"], c + t.read_to_write)
            up(nb["pre"], b, c + t.tRTP)
        elif kind == WR:
            up(g["wr"], bg, c + t.tCCD_L)
            r["wr"] = max(r["wr"], c + t.tCCD_S)
            up(g["rd"], bg, c + t.write_to_read_l)
            r["rd"] = max(r["rd"], c + t.write_to_read_s)
            up(nb["pre"], b, c + t.write_to_precharge)
        elif kind == RELOC:
            cost = self.tRELOC if column >= 0 else self.lisa_hop_cycles * self.layout.hops(*self._open[b])
            up(nb["reloc"], b, c + cost)
            up(nb["pre"], b, c + cost)
            self.reloc_commands.add()
            # A LISA hop latches the row into the next subarray's row buffer: one fast ACT/PRE each.
            self._reloc_energy += (self.energy.read_pj if column >= 0
                                   else self.fast_energy.act_pre_pj * self.layout.hops(*self._open[b]))
        elif kind == REF:
            self.refs.add()
            for x in range(self._n):
                up(nb["act"], x, c + t.tRFC)
            r["ref"] = c + t.tRFC
        if extra:
            self.extra_commands.add()
        if self._listeners or self._cmd_on:
            fields = (c, kind, 0, -1 if kind == REF else bg, -1 if kind == REF else b % t.banks_per_group,
                      -1 if kind == REF else b, row, column)
            self._publish(fields)
