"""Interleaved memories: which channel serves which address, requests crossing channels,
backdoor access block by block, order per client, and the computing-ahead bound."""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, ModelAssertion, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import InterleavedMemory
from archmodel.models.memory.splitting import KeepsAnswerBounds
from archmodel.models.memory.timing import dram_clock, preset
from archmodel.models.messages import MemRequest

from .test_splitting import (_next_arrival_ps, _random_requests, bounds_kept_against_fresh, check_against_a_bytearray,
                             check_the_bound_at_every_slice, next_arrival_ps, responses_never_before_their_bounds)
from .wiring import run


def ported_interleaved(messages, cycles=None, standard="HBM2E", **params):
    """Source -> InterleavedMemory -> Sink in the DRAM clock."""
    top = Component("top", clock=dram_clock(preset(standard)))
    src = Source("src", top, pattern="list", messages=messages, cycles=cycles, wrap_in_packet=False)
    mem = InterleavedMemory("mem", top, standard=standard, **params)
    sink = Sink("sink", top, stop_after=len(messages))
    connect(src.out, mem.req)
    connect(mem.resp, sink.inp)
    return top, src, mem, sink


def test_consecutive_256_byte_blocks_go_to_consecutive_channels():
    mem = InterleavedMemory("mem", Component("top"), channels=4, base_address=0x1_0000_0000)
    assert [mem.channel_of(0x1_0000_0000 + i * 256) for i in range(6)] == [0, 1, 2, 3, 0, 1]
    assert mem.channel_of(0x1_0000_00ff) == 0 and mem.channel_of(0x1_0000_0100) == 1
    assert mem.size_bytes == 4 * (256 << 20)


def test_a_request_crossing_channels_is_served_by_each_and_answered_once():
    content = bytes(random.Random(2).getrandbits(8) for _ in range(1024))
    requests = [MemRequest(address=0x80, size_bytes=1024, source="dma", tag=5),
                MemRequest(address=0xf8, size_bytes=16, is_write=True, data=b"\x77" * 16, source="dma", tag=6)]
    top, src, mem, sink = ported_interleaved(requests, cycles=[0, 400], channels=4)
    mem.backdoor_write(0x80, content)
    run(top)
    assert [(m.tag, m.data) for m in sink.messages] == [(5, content), (6, None)]
    # 0x80 .. 0x47f: half a block in channel 0, whole blocks in 1, 2, 3, then half a block in 0.
    assert [ch.bytes_read.value for ch in mem.channel_list] == [256, 256, 256, 256]
    # The write crosses from channel 0's block into channel 1's: 8 bytes each.
    assert [ch.bytes_written.value for ch in mem.channel_list] == [8, 8, 0, 0]
    assert mem.backdoor_read(0xf0, 32) == content[0x70:0x78] + b"\x77" * 16 + content[0x88:0x90]
    assert mem.channel_list[1].backdoor_read(0x100, 8) == b"\x77" * 8
    assert (mem.client_requests.value, mem.split_requests.value) == (2, 2)


def test_a_channel_refuses_an_address_of_another_channel():
    mem = InterleavedMemory("mem", Component("top"), channels=2)
    with pytest.raises(ValueError) as err:
        mem.channel_list[1].backdoor_read(0x0, 8)
    assert str(err.value) == ("top.mem.ch1: backdoor read of 8 bytes at 0x0 is outside this memory (channel 1 of 2: "
                              "the 256-byte blocks of 0x0 .. 0x1fffffff, 536870912 bytes with channel index 1)")


