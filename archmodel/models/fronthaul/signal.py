"""The signal level of the uplink: channels, LMMSE combining, Gaussian compression, sum rate.

Everything here is numpy on second-order statistics (Gaussian signals), with sample paths for
checking. Every function takes arrays with any leading batch dimensions (slots, stripes, APs)
and works on the last two, so one call serves a single AP in a model's tick and every AP of a
slot in the scene's references.

**Model.** K single-antenna users send x ~ CN(0, I_K) (the transmit power is folded into the
channel); AP j with N antennas receives ``y_j = H_j x + z_j``, z_j ~ CN(0, I_N), where
``H_j[n, k] = sqrt(snr_jk) g``, g ~ CN(0, 1) (Rayleigh fading, one draw per slot: block fading)
and ``snr_jk`` is the large-scale gain over the noise power (:func:`path_loss_db`). This is the
system model of Jo, Lee and Park (arXiv 2412.07582, section II) with the noise normalised.

**An observation** of x is anything of the form ``u = G x + e``, e ~ CN(0, E) independent of
x (:class:`Observation`): an AP's own samples (G = H_j, E = I), the decompressed signal that
arrives from upstream, or a stack of both (:func:`stack`; the noises of different APs are
independent, so E is block diagonal). Its information ``Phi = G^H E^{-1} G`` adds up over
independent observations.

**LMMSE combining** (:func:`lmmse_combiner`, :attr:`InpStep.combiner`): the estimate of x from
u is ``W^H u`` with ``W^H = G^H (G G^H + E)^{-1} = (I + Phi)^{-1} G^H E^{-1}``. Because it is a
sufficient statistic of a Gaussian x, combining along a stripe loses nothing: without
compression the stripe's output carries ``Phi = sum_j H_j^H H_j``, as if the CP had every
sample; the tests check that and the combiner against a direct solve on the stacked channel.
An AP forwards its estimate in whitened coordinates (:func:`inp_step`), where the noise is
white and the covariance diagonal.

**Gaussian compression** (:func:`compression`, :func:`inp_step`): a signal with unit white
noise, in the eigenbasis of its covariance (eigenvalues ``1 + snr_i``), is sent through the
forward test channel of the paper, ``t + q``, q ~ CN(0, Q), whose rate
``log2 det(S + Q) - log2 det(Q)`` must meet the link's budget C (bits per channel use). Per
component, ``R_i = log2(1 + (1 + snr_i) / q_i)`` bits buy ``I(x; t_i + q_i) = R_i +
log2(1 + snr_i) - log2(2^R_i + snr_i)``, whose slope is ``snr_i / (2^R_i + snr_i)``: the
allocation maximising the total is a water-filling, ``R_i = max(0, log2(snr_i / eta))`` with eta
such that the R_i sum to C (as the Gaussian information bottleneck; compare the MSE-optimal
reverse water-filling on ``1 + snr_i``, which wastes bits on noise). What is sent is the MMSE
reconstruction ``a_i (t_i + q_i)``, ``a_i = 1 - 2^-R_i``, of reconstruction noise
``(1 + snr_i) a_i 2^-R_i``; a component not sent becomes unit noise with zero gain, which keeps
every noise covariance invertible and carries nothing. The paper designs combiners and
quantisation noise jointly for the sum rate; this per-AP, per-component rule is our
assumption, and so is the whitening before it.

**Where in-network processing gains and where it loses.** A description of R bits leaves each
component it sends an SNR of at most ``2^R - 1``, so a bit a downstream AP spends re-describing
it buys at most ``1 - 2^-R`` bits of information (the slope of the curve above at R_i = 0),
while a bit spent on a strong own component buys nearly one. Below a few bits per channel use
the water-filling of every hop therefore drops what came from upstream, and a stripe delivers
what its CP-side AP alone would send; the no-INP baseline, L APs at C / L each, is ahead
wherever its APs hear different users (each AP's rate-information curve is concave). Above
that, the baseline pays for neighbouring APs describing the same users again, which INP
combines once: the gain grows as C falls from saturation to a peak near the C that just
carries a stripe's information. ``tests/models/fronthaul/test_inp_gain.py`` pins both.

**Sum rate** (:func:`sum_rate`): the CP adds the information of everything it receives and
detects each user with the LMMSE filter, the others as noise: user k's MSE is
``[(I + Phi)^{-1}]_kk`` and its rate ``log2(1 / MSE_k) = log2(1 + SINR_k)``; the sum over users
is in bit/s/Hz. (Successive cancellation would give ``log2 det(I + Phi)``, :func:`sum_capacity`.)
"""

from __future__ import annotations

import attrs
import numpy as np

