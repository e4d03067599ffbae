"""Statistics with units: counters, distributions, time-weighted levels and formulas.

A model declares its statistics as class attributes (like its ports); each instance gets
its own copy. Names are hierarchical (``top.fifo.enqueued``); every statistic has a unit
and a description, and ``summary()`` gives the derived figures people want (mean, p50, p99).
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

if TYPE_CHECKING:
    from .component import Component


class Stat:
    """Base of all statistics: a name, a unit and a description."""

    kind = "stat"
    owner: Component  # None in a declaration, the component in its copy

    def __init__(self, unit: str, doc: str = ""):
        self.unit = unit
        self.doc = doc
        self.name = ""
        self.owner = None  # type: ignore[assignment]

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # A declaration on a model class: each component gets its own copy on first use, kept
        # in the instance so later reads are plain attribute reads. Building a component
        # therefore costs nothing per statistic (100,000-component systems elaborate fast).
        if instance is None:
            return self
        stat = self.instantiate(instance)
        instance.__dict__[self.name] = stat
        return stat

    def instantiate(self, owner: Component) -> "Stat":
        """A fresh copy of this declaration belonging to ``owner``."""
        copy = type(self).__new__(type(self))
        copy.__dict__.update(self.__dict__)
        copy.owner = owner
        copy.reset()
        return copy

    def reset(self) -> None:
        """Forget everything recorded."""

    @property
    def path(self) -> str:
        return f"{self.owner.path}.{self.name}" if self.owner is not None else self.name

    def summary(self) -> dict:
        """The figures to report: ``{"value": ...}`` and, for distributions, more."""
        raise NotImplementedError

    def describe(self) -> str:
        """One catalogue line: ``enqueued: counter [messages] -- messages accepted``."""
        return f"{self.name}: {self.kind} [{self.unit}] -- {self.doc}"


class Counter(Stat):
    """A count of events or a sum of quantities (bytes, flits, cycles busy)."""

    kind = "counter"

    def reset(self) -> None:
        self.value: int | float = 0

    def add(self, amount: int | float = 1) -> None:
        """Count ``amount`` more (one event by default)."""
        self.value += amount

    def summary(self) -> dict:
        return {"value": self.value}


class Distribution(Stat):
    """Samples of a quantity (latency, size); reports count, mean, min, p50, p99, max.

    Samples are kept (8 bytes each) so percentiles are exact.
    """

    kind = "distribution"

    def reset(self) -> None:
        self.samples = array("d")

    def sample(self, value: float) -> None:
        """Record one observation."""
        self.samples.append(value)

    @property
    def count(self) -> int:
        return len(self.samples)

    @property
    def mean(self) -> float | None:
        return float(np.mean(self.samples)) if self.samples else None

    def percentile(self, q: float) -> float | None:
        """The q-th percentile (0-100), by the nearest-rank method, or None without samples."""
        if not self.samples:
            return None
        return float(np.percentile(np.frombuffer(self.samples, dtype=np.float64), q, method="inverted_cdf"))

    def histogram(self, bins: int = 10) -> tuple[list[int], list[float]]:
        """Counts per bin and the bin edges (numpy.histogram)."""
        counts, edges = np.histogram(np.frombuffer(self.samples, dtype=np.float64), bins=bins)
        return counts.tolist(), edges.tolist()

    def summary(self) -> dict:
        if not self.samples:
            return {"value": None, "count": 0}
        data = np.frombuffer(self.samples, dtype=np.float64)
        return {
            "value": float(data.mean()),
            "count": int(data.size),
            "min": float(data.min()),
            "p50": self.percentile(50),
            "p99": self.percentile(99),
            "max": float(data.max()),
        }


class Level(Stat):
    """A quantity that holds between changes (queue occupancy, banks open); reports its
    time-weighted mean and maximum. ``set(value)`` at the current simulated time."""

    kind = "level"

    def reset(self) -> None:
        self.value: int | float = 0
        self.maximum: int | float = 0
        self._area: int | float = 0
        self._since = 0

    def set(self, value: int | float, at_ps: int | None = None) -> None:
        """The quantity is ``value`` from now on, or from ``at_ps`` for a model that accounts
        a cycle other than the one it is running (times must not go backwards)."""
        now = self.owner.sim.now if at_ps is None else at_ps
        self._area += self.value * (now - self._since)
        self._since = now
        self.value = value
        if value > self.maximum:
            self.maximum = value

    def figures(self) -> tuple:
        """(value, maximum, area, since): everything the level holds, its running integral
        included, for a model that continues it elsewhere (a compiled loop) and hands it back
        with :meth:`resume`."""
        return self.value, self.maximum, self._area, self._since

    def resume(self, figures: tuple) -> None:
        """Take back a level's :meth:`figures`, as continued elsewhere."""
        self.value, self.maximum, self._area, self._since = figures

    def mean(self) -> float:
        """The time-weighted mean over the elapsed time of the owner's clock."""
        end = self.owner.elapsed_ps
        area = self._area + self.value * (end - self._since)
        return area / end if end else float(self.value)

    def summary(self) -> dict:
        return {"value": self.mean(), "max": self.maximum}


