from archmodel.kernel import Simulator
from archmodel.models.basic import Fifo, Sink, Source

from .wiring import chain, new_top


def fifo_line(depth, count, stall_cycles=None, shuffle=False):
    top = new_top()
    source = Source("src", top, count=count)
    fifo = Fifo("fifo", top, depth=depth)
    sink = Sink("sink", top, stall_cycles=stall_cycles)
    chain(source, fifo, sink)
    sim = Simulator(top, shuffle=shuffle)
    return sim, fifo, sink


def test_message_i_arrives_at_cycle_i_plus_3_between_constant_source_and_ready_sink():
    sim, fifo, sink = fifo_line(depth=2, count=10)
    assert sim.run().reason == "quiescent"
    assert sink.payloads == list(range(10))
    # sent at i, taken in at i + 1, sent on at i + 2, taken by the sink at i + 3
    assert sink.arrival_cycles == [i + 3 for i in range(10)]
    assert fifo.enqueued.value == fifo.dequeued.value == 10
    assert fifo.full_cycles.value == 0
    assert fifo.occupancy.maximum == 1


def test_depth_one_sustains_one_message_per_cycle():
    sim, _, sink = fifo_line(depth=1, count=10)
    sim.run()
    assert sink.arrival_cycles == [i + 3 for i in range(10)]


def test_timing_does_not_depend_on_tick_order():
    sim, _, sink = fifo_line(depth=2, count=8, stall_cycles=[4, 5, 6], shuffle=True)
    sim.run()
    reference_sim, _, reference = fifo_line(depth=2, count=8, stall_cycles=[4, 5, 6])
    reference_sim.run()
    assert sink.arrivals == reference.arrivals


def test_backpressure_fills_the_fifo_and_counts_full_cycles():
    sim, fifo, sink = fifo_line(depth=2, count=6, stall_cycles=range(3, 9))
    sim.run()
    assert sink.payloads == list(range(6))
    # The sink is not ready at edges 3..8; messages 0 and 1 wait in the output channel,
    # 2 and 3 fill the Fifo at edge 4, and it stays full until message 4 leaves at edge 12.
    assert sink.arrival_cycles == [9, 10, 11, 12, 13, 14]
    assert fifo.full_cycles.value == 8
    assert fifo.occupancy.maximum == 2


def test_full_blocked_fifo_sleeps_instead_of_ticking_every_cycle():
    sim, fifo, sink = fifo_line(depth=2, count=6, stall_cycles=range(3, 10_003))
    sim.run()
    assert sink.arrival_cycles[0] == 10_003
    assert fifo.full_cycles.value == 10_003 - 4 + 3
    # Ten thousand stalled cycles cost a few dozen ticks in all, not thousands.
    assert sim.ticks < 60


def test_occupancy_level_is_time_weighted():
    sim, fifo, _ = fifo_line(depth=2, count=4)
    sim.run()
    # One message held from edge 1 to edge 5 of a 7-edge run (edges 0..6: the last message
    # reaches the sink at edge 6 and nobody waits for its returning credit).
    assert sim.now == 6000
    assert fifo.occupancy.mean() == 4 / 7
