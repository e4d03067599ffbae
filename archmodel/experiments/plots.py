"""Plots of a sweep's table (matplotlib, PNG).

``--plot x=rate,y=Top.net.accepted,hue=depth`` draws one column against another, a line per
value of ``hue``; points that differ only in their seed are averaged, with their range as
error bars; where other swept parameters vary too the points are drawn unjoined.
``--plot noc`` (optionally ``,x=rate,hue=vcs``) is BookSim's latency-throughput figure of the
system's network: packet and network latency, and accepted throughput, against the offered
rate, and the saturation rate of each curve (average packet latency at twice the zero-load
latency, :func:`~archmodel.experiments.network.saturation_rate`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from fractions import Fraction
from pathlib import Path

import attrs

from ..kernel import ArchError, did_you_mean
from ..lang import units
from .network import saturation_rate
from .runner import FAILED, RUN_COLUMNS

PLOT_HINT = "for example: --plot x=rate,y=Mesh8x8.net.packet_latency,hue=depth, or --plot noc"
NOC_FIGURES = ("packet_latency", "network_latency", "accepted", "offered")


@attrs.frozen
class PlotSpec:
    """What to plot: ``kind`` ``xy`` (``y`` against ``x``) or ``noc`` (the latency-throughput
    figure of the network at ``noc``, the path of a ``Noc``), a line per ``hue`` value."""

    kind: str
    x: str | None = None
    y: str | None = None
    hue: str | None = None
    noc: str | None = None

    def columns(self) -> dict:
        """The column of each role, the NoC figure's columns included."""
        roles = {"x": self.x, "y": self.y, "hue": self.hue}
        if self.kind == "noc":
            roles.update({figure: f"{self.noc}.{figure}" for figure in NOC_FIGURES})
        return {role: column for role, column in roles.items() if column is not None}


def parse_plot(spec: str) -> PlotSpec:
    """``x=COLUMN,y=COLUMN[,hue=COLUMN]`` or ``noc[,x=PARAM][,hue=PARAM]`` -> :class:`PlotSpec`
    (columns are checked later, against the sweep: :func:`check_plot`)."""
    kind, fields = "xy", {}
    for item in (part.strip() for part in spec.split(",")):
        key, sep, value = item.partition("=")
        if not sep and key == "noc":
            kind = "noc"
        elif sep and key in ("x", "y", "hue") and value and key not in fields:
            fields[key] = value
        else:
            raise ArchError(f"--plot '{spec}': '{item}' is not x=COLUMN, y=COLUMN, hue=COLUMN or noc", hint=PLOT_HINT)
    if kind == "xy" and not ("x" in fields and "y" in fields):
        raise ArchError(f"--plot '{spec}' needs x= and y=", hint=PLOT_HINT)
    if kind == "noc" and "y" in fields:
        raise ArchError(f"--plot '{spec}': the latency-throughput plot chooses its own y", hint=PLOT_HINT)
    return PlotSpec(kind, **fields)


def check_plot(spec: PlotSpec, names: list[str], axes: list[str], columns: list[str], noc: str | None) -> PlotSpec:
    """The spec completed and checked against a sweep: its parameter ``names`` (``axes`` the
    swept ones), the statistic ``columns`` it keeps, and its network (``noc``)."""
    if spec.kind == "noc":
        if noc is None:
            raise ArchError("--plot noc: the system has no Noc", hint="plot columns with --plot x=...,y=...")
        free = [a for a in axes if a != spec.hue]  # the one swept parameter that is not the hue is the rate
        x = spec.x or (free[0] if len(free) == 1 else None)
        if x is None:
            raise ArchError("--plot noc: say which swept parameter is the offered rate, e.g. --plot noc,x=rate",
                            hint=PLOT_HINT)
        spec = attrs.evolve(spec, x=x, noc=noc)
    known = names + list(RUN_COLUMNS) + columns
    for role, column in spec.columns().items():
        if column not in known:
            why = (" (not kept: add it to --metric)" if spec.kind == "noc" and role in NOC_FIGURES else "")
            raise ArchError(f"--plot: {role} '{column}' is not a column of this sweep{why}",
                            hint=did_you_mean(column, known) or "columns: the parameters, "
                            + ", ".join(RUN_COLUMNS) + " and the statistics")
    return spec


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


_QUANTITY_TEXT = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z/]+)\s*")


def _quantity(value) -> units.Quantity | None:
    """A value written as a number and a unit (``25 Mbit/s``, as a sweep's row keeps it), or None."""
    match = _QUANTITY_TEXT.fullmatch(str(value).strip('"'))
    if match is None or match.group(2) not in units.UNITS:
        return None
    quantity = units.normalise(units.quantity(Fraction(match.group(1)), match.group(2)))
    return quantity if isinstance(quantity, units.Quantity) else None


def axis_order(value) -> tuple:
    """The sort key of a plot's x values and legend entries: numbers in numeric order (2 before
    10), then quantities by dimension and size (25 Mbit/s before 1.6 Gbit/s, whatever their
    units' prefixes), then text."""
    number = _number(value)
    if number is not None:
        return (0, (0, 0), number, "")
    quantity = _quantity(value)
    if quantity is not None:
        return (1, quantity.dim, quantity.value, str(value))
    return (2, (0, 0), 0, str(value))


