"""Main memory: DRAM timing presets, address mapping, the controller with its device, an
independent timing checker, trace and synthetic frontends, energy, in-DRAM caches, and
interleaved multi-channel memories, set-associative caches; every memory holds its data (a sparse backing store)."""

from .checker import DramTimingChecker, jedec_rules
from .address import NAMED_ORDERS, AddressMapping
from .commands import COMMAND_NAMES, DramCommand
from .constraints import Constraint, scheduler_constraints
from .controller import FIXED_OVERHEAD_CYCLES, DramController
from .energy import DramEnergy
from .backing_store import BackingStore, FunctionalMemory
from .cache import Cache
from .cache_array import POLICIES as CACHE_POLICIES, CacheArray, MissClassifier
from .interleave import InterleavedMemory
from .frontend import skewed_streams
from .indram_cache import CACHE_MODES, InDramCacheController
from .subarrays import SubarrayLayout, SubarrayTimingChecker
from .frontend import DramTrafficGenerator, dramsim3_trace, ramulator_trace, synthetic_stream
from .timing import PRESETS, TIMING_FIELDS, DramTiming, fast_subarray_timing, preset

__all__ = ["AddressMapping", "BackingStore", "Cache", "CacheArray", "CACHE_POLICIES", "MissClassifier", "FunctionalMemory", "InterleavedMemory", "CACHE_MODES",
           "InDramCacheController", "SubarrayLayout", "SubarrayTimingChecker",
           "skewed_streams", "COMMAND_NAMES", "Constraint", "DramCommand", "DramController", "DramEnergy",
           "DramTiming", "DramTimingChecker", "fast_subarray_timing", "DramTrafficGenerator", "dramsim3_trace", "jedec_rules",
           "ramulator_trace", "synthetic_stream", "FIXED_OVERHEAD_CYCLES", "NAMED_ORDERS", "PRESETS", "TIMING_FIELDS", "preset",
           "scheduler_constraints"]
