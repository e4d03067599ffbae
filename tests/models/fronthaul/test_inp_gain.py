"""In-network processing against the no-INP baseline over link capacity, at the signal level (no
frame headers), on the network's own geometry (16 APs x 4 antennas, 8 users on 400 m, stripes
laid as rows with the CP at the left edge) over several user drops: INP is never below the
baseline, its gain grows as capacity falls from saturation to a peak, and why.

Every link has the same capacity c (bits per channel use): with INP each hop sends c; without,
each AP compresses its own samples to c / L, its share of the stripe's CP-side link. The grid
covers the sweep's range (25 Mbit/s to 3.2 Gbit/s at 20 MHz: 1.25 to 160 bit/s/Hz) and beyond
it on both sides.

What of the paper could be checked: the search corpora hold Jo, Lee and Park's abstract only
(its HTML and mirrors end before the system model), so its baselines, parameters (APs,
antennas, users, area, bandwidth) and the capacity range of its figures could not be read; its
headline, "up to 82.92% compared to baseline schemes", is a maximum over its figures. Here the
issue's "its gain grows as capacity falls" holds from saturation down to a peak, and not
below it, for a reason of the model rather than of its tuning: a description of R bits carries
at most R bits of information, so as c falls both schemes deliver at most c bits per stripe,
and the baseline, spending its c / L per AP on strong components, delivers nearly all of them:
the ratio tends to one. The tests assert what holds: never below the baseline, growth from
saturation to the peak, a smaller but positive gain below it; they are not tuned to the
paper's figure, which is not reproduced."""

import numpy as np
import pytest

from archmodel.models.fronthaul import RadioScene, radio_stripes, signal, stripe_layout
from archmodel.models.fronthaul.stripes import place

CAPACITIES = [0.5, 1.0, 1.25, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 160.0, 256.0, 512.0, 1024.0]
SEEDS = range(6)  # user drops
SLOTS = 3  # fading draws per drop
LAYOUTS = ((16, 1), (4, 4), (1, 16))  # star, 4 stripes of 4, bus


def _scene(seed: int, m: int, l: int) -> RadioScene:
    layout = stripe_layout(radio_stripes(m, l))
    positions, _ = place(layout, 400.0)
    return RadioScene(positions, users=8, antennas=4, side_m=400.0, height_m=10.0, power_dbm=20.0,
                      noise_dbm=signal.noise_dbm(20e6, 7.0), seed=seed, name="fh")


def _stripes(scene: RadioScene, slot: int, m: int, l: int) -> np.ndarray:
    return scene.channels(slot).reshape(m, l, scene.antennas, scene.users)


def _rates(seed: int, m: int, l: int) -> np.ndarray:
    """Sum rates per slot and capacity, (3, SLOTS, len(CAPACITIES)): INP, no INP, unlimited."""
    scene = _scene(seed, m, l)
    out = np.zeros((3, SLOTS, len(CAPACITIES)))
    for slot in range(SLOTS):
        channels = scene.channels(slot)
        unlimited = signal.sum_rate(np.einsum("jnk,jnl->kl", channels.conj(), channels))
        for i, c in enumerate(CAPACITIES):
            inp = signal.stripe_sequential(_stripes(scene, slot, m, l), c).information().sum(axis=0)
            no_inp = signal.per_ap_compressed(channels, c / l).information().sum(axis=0)
            out[:, slot, i] = signal.sum_rate(inp), signal.sum_rate(no_inp), unlimited
    return out


@pytest.fixture(scope="module")
def rates():
    return {(seed, m, l): _rates(seed, m, l) for seed in SEEDS for m, l in LAYOUTS}


def test_a_relay_passes_a_description_on_where_recompressing_it_would_lose():
    # One user, a far AP that hears it at 25 dB per antenna, and a silent AP between it and the
    # CP. Quantising the decompressed description again at c bits would keep
    # c + log2(1 + snr) - log2(2^c + snr) < c (1 - 2^-R) of it (snr = 2^I - 1, I its
    # information): most of it lost below a bit or two. The relay instead keeps the far AP's
    # description as it is (the refine way of inp_step), as routing would.
    rng = np.random.default_rng(3)
    far_channel = signal.rayleigh(rng, (4, 1)) * np.sqrt(10 ** 2.5)
    gain = float(np.sum(np.abs(far_channel) ** 2))
    for c in (0.5, 1.0, 2.0, 4.0, 8.0):
        far = signal.inp_step(far_channel, None, c).forwarded
        kept = signal.sum_capacity(far.information())
        assert kept == pytest.approx(c + np.log2(1 + gain) - np.log2(2 ** c + gain))
        snr = 2 ** kept - 1
        arrived = far.observation()
        recompressed = signal.compression(arrived.covariance(), c).apply(arrived)
        lost = signal.sum_capacity(recompressed.information())
        assert lost == pytest.approx(c + np.log2(1 + snr) - np.log2(2 ** c + snr))
        assert lost < min(kept, c * (1 - 2 ** -c))
        relay = signal.inp_step(np.zeros((4, 1), complex), far, c)
        assert not relay.combined
        assert signal.sum_capacity(relay.forwarded.information()) == pytest.approx(kept)
        assert relay.rate_bits() == pytest.approx(c)


