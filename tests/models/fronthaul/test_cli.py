"""`archmodel run topologies/radio_stripes.arch`: the table, and bad input as exit 2 with the
parameter named."""

import pytest

from archmodel.cli import main
from archmodel.paths import data_path

SYSTEM = str(data_path("topologies") / "radio_stripes.arch")


def test_run_prints_loads_latency_and_sum_rates(capsys):
    assert main(["run", SYSTEM, "-p", "slots=2", "-p", "M=2", "-p", "L=2", "-p", "aps=4"]) == 0
    out = capsys.readouterr().out
    for name in ("net.cp.slot_latency", "net.cp.deadline_misses", "net.cp.ingress", "net.cp.sum_rate_inp",
                 "net.cp.sum_rate_no_inp", "net.cp.sum_rate_unlimited", "net.link[3].utilisation",
                 "net.link[0].load", "net.cp_ports", "net.worst_hops"):
        assert name in out
    assert "p99=" in out


@pytest.mark.parametrize("params, message", [
    (["-p", "L=3"], "stripes x aps_per_stripe = 4 x 3 = 12 is not aps = 16"),
    (["-p", "M=3"], "aps = 16 is not a multiple of stripes = 3"),
    (["-p", "C=0 bit/s"], "parameter 'capacity_bps' of 'FronthaulNetwork' must be greater than 0"),
    (["-p", "C=100 kbit/s"], "capacity_bps 100000 bit/s leaves no payload in a 71.4286 us chunk after 1 frame header"),
    (["-p", "users=65"], "users = 65 is more than the 64 antennas (aps x antennas)"),
])
def test_bad_input_names_the_parameter_and_exits_2(params, message, capsys):
    # Checks across parameters the network makes as it builds point, as the per-parameter
    # checks do, where the user wrote the value to change, with a caret under it.
    assert main(["run", SYSTEM, "-q"] + params) == 2
    err = capsys.readouterr().err
    name, value = params[1].split("=")
    assert err.startswith(f"-p {name}:1:1: error: "), err
    assert f"error: RadioStripes.fh.net: {message}" in err or f"error: {message}" in err
    assert f"\n{value}\n{'^' * len(value)}\n" in err
    assert "Traceback" not in err and "hint: " in err and "the value reaches the model at " in err


def test_a_bad_value_in_a_users_file_is_pointed_at_there(tmp_path, capsys):
    source = tmp_path / "mine.arch"
    source.write_text('import "fronthaul.arch"\n\nsystem Mine {\n    fh : BusFronthaul(aps = 8, users = 40)\n}\n')
    assert main(["run", str(source), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{source}:4:40: error: Mine.fh.stripes.net: users = 40 is more than the 32 antennas"), err
    assert "    fh : BusFronthaul(aps = 8, users = 40)\n" + " " * 39 + "^^\n" in err


def test_a_layout_with_a_gap_exits_2(tmp_path, capsys):
    edges = tmp_path / "gap.txt"
    edges.write_text("0 1\n1 2\n3 4\n")
    layout = f'layout="edge_list(\\"{edges}\\")"'
    assert main(["run", SYSTEM, "-q", "-p", "aps=4", "-p", layout]) == 2
    err = capsys.readouterr().err
    assert err.startswith("-p layout:1:1: error: RadioStripes.fh.net: layout ")
    assert "stripe with a gap: AP 3 does not reach the CP (2 APs cut off)" in err
    assert f"layout 'edge_list(\"{edges}\")'" in err
