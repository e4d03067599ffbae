"""The compiled form of a :class:`~.reference_core.ReferenceCore` and the cache it reaches
alone (``engine`` on the core): both computed in one numba loop
(:mod:`.compiled_reference_loop`), many cycles at once.

The pair keeps its outside ports, the cache's ``mem_req``/``mem_resp``: a miss or write-back
leaves as a MemRequest at its exact cycle and a fill comes back as a MemResponse, so any
memory (a DRAM controller, an interleaver, another cache) sits below. The cache ticks for
both: at each tick it takes what arrived, runs the loop up to the earliest time anything
from outside can reach it (the kernel's conservative lookahead, asked only while requests
are out below, with a :class:`~archmodel.kernel.QuestionBackoff`). Lines leave inside a
batch, each timestamped with its own cycle (``OutPort.send_ahead``), while the credits to
memory held at the batch's start last, and the batch stops before the first cycle an answer
to one of them can arrive (its send plus the least round trip the wiring allows: the link
latencies and the memory's least reaction), before a line that finds no credit, and before
the run finishes. A memory that answers each client in request order
(``Component.answers_in_order_per_client``), wired straight below, spares most of those
stops: a line sent while an older request of the pair is out has its answer come after
the older one's, which the lookahead answer ending the batch already bounds, so only a line
sent with nothing older out (or none the batch's end bounds) cuts the batch at its round
trip. The core sleeps throughout and declares that it sends nothing on its own
(its requests never leave the pair).

When the memory below is a :class:`~.memory.FixedLatencyMemory` wired straight to the cache
(same clock domain, no width on either channel, nothing pending in it), the loop plays it
too (:mod:`.compiled_reference_memory`): misses and fills then never leave the loop, and a
batch runs to the run's limit, the watchdog's deadline, a phase's end or the finish.
``PLAY_IDEAL_MEMORY`` turns that off (the tests hold both forms to the Python models). The
loop writes the memory's bytes in place as it computes, so a ``backdoor_read`` of that
memory between batches sees the write-backs the pair has taken up to where it computed
(ahead of the kernel's time by at most a batch), as it sees the pair's cache lines when the
run settles.

Where it applies (``engine = "auto"`` picks it then, and the Python models otherwise):
the core's ``req``/``resp`` are wired straight to a cache with one client, in one clock
domain, on channels without a width; the cache has no prefetcher, no miss classification
and an LRU or SRRIP policy; no reference crosses a line; at most one core meets the
barrier; and the run is not traced (waveforms come from the Python models). Once a run
goes compiled it stays compiled: the counters, the lines the cache holds and its
write-backs still on their way down (for ``backdoor_read``) are published to the two
components when the run settles or ends, not their Python state. A ``backdoor_write`` to the cache during a compiled run reaches the memory
below but not the lines the pair holds (workloads place their data before the run), and a
lone core's barrier is met inside the loop (its ``episodes`` are not counted).
"""

from __future__ import annotations

import numpy as np

from archmodel.kernel import QuestionBackoff, compiled
from archmodel.models.messages import MemRequest

from . import compiled_reference_loop as loop
from . import compiled_reference_memory as inner
from .memory import FixedLatencyMemory

# (the loop's indices the driver reads at every batch, as module constants)
_WAKE, _MEM_WAITING, _O_LEN, _O_HEAD, _O_OUT, _BUDGET, _CAP = (loop.WAKE, loop.MEM_WAITING, loop.O_LEN, loop.O_HEAD,
                                                           loop.O_OUT, loop.BUDGET, loop.CAP)
_REFS, _NEVER, _EXIT_END, _EXIT_ANSWER = loop.REFS, loop.NEVER, loop.EXIT_END, loop.EXIT_ANSWER
_ROUND_TRIP = loop.G_ROUND_TRIP

SHORT_HORIZON = 2
"""Cycles below which a lookahead answer counts as short (asking costs a walk of the wiring).
A batch cut to one cycle costs the pair a tick of its own, which costs more than a question
(PageRank on DDR4: 8 here gave 143,620 batches and 143,588 questions where 2 gives 125,596
and 147,793), so only an answer that saves no tick counts as short."""
COMPILED_POLICIES = ("lru", "srrip")
PLAY_IDEAL_MEMORY = True
"""Whether the loop plays an ideal memory wired straight below the cache (see above)."""


