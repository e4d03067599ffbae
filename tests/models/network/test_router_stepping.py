"""The router's stepping interface, what the network-level engine drives it through: ``begin``
fixes the stage delays, ``take`` hands it a link word, ``arbitrate`` allocates, ``words_due``
gives the words to send, ``has_requests`` says whether a step without arrivals can move
anything (``arbitrate_and_ask`` answers both in one call); exact cycles for one packet and for an output VC held until the tail's credit."""

import numpy as np

from archmodel.models.network import NetPacket, NocRouter, PortMap, build_topology, make_routing
from archmodel.models.network.flit import NO_CREDIT
from archmodel.models.network.router import ASKING, WON

NS = 1000


def router_0(**params) -> NocRouter:
    """Router 0 of a 2x2 mesh (port 0 its terminal, 1 towards router 1, 2 towards router 2),
    begun at 1 GHz, stepped by hand."""
    router = NocRouter("router[0]", inputs=3, outputs=3, vcs=1, buffer_depth=4, credit_delay=2, **params)
    router.attach_routing(make_routing("dor", PortMap(build_topology("mesh(2, 2)")), 1))
    router.begin(NS, np.random.default_rng(1), False)
    return router


def head(packet_id: int, dest: int):
    flit = NetPacket(packet_id, 0, dest, 1).flits()[0]
    flit.vc = 0
    return flit


def step(router, start: int, end: int) -> list:
    """Arbitrate each cycle of ``[start, end)`` and collect (cycle, port, flit's packet id or
    None, credit) of the words sent."""
    sent = []
    for c in range(start, end):
        router.arbitrate(c * NS)
        for port, (flit, credit) in (router.words_due(c * NS) or {}).items():
            sent.append((c, port, None if flit is None else flit.packet.id, credit))
    return sent


def test_a_packet_is_allocated_switched_and_sent_with_its_credit_back_at_the_stage_delays():
    router = router_0()
    assert (router.st_total, router.credit_times) == (2 * NS, [NS, 3 * NS])
    router.take(0, head(7, 1), NO_CREDIT, 0)  # from the terminal, to router 1 (port 1)
    assert router.has_requests() and router.buffered == 1
    # VC allocation at 0, the switch at 1; the credit leaves for the terminal at 2 (switch
    # allocation done; an interface processes it at once), the flit on port 1 at 3
    assert step(router, 0, 6) == [(2, 0, None, 0), (3, 1, 7, NO_CREDIT)]
    assert not router.has_requests() and router.buffered == 0


def test_with_wait_for_tail_credit_the_next_packet_waits_for_the_credit_taken():
    router = router_0(wait_for_tail_credit=True)
    router.take(0, head(1, 1), NO_CREDIT, 0)
    router.take(0, head(2, 1), NO_CREDIT, NS)
    sent = step(router, 0, 8)
    assert [s for s in sent if s[2] is not None] == [(3, 1, 1, NO_CREDIT)]
    assert not router.has_requests()  # packet 2 waits for the output VC: nothing to do until a credit
    router.take(1, None, 0, 8 * NS)  # router 1 returns the credit of packet 1's flit
    assert router.has_requests()
    # VC allocation at 8, the switch at 9, the flit leaves at 11
    assert [s for s in step(router, 8, 14) if s[2] is not None] == [(11, 1, 2, NO_CREDIT)]


def test_output_load_counts_a_switched_flit_until_its_word_is_sent():
    router = router_0()
    router.take(0, head(7, 1), NO_CREDIT, 0)  # to router 1 (port 1)
    router.arbitrate(0)  # VC allocation
    assert router.output_load(1) == 0
    router.arbitrate(NS)  # the switch: one credit of port 1 in use, the flit leaves at 3
    assert router.output_load(1) == 2  # the downstream slot it will take, and the flit leaving
    assert router.output_load(0) == 0  # the credit going back on port 0 is no load
    assert router.words_due(2 * NS) == {0: (None, 0)}
    assert router.output_load(1) == 2
    (port, (flit, credit)), = router.words_due(3 * NS).items()
    assert (port, flit.packet.id, credit) == (1, 7, NO_CREDIT)
    assert router.output_load(1) == 1  # sent: only the downstream slot, until its credit returns


def test_take_says_whether_a_step_may_move_something_after_the_word():
    """The engine steps a router after a word only when ``take`` says so (instead of asking
    ``has_requests`` after each word): always after a flit; after a credit alone only when
    heads wait for an output VC or input VCs for the switch."""
    router = router_0()
    assert router.take(0, head(7, 1), NO_CREDIT, 0) is True
    step(router, 0, 6)
    assert router.take(1, None, 0, 6 * NS) is False  # router 1 returns the flit's credit: nothing waits

    router = router_0(wait_for_tail_credit=True)
    router.take(0, head(1, 1), NO_CREDIT, 0)
    assert router.take(0, head(2, 1), NO_CREDIT, NS) is True
    step(router, 0, 8)
    # the tail's credit frees the output VC packet 2 waits for
    assert router.take(1, None, 0, 8 * NS) is True
    assert router.has_requests()


def test_arbitrate_and_ask_answers_what_arbitrate_then_has_requests_would():
    """Two routers given the same words, one stepped by ``arbitrate`` and ``has_requests``,
    the other by ``arbitrate_and_ask``: the same flags and words at every cycle (packet 1's
    VC allocation still asking, its switch won with packet 2's head asking behind it, packet
    2 parked for the tail's credit with nothing to ask, then allocated and switched once the
    credit is back)."""
    def sent(router, c: int) -> list:
        return [(port, None if flit is None else flit.packet.id, credit)
                for port, (flit, credit) in (router.words_due(c * NS) or {}).items()]

    pair = [router_0(wait_for_tail_credit=True) for _ in range(2)]
    for router in pair:
        router.take(0, head(1, 1), NO_CREDIT, 0)
        router.take(0, head(2, 1), NO_CREDIT, NS)
    flags = []
    for c in range(14):
        if c == 8:
            for router in pair:
                router.take(1, None, 0, c * NS)  # router 1 returns packet 1's credit
        by_two, by_one = pair
        won = by_two.arbitrate(c * NS)
        two = (WON if won else 0) | (ASKING if by_two.has_requests() else 0)
        one = by_one.arbitrate_and_ask(c * NS)
        assert one == two
        assert sent(by_one, c) == sent(by_two, c)
        flags.append(one)
    assert flags[:2] == [ASKING, WON | ASKING]  # packet 1 allocated, then switched with packet 2 behind it
    assert flags[8:10] == [ASKING, WON]  # packet 2 allocated once the credit is back, then switched
