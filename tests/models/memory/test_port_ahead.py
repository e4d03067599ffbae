"""Scheduling ahead through the ports: a controller fed on ``req`` and answering on ``resp``
schedules the cycles no request can reach in one tick, and sends every response at its true
cycle. It must issue the same commands at the same cycles, send the same responses at the same
times and end with the same statistics as the cycle-by-cycle reference (``engine = "python"``,
``lookahead_cycles = 0``)."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, Simulator, connect
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import DramController, DramTimingChecker
from archmodel.models.messages import MemRequest
from archmodel.models.memory.timing import dram_clock, preset

from .test_splitting import _random_requests, check_against_a_bytearray


def watch(dram: DramController) -> list:
    """Every command ``dram`` issues (all listener fields), as it issues it."""
    commands = []
    dram.add_command_listener(lambda *fields: commands.append(fields))
    return commands


def _fed_through_ports(standard, requests, cycles, reference, stall, **params):
    clock = dram_clock(preset(standard))
    top = Component("top", clock=clock)
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    if reference:
        params.update(engine="python", lookahead_cycles=0)
    dram = DramController("dram", top, standard=standard, **params)
    sink = Sink("sink", top, stop_after=len(requests), stall_probability=stall)
    checker = DramTimingChecker("checker", top, standard=standard)
    checker.watch(dram)  # a listener: the command bus stays unconnected, so the controller may run ahead
    connect(src.out, dram.req, latency=2)
    connect(dram.resp, sink.inp, latency=3)
    return top, dram, sink, checker


def run_both(standard, requests, cycles, stall=0.0, seed=0, **params):
    """Run the reference and the controller scheduling ahead; return both runs' records."""
    runs = []
    for reference in (True, False):
        top, dram, sink, checker = _fed_through_ports(standard, requests, cycles, reference, stall, **params)
        commands = watch(dram)
        sim = Simulator(top, seed=seed)
        result = sim.run()
        assert checker.violation_count.value == 0
        stats = [(stat.path, stat.summary()) for stat in sim.all_stats()]
        runs.append(dict(end=(result.reason, result.time_ps), commands=commands, stats=stats,
                         arrivals=[(a.time_ps, a.message.tag, a.message.data) for a in sink.arrivals],
                         dram=dram, sink=sink, ticks=result.ticks))
    return runs


def assert_alike(reference, ahead):
    for key in ("end", "commands", "arrivals", "stats"):
        assert reference[key] == ahead[key], key


def test_a_cluster_like_stream_of_large_reads_is_scheduled_ahead_with_the_reference_results():
    requests = [MemRequest(address=i * 1024, size_bytes=1024, source="dma", tag=i) for i in range(8)]
    reference, ahead = run_both("HBM2E", requests, cycles=[i * 200 for i in range(8)])
    assert_alike(reference, ahead)
    assert len(ahead["commands"]) > 100
    assert ahead["ticks"] < reference["ticks"] / 2  # the commands between responses in one tick each


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]), queue=st.sampled_from([2, 8, 32]),
       spread=st.sampled_from([0, 50, 400, 4000]), stall=st.sampled_from([0.0, 0.3]),
       refresh=st.sampled_from(["all_bank", "per_bank"]), page=st.sampled_from(["open", "closed"]))
def test_random_traffic_through_the_ports_matches_the_cycle_by_cycle_reference(seed, standard, scheduler, queue,
                                                                               spread, stall, refresh, page):
    base, span = 0, 1 << 14
    requests = _random_requests(seed, 40, span, base)
    cycles = sorted(random.Random(seed + 7).randrange(0, spread + 1) for _ in requests)
    reference, ahead = run_both(standard, requests, cycles, stall=stall, seed=seed, scheduler=scheduler,
                                read_queue=queue, write_queue=queue, refresh=refresh, page_policy=page)
    assert_alike(reference, ahead)
    assert ahead["ticks"] <= reference["ticks"]
    check_against_a_bytearray(requests, ahead["sink"].messages, base, span, ahead["dram"])


def test_an_answer_of_the_lookahead_is_short_below_four_cycles_per_sender_that_can_reach_the_controller():
    from archmodel.models.memory import InterleavedMemory
    from archmodel.models.memory.schedule_ahead import SHORT_CYCLES_PER_SENDER

    assert SHORT_CYCLES_PER_SENDER == 4
    top, dram, sink, checker = _fed_through_ports("HBM2E", [MemRequest(address=0x40, size_bytes=64, tag=0)], [0],
                                                  False, 0.0)
    Simulator(top).run()
    assert dram.short_horizon_cycles == 4  # the source alone sends to it
    top = Component("top", clock=dram_clock(preset("HBM2E")))
    src = Source("src", top, pattern="list", messages=[MemRequest(address=0x40, size_bytes=64, tag=0)], cycles=[0],
                 wrap_in_packet=False)
    mem = InterleavedMemory("mem", top, channels=4)
    sink = Sink("sink", top, stop_after=1)
    connect(src.out, mem.req)
    connect(mem.resp, sink.inp)
    Simulator(top).run()
    # a channel hears from the interleaved memory, and through it from the source
    assert [ch.short_horizon_cycles for ch in mem.channel_list] == [8] * 4


def test_after_short_answers_a_controller_behind_many_senders_lets_as_many_chances_pass_as_its_short_horizon():
    """A question of the lookahead walks every sender behind the controller: behind a chain of
    40 FIFOs (41 senders, a short horizon of 164 cycles) the backoff after short answers
    grows to 164 chances between questions, not the 64 that bound it for a lone source."""
    from archmodel.models.basic import Fifo

    requests = _random_requests(3, 30, 1 << 14, 0)
    top, dram, sink, checker = _fed_through_ports("HBM2E", requests, list(range(len(requests))), False, 0.0)
    Simulator(top).run()
    assert dram.short_horizon_cycles == 4 and dram._lookahead.most == 64
    top = Component("top", clock=dram_clock(preset("HBM2E")))
    src = Source("src", top, pattern="list", messages=requests, cycles=list(range(len(requests))),
                 wrap_in_packet=False)
    fifos = [Fifo(f"fifo{i}", top) for i in range(40)]
    dram = DramController("dram", top, standard="HBM2E")
    sink = Sink("sink", top, stop_after=len(requests))
    for before, after in zip([src] + fifos, fifos):
        connect(before.out, after.inp)
    connect(fifos[-1].out, dram.req)
    connect(dram.resp, sink.inp)
    assert Simulator(top).run().reason == "stopped"
    assert dram.short_horizon_cycles == 164 and dram._lookahead.most == 164
