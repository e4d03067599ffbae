"""Graph analytics over a modelled memory hierarchy: graphs in CSR (generators and files),
the algorithms (PageRank, label propagation, BFS, SSSP, connected components, betweenness),
each computing its answer and the exact memory references it makes, Cagra's clustering and
segmenting, and the workloads ``run pagerank(...) on node`` binds."""

from .cagra import Segments, auto_segment_vertices, frequency_clustering, segment
from .graphs import GENERATORS, Graph, GraphFileError, from_networkx, load_graph, read_edge_list, read_matrix_market, rmat
from .image import MemoryImage, Region
from .program import Program
from .pull import UNREACHED, label_propagation, pagerank, sssp
from .traversal import betweenness, bfs, connected_components

__all__ = ["GENERATORS", "Graph", "GraphFileError", "MemoryImage", "Program", "Region", "Segments", "UNREACHED",
           "auto_segment_vertices", "betweenness", "bfs", "connected_components", "frequency_clustering",
           "from_networkx", "label_propagation", "load_graph", "pagerank", "read_edge_list", "read_matrix_market",
           "rmat", "segment", "sssp"]
