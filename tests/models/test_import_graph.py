"""Inside each model family the modules import one another one way only: no circle, counting
the imports made inside functions (a deferred import hides a circle, it does not remove it)."""

import ast
from pathlib import Path

import networkx as nx
import pytest

MODELS = Path(__file__).resolve().parents[2] / "archmodel" / "models"
FAMILIES = sorted(p.name for p in MODELS.iterdir() if (p / "__init__.py").is_file())


def imports_within(family: Path) -> nx.DiGraph:
    """Module -> module edges of the relative imports between a family's modules."""
    modules = {f.stem for f in family.glob("*.py")} - {"__init__"}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name in modules:
        for node in ast.walk(ast.parse((family / f"{name}.py").read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                targets = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
                graph.add_edges_from((name, t) for t in targets if t in modules)
    return graph


@pytest.mark.parametrize("family", FAMILIES)
def test_the_modules_of_a_family_import_each_other_one_way(family):
    graph = imports_within(MODELS / family)
    assert graph.number_of_edges() > 0 or family == "basic"
    assert list(nx.simple_cycles(graph)) == []


def test_the_dram_core_driver_imports_its_loop_and_both_the_layout():
    graph = imports_within(MODELS / "memory")
    assert {"compiled_core_entry", "compiled_core_layout"} <= set(graph.successors("compiled_core"))
    assert {"compiled_core_kernel", "compiled_core_layout"} <= set(graph.successors("compiled_core_entry"))
    assert "compiled_core_layout" in set(graph.successors("compiled_core_kernel"))
    assert "compiled_core" not in nx.descendants(graph, "compiled_core_entry")
    assert list(graph.successors("compiled_core_layout")) == []
