"""The credit round trip of the reference router, flit by flit (issue 18, item 3).

A burst of single-flit packets from one terminal, with one VC per port, goes as fast as the
slowest credit loop on its path lets it: the gap between consecutive arrivals is that loop's
length. BookSim 2's timing (its channels deliver a word written in cycle t in cycle t + latency
+ 1, a credit is written the cycle its flit wins the switch, and the router receiving a credit
uses it credit_delay cycles later; an interface uses it at once), with the reference delays
(VA, SA, ST 1 cycle each, credit processing 2, links, injection and ejection 1), gives, from a
flit winning the switch at cycle s:

* router to router: the flit is read downstream at s + 3, wins its VC at s + 3 and the switch at
  s + 4; the credit is read upstream at s + 6 and used at s + 8. With one flit of buffer the next
  flit wins the switch at s + 8; with the VC held until the tail's credit (wait_for_tail_credit)
  the next head wins the VC at s + 8 and the switch at s + 9.
* router to interface: the interface reads the flit at s + 3 and writes its credit then, which
  the router reads at s + 5 and uses at s + 7: the next flit at s + 7, the next packet at s + 8.
* interface to router: written at t, read at t + 2, VC at t + 2, switch at t + 3, its credit
  read by the interface at t + 5: the next flit (or packet) at t + 5.
"""

import pytest

from archmodel.kernel import Simulator
from archmodel.models.network import Noc

REFERENCE = dict(routing_delay=0, vc_alloc_delay=1, sw_alloc_delay=1, st_delay=1, credit_delay=2,
                 allocator="islip", injection_latency=1, ejection_latency=1, link_latency=1)
BURST = 6


def arrivals(engine: str, tmp_path, dest: int, **params) -> list[int]:
    """Arrival cycles of a burst of BURST one-flit packets created at cycle 0 at terminal 0."""
    trace = tmp_path / "burst.trace"
    trace.write_text("".join(f"0 0 {dest} 1\n" for _ in range(BURST)))
    noc = Noc("net", topology="mesh(2, 1)", routing="dor", vcs=1, trace_file=str(trace), engine=engine,
              **dict(REFERENCE, **params))
    log = []
    for ni in noc.interfaces:
        ni.log = log
    Simulator(noc, seed=1).run()
    return sorted(arrived // 1000 for _, arrived in log)


@pytest.mark.parametrize("engine", ["components", "fast"])
@pytest.mark.parametrize("dest, params, first, gap", [
    (1, dict(buffer_depth=1), 10, 8),  # router -> router credit loop
    (0, dict(buffer_depth=1), 6, 7),  # router -> interface
    (1, dict(buffer_depth=4, wait_for_tail_credit=True), 10, 9),  # router -> router, VC held for the tail
    (0, dict(buffer_depth=4, wait_for_tail_credit=True), 6, 8),  # router -> interface, VC held
    (0, dict(buffer_depth=1, credit_delay=0), 6, 5),  # both loops of the interface: 5 cycles
    # enough credits: a packet every 2 cycles, as a head is routed the cycle after the tail
    # ahead of it in its VC left, and wins its VC and the switch a cycle each
    (1, dict(buffer_depth=4), 10, 2),
])
def test_a_burst_goes_at_the_pace_of_the_slowest_credit_loop(engine, tmp_path, dest, params, first, gap):
    times = arrivals(engine, tmp_path, dest, **params)
    assert times == [first + gap * k for k in range(BURST)]

