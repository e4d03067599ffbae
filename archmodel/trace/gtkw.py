"""GTKWave save files (``.gtkw``) that open a VCD with something useful on screen at once.

One group per component holding its registers, then one sub-group per output port with the
channel handshake; integers in decimal, reals as reals; the window zoomed to show the whole
traced time span. Written with :class:`vcd.gtkw.GTKWSave`.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from vcd.gtkw import GTKWSave

WINDOW_WIDTH_PX = 1400
WINDOW_HEIGHT_PX = 800
SIGNALS_WIDTH_PX = 300
# Pixels of the wave pane in a window of the size above with the signal tree open (GTKWave
# 3.3.118 shows 800), less a margin so the last edge is not on the border.
WAVE_WIDTH_PX = 760
# GTKWave draws 2**-zoom / 200 time units per pixel (measured: zoom -10 shows 5.12 units/px).
_UNITS_PER_PX_AT_ZOOM_0 = 1 / 200


@dataclass
class Trace:
    """One displayed signal: its GTKWave name and data format (``dec``, ``hex``, ``real``...)."""

    name: str
    datafmt: str = "hex"


@dataclass
class Group:
    """A named group of traces with optional nested groups (a component and its ports)."""

    name: str
    traces: list[Trace] = field(default_factory=list)
    subgroups: list["Group"] = field(default_factory=list)

    def all_traces(self) -> list[Trace]:
        """Every trace of this group and its sub-groups, in display order."""
        return self.traces + [t for g in self.subgroups for t in g.all_traces()]


def zoom_to_fit(span_ps: int, wave_width_px: int = WAVE_WIDTH_PX) -> float:
    """The GTKWave zoom factor that shows ``span_ps`` time units across the wave pane."""
    span = max(span_ps, 1)
    return -math.log2(span / (wave_width_px * _UNITS_PER_PX_AT_ZOOM_0))


def write_save_file(save_path: str | os.PathLike, dump_path: str | os.PathLike, groups: list[Group],
                    start_ps: int, end_ps: int, named: str | os.PathLike | None = None) -> None:
    """Write a ``.gtkw`` for ``dump_path`` showing ``groups``, zoomed to [start_ps, end_ps].

    ``named`` is where the save file will live if it is written elsewhere first (under a
    temporary name, then renamed): the file names itself there, so GTKWave's "Write Save
    File" replaces it. The dump file is named relative to the save file when they share a
    directory, so the pair can be moved together; GTKWave resolves it against the save
    file's directory.
    """
    final_path, dump_path = os.fspath(named if named is not None else save_path), os.fspath(dump_path)
    same_dir = os.path.dirname(os.path.abspath(final_path)) == os.path.dirname(os.path.abspath(dump_path))
    with open(save_path, "w", encoding="utf-8", newline="\n") as stream:
        save = GTKWSave(stream)
        save.comment("written by archmodel.trace")
        save.dumpfile(os.path.basename(dump_path) if same_dir else dump_path, abspath=not same_dir)
        save.savefile(os.path.basename(final_path) if same_dir else final_path, abspath=not same_dir)
        save.timestart(start_ps)
        save.size(WINDOW_WIDTH_PX, WINDOW_HEIGHT_PX)
        save.signals_width(SIGNALS_WIDTH_PX)
        save.sst_expanded(True)
        save.zoom_markers(zoom_to_fit(end_ps - start_ps))
        opened = set()
        for group in groups:
            scope = group.name
            parts = scope.split(".")
            for depth in range(1, len(parts) + 1):
                prefix = ".".join(parts[:depth])
                if prefix not in opened:
                    opened.add(prefix)
                    save.treeopen(prefix)
        for group in groups:
            _write_group(save, group)


def _write_group(save: GTKWSave, group: Group) -> None:
    with save.group(group.name):
        for trace in group.traces:
            save.trace(trace.name, datafmt=trace.datafmt)
        for sub in group.subgroups:
            _write_group(save, sub)
