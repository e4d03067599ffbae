"""PageRank's phases are made one at a time as the cores reach them, so a long run holds one
phase's references; on a single core with the LLC of its own the compiled pair plays them
with the cycles and figures of the Python models."""

import numpy as np
import pytest

from archmodel.workloads.graph import workload
from archmodel.workloads.graph.program import Phases
from archmodel.workloads.graph.workload import prepare, run_on_node


def test_a_phase_is_made_when_the_first_core_reaches_it_and_dropped_when_the_last_took_it():
    made = []

    def make():
        for k in range(3):
            made.append(k)
            yield [f"p{k}c0", f"p{k}c1"]

    phases = Phases(3, make)
    first, second = phases.feeds(2)
    assert made == []
    assert next(first) == "p0c0" and made == [0]
    assert next(first) == "p1c0" and made == [0, 1]  # core 0 ran ahead: phase 0 waits for core 1
    assert next(second) == "p0c1" and next(second) == "p1c1" and made == [0, 1]
    assert next(second) == "p2c1" and next(first) == "p2c0" and made == [0, 1, 2]
    assert phases.made == 3 and list(phases) == [[f"p{k}c0", f"p{k}c1"] for k in range(3)]


@pytest.mark.parametrize("options", [{}, {"reorder": True, "segments": 64}])
def test_pagerank_on_one_core_runs_compiled_with_the_figures_of_the_python_models(options):
    runs = {}
    for engine in ("python", "compiled"):
        prepared, fig = run_on_node("pagerank", cores=1, node=dict(llc_bytes=2048, llc_ways=4, engine=engine),
                                    graph="rmat", scale=8, edge_factor=8, iterations=3, seed=3, **options)
        runs[engine] = fig
    assert runs["compiled"] == runs["python"]
    assert runs["python"]["references"] > 0 and runs["python"]["cycles_per_edge"] > 0


def test_only_the_algorithms_that_make_their_phases_up_front_are_capped_by_every_visit(monkeypatch):
    graph = dict(graph="rmat", scale=7, edge_factor=16, seed=1)  # about 1,700 edges
    monkeypatch.setattr(workload, "MAX_EDGE_VISITS", 3000)
    prepared = prepare("pagerank", cores=1, memory_base=0, memory_bytes=1 << 24, iterations=4, **graph)
    assert prepared.graph.edges * 4 > 3000 and prepared.program.iterations == 4
    monkeypatch.setattr(workload, "MAX_EDGE_VISITS", 1000)
    with pytest.raises(ValueError, match=r"^label_propagation would hold references for [\d,]+ edge visits "
                                         r"\(edges x iterations\) at once, more than 1,000 "):
        prepare("label_propagation", cores=1, memory_base=0, memory_bytes=1 << 24, **graph)
    with pytest.raises(ValueError, match=r"^pagerank would hold references for [\d,]+ edge visits \(edges in one "
                                         r"phase\) at once, more than 1,000 "):
        prepare("pagerank", cores=1, memory_base=0, memory_bytes=1 << 24, iterations=4, **graph)


def test_the_streamed_answer_is_the_one_made_whole():
    prepared = prepare("pagerank", cores=2, memory_base=0, memory_bytes=1 << 24, iterations=5, graph="rmat",
                       scale=7, edge_factor=8, seed=2)
    phases = list(prepared.program.phases)
    assert len(phases) == 10 and all(len(p) == 2 for p in phases)
    # every write of a rank in the last iteration's second phase writes the answer
    rank = prepared.image.regions["rank"]
    last = phases[-1]
    written = {}
    for part in last:
        for a, w, v in zip(part.address.tolist(), part.write.tolist(), part.value.tolist()):
            if w and rank.base <= a < rank.base + rank.size_bytes:
                written[(a - rank.base) // 8] = v
    want = prepared.program.output_values.view(np.uint64)
    assert len(written) == prepared.graph.n and all(written[i] == int(want[i]) for i in written)