_LOG2 = np.log(2.0)
# Eigenvalues below this fraction of the largest carry nothing a finite link can send: they are
# rounding noise of a rank-deficient covariance (a K-dim estimate formed from N < K antennas).
_RANK_TOL = 1e-10


def path_loss_db(distance_m, height_m: float = 10.0):
    """Large-scale gain in dB at horizontal ``distance_m`` with the AP ``height_m`` above the
    user: the 3GPP urban-microcell line-of-sight-free model as cell-free studies use it
    (Bjornson and Sanguinetti, IEEE TWC 2020), ``-30.5 - 36.7 log10(d)`` with d the 3-D
    distance in metres. No shadowing."""
    distance = np.sqrt(np.asarray(distance_m, dtype=float) ** 2 + height_m ** 2)
    return -30.5 - 36.7 * np.log10(distance)


def noise_dbm(bandwidth_hz: float, noise_figure_db: float) -> float:
    """Thermal noise power over ``bandwidth_hz``: -174 dBm/Hz plus the receiver noise figure."""
    return -174.0 + 10.0 * np.log10(bandwidth_hz) + noise_figure_db


def rayleigh(rng: np.random.Generator, shape) -> np.ndarray:
    """Independent CN(0, 1) entries (unit-variance circularly symmetric complex Gaussian)."""
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) * np.sqrt(0.5)


def hermitian(matrix: np.ndarray) -> np.ndarray:
    """The conjugate transpose of the last two axes."""
    return np.conj(np.swapaxes(matrix, -1, -2))


@attrs.frozen(eq=False)
class Observation:
    """A linear Gaussian observation of the users' symbols: ``u = gain @ x + e`` with
    e ~ CN(0, noise) independent of x. ``gain`` is (..., D, K), ``noise`` (..., D, D)."""

    gain: np.ndarray
    noise: np.ndarray

    @property
    def dims(self) -> int:
        """D, the dimension of the observation."""
        return self.gain.shape[-2]

    def covariance(self) -> np.ndarray:
        """The covariance of u: ``G G^H + E``."""
        return self.gain @ hermitian(self.gain) + self.noise

    def information(self) -> np.ndarray:
        """Fisher information about x, ``G^H E^{-1} G`` (K x K): what adds up across
        independent observations."""
        return hermitian(self.gain) @ np.linalg.solve(self.noise, self.gain)


def received(channel: np.ndarray) -> Observation:
    """An AP's own samples ``y = H x + z`` with unit noise: gain H (..., N, K)."""
    n = channel.shape[-2]
    eye = np.broadcast_to(np.eye(n), channel.shape[:-2] + (n, n))
    return Observation(channel, eye.astype(complex))


def stack(first: Observation, second: Observation) -> Observation:
    """Both observations as one (``[u1; u2]``), their noises independent."""
    gain = np.concatenate([first.gain, second.gain], axis=-2)
    d1, d2 = first.dims, second.dims
    noise = np.zeros(first.noise.shape[:-2] + (d1 + d2, d1 + d2), dtype=complex)
    noise[..., :d1, :d1] = first.noise
    noise[..., d1:, d1:] = second.noise
    return Observation(gain, noise)


def lmmse_combiner(obs: Observation) -> np.ndarray:
    """The LMMSE combiner ``W^H = G^H (G G^H + E)^{-1}`` (..., K, D): ``W^H u`` is the MMSE
    estimate of x. One solve of the (Hermitian) covariance against G, then the adjoint."""
    return hermitian(np.linalg.solve(obs.covariance(), obs.gain))


