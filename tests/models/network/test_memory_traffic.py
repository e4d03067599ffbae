"""Memory traffic over a network: a requester reaches two memories through a 2 x 2 mesh by an
address map, on the Python engines and the compiled one, with exact latencies, request-ordered
responses and the address-map errors pinned; and a memory on another die, across a DieToDieLink."""

import random
from collections import deque

import pytest

from archmodel.cli import main
from archmodel.kernel import Component, In, ModelAssertion, Out, ParameterError, PortError, Simulator, connect, model
from archmodel.models.compute import FixedLatencyMemory
from archmodel.models.memory import DramController
from archmodel.models.messages import MemRequest, MemResponse
from archmodel.models.network import DieToDieLink, MemoryMappedInterface, Noc, NocRouter
from archmodel.paths import data_path

MIB = 1 << 20
MEMORIES = {1: 0, 3: MIB}  # terminal -> base address of its 1 MiB memory
ENGINES = ["components", "fast", "compiled"]


@model(catalogue=False)
class ScriptedRequester(Component):
    """Sends its script of MemRequests, one per cycle while the network takes them, and logs
    (cycle, message) of what it sent and received."""

    req = Out("MemRequests")
    rsp = In("MemResponses", required=False)

    def setup(self) -> None:
        self.script: deque = deque()
        self.sent: list = []
        self.received: list = []

    def tick(self) -> None:
        if self.rsp.valid:
            self.received.append((self.cycle, self.rsp.recv()))
        if self.script and self.req.try_send(self.script[0]):
            self.sent.append((self.cycle, self.script.popleft()))
        if not self.script and not len(self.rsp):
            self.sleep()


def build(engine="components", latencies=None, **params):
    """A 2 x 2 mesh with the requester at terminal 0 and a FixedLatencyMemory at terminals 1
    and 3 (``latencies``: terminal -> latency_cycles, default 10)."""
    latencies = latencies or {}
    top = Component("top")
    ranges = [(base, base + MIB, t) for t, base in MEMORIES.items()]
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=ranges, engine=engine, **params)
    cpu = ScriptedRequester("cpu", top)
    connect(cpu.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), cpu.rsp)
    memories = {}
    for t, base in MEMORIES.items():
        memory = FixedLatencyMemory(f"mem{t}", top, base_address=base, size_bytes=MIB,
                                    latency_cycles=latencies.get(t, 10), bytes_per_cycle=64)
        connect(noc.memory_port("to_memory", t), memory.req)
        connect(memory.rsp, noc.memory_port("from_memory", t))
        memories[t] = memory
    return top, noc, cpu, memories


def run(top, cpu, requests):
    cpu.script.extend(requests)
    Simulator(top, seed=1).run(cycles=20_000)
    return cpu.received


@pytest.mark.parametrize("engine", ENGINES)
def test_reads_and_writes_reach_the_memory_owning_each_address(engine):
    top, noc, cpu, memories = build(engine)
    memories[3].backdoor_write(MIB + 0x200, bytes(range(64)))
    first, second = bytes(range(100, 164)), bytes(range(32))
    requests = [MemRequest(0x100, 64, True, first, source="cpu", tag=1),
                MemRequest(MIB + 0x40, 32, True, second, source="cpu", tag=2),
                MemRequest(0x100, 64, source="cpu", tag=3),
                MemRequest(MIB + 0x40, 32, source="cpu", tag=4),
                MemRequest(MIB + 0x200, 64, source="cpu", tag=5)]
    received = run(top, cpu, requests)
    assert [r for _, r in received] == [MemResponse(1, None, "cpu"), MemResponse(2, None, "cpu"),
                                        MemResponse(3, first, "cpu"), MemResponse(4, second, "cpu"),
                                        MemResponse(5, bytes(range(64)), "cpu")]
    assert memories[1].backdoor_read(0x100, 64) == first
    assert memories[3].backdoor_read(MIB + 0x40, 32) == second
    assert (memories[1].n_written, memories[3].n_written) == (64, 32)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("terminal", [1, 3])
