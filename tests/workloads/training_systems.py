"""Small training clusters written in .arch for the tests, and a helper that runs one step."""

from pathlib import Path

from archmodel.kernel import Simulator
from archmodel.lang import load

CLUSTER = """
import "training.arch"

system Cluster(nodes: int = 2, gpus: int = 4, inter_bandwidth: bandwidth = 10 Gbit/s,
               gpu_memory: bytes = 40 GiB, host_memory: bytes = 256 GiB) {{
    clock clk = 1 GHz
    node[nodes] : GpuNode(gpus = gpus, gpu_memory = gpu_memory, intra_bandwidth = 25 GB/s,
                          host_memory = host_memory)
    fabric : topology clusters(nodes, 1, local_ports = gpus) of Nic()
             with link(latency = 20 us, bandwidth = inter_bandwidth)
    for n in 0 .. nodes {{
        node[n].to_nic -> fabric.node[n].inp[0 .. gpus] with link(latency = 2 us, bandwidth = 25 GB/s)
        fabric.node[n].out[0 .. gpus] -> node[n].from_nic with link(latency = 2 us, bandwidth = 25 GB/s)
    }}
    run train_step({args}) on node[*]
}}
"""

SMALL = 'layers = 4, hidden = 512, seq = 256'


def write_cluster(folder: Path, args: str = SMALL, name: str = "cluster.arch") -> Path:
    path = folder / name
    path.write_text(CLUSTER.format(args=args))
    return path


def run_step(folder: Path, args: str = SMALL, **params):
    """Elaborate the cluster with train_step(args), run it; return (result, plan-free top)."""
    path = write_cluster(folder, args)
    elaborated = load(path, params={k: str(v) for k, v in params.items()})
    sim = Simulator(elaborated.top)
    outcome = sim.run()
    assert outcome.reason == "quiescent"
    report = elaborated.top.child("step")
    return report.result(), elaborated.top
