"""Models for the language tests, loaded with ``--plugin`` like any user plugin: ports with
declared widths, which no basic model has."""

from archmodel.kernel import Component, In, Out, model


@model
class WideSender(Component):
    """Sends nothing; its output is 64 bits wide (for width-mismatch diagnostics)."""

    out = Out("64-bit words", width=64)


@model
class NarrowReceiver(Component):
    """Takes nothing; its input is 32 bits wide."""

    inp = In("32-bit words", width=32)
