"""The fronthaul network in time: loads measured from the simulated frames, slot latency to the
picosecond, deadlines, TDD patterns, determinism, waveforms and the watchdog."""

import numpy as np
import pytest

from archmodel.kernel import (ArchError, ClockDomain, Component, DeadlockError, In, Out, ParameterError,
                              Simulator, connect, model)
from archmodel.models.fronthaul import FronthaulLink, FronthaulNetwork
from archmodel.models.fronthaul.frames import Frame

# 50 us chunks on 1 Gbit/s links: a full frame is 50,000 bits and takes exactly 50 us.
SMALL = dict(aps=4, stripes=2, aps_per_stripe=2, users=4, antennas=2, slots=2, slot_ps=100_000_000, chunks=2,
             capacity_bps=1e9, processing_ps=1_000_000, ps_per_m=0, link_fixed_ps=1000, header_bits=64)


def build(**changes):
    return FronthaulNetwork("fh", clock=ClockDomain("ns", 1000), **{**SMALL, **changes})


def run(top, seed=0):
    sim = Simulator(top, seed=seed)
    result = sim.run()
    assert result.reason == "stopped"
    return sim


def figures(top):
    return {s.path: s.summary() for c in top.walk() for s in c.stats}


def test_inp_slot_latency_is_processing_and_serialisation_per_hop():
    top = build()
    run(top)
    # Per hop: processing 1 us, the AP's port 1 ns, serialisation 50 us, the link's 1 ns, the
    # next port 1 ns; the last chunk of a slot crosses both hops after its air time.
    expected_us = 2 * (1 + 50) + 2 * 0.003
    assert list(top.cp.slot_latency.samples) == pytest.approx([expected_us] * 2)
    assert [link.bits.value for link in top.links] == [2 * 2 * 50_000] * 4
    assert top.cp.deadline_misses.value == 0 and top.cp.slots_done.value == 2


def test_without_inp_the_last_frame_waits_for_the_far_aps_own():
    top = build(inp=False)
    run(top)
    # Each AP's frame is half the link (25,000 bits, 25 us); the far AP's last frame is
    # processed, crosses its link, is forwarded and crosses the CP-side link behind nothing.
    assert list(top.cp.slot_latency.samples) == pytest.approx([1 + 2 * 25 + 0.006] * 2)


@pytest.mark.parametrize("m, l", [(16, 1), (4, 4), (1, 16)])
def test_link_loads_from_the_simulated_frames(m, l):
    top = build(aps=16, stripes=m, aps_per_stripe=l, users=8, slots=1)
    run(top)
    loads = [link.bits.value for link in top.links]
    assert len(set(loads)) == 1  # with INP every link carries the same, wherever it sits
    assert top.cp.ingress_bits.value == m * loads[0] and len(top.cp.inp) == m
    top = build(aps=16, stripes=m, aps_per_stripe=l, users=8, slots=1, inp=False)
    run(top)
    own = top.access_points[0].bits_sent.value
    for stripe in range(m):
        links = top.links[stripe * l:(stripe + 1) * l]
        # link p (from the far end) carries p + 1 APs' frames: the CP-side one all L of them
        assert [link.bits.value for link in links] == [(p + 1) * own for p in range(l)]
        assert [link.frames.value for link in links] == [(p + 1) * 2 for p in range(l)]
    assert top.cp.ingress_bits.value == 16 * own


def test_utilisation_and_load_follow_from_the_bits():
    top = build(slots=3)
    sim = run(top)
    link = top.links[0]
    assert link.busy_ps.value == 6 * 50_000_000
    assert link.utilisation.value == pytest.approx(100 * link.busy_ps.value / link.elapsed_ps)
    assert link.load.value == pytest.approx(link.bits.value / (sim.now / 1e12) / 1e6, rel=1e-3)


def test_deadline_misses_and_the_tdd_pattern():
    top = build(slots=4, tdd_pattern="DU", deadline_ps=50_000_000)
    run(top)
    assert top.cp.slots_done.value == 2  # slots 1 and 3
    assert top.cp.deadline_misses.value == 2 and top.cp.miss_rate.value == 100.0
    top = build(slots=4, tdd_pattern="DU", deadline_ps=200_000_000)
    run(top)
    assert top.cp.deadline_misses.value == 0


def test_the_frames_give_the_same_sum_rate_as_the_scene_reference():
    for inp in (True, False):
        top = build(aps=8, stripes=2, aps_per_stripe=4, users=6, slots=3, inp=inp)
        run(top, seed=3)
        decoded = list(top.cp.sum_rate.samples)
        reference = list((top.cp.sum_rate_inp if inp else top.cp.sum_rate_no_inp).samples)
        assert decoded == pytest.approx(reference, rel=1e-9)
        assert all(r <= u for r, u in zip(decoded, top.cp.sum_rate_unlimited.samples))


def test_inp_frames_decode_to_a_chain_computed_one_ap_at_a_time():
    # The APs take their steps from the scene's batched pass (all stripes at once, per place);
    # what the CP decodes must equal the same chain done AP by AP, outside the run, from the
    # scene's channels and each AP's own budget.
    from archmodel.models.fronthaul import signal

    top = build(aps=8, stripes=2, aps_per_stripe=4, users=6, slots=3, capacity_bps=2e9)
    run(top, seed=4)
    scene, aps = top.scene, top.access_points
    for slot, decoded in zip(range(3), top.cp.sum_rate.samples):
        information = 0
        for stripe in ([0, 1, 2, 3], [4, 5, 6, 7]):
            upstream = None
            for ap in stripe:
                upstream = signal.inp_step(scene.channel(slot, ap), upstream, aps[ap].rate_bits).forwarded
            information = information + upstream.information()
        assert decoded == pytest.approx(float(signal.sum_rate(information)), rel=1e-9)
    assert len({ap.rate_bits for ap in aps}) > 1  # the far end is capped at its raw samples here


