"""Channel timing: latency, credits, width serialisation and clock-domain crossing."""

import pytest

from archmodel.kernel import ClockDomain, Component, Simulator, connect

from .components import Consumer, Producer


def build(latency=1, capacity=None, width_bits=None, tx=None, rx=None, count=5):
    top = Component("top", clock=tx or ClockDomain("clk", 1000))
    producer = Producer("p", top, count=count)
    consumer = Consumer("c", top, clock=rx)
    connect(producer.out, consumer.inp, latency=latency, capacity=capacity, width_bits=width_bits)
    return top, producer, consumer


def test_latency_counts_receiver_cycles_and_default_capacity_sustains_full_rate():
    top, producer, consumer = build(latency=3)
    Simulator(top).run()
    assert producer.sent_at == [0, 1000, 2000, 3000, 4000]
    assert consumer.log == [(3000, 0), (4000, 1), (5000, 2), (6000, 3), (7000, 4)]


def test_one_credit_halves_throughput_because_the_credit_returns_at_the_next_edge():
    top, producer, consumer = build(latency=1, capacity=1)
    Simulator(top).run()
    assert producer.sent_at == [0, 2000, 4000, 6000, 8000]
    assert [t for t, _ in consumer.log] == [1000, 3000, 5000, 7000, 9000]


class Sized(int):
    """An integer message that says it is 100 bits long."""

    size_bits = 100


def test_width_serialises_a_message_over_ceil_size_over_width_cycles():
    top = Component("top", clock=ClockDomain("clk", 1000))
    producer = Producer("p", top, count=3)
    producer.make = Sized
    consumer = Consumer("c", top)
    ch = connect(producer.out, consumer.inp, latency=2, capacity=8, width_bits=32)
    Simulator(top).run()
    # 4 beats per message: sends at 0, 4000, 8000; tail leaves 3 cycles later, arrives 2 later.
    assert producer.sent_at == [0, 4000, 8000]
    assert [t for t, _ in consumer.log] == [5000, 9000, 13000]
    assert ch.beats == 12


def test_clock_crossing_1ghz_to_800mhz_arrives_at_receiver_edges():
    fast = ClockDomain("core", 1000)
    slow = ClockDomain.from_frequency("noc", 800_000_000)
    assert slow.period_ps == 1250
    top, producer, consumer = build(latency=2, capacity=4, tx=fast, rx=slow, count=6)
    Simulator(top).run()
    # A message sent at t arrives at the 2nd 800 MHz edge strictly after t. Credits freed at
    # receiver edge r are usable from the first 1 GHz edge after r.
    assert producer.sent_at == [0, 1000, 2000, 3000, 4000, 5000]
    assert consumer.log == [(2500, 0), (3750, 1), (5000, 2), (6250, 3), (7500, 4), (8750, 5)]


def test_clock_crossing_800mhz_to_1600mhz():
    slow = ClockDomain("noc", 1250)
    fast = ClockDomain.from_frequency("dram", 1_600_000_000)
    assert fast.period_ps == 625
    top, producer, consumer = build(latency=1, capacity=2, tx=slow, rx=fast, count=3)
    Simulator(top).run()
    assert producer.sent_at == [0, 1250, 2500]
    assert consumer.log == [(625, 0), (1875, 1), (3125, 2)]


def test_phase_shifted_domain():
    a = ClockDomain("a", 1000)
    b = ClockDomain("b", 1000, phase_ps=300)
    top, producer, consumer = build(latency=1, tx=a, rx=b, count=2)
    Simulator(top).run()
    assert consumer.log == [(300, 0), (1300, 1)]


def test_send_without_credit_is_a_model_error_naming_the_port():
    from archmodel.kernel import ModelAssertion
    top, producer, consumer = build(latency=1, capacity=1)
    sim = Simulator(top)
    sim.run(cycles=1)
    with pytest.raises(ModelAssertion, match=r"top\.p\.out: send\(\) while not ready"):
        producer.out.send(99)


def test_each_side_moves_at_most_one_message_per_edge():
    from archmodel.kernel import In, ModelAssertion, Out, model

    @model(catalogue=False)
    class Greedy(Component):
        """Tries to send three messages at every edge."""

        out = Out("numbers")

        def setup(self):
            self.sent = []

        def tick(self):
            for _ in range(3):
                if self.out.try_send(len(self.sent)):
                    self.sent.append(self.now)

    @model(catalogue=False)
    class Gulper(Component):
        """Takes every message it is allowed to at each edge."""

        inp = In("numbers")

        def setup(self):
            self.log = []

        def tick(self):
            while self.inp.valid:
                self.log.append((self.now, self.inp.recv()))
            if self.cycle == 5:
                with pytest.raises(ModelAssertion, match="recv\\(\\) while not valid"):
                    self.inp.recv()
                self.sim.stop()

    top = Component("top")
    greedy, gulper = Greedy("g", top), Gulper("r", top)
    connect(greedy.out, gulper.inp, latency=1, capacity=8)
    Simulator(top).run()
    assert greedy.sent == [0, 1000, 2000, 3000, 4000, 5000]
    assert gulper.log == [(1000, 0), (2000, 1), (3000, 2), (4000, 3), (5000, 4)]


def test_a_request_port_connected_without_its_answer_port_is_an_error_naming_both():
    from archmodel.kernel import PortError, Simulator
    from archmodel.models.basic import Sink
    from archmodel.models.compute import SnitchCluster

    top = Component("top")
    cluster = SnitchCluster("cl", top, cores=1)
    memory = Sink("mem", top)
    connect(cluster.ext_req, memory.inp)
    with pytest.raises(PortError) as info:
        Simulator(top)
    assert info.value.message == ("top.cl.ext_req is connected but top.cl.ext_rsp is not: requests sent there "
                               "would never be answered")
    assert info.value.hint == "connect the answers back: ... -> cl.ext_rsp"
