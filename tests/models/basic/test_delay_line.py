import pytest

from archmodel.kernel import ParameterError, Simulator, connect
from archmodel.models.basic import DelayLine, Sink, Source

from .wiring import chain, new_top


def delay_line(latency_cycles, source_params, depth=None, sink_params=None, out_capacity=None):
    top = new_top()
    source = Source("src", top, **source_params)
    line = DelayLine("line", top, latency_cycles=latency_cycles, depth=depth)
    sink = Sink("sink", top, **(sink_params or {}))
    chain(source, line)
    connect(line.out, sink.inp, capacity=out_capacity)
    return Simulator(top), line, sink


@pytest.mark.parametrize("latency", [1, 2, 4, 7])
def test_each_message_leaves_exactly_latency_cycles_after_it_was_taken_in(latency):
    sim, line, sink = delay_line(latency, {"count": 6})
    sim.run()
    # taken in at edge i + 1, sent at i + 1 + latency, taken by the sink one edge later
    assert sink.arrival_cycles == [i + 2 + latency for i in range(6)]
    assert sink.payloads == list(range(6))
    assert line.passed.value == 6
    assert line.stalled_cycles.value == 0


def test_gaps_between_messages_are_kept():
    sim, _, sink = delay_line(3, {"pattern": "list", "messages": ["a", "b", "c"], "cycles": [0, 4, 5]})
    sim.run()
    assert sink.arrival_cycles == [5, 9, 10]


def test_backpressure_stalls_the_whole_pipe_and_keeps_the_spacing():
    # Taken in at edges 1, 3 and 6, due at 4, 6 and 9. The sink refuses edges 5..7 and the
    # output channel holds one message, so message 1 cannot leave at edge 6: the pipe stalls
    # for edges 6, 7 and 8 and every message behind is delayed by three edges. An elastic
    # queue would send message 2 at edge 10, right behind message 1; the pipe sends it at 12.
    sim, line, sink = delay_line(3, {"pattern": "list", "messages": [0, 1, 2], "cycles": [0, 2, 5]},
                                 sink_params={"stall_cycles": [5, 6, 7]}, out_capacity=1)
    sim.run()
    assert sink.arrival_cycles == [8, 10, 13]
    assert line.stalled_cycles.value == 3


def test_no_message_is_taken_in_while_the_pipe_is_stalled():
    sim, line, sink = delay_line(2, {"count": 8}, sink_params={"stall_cycles": range(4, 20)})
    # Messages 0 and 1 fill the output channel; message 2 is due at edge 5 and stalls the pipe.
    sim.run(until_ps=15_000)
    assert line.inp.channel.received == 4
    assert [message.payload for _, message in line.pipe] == [2, 3]
    sim.run()
    assert sink.payloads == list(range(8))
    # The sink takes message 0 at edge 20; the pipe resumes at 21 and then runs back to back.
    assert sink.arrival_cycles == [20, 21, 22, 23, 24, 25, 26, 27]
    assert line.stalled_cycles.value == 21 - 5


def test_depth_limits_the_messages_inside():
    sim, _, sink = delay_line(3, {"count": 4}, depth=1)
    sim.run()
    # One message at a time: the next one enters in the edge the previous one leaves.
    assert sink.arrival_cycles == [5, 8, 11, 14]


def test_rejects_a_latency_of_zero():
    with pytest.raises(ParameterError, match="parameter 'latency_cycles' must be at least 1, got 0"):
        DelayLine("line", new_top(), latency_cycles=0)
