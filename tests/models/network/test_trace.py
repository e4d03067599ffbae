"""Trace-driven injection: trace packets arrive with exact zero-load latencies, source queueing
counts in packet latency, malformed lines are errors naming file:line, and .arch files can
name a trace."""

import pytest

from archmodel.cli import main
from archmodel.kernel import ArchError, Simulator
from archmodel.models.network import Noc
from archmodel.models.network.trace import TracePacket, parse_trace, read_trace


def run_trace(path, **params):
    noc = Noc("net", trace_file=str(path), **params)
    sim = Simulator(noc)
    result = sim.run()
    assert result.reason == "stopped"  # the measurement stopped it: every trace packet arrived
    return noc


@pytest.mark.parametrize("topology,routing,params", [
    ("mesh(4, 4)", "dor", {}),
    ("torus(4, 2)", "dateline", {"link_latency": 2, "credit_delay": 2}),
    ("fat_tree(2, 3)", "updown", {"vc_alloc_delay": 2, "injection_latency": 3}),
])
def test_spaced_trace_packets_arrive_with_the_zero_load_latency(tmp_path, topology, routing, params):
    terminals = len(Noc("probe", topology=topology, routing=routing, **params).interfaces)
    packets = [TracePacket(5 + 150 * i, (7 * i + 1) % terminals, (5 * i + 3) % terminals, 1 + i % 4)
               for i in range(10)]
    path = tmp_path / "spaced.trace"
    path.write_text("# cycle source dest size_flits\n\n"
                    + "".join(f"{p.cycle} {p.source} {p.dest} {p.size}   # packet {i}\n" for i, p in enumerate(packets)))
    noc = run_trace(path, topology=topology, routing=routing, **params)
    expected = [noc.zero_load_latency(p.source, p.dest, p.size) for p in packets]
    assert list(noc.packet_latency.samples) == expected
    assert list(noc.network_latency.samples) == expected
    assert noc.measured_packets.value == len(packets)


def test_packets_of_one_source_queue_and_packet_latency_counts_the_wait(tmp_path):
    path = tmp_path / "burst.trace"
    # Unsorted lines: terminal 0 creates its packets in cycle order, same-cycle ones in file order.
    path.write_text("40 0 15 3\n10 0 5 2\n10 0 12 3\n")
    noc = run_trace(path, topology="mesh(4, 4)")
    zero = [noc.zero_load_latency(0, d, s) for d, s in ((5, 2), (12, 3), (15, 3))]
    # The second packet waits behind the first's 2 flits at the source; the third is alone.
    assert list(noc.packet_latency.samples) == [zero[0], zero[1] + 2, zero[2]]
    assert list(noc.network_latency.samples) == zero


@pytest.mark.parametrize("line,message", [
    ("5 1 2", "expected 4 fields"),
    ("5 1 two 1", "dest 'two' is not an integer"),
    ("-1 1 2 1", "cycle -1 is negative"),
    ("5 1 2 0", "size_flits must be at least 1"),
    ("5 16 2 1", "source terminal 16 does not exist (terminals are 0 .. 15)"),
    ("5 1 99 1", "dest terminal 99 does not exist"),
])
def test_a_malformed_line_is_an_error_naming_file_and_line(tmp_path, line, message):
    path = tmp_path / "bad.trace"
    path.write_text(f"# header\n0 0 1 1\n{line}\n")
    with pytest.raises(ArchError) as caught:
        Noc("net", topology="mesh(4, 4)", trace_file=str(path))
    assert f"{path}:3:1: error: " in str(caught.value)
    assert message in str(caught.value)


def test_a_missing_trace_file_is_an_error(tmp_path):
    with pytest.raises(ArchError, match="cannot read packet trace"):
        read_trace(str(tmp_path / "missing.trace"))


def test_parse_trace_reads_lines_from_python():
    assert parse_trace(["3 1 2 4  # c", "", "0 2 1 1"]) == [TracePacket(3, 1, 2, 4), TracePacket(0, 2, 1, 1)]


def test_an_arch_file_names_a_trace(tmp_path, capsys):
    trace = tmp_path / "packets.trace"
    trace.write_text("".join(f"{10 * i} {i % 9} {(i * 4) % 9} 2\n" for i in range(30)))
    arch = tmp_path / "traced.arch"
    arch.write_text('system Traced(trace: string = "") {\n'
                    '    net : Noc(topology = "mesh(3, 3)", vcs = 2, trace_file = trace)\n}\n')
    assert main(["run", str(arch), "-p", f'trace="{trace}"']) == 0
    table = capsys.readouterr().out
    delivered = sum(int(line.split()[1]) for line in table.splitlines() if ".delivered " in line)
    assert delivered == 30
    trace.write_text("0 0 1 1\n0 0 1\n")
    assert main(["run", str(arch), "-p", f'trace="{trace}"']) != 0
    assert f"{trace}:2:1: error: expected 4 fields" in capsys.readouterr().err
