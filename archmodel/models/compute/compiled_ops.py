"""The compiled Snitch cluster loop's primitives (numba versions of the ISA table's helper
functions) and the instruction dispatch generated from the table (:func:`.isa.define_dispatch`),
the FREP stagger, operand fields, the shared I$ fetch and the TCDM access check. Compiled
with the loop by :func:`.compiled_cluster._compiled_cluster_cycles`."""

from __future__ import annotations

import numpy as np

from .compiled_layout import (G_IC_CAP, G_IC_CLOCK, G_IC_HIT, G_IC_HITS, G_IC_MISS, G_IC_MISSES, G_IC_N,
                              G_TCDM_BASE, G_TCDM_END, I_RD, I_RS1, I_RS2, I_RS3, _DIV, _MULH, _MULHSU, _REM)
from .isa import define_dispatch
from .isa import div, fmax, fmin, rem, u32  # noqa: F401  (the Python model's own definitions, compiled with the loop)
from .isa import s32 as _s32


def _in32(v):
    return -0x80000000 <= v <= 0x7FFFFFFF


def _mul_supported(op, a, b):
    """Whether ``_mul`` reproduces the Python result exactly (products that fit 64 bits)."""
    if op == _MULH or op == _DIV or op == _REM:
        return _in32(a) and _in32(b)
    if op == _MULHSU:
        return _in32(a)
    return True


# The primitives the ISA table's semantics call, as the loop computes them (isa.py has the
# Python model's; fmin and fmax are the same functions, compiled).
def round32(v):
    return np.float64(np.float32(v))  # IEEE: beyond FP32's range is an infinity, as isa.round32


def copysign(a, b):
    return np.copysign(abs(a), b)


def fdiv(a, b):
    return a / b  # a zero divisor never gets here: _fp_would_exit hands those cycles to Python


def mulhu(a, b):
    return np.int64((np.uint64(a & 0xFFFFFFFF) * np.uint64(b & 0xFFFFFFFF)) >> np.uint64(32))


def fcvt_w(a):
    if a != a or a >= 2147483647.5:
        return 2147483647
    if a <= -2147483648.5:
        return -2147483648
    return np.int64(np.rint(a))


def fcvt_wu(a):
    if a != a or a >= 4294967295.5:
        return -1
    if a <= -0.5:
        return 0
    return _s32(np.int64(np.rint(a)))


# The results of the table's instructions, one branch per opcode of each group, written from
# the ISA table (an opcode without semantics cannot be numbered): _alu(op, a, b) before
# the 32-bit wrap, _mul(op, a, b) likewise, _branch(op, a, b) taken or not, _fp(op, a, b,
# c, fp32), _to_int(op, a, b) and _from_int(op, a).
_alu = define_dispatch("_alu", globals(), "alu")
_mul = define_dispatch("_mul", globals(), "mul")
_branch = define_dispatch("_branch", globals(), "branch")
_fp = define_dispatch("_fp", globals(), "fp")
_to_int = define_dispatch("_to_int", globals(), "toint")
_from_int = define_dispatch("_from_int", globals(), "fromint")


def _mod(v, n):
    """``v % n`` (Python's, for ``n`` > 0) without a division when ``v`` lies within ``n`` of
    0 .. n-1, as a ring buffer's head plus its count, or a round-robin distance, always does
    (an integer division costs more than the rest of a ring step)."""
    r = v - n if v >= n else (v + n if v < 0 else v)  # (conditional moves, no branch)
    if r >= n or r < 0:
        return v % n  # (further off: never for a ring or a distance)
    return r


def _stagger(reg, k, mask, bit):
    return (reg + k) % 32 if (mask >> bit) & 1 else reg


def _fields(code, i, k, mask):
    """rd, rs1, rs2, rs3 of instruction ``i`` in stagger copy ``k``."""
    if k == 0 or mask == 0:
        return code[i, I_RD], code[i, I_RS1], code[i, I_RS2], code[i, I_RS3]
    return (_stagger(code[i, I_RD], k, mask, 0), _stagger(code[i, I_RS1], k, mask, 1),
            _stagger(code[i, I_RS2], k, mask, 2), _stagger(code[i, I_RS3], k, mask, 3))


def _icache_fetch(g, ic_line, ic_ready, ic_stamp, line, cycle):
    """``SnitchICache.fetch``: extra cycles for ``line``; least recently used by stamps."""
    n = g[G_IC_N]
    for e in range(n):
        if ic_line[e] == line:
            g[G_IC_CLOCK] += 1
            ic_stamp[e] = g[G_IC_CLOCK]
            g[G_IC_HITS] += 1
            wait = ic_ready[e] - cycle
            return g[G_IC_HIT] if g[G_IC_HIT] > wait else wait
    g[G_IC_MISSES] += 1
    g[G_IC_CLOCK] += 1
    if n < g[G_IC_CAP]:
        e = n
        g[G_IC_N] = n + 1
    else:
        e = 0
        for k in range(1, n):
            if ic_stamp[k] < ic_stamp[e]:
                e = k
    ic_line[e] = line
    ic_ready[e] = cycle + g[G_IC_MISS]
    ic_stamp[e] = g[G_IC_CLOCK]
    return g[G_IC_MISS]


def _access_fault(g, addr, size):
    return addr % size != 0 or not (g[G_TCDM_BASE] <= addr <= g[G_TCDM_END] - size)


COMPILED = ("_mod", "_s32", "u32", "div", "rem", "mulhu", "round32", "copysign", "fdiv", "fmin", "fmax", "fcvt_w", "fcvt_wu",
            "_alu", "_in32", "_mul_supported", "_mul", "_branch", "_to_int", "_from_int", "_fp", "_stagger", "_fields",
            "_icache_fetch", "_access_fault")
"""The functions of this module numba compiles with the loop (see compiled_cluster)."""
