"""Graph workloads on a node of reference cores, an LLC and DRAM: ``run pagerank(graph =
"rmat", scale = 14, reorder = true, segments = "auto") on node``.

:func:`prepare` builds the graph (optionally renumbered by Cagra's clustering), lays out the
memory image and runs the algorithm (answer and references); :func:`bind` places the image
in the modelled memory, gives every :class:`~archmodel.models.compute.ReferenceCore` its
phases with a shared barrier, checks the answer in memory when the last core finishes, and
adds the figures a graph architect reads to the node's statistics: cycles per edge, LLC miss
rate, DRAM bytes per edge, DRAM row-hit rate.
"""

from __future__ import annotations

import difflib
import inspect

import attrs
import numpy as np

from archmodel.kernel import ArchError, ClockDomain, Component, Formula, Simulator, connect
from archmodel.models.compute import Barrier, ReferenceCore
from archmodel.models.memory import Cache, DramController

from . import pull, traversal
from .cagra import auto_segment_vertices, frequency_clustering, merge_block_vertices, segment
from .graphs import Graph, GraphFileError, load_graph
from .image import MemoryImage
from .program import Program, feeds

ALGORITHMS = {
    "pagerank": pull.pagerank,
    "label_propagation": pull.label_propagation,
    "sssp": pull.sssp,
    "bfs": traversal.bfs,
    "connected_components": traversal.connected_components,
    "betweenness": traversal.betweenness,
}
"""The graph algorithms by workload name."""

SEGMENTED = ("pagerank", "label_propagation")
"""The algorithms that offer Cagra's CSR segmenting (the all-vertex pull sweeps)."""
SYMMETRIC = ("label_propagation", "connected_components")
"""The algorithms that run on the undirected view of a graph (components ignore direction)."""
WEIGHTED = ("sssp",)

GRAPH_OPTIONS = ("graph", "scale", "edge_factor", "seed", "directed", "reorder", "segments")


@attrs.define
class Prepared:
    """A workload ready to bind: the graph as laid out, the program, the memory image, and the
    renumbering applied (``new_id[v]``, or None)."""

    algorithm: str
    graph: Graph
    program: Program
    image: MemoryImage
    new_id: np.ndarray | None
    segment_vertices: int | None

    @property
    def edges_processed(self) -> int:
        """Edges the algorithm traversed: per iteration for the sweeps, per source for
        betweenness, once for a traversal."""
        if self.algorithm in ("pagerank", "label_propagation", "sssp", "betweenness"):
            return self.graph.edges * self.program.iterations
        return self.graph.edges

    def answer_in_original_ids(self) -> np.ndarray:
        """The answer indexed by the graph's original vertex ids."""
        answer = self.program.answer
        return answer if self.new_id is None else answer[self.new_id]


MAX_EDGE_VISITS = 1 << 22
"""The most edge visits one workload may hold references for at once, about 600 bytes per
visit while they are made, so 4 Mi visits take some 2.5 GB: every edge x iteration for the
algorithms whose references are made before the run, one phase's (the edges once) for
those that make each phase as the cores reach it (:data:`STREAMED`)."""
STREAMED = ("pagerank",)
"""Algorithms whose phases are made one at a time during the run (bounded memory)."""


