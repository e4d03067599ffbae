import numpy as np
import pytest

from archmodel.kernel import ModelAssertion, ParameterError, Simulator, connect
from archmodel.models.basic import Sink, Source, Sram
from archmodel.models.messages import MemRequest

from .wiring import new_top


def sram_system(requests_per_port, *, sink_params=None, **sram_params):
    top = new_top()
    sram = Sram("mem", top, port_count=len(requests_per_port), **sram_params)
    sinks = []
    for port, requests in enumerate(requests_per_port):
        source = Source(f"cpu{port}", top, pattern="list", messages=requests, wrap_in_packet=False)
        connect(source.out, sram.req[port])
        sinks.append(Sink(f"resp{port}", top, **(sink_params or {})))
        connect(sram.resp[port], sinks[port].inp)
    return Simulator(top, shuffle=True), sram, sinks


def reads(addresses, source):
    return [MemRequest(address=a, size_bytes=8, source=source, tag=n) for n, a in enumerate(addresses)]


def test_ports_on_different_banks_never_conflict():
    # banks = 2, 8-byte words: port 0 reads words 0, 2, 4, 6 (bank 0), port 1 words 1, 3, 5, 7.
    sim, sram, (sink0, sink1) = sram_system([reads([0, 16, 32, 48], 0), reads([8, 24, 40, 56], 1)],
                                            size_bytes=1024, banks=2, latency_cycles=2)
    sim.run()
    assert sram.bank_conflicts.value == 0
    # granted at edges 1..4, responses sent two edges later, taken one edge after that
    assert sink0.arrival_cycles == sink1.arrival_cycles == [4, 5, 6, 7]
    assert [r.tag for r in sink0.messages] == [0, 1, 2, 3]
    assert sram.reads.value == 8


def test_ports_on_one_bank_take_turns_and_count_conflicts():
    sim, sram, (sink0, sink1) = sram_system([reads([0, 16, 32, 48], 0), reads([64, 80, 96, 112], 1)],
                                            size_bytes=1024, banks=2, latency_cycles=2)
    sim.run()
    # Bank 0 serves port 0 at edges 1, 3, 5, 7 and port 1 at 2, 4, 6, 8; at every edge but
    # the last one request waits.
    assert sram.bank_conflicts.value == 7
    assert sink0.arrival_cycles == [4, 6, 8, 10]
    assert sink1.arrival_cycles == [5, 7, 9, 11]


def test_full_rate_with_a_long_latency():
    sim, _, (sink,) = sram_system([reads(range(0, 64, 8), 0)], size_bytes=1024, banks=4, latency_cycles=5)
    sim.run()
    assert sink.arrival_cycles == list(range(7, 15))


def random_program(rng, region_words, count, word_bytes, port, ports):
    """Reads and writes of 1..word_bytes bytes in the words owned by ``port`` (word % ports)."""
    program = []
    for tag in range(count):
        size = int(rng.choice([1, 2, 4, 8]))
        word = int(rng.integers(region_words)) * ports + port
        address = word * word_bytes + int(rng.integers(word_bytes // size)) * size
        if rng.random() < 0.5:
            data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
            program.append(MemRequest(address=address, size_bytes=size, is_write=True, data=data, tag=tag))
        else:
            program.append(MemRequest(address=address, size_bytes=size, tag=tag))
    return program


def test_reads_and_writes_match_a_numpy_reference():
    ports, word_bytes, size = 3, 8, 4096
    rng = np.random.default_rng(7)
    initial = rng.integers(0, 256, size, dtype=np.uint8)
    programs = [random_program(rng, size // word_bytes // ports, 300, word_bytes, p, ports)
                for p in range(ports)]
    sim, sram, sinks = sram_system(programs, size_bytes=size, banks=4, word_bytes=word_bytes,
                                   latency_cycles=2, sink_params={"stall_probability": 0.3})
    sram.load(0, initial)
    sim.run()
    # Each port owns its own words, so the order between ports does not matter: replay
    # each port's program in order against a numpy copy.
    reference = initial.copy()
    for program, sink in zip(programs, sinks):
        responses = sink.messages
        assert [r.tag for r in responses] == [q.tag for q in program]
        for request, response in zip(program, responses):
            span = slice(request.address, request.address + request.size_bytes)
            if request.is_write:
                reference[span] = np.frombuffer(request.data, dtype=np.uint8)
                assert response.data is None
            else:
                assert response.data == reference[span].tobytes()
    assert np.array_equal(sram.data, reference)
    assert sram.reads.value + sram.writes.value == 900
    assert sram.bank_conflicts.value > 0


def test_held_back_responses_stop_the_port_without_losing_any():
    sim, sram, (sink,) = sram_system([reads(range(0, 80, 8), 0)], sink_params={"stall_cycles": range(3, 30)},
                                     size_bytes=1024, banks=4, latency_cycles=2)
    sim.run(until_ps=20_000)
    # The response channel holds two, the port keeps latency_cycles = 2 in flight: no more taken.
    assert sram.reads.value == 4
    sim.run()
    assert [r.tag for r in sink.messages] == list(range(10))


def test_an_address_outside_the_memory_names_the_port_and_address():
    bad = MemRequest(address=1024, size_bytes=8)
    sim, _, _ = sram_system([reads([0], 0), [bad]], size_bytes=1024, banks=2)
    with pytest.raises(ModelAssertion) as caught:
        sim.run()
    assert str(caught.value) == ("top.mem at 1000 ps: req[1]: read of 8 bytes at address 0x400 "
                                 "is outside the 1024-byte memory")


def test_a_misaligned_address_names_the_port_and_address():
    bad = MemRequest(address=0x14, size_bytes=8, is_write=True, data=bytes(8))
    sim, _, _ = sram_system([[bad]], size_bytes=1024, banks=2)
    with pytest.raises(ModelAssertion) as caught:
        sim.run()
    assert str(caught.value) == ("top.mem at 1000 ps: req[0]: write of 8 bytes at address 0x14 "
                                 "is misaligned (the address must be a multiple of the size)")


def test_a_write_with_the_wrong_amount_of_data_is_reported():
    bad = MemRequest(address=8, size_bytes=4, is_write=True, data=bytes(3))
    sim, _, _ = sram_system([[bad]], size_bytes=1024, banks=2)
    with pytest.raises(ModelAssertion, match=r"req\[0\]: write of 4 bytes at address 0x8 carries 3 bytes of data"):
        sim.run()


def test_a_size_that_is_not_a_multiple_of_the_word_is_rejected():
    with pytest.raises(ParameterError) as caught:
        Sram("mem", new_top(), size_bytes=1000, word_bytes=16)
    assert caught.value.message == ("top.mem: parameter 'size_bytes' must be a multiple of word_bytes (16), "
                                    "got 1000")
