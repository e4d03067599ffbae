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

**In-network processing** (:func:`inp_step`, :class:`Description`). What an AP sends is a set
of independent whitened components, each described with its own bits; a Gaussian scalar is
successively refinable, so a description of R bits contains one of any fewer bits. Each AP
takes, per slot, whichever of two ways decodes to the larger sum rate from what it sends (the
sequential design of Jo, Lee and Park: each AP chooses its processing for the sum rate given
what arrives from upstream, with local channel knowledge only):

- *combine*: the LMMSE estimate from its own and the decompressed upstream signal, whitened
  and water-filled into the link's C bits. What neighbouring APs both heard is described once.
  But a description of R bits leaves a component an SNR of at most ``2^R - 1``, so a bit spent
  quantising it again buys at most ``1 - 2^-R`` bits of information, while a bit spent on a
  strong own component buys nearly one: below a few bits per channel use this way drops what
  came from upstream, and a stripe would deliver what its CP-side AP alone sends.
- *refine*: keep the upstream components at the same or fewer bits (dropping refinement
  layers, never quantising again) and add the own samples in the basis of what is new given
  the upstream signal (the eigenvectors of ``H (I + Phi_up)^{-1} H^H``, whose information adds
  to the upstream's without overlap); the link's C bits go where the marginal information per
  bit is highest, upstream layers and own innovations alike (:func:`_share`).

Why INP is then never below the no-INP baseline (each AP its own samples at C / L, routed): the
refine way routes descriptions as the baseline does, but with the CP-side link's C bits spread
over the stripe by marginal worth instead of C / L to each AP, each AP's own bits spent on what
upstream did not already describe, and the far links carrying a whole C instead of l C / L; the
combine way is taken only where it decodes to more than that. This is a heuristic allocation,
not a proof: ``tests/models/fronthaul/test_inp_gain.py`` checks the claim slot by slot over a
grid of capacities, user drops and the star, 4 x 4 and bus layouts.

**At low capacity** both schemes are bounded by the cut-set of the CP-side links: a stripe
delivers at most C bits per channel use. As C -> 0 each bit goes to the strongest component it
can reach, whose information per bit at 0 bits is ``s / (1 + s)`` (s its SNR): the baseline
spends C / L on each AP's strongest own component, INP all C on the stripe's best. So both sum
rates become linear in C with slopes ``sum over stripes of mean_j s_j / (1 + s_j)`` and
``sum over stripes of max_j s_j / (1 + s_j)`` (s_j the largest eigenvalue of ``H_j H_j^H``), and
the gain tends to the ratio of the two minus one. Where every AP hears some user strongly (the
network's default 400 m square: s_j / (1 + s_j) near 0.99) that limit is a few per cent and the
gain peaks between it and saturation; where many APs hear little (a sparse 2 km square) the
limit is large and the gain grows as C falls all the way down. The baseline's gain below the
peak is rate allocation, not combining: :func:`per_ap_routed_jointly`, the same per-AP
compression with the CP-side link's bits water-filled over the stripe, comes within about a
per cent of INP there; combining pays above it.

**Sum rate** (:func:`sum_rate`): the CP adds the information of everything it receives and
detects each user with the LMMSE filter, the others as noise: user k's MSE is
``[(I + Phi)^{-1}]_kk`` and its rate ``log2(1 / MSE_k) = log2(1 + SINR_k)``; the sum over users
is in bit/s/Hz. (Successive cancellation would give ``log2 det(I + Phi)``, :func:`sum_capacity`.)
"""

from __future__ import annotations

from typing import Any

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
    known_information: np.ndarray | None = None  # information() when a batch computed it already

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
        if self.known_information is not None:
            return self.known_information
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
        with np.errstate(divide="ignore", over="ignore"):  # a level of 0: lossless
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
class Description:
    """What an AP sends with in-network processing, as the next hop decompresses it: D
    independent components ``v_i = g_i x + n_i`` (unit white noise; ``gain`` (..., D, K) holds
    the g_i, so component i's SNR is ``s_i = |g_i|^2``), each described with ``bits`` (..., D)
    bits per channel use (0: not sent, inf: lossless) through the forward test channel
    ``v_i + q_i`` of :func:`compression`. Decompressed, component i is worth
    ``w_i = (2^R_i - 1) / (2^R_i + s_i)`` of its information ``g_i^H g_i``
    (:meth:`weights`).

    A Gaussian scalar is successively refinable: a description of R bits contains one of any
    R' < R, so a downstream AP may keep a component at fewer bits (drop its finest layers)
    without decompressing and quantising it again (:func:`inp_step`). ``origin`` is, for a
    description cut from a batched pass, that pass's description and the row it is (how
    :meth:`~.scene.RadioScene.inp_forwarded` recognises its own output); None otherwise."""

    gain: np.ndarray
    bits: np.ndarray
    origin: Any = None

    @property
    def dims(self) -> int:
        """D, the number of components."""
        return self.gain.shape[-2]

    def snr(self) -> np.ndarray:
        """``s_i = |g_i|^2`` (..., D)."""
        return np.sum(np.abs(self.gain) ** 2, axis=-1)

    def weights(self) -> np.ndarray:
        """``w_i``: 0 where nothing is sent, 1 where lossless."""
        return _worth(self.bits, self.snr())

    def information(self) -> np.ndarray:
        """``sum_i w_i g_i^H g_i`` (..., K, K): the components' noises are independent."""
        return hermitian(self.gain) @ (self.weights()[..., :, None] * self.gain)

    def observation(self) -> Observation:
        """The decompressed signal as an :class:`Observation` with unit white noise:
        ``sqrt(w_i) (v_i + q_i)``, of gain ``sqrt(w_i) g_i`` (a component not sent is unit noise
        of gain 0)."""
        d = self.dims
        eye = np.broadcast_to(np.eye(d), self.gain.shape[:-2] + (d, d)).astype(complex)
        return Observation(np.sqrt(self.weights())[..., :, None] * self.gain, eye)


def _worth(bits: np.ndarray, snr: np.ndarray) -> np.ndarray:
    """``(2^R - 1) / (2^R + s)``, the share of a component's information its description keeps,
    as ``(1 - 2^-R) / (1 + s 2^-R)``: 1 at R = inf, and no overflow at a thousand bits."""
    return -np.expm1(-bits * _LOG2) / (1.0 + snr * np.exp2(-bits))


def _refine_bits(slope: np.ndarray, snr: np.ndarray, innovation: np.ndarray, cap: np.ndarray) -> np.ndarray:
    """Bits where the marginal information of each component falls to ``slope`` (..., G)
    bits per bit: for a component of SNR s whose information given what else is sent is
    ``log2(1 + lam w(R))`` (lam its ``innovation``, lam = s for one that adds to nothing),
    d/dR of that equals slope at the larger root x = 2^R of
    ``slope a x^2 + (slope (a s + b) - lam (1 + s)) x + slope b s = 0`` with a = 1 + lam,
    b = s - lam; none above 1 means not sent. At most ``cap``."""
    nu = slope[..., :, None]
    a, b = 1.0 + innovation[..., None, :], (snr - innovation)[..., None, :]
    s, lam = snr[..., None, :], innovation[..., None, :]
    linear = nu * (a * s + b) - lam * (1.0 + s)
    square = nu * a
    disc = np.maximum(linear * linear - 4.0 * square * nu * b * s, 0.0)
    root = (np.sqrt(disc) - linear) / (2.0 * square)
    bits = np.where(root > 1.0, np.log2(np.maximum(root, 1.0)), 0.0)
    return np.minimum(bits, cap[..., None, :])


_GRID = 25  # slopes tried per round of the search for the budget's slope
_ROUNDS = 4


def _share(snr: np.ndarray, innovation: np.ndarray, cap: np.ndarray, rate_bits) -> np.ndarray:
    """Spend ``rate_bits`` over components (..., D) so that every one sent has the same
    marginal information per bit (:func:`_refine_bits`), none beyond its ``cap``: the
    water-filling of :func:`compression` (a component adding to nothing) extended to own
    components whose information overlaps what arrived from upstream. The common slope is
    searched on a log grid, ``_ROUNDS`` rounds of ``_GRID`` points each inside the bracket of
    the round before; the bits are interpolated between the bracket's ends and scaled to the
    budget exactly."""
    useful = innovation > _RANK_TOL * np.maximum(np.max(innovation, axis=-1, keepdims=True), np.finfo(float).tiny)
    rate = np.broadcast_to(np.asarray(rate_bits, dtype=float), snr.shape[:-1])
    if np.all(np.isinf(rate)):
        return np.where(useful, cap, 0.0)
    innovation = np.where(useful, innovation, 0.0)
    low = np.full(snr.shape[:-1], -64.0)  # log2 of the slope: at 2^-64 every component is (near) lossless
    high = np.zeros(snr.shape[:-1])  # at slope 1 nothing is sent
    steps = np.linspace(0.0, 1.0, _GRID)
    for _ in range(_ROUNDS):
        grid = low[..., None] + (high - low)[..., None] * steps
        bits = _refine_bits(np.exp2(grid), snr, innovation, cap)  # (..., GRID, D), fewer bits along the grid
        spent = bits.sum(axis=-1)
        index = np.clip(np.sum(spent > rate[..., None], axis=-1), 1, _GRID - 1)[..., None]
        low = np.take_along_axis(grid, index - 1, axis=-1)[..., 0]
        high = np.take_along_axis(grid, index, axis=-1)[..., 0]
    above = np.take_along_axis(bits, (index - 1)[..., None], axis=-2)[..., 0, :]
    below = np.take_along_axis(bits, index[..., None], axis=-2)[..., 0, :]
    total_above, total_below = above.sum(axis=-1), below.sum(axis=-1)
    spread = np.maximum(total_above - total_below, np.finfo(float).tiny)
    mix = np.clip((total_above - rate) / spread, 0.0, 1.0)
    bits = above + mix[..., None] * (below - above)
    total = bits.sum(axis=-1, keepdims=True)
    scale = np.minimum(rate[..., None] / np.maximum(total, np.finfo(float).tiny), 1.0)
    return np.where(useful, bits * scale, 0.0)


def _bits_of(forward: np.ndarray, eigen: np.ndarray) -> np.ndarray:
    """Bits per component of a water-filling (:func:`_allocate`): ``log2(1 + eigen / q)``."""
    with np.errstate(divide="ignore"):
        return np.where(np.isfinite(forward), np.log2(1.0 + eigen / forward), 0.0)


@attrs.frozen(eq=False)
class InpStep:
    """One AP's in-network processing (:func:`inp_step`): ``forwarded`` is what the next hop
    decompresses, ``information`` the Fisher information of the AP's stacked observation
    (own samples over the decompressed upstream signal), ``combined`` per AP which way it took
    (True: recompressing the combined estimate, False: refining the upstream description).
    The rest is what :meth:`transform` needs to say how the sent samples are formed."""

    channel: np.ndarray
    upstream: Description | None
    forwarded: Description
    information: np.ndarray
    combined: np.ndarray
    basis: np.ndarray  # own components of the refine way: rows of basis^H over the antennas
    vectors: np.ndarray  # eigenvectors of the information, the combine way's directions
    mu: np.ndarray

    @property
    def observation(self) -> Observation:
        """The stacked observation u: own samples over the decompressed upstream signal."""
        own = received(self.channel)
        return own if self.upstream is None else stack(own, self.upstream.observation())

    @property
    def combiner(self) -> np.ndarray:
        """``W^H = (I + Phi)^{-1} G^H E^{-1}``, the LMMSE combiner of the stacked observation
        (equal to ``G^H (G G^H + E)^{-1}``, :func:`lmmse_combiner`, by the push-through identity)."""
        obs = self.observation
        k = obs.gain.shape[-1]
        return np.linalg.solve(np.eye(k) + self.information, hermitian(np.linalg.solve(obs.noise, obs.gain)))

    def rate_bits(self) -> np.ndarray:
        """``log2 det(S + Q) - log2 det(Q)`` of what is sent, summed over its independent
        components (each ``log2(1 + (1 + s_i) / q_i) = R_i``): the link budget it takes."""
        bits = self.forwarded.bits
        return np.where(bits > 0, bits, 0.0).sum(axis=-1)

    def transform(self) -> np.ndarray:
        """A (..., D, N + D_up): the sent signal is ``A u`` plus independent noise
        (:meth:`apply_samples`), row i being ``sqrt(w_i)`` times component i's clean form, so
        that what is sent has unit noise like the :meth:`Description.observation` it is."""
        obs = self.observation
        n, dims = self.channel.shape[-2], self.forwarded.dims
        d_up = dims - n
        worth = self.forwarded.weights()
        root = np.sqrt(self.mu)
        inverse_root = np.where(self.mu > _RANK_TOL * np.maximum(self.mu[..., :1], np.finfo(float).tiny),
                                1.0 / np.where(self.mu > 0, root, 1.0), 0.0)
        # v = diag(mu^-1/2) V^H G^H E^-1 u = diag(sqrt(mu)) V^H x + n, n white
        whiten = inverse_root[..., :, None] * (hermitian(self.vectors) @ hermitian(np.linalg.solve(obs.noise, obs.gain)))
        combine_rows = np.sqrt(worth)[..., :, None] * _pad_rows(whiten, dims)
        batch = self.channel.shape[:-2]
        kept_up = np.zeros(batch + (d_up, obs.dims))
        if d_up:
            before = self.upstream.weights()
            # a component kept at fewer bits: the arriving one plus the noise of the dropped layers
            ratio = np.where(before > 0, worth[..., :d_up] / np.where(before > 0, before, 1.0), 0.0)
            kept_up[..., np.arange(d_up), n + np.arange(d_up)] = np.sqrt(ratio)
        own_rows = np.concatenate([hermitian(self.basis), np.zeros(batch + (n, d_up))], axis=-1)
        refine_rows = np.concatenate([kept_up, np.sqrt(worth[..., d_up:])[..., :, None] * own_rows], axis=-2)
        return np.where(self.combined[..., None, None], combine_rows, refine_rows)

    def apply_samples(self, samples: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The compressed signal sent for stacked sample vectors ``samples`` (..., N + D_up, T)."""
        transform = self.transform()
        noise = np.maximum(1.0 - np.sum(np.abs(transform) ** 2, axis=-1), 0.0)  # inputs have unit noise
        return transform @ samples + rayleigh(rng, noise.shape + samples.shape[-1:]) * np.sqrt(noise)[..., :, None]


def _pad_rows(matrix: np.ndarray, rows: int) -> np.ndarray:
    """``matrix`` (..., R, C) cut or padded with zero rows to ``rows``."""
    if matrix.shape[-2] >= rows:
        return matrix[..., :rows, :]
    pad = np.zeros(matrix.shape[:-2] + (rows - matrix.shape[-2], matrix.shape[-1]), dtype=matrix.dtype)
    return np.concatenate([matrix, pad], axis=-2)


def inp_step(channel: np.ndarray, upstream: Description | None, rate_bits) -> InpStep:
    """In-network processing at one AP (or a batch of them): its own samples (``channel``
    (..., N, K)) and the decompressed ``upstream`` signal (None at the far end of a stripe)
    become one :class:`Description` of ``rate_bits`` bits per channel use, in one of two ways,
    whichever gives the larger sum rate (:func:`sum_rate`) decoded from it:

    **Refine**: keep the upstream components, each at the same or fewer bits (dropping
    refinement layers, :class:`Description`), and add the own samples in the basis where they
    are new: with ``P = (I + Phi_up)^{-1}`` the users' error covariance given the upstream
    signal, the eigenvectors of ``H P H^H`` are orthonormal combinations of the antennas whose
    information adds to the upstream's without overlap, their innovations ``lam`` the
    eigenvalues. The bits go where the marginal information per bit is highest, upstream and
    own alike (:func:`_share`). Nothing that arrived is quantised again.

    **Combine**: the LMMSE estimate of x from the stacked own and upstream signals, whitened
    (``Phi = G^H E^{-1} G = V diag(mu) V^H``; ``v = diag(mu^-1/2) V^H G^H E^{-1} u =
    diag(sqrt(mu)) V^H x + n``, n white) and water-filled as :func:`compression` does: what
    neighbouring APs both heard is described once, not routed twice. But a description of R
    bits leaves a component an SNR of at most 2^R - 1, so quantising it again keeps less than
    the bits spent on it: at a few bits per channel use this way alone falls below per-AP
    compression, and the refine way is taken.

    At the far end the two are one compression of the own samples. The result has ``D_up + N``
    components (the combined estimate has at most that rank), so APs at one place of many
    stripes batch."""
    n, k = channel.shape[-2:]
    gram = hermitian(channel) @ channel
    if upstream is None:
        innovation, basis = np.linalg.eigh(channel @ hermitian(channel))
        innovation, basis = np.maximum(innovation[..., ::-1], 0.0), basis[..., ::-1]
        _, _, _, forward = _allocate(1.0 + innovation, rate_bits)
        forwarded = Description(hermitian(basis) @ channel, _bits_of(forward, 1.0 + innovation))
        combined = np.zeros(channel.shape[:-2], dtype=bool)
        mu, vectors = np.linalg.eigh(gram)
        return InpStep(channel, None, forwarded, gram, combined, basis, vectors[..., ::-1],
                       np.maximum(mu[..., ::-1], 0.0))
    gain_up, bits_up = upstream.gain, upstream.bits
    snr_up = upstream.snr()
    information_up = hermitian(gain_up) @ (_worth(bits_up, snr_up)[..., :, None] * gain_up)
    prior = np.linalg.inv(np.eye(k) + information_up)
    innovation, basis = np.linalg.eigh(channel @ prior @ hermitian(channel))
    innovation, basis = np.maximum(innovation[..., ::-1], 0.0), basis[..., ::-1]
    own_gain = hermitian(basis) @ channel  # unit noise: the basis is orthonormal
    snr = np.concatenate([snr_up, np.sum(np.abs(own_gain) ** 2, axis=-1)], axis=-1)
    cap = np.concatenate([np.where(bits_up > 0, bits_up, 0.0), np.full(snr.shape[:-1] + (n,), np.inf)], axis=-1)
    refine = Description(np.concatenate([gain_up, own_gain], axis=-2),
                         _share(snr, np.concatenate([snr_up, innovation], axis=-1), cap, rate_bits))
    information = information_up + gram
    mu, vectors = np.linalg.eigh(information)
    mu, vectors = np.maximum(mu[..., ::-1], 0.0), vectors[..., ::-1]
    _, _, _, forward = _allocate(1.0 + mu, rate_bits)
    bits_combine = _bits_of(forward, 1.0 + mu)
    dims = refine.dims
    # Both ways' information, decoded in one batch: the combine way's is V diag(mu w) V^H.
    kept = mu * _worth(bits_combine, mu)
    both = np.stack([(vectors * kept[..., None, :]) @ hermitian(vectors), refine.information()])
    rates = sum_rate(both)
    combined = rates[0] >= rates[1] - 1e-12
    combine_gain = _pad_rows(np.sqrt(mu)[..., :, None] * hermitian(vectors), dims)
    combine_bits = _pad_rows(bits_combine[..., :, None], dims)[..., 0]
    forwarded = Description(np.where(combined[..., None, None], combine_gain, refine.gain),
                            np.where(combined[..., None], combine_bits, refine.bits))
    return InpStep(channel, upstream, forwarded, information, combined, basis, vectors, mu)


def stripe_sequential(channels: np.ndarray, rate_bits) -> Description:
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


def per_ap_routed_jointly(stripes: np.ndarray, rate_bits) -> Description:
    """A stronger no-INP baseline: every AP still compresses only its own samples and the
    stripe forwards them untouched, but the CP-side link's ``rate_bits`` are shared over the
    stripe by one water-filling over all its APs' own components (``stripes`` (..., L, N, K),
    AP 0 the far end) instead of ``rate_bits / L`` each (:func:`per_ap_compressed`). Every
    other link carries a part of what the CP-side one does, so it fits too. This split needs
    each AP's component SNRs at one place (the CP) every slot; it is a reference for how much
    of INP's gain is rate allocation rather than combining, not a model the APs run. Returns
    each stripe's components (..., L N) as one :class:`Description`."""
    *batch, length, n, k = stripes.shape
    innovation, basis = np.linalg.eigh(stripes @ hermitian(stripes))
    gain = (hermitian(basis) @ stripes).reshape(*batch, length * n, k)
    snr = np.maximum(innovation, 0.0).reshape(*batch, length * n)
    order = np.argsort(-snr, axis=-1)  # water-filling takes components strongest first
    snr = np.take_along_axis(snr, order, axis=-1)
    gain = np.take_along_axis(gain, order[..., None], axis=-2)
    _, _, _, forward = _allocate(1.0 + snr, rate_bits)
    return Description(gain, _bits_of(forward, 1.0 + snr))
