"""The ``.arch`` front end: parser (Lark LALR over ``dsl/arch.lark``), syntax tree with source
spans, elaboration into kernel components, diagnostics, units, and the registries of topology
generators and workloads the language resolves names against.

``load(path)`` is the entry point: it returns an :class:`Elaborated` whose ``top`` goes to a
:class:`~archmodel.kernel.Simulator`, or raises :class:`LanguageErrors` holding every
diagnostic of the file.
"""

from .elaborate import Elaborated, check_library, is_library, load
from .structure import Limits, param_unit
from .errors import LanguageErrors
from .overrides import parse_overrides
from .parser import parse, parse_expression
from .show import show_text, to_dot
from .topology import register_topology, topology_generators
from .workloads import WORKLOADS, register_workload, workloads

__all__ = ["WORKLOADS", "Elaborated", "LanguageErrors", "Limits", "check_library", "is_library", "load", "param_unit", "parse", "parse_expression", "parse_overrides",
           "register_topology", "register_workload", "show_text", "to_dot", "topology_generators", "workloads"]
