"""Drivers above the models: design-space sweeps on Dask, their tables and plots, and a
network's latency-throughput curve measured as BookSim measures (:mod:`.network`).

:func:`sweep` runs a ``.arch`` system (or a builder) over a grid, zipped lists or random
samples of its parameters, on local Dask worker processes or an existing Dask cluster, and
returns one row per point (its parameters, seed, outcome, run time, input SHA-256 and scalar
statistics); with a CSV path it writes rows as points finish and resumes where a CSV stops.
``archmodel sweep`` is the same from the command line (:mod:`.command`).
"""

from .execution import Executor, cpu_count
from .plots import PlotSpec, parse_plot, plot
from .points import Axis, Point, generate, parse_axis, parse_fixed
from .runner import FAILED, RUN_COLUMNS, TIMING_COLUMNS, Study, run_point
from .sweep import Plan, Sweep, SweepResult, sweep, table

__all__ = ["Axis", "Executor", "FAILED", "Plan", "PlotSpec", "Point", "RUN_COLUMNS", "Study", "Sweep", "SweepResult",
           "TIMING_COLUMNS", "cpu_count", "generate", "parse_axis", "parse_fixed", "parse_plot", "plot", "run_point", "sweep", "table"]
