"""The signal level: LMMSE combining against direct solves, compression meeting its budget,
sequential processing losing nothing without compression, and the sum-rate curves."""

import numpy as np
import pytest

from archmodel.models.fronthaul import signal


def _channels(seed, shape, snr_db=15.0):
    rng = np.random.default_rng(seed)
    return signal.rayleigh(rng, shape) * np.sqrt(10 ** (snr_db / 10))


def test_lmmse_combiner_is_the_direct_solve_on_a_small_case():
    h = _channels(1, (3, 2))
    obs = signal.received(h)
    direct = h.conj().T @ np.linalg.inv(h @ h.conj().T + np.eye(3))
    assert np.allclose(signal.lmmse_combiner(obs), direct)
    # the step's combiner uses the push-through form (I + Phi)^-1 G^H E^-1: the same matrix
    step = signal.inp_step(h, None, 3.0)
    assert np.allclose(step.combiner, direct)


def test_combiner_of_a_stacked_observation_matches_a_direct_solve_with_its_noise():
    far = signal.inp_step(_channels(2, (2, 3)), None, 2.5)
    h = _channels(3, (2, 3))
    step = signal.inp_step(h, far.forwarded, 2.5)
    g, e = step.observation.gain, step.observation.noise
    # own 2 antennas over the far AP's 2 components; own and upstream noise independent
    assert g.shape == (4, 3) and np.allclose(e[:2, 2:], 0)
    direct = np.linalg.solve((g @ g.conj().T + e).T, g.conj()).T  # G^H (G G^H + E)^-1
    assert np.allclose(step.combiner, direct)
    assert np.allclose(signal.lmmse_combiner(step.observation), direct)


def test_sequential_combining_without_compression_equals_the_centralised_lmmse():
    # A stripe of 4 APs x 2 antennas, 3 users: sample paths through the chain (rate inf: each
    # AP forwards its whitened estimate), then the CP's LMMSE on the stripe's output equals
    # the LMMSE estimate computed at once from every AP's samples.
    rng = np.random.default_rng(7)
    channels = _channels(4, (4, 2, 3))
    x = signal.rayleigh(rng, (3, 50))
    ys = [h @ x + signal.rayleigh(rng, (2, 50)) for h in channels]
    upstream, sent = None, None
    for h, y in zip(channels, ys):
        step = signal.inp_step(h, upstream, np.inf)
        u = y if sent is None else np.vstack([y, sent])
        sent = step.apply_samples(u, rng)
        upstream = step.forwarded
    arrived = upstream.observation()
    g, e = arrived.gain, arrived.noise
    at_cp = np.linalg.solve(np.eye(3) + arrived.information(), g.conj().T @ np.linalg.solve(e, sent))
    stacked = np.vstack(channels)
    direct = stacked.conj().T @ np.linalg.solve(stacked @ stacked.conj().T + np.eye(8), np.vstack(ys))
    assert np.allclose(at_cp, direct)
    # and the information is every AP's H^H H: nothing lost
    assert np.allclose(upstream.information(), sum(h.conj().T @ h for h in channels))


def test_batched_stripes_equal_one_ap_at_a_time():
    channels = _channels(5, (3, 4, 2, 5))  # 3 stripes of 4 APs
    batched = signal.stripe_sequential(channels, 4.0).information()
    for s in range(3):
        upstream = None
        for position in range(4):
            upstream = signal.inp_step(channels[s, position], upstream, 4.0).forwarded
        assert np.allclose(batched[s], upstream.information())


@pytest.mark.parametrize("rate", [0.25, 1.0, 3.0, 12.0])
def test_compression_meets_the_rate_distortion_budget_exactly(rate):
    h = _channels(6, (4, 6))
    squeeze = signal.compression(signal.received(h).covariance(), rate)
    assert squeeze.rate_bits() == pytest.approx(rate)
    # the forward test channel form of the paper: log2 det(S + Q) - log2 det(Q) on what is sent
    sent = np.isfinite(squeeze.forward)
    s, q = np.diag(squeeze.eigenvalues[sent]), np.diag(squeeze.forward[sent])
    assert np.log2(np.linalg.det(s + q).real / np.linalg.det(q).real) == pytest.approx(rate)
    step = signal.inp_step(h, None, rate)
    assert step.rate_bits() == pytest.approx(rate)
    # and downstream, whichever way the AP takes: keep the upstream at fewer bits and add its own
    # (low rates), or recompress the combined estimate (high); the description's bits per
    # component are the paper's form log2(1 + (1 + s_i) / q_i) and add up to the budget
    for seed in range(4):
        down = signal.inp_step(_channels(20 + seed, (4, 6)), step.forwarded, rate)
        assert down.rate_bits() == pytest.approx(rate, rel=1e-6)
        assert down.forwarded.dims == 8
        if not down.combined:
            assert np.all(down.forwarded.bits[:4] <= step.forwarded.bits + 1e-9)


