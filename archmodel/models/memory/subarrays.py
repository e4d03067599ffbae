"""Subarray-aware banks: where a bank's subarrays, fast subarrays and cache rows lie
(:class:`SubarrayLayout`), and the independent timing checker that holds an in-DRAM cache's
commands to them (:class:`SubarrayTimingChecker`). Sources as in :mod:`.indram_cache`."""

from __future__ import annotations

from archmodel.kernel import Param, ParameterError, Registry, at_least, model

from .bank import BankProtocol
from .checker import DramTimingChecker
from .commands import ACT, COMMAND_NAMES, PRE, RD, REF, RELOC, WR, DramCommand
from .timing import fast_subarray_timing, preset

CACHE_MODES: Registry[str] = Registry("in-DRAM cache", {
    "none": "no cache: the baseline subarray-aware controller",
    "lisa_villa": "LISA-VILLA: whole hot rows cached in villa_subarrays fast subarrays interleaved among the "
                  "regular ones, moved by LISA hops",
    "figcache_slow": "FIGCache-Slow: row segments cached in one reserved regular subarray, moved by RELOC",
    "figcache_fast": "FIGCache-Fast: row segments cached in one fast subarray, moved by RELOC",
})
"""The in-DRAM cache organisations the controller offers (``none`` is the baseline)."""


class SubarrayLayout:
    """Where rows live inside a bank, for one cache organisation.

    Address-mapped rows ``0 .. rows-1`` fill ``subarrays`` regular subarrays of
    ``rows // subarrays`` rows. The cache rows are reserved rows beyond them (numbered from
    ``rows``), so the address space is unchanged: FIGCache-Fast puts them in one fast
    subarray, FIGCache-Slow in one regular subarray, LISA-VILLA in ``villa_subarrays`` fast
    subarrays interleaved among the regular ones (fast subarray k sits next to the first
    subarray of group k, and serves the subarrays of its group). ``timing_of(row)`` is the
    row's array timing; ``hops(src, dst)`` the LISA distance in subarrays.
    """

    def __init__(self, standard: str, cache: str, cache_rows_per_bank: int, villa_subarrays: int):
        self.normal = t = preset(standard)
        self.fast = fast_subarray_timing(t)
        self.cache = cache
        self.rows = t.rows
        self.rows_per_subarray = t.rows // t.subarrays
        self.cache_rows = cache_rows_per_bank if cache != "none" else 0
        self.groups = villa_subarrays if cache == "lisa_villa" else 1
        if self.cache_rows % self.groups:
            raise ParameterError(f"{cache_rows_per_bank} cache rows do not split over {villa_subarrays} fast subarrays")
        self.group_subarrays = t.subarrays // self.groups
        self.fast_cache = cache in ("figcache_fast", "lisa_villa")

    def timing_of(self, row: int):
        """The array timing (tRCD, tRAS, tRP, tRC) of ``row``."""
        return self.fast if row >= self.rows and self.fast_cache else self.normal

    def subarray(self, row: int) -> int:
        return row // self.rows_per_subarray if row < self.rows else -1

    def group_of(self, row: int) -> int:
        """The LISA-VILLA group (fast subarray) that serves a home or cache row."""
        if row >= self.rows:
            return (row - self.rows) // (self.cache_rows // self.groups)
        return self.subarray(row) // self.group_subarrays

    def hops(self, src: int, dst: int) -> int:
        """Subarray boundaries a LISA row-buffer movement crosses between src and dst."""
        home = src if src < self.rows else dst
        return 1 + self.subarray(home) % self.group_subarrays