def unsupported(core, cache) -> str | None:
    """Why the pair cannot run compiled (None: it can)."""
    why = compiled.unavailable_reason()
    if why is not None:
        return why
    if cache is None or not hasattr(cache, "drive_with"):
        return f"{core.path}.req does not lead straight to a cache"
    if core.resp.channel is None or core.resp.channel.src_owner is not cache:
        return f"{core.path}.resp is not answered by {cache.path}"
    if cache.clients != 1:
        return f"{cache.path} has {cache.clients} clients (the compiled pair needs a cache of its own)"
    if cache.prefetch_degree or cache.classify_misses:
        return f"{cache.path} prefetches or classifies misses"
    if cache.policy not in COMPILED_POLICIES:
        return f"{cache.path} replaces by '{cache.policy}' (compiled: {', '.join(COMPILED_POLICIES)})"
    for ch in (core.req.channel, core.resp.channel):
        if ch.width_bits is not None or ch.src_owner.domain is not ch.dst_owner.domain:
            return f"channel {ch.name} has a width or crosses clock domains"
    if cache.mem_req.channel is None or cache.mem_resp.channel is None:
        return f"{cache.path} has no memory below"
    if core.sim.observers:
        return "the run is traced (waveforms come from the Python models)"
    stream = core.stream
    if stream is None:
        return f"{core.path} has no references"
    if core.barrier is not None and core.barrier.cores != 1:
        return f"{core.path} meets {core.barrier.cores} cores at its barrier"
    return _crossing(stream, cache.line_bytes)


def _own_memory(cache) -> FixedLatencyMemory | None:
    """The ideal memory the loop may play itself, below ``cache`` (None: it stays outside)."""
    below = cache.below()
    if not PLAY_IDEAL_MEMORY or type(below) is not FixedLatencyMemory:
        return None
    ask, answer = cache.mem_req.channel, cache.mem_resp.channel
    if below.domain is not cache.domain or answer.src_owner is not below or not below.idle:
        return None
    for ch in (ask, answer):
        if ch.width_bits is not None or ch.flight or not ch.same_domain:
            return None
    return below


def in_order_below(cache) -> bool:
    """Whether the answers to the lines ``cache`` sends below arrive in the order it sends
    them: its ``mem_req`` and ``mem_resp`` channels lead straight to one component (channels
    deliver in order) that answers each client in request order
    (``Component.answers_in_order_per_client``). Anything else between them (a network, an
    interleaver, another cache) may reorder, unless it is that one component and declares it."""
    ask, answer = cache.mem_req.channel, cache.mem_resp.channel
    if ask is None or answer is None:
        return False
    below = ask.dst_owner
    return answer.src_owner is below and bool(below.answers_in_order_per_client)


def _crossing(stream, line_bytes: int) -> str | None:
    inside = stream.address & (line_bytes - 1)
    if (inside + stream.size > line_bytes).any():
        return "a reference crosses a cache line"
    return None


