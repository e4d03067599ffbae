"""Allocators matching requesters to resources, as used for VC and switch allocation.

Both take ``requests``, a mapping from requester to the list of resources it asks for, and
round-robin pointers (lists indexed by requester and by resource) that they update, and return
a mapping requester -> granted resource with every resource granted at most once.

* :func:`separable_input_first`: each requester picks one resource (round robin from its
  pointer), then each resource grants one of the requesters that picked it (round robin);
  pointers move past winners (Dally and Towles, 19.3).
* :func:`islip`: request-grant-accept with round-robin grant and accept arbiters, repeated
  ``iterations`` times over unmatched requesters and resources; pointers move only on an
  accepted grant of the first iteration (McKeown 1999), which desynchronises them under load.

:func:`islip_shared` and :func:`islip_ports` are one-round iSLIP for the router's common cases
(every requester asking for the same resources; input ports with VCs, for switch allocation).
"""

from __future__ import annotations

from bisect import bisect_left

from archmodel.kernel import Registry


def _rotate_pick(candidates: list[int], pointer: int, size: int) -> int:
    if len(candidates) == 1:
        return candidates[0]
    best = candidates[0]
    best_key = (best - pointer) % size
    for c in candidates:
        key = (c - pointer) % size
        if key < best_key:
            best, best_key = c, key
    return best


def separable_input_first(requests: dict, in_ptr: list, out_ptr: list, n_in: int, n_out: int,
                          iterations: int = 1) -> dict:
    """Separable input-first allocation with round-robin arbiters (one pass)."""
    picked: dict = {}
    for i, outs in requests.items():
        o = _rotate_pick(outs, in_ptr[i], n_out)
        if o in picked:
            picked[o].append(i)
        else:
            picked[o] = [i]
    grants = {}
    for o, ins in picked.items():
        i = _rotate_pick(ins, out_ptr[o], n_in)
        grants[i] = o
        out_ptr[o] = (i + 1) % n_in
        in_ptr[i] = (o + 1) % n_out
    return grants


def islip(requests: dict, in_ptr: list, out_ptr: list, n_in: int, n_out: int, iterations: int = 1) -> dict:
    """iSLIP allocation with ``iterations`` request-grant-accept rounds."""
    by_out: dict = {}
    for i, outs in requests.items():
        for o in outs:
            if o in by_out:
                by_out[o].append(i)
            else:
                by_out[o] = [i]
    matched: dict = {}
    taken: set = set()
    for round_ in range(iterations):
        offers: dict = {}
        for o, ins in by_out.items():
            if o in taken:
                continue
            free = [i for i in ins if i not in matched]
            if not free:
                continue
            i = _rotate_pick(free, out_ptr[o], n_in)
            if i in offers:
                offers[i].append(o)
            else:
                offers[i] = [o]
        if not offers:
            break
        for i, outs in offers.items():
            o = _rotate_pick(outs, in_ptr[i], n_out)
            matched[i] = o
            taken.add(o)
            if round_ == 0:
                out_ptr[o] = (i + 1) % n_in
                in_ptr[i] = (o + 1) % n_out
    return matched


ALLOCATORS: Registry = Registry("allocator", {"round_robin": separable_input_first, "islip": islip})
"""The allocators by the name a router's ``allocator`` parameter takes."""


def set_bits(mask: int) -> list[int]:
    """The indices of the set bits of ``mask``, in increasing order."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def islip_shared(requesters: list, resources: list, in_ptr: list, out_ptr: list, n_in: int, n_out: int,
                  grants: dict) -> None:
    """One iSLIP round when every requester (sorted) asks for the same resources (sorted):
    exactly :func:`islip` with ``iterations=1``, by binary search on the pointers."""
    offers: dict = {}
    last = len(requesters)
    for o in resources:
        k = bisect_left(requesters, out_ptr[o])
        i = requesters[k] if k < last else requesters[0]
        if i in offers:
            offers[i].append(o)
        else:
            offers[i] = [o]
    for i, outs in offers.items():
        k = bisect_left(outs, in_ptr[i])
        o = outs[k] if k < len(outs) else outs[0]
        grants[i] = o
        out_ptr[o] = (i + 1) % n_in
        in_ptr[i] = (o + 1) % n_out


def islip_ports(by_port: dict, ivc_out: list, out_port_of: list, in_ptr: list, out_ptr: list, vc_ptr: list,
                n_in: int, n_out: int, v: int) -> list:
    """A router's switch allocation by one iSLIP round over ``by_port`` (input port -> its ready
    input VCs, each holding output VC ``ivc_out[ivc]`` of port ``out_port_of[...]``): exactly
    :func:`islip` with ``iterations=1`` on the ports' output requests, then each winning input's
    VC arbiter (pointer ``vc_ptr``, ``v`` VCs per port) picks among its VCs for the granted
    output. Returns the winning input VCs."""
    wanted: dict = {}  # output port -> input ports requesting it
    for p, w in by_port.items():
        outs = (out_port_of[ivc_out[w[0]]],) if len(w) == 1 else {out_port_of[ivc_out[i]] for i in w}
        for o in outs:
            ps = wanted.get(o)
            if ps is None:
                wanted[o] = [p]
            else:
                ps.append(p)
    offers: dict = {}  # input port -> outputs granting it
    for o, ps in wanted.items():
        p = ps[0] if len(ps) == 1 else _rotate_pick(ps, out_ptr[o], n_in)
        granted = offers.get(p)
        if granted is None:
            offers[p] = [o]
        else:
            granted.append(o)
    winners = []
    for p, granted in offers.items():
        o = granted[0] if len(granted) == 1 else _rotate_pick(granted, in_ptr[p], n_out)
        out_ptr[o] = (p + 1) % n_in
        in_ptr[p] = (o + 1) % n_out
        choice = [i for i in by_port[p] if out_port_of[ivc_out[i]] == o]
        if len(choice) == 1:
            ivc = choice[0]
        else:
            start = p * v + vc_ptr[p]
            ivc = min(choice, key=lambda i: (i - start) % v)
        vc_ptr[p] = (ivc - p * v + 1) % v
        winners.append(ivc)
    return winners
