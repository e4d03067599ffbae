"""Registers: state that changes only at the commit phase of a clock edge.

During ``tick()`` a component reads ``reg.value`` (the value latched at the previous edge)
and calls ``reg.set(v)`` to give the value it takes after this edge. Because every reader
sees the old value until the kernel commits, results do not depend on tick order. Another
component may read a register directly (a registered wire) for the same reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .component import Component


class Register:
    """One named register of a component; ``width`` (bits) is used by waveforms.

    ``value`` is an int, float, bool or str; strings show as component state in GTKWave.

    What an observer (a tracer) may use, read-only unless said otherwise:

    * ``value``: the value latched at the previous edge (the kernel writes it at commit);
    * ``next``: the value it takes at the end of the current edge (``value`` if ``set`` was
      not called); observers see it in ``registers(t, dirty)``, before the commit;
    * ``var``: the observer's handle for this register, ``None`` while no observer watches
      it. The kernel never reads it; the observer that selected the register sets it and
      puts ``None`` back when it stops;
    * ``queued``: the register is in this edge's commit list (``set`` was called). An observer
      that commits the registers itself (``commit_registers``, see
      :meth:`Simulator.add_observer`) writes ``value = next`` and ``queued = False`` for every
      register it is given, exactly as the kernel's own commit would.
    """

    # ``next`` is a plain slot, not a property, because tracers read it for every changed
    # register at every edge; only ``set`` and the kernel write it.
    __slots__ = ("name", "owner", "value", "width", "var", "next", "queued", "_commit")

    def __init__(self, owner: Component, name: str, init: Any = 0, width: int | None = None):
        self.owner = owner
        self.name = name
        self.value = init
        if width is None:
            width = 1 if isinstance(init, bool) else (32 if isinstance(init, int) else 0)
        self.width = width
        self.var: Any = None
        self.next = init
        self.queued = False
        self._commit: list = []  # the simulator's commit list, bound at elaboration

    @property
    def path(self) -> str:
        """The hierarchical name, e.g. ``top.fifo.count``."""
        return f"{self.owner.path}.{self.name}"

    def set(self, value: Any) -> None:
        """Give the value this register takes at the end of the current edge."""
        self.next = value
        if not self.queued:
            self.queued = True
            self._commit.append(self)

    def __repr__(self) -> str:
        return f"<Register {self.path}={self.value!r}>"
