"""The SSR half of the Snitch core's CSR instructions: writing an SSR's configuration
registers (repeat, bounds, strides, the indirection's index configuration and base) and
starting a job by writing its read or write pointer, with the checks the hardware leaves to
the programmer made into faults. The register map is :data:`.isa.SSR_CSRS`, the one table the
assembler, this model and the compiled loop read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .isa import SSR_BOUND, SSR_CSRS, SSR_IDX_BASE, SSR_IDX_CFG, SSR_INDIRECT, SSR_REPEAT, SSR_RPTR, SSR_SHIFT_MAX

if TYPE_CHECKING:
    from .program import Instruction
    from .ssr import SsrStreamer


class SsrConfiguration:
    """Mixed into :class:`~archmodel.models.compute.core.SnitchCore`: the core's streamers
    (``ssrs``), its TCDM window (``tcdm_base``, ``tcdm_end``), registers ``x``, the ``s_sync``
    stall count and ``fault``/``fail`` are the core's."""

    def ssr_csr(self, ins: Instruction, name: str, op: str, new: int) -> bool:
        """Execute CSR instruction ``ins`` (``op``, operand ``new``) on SSR register ``name``;
        False when it must wait (a job start while the stream's shadow job slot is taken)."""
        x = self.x
        stream, reg, dim = SSR_CSRS[name]
        s = self.ssrs[stream]
        if reg.code >= SSR_RPTR:
            if op not in ("csrrw", "csrrwi"):
                self.fault(ins, f"start an SSR job by writing {name} with csrw")
            if reg.indirect and stream not in SSR_INDIRECT:
                self.fault(ins, f"SSR {stream} has no indirection (SSRs {', '.join(map(str, SSR_INDIRECT))} have)")
            if len(s.jobs) >= 1 and s.active:
                self.s_sync += 1
                return False  # the shadow job slot is taken: wait for the stream
            base = new & 0xFFFFFFFF
            if reg.indirect:
                self._check_indirect(ins, s, base)
                s.launch(base, 1, reg.job == "write", True)
                old = 0
            else:
                low, high, count = s.extent(base, dim + 1)
                strides = s.cfg_strides[:dim + 1]
                if base % 8 or any(st % 8 for st in strides):
                    self.fault(ins, f"SSR {stream} job at 0x{base:08x} with strides {strides} is not 8-byte aligned")
                if low < self.tcdm_base or high + 8 > self.tcdm_end:
                    self.fault(ins, f"SSR {stream} job touches 0x{low:08x} .. 0x{high + 7:08x}, "
                                    f"outside the TCDM (0x{self.tcdm_base:08x} .. 0x{self.tcdm_end - 1:08x})")
                s.launch(base, dim + 1, reg.job == "write")
                old = 0
        else:
            code = reg.code
            if code == SSR_REPEAT:
                old = s.repeat
            elif code == SSR_IDX_CFG:
                old = s.idx_cfg
            elif code == SSR_IDX_BASE:
                old = s.idx_base
            else:
                old = (s.cfg_bounds if code == SSR_BOUND else s.cfg_strides)[dim]
            value = csr_update(op, old, new)
            if code == SSR_REPEAT:
                s.repeat = value
            elif code == SSR_IDX_CFG:
                s.idx_cfg = value
            elif code == SSR_IDX_BASE:
                s.idx_base = value
            else:
                (s.cfg_bounds if code == SSR_BOUND else s.cfg_strides)[dim] = value
        if ins.rd:
            x[ins.rd] = old
        return True

    def _check_indirect(self, ins: Instruction, s: SsrStreamer, base: int) -> None:
        """Fault unless an indirect job of ``s`` at index array ``base`` is well formed: index
        size 1-8 bytes, shift at most SSR_SHIFT_MAX, indices aligned and inside the TCDM,
        ``idx_base`` 8-byte aligned (the RTL drops the low bits; we say so instead)."""
        size, shift = s.idx_cfg & 0xFF, (s.idx_cfg >> 8) & 0xFF
        where = f"SSR {s.index} indirect job at 0x{base:08x}"
        if size > 3 or shift > SSR_SHIFT_MAX or s.idx_cfg >> 16:
            self.fault(ins, f"{where}: idx_cfg 0x{s.idx_cfg:x} asks for index size 2**{size} bytes and shift "
                            f"{shift} (sizes 2**0 .. 2**3, shifts 0 .. {SSR_SHIFT_MAX})")
        if base % (1 << size) or s.idx_base % 8:
            self.fault(ins, f"{where}: the indices must be aligned to their {1 << size} bytes and idx_base "
                            f"0x{s.idx_base:08x} to 8")
        low, high = s.extent_indirect(base)
        if low < self.tcdm_base or high >= self.tcdm_end:
            self.fault(ins, f"{where}: its indices 0x{low:08x} .. 0x{high:08x} are outside the TCDM "
                            f"(0x{self.tcdm_base:08x} .. 0x{self.tcdm_end - 1:08x})")

    def stream_fault(self, s: SsrStreamer, address: int) -> None:
        """Stop the run: element ``s.i_count`` of ``s``'s indirect job is outside the TCDM."""
        self.fail(f"core {self.hartid}: SSR {s.index} indirect element {s.i_count} at 0x{address:08x} is outside "
                  f"the TCDM (0x{self.tcdm_base:08x} .. 0x{self.tcdm_end - 1:08x}): index too large for "
                  f"idx_base 0x{s.i_base:08x}")


def csr_update(op: str, old: int, new: int) -> int:
    """The value a CSR holds after ``op`` (write, set bits, clear bits) with operand ``new``."""
    if op in ("csrrw", "csrrwi"):
        return new
    if op in ("csrrs", "csrrsi"):
        return old | new
    return old & ~new