def test_water_filling_sends_the_strongest_components_first():
    covariance = np.diag([1001.0, 11.0, 2.0, 1.0]).astype(complex)  # snr 1000, 10, 1, 0
    low = signal.compression(covariance, 1.0)
    assert np.isfinite(low.forward).tolist() == [True, False, False, False]
    high = signal.compression(covariance, 20.0)
    bits = np.log2(1 + high.eigenvalues[:3] / high.forward[:3])
    # equal water level: R_i = log2(snr_i / eta), so the differences are log2 of snr ratios
    assert bits[0] - bits[1] == pytest.approx(np.log2(100)) and bits[1] - bits[2] == pytest.approx(np.log2(10))
    assert not np.isfinite(high.forward[3])  # pure noise is never sent


def test_information_grows_with_rate_and_reaches_lossless():
    h = _channels(8, (4, 6))
    own = signal.received(h)
    lossless = own.information()
    previous = 0.0
    for rate in (0.5, 2, 8, 32, 128):
        info = signal.compression(own.covariance(), rate).apply(own).information()
        capacity = signal.sum_capacity(info)
        assert capacity > previous and capacity <= signal.sum_capacity(lossless) + 1e-9
        # a compressed description never carries more than its bits
        assert capacity <= rate + 1e-9
        previous = capacity
    assert previous == pytest.approx(signal.sum_capacity(lossless), rel=1e-6)


def _rates(channels, m, l, rate):
    slots = channels.shape[0]
    per_stripe = channels.reshape(slots, m, l, *channels.shape[-2:])
    inp = signal.stripe_sequential(per_stripe, rate).information().sum(axis=-3)
    no_inp = signal.per_ap_compressed(channels, rate / l).information().sum(axis=-3)
    unlimited = np.einsum("...jnk,...jnl->...kl", channels.conj(), channels)
    return (signal.sum_rate(inp).mean(), signal.sum_rate(no_inp).mean(), signal.sum_rate(unlimited).mean())


@pytest.fixture(scope="module")
def sixteen_aps():
    """16 APs x 4 antennas, 8 users on 400 m, 20 fading draws: the scene's geometry."""
    rng = np.random.default_rng(11)
    cells = np.array([((i % 4) + 0.5) * 100 for i in range(16)]), np.array([((i // 4) + 0.5) * 100 for i in range(16)])
    aps = np.stack(cells, axis=1)
    users = rng.uniform(0, 400, (8, 2))
    snr_db = 20 + signal.path_loss_db(np.linalg.norm(aps[:, None] - users[None], axis=-1)) - signal.noise_dbm(20e6, 7)
    return signal.rayleigh(rng, (20, 16, 4, 8)) * np.sqrt(10 ** (snr_db / 10))[None, :, None, :]


def test_sum_rate_rises_with_capacity_and_saturates_at_unlimited(sixteen_aps):
    for m, l in ((16, 1), (4, 4), (1, 16)):
        curve = [_rates(sixteen_aps, m, l, c) for c in (1, 4, 16, 64, 256, 1024)]
        unlimited = curve[0][2]
        for scheme in (0, 1):
            values = [point[scheme] for point in curve]
            assert all(b > a for a, b in zip(values[:4], values[1:4])), (m, l, scheme, values)
            assert all(b >= a - 1e-9 for a, b in zip(values, values[1:])), (m, l, scheme, values)
            assert values[-1] == pytest.approx(unlimited, rel=1e-3)
            assert max(values) <= unlimited + 1e-9


def test_on_the_star_inp_and_no_inp_are_one_scheme(sixteen_aps):
    # The star has nothing to combine: both schemes compress each AP's own samples alike. How
    # the two part on stripes, capacity by capacity, is test_inp_gain.py.
    for c in (1, 8, 64):
        inp, no_inp, _ = _rates(sixteen_aps, 16, 1, c)
        assert inp == pytest.approx(no_inp, rel=1e-9)
