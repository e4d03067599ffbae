"""The radio scene of a fronthaul network: where the users are and what the channels do.

One :class:`RadioScene` per :class:`~archmodel.models.fronthaul.network.FronthaulNetwork`,
shared by its APs (each takes its own channel of a slot) and its CP (which computes the
reference sum rates of every scheme for the same channels). Users are dropped uniformly on the
square once per run; fading is redrawn every slot (block fading over a slot). Both come from
streams seeded by the global seed and the network's path, and the fading of slot s from a
stream of its own, so a channel does not depend on which component asks first or how often:
the same seed gives the same channels whatever the topology's timing.

In-network processing of a slot is computed for every AP at once (:meth:`RadioScene.inp_pass`:
one batched :func:`~.signal.inp_step` per place along the stripes, all stripes together),
the vectorised form of the APs' own steps: an AP takes its output from the pass only when what
its upstream frame carried is the very description the pass started from, at the same budget
(:meth:`RadioScene.inp_forwarded`), and computes the step itself otherwise. The CP's reference
for INP is the same pass. ``tests/models/fronthaul/test_network.py`` holds the decoded sum rates
to a chain computed one AP at a time.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from archmodel.kernel import component_rng

from . import signal

_CACHED_SLOTS = 256  # slots in flight at once: a long bus lags its far end by a few slots
_PASS_SLOTS = 16  # slots of one batched INP pass: numpy's cost per call dwarfs a slot's arithmetic


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
        self._passes: OrderedDict = OrderedDict()
        self._own: OrderedDict = OrderedDict()
        self.stripes: list[np.ndarray] = []
        self.inp_bits: tuple = ()
        self._ahead: dict = {}  # slot -> the slots its INP pass is computed with (itself first)
        self.own_bits: np.ndarray | None = None

    def plan_inp(self, stripes: list[np.ndarray], inp_bits, slots=()) -> None:
        """The stripes (AP indices, far end first) and the INP budget of each place along them
        (bits per channel use), for :meth:`inp_pass`; ``slots``, the run's uplink slots in
        order, lets a pass compute the next few of them in the same batch."""
        self.stripes = list(stripes)
        self.inp_bits = tuple(float(b) for b in inp_bits)
        self._places = {int(ap): place for stripe in self.stripes for place, ap in enumerate(stripe)}
        slots = list(slots)
        self._ahead = {slot: slots[i:i + _PASS_SLOTS] for i, slot in enumerate(slots)}

    def inp_pass(self, slot: int) -> dict:
        """Sequential in-network processing of ``slot`` along every stripe, batched per place:
        AP index -> (the description it got from upstream or None, the one it sends). The
        planned uplink slots after it (up to ``_PASS_SLOTS`` in all) are computed in the same
        batch, each slot's arithmetic the same as alone (numpy's batched linear algebra works
        matrix by matrix)."""
        done = self._passes.get(slot)
        if done is None:
            batch = [s for s in self._ahead.get(slot, [slot]) if s == slot or s not in self._passes]
            channels = np.stack([self.channels(s) for s in batch])
            passes = [{} for _ in batch]
            for length in sorted({len(s) for s in self.stripes}):
                group = np.array([s for s in self.stripes if len(s) == length])
                upstream = [None] * len(batch)
                joint = None
                for position in range(length):
                    joint = signal.inp_step(channels[:, group[:, position]], joint, self.inp_bits[position]).forwarded
                    # one description per slot (a view of the batch's), which an AP's frame carries
                    sent = [signal.Description(joint.gain[b], joint.bits[b]) for b in range(len(batch))]
                    for b, done_b in enumerate(passes):
                        for row, ap in enumerate(group[:, position]):
                            done_b[int(ap)] = (upstream[b], row, sent[b])
                    upstream = sent
            for s, done_s in zip(batch, passes):
                self._passes[s] = done_s
            while len(self._passes) > _CACHED_SLOTS:
                self._passes.popitem(last=False)
            done = passes[0]
        return done

    def inp_forwarded(self, slot: int, ap: int, upstream, rate_bits: float):
        """What AP ``ap`` sends in ``slot`` with in-network processing, given the ``upstream``
        description its frame carried (None at the far end) and its budget: its row of
        :meth:`inp_pass` when that started from this very description at this budget, else its
        own :func:`~.signal.inp_step`."""
        entry = self.inp_pass(slot).get(ap) if self.stripes else None
        if entry is not None:
            before, row, sent = entry
            if upstream is None:
                same = before is None
            else:
                same = upstream.origin is not None and upstream.origin[0] is before and upstream.origin[1] == row
            if same and rate_bits == self.inp_bits[self._places[ap]]:
                return signal.Description(sent.gain[row], sent.bits[row], origin=(sent, row))
        return signal.inp_step(self.channel(slot, ap), upstream, rate_bits).forwarded

    def plan_own(self, own_bits) -> None:
        """The budget of every AP's own compression without INP (bits per channel use, one
        per AP), for :meth:`own_pass`."""
        self.own_bits = np.asarray(own_bits, dtype=float)

    def own_pass(self, slot: int) -> signal.Observation:
        """Every AP's own samples of ``slot`` compressed to its budget without INP
        (:func:`~.signal.per_ap_compressed`), in one batch, with its information (N_AP, K, K)
        computed once: the vectorised form of the APs' own compressions, shared by them and
        the CP's reference."""
        done = self._own.get(slot)
        if done is None:
            batch = signal.per_ap_compressed(self.channels(slot), self.own_bits)
            done = self._own[slot] = signal.Observation(batch.gain, batch.noise, batch.information())
            if len(self._own) > _CACHED_SLOTS:
                self._own.popitem(last=False)
        return done

    def own_compressed(self, slot: int, ap: int, rate_bits: float) -> signal.Observation:
        """What AP ``ap`` sends in ``slot`` without in-network processing: its own samples
        compressed to ``rate_bits``; its row of :meth:`own_pass` when that budget is the
        planned one, else its own :func:`~.signal.per_ap_compressed`."""
        if self.own_bits is not None and rate_bits == self.own_bits[ap]:
            batch = self.own_pass(slot)
            return signal.Observation(batch.gain[ap], batch.noise[ap], batch.known_information[ap])
        return signal.per_ap_compressed(self.channel(slot, ap), rate_bits)

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
        far end first. The slot's :meth:`inp_pass` and :meth:`own_pass` are not needed after this
        and are dropped."""
        channels = self.channels(slot)
        unlimited = np.einsum("jnk,jnl->kl", channels.conj(), channels)
        if self.own_bits is None or not np.array_equal(np.asarray(no_inp_bits, dtype=float), self.own_bits):
            self.plan_own(no_inp_bits)
            self._own.clear()
        no_inp = self.own_pass(slot).information().sum(axis=0)
        self._own.pop(slot, None)
        if [list(s) for s in stripes] != [list(s) for s in self.stripes] or tuple(inp_bits) != self.inp_bits:
            self.plan_inp(stripes, inp_bits)
            self._passes.clear()
        done = self.inp_pass(slot)
        ends = {}  # the batched description of each group's CP-side place: its rows are the stripes
        for stripe in self.stripes:
            _, _, sent = done[int(stripe[-1])]
            ends[id(sent)] = sent
        inp = sum(sent.information().sum(axis=0) for sent in ends.values())
        self._passes.pop(slot, None)
        return {"inp": float(signal.sum_rate(inp)), "no_inp": float(signal.sum_rate(no_inp)),
                "unlimited": float(signal.sum_rate(unlimited))}
