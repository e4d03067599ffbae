"""DRAM timing presets: every JEDEC constraint by name, in DRAM clock cycles (tCK units).

A :class:`DramTiming` holds one speed bin of one standard: the organisation of one channel
(ranks, bank groups, banks, rows, columns, burst length, bus width), the timing constraints
and the datasheet currents used for energy. ``PRESETS`` maps the names the controller accepts
to them; ``timing.override(tRCD=18)`` gives a changed, re-validated copy, and an impossible
set (say tRC < tRAS + tRP) is an :class:`~archmodel.kernel.ArchError` with a hint.

Sources, per preset:

- DDR4-2400R and DDR4-3200AA: JEDEC JESD79-4 speed bins as Ramulator 2 and DRAMSim3 use them
  (8Gb x8, 1 rank, 4 bank groups x 4 banks, 65536 rows, 1024 columns, BL8, 64-bit channel);
  currents of Micron MT40A1G8 (DRAMSim3 configs/DDR4_8Gb_x8_2400.ini and _3200.ini).
- HBM2: one pseudo-channel at 2 Gb/s as in Ramulator 2 (JESD235); write-side timings tWR,
  tWTR and tRTP and the currents from DRAMSim3 configs/HBM2_8Gb_x128.ini.
- DDR5-4800B: JEDEC JESD79-5 speed bin 4800B (CL40-39-39), 16Gb x8: 8 bank groups x 4 banks,
  BL16 on a 32-bit sub-channel; tRFC1 295 ns, tREFI 3.9 us, tRFCsb 130 ns. Currents are
  typical 16Gb x8 datasheet figures at VDD 1.1 V (approximate; use your part's datasheet).
- HBM2E: 3.2 Gb/s (tCK 0.625 ns, JESD235C); the array timings are HBM2's nanosecond figures
  converted with nCK = ceil(ns / tCK), the column-to-column and burst figures kept in nCK.

Not modelled: additive latency, CRC/DBI, on-die ECC, gear-down mode, DDR5 same-bank refresh
management (RFM) and the per-die differences of 3DS stacks.
"""

from __future__ import annotations

import math

import attrs

from archmodel.kernel import ArchError, ClockDomain, Registry

TIMING_FIELDS = ("CL", "CWL", "tRCD", "tRCDWR", "tRP", "tRAS", "tRC", "tBL", "tCCD_S", "tCCD_L",
                 "tRRD_S", "tRRD_L", "tFAW", "tWTR_S", "tWTR_L", "tWR", "tRTP", "tRFC", "tREFI",
                 "tRFCpb", "tREFIpb", "tRTRS")
"""The timing constraints every preset names, in DRAM cycles (tCK)."""


