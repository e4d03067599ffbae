"""DRAM commands: the closed vocabulary of the command bus and the message the controller
publishes for each command it issues (what a timing checker or a trace writer watches)."""

from __future__ import annotations

import attrs

ACT, PRE, RD, WR, REF, PREA, REFPB, RELOC = range(8)
COMMAND_NAMES = ("ACT", "PRE", "RD", "WR", "REF", "PREA", "REFpb", "RELOC")
"""Command codes by index: ACT activates a row, PRE precharges one bank, RD/WR move one burst,
REF refreshes all banks of a rank, PREA precharges all banks of a rank, REFpb refreshes one
bank set, RELOC moves one column between two rows of a bank (FIGARO)."""
COMMAND_COUNT = len(COMMAND_NAMES)


@attrs.frozen
class DramCommand:
    """One command on the command bus at DRAM cycle ``cycle``.

    ``bank`` is the bank within its bank group; ``flat_bank`` the bank's index within the
    channel. Rank-wide commands (REF, PREA) carry ``bank = -1``. ``row`` is the row an ACT
    opens (or a RD/WR/RELOC addresses), ``column`` the burst index within the row; both are
    -1 where they do not apply.
    """

    cycle: int
    kind: int
    rank: int = 0
    bankgroup: int = -1
    bank: int = -1
    flat_bank: int = -1
    row: int = -1
    column: int = -1

    @property
    def name(self) -> str:
        return COMMAND_NAMES[self.kind]

    def __str__(self) -> str:
        where = f"rank {self.rank}" if self.bank < 0 else f"rank {self.rank} bg {self.bankgroup} bank {self.bank}"
        row = f" row {self.row}" if self.row >= 0 else ""
        return f"{self.name} {where}{row} at cycle {self.cycle}"


class PublishesCommands:
    """How a DRAM controller tells who watches its command bus about a command it issued: the
    listeners added with ``add_command_listener`` (``self._listeners``) get the fields at
    once, and a checker on the ``cmd`` port (``self._cmd_on``) gets a :class:`DramCommand`."""

    def _publish(self, fields: tuple) -> None:
        for listener in self._listeners:
            listener(*fields)
        if self._cmd_on:
            if not self.cmd.ready:
                self.fail("cmd: the timing checker did not take the previous command (connect it with "
                          "latency 1 and the default capacity)")
            self.cmd.send(DramCommand(*fields))
