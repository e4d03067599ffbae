import json

from archmodel.cli import main
from archmodel.paths import data_path


def test_the_snitch_topology_runs_gemm_from_the_cli_with_grouped_waveforms(tmp_path, capsys):
    arch = data_path("topologies") / "snitch_cluster.arch"
    vcd, stats = tmp_path / "snitch.vcd", tmp_path / "snitch.json"
    code = main(["run", str(arch), "-p", "m=16", "-p", "n=16", "-p", "k=8", "--vcd", str(vcd),
                 "--stats", str(stats), "-q"])
    assert code == 0, capsys.readouterr()
    figures = json.loads(stats.read_text())["statistics"]
    assert figures["SnitchClusterGemm.node.cluster.dma.bytes_out"]["value"] == 8 * 16 * 16
    assert figures["SnitchClusterGemm.node.cluster.flops"]["value"] == 2 * 16 * 16 * 8 - 16 * 16
    text = vcd.read_text()
    for signal in ("pc", "fpu_busy", "ssr0_fifo", "ssr2_fifo", "bank_grants", "bytes_in_flight"):
        assert f" {signal} $end" in text
    save = (tmp_path / "snitch.gtkw").read_text()
    assert "-SnitchClusterGemm.node.cluster.core3\n" in save
    assert save.index("core3.pc") < save.index("core3.ssr0_fifo") < save.index("-SnitchClusterGemm.node.cluster.core4")