def test_a_request_beyond_the_interleaved_memory_names_the_requester_and_the_range():
    requests = [MemRequest(address=0x7fff_fff0, size_bytes=32, source="dma")]
    top, src, mem, sink = ported_interleaved(requests, channels=8)
    with pytest.raises(ModelAssertion) as err:
        run(top)
    assert str(err.value) == ("top.mem at 625 ps: req: read of 32 bytes at 0x7ffffff0 from 'dma' is outside this "
                              "memory (0x0 .. 0x7fffffff, 2147483648 bytes)")


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), channels=st.sampled_from([2, 4]), block=st.sampled_from([64, 256]))
def test_random_requests_over_channels_answer_as_a_bytearray_would_in_order_per_client(seed, channels, block):
    base, span = 0x2000_0000, 1 << 13
    requests = _random_requests(seed, 60, span, base)
    cycles = sorted(random.Random(seed).randrange(0, 300) for _ in requests)
    top, src, mem, sink = ported_interleaved(requests, cycles, channels=channels, interleave_bytes=block,
                                             base_address=base, read_queue=4, write_queue=4, pending_pieces=4)
    run(top, seed=seed)
    check_against_a_bytearray(requests, sink.messages, base, span, mem)


def test_no_response_leaves_before_the_interleaved_memorys_bound():
    period = preset("HBM2E").tCK_ps
    for seed in range(3):
        requests = _random_requests(seed, 40, 1 << 12, 0)
        cycles = sorted(random.Random(seed + 1).randrange(0, 200) for _ in requests)
        top, src, mem, sink = ported_interleaved(requests, cycles, channels=4, read_queue=4, write_queue=4)
        assert mem.reaction_ps(mem.req, mem.resp) == 3 * period
        assert check_the_bound_at_every_slice(top, mem, src, sink, period, step=2, seed=seed)


def test_no_piece_leaves_for_a_channel_before_the_interleaved_memorys_bound_on_its_link():
    # Cycle by cycle, for every channel: the next piece sent on its link comes no sooner than
    # the memory's bound on that link, or than a request arriving meanwhile (taken and cut
    # at the edge it arrives at the soonest). Small queues and few pending pieces keep pieces
    # waiting for links and channels refusing them.
    from archmodel.kernel import Simulator

    period = preset("HBM2E").tCK_ps
    checked = useful = 0
    for seed in range(3):
        requests = _random_requests(seed, 40, 1 << 12, 0)
        cycles = sorted(random.Random(seed + 1).randrange(0, 200) for _ in requests)
        top, src, mem, sink = ported_interleaved(requests, cycles, channels=4, read_queue=2, write_queue=2,
                                                 pending_pieces=2)
        assert mem.reaction_ps(mem.req, mem.to_channel[0]) == 0
        assert mem.reaction_ps(mem.from_channel[1], mem.to_channel[0]) is None
        sim = Simulator(top, seed=seed)
        marks = []  # (1 ps before an edge, the bound on each link, the next request's arrival, pieces sent)
        t = period - 1
        while sim.run(until_ps=t).reason == "limit":
            marks.append((t, [mem.earliest_send_ps(port) for port in mem.to_channel],
                          _next_arrival_ps(mem, src, t, period), [port.channel.sent for port in mem.to_channel]))
            t += period
        for k, (t, bounds, arrival, _) in enumerate(marks):
            for i in range(4):
                # the edge (1 ps after a mark) at which the next piece for channel i left
                later = [edge + 1 for (edge, _, _, sent), (_, _, _, then) in zip(marks[k:], marks[k + 1:])
                         if then[i] > sent[i]]
                limits = [x for x in (bounds[i], arrival) if x is not None]
                if later:
                    assert limits, f"seed {seed}: at {t} ps the link to channel {i} claims no piece, one leaves at {later[0]}"
                    assert later[0] >= min(limits), (seed, t, i, bounds[i], arrival, later[0])
                    checked += 1
                useful += bounds[i] is None or bounds[i] > t + 1
    assert checked > 1000 and useful > 1000


