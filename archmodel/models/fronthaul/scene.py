"""The radio scene of a fronthaul network: where the users are and what the channels do.

One :class:`RadioScene` per :class:`~archmodel.models.fronthaul.network.FronthaulNetwork`,
shared by its APs (each takes its own channel of a slot) and its CP (which computes the
reference sum rates of every scheme for the same channels). Users are dropped uniformly on the
square once per run; fading is redrawn every slot (block fading over a slot). Both come from
streams seeded by the global seed and the network's path, and the fading of slot s from a
stream of its own, so a channel does not depend on which component asks first or how often:
the same seed gives the same channels whatever the topology's timing.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from archmodel.kernel import component_rng

from . import signal

_CACHED_SLOTS = 256  # slots in flight at once: a long bus lags its far end by a few slots


class RadioScene:
    """Users and channels for APs at ``ap_positions`` (N_AP x 2, metres) with ``antennas``
    each on a ``side_m`` square; ``snr_db`` of user k at AP j is the transmit power plus the
    path loss over the noise power (:func:`~.signal.path_loss_db`, :func:`~.signal.noise_dbm`)."""

    def __init__(self, ap_positions: np.ndarray, *, users: int, antennas: int, side_m: float,
                 height_m: float, power_dbm: float, noise_dbm: float, seed: int, name: str):
        self.ap_positions = ap_positions
        self.users = users
        self.antennas = antennas
        self.seed = seed
        self.name = name
        drop = component_rng(seed, f"{name}.users")
        self.user_positions = drop.uniform(0.0, side_m, size=(users, 2))
        distance = np.linalg.norm(ap_positions[:, None, :] - self.user_positions[None, :, :], axis=-1)
        self.snr_db = power_dbm + signal.path_loss_db(distance, height_m) - noise_dbm
        self._amplitude = np.sqrt(10.0 ** (self.snr_db / 10.0))[:, None, :]  # (N_AP, 1, K)
        self._slots: OrderedDict = OrderedDict()

    def channels(self, slot: int) -> np.ndarray:
        """Every AP's channel in ``slot``: (N_AP, antennas, users), unit noise."""
        cached = self._slots.get(slot)
        if cached is None:
            fading = signal.rayleigh(component_rng(self.seed, f"{self.name}.fading[{slot}]"),
                                     (len(self.ap_positions), self.antennas, self.users))
            cached = self._slots[slot] = fading * self._amplitude
            if len(self._slots) > _CACHED_SLOTS:
                self._slots.popitem(last=False)
        return cached

    def channel(self, slot: int, ap: int) -> np.ndarray:
        """AP ``ap``'s channel in ``slot`` (antennas x users)."""
        return self.channels(slot)[ap]

    def references(self, slot: int, stripes: list[np.ndarray], inp_bits, no_inp_bits) -> dict:
        """The sum rates (bit/s/Hz) of ``slot`` under each scheme, computed in one batch:
        ``"inp"`` (sequential in-network processing along each stripe, ``inp_bits`` on the link
        of each place from the far end),
        ``"no_inp"`` (each AP compresses its own samples to ``no_inp_bits``, one per AP or one for all) and
        ``"unlimited"`` (the CP has every sample). ``stripes`` lists each stripe's AP indices,
        far end first."""
        channels = self.channels(slot)
        unlimited = np.einsum("jnk,jnl->kl", channels.conj(), channels)
        no_inp = signal.per_ap_compressed(channels, no_inp_bits).information().sum(axis=0)
        inp = np.zeros_like(unlimited)
        for length in sorted({len(s) for s in stripes}):
            group = np.array([s for s in stripes if len(s) == length])
            rates = np.asarray(inp_bits, dtype=float)[:length]
            inp = inp + signal.stripe_sequential(channels[group], rates).information().sum(axis=0)
        return {"inp": float(signal.sum_rate(inp)), "no_inp": float(signal.sum_rate(no_inp)),
                "unlimited": float(signal.sum_rate(unlimited))}