class Formula(Stat):
    """A figure derived from other statistics of the same component at report time, e.g.
    ``Formula("GB/s", "delivered bandwidth", lambda c: c.bytes.value / c.elapsed_ps * 1e3)``.
    Division by zero reports None."""

    kind = "formula"

    def __init__(self, unit: str, doc: str, compute: Callable):
        super().__init__(unit, doc)
        self.compute = compute

    @property
    def value(self) -> Any:
        """The figure computed now (None where it would divide by zero)."""
        try:
            return self.compute(self.owner)
        except ZeroDivisionError:
            return None

    def summary(self) -> dict:
        return {"value": self.value}


class Reported(Stat):
    """A statistic's figures as the run that held it reported them (a part of a system run in
    another process: :mod:`.partition`), standing in for it unchanged: the same ``kind``,
    unit, description and :meth:`summary`, and ``value`` its summary's value."""

    def __init__(self, kind: str, unit: str, doc: str, figures: dict):
        super().__init__(unit, doc)
        self.kind = kind
        self.figures = figures

    @property
    def value(self) -> Any:
        """The figure reported."""
        return self.figures["value"]

    def summary(self) -> dict:
        return dict(self.figures)


def format_value(value: Any) -> str:
    """A number as a table cell: integers exactly, floats to 4 significant digits."""
    if value is None:
        return "-"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


def stats_table(stats: list[Stat]) -> str:
    """The statistics as an aligned terminal table: name, value, unit, extras, description."""
    rows = [("statistic", "value", "unit", "detail", "description")]
    for stat in stats:
        summary = stat.summary()
        detail = " ".join(f"{k}={format_value(v)}" for k, v in summary.items() if k != "value")
        rows.append((stat.path, format_value(summary["value"]), stat.unit, detail, stat.doc))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = []
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:4])) + "  " + row[4])
    lines.insert(1, "-" * (sum(widths) + 8 + max(len(r[4]) for r in rows)))
    return "\n".join(line.rstrip() for line in lines)


def stats_dict(stats: list[Stat]) -> dict:
    """The statistics as a JSON-ready mapping from hierarchical name to figures."""
    return {s.path: {"unit": s.unit, "description": s.doc, **s.summary()} for s in stats}


class Bandwidth(Formula):
    """Bytes counted by another statistic of the same component, per simulated time, in GB/s
    (10^9 bytes per second) over the component's elapsed time."""

    def __init__(self, bytes_counter: str, doc: str):
        super().__init__("GB/s", doc, lambda c: getattr(c, bytes_counter).value * 1000 / c.elapsed_ps)


class Utilisation(Formula):
    """Busy cycles counted by another statistic of the same component, as a percentage of the
    component's elapsed cycles."""

    def __init__(self, busy_counter: str, doc: str):
        super().__init__("%", doc, lambda c: 100.0 * getattr(c, busy_counter).value / c.elapsed_cycles)


def stats_csv(stats: list[Stat], manifest: dict | None = None) -> str:
    """The statistics as CSV (name, value, unit, count, min, p50, p99, max, description), after
    one ``# manifest {json}`` comment line when a run manifest is given."""
    import csv
    import io
    import json

    out = io.StringIO()
    if manifest is not None:
        out.write("# manifest " + json.dumps(manifest, sort_keys=True, default=str) + "\n")
    extras = ("count", "min", "p50", "p99", "max")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("statistic", "value", "unit") + extras + ("description",))
    for stat in stats:
        summary = stat.summary()
        writer.writerow([stat.path, summary["value"], stat.unit] + [summary.get(k, "") for k in extras] + [stat.doc])
    return out.getvalue()
