"""The bundled example runs end to end and its numbers hold together."""

from archmodel.examples.banked_memory import build
from archmodel.kernel import Simulator


def run(seed=0, **params):
    top = build(**params)
    sim = Simulator(top, seed=seed)
    result = sim.run()
    return top, sim, result


def test_every_request_is_answered_once_and_bytes_add_up():
    top, sim, result = run(cores=3, requests=200, rate=0.6)
    assert result.reason == "quiescent"
    sram = top.child("sram")
    assert sram.reads.value + sram.writes.value == 3 * 200
    assert sram.bytes_moved.value == 3 * 200 * 8
    for core in range(3):
        sink = top.child(f"resp{core}")
        assert sink.received.value == 200
        assert top.child(f"core{core}").sent.value == 200


def test_fewer_banks_mean_more_conflicts_and_higher_latency():
    wide, _, _ = run(banks=16, rate=0.7)
    narrow, _, _ = run(banks=2, rate=0.7)
    conflicts = lambda top: top.child("sram").bank_conflicts.value  # noqa: E731
    latency = lambda top: top.child("resp0").latency.mean  # noqa: E731
    assert conflicts(narrow) > 2 * conflicts(wide)
    assert latency(narrow) > latency(wide)


def test_same_seed_same_statistics():
    def figures(seed):
        _, sim, _ = run(seed=seed)
        return [(s.path, s.summary()) for s in sim.all_stats()]

    assert figures(5) == figures(5)
    assert figures(5) != figures(6)
