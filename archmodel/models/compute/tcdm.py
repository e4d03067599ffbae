"""The cluster's tightly coupled data memory and its interconnect, as one component."""

from __future__ import annotations

import numpy as np

from archmodel.kernel import Component, Formula, Param, at_least, in_range, model

TCDM_BASE = 0x1000_0000
"""Where the TCDM starts in every core's address space."""


class WordLane:
    """One 64-bit lane of a wide port into the TCDM, a requester of its arbitration: ``rid``
    its requester id, ``addr`` the word it presents, ``entry`` what it carries (None: idle);
    the owning port's subclass says in ``grant(cycle)`` what a granted word does."""

    __slots__ = ("owner", "rid", "addr", "entry")
    reads_stream = False  # the TCDM grants SSR read streams inline, everything else by grant()

    def __init__(self, owner, rid: int):
        self.owner = owner
        self.rid = rid
        self.addr = 0
        self.entry = None


@model
class SnitchTcdm(Component):
    """The word-interleaved TCDM of a Snitch cluster with its logarithmic interconnect.

    ``size_bytes`` of real data in ``banks`` banks of 64-bit words: ``bank = (address / 8)
    mod banks`` (Zaruba et al., IEEE Micro 2021: 128 KiB in 32 banks, 256 B/cycle). Every
    requester (each core's load/store port, its three SSR streamers, and the DMA's eight
    64-bit lanes) presents at most one request per cycle; each bank serves one of them per
    cycle, chosen round robin from the requester after the bank's last grant; the others
    retry next cycle (each loser counts one bank conflict). A granted read's data is usable
    ``latency_cycles`` later; a write takes effect at once.

    Abstracted: the interconnect is not a network of channels but one arbitration step per
    cycle inside the cluster's tick (the cluster calls :meth:`arbitrate`), which is exact for
    a single-cycle crossbar and much faster. Leaves out: atomics, the DMA's separate wide
    port (its lanes contend with the cores bank by bank instead), energy.
    """

    # Snitch's TCDM is 128 KiB; the caps keep a typo from exhausting memory at elaboration.
    size_bytes = Param(int, 128 * 1024, "capacity (at most 64 MiB)", unit="bytes", check=in_range(8, 64 << 20))
    banks = Param(int, 32, "64-bit banks (at most 1024)", check=in_range(1, 1024))
    latency_cycles = Param(int, 1, "cycles from grant until read data is usable", unit="cycles",
                           check=at_least(1))
    base_address = Param(int, TCDM_BASE, "first byte address")

    accesses = Formula("requests", "requests served", lambda t: t.n_grants)
    bank_conflicts = Formula("requests", "request-cycles lost to another requester of the same bank",
                             lambda t: t.n_conflicts)
    bandwidth_used = Formula("B/cycle", "bytes served per cycle",
                             lambda t: 8 * t.n_grants / t.elapsed_cycles)

    def setup(self) -> None:
        self.data = bytearray(self.size_bytes)
        view = memoryview(self.data)
        self.words = view.cast("d")
        self.singles = view.cast("f")
        self.rr = [-1] * self.banks
        self.n_grants = 0
        self.n_conflicts = 0
        self.requesters = 0
        self.conflicts_per_bank = [0] * self.banks
        self.grants_reg = self.register("bank_grants", 0, self.banks)
        self.traced = None

    def array(self, address: int, shape, dtype=np.float64) -> np.ndarray:
        """A numpy view of the TCDM contents at ``address`` (changes show in the model)."""
        count = int(np.prod(shape))
        offset = address - self.base_address
        itemsize = np.dtype(dtype).itemsize
        if offset < 0 or offset + count * itemsize > self.size_bytes or offset % itemsize:
            raise ValueError(f"{self.path}: {count} x {np.dtype(dtype).name} at 0x{address:08x} is not inside the TCDM")
        return np.frombuffer(self.data, dtype=dtype, count=count, offset=offset).reshape(shape)

    def arbitrate(self, cycle: int, requests: list) -> None:
        """Grant this cycle's requests, one per bank, round robin among the contenders."""
        if not requests:
            if self.traced and self.grants_reg.value:
                self.grants_reg.set(0)
            return
        nbanks = self.banks
        base = self.base_address
        banks = [((r.addr - base) >> 3) % nbanks for r in requests]
        rr = self.rr
        if len(set(banks)) == len(banks):
            granted = zip(banks, requests)  # no two requests share a bank: all are served
            self.n_grants += len(banks)
        else:
            # One pass: a bank's first requester holds it until one nearer after the bank's
            # last grant (round robin over requester ids) turns up; requester ids differ, so
            # this keeps the same winner as taking the minimum over the bank's group.
            owner = {}
            count = self.requesters
            per_bank = self.conflicts_per_bank
            lost = 0
            for bank, r in zip(banks, requests):
                holder = owner.setdefault(bank, r)
                if holder is not r:
                    last = rr[bank]
                    if (r.rid - last - 1) % count < (holder.rid - last - 1) % count:
                        owner[bank] = r
                    lost += 1
                    per_bank[bank] += 1
            self.n_conflicts += lost
            granted = owner.items()
            self.n_grants += len(owner)
        words = self.words
        ready = cycle + self.latency_cycles
        for bank, r in granted:
            rr[bank] = r.rid
            if r.reads_stream:
                # SsrStreamer.grant for a read stream (most grants), inlined: the word goes
                # into the FIFO and the address generator steps; the last step of a
                # dimension or of the job takes the general path.
                r.fifo.append([ready, words[(r.addr - base) >> 3], r.uses])
                if r.run:
                    r.run -= 1
                    r.addr += r.adj0
                else:
                    r.step_address()
            else:
                r.grant(cycle)
        if self.traced:
            mask = 0
            for bank in set(banks):
                mask |= 1 << bank
            if self.grants_reg.value != mask:
                self.grants_reg.set(mask)
