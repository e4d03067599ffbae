"""Graphs: the RMAT generator, networkx generators, SNAP edge lists and Matrix Market files,
and the errors a malformed file gives (file:line)."""

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from archmodel.workloads.graph import GraphFileError, load_graph, read_edge_list, read_matrix_market, rmat


def test_rmat_is_deterministic_simple_and_skewed():
    a, b = rmat(12, 16, seed=3), rmat(12, 16, seed=3)
    assert a.n == 4096
    assert (a.out.indptr == b.out.indptr).all() and (a.out.indices == b.out.indices).all()
    assert rmat(12, 16, seed=4).edges != a.edges
    coo = a.out.tocoo()
    assert not (coo.row == coo.col).any()  # no self loops
    assert a.edges == len(set(zip(coo.row.tolist(), coo.col.tolist())))  # no repeats
    assert 0.5 * 16 * 4096 < a.edges <= 16 * 4096
    degree = np.sort(a.out_degree())[::-1]
    # Graph500's a=0.57 skew: the top 1% of vertices hold far more than 1% of the edges
    assert degree[:41].sum() > 0.1 * a.edges
    assert (a.inc.T != a.out).nnz == 0


def test_an_undirected_rmat_holds_each_edge_both_ways():
    g = rmat(8, 8, seed=1, directed=False)
    assert (g.out != g.out.T).nnz == 0
    assert g.to_networkx().number_of_edges() * 2 == g.edges


def test_edge_lists_read_snap_format_and_name_the_bad_line(tmp_path):
    good = tmp_path / "tiny.txt"
    good.write_text("# Directed graph: tiny\n# FromNodeId\tToNodeId\n0\t1\n1\t2\n2\t0\n\n2\t3  # trailing\n")
    g = read_edge_list(good)
    assert (g.n, g.edges) == (4, 4)
    assert sorted(g.to_networkx().edges) == [(0, 1), (1, 2), (2, 0), (2, 3)]
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 2\n1 x\n")
    with pytest.raises(GraphFileError) as err:
        read_edge_list(bad)
    assert str(err.value) == f"{bad}:3: vertex ids and weights must be integers: '1 x'"
    short = tmp_path / "short.txt"
    short.write_text("0 1\n\n5\n")
    with pytest.raises(GraphFileError) as err:
        read_edge_list(short)
    assert str(err.value) == f"{short}:3: expected 'source target', got 1 fields: '5'"
    with pytest.raises(GraphFileError) as err:
        read_edge_list(tmp_path / "missing.txt")
    assert str(err.value).startswith(f"{tmp_path / 'missing.txt'}: cannot read")


def test_matrix_market_files_read_as_scipy_writes_them(tmp_path):
    g = nx.gnp_random_graph(60, 0.1, seed=2, directed=True)
    matrix = nx.to_scipy_sparse_array(g, nodelist=range(60), format="coo")
    path = tmp_path / "g.mtx"
    scipy.io.mmwrite(path, sp.coo_matrix(matrix))
    ours = read_matrix_market(path)
    assert ours.directed and ours.n == 60
    assert sorted(ours.to_networkx().edges) == sorted(g.edges)
    sym = tmp_path / "sym.mtx"
    sym.write_text("%%MatrixMarket matrix coordinate pattern symmetric\n% a path\n3 3 2\n2 1\n3 2\n")
    path_graph = read_matrix_market(sym)
    assert not path_graph.directed and sorted(path_graph.to_networkx().edges) == [(0, 1), (1, 2)]


@pytest.mark.parametrize("text, line, message", [
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 x 1.0\n", 4, "not a matrix entry: '2 x 1.0'"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n4 1 1.0\n", 4,
     "entry (4, 1) lies outside the 3 x 3 matrix"),
    ("%%MatrixMarket matrix coordinate real general\n3 3\n", 2, "expected 'rows columns entries', got '3 3'"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 1.0\n", 3,
     "the size line promises 3 entries, the file has 1"),
    ("not a header\n", 1, "expected a '%%MatrixMarket matrix coordinate ...' header"),
])
def test_a_malformed_matrix_market_file_names_its_line(tmp_path, text, line, message):
    path = tmp_path / "bad.mtx"
    path.write_text(text)
    with pytest.raises(GraphFileError) as err:
        read_matrix_market(path)
    assert str(err.value) == f"{path}:{line}: {message}"


def test_load_graph_names_generators_and_suggests_close_ones():
    assert load_graph("karate").n == 34
    with pytest.raises(ValueError) as err:
        load_graph("karat")
    assert str(err.value) == "unknown graph 'karat' (did you mean 'karate'?)"
