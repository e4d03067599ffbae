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
headline, "up to 82.92% compared to baseline schemes", is a relative gain and a maximum over
its figures. Whether the gain keeps growing as capacity falls depends on the scene, and the
tests below say exactly how: both schemes are bounded by the cut-set of the CP-side links (M c
bits per channel use), and as c -> 0 both become linear in c with slopes set by each AP's
strongest component (``s / (1 + s)``, the information a first bit buys): the gain tends to
``sum over stripes of max_j s_j / (1 + s_j)`` over ``sum over stripes of mean_j s_j / (1 + s_j)``
minus one. On the network's 400 m square every AP hears some user strongly, that limit is a
per cent or two, and the gain peaks between it and saturation; on a sparse 2 km square it is
+80% to +150% and the gain grows as capacity falls over the whole range. Below the peak the
gain over the equal split is rate allocation: the same per-AP compression with the CP-side
link's bits water-filled over the stripe comes within about a per cent of INP there. Nothing
is tuned to the paper's figure, which is not reproduced."""

import numpy as np
import pytest

from archmodel.models.fronthaul import RadioScene, radio_stripes, signal, stripe_layout
from archmodel.models.fronthaul.stripes import place

CAPACITIES = [0.5, 1.0, 1.25, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 160.0, 256.0, 512.0, 1024.0]
SEEDS = range(6)  # user drops
SLOTS = 3  # fading draws per drop
LAYOUTS = ((16, 1), (4, 4), (1, 16))  # star, 4 stripes of 4, bus


def _scene(seed: int, m: int, l: int, side_m: float = 400.0) -> RadioScene:
    layout = stripe_layout(radio_stripes(m, l))
    positions, _ = place(layout, side_m)
    return RadioScene(positions, users=8, antennas=4, side_m=side_m, height_m=10.0, power_dbm=20.0,
                      noise_dbm=signal.noise_dbm(20e6, 7.0), seed=seed, name="fh")


def _stripes(scene: RadioScene, slot: int, m: int, l: int) -> np.ndarray:
    return scene.channels(slot).reshape(m, l, scene.antennas, scene.users)


def _rates(seed: int, m: int, l: int, side_m: float = 400.0, slots: int = SLOTS,
           capacities=CAPACITIES) -> np.ndarray:
    """Sum rates per slot and capacity, (4, slots, len(capacities)): INP, no INP, unlimited,
    and no INP with the CP-side link's bits water-filled over the stripe
    (:func:`~archmodel.models.fronthaul.signal.per_ap_routed_jointly`)."""
    scene = _scene(seed, m, l, side_m)
    out = np.zeros((4, slots, len(capacities)))
    for slot in range(slots):
        channels = scene.channels(slot)
        stripes = _stripes(scene, slot, m, l)
        unlimited = signal.sum_rate(np.einsum("jnk,jnl->kl", channels.conj(), channels))
        for i, c in enumerate(capacities):
            inp = signal.stripe_sequential(stripes, c).information().sum(axis=0)
            no_inp = signal.per_ap_compressed(channels, c / l).information().sum(axis=0)
            jointly = signal.per_ap_routed_jointly(stripes, c).information().sum(axis=0)
            out[:, slot, i] = signal.sum_rate(inp), signal.sum_rate(no_inp), unlimited, signal.sum_rate(jointly)
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
        inp, no_inp, unlimited = rates[seed, m, l][:3]
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
    # Below the peak the gain shrinks but never turns: as c -> 0 both schemes deliver about c
    # bits of information per stripe, each bit buying nearly one on a strong component (the
    # slope of a description's information at 0 bits is snr / (1 + snr); the limit is
    # test_the_low_capacity_limit_is_the_ratio_of_first_bit_slopes).
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


def test_no_scheme_carries_more_than_the_cp_side_links(rates):
    # The cut-set bound: whatever an AP does, the CP learns at most c bits per channel use from
    # each of its M links, and the LMMSE sum rate is at most that information.
    for (seed, m, l), out in rates.items():
        bound = m * np.array(CAPACITIES)
        for scheme in (0, 1, 3):
            assert np.all(out[scheme] <= bound * (1 + 1e-9)), (seed, m, l, scheme)