@attrs.frozen
class DramTiming:
    """One DRAM standard and speed bin: organisation, timing (cycles of tCK) and currents.

    ``tRCD`` is ACT to READ (tRCDRD on HBM) and ``tRCDWR`` ACT to WRITE (equal on DDR4/DDR5).
    ``tBL`` is the data-bus burst in cycles (BL/2 for double data rate). ``tRFCpb`` and
    ``tREFIpb`` are the per-bank refresh figures: each per-bank REF refreshes one bank set, the
    banks whose index modulo ``tREFI // tREFIpb`` is the same (one bank on HBM; the same bank
    of every bank group, REFsb, on DDR5, where tRFCpb is tRFCsb), and ``tRTRS`` the
    rank-to-rank switch gap. Currents are per device in mA at ``vdd`` volts;
    ``devices_per_rank`` devices make one rank of the channel.
    """

    name: str
    tCK_ps: int
    CL: int
    CWL: int
    tRCD: int
    tRCDWR: int
    tRP: int
    tRAS: int
    tRC: int
    tBL: int
    tCCD_S: int
    tCCD_L: int
    tRRD_S: int
    tRRD_L: int
    tFAW: int
    tWTR_S: int
    tWTR_L: int
    tWR: int
    tRTP: int
    tRFC: int
    tREFI: int
    tRFCpb: int
    tREFIpb: int
    tRTRS: int = 2
    ranks: int = 1
    bankgroups: int = 4
    banks_per_group: int = 4
    rows: int = 65536
    columns: int = 1024
    burst_length: int = 8
    bus_bits: int = 64
    subarrays: int = 64
    vdd: float = 1.2
    idd0: float = 48.0
    idd2n: float = 34.0
    idd3n: float = 43.0
    idd4r: float = 135.0
    idd4w: float = 123.0
    idd5b: float = 250.0
    devices_per_rank: int = 8

    @property
    def banks(self) -> int:
        """Banks per rank."""
        return self.bankgroups * self.banks_per_group

    @property
    def burst_bytes(self) -> int:
        """Bytes moved by one RD or WR: the access granularity (64 B on DDR4)."""
        return self.bus_bits * self.burst_length // 8

    @property
    def bursts_per_row(self) -> int:
        """Column accesses that fit in one row of one bank."""
        return self.columns // self.burst_length

    @property
    def read_to_write(self) -> int:
        """RD to WR on the same rank: CL + tBL + 2 - CWL (the bus turns around, one preamble)."""
        return self.CL + self.tBL + 2 - self.CWL

    @property
    def write_to_read_l(self) -> int:
        """WR to RD in the same bank group: CWL + tBL + tWTR_L."""
        return self.CWL + self.tBL + self.tWTR_L

    @property
    def write_to_read_s(self) -> int:
        """WR to RD in another bank group: CWL + tBL + tWTR_S."""
        return self.CWL + self.tBL + self.tWTR_S

    @property
    def write_to_precharge(self) -> int:
        """WR to PRE on the same bank: CWL + tBL + tWR (write recovery after the last data)."""
        return self.CWL + self.tBL + self.tWR

    @property
    def peak_gbps(self) -> float:
        """Peak data-bus bandwidth in GB/s: one burst per tBL cycles."""
        return self.burst_bytes / (self.tBL * self.tCK_ps) * 1000

    def latency(self, case: str) -> int:
        """Unloaded read latency in cycles from the first command to the end of the data, as
        VALIDATION states: ``hit`` CL + tBL, ``closed`` tRCD + CL + tBL, ``conflict``
        tRP + tRCD + CL + tBL."""
        base = self.CL + self.tBL
        return {"hit": base, "closed": self.tRCD + base, "conflict": self.tRP + self.tRCD + base}[case]

    def override(self, **changes) -> "DramTiming":
        """A copy with some fields changed (``None`` values ignored), validated."""
        given = {k: v for k, v in changes.items() if v is not None}
        unknown = sorted(set(given) - {f.name for f in attrs.fields(DramTiming)})
        if unknown:
            raise ArchError(f"{self.name}: no timing parameter '{unknown[0]}'",
                            hint="timings are: " + ", ".join(TIMING_FIELDS))
        changed = attrs.evolve(self, **given)
        return changed.validated()

    def validated(self) -> "DramTiming":
        """This timing if it is possible, else an ArchError naming the broken relation."""
        for field in TIMING_FIELDS + ("tCK_ps",):
            value = getattr(self, field)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ArchError(f"{self.name}: {field} must be a positive whole number of cycles, got {value!r}")
        rules = [
            ("tRC", self.tRC, "tRAS + tRP", self.tRAS + self.tRP,
             "a row stays open tRAS and precharges tRP before the bank can activate again"),
            ("tRAS", self.tRAS, "tRCD", self.tRCD, "a row must be open before it may be read"),
            ("tCCD_L", self.tCCD_L, "tCCD_S", self.tCCD_S, "the same bank group is never faster than another"),
            ("tRRD_L", self.tRRD_L, "tRRD_S", self.tRRD_S, "the same bank group is never faster than another"),
            ("tWTR_L", self.tWTR_L, "tWTR_S", self.tWTR_S, "the same bank group is never faster than another"),
            ("tCCD_S", self.tCCD_S, "tBL", self.tBL, "two bursts would overlap on the data bus"),
            ("tFAW", self.tFAW, "tRRD_S", self.tRRD_S, "four activates cannot take less than one activate gap"),
            ("tREFI", self.tREFI, "tRFC", self.tRFC, "refresh would never finish before the next is due"),
            ("tREFIpb", self.tREFIpb, "tRFCpb", self.tRFCpb, "per-bank refresh would never finish"),
        ]
        for name, value, other, bound, why in rules:
            if value < bound:
                raise ArchError(f"{self.name}: {name} ({value}) is less than {other} ({bound})",
                                hint=f"{why}: raise {name} to at least {bound} or lower {other}")
        for name in ("bankgroups", "banks_per_group", "rows", "columns", "burst_length", "ranks", "subarrays"):
            value = getattr(self, name)
            if value < 1 or value & (value - 1):
                raise ArchError(f"{self.name}: {name} must be a power of two, got {value}",
                                hint="address bits are sliced from the physical address")
        if self.columns < self.burst_length:
            raise ArchError(f"{self.name}: a row of {self.columns} columns is shorter than one burst of "
                            f"{self.burst_length}")
        if self.rows % self.subarrays:
            raise ArchError(f"{self.name}: {self.rows} rows do not split into {self.subarrays} subarrays")
        return self


