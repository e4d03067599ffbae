"""The state machine of one DRAM bank, as the controller's waveforms and the timing checker
see it: closed, activating, open, precharging, refreshing.

A bank is ``closed`` (precharged); ACT makes it ``activating`` for tRCD, then ``open`` with
one row in the row buffer; PRE makes it ``precharging`` for tRP, then ``closed`` again; a
refresh makes it ``refreshing`` for tRFC. RD and WR need the bank ``open`` on the addressed
row; ACT needs it ``closed``; REF needs every bank of the rank ``closed``.
"""

from __future__ import annotations

CLOSED, ACTIVATING, OPEN, PRECHARGING, REFRESHING = "closed", "activating", "open", "precharging", "refreshing"
BANK_STATES = (CLOSED, ACTIVATING, OPEN, PRECHARGING, REFRESHING)


class BankProtocol:
    """The protocol view of one bank: which row is open, and whether a command is legal.

    Timing is not its business (the timing checker owns that); ``check(kind, row)`` returns
    a sentence describing the protocol error, or None.
    """

    __slots__ = ("open_row",)

    def __init__(self):
        self.open_row = -1

    def check(self, kind: str, row: int = -1) -> str | None:
        """None if ``kind`` may be issued to this bank now, else why not."""
        if kind == "ACT" and self.open_row >= 0:
            return f"ACT to a bank with row {self.open_row} still open"
        if kind in ("RD", "WR", "RELOC"):
            if self.open_row < 0:
                return f"{kind} to a closed bank"
            if kind != "RELOC" and row != self.open_row:
                return f"{kind} to row {row} while row {self.open_row} is open"
        if kind in ("REF", "REFpb") and self.open_row >= 0:
            return f"{kind} while row {self.open_row} is open"
        return None

    def apply(self, kind: str, row: int = -1) -> None:
        """Update the open row after a legal command."""
        if kind == "ACT":
            self.open_row = row
        elif kind in ("PRE", "PREA"):
            self.open_row = -1
