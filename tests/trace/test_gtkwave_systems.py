"""The bundled model systems' waveforms open in GTKWave with what their issues promise: DRAM
bank states, network handshakes and VC occupancy, per-core Snitch signals. Each system runs
from the CLI, and GTKWave (headless) loads the VCD with the .gtkw written beside it."""

import pytest

from archmodel.cli import main
from archmodel.paths import data_path

from .test_gtkwave import gtkwave_view, vcd_name

# system file, CLI options, signals GTKWave must display (suffixes of full names), and a signal
# whose value must change to a state string other than its reset state at some sampled time.
SYSTEMS = {
    "dram_ddr4": ([], ["bank0_state", "bank15_state", "bank0_row", "command", "data_bus", "rq_depth", "wq_depth"],
                  "bank0_state"),
    "dram_figcache": ([], ["bank0_state", "bank15_state"], "bank0_state"),
    "torus4x4": (["-p", "rate=0.2", "--trace", "Torus4x4.net.router[5].*"],
                 ["occ0_0", "occ1_0", "valid", "ready"], None),
    "snitch_cluster": (["-p", "m=16", "-p", "n=16", "-p", "k=8"],
                       ["core0.pc", "core0.fpu_busy", "core0.ssr0_fifo", "bank_grants"], None),
    # one waveform of a composed system: a cluster's cores, the routers' VC occupancy, DRAM banks
    "clusters_mesh": (["-p", "m=32"], ["cluster[0].core0.pc", "cluster[0].core3.fpu_busy", "router[0].occ1_0",
                                       "router[3].occ2_1", "ddr0.bank0_state", "ddr1.bank15_state"],
                      "ddr0.bank0_state"),
}


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_bundled_system_waveform_opens_in_gtkwave(name, tmp_path, capsys):
    options, wanted, stateful = SYSTEMS[name]
    vcd = tmp_path / f"{name}.vcd"
    code = main(["run", str(data_path("topologies") / f"{name}.arch"), "-q", "--vcd", str(vcd), *options])
    assert code == 0, capsys.readouterr().err
    gtkw = vcd.with_suffix(".gtkw")
    assert gtkw.exists()
    end = max(int(line.split()[0][1:]) for line in vcd.read_text().splitlines() if line.startswith("#"))
    times = [end * k // 8 for k in range(9)]
    displayed, span, values = gtkwave_view(tmp_path, vcd, gtkw, times)
    names = [vcd_name(d) for d in displayed]
    for signal in wanted:
        assert any(n.endswith("." + signal) for n in names), (signal, displayed[:20])
    assert span[1] == end
    if stateful:
        trace = next(d for d in displayed if d.endswith("." + stateful))
        shown = {values[t, trace] for t in times}
        assert len(shown) > 1 and shown - {"closed"}, shown