def test_zero_load_read_latency_is_the_sum_of_its_parts(engine, terminal):
    top, noc, cpu, memories = build(engine)
    received = run(top, cpu, [MemRequest(MEMORIES[terminal], 64, tag=7)])
    ((sent_cycle, _),), ((arrived_cycle, _),) = cpu.sent, received
    request_flits = 1  # one 64-bit control word in a 128-bit flit
    response_flits = 64 * 8 // 128
    service = 1 + 10  # 64 bytes at 64 bytes per cycle, then latency_cycles
    hop = 1  # each connection between the requester, the network and a memory is one cycle
    assert arrived_cycle - sent_cycle == (hop + noc.zero_load_latency(0, terminal, request_flits) + hop + service
                                          + hop + noc.zero_load_latency(terminal, 0, response_flits) + hop)
    # two hops in the mesh to terminal 3, one to terminal 1: 3 router stages each, 1 per link,
    # 2 for the injection (its link and the interface's output register)
    assert noc.zero_load_latency(0, terminal, 1) == {1: 2 + 2 * 3 + 1 + 1, 3: 2 + 3 * 3 + 2 + 1}[terminal]


def test_a_write_carries_its_data_in_flits_and_a_read_is_one_control_word():
    top, noc, cpu, memories = build()
    log = []
    for ni in noc.interfaces:
        ni.attach(None, noc.route, None, log)
    received = run(top, cpu, [MemRequest(0x0, 64, True, bytes(range(64))), MemRequest(0x0, 64)])
    # write: 64 + 512 bits in 128-bit flits, its acknowledgement one word; the read one word,
    # its data 4 flits. On its own VC the one-flit read overtakes the five-flit write in the
    # network ...
    assert [(p.source, p.dest, p.size, p.payload.order) for p, _ in log] == [
        (0, 1, 1, 1), (0, 1, 5, 0), (1, 0, 1, 0), (1, 0, 4, 1)]
    # ... and the memory still sees the write first, so the read returns the written bytes.
    assert received[1][1].data == bytes(range(64))


def mixed_requests(count, seed):
    rng = random.Random(seed)
    requests = []
    for tag in range(count):
        base = MEMORIES[rng.choice([1, 3])]
        address = base + 64 * rng.randrange(64)
        size = rng.choice([8, 16, 64, 128])
        if rng.random() < 0.4:
            requests.append(MemRequest(address, size, True, bytes(rng.randrange(256) for _ in range(size)), tag=tag))
        else:
            requests.append(MemRequest(address, size, tag=tag))
    return requests


@pytest.mark.parametrize("seed", [1, 2])
def test_both_engines_deliver_every_packet_and_response_at_the_same_time(seed):
    results = []
    for engine in ENGINES:
        top, noc, cpu, memories = build(engine, vcs=2, buffer_depth=2)
        log = []
        for ni in noc.interfaces:
            ni.attach(None, noc.route, None, log)
        received = run(top, cpu, mixed_requests(60, seed))
        # Interfaces log in the order they step, which within one edge differs between engines.
        packets = sorted((arrived, p.source, p.dest, p.size, p.created_ps, p.injected_ps) for p, arrived in log)
        results.append((received, packets, cpu.sent))
    assert results[0] == results[1] == results[2]
    received, packets, _ = results[0]
    assert [r.tag for _, r in received] == list(range(60))
    assert len(packets) == 120


@pytest.mark.parametrize("engine", ENGINES)
def test_responses_come_back_in_request_order_across_memories(engine):
    # The far memory is slow, the near one quick: the second response reaches the requester's
    # interface first and waits for the first.
    top, noc, cpu, memories = build(engine, latencies={3: 200, 1: 5})
    received = run(top, cpu, [MemRequest(MIB, 8, tag=0), MemRequest(0x0, 8, tag=1), MemRequest(MIB + 8, 8, tag=2)])
    assert [r.tag for _, r in received] == [0, 1, 2]
    assert received[1][0] == received[0][0] + 1