def test_no_request_is_taken_before_the_interleaved_memorys_take_bound():
    # Cycle by cycle, the bound on when the request at the head of req is taken (asked while
    # it is the head, the latest answer kept) is never later than the edge that takes it.
    # Requests of up to 64 pieces over few pending pieces, small queues and slow links keep
    # the intake waiting for the channels: many takes wait for several sends first.
    from archmodel.kernel import Simulator

    period = preset("HBM2E").tCK_ps
    checked = tight = ahead = 0
    for seed in range(6):
        rng = random.Random(seed)
        requests = _random_requests(seed, 60, 1 << 14, 0)
        cycles = sorted(rng.randrange(0, 150) for _ in requests)
        top, src, mem, sink = ported_interleaved(requests, cycles, channels=rng.choice([2, 4]),
                                                 interleave_bytes=rng.choice([32, 64, 256]),
                                                 read_queue=rng.choice([1, 2, 8]), write_queue=rng.choice([1, 2, 8]),
                                                 pending_pieces=rng.choice([1, 3, 8]),
                                                 link_latency_cycles=rng.choice([1, 2, 3]))
        sim = Simulator(top, seed=seed)
        channel = mem.req.channel
        kept = None  # (the head asked about, the latest bound asked while it was the head)
        received = 0
        cycle = 0
        while sim.run(cycles=cycle).reason == "limit":
            if channel.received != received:
                if kept is not None:  # the head asked about was taken at this edge (one per edge)
                    assert channel.received == received + 1 and channel.taken_at == sim.now
                    assert kept[1] <= sim.now, (seed, kept[1], sim.now)
                    checked += 1
                    tight += kept[1] == sim.now
                received = channel.received
                kept = None
            if channel.flight:
                bound = mem.earliest_take_ps(mem.req)
                assert bound >= sim.now
                ahead += bound >= sim.now + 2 * period
                if kept is None or kept[0] is not channel.flight[0][1]:
                    kept = (channel.flight[0][1], bound)
                kept = (kept[0], max(kept[1], bound))
            cycle += 1
        assert len(sink.messages) == len(requests)
        assert mem.earliest_take_ps(mem.from_channel[0]) == sim.now
    assert checked == 6 * 60 and tight > 100 and ahead > 300, (checked, tight, ahead)


@pytest.mark.parametrize("seed", range(4))
def test_no_response_to_a_client_leaves_before_the_interleaved_memorys_bound_for_it(seed):
    # Edge by edge, the next response to each of three clients leaves no sooner than its own
    # bound (earliest_answer_ps), whatever the other clients' requests do meanwhile, unless
    # one of its own requests arrives in between (then no sooner than that arrival plus the
    # reaction). It is never sooner than the bound on the next response to anyone, and later
    # at many edges (another client's piece answered first no longer counts).
    from archmodel.kernel import Simulator

    rng = random.Random(seed)
    requests = _random_requests(seed, 60, 1 << 13, 0)
    cycles = sorted(rng.randrange(0, 300) for _ in requests)
    top, src, mem, sink = ported_interleaved(requests, cycles, channels=rng.choice([2, 4]),
                                             interleave_bytes=rng.choice([32, 64, 256]),
                                             read_queue=rng.choice([2, 8]), write_queue=rng.choice([2, 8]),
                                             pending_pieces=rng.choice([2, 8, 32]),
                                             link_latency_cycles=rng.choice([1, 2]))
    period = preset("HBM2E").tCK_ps
    reaction = mem.reaction_ps(mem.req, mem.resp)
    sim = Simulator(top, seed=seed)
    marks = []  # (time, client, bound, arrival of the client's next request not yet arrived)
    later = 0  # questions whose bound for the client was later than the one for anyone
    t = period - 1
    while sim.run(until_ps=t).reason == "limit":
        whole = mem.earliest_send_ps(mem.resp)
        for client in "abc":
            bound = mem.earliest_answer_ps(client)
            if bound is not None:
                assert whole is not None and whole <= bound, (t, client, whole, bound)
                later += bound > whole
            marks.append((t, client, bound, next_arrival_ps(mem, requests, cycles, period, t, client)))
        t += period
    assert len(sink.messages) == len(requests)
    checked, tight = responses_never_before_their_bounds(marks, sink, period, reaction)
    assert checked > 300 and tight > 20 and later > 100, (checked, tight, later)