def _groups(rows: list[dict], hue: str | None) -> dict:
    groups = defaultdict(list)
    for row in rows:
        groups[row.get(hue) if hue else None].append(row)
    return dict(sorted(groups.items(), key=lambda item: axis_order(item[0])))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_xy(rows: list[dict], spec: PlotSpec, path: str | Path, axes: list[str], title: str = "") -> None:
    """Draw ``spec.y`` against ``spec.x`` from the rows that did not fail, to a PNG."""
    plt = _pyplot()
    ok = [r for r in rows if r.get("outcome") not in FAILED and r.get(spec.y) is not None and r.get(spec.x) is not None]
    others = [a for a in axes if a not in (spec.x, spec.hue)]
    joined = all(len({r.get(a) for r in ok}) <= 1 for a in others)
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for hue, group in _groups(ok, spec.hue).items():
        label = f"{spec.hue}={hue}" if spec.hue else None
        if not joined:
            ax.plot([r[spec.x] for r in group], [r[spec.y] for r in group], "o", label=label)
            continue
        by_x = defaultdict(list)
        for row in group:
            by_x[row[spec.x]].append(row[spec.y])
        xs = sorted(by_x, key=axis_order)
        means = [sum(by_x[x]) / len(by_x[x]) for x in xs]
        spread = [[m - min(by_x[x]) for x, m in zip(xs, means)], [max(by_x[x]) - m for x, m in zip(xs, means)]]
        ax.errorbar([str(x) if _number(x) is None else x for x in xs], means,
                    yerr=spread if any(len(v) > 1 for v in by_x.values()) else None, fmt="o-", capsize=3, label=label)
    ax.set_xlabel(spec.x)
    ax.set_ylabel(spec.y)
    if spec.hue:
        ax.legend(title=None)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _mean(values: list):
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _curve(rows: list[dict], x: str, column: dict) -> list[dict]:
    """One latency-throughput curve in rate order, the runs of one rate (seeds) averaged; a
    rate is stable only if every run of it was."""
    by_rate = defaultdict(list)
    for row in rows:
        by_rate[row[x]].append(row)
    return [{"rate": rate, "stable": all(r.get("outcome") != "unstable" for r in runs),
             **{figure: _mean([r.get(column[figure]) for r in runs])
                for figure in ("packet_latency", "network_latency", "accepted")}}
            for rate, runs in sorted(by_rate.items())]


def plot_noc(rows: list[dict], spec: PlotSpec, path: str | Path, title: str = "") -> dict:
    """BookSim's latency-throughput figure, a curve per ``hue`` value; returns each curve's
    zero-load latency and saturation rate (``{hue: (zero_load, saturation or None)}``)."""
    plt = _pyplot()
    column = spec.columns()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    found = {}
    top_rate = 0.0
    usable = [r for r in rows if r.get("outcome") not in FAILED and _number(r.get(spec.x)) is not None]
    x = spec.x
    assert x is not None  # check_plot gives a latency-throughput plot its x
    for index, (hue, group) in enumerate(_groups(usable, spec.hue).items()):
        color = f"C{index % 10}"  # a curve's latencies and throughput in one colour
        curve = _curve(group, x, column)
        label = f"{spec.hue}={hue}: " if spec.hue else ""
        measured = [p for p in curve if p["packet_latency"] is not None]
        left.plot([p["rate"] for p in measured], [p["packet_latency"] for p in measured], "o-", color=color, label=label + "packet")
        left.plot([p["rate"] for p in measured], [p["network_latency"] for p in measured], "s--", color=color, label=label + "network")
        right.plot([p["rate"] for p in curve], [p["accepted"] for p in curve], "o-", color=color,
                   label=label.rstrip(": ") or None)
        top_rate = max([top_rate] + [p["rate"] for p in curve])
        zero = curve[0]["packet_latency"] if curve and curve[0]["packet_latency"] else None
        if zero:
            left.axhline(2 * zero, color="grey", linestyle=":", linewidth=0.8)
            found[hue] = (zero, saturation_rate(curve, zero))
    left.set_xlabel(f"{spec.x} (offered, flits/terminal/cycle)")
    left.set_ylabel("latency (cycles); dotted: 2 x zero-load")
    left.set_yscale("log")
    left.legend(fontsize="small")
    right.plot([0, top_rate], [0, top_rate], ":", color="grey")
    right.set_xlabel(f"{spec.x} (offered, flits/terminal/cycle)")
    right.set_ylabel("accepted (flits/terminal/cycle)")
    if spec.hue:
        right.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return found


def plot(rows: list[dict], spec: PlotSpec, path: str | Path, axes: list[str], title: str = "") -> dict:
    """Draw ``spec`` from ``rows`` to the PNG ``path``; returns the saturation rates of a
    ``noc`` plot (empty for others)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if spec.kind == "noc":
        return plot_noc(rows, spec, path, title)
    plot_xy(rows, spec, path, axes, title)
    return {}