def test_same_seed_same_figures_other_seed_other_channels_same_timing():
    first, second, other = build(slots=3), build(slots=3), build(slots=3)
    run(first, seed=5), run(second, seed=5), run(other, seed=6)
    assert figures(first) == figures(second)
    assert list(other.cp.sum_rate.samples) != list(first.cp.sum_rate.samples)
    assert list(other.cp.slot_latency.samples) == list(first.cp.slot_latency.samples)


def test_bad_parameters_name_themselves():
    with pytest.raises(ParameterError, match=r"stripes x aps_per_stripe = 2 x 2 = 4 is not aps = 6"):
        build(aps=6)
    with pytest.raises(ParameterError, match="parameter 'capacity_bps' must be greater than 0"):
        build(capacity_bps=0.0)
    with pytest.raises(ParameterError, match=r"users = 9 is more than the 8 antennas"):
        build(users=9)
    with pytest.raises(ArchError, match="capacity_bps 1000 bit/s leaves no payload"):
        build(capacity_bps=1e3)
    with pytest.raises(ArchError, match="tdd_pattern 'DD' has no uplink slot"):
        build(tdd_pattern="DD")
    top = build(chunks=1)  # a 100 us chunk is longer than a 100-cycle watchdog window
    with pytest.raises(ArchError, match="longer than the deadlock watchdog's window"):
        Simulator(top, watchdog_cycles=100).run()


def test_waveforms_show_ap_state_and_link_occupancy(tmp_path):
    from archmodel.trace import VcdTracer

    top = build(slots=1)
    sim = Simulator(top)
    path = tmp_path / "fh.vcd"
    tracer = VcdTracer(str(path), select=("fh.ap[1].*", "fh.link[0].*"))
    sim.add_observer(tracer)
    sim.run()
    tracer.close()
    text = path.read_text()
    for signal in ("state", "backlog", "busy", "queued"):
        assert f" {signal} $end" in text
    assert "sprocessing" in text and "swaiting" in text


@model(catalogue=False)
class Deaf(Component):
    """Takes nothing: frames pile up in front of it."""

    inp = In("frames")

    def tick(self):
        self.sleep()


@model(catalogue=False)
class TwoFrames(Component):
    """Sends two frames into a link, one per edge."""

    out = Out("frames")

    def setup(self):
        self.left = 2

    def tick(self):
        if self.left and self.out.ready:
            self.out.send(Frame(0, 2 - self.left, 0, 0, 1000))
            self.left -= 1
        if not self.left:
            self.sleep()


def test_the_watchdog_names_a_link_whose_receiver_never_takes():
    top = Component("top", clock=ClockDomain("ns", 1000))
    source, link, deaf = TwoFrames("src", top), FronthaulLink("link", top, capacity_bps=1e9), Deaf("deaf", top)
    connect(source.out, link.inp)
    # one credit: the first frame is delivered and never taken, the second stays in the link
    connect(link.out, deaf.inp, capacity=1)
    with pytest.raises(DeadlockError, match=r"top.link holds 1 frames"):
        Simulator(top, watchdog_cycles=1000).run()


def test_ample_capacity_carries_raw_samples_and_idles():
    top = build(capacity_bps=10e9)
    run(top)
    # 1000 channel uses per 50 us chunk at 20 MHz, 32 bits per complex dimension: the far AP's
    # estimate has its 2 antennas' dimensions, the next one all K = 4 users'
    far, near = 2 * 32 * 1000 + 64, 4 * 32 * 1000 + 64
    assert [link.bits.value for link in top.links] == [2 * 2 * far, 2 * 2 * near] * 2
    assert top.links[1].busy_ps.value == 4 * near * 100  # 100 ps a bit: the link idles 74% of the time
    assert top.cp.sum_rate.mean <= top.cp.sum_rate_unlimited.mean
    assert list(top.cp.sum_rate.samples) == pytest.approx(list(top.cp.sum_rate_inp.samples), rel=1e-9)


@pytest.mark.parametrize("case", range(6))
def test_nothing_is_lost_on_random_layouts(case):
    rng = np.random.default_rng(case)
    m, l = int(rng.integers(1, 4)), int(rng.integers(1, 5))
    inp = bool(case % 2)
    pattern = "".join(rng.choice(["U", "D"], size=int(rng.integers(1, 4)))) + "U"
    top = build(aps=m * l, stripes=m, aps_per_stripe=l, users=int(rng.integers(1, 2 * m * l + 1)),
                chunks=int(rng.integers(2, 5)), slots=len(pattern) + int(rng.integers(0, 3)), tdd_pattern=pattern,
                inp=inp,
                capacity_bps=float(rng.choice([2e8, 1e9, 4e9])), processing_ps=int(rng.integers(0, 3)) * 1_000_000)
    sim = run(top, seed=case)
    uplink = len(top.plan.uplink_slots())
    assert top.cp.slots_done.value == uplink and not top.cp.pending
    sent = [ap.bits_sent.value for ap in top.access_points]
    carried = [link.bits.value for link in top.links]
    assert sent == carried  # every frame an AP sends crosses its link
    heads = [top.links[(s + 1) * l - 1].bits.value for s in range(m)]
    assert top.cp.ingress_bits.value == sum(heads)
    own = sum(ap.own_frames.value for ap in top.access_points)
    assert own == m * l * top.chunks * uplink
    assert all(c.holding() is None for c in sim.components)
