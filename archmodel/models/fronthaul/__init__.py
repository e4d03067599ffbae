"""Cell-free massive MIMO fronthaul: access points, fronthaul links and the central processor on
parallel radio stripes, with the uplink's signal level in the same run.

The reference is Jo, Lee and Park, "Sequential In-Network Processing for Cell-Free Massive MIMO
with Capacity-Constrained Parallel Radio Stripes" (arXiv 2412.07582). :class:`FronthaulNetwork`
builds a whole system from a stripe topology (:func:`~.stripes.radio_stripes`, registered for
``.arch`` files; the star and the bus are its extremes); :class:`AccessPoint`,
:class:`FronthaulLink` and :class:`CentralProcessor` are ordinary components with ports and
channels, so the engine, waveforms and the watchdog see them; TDD slots and frame budgets are in
:mod:`.frames`, the numpy signal level (LMMSE combining, Gaussian compression, sum rates) in
:mod:`.signal`, users and channels in :mod:`.scene`.
"""

from .access_point import AccessPoint
from .central import CentralProcessor
from .frames import Frame, SlotPlan
from .link import FronthaulLink
from .network import FronthaulNetwork
from .scene import RadioScene
from .stripes import StripeLayout, radio_stripes, stripe_layout

__all__ = ["AccessPoint", "CentralProcessor", "Frame", "FronthaulLink", "FronthaulNetwork", "RadioScene",
           "SlotPlan", "StripeLayout", "radio_stripes", "stripe_layout"]
