import attrs
import pytest
from hypothesis import given, settings, strategies as st

from archmodel.kernel import ModelAssertion, Simulator, connect
from archmodel.models.basic import Crossbar, Sink, Source

from .wiring import new_top


def crossbar_system(dests, outputs=2, dest_field="dest", sources=None, shuffle=False):
    """Input i gets a Source sending payloads (i, n) to ``dests[i][n]``."""
    top = new_top()
    xbar = Crossbar("xbar", top, inputs=len(dests), outputs=outputs, dest_field=dest_field)
    for i, targets in enumerate(dests):
        params = sources[i] if sources else {"pattern": "list", "messages": [(i, n) for n in range(len(targets))],
                                             "dest": (lambda t: lambda n, rng: t[n])(targets)}
        connect(Source(f"src{i}", top, **params).out, xbar.inp[i])
    sinks = []
    for o in range(outputs):
        sinks.append(Sink(f"sink{o}", top))
        connect(xbar.out[o], sinks[o].inp)
    return Simulator(top, shuffle=shuffle), xbar, sinks


def test_disjoint_destinations_move_in_parallel():
    sim, xbar, (sink0, sink1) = crossbar_system([[0, 1, 0, 1], [1, 0, 1, 0]])
    sim.run()
    assert sink0.payloads == [(0, 0), (1, 1), (0, 2), (1, 3)]
    assert sink1.payloads == [(1, 0), (0, 1), (1, 2), (0, 3)]
    assert sink0.arrival_cycles == sink1.arrival_cycles == [2, 3, 4, 5]
    assert xbar.forwarded.value == 8
    assert xbar.conflicts.value == 0


def test_inputs_wanting_one_output_take_turns():
    sim, xbar, (sink0, sink1) = crossbar_system([[0] * 4, [0] * 4])
    sim.run()
    assert sink0.payloads == [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (0, 3), (1, 3)]
    assert sink0.arrival_cycles == list(range(2, 10))
    assert sink1.payloads == []
    assert xbar.conflicts.value == 7


def test_a_blocked_head_blocks_the_messages_behind_it():
    # Input 0's message (0, 1) loses output 0 to input 1 at edge 2 and wins it at edge 3;
    # (0, 2), for the idle output 1, arrived at edge 3 but waits behind it until edge 4
    # (head-of-line blocking).
    sim, _, (sink0, sink1) = crossbar_system([[0, 0, 1], [0, 0, 0]])
    sim.run()
    assert sink0.payloads == [(0, 0), (1, 0), (0, 1), (1, 1), (1, 2)]
    assert sink0.arrival_cycles == [2, 3, 4, 5, 6]
    assert sink1.payloads == [(0, 2)]
    assert sink1.arrival_cycles == [5]


@attrs.frozen
class Flit:
    port: int
    data: str


def test_the_destination_can_be_any_named_attribute():
    flits = [Flit(1, "x"), Flit(0, "y")]
    source = {"pattern": "list", "messages": flits, "wrap_in_packet": False}
    sim, _, (sink0, sink1) = crossbar_system([[], []], dest_field="port", sources=[source, {"count": 0}])
    sim.run()
    assert sink0.messages == [Flit(0, "y")]
    assert sink1.messages == [Flit(1, "x")]


def test_a_destination_outside_the_outputs_names_the_input_and_the_message():
    sim, _, _ = crossbar_system([[0], [2]])
    with pytest.raises(ModelAssertion) as caught:
        sim.run()
    assert str(caught.value) == (
        "top.xbar at 1000 ps: inp[1] received Packet(source='top.src1', dest=2, payload=(1, 0), "
        "size_bits=64, created_ps=0, seq=0) whose dest is 2, not an output index 0..1")


def test_a_message_without_the_destination_attribute_is_reported():
    source = {"pattern": "list", "messages": ["plain"], "wrap_in_packet": False}
    sim, _, _ = crossbar_system([[], []], sources=[{"count": 0}, source])
    with pytest.raises(ModelAssertion, match=r"inp\[1\] received 'plain' whose dest is None"):
        sim.run()


@settings(derandomize=True, max_examples=25, deadline=None, database=None)
@given(st.lists(st.lists(st.integers(0, 2), max_size=12), min_size=1, max_size=3), st.booleans())
def test_every_message_reaches_its_output_once_and_in_order_per_input(dests, shuffle):
    sim, xbar, sinks = crossbar_system(dests, outputs=3, shuffle=shuffle)
    sim.run()
    for output, sink in enumerate(sinks):
        got = sink.payloads
        want = {(i, n) for i, targets in enumerate(dests) for n, d in enumerate(targets) if d == output}
        assert sorted(got) == sorted(want)
        for i in range(len(dests)):
            from_input = [n for source, n in got if source == i]
            assert from_input == sorted(from_input)
        # an output takes at most one message per edge
        assert len(set(sink.arrival_cycles)) == len(sink.arrival_cycles)
    assert xbar.forwarded.value == sum(len(t) for t in dests)
