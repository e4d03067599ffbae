"""In-network processing against the no-INP baseline over link capacity, at the signal level (no
frame headers), on the network's own geometry (16 APs x 4 antennas, 8 users on 400 m, stripes
laid as rows with the CP at the left edge) over several user drops: where INP's gain comes from,
where it peaks, and why it turns negative at a few bits per channel use per link.

Every link has the same capacity c (bits per channel use): with INP each hop compresses what it
combined to c; without, each AP compresses its own samples to c / L, its share of the stripe's
CP-side link."""

import numpy as np
import pytest

from archmodel.models.fronthaul import RadioScene, radio_stripes, signal, stripe_layout
from archmodel.models.fronthaul.stripes import place

CAPACITIES = [2.0 ** k for k in range(-1, 11)]  # 0.5 .. 1024 bits per channel use
SEEDS = range(4)  # user drops
SLOTS = 3  # fading draws per drop


def _scene(seed: int, m: int, l: int) -> RadioScene:
    layout = stripe_layout(radio_stripes(m, l))
    positions, _ = place(layout, 400.0)
    return RadioScene(positions, users=8, antennas=4, side_m=400.0, height_m=10.0, power_dbm=20.0,
                      noise_dbm=signal.noise_dbm(20e6, 7.0), seed=seed, name="fh")


def _stripes(scene: RadioScene, slot: int, m: int, l: int) -> np.ndarray:
    return scene.channels(slot).reshape(m, l, scene.antennas, scene.users)


def _curves(seed: int, m: int, l: int) -> np.ndarray:
    """Mean sum rates over SLOTS, (3, len(CAPACITIES)): INP, no INP, unlimited fronthaul."""
    scene = _scene(seed, m, l)
    out = np.zeros((3, len(CAPACITIES)))
    for slot in range(SLOTS):
        channels = scene.channels(slot)
        unlimited = signal.sum_rate(np.einsum("jnk,jnl->kl", channels.conj(), channels))
        for i, c in enumerate(CAPACITIES):
            inp = signal.stripe_sequential(_stripes(scene, slot, m, l), c).information().sum(axis=0)
            no_inp = signal.per_ap_compressed(channels, c / l).information().sum(axis=0)
            out[:, i] += (signal.sum_rate(inp), signal.sum_rate(no_inp), unlimited)
    return out / SLOTS


@pytest.fixture(scope="module")
def curves():
    return {(seed, m, l): _curves(seed, m, l) for seed in SEEDS for m, l in ((4, 4), (1, 16))}


def test_a_relay_keeps_less_of_a_description_than_the_bits_it_spends_on_it():
    # One user, a far AP that hears it at 25 dB per antenna, and a silent AP between it and the
    # CP that can only decompress and recompress. A description of R bits leaves the component an
    # SNR of 2^I - 1 (I <= R its information), so recompressing it at c bits keeps
    # c + log2(1 + snr) - log2(2^c + snr) < c (1 - 2^-R) bits: most of it below a bit or two.
    # Routing (no INP) would carry the far AP's bits to the CP untouched.
    rng = np.random.default_rng(3)
    far_channel = signal.rayleigh(rng, (4, 1)) * np.sqrt(10 ** 2.5)
    gain = float(np.sum(np.abs(far_channel) ** 2))
    for c in (0.5, 1.0, 2.0, 4.0, 8.0):
        far = signal.inp_step(far_channel, None, c).forwarded
        kept = signal.sum_capacity(far.information())
        assert kept == pytest.approx(c + np.log2(1 + gain) - np.log2(2 ** c + gain))
        snr = 2 ** kept - 1
        relayed = signal.inp_step(np.zeros((4, 1), complex), far, c).forwarded
        passed = signal.sum_capacity(relayed.information())
        assert passed == pytest.approx(c + np.log2(1 + snr) - np.log2(2 ** c + snr))
        assert passed < min(kept, c * (1 - 2 ** -c))
        if c <= 1:
            assert passed < kept / 2


