"""Small inputs that used to hang or exhaust memory (issue 12, class 4): each is an error
before the memory is spent, or a run that ends as soon as the kernel would."""

import subprocess
import sys
import time

import pytest

from archmodel.cli import main
from archmodel.kernel import ArchError, Component, check_instances, instance_budget
from archmodel.models.compute import SnitchCluster


def _check(capsys, *argv):
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_a_huge_topology_is_refused_before_it_is_built(tmp_path, capsys):
    top = tmp_path / "huge.arch"
    top.write_text('system S {\n    net : Noc(topology = "mesh(100000, 100000)")\n}\n')
    code, err = _check(capsys, "check", top)
    assert code == 2
    assert (f"{top}:2:11: error: topology mesh(100000, 100000) would make 20,000,000,000 components or channels, "
            "beyond the limit of 1,000,000") in err
    assert "hint: make it smaller, or raise the limit with --max-instances N" in err


def test_models_building_parts_count_against_the_limit(tmp_path, capsys):
    top = tmp_path / "mesh.arch"
    top.write_text('system S {\n    net : Noc(topology = "mesh(8, 8)")\n}\n')
    assert _check(capsys, "check", top)[0] == 0
    code, err = _check(capsys, "check", top, "--max-instances", "100")
    assert code == 2 and "beyond the limit of 100" in err
    with instance_budget(3):
        Component("a"), Component("b"), Component("c")
        with pytest.raises(ArchError, match="'d' would make 1 components or channels, beyond the limit of 3"):
            Component("d")
        with pytest.raises(ArchError, match="the array would make 5 components or channels"):
            check_instances(5, "the array")


@pytest.mark.parametrize("param, message", [
    ("vcs=10**30", "parameter 'vcs' of 'Noc' must be between 1 and 256, got 1000000000000000000000000000000"),
    ("depth=10**9", "parameter 'buffer_depth' of 'Noc' must be between 1 and 65536, got 1000000000"),
])
def test_parameters_that_size_what_a_model_allocates_have_upper_bounds(capsys, param, message):
    code, err = _check(capsys, "check", "topologies/mesh8x8.arch", "-p", param)
    assert code == 2 and message in err


def test_a_cluster_of_a_billion_cores_is_refused_at_its_parameter():
    with pytest.raises(ArchError, match="top.c: parameter 'cores' must be between 1 and 1024, got 1000000000"):
        SnitchCluster("c", Component("top"), cores=10**9)


def test_nested_loops_multiply_against_the_limit(tmp_path, capsys):
    top = tmp_path / "loops.arch"
    top.write_text("system S {\n    for i in 0 .. 2000 {\n        for j in 0 .. 2000 { }\n    }\n}\n")
    code, err = _check(capsys, "check", top, "--max-instances", "100000")
    assert code == 2
    assert f"{top}:3:18: error: loop of 2,000 iterations, with the loops before it and around it" in err
    assert "exceeds the limit of 100,000" in err


def test_products_of_products_stop_before_they_exhaust_memory(tmp_path, capsys):
    top = tmp_path / "squares.arch"
    top.write_text("const A = 2 ** 256\nconst B = A * A\nconst C = B * B\nconst D = C * C\nconst E = D * D\n"
                   "system S { }\n")
    code, err = _check(capsys, "check", top)
    assert code == 2 and f"{top}:4:11: error: the result is out of range" in err


def test_a_link_of_a_million_seconds_is_one_step_not_billions_of_slices(tmp_path):
    top = tmp_path / "slow_link.arch"
    top.write_text("""system S {
    src : Source(count = 2, size_bits = 64)
    sink : Sink(stop_after = 2)
    src.out -> sink.inp with link(latency = 1000000 s)
}
""")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "archmodel.cli", "run", str(top), "-q"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "stopped at 1e+06 s" in done.stderr
    assert time.monotonic() - started < 120


def test_strings_that_double_stop_before_they_exhaust_memory(tmp_path, capsys):
    top = tmp_path / "strings.arch"
    top.write_text('const S0 = "abcdefgh"\n' + "".join(f"const S{i} = S{i - 1} + S{i - 1}\n" for i in range(1, 40))
                   + "system S { }\n")
    code, err = _check(capsys, "check", top)
    assert code == 2 and f"{top}:19:13: error: the string would be 2,097,152 characters long" in err


def test_a_port_array_of_a_billion_ports_is_refused(tmp_path, capsys):
    top = tmp_path / "crossbar.arch"
    top.write_text("system S {\n    x : Crossbar(inputs = 1000000000)\n}\n")
    code, err = _check(capsys, "check", top)
    assert code == 2 and "the port array 'inp' would have 1,000,000,000 ports, more than 65,536" in err


def test_channels_count_against_the_limit_and_a_full_mesh_of_clusters_is_sized_by_its_links(tmp_path, capsys):
    ring = tmp_path / "ring.arch"
    ring.write_text("system S {\n    a[60] : Fifo(depth = 2)\n"
                    "    for i in 0 .. 60 { a[i].out -> a[(i + 1) % 60].inp }\n}\n")
    assert _check(capsys, "check", ring, "--max-instances", "121")[0] == 0  # 61 components, 60 channels
    code, err = _check(capsys, "check", ring, "--max-instances", "120")
    assert code == 2 and "components or channels, beyond the limit of 120" in err
    mesh = tmp_path / "clusters.arch"
    mesh.write_text("system S {\n    net : topology clusters(2000, 1) of Fifo(depth = 2)\n}\n")
    code, err = _check(capsys, "check", mesh)
    # 2000 nodes, 2000 inner "full meshes" of one, and 2000 x 2000 between the clusters
    assert code == 2 and "topology 'net' of 4004000 nodes (or links) would exceed the limit" in err