@pytest.mark.parametrize("engine", ENGINES)
def test_the_requester_side_forwards_functional_accesses_to_the_owning_memory(engine):
    top, noc, cpu, memories = build(engine)
    far_end = cpu.req.channel.dst_owner  # what a workload finds at the end of its memory port
    assert (far_end.base_address, far_end.size_bytes) == (0, 2 * MIB)
    far_end.backdoor_write(MIB - 4, b"abcdefgh")  # across both memories
    assert memories[1].backdoor_read(MIB - 4, 4) == b"abcd"
    assert memories[3].backdoor_read(MIB, 4) == b"efgh"
    assert far_end.backdoor_read(MIB - 2, 4) == b"cdef"
    with pytest.raises(ValueError, match=r"no address range holds 0x20_0000 \(mapped: 0x0 .. 0x10_0000 -> "
                                         r"terminal 1, 0x10_0000 .. 0x20_0000 -> terminal 3\)"):
        far_end.backdoor_read(2 * MIB, 1)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_request_to_an_unmapped_address_stops_the_run_naming_it(engine):
    top, noc, cpu, memories = build(engine)
    with pytest.raises(ModelAssertion) as caught:
        run(top, cpu, [MemRequest(2 * MIB + 0x10, 8)])
    assert str(caught.value) == ("top.net.ni[0] at 1000 ps: MemRequest to unmapped address 0x20_0010 (mapped: "
                                 "0x0 .. 0x10_0000 -> terminal 1, 0x10_0000 .. 0x20_0000 -> terminal 3)")


def test_a_request_crossing_a_range_boundary_stops_the_run_naming_it():
    top, noc, cpu, memories = build()
    with pytest.raises(ModelAssertion) as caught:
        run(top, cpu, [MemRequest(MIB - 8, 16)])
    assert str(caught.value) == ("top.net.ni[0] at 1000 ps: MemRequest of 16 bytes at 0xf_fff8 crosses the end of "
                                 "address range 0x0 .. 0x10_0000 -> terminal 1 at 0x10_0000; split it at the boundary")


@model(catalogue=False)
class ShortAnsweringMemory(Component):
    """Answers every read the next cycle with 8 bytes, whatever it asked for (a broken memory)."""

    req = In("MemRequests")
    rsp = Out("MemResponses")

    def tick(self) -> None:
        if self.req.valid and self.rsp.ready:
            request = self.req.recv()
            self.rsp.send(MemResponse(request.tag, bytes(8), request.source))
        elif not self.req.valid:
            self.sleep()


@pytest.mark.parametrize("engine", ENGINES)
def test_a_read_answered_with_fewer_bytes_than_it_asked_for_stops_the_run_naming_it(engine):
    """The network's lookahead counts the flits of a read's answer from the read, so a memory
    whose answer is shorter stops the run."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=[(0, MIB, 1)], engine=engine, flit_bits=128)
    cpu = ScriptedRequester("cpu", top)
    connect(cpu.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), cpu.rsp)
    memory = ShortAnsweringMemory("short", top)
    connect(noc.memory_port("to_memory", 1), memory.req)
    connect(memory.rsp, noc.memory_port("from_memory", 1))
    with pytest.raises(ModelAssertion) as caught:
        run(top, cpu, [MemRequest(0x40, 64)])
    assert str(caught.value) == ("top.net.ni[1] at 13000 ps: MemResponse with tag 0 from top.short.rsp answers a "
                                 "read of 64 bytes at 0x40 with 8 bytes")


def test_overlapping_ranges_are_an_error_naming_both():
    with pytest.raises(ParameterError) as caught:
        Noc("net", topology="mesh(2, 2)", address_map=[(0, MIB, 1), (MIB // 2, 2 * MIB, 3)])
    assert caught.value.message == ("net: address range 0x8_0000 .. 0x20_0000 -> terminal 3 overlaps "
                                    "0x0 .. 0x10_0000 -> terminal 1")
    assert caught.value.hint == "every byte belongs to one memory; make the ranges disjoint"


@pytest.mark.parametrize("entry, message", [
    ((0, MIB, 4), "net: address range 0x0 .. 0x10_0000 -> terminal 4: the network has terminals 0 .. 3"),
    ((MIB, MIB, 1), "net: address range 0x10_0000 .. 0x10_0000 -> terminal 1 is empty: its end must lie above "
                    "its start"),
    ((0, MIB), "net: address map entry (0, 1048576) is not (start, end, terminal)"),
])
def test_malformed_ranges_are_errors(entry, message):
    with pytest.raises(ParameterError) as caught:
        Noc("net", topology="mesh(2, 2)", address_map=[entry])
    assert caught.value.message == message


def test_the_compiled_engine_refuses_synthetic_traffic_beside_memory_traffic_by_name():
    with pytest.raises(ParameterError) as caught:
        Noc("net", topology="mesh(2, 2)", address_map=[(0, MIB, 1)], traffic="uniform", rate=0.1, engine="compiled")
    assert caught.value.message == "net: engine='compiled' does not support synthetic traffic beside memory traffic"


HALF_PAIRS = {
    # a requester's requests with no way back to it
    "mem_req": ("top.net.mem_req[0] is connected but top.net.mem_rsp[0] is not: requests taken there could never "
                "be answered", "connect the answers back: net.mem_rsp[0] -> ..."),
    # a memory's answers with no requests going to it
    "from_memory": ("top.net.from_memory[1] is connected but top.net.to_memory[1] is not: answers would come to a "
                    "port that sends no requests", "connect the requests: net.to_memory[1] -> ..."),
}


@pytest.mark.parametrize("side", sorted(HALF_PAIRS))
@pytest.mark.parametrize("engine", ENGINES)
def test_half_a_port_pair_is_an_error_naming_the_ports_as_wired(engine, side):
    """Refused as the simulator is built, before anything runs, the ports named as a system
    wires them (the Noc's, whichever of its parts owns them under each engine)."""
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=[(0, MIB, 1)], engine=engine)
    if side == "mem_req":
        connect(ScriptedRequester("cpu", top).req, noc.memory_port("mem_req", 0))
    else:
        connect(DramController("ddr", top, standard="DDR4-2400R").resp, noc.memory_port("from_memory", 1))
    with pytest.raises(PortError) as caught:
        Simulator(top)
    assert (caught.value.message, caught.value.hint) == HALF_PAIRS[side]