class CompiledPair:
    """The state of a core and its cache as arrays, and the driver the cache's tick calls."""

    def __init__(self, core, cache):
        self.core, self.cache = core, cache
        s = core.stream
        shift = cache.line_bytes.bit_length() - 1
        sets, ways, queue = cache.sets, cache.ways, cache.queue
        rq, rs = core.req.channel, core.resp.channel
        barrier_latency = core.barrier.latency_cycles if core.barrier is not None else 0
        self.geo = np.array([sets, ways, shift, cache.hit_latency_cycles, cache.mshrs, cache.mshr_targets,
                             cache.write_buffer, queue, cache.policy == "srrip", cache.write_hits_touch,
                             cache.in_order, core.window, rq.latency, rq.capacity, rs.latency, rs.capacity,
                             core.check_reads, barrier_latency, 0, 0], dtype=np.int64)
        assert len(self.geo) == loop.GEO  # (the last two are set at the first tick: _wiring)
        self.cs = np.zeros(loop.CORE_SCALARS, dtype=np.int64)
        self.cs[[loop.WIN_SINCE, loop.DEP_SINCE, loop.DONE, loop.BAD, loop.LAST_ENTRY]] = -1
        self._phase(s)
        self.ks = np.zeros(loop.CACHE_SCALARS, dtype=np.int64)
        self.ks[loop.CUR] = -1
        self.qs = np.zeros(6, dtype=np.int64)
        self.qs[[loop.RQ_TAKEN, loop.RS_TAKEN]] = -1
        self.waiting = np.zeros(core.window, dtype=np.int64)
        self.older = np.zeros(2 * core.window, dtype=np.int64)
        self.tags = np.full((sets, ways), -1, dtype=np.int64)
        self.age = np.full((sets, ways), loop.RRPV_MAX if cache.policy == "srrip" else 0, dtype=np.int64)
        self.dirty = np.zeros((sets, ways), dtype=np.bool_)
        self.valid = np.zeros((sets, ways), dtype=np.bool_)
        self.data = np.zeros((sets, ways, cache.line_bytes), dtype=np.uint8)
        self.mline = np.full(cache.mshrs, -1, dtype=np.int64)
        self.mcount = np.zeros(cache.mshrs, dtype=np.int64)
        self.mtarg = np.zeros((cache.mshrs, cache.mshr_targets), dtype=np.int64)
        self.job_ref = np.zeros(queue, dtype=np.int64)
        self.job_left = np.zeros(queue, dtype=np.int64)
        self.job_done = np.zeros(queue, dtype=np.int64)
        self.job_val = np.zeros(queue, dtype=np.uint64)
        self.job_free = np.arange(queue, dtype=np.int64)
        self.jq = np.zeros(queue, dtype=np.int64)
        out = cache.mshrs + cache.write_buffer + 1
        self.o_leave = np.zeros(out, dtype=np.int64)
        self.o_kind = np.zeros(out, dtype=np.int64)
        self.o_line = np.zeros(out, dtype=np.int64)
        self.o_tag = np.zeros(out, dtype=np.int64)
        self.o_data = np.zeros((out, cache.line_bytes), dtype=np.uint8)
        self.o_at = np.zeros(out, dtype=np.int64)
        self.rq_arr = np.zeros(rq.capacity, dtype=np.int64)
        self.rq_ref = np.zeros(rq.capacity, dtype=np.int64)
        self.rs_arr = np.zeros(rs.capacity, dtype=np.int64)
        self.rs_ref = np.zeros(rs.capacity, dtype=np.int64)
        self.rs_val = np.zeros(rs.capacity, dtype=np.uint64)
        self.memory = _own_memory(cache)
        if self.memory is None:
            self.inner = inner.off()
        else:
            m = self.memory
            mg = np.zeros(inner.MEM_GEO, dtype=np.int64)
            mg[[inner.MG_ON, inner.MG_LATENCY, inner.MG_SERVICE, inner.MG_Q_LAT, inner.MG_Q_CAP, inner.MG_R_LAT,
                inner.MG_R_CAP, inner.MG_BASE, inner.MG_END]] = (
                1, m.latency_cycles, -(-cache.line_bytes // m.bytes_per_cycle), cache.mem_req.channel.latency,
                cache.mem_req.channel.capacity, cache.mem_resp.channel.latency, cache.mem_resp.channel.capacity,
                m.base_address, m.base_address + m.size_bytes)
            ms = np.zeros(inner.MEM_SCALARS, dtype=np.int64)
            ms[[inner.M_FREE, inner.M_READ, inner.M_WRITTEN, inner.M_BUSY]] = m.service_state()
            # (a response is taken before the cache can have more lines out than its MSHRs
            # and write buffer hold)
            rings = inner.rings(cache.line_bytes, cache.mem_req.channel.capacity, out)
            self.inner = (ms, mg, np.frombuffer(m.data, dtype=np.uint8), *rings)
        self._pack()
        self.sent: dict = {}  # tag -> (kind, line, cycle it was due to leave), for the answers below
        # line -> (tag, bytes) of its newest write-back handed to the channel and not yet
        # acknowledged: the memory below may not hold them yet (see publish)
        self.leaving: dict = {}
        self.lookahead = QuestionBackoff()
        self.cycles = self.batches = 0  # cycles computed in the loop and batches (tests check the path)
        self.resume = 0  # the first cycle no batch has computed yet
        self.woken_inside = 0  # ticks at a cycle already computed (a stale wake-up: see tick)
        self.sent_ahead = 0  # lines handed to the channel at a later cycle than the kernel's
        self.asked_at_answer = 0  # lookahead questions asked where an answer to a line sent may come
        # Whether the memory below answers the pair in request order (see in_order_below),
        # and whether the end of the batch under way came from a question asked while lines
        # were out, so that it bounds the answer to any line sent after it (see tick).
        self.in_order_below = in_order_below(cache)
        self._bounded = False
        self._trip = 0  # the least round trip through the memory below, in cycles (see _wiring)
        self._exits = [0] * len(loop.EXIT_REASONS)  # batches per exit reason (see exits)
        self.finished = False
        domain = cache.domain
        self._phase_ps, self._period_ps = domain.phase_ps, domain.period_ps
        self._channel, self._answers = cache.mem_req.channel, cache.mem_resp.channel
        self._source = cache.path  # (the requests' source, as the Python cache names it)

    def _phase(self, s) -> None:
        """Play phase ``s`` next: its first reference enters ``gap[0]`` cycles after the
        last one of the phase before (and not before the barrier released the core)."""
        self.addr, self.size, self.write, self.gap = s.address, s.size, s.write.astype(np.bool_), s.gap
        self.dep, self.value, self.check = s.dep, s.value, s.check.astype(np.bool_)
        self.answered = np.zeros(len(s), dtype=np.uint8)
        if hasattr(self, "rs_val"):  # (at the first phase, the rest is made after this)
            self._pack()
        cs = self.cs
        cs[[loop.ENTERED, loop.RETIRED, loop.ANSWERED]] = 0
        cs[loop.MORE] = self.core.more_phases
        if len(s):
            cs[loop.EARLIEST] = max(cs[loop.EARLIEST], cs[loop.LAST_ENTRY] + 1 + s.gap[0])
            cs[loop.COMPUTE] += s.gap[0]

    # -- the cache's tick ---------------------------------------------------------------
    def tick(self) -> None:
        """One batch from the cache's current cycle."""
        cache = self.cache
        if self.finished:
            cache.sleep()
            return
        now = cache.sim.now
        c = (now - self._phase_ps) // self._period_ps  # (cache.cycle)
        if c < self.resume:
            # A wake asked for at an earlier batch (a quiet one's, which a fill then came
            # before) falls in cycles a later batch computed: they are done, and by the
            # lookahead nothing from below arrives in them; the wake that batch asked for stands.
            if cache.mem_resp.valid:
                cache.fail(f"mem_resp: an answer arrived at cycle {c}, which the compiled pair had already "
                           "computed (a lookahead bound was not conservative)")
            self.woken_inside += 1
            cache.sleep()
            return
        if not self._trip:
            self._wiring()
        ks = self.ks
        mem_resp = cache.mem_resp
        if mem_resp.valid:
            answer = mem_resp.recv()
            kind, line, leave = self.sent.pop(answer.tag)
            if kind == loop.KIND_FILL:
                cache.miss_latency.sample(c - leave)
                loop.fill(c, kind, line, np.frombuffer(answer.data, dtype=np.uint8), self.geo, ks, self.tags,
                          self.valid, self.data, self.mline, self.mcount, self.mtarg, self.job_ref, self.job_left,
                          self.job_done, self.job_val, self.addr, self.size, self.write, self.value)
            else:
                ks[loop.UNACKED] -= 1  # (all that loop.fill does for an acknowledgement)
                if self.leaving.get(line, (None,))[0] == answer.tag:
                    del self.leaving[line]  # the memory holds these bytes now
            if ks[_WAKE] > c:
                ks[_WAKE] = c  # an arrival wakes the cache
            # another answer already waits (the memory's clock is faster): the channel delivers
            # in order, so its head tells (len(mem_resp) would count every arrived one)
            flight = self._answers.flight
            ks[_MEM_WAITING] = 1 if flight and flight[0][0] <= now else 0
        # Lines may leave in the batch while the credits held now last (see the loop module);
        # a line due now that finds none marks the channel waited on, as a failed send does.
        channel = self._channel
        due_now = ks[_O_LEN] > 0 and self.o_leave[ks[_O_HEAD]] <= c
        ks[_BUDGET] = channel.credits if channel.busy_until <= now else 0
        if due_now and not cache.mem_req.ready:
            ks[_BUDGET] = 0
        ks[_CAP] = _NEVER
        cs = self.cs
        before = self._moves() if self.memory is not None else int(cs[_REFS])
        # The first cycle needs no lookahead (what arrives at it has arrived). A line leaving
        # at it is sent before the question, which then bounds its answer; with none, the
        # question gets the same answer before the first cycle as after it (the pair sends
        # nothing else there), so it is asked first and the batch is one call of the loop.
        ran, end, asked = 0, c + 1, False
        self._bounded = False
        if not due_now:
            end, asked = self._end(c), True
        run, arrays, geo, trip = loop.run, self._arrays, self.geo, self._trip
        while True:
            # A line sent where the end already bounds its answer (see _end) need not stop
            # the batch at its round trip: the loop then reads a round trip of NEVER.
            geo[_ROUND_TRIP] = _NEVER if self._bounded else trip
            more, reason = run(c, c + ran, end, *arrays)
            ran += more
            if ks[_O_OUT]:
                self._send()
            if self.memory is not None:
                self._samples()
            if reason == _EXIT_END:
                pass
            elif reason == loop.EXIT_PHASE:
                stream = self.core.next_phase()
                why = _crossing(stream, cache.line_bytes)
                if why is not None:
                    self.core.fail(f"engine 'compiled': {why} in a later phase")
                self._phase(stream)  # and compute on into it, as far as the batch may go
                arrays = self._arrays
            elif reason == _EXIT_ANSWER:
                # The lines sent are on their way now, so the kernel's lookahead bounds their
                # answers (the memory counts requests in flight) more tightly than the least
                # round trip did: ask it here instead of ending the batch for it.
                ks[_CAP] = _NEVER
                end, asked = self._end(c), True
                self.asked_at_answer += 1
                if c + ran >= end:
                    break
                continue
            elif reason != loop.EXIT_SAMPLES:
                break
            if c + ran >= end:
                if asked or c + ran >= ks[_CAP]:
                    break  # (an answer to a line just sent may come next: no question needed)
                ks[_CAP] = _NEVER  # (the answer bounds those of the lines sent, as above)
                end, asked = self._end(c), True
                if c + ran >= end:
                    break
        self.cycles += ran
        self.resume = c + ran
        self.batches += 1
        self._exits[reason] += 1
        if reason == loop.EXIT_PHASE or before != (self._moves() if self.memory is not None else int(cs[_REFS])):
            self.core.progress()  # the core holds the work the watchdog watches
        if reason == _EXIT_END:
            cache.sleep_for(ran)
            return
        if reason == loop.EXIT_BAD:
            self.publish()
            self.finished = True
            self.core.fail(self._bad_read(int(self.cs[loop.BAD])))
        if reason == loop.EXIT_OUTSIDE:
            self.publish()
            self.finished = True
            self.memory.offset_of(int(self.inner[0][inner.OUTSIDE]), cache.line_bytes)  # (fails, naming it)
        if reason == loop.EXIT_DONE:
            self.finished = True
            self.publish()
            self.core.finish_at(int(self.cs[loop.DONE]))
            cache.sleep()
            return
        if reason == loop.EXIT_QUIET:
            until = int(self.cs[loop.QUIET_UNTIL])
            if until >= loop.NEVER:
                cache.sleep()  # a fill or acknowledgement from below wakes it
            else:
                cache.sleep_for(until - c)
            return
        cache.sleep_for(ran)

    @property
    def exits(self) -> dict:
        """How many batches ended on each reason (``loop.EXIT_REASONS``), the reasons met."""
        return {name: n for name, n in zip(loop.EXIT_REASONS, self._exits) if n}

    def _pack(self) -> None:
        # the loop's arguments in its order, gathered once a phase (a call then passes a tuple)
        self._arrays = (self.geo, self.cs, self.ks, self.qs, self.addr, self.size, self.write, self.gap, self.dep,
                        self.value, self.check, self.answered, self.waiting, self.older, self.tags, self.age,
                        self.dirty, self.valid, self.data, self.mline, self.mcount, self.mtarg, self.job_ref,
                        self.job_left, self.job_done, self.job_val, self.job_free, self.jq, self.o_leave,
                        self.o_kind, self.o_line, self.o_tag, self.o_data, self.o_at, self.rq_arr, self.rq_ref, self.rs_arr,
                        self.rs_ref, self.rs_val, *self.inner)

    def _moves(self) -> tuple:
        """What the watchdog counts as progress of the pair: references issued, and, with
        the memory inside the loop, the transfers to and from it (a fill is one), which no
        channel counts."""
        if self.memory is None:
            return (int(self.cs[loop.REFS]),)
        ms = self.inner[0]
        return int(self.cs[loop.REFS]), int(self.ks[loop.NEXT_TAG]), int(ms[inner.R_HEAD]), int(ms[inner.R_SENT])

    def _samples(self) -> None:
        """Hand the miss latencies the loop gathered (the memory inside) to the cache."""
        ms, samples = self.inner[0], self.inner[-1]
        n = int(ms[inner.N_SAMPLES])
        if n:
            sample = self.cache.miss_latency.sample
            for v in samples[:n].tolist():
                sample(v)
            ms[inner.N_SAMPLES] = 0

    def _end(self, c: int) -> int:
        """The end of the batch from cycle ``c``: the run's limit, the watchdog's deadline,
        and, while requests are out below, the earliest arrival from outside.

        Asked while lines are out below (``sent``), the lookahead's answer bounds their
        answers; a memory below that answers in request order (:func:`in_order_below`)
        answers every line the batch sends after that no sooner than those, so the end
        returned bounds the answers to those lines too (``_bounded``), and they need not
        stop the batch at their round trip. With nothing out, or no question asked (backing
        off), the first line sent in the batch has nothing older to follow: it keeps the
        round trip (and the lines after it follow it)."""
        self._bounded = False
        sim = self.cache.sim
        phase, period = self._phase_ps, self._period_ps
        end = (sim.watchdog_deadline_ps - phase) // period + 1
        # Half a watchdog window at most: the progress of a batch counts at its start, so a
        # batch that ran to the deadline would leave the next one a cycle to show progress in.
        half = sim.watchdog_ps // 2 // period
        if c + half < end:
            end = c + half if half > 1 else c + 1
        limit = sim.limit_ps
        if limit is not None and (limit - phase) // period + 1 < end:
            end = (limit - phase) // period + 1
        if end <= c:
            end = c + 1
        if self.sent:
            if not self.lookahead.should_ask():
                return c + 1
            until = sim.undisturbed_until_ps(self.cache, phase + end * period)
            if until is not None:
                bound = (until - 1 - phase) // period + 1
                if bound < end:
                    end = bound if bound > c else c + 1
            self.lookahead.answered(end - c >= SHORT_HORIZON)
            self._bounded = self.in_order_below
        return end

    def _send(self) -> None:
        """Hand the lines the loop sent to the channel to memory, each at its cycle."""
        cache, ks = self.cache, self.ks
        port, now = cache.mem_req, cache.sim.now
        phase, period, line_bytes, source = self._phase_ps, self._period_ps, cache.line_bytes, self._source
        size = len(self.o_leave)
        head = int(ks[_O_HEAD])
        sent, leaving = self.sent, self.leaving
        o_kind, o_line, o_tag, o_at = self.o_kind, self.o_line, self.o_tag, self.o_at
        for k in range(int(ks[_O_OUT]), 0, -1):
            h = (head - k) % size
            kind, line, tag = o_kind.item(h), o_line.item(h), o_tag.item(h)
            write = kind == loop.KIND_WB
            at = phase + o_at.item(h) * period
            data = self.o_data[h].tobytes() if write else None
            request = MemRequest(address=line * line_bytes, size_bytes=line_bytes, is_write=write,
                                 data=data, source=source, tag=tag, created_ps=at)
            if write:
                leaving[line] = (tag, data)
            if at == now:
                port.send(request)
            else:
                port.send_ahead(request, at)
                self.sent_ahead += 1
            sent[tag] = (kind, line, self.o_leave.item(h))
        ks[_O_OUT] = 0

    def _wiring(self) -> None:
        """The least round trip through the memory below, in cycles, and whether lines may
        leave ahead (see the loop module), from the kernel's bounds on the wiring: the
        link's latency and the least reactions on the way back (``ConnectionGraph.remaining``)."""
        cache = self.cache
        channel = cache.mem_req.channel
        back = cache.sim.connection_graph.remaining(cache).get(channel)
        if back is None:
            trip = loop.NEVER  # nothing it sends can ever come back
        else:
            least = (channel.delay if channel.same_domain else channel.tail_delay) + back
            trip = max(1, -(-least // cache.domain.period_ps))
        self._trip = trip
        self.geo[loop.G_ROUND_TRIP] = trip
        self.geo[loop.G_AHEAD] = channel.width_bits is None

    def _bad_read(self, i: int) -> str:
        size = int(self.size[i])
        want = int(self.value[i]).to_bytes(8, "little")[:size]
        return (f"reference {i}: read of {size} bytes at {int(self.addr[i]):#x} returned a different value, "
                f"the workload expects {want.hex()}")

    # -- what the components show ---------------------------------------------------------
    def publish(self) -> None:
        """Copy the counters, and the lines the cache holds, into the two components."""
        core, cache, cs, ks = self.core, self.cache, self.cs, self.ks
        core.references.value = int(cs[loop.REFS])
        core.reads.value = int(cs[loop.READS])
        core.writes.value = int(cs[loop.WRITES])
        core.compute_cycles.value = int(cs[loop.COMPUTE])
        core.window_stalls.value = int(cs[loop.WIN_STALLS])
        core.dependence_stalls.value = int(cs[loop.DEP_STALLS])
        core.barrier_cycles.value = int(cs[loop.BARRIER_CYCLES])
        for name, k in (("accesses", loop.ACCESSES), ("hits", loop.HITS), ("delayed_hits", loop.DELAYED),
                        ("misses", loop.MISSES), ("writebacks", loop.WRITEBACKS), ("bytes_read", loop.BYTES_READ),
                        ("bytes_written", loop.BYTES_WRITTEN), ("mshr_stalls", loop.MSHR_STALLS)):
            getattr(cache, name).value = int(ks[k])
        domain = cache.domain
        cache.mshr_occupancy.resume((int(ks[loop.NM]), int(ks[loop.OCC_MAX]),
                                     int(ks[loop.OCC_AREA]) * domain.period_ps,
                                     domain.phase_ps + int(ks[loop.OCC_SINCE]) * domain.period_ps))
        cache.mshr_busy.set(int(ks[loop.NM]))
        held = {}
        sets, ways = self.tags.shape
        for s, w in zip(*np.nonzero(self.valid)):
            held[int(self.tags[s, w])] = bytearray(self.data[s, w].tobytes())
        cache.hold_lines(held, self._leaving_lines())
        if self.memory is not None:
            ms = self.inner[0]
            self.memory.resume_service(*(int(ms[k]) for k in (inner.M_FREE, inner.M_READ, inner.M_WRITTEN,
                                                                inner.M_BUSY)))

    def _leaving_lines(self) -> dict:
        """The newest write-back of each line on its way to the memory below (line -> its
        bytes): handed to the channel and not acknowledged, in the ideal memory's request
        ring (the memory inside the loop), or queued in the loop; oldest first, so a newer
        one of a line replaces an older."""
        leaving = {line: bytearray(data) for line, (_, data) in self.leaving.items()}
        if self.memory is not None:
            ms, q, q_data = self.inner[0], self.inner[3], self.inner[4]
            for k in range(int(ms[inner.Q_LEN])):
                h = (int(ms[inner.Q_HEAD]) + k) % len(q)
                if q[h, inner.Q_KIND] == loop.KIND_WB:
                    leaving[int(q[h, inner.Q_LINE])] = bytearray(q_data[h].tobytes())
        ks, size = self.ks, len(self.o_leave)
        for k in range(int(ks[loop.O_LEN])):
            h = (int(ks[loop.O_HEAD]) + k) % size
            if self.o_kind[h] == loop.KIND_WB:
                leaving[int(self.o_line[h])] = bytearray(self.o_data[h].tobytes())
        return leaving

    def in_window(self) -> int:
        """References in the core's window."""
        return int(self.cs[loop.ENTERED] - self.cs[loop.RETIRED])