@attrs.frozen(eq=False)
class Compression:
    """A Gaussian compression of a D-dimensional signal: ``s_hat = transform @ s + w``, w of
    diagonal covariance ``noise`` (..., D). ``eigenvalues`` (of the signal's covariance, in the
    order of the transform's rows) and ``forward`` (the test-channel noise q_i, inf where a
    component is not sent) let the rate be checked in the paper's form: :meth:`rate_bits`."""

    transform: np.ndarray
    noise: np.ndarray
    eigenvalues: np.ndarray
    forward: np.ndarray

    def apply(self, obs: Observation) -> Observation:
        """The observation the receiver gets after decompressing."""
        gain = self.transform @ obs.gain
        noise = self.transform @ obs.noise @ hermitian(self.transform) + _diag(self.noise)
        return Observation(gain, noise)

    def apply_samples(self, samples: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Compress sample vectors (..., D, T): transform them and add the quantisation noise."""
        noise = rayleigh(rng, self.transform.shape[:-1] + samples.shape[-1:]) * np.sqrt(self.noise)[..., :, None]
        return self.transform @ samples + noise

    def rate_bits(self) -> np.ndarray:
        """``log2 det(S + Q) - log2 det(Q)`` in S's eigenbasis, Q = diag(forward): the bits per
        channel use this compression needs (components not sent add nothing)."""
        sent = np.isfinite(self.forward)
        q = np.where(sent, self.forward, 1.0)
        with np.errstate(divide="ignore"):
            return np.where(sent, np.log2(1.0 + self.eigenvalues / q), 0.0).sum(axis=-1)


def _diag(values: np.ndarray) -> np.ndarray:
    out = np.zeros(values.shape + (values.shape[-1],), dtype=complex)
    idx = np.arange(values.shape[-1])
    out[..., idx, idx] = values
    return out


def _water_level(snr: np.ndarray, rate_bits: np.ndarray) -> np.ndarray:
    """eta with ``sum over snr_i > eta of log2(snr_i / eta) = rate`` (snr descending, > 0).

    For an active set of the k largest, log2 eta = (sum of their log2 snr_i - rate) / k; the
    right k is the one whose eta lies in [snr_k, snr_(k-1)), and it is unique."""
    logs = np.log2(snr)
    k = np.arange(1, snr.shape[-1] + 1)
    level = (np.cumsum(logs, axis=-1) - rate_bits[..., None]) / k  # log2 eta for each k
    below = np.concatenate([logs[..., 1:], np.full(logs.shape[:-1] + (1,), -np.inf)], axis=-1)
    fits = (logs > level) & (below <= level)
    choice = np.argmax(fits, axis=-1)
    return np.exp2(np.take_along_axis(level, choice[..., None], axis=-1)[..., 0])


def _allocate(eigen: np.ndarray, rate_bits):
    """Water-filling of ``rate_bits`` over components of variance ``eigen`` (descending; unit
    white noise in each, so the signal part is ``eigen - 1``): per component the bits R_i, the
    MMSE scale ``1 - 2^-R_i`` and the reconstruction noise ``eigen * scale * 2^-R_i`` (1, with
    scale 0, where nothing is sent), and the forward test-channel noise ``eigen / (2^R_i - 1)``."""
    snr = np.maximum(eigen - 1.0, 0.0)
    useful = snr > _RANK_TOL * np.maximum(snr[..., :1], np.finfo(float).tiny)
    safe = np.where(useful, snr, np.finfo(float).tiny)
    rate = np.broadcast_to(np.asarray(rate_bits, dtype=float), eigen.shape[:-1])
    if np.all(np.isinf(rate)):
        bits = np.where(useful, np.inf, 0.0)
    else:
        level = _water_level(safe, rate)[..., None]
        with np.errstate(divide="ignore"):
            bits = np.where(useful & (safe > level), np.log2(safe / level), 0.0)
    sent = bits > 0
    kept = np.exp2(-bits)  # 2^-R_i: 0 when lossless, 1 when not sent
    scale = np.where(sent, 1.0 - kept, 0.0)
    noise = np.where(sent, eigen * scale * kept, 1.0)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        forward = np.where(sent, eigen / np.expm1(bits * _LOG2), np.inf)
    return scale, noise, np.where(useful, eigen, 0.0), forward


def compression(covariance: np.ndarray, rate_bits) -> Compression:
    """The information-optimal Gaussian compression, into ``rate_bits`` bits per channel use,
    of a signal of ``covariance`` (..., D, D) whose noise is white with unit variance (an AP's
    own samples): rotate to the eigenbasis and water-fill (module docstring).
    ``rate_bits = inf`` is lossless: only the directions without signal are dropped."""
    eigen, vectors = np.linalg.eigh(covariance)
    eigen, vectors = eigen[..., ::-1], vectors[..., ::-1]  # descending
    scale, noise, kept, forward = _allocate(eigen, rate_bits)
    return Compression(scale[..., :, None] * hermitian(vectors), noise, kept, forward)


def sum_rate(information: np.ndarray) -> np.ndarray:
    """Sum over users of ``log2(1 / MSE_k)`` with LMMSE detection given the total information
    ``Phi`` (..., K, K): bit/s/Hz."""
    k = information.shape[-1]
    error = np.linalg.inv(np.eye(k) + information)
    mse = np.real(np.diagonal(error, axis1=-2, axis2=-1))
    return -np.log2(mse).sum(axis=-1)


def sum_capacity(information: np.ndarray) -> np.ndarray:
    """``log2 det(I + Phi)``: the sum rate with successive interference cancellation."""
    k = information.shape[-1]
    _, logdet = np.linalg.slogdet(np.eye(k) + information)
    return logdet / _LOG2


@attrs.frozen(eq=False)
class InpStep:
    """One AP's in-network processing of its stacked ``observation`` u (own samples over the
    decompressed upstream signal): ``transform`` (..., K, D) maps u to the compressed signal
    before its quantisation noise ``noise`` (..., K) is added; ``forwarded`` is what the next
    hop decompresses; ``compression`` holds the rate bookkeeping. :attr:`combiner` is the LMMSE
    combiner W^H of u, whose output the transform is a whitened, compressed form of."""

    observation: Observation
    transform: np.ndarray
    noise: np.ndarray
    compression: Compression
    forwarded: Observation
    information: np.ndarray

    @property
    def combiner(self) -> np.ndarray:
        """``W^H = (I + Phi)^{-1} G^H E^{-1}``, the LMMSE combiner of the stacked observation
        (equal to ``G^H (G G^H + E)^{-1}``, :func:`lmmse_combiner`, by the push-through identity)."""
        obs = self.observation
        k = obs.gain.shape[-1]
        return np.linalg.solve(np.eye(k) + self.information, hermitian(np.linalg.solve(obs.noise, obs.gain)))

    def apply_samples(self, samples: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The compressed signal sent for stacked sample vectors ``samples`` (..., D, T)."""
        noise = rayleigh(rng, self.noise.shape + samples.shape[-1:]) * np.sqrt(self.noise)[..., :, None]
        return self.transform @ samples + noise