def two_dies(die_to_die: bool):
    """A requester on one die and a memory on the other, each behind a router and a standalone
    MemoryMappedInterface; the routers' link crosses a DieToDieLink each way, or a plain channel."""
    top = Component("top")
    routers = [NocRouter(f"node[{i}]", top, topology="mesh(1, 2)", inputs=2, outputs=2) for i in range(2)]
    interfaces = [MemoryMappedInterface(f"ni[{i}]", top, terminals=2, address_map=[(0, MIB, 1)]) for i in range(2)]
    for router, ni in zip(routers, interfaces):
        connect(ni.to_router, router.inp[0])
        connect(router.out[0], ni.from_router)
    for a, b in ((0, 1), (1, 0)):
        if die_to_die:
            link = DieToDieLink(f"d2d{a}{b}", top, lanes=16, lane_bits=2, flit_bits=128, serdes_cycles=4)
            connect(routers[a].out[1], link.inp)
            connect(link.out, routers[b].inp[1])
        else:
            connect(routers[a].out[1], routers[b].inp[1])
    cpu = ScriptedRequester("cpu", top)
    connect(cpu.req, interfaces[0].mem_req)
    connect(interfaces[0].mem_rsp, cpu.rsp)
    memory = FixedLatencyMemory("mem", top, base_address=0, size_bytes=MIB, latency_cycles=10)
    connect(interfaces[1].to_memory, memory.req)
    connect(memory.rsp, interfaces[1].from_memory)
    return top, cpu, memory


def test_memory_traffic_crosses_a_die_to_die_link():
    latencies = {}
    for die_to_die in (False, True):
        top, cpu, memory = two_dies(die_to_die)
        memory.backdoor_write(0x40, bytes(range(16)))
        received = run(top, cpu, [MemRequest(0x80, 16, True, bytes(16 * [7]), tag=1), MemRequest(0x40, 16, tag=2)])
        assert [(r.tag, r.data) for _, r in received] == [(1, None), (2, bytes(range(16)))]
        assert memory.backdoor_read(0x80, 16) == bytes(16 * [7])
        top, cpu, memory = two_dies(die_to_die)
        ((arrived, _),) = run(top, cpu, [MemRequest(0x40, 16)])
        latencies[die_to_die] = arrived - cpu.sent[0][0]
    # A lone one-flit packet takes the link's 4 beats (128 bits over 16 lanes of 2 bits) and 4
    # SerDes cycles where a plain link takes one cycle; the DieToDieLink's own input channel
    # takes that cycle. The request and the 16-byte response cross once each.
    assert latencies[True] - latencies[False] == 2 * (4 + 4)