@pytest.mark.parametrize("m, l", LAYOUTS)
def test_inp_is_never_below_the_baseline_at_any_capacity(rates, m, l):
    # Slot by slot, user drop by user drop, at every capacity of the grid from 1 bit per
    # channel use up (the sweep starts at 1.25): the refine way routes descriptions as the
    # baseline does but spends a hop's whole link, by marginal worth, on upstream layers and
    # own innovations, nothing quantised twice; an AP combines only where that decodes to
    # more. On the star both are one scheme. At half a bit per channel use the two are within
    # a hair of each other in a rare slot (both carry about c bits per stripe, each buying
    # nearly one bit): there the claim holds for each drop's mean.
    half = CAPACITIES.index(1.0)
    for seed in SEEDS:
        inp, no_inp, unlimited = rates[seed, m, l]
        assert np.all(inp <= unlimited + 1e-9) and np.all(no_inp <= unlimited + 1e-9)
        if l == 1:
            assert np.allclose(inp, no_inp, rtol=1e-9), (seed, inp - no_inp)
            continue
        assert np.all(inp[:, half:] >= no_inp[:, half:] * (1 - 1e-9)), (seed, m, l, inp / no_inp - 1)
        assert np.all(inp[:, :half].mean(axis=0) > no_inp[:, :half].mean(axis=0)), (seed, m, l)
        below_saturation = slice(half, CAPACITIES.index(128.0))
        assert np.all(inp[:, below_saturation] > no_inp[:, below_saturation]), (seed, m, l)


@pytest.mark.parametrize("m, l", [(4, 4), (1, 16)])
def test_inp_gain_grows_as_capacity_falls_from_saturation_to_its_peak(rates, m, l):
    # Both schemes saturate at the unlimited-fronthaul rate. From there down, the baseline
    # saturates last: each AP must carry its own signal in c / L, and neighbouring APs describe
    # the same users again, which INP's combining does once. So the gain (mean over drops) is
    # zero at saturation and grows at every halving of the link capacity, up to a peak where a
    # link just carries a stripe's information. The longer the stripe, the higher the peak
    # (the paper's headline is up to 82.92%).
    inp, no_inp, unlimited = (np.mean([rates[seed, m, l][i] for seed in SEEDS], axis=(0, 1)) for i in range(3))
    assert inp[-1] == pytest.approx(unlimited[-1], rel=1e-3) and no_inp[-1] == pytest.approx(unlimited[-1], rel=1e-3)
    gain = inp / no_inp - 1
    peak = int(np.argmax(gain))
    assert 0 < peak < len(CAPACITIES) - 1
    assert gain[-1] == pytest.approx(0, abs=1e-3)
    assert np.all(np.diff(gain[peak:]) < 1e-9), gain  # falling with capacity above the peak
    assert gain[peak] > (0.5 if l == 16 else 0.25), gain
    # Below the peak the gain shrinks toward zero but never turns: as c -> 0 both schemes
    # deliver about c bits of information per stripe, each bit buying nearly one on a strong
    # component (the slope of a description's information at 0 bits is snr / (1 + snr)).
    assert np.all(gain[:peak] > 0) and gain[0] < gain[peak]


def test_sum_rate_saturates_at_the_unlimited_fronthaul_rate_inp_first(rates):
    # INP reaches the unlimited rate at a lower capacity than the baseline, which needs L times
    # the per-AP bits on the CP-side link.
    for m, l in ((4, 4), (1, 16)):
        for seed in SEEDS:
            inp, no_inp, unlimited = (rates[seed, m, l][i].mean(axis=0) for i in range(3))
            near = CAPACITIES.index(256.0 if l == 4 else 1024.0)
            assert inp[near] == pytest.approx(unlimited[near], rel=2e-3)
            assert np.all(np.diff(inp) > -1e-9) and np.all(np.diff(no_inp) > -1e-9)


@pytest.mark.parametrize("m, l", [(4, 4), (1, 16)])
def test_aps_mostly_refine_at_low_capacity_and_combine_at_high(m, l):
    # The two ways of inp_step, per downstream AP and slot: at a bit per channel use most APs
    # keep what arrived and add their own (recompressing would lose most of an upstream
    # description); at high capacity, where recompression costs little and routing neighbours'
    # descriptions of the same users twice costs a lot, nearly all combine.
    for c, low, high in ((1.0, 0.0, 0.4), (128.0, 0.8, 1.0)):
        share = []
        for seed in range(2):
            scene = _scene(seed, m, l)
            for slot in range(SLOTS):
                upstream = None
                stripes = _stripes(scene, slot, m, l)
                for position in range(l):
                    step = signal.inp_step(stripes[:, position], upstream, c)
                    upstream = step.forwarded
                    if position:
                        share.append(np.mean(step.combined))
        assert low <= np.mean(share) <= high, (c, np.mean(share))