def inp_step(channel: np.ndarray, upstream: Observation | None, rate_bits) -> InpStep:
    """In-network processing at one AP (or a batch of them): stack the own samples
    (``channel`` (..., N, K)) with the decompressed ``upstream`` signal (None at the far end of
    a stripe), combine, whiten, compress to ``rate_bits``.

    With ``Phi = G^H E^{-1} G = V diag(mu) V^H`` the information of u, the LMMSE estimate is
    ``x_hat = (I + Phi)^{-1} G^H E^{-1} u``; its whitened form ``v = diag((1 + mu) / sqrt(mu))
    V^H x_hat = diag(mu^-1/2) V^H G^H E^{-1} u`` equals ``diag(sqrt(mu)) V^H x + n`` with n
    white, so v's covariance is already diagonal (``1 + mu``) and the water-filling needs no
    second eigendecomposition. Compressing v rather than x_hat spends the bits where the
    information is: x_hat's eigenvalues ``mu / (1 + mu)`` saturate below 1 for strong users,
    v's do not. Directions without information (mu ~ 0) are not sent."""
    own = received(channel)
    obs = own if upstream is None else stack(own, upstream)
    weighted = np.linalg.solve(obs.noise, obs.gain)  # E^-1 G
    information = hermitian(obs.gain) @ weighted
    mu, vectors = np.linalg.eigh(information)
    mu, vectors = np.maximum(mu[..., ::-1], 0.0), vectors[..., ::-1]  # descending
    scale, noise, kept, forward = _allocate(1.0 + mu, rate_bits)
    useful = scale > 0
    root = np.sqrt(mu)
    inverse_root = np.where(useful, 1.0 / np.where(useful, root, 1.0), 0.0)
    rotate = hermitian(vectors)
    transform = (scale * inverse_root)[..., :, None] * (rotate @ hermitian(weighted))
    # v = sqrt(mu) V^H x + n with n ~ CN(0, I): after the scale a and noise w the next hop sees
    # gain a sqrt(mu) V^H and a diagonal noise a^2 + var(w) (1 where nothing is sent).
    forwarded = Observation((scale * root)[..., :, None] * rotate, _diag(scale ** 2 + noise))
    squeeze = Compression(_diag(scale), noise, kept, forward)  # in v's coordinates
    return InpStep(obs, transform, noise, squeeze, forwarded, information)


def stripe_sequential(channels: np.ndarray, rate_bits) -> Observation:
    """Sequential in-network processing along stripes: ``channels`` (..., L, N, K), AP 0 the far
    end; what the CP receives from each stripe. ``rate_bits`` is one budget for every link, or
    one per place along the stripe (L values). :class:`~.access_point.AccessPoint` does the
    same :func:`inp_step` one AP at a time; this is the batched reference of the scene."""
    length = channels.shape[-3]
    rates = np.broadcast_to(np.asarray(rate_bits, dtype=float), (length,))
    upstream = None
    for position in range(length):
        upstream = inp_step(channels[..., position, :, :], upstream, rates[position]).forwarded
    return upstream


def per_ap_compressed(channels: np.ndarray, rate_bits) -> Observation:
    """The no-INP baseline: every AP compresses its own samples (``channels`` (..., N, K)) to
    ``rate_bits`` and the stripe forwards them untouched."""
    own = received(channels)
    return compression(own.covariance(), rate_bits).apply(own)