def test_the_memory_mesh_example_checks_and_runs_the_same_on_every_engine(capsys):
    path = str(data_path("topologies") / "memory_mesh.arch")
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {path}: system MemoryMesh")
    cycles = []
    for engine in ENGINES:
        # the GEMM workload checks its result against numpy, through the network's backdoor
        assert main(["run", path, "-p", f'engine="{engine}"']) == 0
        table = capsys.readouterr().out
        cycles.append(next(line.split()[1] for line in table.splitlines()
                           if line.startswith("MemoryMesh.cluster.cycles ")))
    assert cycles[0] == cycles[1] == cycles[2]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_range_interleaved_over_two_memories_sends_each_block_to_its_owner(engine):
    top = Component("top")
    noc = Noc("net", top, topology="mesh(2, 2)", address_map=[(0, 2 * MIB, [1, 3])], interleave_bytes=4096,
              engine=engine)
    cpu = ScriptedRequester("cpu", top)
    connect(cpu.req, noc.memory_port("mem_req", 0))
    connect(noc.memory_port("mem_rsp", 0), cpu.rsp)
    memories = {}
    for t in (1, 3):  # each memory spans the whole range and holds only its own blocks
        memories[t] = FixedLatencyMemory(f"mem{t}", top, base_address=0, size_bytes=2 * MIB, latency_cycles=10)
        connect(noc.memory_port("to_memory", t), memories[t].req)
        connect(memories[t].rsp, noc.memory_port("from_memory", t))
    blocks = [bytes([b]) * 4096 for b in range(1, 5)]
    noc.memory_map.backdoor_write(0, b"".join(blocks))  # the functional path splits at the blocks too
    assert memories[1].backdoor_read(0, 4096) == blocks[0] and memories[3].backdoor_read(4096, 4096) == blocks[1]
    assert memories[1].backdoor_read(2 * 4096, 4096) == blocks[2] and memories[3].backdoor_read(4096 - 8, 8) == bytes(8)
    requests = [MemRequest(4096 * b + 64, 64, source="cpu", tag=b) for b in range(4)]
    received = run(top, cpu, requests)
    assert [r.data for _, r in received] == [block[:64] for block in blocks]
    assert memories[1].n_read == memories[3].n_read == 128
    top2 = Component("top")
    noc2 = Noc("net", top2, topology="mesh(2, 2)", address_map=[(0, 2 * MIB, [1, 3])], engine=engine)
    cpu2 = ScriptedRequester("cpu", top2)
    connect(cpu2.req, noc2.memory_port("mem_req", 0))
    connect(noc2.memory_port("mem_rsp", 0), cpu2.rsp)
    for t in (1, 3):
        memory = FixedLatencyMemory(f"mem{t}", top2, base_address=0, size_bytes=2 * MIB)
        connect(noc2.memory_port("to_memory", t), memory.req)
        connect(memory.rsp, noc2.memory_port("from_memory", t))
    cpu2.script.append(MemRequest(4096 - 32, 64, source="cpu"))
    with pytest.raises(ModelAssertion) as info:
        Simulator(top2).run(cycles=100)
    assert "MemRequest of 64 bytes at 0xfe0 crosses an interleave block (4096 bytes) of address range 0x0 .. " \
           "0x20_0000 -> terminals [1, 3] in 4096-byte blocks at 0x1000; split it at the boundary" in str(info.value)


def test_an_interleaved_range_must_be_aligned_to_its_blocks():
    with pytest.raises(ParameterError) as info:
        Noc("net", topology="mesh(2, 2)", address_map=[(0, 6000, [1, 3])], interleave_bytes=4096)
    assert info.value.message == ("net: address range 0x0 .. 0x1770 is interleaved in 4096-byte blocks, so its ends "
                                  "must be multiples of the block")
