"""An interleaved memory's bound on its next answer to a client whose oldest piece waits here
for its channel's link, or is on its way to the channel (the channel's newcomer, counting the
banks its bursts need behind every burst queued there): never later than the answer, on both
DRAM engines and the schedulers, and exact where the line ahead of the piece and a write
among it decide."""

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from archmodel.kernel import Component, Simulator, connect, model
from archmodel.models.basic import Sink, Source
from archmodel.models.memory import AddressMapping, DramController, InterleavedMemory
from archmodel.models.memory.timing import dram_clock, preset
from archmodel.models.messages import MemRequest

from .test_answer_bounds import client_request
from .test_splitting import client_bound_marks, responses_never_before_their_bounds

CLIENTS = "abcd"


def interleaved_bound_marks(requests: list, cycles: list, standard: str, engine: str, **params):
    """Run Source -> InterleavedMemory (its channels on ``engine``) -> Sink 1 ps short of every
    edge and ask the memory's bound for each client there: ``(marks, sink, period, reaction,
    mem)``, marks as :func:`~.test_splitting.responses_never_before_their_bounds` takes them."""
    top = Component("top", clock=dram_clock(preset(standard)))
    src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
    mem = InterleavedMemory("mem", top, standard=standard, **params)
    for channel in mem.channel_list:
        channel.engine = engine
    sink = Sink("sink", top, stop_after=len(requests))
    connect(src.out, mem.req)
    connect(mem.resp, sink.inp)
    period = preset(standard).tCK_ps
    clients = sorted({message.source for message in requests})
    marks = client_bound_marks(Simulator(top, seed=0), mem, clients, requests, cycles, period)
    assert len(sink.messages) == len(requests)
    assert {channel.engine_in_use for channel in mem.channel_list} == {engine}
    return marks, sink, period, mem.reaction_ps(mem.req, mem.resp), mem


@pytest.mark.parametrize("engine", ["python", "compiled"])
def test_a_piece_waiting_in_line_behind_a_write_is_bounded_by_its_place_and_the_write(engine):
    """Two HBM2E channels: client x reads 2 KiB (four pieces for each channel), w writes a
    burst of channel 0's second block, r reads it back, one request an edge. r's piece waits
    for channel 0's link behind x's last and w's pieces (k = 2, then 1, then 0 ahead of it:
    one leaves an edge), so it reaches the channel k edges after the link's next send and a
    link later; w's write is queued there before it, so it is answered from the write queue
    (forward_cycles after it enters), then the link back. The bound is that answer exactly
    from the edge r's piece first waits on, and a bound that did not see the write ahead (the
    channel holds none yet) would be later."""
    x = MemRequest(address=0, size_bytes=2048, source="x", tag=0)
    w = MemRequest(address=512, size_bytes=32, is_write=True, data=bytes(range(32)), source="w", tag=1)
    r = MemRequest(address=512, size_bytes=32, source="r", tag=2)
    marks, sink, period, _, mem = interleaved_bound_marks([x, w, r], [0, 1, 2], "HBM2E", engine, channels=2,
                                                          read_queue=64)
    answer = next(a.time_ps for a in sink.arrivals if a.message.source == "r") - period
    assert answer == 9 * period and mem.channel_list[0].forwarded_reads.value == 1
    # (the bound asked 1 ps before each edge, after the edges before it)
    bounds = {(t + 1) // period: bound for t, client, bound, _ in marks if client == "r"}
    assert [bounds[edge] for edge in range(4, 10)] == [answer] * 6  # (in line at 4, 5, 6; on the link at 7, 8)
    assert bounds[3] < answer  # (its request on its way to this memory: not yet in line)


def waiting_traffic(seed: int, standard: str, count: int) -> tuple[list, list]:
    """``count`` requests of four clients to a few rows of four banks in each of two channels
    (256 B blocks), of one burst up to four blocks (so pieces wait in line for a channel's
    link), some writes, and their cycles on the source (often one an edge)."""
    rng = random.Random(seed)
    t = preset(standard)
    mapping = AddressMapping(t)
    requests = []
    for tag in range(count):
        base = mapping.encode(bankgroup=rng.randrange(2), bank=rng.randrange(2), row=rng.randrange(3))
        size = rng.choice([t.burst_bytes, t.burst_bytes, 256, 512, 1024])
        address = base + rng.randrange(0, 2048 - size) // t.burst_bytes * t.burst_bytes
        source = rng.choice(CLIENTS)
        requests.append(client_request(address, size, source, tag, write=rng.random() < 0.2))
    cycles = sorted(rng.randrange(0, 3 * count) for _ in requests)
    return requests, cycles


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), standard=st.sampled_from(["DDR4-2400R", "HBM2E"]),
       engine=st.sampled_from(["python", "compiled"]),
       scheduler=st.sampled_from(["frfcfs", "fcfs", "frfcfs_cap"]), queue=st.sampled_from([8, 32]))
