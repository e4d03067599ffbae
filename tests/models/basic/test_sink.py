import pytest

from archmodel.kernel import ClockDomain, ParameterError, Simulator, connect
from archmodel.models.basic import Arrival, Sink, Source

from .wiring import chain, new_top


def source_to_sink(seed=0, source_params=None, **sink_params):
    top = new_top()
    source = Source("src", top, **({"count": 10} if source_params is None else source_params))
    sink = Sink("sink", top, **sink_params)
    chain(source, sink)
    return Simulator(top, seed=seed), source, sink


def test_records_arrival_cycle_time_and_message():
    sim, _, sink = source_to_sink(source_params={"pattern": "list", "messages": ["a"], "cycles": [4]})
    sim.run()
    (arrival,) = sink.arrivals
    assert arrival == Arrival(cycle=5, time_ps=5000, message=arrival.message)
    assert arrival.message.payload == "a"


def test_latency_in_ps_and_bandwidth():
    sim, _, sink = source_to_sink(source_params={"count": 10, "size_bits": 64}, stop_after=10)
    assert sim.run().time_ps == 10_000
    assert list(sink.latency.samples) == [1000.0] * 10
    assert sink.latency.unit == "ps"
    assert sink.received.value == 10
    assert sink.received_bits.value == 640
    # 80 bytes over the 11 edges 0..10 of 1 ns each
    assert sink.bandwidth.summary()["value"] == pytest.approx(80 / 11)
    assert sink.throughput.summary()["value"] == pytest.approx(10 / 11)


def test_arrival_cycles_count_the_sinks_own_clock():
    top = new_top(1000)
    source = Source("src", top, count=3)
    sink = Sink("sink", top, clock=ClockDomain("fast", 400))
    connect(source.out, sink.inp)
    Simulator(top).run()
    # sent at 0, 1000, 2000 ps; each arrives at the first 400 ps edge after it was sent
    assert [a.time_ps for a in sink.arrivals] == [400, 1200, 2400]
    assert sink.arrival_cycles == [1, 3, 6]
    assert list(sink.latency.samples) == [400, 200, 400]


def test_listed_stall_cycles_hold_messages_back_in_order():
    sim, _, sink = source_to_sink(stall_cycles=[2, 3, 4, 8])
    sim.run()
    assert sink.payloads == list(range(10))
    assert sink.arrival_cycles == [1, 5, 6, 7, 9, 10, 11, 12, 13, 14]


def test_random_stalls_create_backpressure_without_losing_messages():
    sim, source, sink = source_to_sink(source_params={"count": 2000}, stall_probability=0.5, seed=11)
    sim.run()
    assert sink.payloads == list(range(2000))
    assert source.stalled_cycles.value > 0
    throughput = sink.throughput.summary()["value"]
    assert 0.45 < throughput < 0.55
    again, _, same = source_to_sink(source_params={"count": 2000}, stall_probability=0.5, seed=11)
    again.run()
    assert same.arrivals == sink.arrivals


def test_stop_after_ends_an_endless_run():
    sim, _, sink = source_to_sink(source_params={}, stop_after=25)
    result = sim.run(cycles=1000)
    assert result.reason == "stopped"
    assert result.time_ps == 25_000
    assert sink.received.value == 25


def test_record_false_keeps_only_statistics():
    sim, _, sink = source_to_sink(record=False)
    sim.run()
    assert sink.arrivals == []
    assert sink.received.value == 10
    assert sink.latency.count == 10


def test_stall_cycles_must_be_cycle_numbers():
    with pytest.raises(ParameterError, match="parameter 'stall_cycles' must hold cycle numbers"):
        Sink("sink", new_top(), stall_cycles=[1, "2"])
