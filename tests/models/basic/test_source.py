import pytest

from archmodel.kernel import ArchError, ParameterError, Simulator
from archmodel.models.basic import Sink, Source
from archmodel.models.messages import MemRequest, Packet

from .wiring import chain, new_top


def source_to_sink(seed=0, sink_params=None, **source_params):
    top = new_top()
    source = Source("src", top, **source_params)
    sink = Sink("sink", top, **(sink_params or {}))
    chain(source, sink)
    return Simulator(top, seed=seed), source, sink


def test_constant_sends_one_packet_per_cycle_and_stamps_it():
    sim, source, sink = source_to_sink(count=4, dest=3, size_bits=128, source_id=7)
    sim.run()
    assert sink.arrival_cycles == [1, 2, 3, 4]
    assert sink.messages[2] == Packet(source=7, dest=3, payload=2, size_bits=128, created_ps=2000, seq=2)
    assert source.sent.value == 4
    assert source.stalled_cycles.value == 0


def test_payload_and_destination_generators():
    sim, _, sink = source_to_sink(count=3, payload=lambda i, rng: i * i, dest=lambda i, rng: 10 + i)
    sim.run()
    assert [(m.payload, m.dest, m.source) for m in sink.messages] == [(0, 10, "top.src"), (1, 11, "top.src"),
                                                                    (4, 12, "top.src")]


def test_stalled_cycles_count_edges_a_due_message_waited():
    # The sink refuses edges 1..4; the channel holds two, so the source is blocked at edges
    # 2..5 and message 2 (due at 2) leaves at 6, carrying created_ps of edge 2.
    sim, source, sink = source_to_sink(count=4, sink_params={"stall_cycles": [1, 2, 3, 4]})
    sim.run()
    assert source.stalled_cycles.value == 4
    assert sink.arrival_cycles == [5, 6, 7, 8]
    assert [m.created_ps for m in sink.messages] == [0, 1000, 2000, 7000]
    assert list(sink.latency.samples) == [5000, 5000, 5000, 1000]


def test_list_with_send_cycles():
    sim, _, sink = source_to_sink(pattern="list", messages=["x", "y", "z"], cycles=[2, 2, 9])
    sim.run()
    assert sink.payloads == ["x", "y", "z"]
    # y is due at 2 as well but may leave only one edge after x
    assert sink.arrival_cycles == [3, 4, 10]
    assert [m.created_ps for m in sink.messages] == [2000, 2000, 9000]


def test_list_of_ready_made_messages_gets_created_ps():
    request = MemRequest(address=64, size_bytes=8, tag=5)
    sim, _, sink = source_to_sink(pattern="list", messages=[request, "plain"], cycles=[3, 4],
                                  wrap_in_packet=False)
    sim.run()
    assert sink.messages == [MemRequest(address=64, size_bytes=8, tag=5, created_ps=3000), "plain"]


def test_count_caps_a_list():
    sim, _, sink = source_to_sink(pattern="list", messages=list("abcdef"), count=2)
    sim.run()
    assert sink.payloads == ["a", "b"]


def test_bernoulli_rate_and_determinism():
    sim, source, sink = source_to_sink(pattern="bernoulli", rate=0.25, count=4000, seed=3)
    sim.run()
    created = [m.created_ps // 1000 for m in sink.messages]
    assert len(created) == 4000
    assert created == sorted(created)
    assert len(set(created)) == 4000  # at most one message per edge
    rate = 4000 / (created[-1] + 1)
    assert 0.23 < rate < 0.27
    # At 25% load nothing waits: each message leaves at the edge it is generated.
    assert source.stalled_cycles.value == 0
    assert sink.arrival_cycles == [c + 1 for c in created]
    again, _, same = source_to_sink(pattern="bernoulli", rate=0.25, count=4000, seed=3)
    again.run()
    assert same.arrivals == sink.arrivals
    other, _, different = source_to_sink(pattern="bernoulli", rate=0.25, count=4000, seed=4)
    other.run()
    assert different.arrival_cycles != sink.arrival_cycles


def test_bernoulli_at_full_rate_is_back_to_back():
    sim, _, sink = source_to_sink(pattern="bernoulli", rate=1.0, count=5)
    sim.run()
    assert sink.arrival_cycles == [1, 2, 3, 4, 5]


def test_bernoulli_over_capacity_queues_in_the_source():
    # Open loop: messages keep being generated while the sink refuses, so they leave late
    # and their latency includes the wait.
    sim, source, sink = source_to_sink(pattern="bernoulli", rate=1.0, count=6, sink_params={"stall_cycles": [1, 2]})
    sim.run()
    assert [m.created_ps // 1000 for m in sink.messages] == [0, 1, 2, 3, 4, 5]
    assert sink.arrival_cycles == [3, 4, 5, 6, 7, 8]
    assert source.stalled_cycles.value == 2


def test_file_pattern(tmp_path):
    trace = tmp_path / "traffic.txt"
    trace.write_text("# cycle payload\n0 017\n\n3 0x20   # hex\n3 hello\n")
    sim, _, sink = source_to_sink(pattern="file", trace_file=str(trace))
    sim.run()
    assert sink.payloads == [17, 32, "hello"]
    assert sink.arrival_cycles == [1, 4, 5]


@pytest.mark.parametrize("text, line, message", [
    ("0 1\n2\n", 2, "expected 'cycle payload', got '2'"),
    ("0 1\n\n5 a b\n", 3, "expected 'cycle payload', got '5 a b'"),
    ("soon 1\n", 1, "the cycle 'soon' is not a whole number"),
    ("4 1\n3 2\n", 2, "cycle 3 comes before the previous line's cycle 4"),
    ("-1 1\n", 1, "the cycle -1 is negative"),
])
def test_a_malformed_file_line_names_the_file_and_line(tmp_path, text, line, message):
    trace = tmp_path / "bad.txt"
    trace.write_text(text)
    with pytest.raises(ArchError) as caught:
        Source("src", new_top(), pattern="file", trace_file=str(trace))
    assert str(caught.value).splitlines()[0] == f"{trace}:{line}:1: error: {message}"


def test_a_missing_file_is_an_arch_error(tmp_path):
    missing = tmp_path / "nope.txt"
    with pytest.raises(ArchError) as caught:
        Source("src", new_top(), pattern="file", trace_file=str(missing))
    assert caught.value.message == f"top.src: cannot read traffic file '{missing}': No such file or directory"


def test_list_parameters_are_checked():
    with pytest.raises(ParameterError, match="pattern 'list' needs the parameter 'messages'"):
        Source("src", new_top(), pattern="list")
    with pytest.raises(ParameterError, match="2 messages but 1 cycles"):
        Source("src", new_top(), pattern="list", messages=[1, 2], cycles=[0])
    with pytest.raises(ParameterError, match=r"cycles must not decrease, but cycles\[1\] = 1 follows 5"):
        Source("src", new_top(), pattern="list", messages=[1, 2], cycles=[5, 1])
    with pytest.raises(ParameterError, match="parameter 'pattern' must be one of"):
        Source("src", new_top(), pattern="poisson")
