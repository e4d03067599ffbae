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
(every requester asking for the same resources; input ports with VCs, for switch allocation),
:func:`separable_ports` separable allocation of input ports with VCs, and :func:`grant_lone`
what every allocator here grants a lone requester; :func:`pick_vc` is an input port's VC
arbiter and :func:`match_ports` moves the switch pointers for one match (:func:`match_moves`
tabulates what it writes, for the router's lone switch requester). The router calls these
for all of its allocation, so each rule is written once.
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


def grant_lone(request: int, requester: int, in_ptr: list, out_ptr: list, n_in: int, n_out: int) -> int:
    """The resource every allocator here grants a requester that is alone in asking for the
    resources set in bit mask ``request`` (not empty): the first at or after its pointer,
    cyclically, with both pointers moved past the match (as :func:`islip` and
    :func:`separable_input_first` move them). Returns the resource."""
    pointer = in_ptr[requester]
    above = request >> pointer << pointer
    pick = above if above else request
    resource = (pick & -pick).bit_length() - 1
    in_ptr[requester] = (resource + 1) % n_out
    out_ptr[resource] = (requester + 1) % n_in
    return resource


def pick_vc(candidates: list, p: int, v: int, vc_ptr: list) -> int:
    """Input port ``p``'s VC arbiter: among its input VCs ``candidates`` (numbered ``p * v + w``)
    the first at or after its round-robin pointer, cyclically. The pointer moves only when the
    VC wins the switch (:func:`match_ports`)."""
    if len(candidates) == 1:
        return candidates[0]
    start = p * v + vc_ptr[p]
    return min(candidates, key=lambda i: (i - start) % v)


def match_ports(p: int, o: int, ivc: int, in_ptr: list, out_ptr: list, vc_ptr: list, n_in: int, n_out: int,
                v: int) -> None:
    """Input port ``p`` (its VC ``ivc``) matched to output port ``o``: the output's, the
    input's and the input's VC pointer move past the match, as every allocator here moves them
    on a match of its first round."""
    out_ptr[o] = (p + 1) % n_in
    in_ptr[p] = (o + 1) % n_out
    vc_ptr[p] = (ivc - p * v + 1) % v


def match_moves(n_in: int, n_out: int, v: int) -> tuple[list, list]:
    """What :func:`match_ports` writes, tabulated once per router rather than worked out at
    every flit hop: per input VC ``ivc``, ``(p, out_next, vc_next)``, its input port, the value
    the output pointer takes on a match of ``p`` and the one ``p``'s VC pointer takes when
    ``ivc`` wins; per output port ``o``, the value the input pointer takes on a match to it."""
    per_ivc = [(ivc // v, (ivc // v + 1) % n_in, (ivc % v + 1) % v) for ivc in range(n_in * v)]
    per_out = [(o + 1) % n_out for o in range(n_out)]
    return per_ivc, per_out


def separable_ports(by_port: dict, ivc_out: list, out_port_of: list, in_ptr: list, out_ptr: list, vc_ptr: list,
                    n_in: int, n_out: int, v: int) -> list:
    """A router's switch allocation by separable input-first allocation over ``by_port`` (as
    :func:`islip_ports`): each input port's VC arbiter picks one of its VCs, then each output
    port grants one of the inputs that picked it, round robin. With one VC per input this is
    also one iSLIP round (each input requests one output, so it accepts what it is granted).
    Returns the winning input VCs."""
    by_out: dict = {}
    for p, w in by_port.items():
        ivc = w[0] if len(w) == 1 else pick_vc(w, p, v, vc_ptr)
        o = out_port_of[ivc_out[ivc]]
        if o in by_out:
            by_out[o].append((p, ivc))
        else:
            by_out[o] = [(p, ivc)]
    winners = []
    for o, inputs in by_out.items():
        p, ivc = inputs[0] if len(inputs) == 1 else min(inputs, key=lambda pi: (pi[0] - out_ptr[o]) % n_in)
        match_ports(p, o, ivc, in_ptr, out_ptr, vc_ptr, n_in, n_out, v)
        winners.append(ivc)
    return winners


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
        ivc = pick_vc([i for i in by_port[p] if out_port_of[ivc_out[i]] == o], p, v, vc_ptr)
        match_ports(p, o, ivc, in_ptr, out_ptr, vc_ptr, n_in, n_out, v)
        winners.append(ivc)
    return winners
