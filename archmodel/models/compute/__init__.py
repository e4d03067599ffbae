"""Compute models: the Snitch core and the Manticore cluster (cores, TCDM, DMA, barrier, I$),
the assembler for the programs they run, an ideal outside memory, and a core that plays a workload's memory references."""

from .assembler import AssemblyError, assemble, assemble_file
from .program import Instruction, Program
from .cluster import INSTRUCTION_BASE, SnitchCluster
from .core import SnitchCore
from .dma import SnitchDma
from .icache import SnitchICache
from .memory import FixedLatencyMemory
from .reference_core import Barrier, ReferenceCore, References
from .tcdm import TCDM_BASE, SnitchTcdm
from .tcdm_port import SnitchTcdmPort

__all__ = ["AssemblyError", "Barrier", "FixedLatencyMemory", "INSTRUCTION_BASE", "Instruction", "Program", "ReferenceCore", "References", "SnitchCluster",
           "SnitchCore", "SnitchDma", "SnitchICache", "SnitchTcdm", "SnitchTcdmPort", "TCDM_BASE", "assemble", "assemble_file"]