def _cycles(ns: float, tck_ps: int) -> int:
    """nCK = ceil(ns / tCK), as JEDEC rounds analogue timings (with a guard for float noise)."""
    return math.ceil(ns * 1000 / tck_ps - 1e-9)


DDR4_2400R = DramTiming(
    name="DDR4-2400R", tCK_ps=833, CL=16, CWL=12, tRCD=16, tRCDWR=16, tRP=16, tRAS=39, tRC=55, tBL=4,
    tCCD_S=4, tCCD_L=6, tRRD_S=4, tRRD_L=6, tFAW=26, tWTR_S=3, tWTR_L=9, tWR=18, tRTP=9, tRFC=433,
    tREFI=9364, tRFCpb=433, tREFIpb=9364 // 16, tRTRS=2,
    vdd=1.2, idd0=48, idd2n=34, idd3n=43, idd4r=135, idd4w=123, idd5b=250, devices_per_rank=8)

DDR4_3200AA = DramTiming(
    name="DDR4-3200AA", tCK_ps=625, CL=22, CWL=16, tRCD=22, tRCDWR=22, tRP=22, tRAS=52, tRC=74, tBL=4,
    tCCD_S=4, tCCD_L=8, tRRD_S=4, tRRD_L=8, tFAW=34, tWTR_S=4, tWTR_L=12, tWR=24, tRTP=12, tRFC=576,
    tREFI=12480, tRFCpb=576, tREFIpb=12480 // 16, tRTRS=2,
    vdd=1.2, idd0=57, idd2n=37, idd3n=52, idd4r=168, idd4w=150, idd5b=250, devices_per_rank=8)

HBM2 = DramTiming(
    name="HBM2", tCK_ps=1000, CL=14, CWL=5, tRCD=14, tRCDWR=12, tRP=14, tRAS=34, tRC=48, tBL=2,
    tCCD_S=2, tCCD_L=4, tRRD_S=4, tRRD_L=4, tFAW=15, tWTR_S=6, tWTR_L=8, tWR=16, tRTP=4, tRFC=350,
    tREFI=3900, tRFCpb=160, tREFIpb=3900 // 16, tRTRS=2,
    bankgroups=4, banks_per_group=4, rows=32768, columns=64, burst_length=4, bus_bits=64,
    vdd=1.2, idd0=65, idd2n=40, idd3n=55, idd4r=390, idd4w=500, idd5b=250, devices_per_rank=1)

_DDR5_TCK = 416  # 2400 MHz: 0.4167 ns, kept a whole number of ps
DDR5_4800B = DramTiming(
    name="DDR5-4800B", tCK_ps=_DDR5_TCK, CL=40, CWL=38, tRCD=39, tRCDWR=39, tRP=39, tRAS=77, tRC=116,
    tBL=8, tCCD_S=8, tCCD_L=12, tRRD_S=8, tRRD_L=12, tFAW=32, tWTR_S=6, tWTR_L=24, tWR=72, tRTP=18,
    tRFC=_cycles(295, _DDR5_TCK), tREFI=_cycles(3900, _DDR5_TCK), tRFCpb=_cycles(130, _DDR5_TCK),
    tREFIpb=_cycles(3900, _DDR5_TCK) // 4, tRTRS=2,
    bankgroups=8, banks_per_group=4, rows=65536, columns=1024, burst_length=16, bus_bits=32,
    vdd=1.1, idd0=60, idd2n=46, idd3n=52, idd4r=230, idd4w=210, idd5b=275, devices_per_rank=4)