@model
class SubarrayTimingChecker(DramTimingChecker):
    """The independent timing checker for subarray-aware banks with an in-DRAM cache.

    Checks what :class:`.checker.DramTimingChecker` checks, except that the array timings
    (tRCD, tRAS, tRP, tRC) are those of the row each ACT opened (a fast subarray's for
    FIGCache-Fast and LISA-VILLA cache rows), and it knows the relocation sequence: a second
    ACT to another row of an open bank at least tRCD (of the first row) after the first ACT,
    RELOC only with two rows open, RELOC after RELOC at least ``tRELOC`` (a whole-row LISA
    movement: ``lisa_hop_cycles`` per hop), PRE at least that long after the last RELOC and
    tRAS after each ACT, and tRP of the slowest open row before the next ACT. Give it the
    controller's cache parameters.
    """

    cache = Param(str, "figcache_fast", "the controller's cache organisation", check=CACHE_MODES.check)
    cache_rows_per_bank = Param(int, 64, "the controller's cache rows per bank", check=at_least(1))
    villa_subarrays = Param(int, 4, "the controller's LISA-VILLA fast subarrays", check=at_least(1))
    tRELOC = Param(int, 4, "cycles of one RELOC", unit=None, check=at_least(1))
    lisa_hop_cycles = Param(int, 8, "cycles per LISA hop", unit=None, check=at_least(1))

    _ARRAY_RULES = ("tRCD", "tRCDWR", "tRAS", "tRC", "tRP")

    def setup(self) -> None:
        super().setup()
        self.layout = SubarrayLayout(self.standard, self.cache, self.cache_rows_per_bank, self.villa_subarrays)
        for per_kind in self._rules:
            per_kind[0][:] = [rule for rule in per_kind[0] if rule[0] not in self._ARRAY_RULES]
        banks = len(self._banks)
        self._rows_open = [[] for _ in range(banks)]  # (row, ACT cycle)
        self._last_pre = [(-1, 0)] * banks  # (cycle, tRP)
        self._last_first_act = [(-1, 0)] * banks  # (cycle, tRC)
        self._last_reloc = [(-1, 0)] * banks  # (cycle, cost)
        self._col_open = [-1] * banks
        self._banks = [_Permissive() for _ in range(banks)]

    def _bad(self, c, kind, b, row, rule, text):
        self._flag(rule, f"{DramCommand(c, kind, 0, -1, -1, b, row)}: {text}")

    def observe(self, c, kind, rank, bankgroup, bank, flat_bank, row=-1, column=-1):
        """Check the subarray-aware bank rules and protocol, then the shared ones."""
        b = flat_bank
        if kind in (ACT, PRE, RD, WR, RELOC) and b >= 0:
            opened = self._rows_open[b]
            if kind == ACT:
                if not opened:
                    cycle, trp = self._last_pre[b]
                    if cycle >= 0 and c - cycle < trp:
                        self._bad(c, kind, b, row, "tRP", f"tRP needs {trp} cycles after PRE (cycle {cycle})")
                    cycle, trc = self._last_first_act[b]
                    if cycle >= 0 and c - cycle < trc:
                        self._bad(c, kind, b, row, "tRC", f"tRC needs {trc} cycles after ACT (cycle {cycle})")
                    self._last_first_act[b] = (c, self.layout.timing_of(row).tRC)
                elif len(opened) == 1 and opened[0][0] != row:
                    first, at = opened[0]
                    need = self.layout.timing_of(first).tRCD
                    if c - at < need:
                        self._bad(c, kind, b, row, "tRCD", f"second ACT needs tRCD {need} after ACT (cycle {at})")
                else:
                    self._bad(c, kind, b, row, "protocol", "ACT to a bank with its rows open")
                opened.append((row, c))
            elif kind == PRE:
                for r, at in opened:
                    need = self.layout.timing_of(r).tRAS
                    if c - at < need:
                        self._bad(c, kind, b, r, "tRAS", f"tRAS needs {need} cycles after ACT (cycle {at})")
                cycle, cost = self._last_reloc[b]
                if cycle >= 0 and len(opened) == 2 and c - cycle < cost:
                    self._bad(c, kind, b, row, "tRELOC", f"PRE needs {cost} cycles after RELOC (cycle {cycle})")
                if opened:
                    self._last_pre[b] = (c, max(self.layout.timing_of(r).tRP for r, _ in opened))
                opened.clear()
            elif kind == RELOC:
                if len(opened) != 2:
                    self._bad(c, kind, b, row, "protocol", "RELOC needs a source and a destination row open")
                else:
                    need = self.layout.timing_of(opened[1][0]).tRCD
                    if c - opened[1][1] < need:
                        self._bad(c, kind, b, row, "tRCD",
                                  f"RELOC needs {need} cycles after ACT (cycle {opened[1][1]})")
                cycle, cost = self._last_reloc[b]
                if cycle >= 0 and c - cycle < cost and len(opened) == 2 and cycle > opened[1][1]:
                    self._bad(c, kind, b, row, "tRELOC", f"RELOC needs {cost} cycles after RELOC (cycle {cycle})")
                whole = column < 0
                cost = (self.lisa_hop_cycles * self.layout.hops(opened[0][0], opened[1][0])
                        if whole and len(opened) == 2 else self.tRELOC)
                self._last_reloc[b] = (c, cost)
            else:
                if len(opened) != 1 or opened[0][0] != row:
                    self._bad(c, kind, b, row, "protocol", f"{COMMAND_NAMES[kind]} to row {row} not open alone")
                else:
                    rt = self.layout.timing_of(row)
                    need = rt.tRCD if kind == RD else rt.tRCDWR
                    if c - opened[0][1] < need:
                        self._bad(c, kind, b, row, "tRCD", f"{COMMAND_NAMES[kind]} needs {need} cycles after ACT")
        elif kind == REF:
            for b, opened in enumerate(self._rows_open):
                if opened:
                    self._bad(c, kind, b, -1, "protocol", "REF with a row open")
                cycle, trp = self._last_pre[b]
                if cycle >= 0 and c - cycle < trp:
                    self._bad(c, kind, b, -1, "tRP", f"REF needs tRP {trp} after PRE (cycle {cycle})")
        super().observe(c, kind, rank, bankgroup, bank, flat_bank, row, column)


class _Permissive(BankProtocol):
    """The shared checker's protocol view, with the subarray-aware checks done above."""

    def check(self, kind, row=-1):
        return None
