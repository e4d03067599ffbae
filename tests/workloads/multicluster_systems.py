"""Small systems for the kernels across clusters: clusters and one memory on a network whose
address map routes the memory's range to it and each cluster's global TCDM range to that
cluster's slave port."""

from archmodel.kernel import Component, connect
from archmodel.models.compute import FixedLatencyMemory, SnitchCluster
from archmodel.models.network import Noc

MEMORY_BASE = 0x8000_0000
TCDM_GLOBAL = 0x4000_0000  # cluster j's TCDM at TCDM_GLOBAL + j * tcdm_bytes


def clusters_on_a_network(count: int = 4, *, engine: str = "auto", cores: int = 8, tcdm_bytes: int = 128 * 1024,
                          memory_bytes_per_cycle: int = 64, memory_latency_cycles: int = 20,
                          noc_engine: str = "components"):
    """``count`` clusters (terminals 0 .. count - 1) and a FixedLatencyMemory (terminal
    ``count``) on a line of routers; returns (top, clusters, memory)."""
    top = Component("top")
    clusters = [SnitchCluster(f"cluster{j}", top, cores=cores, tcdm_bytes=tcdm_bytes, engine=engine,
                              tcdm_global_base=TCDM_GLOBAL + j * tcdm_bytes) for j in range(count)]
    memory = FixedLatencyMemory("memory", top, base_address=MEMORY_BASE, bytes_per_cycle=memory_bytes_per_cycle,
                                latency_cycles=memory_latency_cycles)
    ranges = [(MEMORY_BASE, MEMORY_BASE + memory.size_bytes, count)]
    ranges += [(c.tcdm_global_base, c.tcdm_global_base + tcdm_bytes, j) for j, c in enumerate(clusters)]
    net = Noc("net", top, topology=f"mesh(1, {count + 1})", flit_bits=512, address_map=ranges, engine=noc_engine)
    for j, cluster in enumerate(clusters):
        connect(cluster.ext_req, net.memory_port("mem_req", j))
        connect(net.memory_port("mem_rsp", j), cluster.ext_rsp)
        connect(net.memory_port("to_memory", j), cluster.tcdm_req)
        connect(cluster.tcdm_rsp, net.memory_port("from_memory", j))
    connect(net.memory_port("to_memory", count), memory.req)
    connect(memory.rsp, net.memory_port("from_memory", count))
    return top, clusters, memory