_HBM2E_TCK = 625
HBM2E = DramTiming(
    name="HBM2E", tCK_ps=_HBM2E_TCK, CL=_cycles(14, _HBM2E_TCK), CWL=8, tRCD=_cycles(14, _HBM2E_TCK),
    tRCDWR=_cycles(12, _HBM2E_TCK), tRP=_cycles(14, _HBM2E_TCK), tRAS=_cycles(34, _HBM2E_TCK),
    # 48 ns is 76.8 nCK, but the rounded tRAS + tRP is 78: tRC may not be shorter than them.
    tRC=_cycles(34, _HBM2E_TCK) + _cycles(14, _HBM2E_TCK), tBL=2, tCCD_S=2, tCCD_L=4, tRRD_S=_cycles(4, _HBM2E_TCK),
    tRRD_L=_cycles(4, _HBM2E_TCK), tFAW=_cycles(15, _HBM2E_TCK), tWTR_S=_cycles(6, _HBM2E_TCK),
    tWTR_L=_cycles(8, _HBM2E_TCK), tWR=_cycles(16, _HBM2E_TCK), tRTP=_cycles(4, _HBM2E_TCK),
    tRFC=_cycles(350, _HBM2E_TCK), tREFI=_cycles(3900, _HBM2E_TCK), tRFCpb=_cycles(160, _HBM2E_TCK),
    tREFIpb=_cycles(3900, _HBM2E_TCK) // 16, tRTRS=2,
    bankgroups=4, banks_per_group=4, rows=32768, columns=64, burst_length=4, bus_bits=64,
    vdd=1.2, idd0=65, idd2n=40, idd3n=55, idd4r=390, idd4w=500, idd5b=250, devices_per_rank=1)

PRESETS: Registry[DramTiming] = Registry("DRAM preset", {
    t.name: t.validated() for t in (DDR4_2400R, DDR4_3200AA, HBM2, DDR5_4800B, HBM2E)})
"""Every preset by the name the controller's ``standard`` parameter takes (its check, and the
hint for a misspelt one)."""


TL_DRAM_NEAR_SEGMENT = {"tRCD": (3, 5), "tRP": (3, 5), "tRAS": (10, 15), "tRC": (13, 20)}
"""TL-DRAM (Lee et al., HPCA 2013) near-segment vs normal timings in DDR3-800 cycles, as
(near, normal) pairs: the latency ratios of a fast (short-bitline) subarray."""


def fast_subarray_timing(t: DramTiming) -> DramTiming:
    """The timing of a fast subarray of preset ``t``: an assumption, not a datasheet figure.

    Each array timing of :data:`TL_DRAM_NEAR_SEGMENT` is scaled by its near/normal ratio and
    rounded up to whole cycles; tRC is at least the scaled tRAS + tRP. Column, bus and
    refresh timings are unchanged (they do not depend on bitline length). In-DRAM caches
    (FIGCache-Fast, LISA-VILLA) use it for their fast subarrays.
    """
    scaled = {name: -(-getattr(t, name) * near // normal) for name, (near, normal) in TL_DRAM_NEAR_SEGMENT.items()}
    scaled["tRC"] = max(scaled["tRC"], scaled["tRAS"] + scaled["tRP"])
    scaled["tRCDWR"] = -(-t.tRCDWR * TL_DRAM_NEAR_SEGMENT["tRCD"][0] // TL_DRAM_NEAR_SEGMENT["tRCD"][1])
    return attrs.evolve(t, name=f"{t.name} fast subarray", **scaled).validated()


_CLOCKS: dict[tuple[str, int], ClockDomain] = {}


def dram_clock(timing: DramTiming) -> ClockDomain:
    """The clock domain of period tCK for a preset: one shared object per name and period,
    so a controller and its checker tick in the same domain."""
    key = (timing.name, timing.tCK_ps)
    domain = _CLOCKS.get(key)
    if domain is None:
        domain = _CLOCKS[key] = ClockDomain(timing.name.replace("-", "_"), timing.tCK_ps)
    return domain


def preset(name: str) -> DramTiming:
    """The preset called ``name``; an ArchError with a did-you-mean hint otherwise."""
    return PRESETS.lookup(name)