def test_the_interleaved_memorys_bounds_version_grows_whenever_a_channels_does():
    # Its bounds read its channels' state, so a bound kept on its version must not outlive a
    # change of theirs: whenever a channel's version grew (it worked, or a piece was sent to
    # it), the memory's grew too, also while the memory sleeps and its channels work.
    from archmodel.kernel import Simulator

    period = preset("HBM2E").tCK_ps
    requests = _random_requests(3, 40, 1 << 13, 0)
    cycles = sorted(random.Random(4).randrange(0, 300) for _ in requests)
    top, src, mem, sink = ported_interleaved(requests, cycles, channels=4, read_queue=4, write_queue=4)
    sim = Simulator(top, seed=3)
    def versions():  # the memory's, its own part alone (its work and requests), its channels'
        return mem.bounds_version(), KeepsAnswerBounds.bounds_version(mem), [ch.bounds_version() for ch in mem.channel_list]

    last = versions()
    grew = alone = 0  # edges a channel's version grew at, and of them those the memory did not work at
    t = period - 1
    while sim.run(until_ps=t).reason == "limit":
        now = versions()
        assert now[0] >= last[0]
        if now[2] != last[2]:
            assert now[0] > last[0], t
            grew += 1
            alone += now[1] == last[1]
        last = now
        t += period
    assert len(sink.messages) == len(requests) and grew > 100 and alone > 20, (grew, alone)


SYSTEM = """
import "dram.arch"

system Memories(requests: int = 200) {
    clock dram = 1600 MHz
    hbm_gen  : DramTrafficGenerator(pattern = "random", count = requests, write_fraction = 0.33,
                                    capacity_bytes = 2 GiB, burst_bytes = 64)
    hbm      : HBM2E(channels = 8)
    hbm_sink : Sink(stop_after = requests, record = false)
    ddr_gen  : DramTrafficGenerator(pattern = "sequential", count = requests, capacity_bytes = 32 GiB,
                                    burst_bytes = 128)
    ddr      : DDR4(channels = 2, ranks = 2, base_address = 0)
    ddr_sink : Sink(record = false)
    one      : HBM2E_PC(base_address = 0)
    hbm_gen.out -> hbm.req
    hbm.resp -> hbm_sink.inp
    ddr_gen.out -> ddr.req
    ddr.resp -> ddr_sink.inp
}
"""


def test_the_library_modules_check_and_run_in_a_system(tmp_path, capsys):
    from archmodel.cli import main

    path = tmp_path / "memories.arch"
    path.write_text(SYSTEM)
    assert main(["check", str(path)]) == 0
    stats = tmp_path / "stats.json"
    assert main(["run", str(path), "-q", "--stats", str(stats)]) == 0
    values = {k: v["value"] for k, v in json.loads(stats.read_text())["statistics"].items() if "value" in v}
    # The run stops when the HBM's sink has every answer; the DDR4 is still busy then.
    assert values["Memories.hbm.mem.client_requests"] == values["Memories.hbm_sink.received"] == 200
    assert sum(values[f"Memories.hbm.mem.ch{i}.client_requests"] for i in range(8)) >= 200
    assert values["Memories.ddr_sink.received"] > 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_interleaved_memorys_bounds_and_its_channels_kept_are_those_worked_out_afresh(seed):
    """The interleaved memory's bounds and its channels' (each kept while its state holds,
    the channels' as terms of the time) equal the ones worked out from scratch at every
    slice end, edges and between them; small queues keep pieces waiting."""
    period = preset("HBM2E").tCK_ps
    requests = _random_requests(seed, 60, 1 << 13, 0)
    cycles = sorted(random.Random(seed + 1).randrange(0, 300) for _ in requests)

    def build():
        top, _, mem, _ = ported_interleaved(requests, cycles, channels=4, read_queue=4, write_queue=4,
                                            pending_pieces=4)
        return top, mem

    assert bounds_kept_against_fresh(build, lambda mem: [mem, *mem.channel_list], period, seed) > 0
