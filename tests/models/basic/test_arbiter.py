from archmodel.kernel import Simulator, connect
from archmodel.models.basic import RoundRobinArbiter, Sink, Source

from .wiring import new_top


def arbiter_system(sources):
    """Each entry of ``sources`` is the parameters of a Source on the next input."""
    top = new_top()
    arbiter = RoundRobinArbiter("arb", top, inputs=len(sources))
    for index, params in enumerate(sources):
        connect(Source(f"src{index}", top, **params).out, arbiter.inp[index])
    sink = Sink("sink", top)
    connect(arbiter.out, sink.inp)
    return Simulator(top, shuffle=True), arbiter, sink


def named(prefix, count):
    return {"pattern": "list", "messages": [f"{prefix}{i}" for i in range(count)]}


def test_busy_inputs_are_granted_in_rotation():
    sim, arbiter, sink = arbiter_system([named("a", 3), named("b", 3), named("c", 3)])
    sim.run()
    assert sink.payloads == ["a0", "b0", "c0", "a1", "b1", "c1", "a2", "b2", "c2"]
    assert sink.arrival_cycles == list(range(2, 11))
    assert [stat.value for stat in arbiter.grants_by_input] == [3, 3, 3]
    assert arbiter.grants.value == 9
    # Every grant but the last (c2, alone at edge 9) was made while another input waited.
    assert arbiter.conflict_cycles.value == 8


def test_the_input_after_the_last_grant_goes_first():
    # b's only message arrives at edge 4, after a has been granted at edges 1, 2 and 3;
    # the rotation points past a, so b wins edge 4 although a also waits.
    sim, arbiter, sink = arbiter_system([
        named("a", 6),
        {"pattern": "list", "messages": ["b0"], "cycles": [3]},
    ])
    sim.run()
    assert sink.payloads == ["a0", "a1", "a2", "b0", "a3", "a4", "a5"]
    assert sink.arrival_cycles == list(range(2, 9))
    assert arbiter.conflict_cycles.value == 1


def test_an_input_waits_at_most_inputs_minus_one_grants():
    sources = [{"pattern": "bernoulli", "rate": 0.5, "count": 200, "payload": (lambda k: lambda i, rng: (k, i))(k)}
               for k in range(4)]
    sim, arbiter, sink = arbiter_system(sources)
    sim.run()
    assert sorted(sink.payloads) == sorted((k, i) for k in range(4) for i in range(200))
    for k in range(4):
        assert [i for key, i in sink.payloads if key == k] == list(range(200))
    # Four inputs offering half a message per edge each saturate the arbiter, so the inputs
    # keep waiting, and between two grants to one input every other input gets at most one.
    last_grant = {}
    for position, (key, _) in enumerate(sink.payloads):
        if key in last_grant:
            between = [other for other, _ in sink.payloads[last_grant[key] + 1:position]]
            assert len(between) == len(set(between))
        last_grant[key] = position


def test_grant_statistics_are_named_per_input():
    top = new_top()
    arbiter = RoundRobinArbiter("arb", top, inputs=2)
    assert [stat.path for stat in arbiter.stats] == [
        "top.arb.grants", "top.arb.conflict_cycles", "top.arb.grants[0]", "top.arb.grants[1]"]