def prepare(algorithm: str, *, cores: int, memory_base: int, memory_bytes: int, llc_bytes: int | None = None,
            graph: str = "rmat", scale: int = 10, edge_factor: int = 16, seed: int = 0, directed: bool = True,
            reorder: bool = False, segments=False, source: int | None = None, **params) -> Prepared:
    """Build the graph, renumber it (``reorder``), segment it (``segments``: False, "auto",
    or vertices per segment), lay it out from ``memory_base`` and run ``algorithm``."""
    run = ALGORITHMS.get(algorithm)
    if run is None:
        close = difflib.get_close_matches(algorithm, list(ALGORITHMS), n=1)
        raise ValueError(f"unknown graph algorithm '{algorithm}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
    accepted = [p for p in inspect.signature(run).parameters
                if p not in ("graph", "image", "cores", "segments", "new_id")]
    for key in params:
        if key not in accepted:
            close = difflib.get_close_matches(key, accepted + list(GRAPH_OPTIONS), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "options: " + ", ".join(list(GRAPH_OPTIONS) + accepted)
            raise ValueError(f"{algorithm} has no option '{key}' ({hint})")
    g = load_graph(graph, scale=scale, edge_factor=edge_factor, seed=seed, directed=directed,
                   weighted=algorithm in WEIGHTED)
    if algorithm in SYMMETRIC and g.directed:
        coo = g.out.tocoo()
        g = Graph(g.n, coo.row, coo.col, directed=False, name=g.name)
    new_id = frequency_clustering(g) if reorder else None
    if new_id is not None:
        g = g.renumbered(new_id)
    if new_id is not None and "new_id" in inspect.signature(run).parameters:
        params["new_id"] = new_id  # (sampled sources are drawn in the original numbering)
    if source is not None and "source" not in accepted:
        raise ValueError(f"{algorithm} has no option 'source' (it visits every vertex)")
    if "source" in accepted:
        source = 0 if source is None else source
        if not 0 <= source < g.n:
            raise ValueError(f"source vertex {source} does not exist: the graph has {g.n} vertices (0 .. {g.n - 1})")
        params["source"] = int(new_id[source]) if new_id is not None else source
    vertices = None
    if segments is True:
        segments = "auto"
    if segments not in (False, None, 0, "none"):
        if algorithm not in SEGMENTED:
            raise ValueError(f"segments apply to {' and '.join(SEGMENTED)} (the all-vertex pull sweeps), "
                             f"not {algorithm}")
        if segments == "auto":
            if llc_bytes is None:
                raise ValueError("segments = \"auto\" sizes segments to the LLC, but no cache lies between the "
                                 "cores and the memory")
            vertices = auto_segment_vertices(llc_bytes, 8)
        elif isinstance(segments, int) and not isinstance(segments, bool) and segments > 0:
            vertices = segments
        else:
            raise ValueError(f"segments must be \"auto\", a number of vertices per segment, or \"none\", "
                             f"got {segments!r}")
        params["segments"] = segment(g, vertices, merge_block_vertices(vertices, cores))
    visits = g.edges * (1 if algorithm in STREAMED else int(params.get("iterations", 1)))
    if visits > MAX_EDGE_VISITS:
        # References being made take about 600 bytes per edge visited: refuse what would
        # exhaust memory at elaboration, `check` included.
        held = "edges in one phase" if algorithm in STREAMED else "edges x iterations"
        raise ValueError(f"{algorithm} would hold references for {visits:,} edge visits ({held}) at once, more "
                         f"than {MAX_EDGE_VISITS:,} (they would take about {visits * 600 / 1e9:.0f} GB)")
    image = MemoryImage(memory_base, memory_bytes)
    program = run(g, image, cores, **params)
    image.check_fits(f"{algorithm} on {g!r}")
    return Prepared(algorithm, g, program, image, new_id, vertices)


def _memory_below(core: ReferenceCore):
    """(the LLC, the memory): the last cache and the memory behind ``core``'s port."""
    channel = core.req.channel
    if channel is None:
        raise ValueError(f"{core.path}.req is not connected to a memory")
    part, llc = channel.dst_owner, None
    while hasattr(part, "below"):
        llc, part = part, part.below()
        if part is None:
            raise ValueError(f"{llc.path}.mem_req is not connected to a memory")
    if not hasattr(part, "backdoor_write"):
        raise ValueError(f"{core.path} reaches {part.path}, which holds no data (no backdoor access)")
    return llc, part


def _sum_stat(part: Component, name: str) -> float:
    """A counter of a memory, or the sum over its channels (an interleaved memory)."""
    stat = getattr(part, name, None)
    if stat is not None:
        return stat.value
    return sum(getattr(child, name).value for child in part.children if hasattr(child, name))


def bind(cores: list[ReferenceCore], prepared: Prepared, report: Component) -> None:
    """Load the image, the phases and the barrier; check the answer at the end; add the
    workload's figures to ``report``'s statistics."""
    llc, memory = _memory_below(cores[0])
    entry = cores[0].req.channel.dst_owner
    prepared.image.load(entry)
    program = prepared.program
    barrier = Barrier(len(cores))
    for core, feed in zip(cores, feeds(program.phases, len(cores))):
        core.load_phases(feed, barrier)
        core.on_finish(lambda done, p=prepared, e=entry: _finish(done, cores, p, e))
    edges = prepared.edges_processed
    figures = [
        ("graph_edges", Formula("edges", "edges the algorithm traversed (per iteration or source)", lambda _: edges)),
        ("graph_cycles", Formula("cycles", "core cycles until the last core finished",
                                 lambda _: max(c.cycles.value for c in cores))),
        ("cycles_per_edge", Formula("cycles", "core cycles per edge traversed",
                                    lambda _: max(c.cycles.value for c in cores) / edges)),
        ("dram_bytes_per_edge", Formula("bytes", "DRAM bytes read and written per edge traversed",
                                        lambda _: (_sum_stat(memory, "bytes_read") + _sum_stat(memory, "bytes_written"))
                                        / edges)),
        ("dram_row_hit_rate", Formula("%", "DRAM requests that found their row open",
                                      lambda _: 100.0 * _sum_stat(memory, "row_hits") /
                                      (_sum_stat(memory, "row_hits") + _sum_stat(memory, "row_misses") +
                                       _sum_stat(memory, "row_conflicts")))),
    ]
    if llc is not None:
        figures.insert(2, ("llc_miss_rate", Formula("%", "LLC misses per LLC access",
                                                    lambda _: 100.0 * llc.misses.value / llc.accesses.value)))
    for name, formula in figures:
        report.add_stat(name, formula)


def _finish(done: ReferenceCore, cores: list, prepared: Prepared, entry) -> None:
    """When the last core is done: the answer must be in memory, then the run ends (DRAM
    refreshes for ever, so it would never fall quiet)."""
    if not all(c.done for c in cores):
        return
    got = prepared.image.read(entry, prepared.program.output)
    want = prepared.program.output_values
    if got.tobytes() != np.ascontiguousarray(want).tobytes():
        bad = int(np.flatnonzero(got != want)[0])
        done.fail(f"{prepared.algorithm}: {prepared.program.output}[{bad}] is {got[bad]} in memory, the algorithm "
                  f"computed {want[bad]}")
    done.sim.stop("workload finished")


def _binder(algorithm: str):
    def bind_workload(targets, *args, **kwargs):
        if args:
            raise ArchError(f"workload '{algorithm}' takes named arguments only, e.g. {algorithm}(graph = \"rmat\")")
        cores = [part for t in targets for part in t.walk() if isinstance(part, ReferenceCore)]
        if not cores:
            raise ArchError(f"workload '{algorithm}' runs on ReferenceCore instances",
                            hint="target a node holding cores, e.g. run pagerank(...) on node")
        try:
            llc, memory = _memory_below(cores[0])
            prepared = prepare(algorithm, cores=len(cores), memory_base=memory.base_address,
                               memory_bytes=memory.size_bytes, llc_bytes=llc.size_bytes if llc else None, **kwargs)
            report = targets[0] if len(targets) == 1 else cores[0]
            bind(cores, prepared, report)
        except GraphFileError as err:
            raise ArchError(f"workload '{algorithm}': {err}") from None
        except (ValueError, TypeError) as err:
            raise ArchError(f"workload '{algorithm}': {err}") from None
    bind_workload.__doc__ = ALGORITHMS[algorithm].__doc__
    return bind_workload


def build_node(cores: int = 2, *, llc_bytes: int = 16 * 1024, llc_ways: int = 8, window: int = 64,
               llc_latency: int = 20, mshrs: int = 32, banks: int = 4, policy: str = "lru", prefetch_degree: int = 0,
               streams: int = 32, standard: str = "DDR4-2400R", link_cycles: int = 1, store_buffer: int = 0,
               engine: str = "auto") -> tuple[Component, list, Cache, DramController]:
    """The Python twin of ``library/graph_node.arch``: ``cores`` reference cores at 2 GHz
    sharing an LLC (answering hits under misses) in front of one DRAM channel, each way
    between the LLC and the channel a link of ``link_cycles`` (a server's on-chip path to its
    memory controller is some 30 ns: 60 cycles). Returns (top, cores, llc, memory).
    ``store_buffer`` is the cores' store buffer entries (0: a store holds its window slot until
    answered). ``engine`` is the cores' (a single core and the LLC it reaches alone run
    compiled under ``auto``, without a store buffer)."""
    top = Component("node", clock=ClockDomain("clk", 500))
    core_list = [ReferenceCore(f"core{i}", top, window=window, store_buffer=store_buffer, engine=engine)
                 for i in range(cores)]
    llc = Cache("llc", top, size_bytes=llc_bytes, ways=llc_ways, clients=cores, banks=banks, mshrs=mshrs,
                hit_latency_cycles=llc_latency, policy=policy, in_order=False, prefetch_degree=prefetch_degree, streams=streams)
    memory = DramController("mem", top, standard=standard)
    for i, core in enumerate(core_list):
        connect(core.req, llc.req[i])
        connect(llc.resp[i], core.resp)
    connect(llc.mem_req, memory.req, latency=link_cycles)
    connect(memory.resp, llc.mem_resp, latency=link_cycles)
    return top, core_list, llc, memory


def run_on_node(algorithm: str, *, cores: int = 2, node: dict | None = None, **params) -> tuple[Prepared, dict]:
    """Build a node (:func:`build_node` with ``node`` as its options), run ``algorithm`` to
    the end (every read checked, the answer checked in memory) and return the prepared
    workload and the node's figures by name (``cycles_per_edge``, ``llc_miss_rate``, ...,
    ``dram_bandwidth_gbps``, ``llc_mshrs_busy``: the time average of busy MSHRs)."""
    top, core_list, llc, memory = build_node(cores, **(node or {}))
    prepared = prepare(algorithm, cores=cores, memory_base=memory.base_address, memory_bytes=memory.size_bytes,
                       llc_bytes=llc.size_bytes, **params)
    bind(core_list, prepared, top)
    Simulator(top).run()
    if not all(c.done for c in core_list):
        raise RuntimeError(f"{algorithm}: the cores did not finish")
    figures = {s.name: s.value for s in top.stats}
    figures["references"] = prepared.program.references
    figures["dram_bandwidth_gbps"] = memory.bandwidth.value
    figures["llc_mshrs_busy"] = llc.mshr_occupancy.mean()
    figures["llc_mshrs"] = llc.mshrs
    return prepared, figures


WORKLOADS = {name: _binder(name) for name in ALGORITHMS}
"""Binders for ``run NAME(args) on node`` in .arch files."""
