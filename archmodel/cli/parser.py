"""The argument parser of the ``archmodel`` command."""

from __future__ import annotations

import argparse

from .. import __version__
from .inspection import cmd_check, cmd_show
from .listing import cmd_list
from .running import cmd_run
from .sweeping import cmd_sweep

DESCRIPTION = "The archmodel command line: run, check, list, show and sweep."


def _whole_number(low: int, unit: str, why: str):
    """An argparse type: a whole number of at least ``low`` (``why`` is its docstring)."""
    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number{unit}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}{unit}, got {value}")
        return value
    convert.__doc__ = why
    return convert


_seed = _whole_number(0, "", "A random seed: numpy's generators take whole numbers from 0 up only.")
_at_least_one = _whole_number(1, " cycle", "An argument that counts cycles (0 would report a deadlock at the "
                                           "first edge that moves nothing).")


def make_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``archmodel`` command."""
    parser = argparse.ArgumentParser(prog="archmodel", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"archmodel {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def arch_options(cmd, builder: bool = True):
        cmd.add_argument("target", help="FILE.arch" + (", or MODULE:FUNCTION / FILE.py:FUNCTION returning the "
                                                       "top component" if builder else ""))
        cmd.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                         help="a parameter of the top (a .arch expression, e.g. -p 'lat=2 ns') or keyword "
                              "argument of the builder (repeatable)")
        cmd.add_argument("--top", metavar="NAME", help="the system or module of the .arch file to build")
        cmd.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                         help="a Python file whose @model classes join the catalogue (repeatable)")
        cmd.add_argument("--import-path", action="append", default=[], metavar="DIR",
                         help="a folder .arch imports may also come from (repeatable; by default "
                              "only the importing file's folder and the bundled library)")
        cmd.add_argument("--max-instances", type=int, default=1_000_000, metavar="N",
                         help="refuse .arch systems of more than N components and channels, those models "
                              "build inside them included (default 1000000, about 2-3 GB)")

    run = sub.add_parser("run", help="simulate a system and print its statistics")
    arch_options(run)
    run.add_argument("--cycles", type=_at_least_one, metavar="N", help="stop after this many cycles of the top clock")
    run.add_argument("--until", metavar="TIME", help="stop at this simulated time, e.g. 10us")
    run.add_argument("--seed", type=_seed, default=0, help="global random seed, 0 or more (default 0)")
    run.add_argument("--vcd", nargs="?", const="auto", metavar="FILE",
                     help="write a VCD (and a .gtkw beside it); default waves/<top>.vcd")
    run.add_argument("--trace", action="append", metavar="GLOB",
                     help="signals to trace, e.g. 'top.cpu.*' (repeatable; implies --vcd)")
    run.add_argument("--trace-from", metavar="TIME", help="start of the traced time window")
    run.add_argument("--trace-to", metavar="TIME", help="end of the traced time window")
    run.add_argument("--stats", metavar="FILE", help="write statistics and the run manifest as JSON, or as CSV if FILE ends in .csv")
    run.add_argument("--watchdog", type=_at_least_one, default=100_000, metavar="CYCLES",
                     help="report a deadlock after this many cycles without a transfer (default 100000)")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show a progress bar (default: when stderr is a terminal)")
    run.add_argument("-q", "--quiet", action="store_true", help="do not print the statistics table")
    run.add_argument("--processes", type=_at_least_one, default=1, metavar="N",
                     help="run the top's parts (Manticore's chiplets) in up to N processes when they exchange no "
                          "message; if they do, the run starts again in one (default 1)")
    run.set_defaults(handler=cmd_run)

    lst = sub.add_parser("list", help="list the model catalogue and the bundled systems, or document one model")
    lst.add_argument("model", nargs="?", help="a model name, e.g. Fifo")
    lst.add_argument("--systems", action="store_true",
                     help="list the bundled systems instead, each with its description (archmodel run NAME runs one)")
    lst.add_argument("--plugin", action="append", default=[], metavar="FILE.py",
                     help="a Python file whose @model classes join the catalogue (repeatable)")
    lst.set_defaults(handler=cmd_list)

    show = sub.add_parser("show", help="print the elaborated hierarchy of a system")
    arch_options(show)
    show.add_argument("--dot", metavar="FILE", help="also write the connection graph for Graphviz (.arch files)")
    show.set_defaults(handler=cmd_show)

    sweep = sub.add_parser("sweep", help="run a system over a grid or random sample of its parameters on Dask "
                                         "workers; a CSV row per point, a plot")
    arch_options(sweep)
    sweep.add_argument("--sweep", action="append", required=True, metavar="NAME=VALUES",
                       help="a parameter to vary: START:STOP:STEP (stop inclusive), LOW:HIGH (with --samples) or "
                            "V1,V2,... (.arch expressions, e.g. 'traffic=\"uniform\",\"transpose\"'); repeatable: a grid")
    sweep.add_argument("--zip", action="store_true", help="pair the i-th values of every --sweep instead of a grid")
    sweep.add_argument("--samples", type=int, metavar="N", help="N random points drawn from the --sweep ranges and lists")
    sweep.add_argument("--seed", type=_seed, default=0,
                       help="simulation seed of every point, and seed of --samples (default 0)")
    sweep.add_argument("--seeds", type=int, default=1, metavar="K", help="run each point with seeds SEED .. SEED+K-1")
    sweep.add_argument("--metric", action="append", metavar="GLOB",
                       help="statistics to keep as columns, e.g. '*.net.packet_latency*' (repeatable; default all)")
    sweep.add_argument("--cycles", type=_at_least_one, metavar="N", help="stop each run after this many cycles of the top clock")
    sweep.add_argument("--until", metavar="TIME", help="stop each run at this simulated time, e.g. 10us")
    sweep.add_argument("--watchdog", type=_at_least_one, default=100_000, metavar="CYCLES",
                       help="report a deadlock after this many cycles without a transfer (default 100000)")
    sweep.add_argument("--workers", type=int, metavar="N",
                       help="local Dask worker processes (default: the CPU count; 0 runs the points in this process)")
    sweep.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on an existing Dask scheduler (tcp://host:8786, or a scheduler file .json)")
    sweep.add_argument("--csv", metavar="FILE", help="the rows, written as points finish (default "
                                                     "waves/<file or function>-sweep.csv); "
                                                     "points already in it are skipped")
    sweep.add_argument("--fresh", action="store_true", help="replace the CSV instead of resuming it")
    sweep.add_argument("--retry-failed", action="store_true", help="run the points whose rows in the CSV failed again")
    sweep.add_argument("--dry-run", action="store_true", help="list the points and which the CSV holds; run nothing")
    sweep.add_argument("--plot", metavar="SPEC", help="x=COLUMN,y=COLUMN[,hue=COLUMN], or noc[,x=PARAM][,hue=PARAM] for "
                                                      "the latency-throughput figure (the default for a Noc swept over one parameter)")
    sweep.add_argument("--png", metavar="FILE", help="where to draw the plot (default: the CSV path with .png)")
    sweep.set_defaults(handler=cmd_sweep)

    check = sub.add_parser("check", help="parse and elaborate a .arch file, reporting every error found")
    arch_options(check, builder=False)
    check.set_defaults(handler=cmd_check)
    return parser


