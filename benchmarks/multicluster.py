"""Speed of the kernels across clusters: 4 Snitch clusters and one memory on a network.

    python benchmarks/multicluster.py [--quick] [--noc fast|components] [--json out.json]

Each kernel of :mod:`archmodel.workloads.multicluster` runs on the system of
``build_clusters`` (4 clusters with their TCDM slave ports mapped, a FixedLatencyMemory of
64 B/cycle, a line of 5 routers on the network's fast engine unless ``--noc components``),
with the compiled cluster loop (``engine = "compiled"``) and with the Python model alone
(``engine = "python"``) in the same process; both runs must end in the same cycle and pass
their numpy checks. One more row runs the GEMM with the slave ports left unconnected, which
it does not need: what connecting them costs (a cluster whose TCDM others can reach must end
its batches where a request could arrive).

Rates are compute-core cycles (cores x cycles) per second of process CPU time (the machine
is shared: compare within one run).
"""

from __future__ import annotations

import argparse
import json
import time

from archmodel.kernel import Simulator
from archmodel.workloads.binding import KERNELS
from archmodel.workloads.multicluster import build_clusters

CASES = [
    ("gemm_clusters", dict(m=64, n=64, k=256), True),
    ("gemm_clusters", dict(m=64, n=64, k=256), False),
    ("axpy_clusters", dict(n=16384, tile=512), True),
    ("dot_clusters", dict(n=16384, tile=512), True),
    ("jacobi_clusters", dict(rows=66, cols=66, sweeps=4), True),
]


def _label(kernel: str, params: dict, slave_ports: bool) -> str:
    if not slave_ports:
        return "  the same, slave ports unconnected"
    return f"{kernel} " + ", ".join(f"{k}={v}" for k, v in params.items())


def _run(kernel: str, params: dict, engine: str, slave_ports: bool, noc: str) -> dict:
    top, clusters, _ = build_clusters(4, engine=engine, slave_ports=slave_ports, noc_engine=noc)
    KERNELS[kernel](clusters, **params)
    start = time.process_time()
    result = Simulator(top).run()
    cpu = time.process_time() - start
    working = [c for c in clusters if c.core_list[0].program is not None]
    if not all(getattr(c, "result_ok", False) for c in working):
        raise AssertionError(f"{kernel}: a cluster did not finish with the right result")
    core_cycles = sum(c.cores * c.run_cycles() for c in working)
    batches = sum(c.n_compiled_batches for c in clusters)
    return {"cycles": result.time_ps // 1000, "cpu_s": cpu, "rate": core_cycles / cpu,
            "fpu": min(c.fpu_utilisation.value for c in working),
            "cycles_per_batch": sum(c.n_compiled_cycles for c in clusters) / batches if batches else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first two cases only, on a smaller GEMM")
    parser.add_argument("--noc", default="fast", choices=["fast", "components"],
                        help="the network's engine (the same cycles either way)")
    parser.add_argument("--json", help="write the results as JSON")
    args = parser.parse_args()
    rows = []
    _run("gemm_clusters", dict(m=32, n=32, k=64), "compiled", True, args.noc)  # loads the compiled loop, untimed
    print(f"{'case':<44} {'cycles':>7} {'min FPU %':>9} {'compiled':>12} {'cycles/batch':>12} {'Python':>10} "
          f"{'speed-up':>8}")
    for kernel, params, slave_ports in CASES[:2] if args.quick else CASES:
        params = dict(m=32, n=32, k=64) if args.quick else params
        label = _label(kernel, params, slave_ports)
        compiled = _run(kernel, params, "compiled", slave_ports, args.noc)
        python = _run(kernel, params, "python", slave_ports, args.noc)
        if compiled["cycles"] != python["cycles"]:
            raise AssertionError(f"{label}: compiled {compiled['cycles']} cycles, Python {python['cycles']}")
        rows.append({"case": label, "compiled": compiled, "python": python})
        print(f"{label:<44} {compiled['cycles']:>7} {compiled['fpu']:>9.1f} {compiled['rate']:>12,.0f} "
              f"{compiled['cycles_per_batch']:>12.1f} {python['rate']:>10,.0f} "
              f"{compiled['rate'] / python['rate']:>7.1f}x")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=2)


if __name__ == "__main__":
    main()