@pytest.mark.parametrize("m, l", [(4, 4), (1, 16)])
def test_below_a_few_bits_per_link_a_stripe_delivers_only_its_cp_side_ap(m, l):
    # Consequence: at a few bits per link every hop spends its budget on its own strong users
    # (tens of dB) rather than re-describe upstream components of SNR at most 2^c - 1, so a
    # stripe's output is, to a few percent of c, what its CP-side AP alone would send; the
    # upstream APs count only once c leaves room to carry them.
    for seed in SEEDS:
        scene = _scene(seed, m, l)
        for slot in range(SLOTS):
            stripes = _stripes(scene, slot, m, l)
            for c, most, least in ((0.5, 0.06, None), (1.0, 0.06, None), (2.0, 0.06, None), (32.0, None, 0.125)):
                chain = signal.sum_capacity(signal.stripe_sequential(stripes, c).information())
                alone = signal.sum_capacity(signal.inp_step(stripes[:, -1], None, c).forwarded.information())
                assert np.all(chain >= alone - 1e-9)
                if most is not None:
                    assert np.all(chain - alone < most * c), (seed, slot, c, chain - alone)
                else:
                    assert np.all(chain - alone > least * c), (seed, slot, c, chain - alone)


def test_inp_gain_grows_as_capacity_falls_from_saturation_to_a_peak(curves):
    # Both schemes saturate at the unlimited-fronthaul rate. From saturation down, the baseline saturates last: each AP must carry its own signal in
    # c / L, and neighbouring APs describe the same users again, which INP's combining does
    # once. So the gain is zero at saturation and grows, link capacity halving at each step,
    # up to a peak where INP's budget just carries a stripe's information; over that range INP
    # is never below the baseline. The longer the stripe, the higher the peak.
    peaks = {}
    for (seed, m, l), (inp, no_inp, unlimited) in curves.items():
        assert np.all(inp <= unlimited + 1e-9) and np.all(no_inp <= unlimited + 1e-9)
        assert inp[-1] == pytest.approx(unlimited[-1], rel=1e-3) and no_inp[-1] == pytest.approx(unlimited[-1], rel=1e-3)
        gain = inp / no_inp - 1
        peak = int(np.argmax(gain))
        assert gain[-1] == pytest.approx(0, abs=1e-3)
        falling = gain[peak:][::-1]  # from the largest capacity down to the peak
        assert np.all(np.diff(falling) > -1e-9), (seed, m, l, gain)
        assert np.all(inp[peak:] >= no_inp[peak:] - 1e-9)
        peaks[seed, l] = gain[peak]
    for seed in SEEDS:
        assert peaks[seed, 16] > peaks[seed, 4] > 0.1, peaks


def test_at_a_few_bits_per_link_four_stripes_of_four_fall_below_the_baseline(curves):
    # Below the peak the gain shrinks, and at a few bits per link the four CP-side APs (one
    # column beside the CP, often hearing the same users) are all INP delivers, while the
    # baseline hears all 16 APs at c / 4 each. Here this model parts from the qualitative claim
    # of issue 17 that INP is never below the baseline (README, fronthaul section).
    low = CAPACITIES.index(2.0)
    gains = [curves[seed, 4, 4][0, low] / curves[seed, 4, 4][1, low] - 1 for seed in SEEDS]
    assert np.mean(gains) < 0 and min(gains) < -0.05, gains
    for seed in SEEDS:
        inp, no_inp, _ = curves[seed, 4, 4]
        peak = int(np.argmax(inp / no_inp))
        assert inp[low] / no_inp[low] < inp[peak] / no_inp[peak]
    # Not the CP's linear detection: with successive cancellation (log det) as well.
    capacities = []
    for seed in SEEDS:
        scene = _scene(seed, 4, 4)
        for slot in range(SLOTS):
            inp = signal.stripe_sequential(_stripes(scene, slot, 4, 4), 2.0).information().sum(axis=0)
            no_inp = signal.per_ap_compressed(scene.channels(slot), 0.5).information().sum(axis=0)
            capacities.append(signal.sum_capacity(inp) / signal.sum_capacity(no_inp) - 1)
    assert np.mean(capacities) < 0, capacities