def test_no_answer_to_a_client_leaves_before_the_interleaved_bound_counting_its_line_and_banks(seed, standard,
                                                                                                engine, scheduler,
                                                                                                queue):
    requests, cycles = waiting_traffic(seed, standard, 40)
    marks, sink, period, reaction, _ = interleaved_bound_marks(requests, cycles, standard, engine, channels=2,
                                                               scheduler=scheduler, read_queue=queue,
                                                               write_queue=queue)
    checked, exact = responses_never_before_their_bounds(marks, sink, period, reaction)
    assert checked > 100 and exact > 10, (checked, exact)


@model(catalogue=False)
class NewcomerProber(Component):
    """Asks a controller at every edge, as another model's lookahead would during a run, for
    its bounds on newcomer reads (``probes``, arriving at the next edge), after a question
    about client a's answer when ``settled_first``: the bounds and the controller's bounds
    version then in ``marks``."""

    def setup(self):
        self.marks: list = []
        self.dram = None
        self.probes: list = []
        self.settled_first = False

    def tick(self):
        dram = self.dram
        if self.settled_first:
            dram.earliest_answer_ps("a")  # (decides the cycles the channel deferred, if any)
        arrival = self.now + dram.domain.period_ps
        bounds = [dram.newcomer_answer_ps(probe, arrival, writes_ahead=False) for probe in self.probes]
        self.marks.append((bounds, dram.bounds_version()))  # (the version counts the cycles decided)


def test_a_newcomers_bound_reads_the_state_the_edges_up_to_now_would_have_left():
    """Two like HBM2E channels on the compiled engine, fed the same reads and writes of four
    clients, asked at every edge during the run for the bounds on newcomer reads (one burst
    of each row the traffic uses): in the second after a question about a client's answer,
    which first decides the cycles the channel deferred (a channel that sleeps until an
    answer is due decides the cycles it passed over when asked). The bounds are equal, and so
    are the cycles decided by then (each decision changes the bounds' version): the
    newcomer's bank terms count every command still to come from the next edge on, so the
    question decides the cycles before it first."""
    from .test_answer_bounds import bank_traffic

    standard = "HBM2E"
    requests, cycles = bank_traffic(0, standard, 80)
    mapping = AddressMapping(preset(standard))
    probes = [MemRequest(address=mapping.encode(bankgroup=g, bank=b, row=row), size_bytes=64, source="new", tag=99)
              for g in range(2) for b in range(2) for row in range(3)]
    marks = []
    for settled_first in (False, True):
        top = Component("top", clock=dram_clock(preset(standard)))
        src = Source("src", top, pattern="list", messages=requests, cycles=cycles, wrap_in_packet=False)
        dram = DramController("dram", top, standard=standard, engine="compiled")
        sink = Sink("sink", top, stop_after=len(requests))
        prober = NewcomerProber("prober", top)
        prober.dram, prober.probes, prober.settled_first = dram, probes, settled_first
        connect(src.out, dram.req)
        connect(dram.resp, sink.inp)
        Simulator(top, seed=0).run()
        assert len(sink.messages) == len(requests) and dram.engine_in_use == "compiled"
        marks.append(prober.marks)
    assert len(marks[0]) > 200 and marks[0] == marks[1]