def _slopes(channels: np.ndarray) -> np.ndarray:
    """``s / (1 + s)`` of each AP's strongest own component, (M, L): what a first bit buys."""
    strongest = np.linalg.eigvalsh(channels @ signal.hermitian(channels))[..., -1]
    return strongest / (1 + strongest)


@pytest.mark.parametrize("side_m, m, l", [(400.0, 4, 4), (400.0, 1, 16), (2000.0, 4, 4), (2000.0, 1, 16)])
def test_the_low_capacity_limit_is_the_ratio_of_first_bit_slopes(side_m, m, l):
    # At c -> 0 the baseline spends c / L on each AP's strongest component and INP all of c on
    # the stripe's best one (refining keeps it; nothing else buys as much per bit), so both
    # rates are c times a sum of first-bit slopes and the gain is their ratio minus one: on
    # 400 m every AP hears a user at a slope near 1 and the limit is a per cent or two, on
    # 2 km many hear little and it is large. That is why the gain below the peak shrinks on
    # the network's own square, and does not on a sparse one.
    c = 1e-3
    for seed in range(2):
        scene = _scene(seed, m, l, side_m)
        stripes = _stripes(scene, 0, m, l)
        slopes = _slopes(stripes)
        inp = signal.sum_rate(signal.stripe_sequential(stripes, c).information().sum(axis=0))
        no_inp = signal.sum_rate(signal.per_ap_compressed(scene.channels(0), c / l).information().sum(axis=0))
        assert inp == pytest.approx(c * slopes.max(axis=1).sum(), rel=1e-3)
        assert no_inp == pytest.approx(c * slopes.mean(axis=1).sum(), rel=1e-3)
        limit = slopes.max(axis=1).sum() / slopes.mean(axis=1).sum() - 1
        assert inp / no_inp - 1 == pytest.approx(limit, abs=1e-3)
        assert (limit < 0.03) if side_m == 400.0 else (limit > 0.5), (seed, limit)


@pytest.mark.parametrize("m, l", [(4, 4), (1, 16)])
def test_below_the_peak_the_gain_is_rate_allocation_and_above_it_combining(rates, m, l):
    # The baseline gives each AP c / L of the CP-side link whatever it hears. Water-filling
    # those bits over the stripe's own components instead (still no INP) matches INP, mean over
    # drops, to within 2% up to a quarter of the peak's capacity: there INP's gain is where
    # its bits go. From the peak up to saturation INP is well above that baseline too: what
    # neighbouring APs both heard it describes once.
    inp, no_inp, _, jointly = (np.mean([rates[seed, m, l][i] for seed in SEEDS], axis=(0, 1)) for i in range(4))
    peak = int(np.argmax(inp / no_inp - 1))
    low = np.array(CAPACITIES) <= CAPACITIES[peak] / 4
    assert np.all(np.abs(inp[low] / jointly[low] - 1) < 0.02), inp / jointly - 1
    assert inp[peak] / jointly[peak] - 1 > 0.05, inp / jointly - 1
    assert np.all(jointly >= no_inp * (1 - 1e-9))


@pytest.mark.parametrize("m, l", [(4, 4), (1, 16)])
def test_on_a_sparse_area_the_gain_grows_as_capacity_falls(m, l):
    # The same 16 APs and 8 users on a 2 km square: most APs hear every user weakly, so the
    # baseline's equal split wastes most of the CP-side link, at every capacity. The gain (mean
    # over drops) is zero at saturation and grows at every halving of c, down to a plateau at
    # its low-capacity limit: it never falls by more than a point as c halves, and the lowest c
    # keeps all but 1% of the most.
    capacities = [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 512.0]
    out = np.mean([_rates(seed, m, l, 2000.0, slots=2, capacities=capacities) for seed in range(4)], axis=(0, 2))
    gain = out[0] / out[1] - 1
    assert gain[-1] == pytest.approx(0, abs=2e-3)
    assert np.all(np.diff(gain) < 0.01), gain  # falling with capacity, or flat within a point
    assert gain[0] > 0.99 * gain.max() - 0.01 and gain[0] > 0.8, gain
