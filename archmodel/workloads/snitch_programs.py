"""The building blocks of the Snitch cluster kernels' programs (:mod:`.snitch`, :mod:`.multicluster`,
the convolution kernels): address allocation, operands placed in and read from a memory
through its backdoor, the result check against numpy, DMA transfers and the double-buffered
DMA schedule, SSR job configuration, and assembly of a list of lines."""

from __future__ import annotations

import functools

import numpy as np

from archmodel.models.compute import SnitchCluster, assemble

WAIT_DMA = ["1: dmstati t6, 2", "   bnez t6, 1b"]
BARRIER = ["csrr zero, barrier"]


class Layout:
    """Bump allocation of TCDM (or outside) addresses, 8-byte aligned."""

    def __init__(self, base: int, size: int):
        self.base = base
        self.next = base
        self.end = base + size

    def take(self, nbytes: int, align: int = 8) -> int:
        self.next = (self.next + align - 1) // align * align
        address = self.next
        self.next += nbytes
        if self.next > self.end:
            raise ValueError(f"data does not fit: needs {self.next - self.base} bytes of {self.end - self.base}")
        return address


def check_result(cluster: SnitchCluster, name: str, got: np.ndarray, want: np.ndarray) -> None:
    """Stop the run unless ``got`` is numpy's ``want`` (to rounding); else mark the cluster's result good."""
    if not np.allclose(got, want, rtol=1e-9, atol=1e-9):
        worst = float(np.max(np.abs(np.asarray(got) - np.asarray(want))))
        cluster.fail(f"{name}: result differs from numpy (largest difference {worst:g})")
    cluster.result_ok = True


def outside_memory(cluster: SnitchCluster, memory, region: tuple | None = None):
    """The memory at the cluster's DMA port (or ``memory``) and an allocator over ``region``
    (first address, bytes) of it, all of it by default."""
    memory = memory if memory is not None else cluster.outside_memory()
    missing = [name for name in ("backdoor_write", "backdoor_read", "base_address", "size_bytes")
               if not hasattr(memory, name)]
    if memory is None or missing:
        found = "nothing is connected" if memory is None else \
            f"{memory.path} ({type(memory).__name__}) has no {', '.join(missing)}"
        raise ValueError(f"{cluster.path}: this kernel streams data from outside, but {found}: connect "
                         "ext_req/ext_rsp to a memory (FixedLatencyMemory, DramController, InterleavedMemory, or "
                         "a memory-mapped network interface in front of one)")
    first, size = region if region is not None else (memory.base_address, memory.size_bytes)
    return memory, Layout(first, size)


def put_array(memory, address: int, array: np.ndarray) -> None:
    """Place ``array`` as FP64 at ``address`` of ``memory`` (its backdoor)."""
    memory.backdoor_write(address, np.ascontiguousarray(array, dtype=np.float64).tobytes())


def get_array(memory, address: int, shape) -> np.ndarray:
    """FP64 values of ``shape`` at ``address`` of ``memory`` (its backdoor)."""
    count = int(np.prod(shape))
    return np.frombuffer(memory.backdoor_read(address, 8 * count), dtype=np.float64).reshape(shape)


def dma_transfer(src: int, dst: int, nbytes: int, src_stride: int = 0, dst_stride: int = 0, reps: int = 0) -> list[str]:
    """A 1D transfer of ``nbytes``, or with ``reps`` a 2D one of ``reps`` rows of ``nbytes``."""
    lines = [f"li t0, {src}", "dmsrc t0, zero", f"li t0, {dst}", "dmdst t0, zero"]
    if reps:
        lines += [f"li t0, {src_stride}", f"li t1, {dst_stride}", "dmstr t0, t1", f"li t0, {reps}", "dmrep t0"]
    return lines + [f"li t0, {nbytes}", f"dmcpyi zero, t0, {2 if reps else 0}"]


def dma_schedule(prologue: list, tiles_in: list, tiles_out: list, extra_barriers: int = 0,
                 inner_barriers: int = 0) -> list[str]:
    """The DMA core's double-buffered schedule: ``tiles_in[t]``/``tiles_out[t]`` are lists of
    transfers of tile t (:func:`dma_transfer` arguments: (src, dst, bytes), or with strides and rows
    for 2D); every step ends with a wait and a barrier, after the ``inner_barriers`` the compute
    cores pass within a step (the DMA core passes them while its transfers run)."""
    steps = len(tiles_in)
    lines = []
    for transfer in prologue + (tiles_in[0] if steps else []):
        lines += dma_transfer(*transfer)
    lines += WAIT_DMA + BARRIER
    for t in range(steps):
        # write back tile t-1 before fetching tile t+1: they may share a buffer
        if t >= 1:
            for transfer in tiles_out[t - 1]:
                lines += dma_transfer(*transfer)
        if t + 1 < steps:
            for transfer in tiles_in[t + 1]:
                lines += dma_transfer(*transfer)
        lines += BARRIER * inner_barriers + WAIT_DMA + BARRIER
    if steps:
        for transfer in tiles_out[steps - 1]:
            lines += dma_transfer(*transfer)
        lines += WAIT_DMA
    lines += BARRIER * extra_barriers + ["ecall"]
    return lines


def ssr_job(stream: int, bounds: list, strides: list, base_reg: str, write: bool = False, repeat: int | None = None) -> list[str]:
    """Configure SSR ``stream`` (each element used ``repeat`` + 1 times, loops of ``bounds``
    with byte ``strides``, innermost first) and start its job at the address in ``base_reg``,
    reading or, with ``write``, writing."""
    lines = []
    if repeat is not None:
        lines += [f"li t1, {repeat}", f"csrw ssr{stream}_repeat, t1"]
    for dim, (bound, stride) in enumerate(zip(bounds, strides)):
        lines += [f"li t1, {bound - 1}", f"csrw ssr{stream}_bound{dim}, t1",
                  f"li t1, {stride}", f"csrw ssr{stream}_stride{dim}, t1"]
    lines.append(f"csrw ssr{stream}_{'w' if write else 'r'}ptr{len(bounds) - 1}, {base_reg}")
    return lines


def assemble_lines(name: str, lines: list[str]):
    """One program from assembly lines (``name`` names it in errors). The same lines under
    the same name give the same Program object (:func:`_assembled`)."""
    return _assembled("\n".join(lines) + "\n", name)


@functools.lru_cache(maxsize=32)
def _assembled(text: str, name: str):
    """``text`` assembled once: the clusters of a system that run one kernel load identical
    programs (their compute cores' lines name only TCDM addresses, the same in every
    cluster), which then share their instructions, as the cores of one cluster do, and the
    compiled loop's encoding of them (compiled_layout.encoded). A program's instructions do
    not change once assembled."""
    return assemble(text, name)
