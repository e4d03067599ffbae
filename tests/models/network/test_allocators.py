"""The router's allocation shortcuts in allocators.py are the general allocators on the cases
they serve: a lone requester, input ports with VCs under separable and one-round iSLIP
allocation, with every round-robin pointer moved alike (randomized over requests and pointers)."""

import random

import pytest

from archmodel.models.network.allocators import (grant_lone, islip, islip_ports, match_moves, match_ports, pick_vc,
                                                 separable_input_first, separable_ports, set_bits)


@pytest.mark.parametrize("seed", range(40))
def test_a_lone_requester_gets_what_every_allocator_grants_it(seed):
    rng = random.Random(seed)
    n_in, n_out = rng.randint(1, 12), rng.randint(1, 12)
    requester = rng.randrange(n_in)
    request = rng.randrange(1, 1 << n_out)
    in_ptr = [rng.randrange(n_out) for _ in range(n_in)]
    out_ptr = [rng.randrange(n_in) for _ in range(n_out)]
    results = []
    for allocate in (separable_input_first, islip):
        ins, outs = list(in_ptr), list(out_ptr)
        results.append((allocate({requester: set_bits(request)}, ins, outs, n_in, n_out), ins, outs))
    ins, outs = list(in_ptr), list(out_ptr)
    lone = grant_lone(request, requester, ins, outs, n_in, n_out)
    assert results[0] == results[1] == ({requester: lone}, ins, outs)


def port_requests(rng, n_ports: int, v: int):
    """Random ready input VCs per input port, each holding an output VC of a random port."""
    ivc_out = [-1] * (n_ports * v)
    by_port = {}
    for p in range(n_ports):
        ready = [p * v + w for w in range(v) if rng.random() < 0.5]
        if ready:
            by_port[p] = ready
            for ivc in ready:
                ivc_out[ivc] = rng.randrange(n_ports) * v + rng.randrange(v)
    return by_port, ivc_out


def by_general_allocator(allocate, by_port, ivc_out, out_port_of, in_ptr, out_ptr, vc_ptr, n, v):
    """Switch allocation spelled out: the allocator matches input ports to output ports, then
    each matched input's VC arbiter picks among its VCs for the granted output."""
    requests = {p: sorted({out_port_of[ivc_out[i]] for i in w}) for p, w in by_port.items()}
    winners = []
    for p, o in allocate(requests, in_ptr, out_ptr, n, n).items():
        ivc = pick_vc([i for i in by_port[p] if out_port_of[ivc_out[i]] == o], p, v, vc_ptr)
        vc_ptr[p] = (ivc - p * v + 1) % v
        winners.append(ivc)
    return sorted(winners)


@pytest.mark.parametrize("seed", range(60))
def test_switch_allocation_of_ports_with_vcs_is_the_general_allocator(seed):
    rng = random.Random(seed)
    n, v = rng.randint(1, 6), rng.randint(1, 4)
    by_port, ivc_out = port_requests(rng, n, v)
    if not by_port:
        return
    out_port_of = [ovc // v for ovc in range(n * v)]
    pointers = ([rng.randrange(n) for _ in range(n)], [rng.randrange(n) for _ in range(n)],
                [rng.randrange(v) for _ in range(n)])
    # iSLIP over ports in one round, always; separable allocation when each input asks for one VC
    cases = [(islip_ports, islip)]
    if all(len(w) == 1 for w in by_port.values()):
        cases.append((separable_ports, separable_input_first))
    for shortcut, allocate in cases:
        fast = [list(x) for x in pointers]
        slow = [list(x) for x in pointers]
        got = sorted(shortcut(by_port, ivc_out, out_port_of, *fast, n, n, v))
        assert got == by_general_allocator(allocate, by_port, ivc_out, out_port_of, *slow, n, v)
        assert fast == slow


@pytest.mark.parametrize("seed", range(10))
def test_the_tabulated_match_moves_the_pointers_as_match_ports(seed):
    rng = random.Random(seed)
    n_in, n_out, v = rng.randint(1, 7), rng.randint(1, 7), rng.randint(1, 4)
    per_ivc, per_out = match_moves(n_in, n_out, v)
    for ivc in range(n_in * v):
        for o in range(n_out):
            pointers = [[rng.randrange(n_out) for _ in range(n_in)], [rng.randrange(n_in) for _ in range(n_out)],
                        [rng.randrange(v) for _ in range(n_in)]]
            expected = [list(ptr) for ptr in pointers]
            p = ivc // v
            match_ports(p, o, ivc, *expected, n_in, n_out, v)
            in_ptr, out_ptr, vc_ptr = pointers
            q, out_next, vc_next = per_ivc[ivc]
            out_ptr[o] = out_next
            in_ptr[q] = per_out[o]
            vc_ptr[q] = vc_next
            assert q == p and pointers == expected
