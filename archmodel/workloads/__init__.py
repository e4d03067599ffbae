"""Workloads that drive the models and compute real answers (checked against numpy).

:mod:`archmodel.workloads.snitch`: data-parallel kernels for the Snitch cluster (AXPY, dot
product, GEMM, 2D Jacobi, reduction) and the single-core FPU-utilisation ladder.
"""
