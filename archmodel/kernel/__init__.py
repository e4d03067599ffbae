"""The simulation kernel: time, clocks, components, ports, channels, registers, statistics.

It imports nothing else from archmodel; models, tracers, the language and the CLI build on it.
"""

from .budget import check_instances, instance_budget
from .channel import Channel, connect
from .component import Component, catalogue, component_rng, model, parts, register_model
from .errors import (ArchError, DeadlockError, ModelAssertion, ParameterError, PortError,
                     SimulationError, Span)
from .params import PYTHON, Param, ParamGroup, Spelling, accepts, at_least, in_range, one_of, unit_from_name
from .ports import In, InPort, Out, OutPort, unpaired_port
from .register import Register
from .lookahead import KeptHorizon, QuestionBackoff
from .simulator import RunResult, Simulator
from .source_files import read_lines, read_source
from .stats import (Bandwidth, Counter, Distribution, Formula, Level, Stat, Utilisation, stats_csv,
                    stats_dict, stats_table)
from .time import ClockDomain, format_time, parse_time, period_from_frequency
from .tree import Tree
from .vocabulary import ENGINES, Problem, Registry, choice_problem, closest, did_you_mean

__all__ = [
    "ENGINES", "PYTHON", "ParamGroup", "Problem", "Registry", "Spelling", "accepts", "choice_problem", "closest", "did_you_mean",
    "unit_from_name",
    "ArchError", "Bandwidth", "Channel", "ClockDomain", "Component", "Counter", "DeadlockError", "Distribution",
    "Formula", "In", "InPort", "Level", "ModelAssertion", "Out", "OutPort", "Param", "ParameterError",
    "KeptHorizon", "PortError", "QuestionBackoff", "Register", "RunResult", "SimulationError", "Simulator", "Span", "Stat", "Tree", "Utilisation", "at_least",
    "catalogue", "check_instances", "component_rng", "connect", "format_time", "in_range", "instance_budget", "model", "one_of", "parse_time", "parts",
    "period_from_frequency", "read_lines", "read_source", "register_model", "stats_csv", "stats_dict", "stats_table", "unpaired_port",
]
