"""Basic building blocks: queues, pipelines, arbiters, a crossbar, a banked SRAM, and
traffic sources and sinks for driving and measuring any model."""

from .arbiter import RoundRobinArbiter
from .condition_cycles import ConditionCycles
from .crossbar import Crossbar
from .delay_line import DelayLine
from .fifo import Fifo
from .sink import Arrival, Sink
from .source import Source
from .sram import Sram

__all__ = ["Arrival", "ConditionCycles", "Crossbar", "DelayLine", "Fifo", "RoundRobinArbiter", "Sink",
           "Source", "Sram"]
