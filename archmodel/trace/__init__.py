"""Waveforms: VCD files of registers and channel handshakes, with GTKWave save files.

The trace room observes the kernel (``sim.add_observer(VcdTracer("waves/run.vcd"))``);
models never import it.
"""

from .gtkw import Group, Trace, write_save_file, zoom_to_fit
from .selection import Selection
from .lines import summarize_payload
from .vcd_tracer import CHANNEL_SIGNALS, VcdTracer, signal_names

__all__ = ["CHANNEL_SIGNALS", "Group", "Selection", "Trace", "VcdTracer", "signal_names", "summarize_payload",
           "write_save_file", "zoom_to_fit"]
