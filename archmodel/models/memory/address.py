"""Address mapping: how a physical address is sliced into channel, rank, bank group, bank,
row and column, as a configurable order of bit fields (Ramulator's naming, most significant
field first).

Fields: ``Ro`` row, ``Ba`` bank, ``Bg`` bank group, ``Ra`` rank, ``Co`` column (in bursts),
``Ch`` channel. The lowest ``log2(burst_bytes)`` bits are the offset inside one burst. An
order without ``Bg`` places the bank-group bits just below the bank bits, so the reference
``RoBaRaCoCh`` is row | bank | bank group | rank | column | channel | offset: consecutive
bursts stay in one row (column bits lowest above the offset). ``RoCoBaRaCh`` spreads
consecutive bursts over bank groups and banks; ``ChRaBaRoCo`` keeps a whole bank's rows
contiguous. Any permutation of the six fields is accepted.
"""

from __future__ import annotations

import re

from archmodel.kernel import ArchError

from .timing import DramTiming

NAMED_ORDERS = ("RoBaRaCoCh", "RoCoBaRaCh", "ChRaBaRoCo", "RoBgBaRaCoCh", "RoCoBgBaRaCh")
"""Orders the documentation and tests use; any permutation of Ro Ba Bg Ra Co Ch works."""

_FIELDS = ("Ro", "Ba", "Bg", "Ra", "Co", "Ch")


def _log2(value: int) -> int:
    return value.bit_length() - 1


class AddressMapping:
    """Decodes addresses for one DRAM organisation and field order.

    ``decode(address)`` gives ``(channel, rank, bankgroup, bank, row, column_burst)``;
    ``encode`` is its inverse (for tests and synthetic streams); ``flat_bank`` numbers the
    banks of a channel ``(rank * bankgroups + bankgroup) * banks_per_group + bank``.
    """

    def __init__(self, timing: DramTiming, order: str = "RoBaRaCoCh", channels: int = 1):
        tokens = re.findall(r"[A-Z][a-z]", order)
        if "".join(tokens) != order or any(t not in _FIELDS for t in tokens) or len(set(tokens)) != len(tokens):
            raise ArchError(f"address mapping '{order}' is not an order of the fields Ro Ba Bg Ra Co Ch",
                            hint="e.g. " + ", ".join(NAMED_ORDERS))
        if "Bg" not in tokens and "Ba" in tokens:
            tokens.insert(tokens.index("Ba") + 1, "Bg")
        missing = [f for f in _FIELDS if f not in tokens]
        if missing:
            raise ArchError(f"address mapping '{order}' lacks the field '{missing[0]}'",
                            hint="name each of Ro Ba Ra Co Ch once (Bg is optional)")
        if channels < 1 or channels & (channels - 1):
            raise ArchError(f"channels must be a power of two, got {channels}")
        self.order = order
        self.timing = timing
        widths = {"Ro": _log2(timing.rows), "Ba": _log2(timing.banks_per_group), "Bg": _log2(timing.bankgroups),
                  "Ra": _log2(timing.ranks), "Co": _log2(timing.bursts_per_row), "Ch": _log2(channels)}
        self.offset_bits = _log2(timing.burst_bytes)
        shift = self.offset_bits
        self.fields: dict[str, tuple[int, int]] = {}
        for token in reversed(tokens):
            self.fields[token] = (shift, (1 << widths[token]) - 1)
            shift += widths[token]
        self.address_bits = shift
        self.capacity_bytes = 1 << shift
        f = self.fields
        self._ch, self._ra, self._bg, self._ba, self._ro, self._co = (f["Ch"], f["Ra"], f["Bg"], f["Ba"], f["Ro"], f["Co"])

    def decode(self, address: int) -> tuple[int, int, int, int, int, int]:
        """(channel, rank, bankgroup, bank, row, column in bursts) of an address."""
        (cs, cm), (rs, rm), (gs, gm), (bs, bm), (os_, om), (ks, km) = (
            self._ch, self._ra, self._bg, self._ba, self._ro, self._co)
        return ((address >> cs) & cm, (address >> rs) & rm, (address >> gs) & gm, (address >> bs) & bm,
                (address >> os_) & om, (address >> ks) & km)

    def encode(self, channel: int = 0, rank: int = 0, bankgroup: int = 0, bank: int = 0, row: int = 0,
               column: int = 0) -> int:
        """The address of the first byte of a burst (inverse of ``decode``)."""
        address = 0
        for token, value in zip(("Ch", "Ra", "Bg", "Ba", "Ro", "Co"), (channel, rank, bankgroup, bank, row, column)):
            shift, mask = self.fields[token]
            if not 0 <= value <= mask:
                raise ArchError(f"{token} value {value} does not fit the mapping (maximum {mask})")
            address |= value << shift
        return address

    def flat_bank(self, rank: int, bankgroup: int, bank: int) -> int:
        """The bank's index within its channel."""
        t = self.timing
        return (rank * t.bankgroups + bankgroup) * t.banks_per_group + bank

    def bank_decoder(self):
        """A fast function address -> (flat bank, row, column burst) for one channel."""
        (rs, rm), (gs, gm), (bs, bm), (os_, om), (ks, km) = self._ra, self._bg, self._ba, self._ro, self._co
        g_count, b_count = self.timing.bankgroups, self.timing.banks_per_group

        def decode(address: int) -> tuple[int, int, int]:
            flat = (((address >> rs) & rm) * g_count + ((address >> gs) & gm)) * b_count + ((address >> bs) & bm)
            return flat, (address >> os_) & om, (address >> ks) & km
        return decode
