"""Models for the language tests, loaded with ``--plugin`` like any user plugin: ports with
declared widths, which no basic model has, and parameters whose unit only the declaration gives."""

from archmodel.kernel import Component, In, Out, Param, model


@model
class WideSender(Component):
    """Sends nothing; its output is 64 bits wide (for width-mismatch diagnostics)."""

    out = Out("64-bit words", width=64)


@model
class NarrowReceiver(Component):
    """Takes nothing; its input is 32 bits wide."""

    inp = In("32-bit words", width=32)


@model
class UnitProbe(Component):
    """Takes parameters whose unit only the declaration gives (no suffix in the name)."""

    delay = Param(int, 0, "a time in ps", unit="ps")
    hold = Param(int, 1, "a time in cycles of the probe's clock", unit="cycles")
    window = Param(int, 64, "a size in bytes", unit="bytes")
    lanes = Param(int, 1, "a plain number")
