"""Workloads that drive the models and compute real answers (checked against numpy).

:mod:`archmodel.workloads.snitch`: data-parallel kernels for the Snitch cluster (AXPY, dot
product, GEMM, 2D Jacobi, reduction) and the single-core FPU-utilisation ladder.
:mod:`archmodel.workloads.training`: one data-parallel training step (ZeRO-3, FCDP).
:mod:`archmodel.workloads.graph`: graph algorithms over a cache hierarchy (Cagra).
:mod:`archmodel.workloads.conv`: convolution layers and networks, and the five lowerings
(direct, im2col, MEC, CPO, CPS) with their exact sizes and outputs, as Snitch-cluster assembly,
timed per layer.
"""
