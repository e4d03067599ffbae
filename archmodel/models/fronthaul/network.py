"""A whole cell-free uplink fronthaul: APs, links and the CP built from a stripe topology."""

from __future__ import annotations

import numpy as np

from archmodel.kernel import (ArchError, Component, Formula, Param, ParameterError, at_least, check_instances,
                              Registry, connect, in_range, model)

from ..topologies import build_topology
from . import signal
from .access_point import AccessPoint, ApRole
from .central import CentralProcessor, CpRole
from .frames import SlotPlan
from .link import FronthaulLink
from .scene import RadioScene
from .stripes import link_lengths, place, radio_stripes, stripe_layout


ENGINES = Registry("fronthaul engine", {
    "auto": "trains without waveforms, frames with them",
    "frames": "every frame a message on every link",
    "trains": "a stripe's frames computed ahead in trains, with the same statistics",
})
"""How a :class:`FronthaulNetwork` moves its frames (its ``engine`` vocabulary)."""


def _positive(value) -> str | None:
    return None if value > 0 else "must be greater than 0"


def _carries(value) -> str | None:
    return None if value > 0 else "must be greater than 0 (a fronthaul of no capacity carries nothing)"


@model
class FronthaulNetwork(Component):
    """The uplink of a cell-free massive MIMO system over parallel radio stripes (Jo, Lee and
    Park, "Sequential In-Network Processing for Cell-Free Massive MIMO with
    Capacity-Constrained Parallel Radio Stripes", arXiv 2412.07582): ``users`` single-antenna
    users, ``aps`` access points with ``antennas`` each on a square of ``area_m`` metres,
    ``stripes`` (M) radio stripes of ``aps_per_stripe`` (L, by default ``aps / stripes``) APs
    each ending at one central processor; ``stripes = aps`` is the star, ``stripes = 1`` the bus. ``layout`` may name any
    stripe topology generator call instead (``"radio_stripes(2, 8)"``, or an ``edge_list`` file
    with the CP as node 0, pointed toward it); it is checked for gaps and branches.

    Built of ordinary components: ``ap[i]`` (:class:`AccessPoint`, in stripe order, far end
    first), ``link[i]`` (:class:`FronthaulLink`, AP i's link toward the CP, of ``capacity_bps``
    and the length the geometry gives) and ``cp`` (:class:`CentralProcessor`). Time runs in TDD
    slots (``slot_ps``, ``tdd_pattern``, ``chunks`` per slot; :mod:`.frames`); ``slots`` slots
    are simulated and the run ends when the CP has decoded the last uplink slot.

    The signal level runs in the same simulation (:mod:`.signal`, :mod:`.scene`): path loss on
    the AP-user distances, Rayleigh fading drawn per slot from the seed, sequential LMMSE
    combining and Gaussian compression to each link's budget along every stripe (``inp``), or
    per-AP compression forwarded untouched (no ``inp``), and the sum rate at the CP with the
    no-INP and unlimited-fronthaul references beside it.

    ``engine``: nothing a frame meets depends on what comes after it (no link refuses a
    frame; without INP an AP forwards what arrives, with it an AP's frame follows from its
    chunk's end, its previous frame and its upstream frame's arrival), so the frames of a slot
    can be computed ahead: with ``trains`` every AP sends its frames in
    :class:`~.frames.FrameTrain` messages with a promise of what may follow (the null messages
    of conservative parallel simulation), the links serialise them in closed form and the CP
    completes each slot at the edge its last frame would arrive; every statistic equals the
    frame-by-frame run's (``tests/models/fronthaul/test_trains.py``, randomized, with and
    without INP). ``auto`` takes trains unless waveforms are traced (they show each frame on
    each link).
    """

    aps = Param(int, 16, "access points (N_AP = stripes x aps_per_stripe)", check=in_range(1, 1 << 16))
    stripes = Param(int, 4, "radio stripes M (aps: star, 1: bus)", check=at_least(1))
    aps_per_stripe = Param(int, 0, "APs per stripe L (0: aps / stripes)", check=at_least(0))
    layout = Param(str, "", "a stripe topology generator call instead of radio_stripes(stripes, aps_per_stripe)")
    antennas = Param(int, 4, "antennas per AP N", check=at_least(1))
    users = Param(int, 8, "single-antenna users K", check=at_least(1))
    capacity_bps = Param(float, 100e6, "capacity of every fronthaul link", unit="bit/s", check=_carries)
    inp = Param(bool, True, "in-network processing at the APs (else: compress own, forward upstream)")
    area_m = Param(float, 400.0, "side of the square area in metres", check=_positive)
    height_m = Param(float, 10.0, "AP height above the users in metres", check=at_least(0.0))
    power_dbm = Param(float, 20.0, "transmit power per user in dBm")
    noise_figure_db = Param(float, 7.0, "receiver noise figure in dB")
    bandwidth_hz = Param(float, 20e6, "signal bandwidth (channel uses per second)", unit="Hz", check=_positive)
    slot_ps = Param(int, 1_000_000_000, "TDD slot length", unit="ps", check=at_least(1))
    tdd_pattern = Param(str, "U", "repeating slot pattern of U (uplink) and D (downlink)")
    chunks = Param(int, 14, "parts of a slot sent as one frame each (14: one per OFDM symbol)", check=at_least(1))
    # the slot plan lists every slot: a billion would exhaust memory at elaboration
    slots = Param(int, 20, "slots to simulate (at most 1,000,000)", check=in_range(1, 1_000_000))
    processing_ps = Param(int, 10_000_000, "AP combining and compression time per chunk", unit="ps",
                          check=at_least(0))
    header_bits = Param(int, 64, "header of every frame", unit="bits", check=at_least(0))
    sample_bits = Param(int, 32, "bits of a raw complex sample (I and Q): the most a frame carries per dimension",
                        unit="bits", check=at_least(1))
    ps_per_m = Param(int, 5000, "link propagation delay per metre (5000: fibre)", unit="ps", check=at_least(0))
    link_fixed_ps = Param(int, 100_000, "fixed latency of every link (transceivers)", unit="ps", check=at_least(0))
    deadline_ps = Param(int, 1_000_000_000, "a slot must reach the CP this long after its air time", unit="ps",
                        check=at_least(1))
    engine = Param(str, "auto", "'frames': every frame a message on every link; 'trains': frames sent "
                   "ahead in trains, same statistics; 'auto': trains unless waveforms are traced",
                   check=ENGINES.check)
    cp_ports = Formula("ports", "links ending at the CP", lambda c: c.topology.cp_ports)
    worst_hops = Formula("links", "links crossed by the farthest AP's frames", lambda c: c.topology.worst_hops)
    cable_m = Formula("m", "total fronthaul cable length", lambda c: sum(c.lengths))

    def setup(self) -> None:
        graph = self._graph()
        try:
            self.topology = stripe_layout(graph)
        except ArchError as err:
            raise ParameterError(f"{self.path}: layout {self.layout!r}: {err.message}", hint=err.hint,
                                 param="layout") from None
        count = len(self.topology.aps)
        if count != self.aps:
            raise ParameterError(f"{self.path}: the layout has {count} APs but aps = {self.aps}",
                                 hint="make aps the number of APs of the layout", param="aps")
        if self.users > self.antennas * self.aps:
            raise ParameterError(f"{self.path}: users = {self.users} is more than the {self.antennas * self.aps} "
                                 f"antennas (aps x antennas): linear detection cannot separate them",
                                 hint="serve at most aps x antennas users, or add antennas", param="users")
        self.plan = SlotPlan(self.slot_ps, self.chunks, self.tdd_pattern, self.slots, self.bandwidth_hz,
                             self.header_bits, self.sample_bits)
        self.longest = self.topology.worst_hops
        self.plan.check_budget(self.capacity_bps, 1 if self.inp else self.longest)
        self.positions, self.cp_position = place(self.topology, self.area_m)
        self.lengths = link_lengths(self.topology, self.positions, self.cp_position)
        check_instances(2 * self.aps + 1, self.path)  # an AP and a link each, and the CP: ask before building
        self.cp = CentralProcessor("cp", self, stripes=self.topology.cp_ports, deadline_ps=self.deadline_ps)
        self.access_points, self.links = [], []
        index = 0
        for number, stripe in enumerate(self.topology.stripes):
            previous = None
            for _ in stripe:
                ap = AccessPoint(f"ap[{index}]", self, antennas=self.antennas, inp=self.inp,
                                 processing_ps=self.processing_ps)
                link = FronthaulLink(f"link[{index}]", self, capacity_bps=self.capacity_bps,
                                     length_m=self.lengths[index], ps_per_m=self.ps_per_m,
                                     fixed_ps=self.link_fixed_ps)
                connect(ap.out, link.inp)
                if previous is not None:
                    connect(previous.out, ap.upstream)
                previous = link
                self.access_points.append(ap)
                self.links.append(link)
                index += 1
            connect(previous.out, self.cp.inp[number])

    def _graph(self):
        if self.layout:
            return build_topology(self.layout)
        per_stripe = self.aps_per_stripe
        if per_stripe == 0:
            if self.aps % self.stripes:
                raise ParameterError(f"{self.path}: aps = {self.aps} is not a multiple of stripes = {self.stripes}",
                                     hint="every stripe has the same number of APs: choose stripes dividing aps, "
                                          "or give a layout", param="stripes")
            per_stripe = self.aps // self.stripes
        if self.stripes * per_stripe != self.aps:
            raise ParameterError(f"{self.path}: stripes x aps_per_stripe = {self.stripes} x {per_stripe} = "
                                 f"{self.stripes * per_stripe} is not aps = {self.aps}",
                                 hint="every AP sits on one stripe: choose stripes and aps_per_stripe "
                                      "whose product is aps (or aps_per_stripe = 0 for aps / stripes)",
                                 param="aps_per_stripe")
        return radio_stripes(self.stripes, per_stripe)

    def start(self) -> None:
        if self.plan.slot_ps // self.chunks > self.sim.watchdog_ps:
            raise ArchError(f"{self.path}: a chunk of {self.plan.slot_ps // self.chunks / 1e6:g} us is longer than "
                            f"the deadlock watchdog's window of {self.sim.watchdog_ps / 1e6:g} us",
                            hint="raise --watchdog or the number of chunks per slot")
        trains = self.engine == "trains" or (self.engine == "auto" and not self.sim.tracing)
        if trains and self.sim.tracing:
            raise ArchError(f"{self.path}: engine = 'trains' sends frames ahead, so waveforms would not show them",
                            hint="trace with engine = 'auto' or 'frames'")
        noise = signal.noise_dbm(self.bandwidth_hz, self.noise_figure_db)
        self.scene = RadioScene(self.positions, users=self.users, antennas=self.antennas, side_m=self.area_m,
                                height_m=self.height_m, power_dbm=self.power_dbm, noise_dbm=noise,
                                seed=self.sim.seed, name=self.path)
        stripes, index = [], 0
        for number, stripe in enumerate(self.topology.stripes):
            members = np.arange(index, index + len(stripe))
            stripes.append(members)
            for position, ap in enumerate(members):
                dims, share = (self._inp_dims(position), 1) if self.inp else (self.antennas, len(stripe))
                self.access_points[ap].attach(ApRole(int(ap), number, dims, share, self.capacity_bps,
                                                     self.plan, self.scene, trains))
            index += len(stripe)
        per_slot = self.chunks * (len(stripes) if self.inp else self.aps)
        # The references budget every AP as the APs do: by its place along the stripe with INP,
        # by its share of its stripe's CP-side link without.
        inp_bits = [self.plan.rate_bits(self.capacity_bps, 1, self._inp_dims(p)) for p in range(self.longest)]
        shared = np.concatenate([np.full(len(s), self.plan.rate_bits(self.capacity_bps, len(s), self.antennas))
                                 for s in stripes])
        self.scene.plan_inp(stripes, inp_bits, self.plan.uplink_slots())
        self.scene.plan_own(shared)
        self.cp.attach(CpRole(self.plan, self.scene, per_slot, tuple(stripes), tuple(inp_bits), shared, trains))
        if trains:
            for link in self.links:
                link.carry_trains()

    def _inp_dims(self, position: int) -> int:
        """Dimensions of the estimate the AP at ``position`` (0: the far end) forwards with INP:
        the users, or fewer where fewer antennas have seen them (its own and upstream)."""
        return min(self.users, self.antennas * (position + 1))

    def summary(self) -> dict:
        """The figures a sweep over capacity and stripes wants, after a run: the topology
        (``stripes``, ``aps_per_stripe`` as built, ``capacity_bps``), mean sum rates of the
        scheme run and the three references (bit/s/Hz), slot latency mean and p99 (us),
        deadline misses, CP ingress (Mbit/s) and the busiest link's utilisation (%)."""
        cp = self.cp
        latency = cp.slot_latency
        return {
            "stripes": self.topology.cp_ports, "aps_per_stripe": self.topology.worst_hops,
            "capacity_bps": self.capacity_bps, "inp": self.inp, "slots": cp.slots_done.value,
            "sum_rate": cp.sum_rate.mean, "sum_rate_inp": cp.sum_rate_inp.mean,
            "sum_rate_no_inp": cp.sum_rate_no_inp.mean, "sum_rate_unlimited": cp.sum_rate_unlimited.mean,
            "inp_gain": cp.inp_gain.value, "latency_us": latency.mean, "latency_p99_us": latency.percentile(99),
            "deadline_misses": cp.deadline_misses.value, "ingress_mbps": cp.ingress.value,
            "busiest_link": max(link.utilisation.value for link in self.links),
        }
