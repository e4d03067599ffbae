"""A set-associative, write-back, write-allocate, non-blocking cache that holds its data and
sits in front of any memory (a DRAM controller, an interleaved memory, another cache).
"""

from __future__ import annotations

from collections import OrderedDict, deque

from archmodel.kernel import (Component, Counter, Distribution, Formula, In, Level, Out, Param, ParameterError,
                              at_least, model)

from ..messages import MemRequest, MemResponse
from .cache_array import POLICIES, CacheArray, MissClassifier
from .response_order import split
from .splitting import REQUESTS, RESPONSES


RECENT_MISSES = 32
"""Demand misses of each port the stream prefetcher remembers to spot a miss to the next line
(streams of as many arrays at once can be followed)."""


def _power_of_two(value: int) -> str | None:
    return None if value >= 1 and value & (value - 1) == 0 else "must be a power of two"


class _Job:
    """One request taken on a port: its line pieces still to finish, the cycle the last one
    finishes, and its read data."""

    __slots__ = ("message", "left", "done", "data")

    def __init__(self, message: MemRequest, pieces: int):
        self.message = message
        self.left = pieces
        self.done = 0
        self.data = None if message.is_write else bytearray(message.size_bytes)

    def finish(self, cycle: int) -> None:
        self.left -= 1
        if cycle > self.done:
            self.done = cycle

    def response(self) -> MemResponse:
        m = self.message
        return MemResponse(tag=m.tag, data=None if m.is_write else bytes(self.data), source=m.source,
                           created_ps=m.created_ps)


class _Target:
    """A piece of a request waiting in an MSHR for its line: where it lies in the line and in
    the request."""

    __slots__ = ("job", "inside", "size", "at")

    def __init__(self, job: _Job, inside: int, size: int, at: int):
        self.job, self.inside, self.size, self.at = job, inside, size, at


@model
class Cache(Component):
    """A set-associative cache of ``size_bytes`` in lines of ``line_bytes``, ``ways`` per set,
    write-back and write-allocate, in front of the memory on ``mem_req``/``mem_resp``.

    Requests (any size and alignment; a request is cut into one piece per line it touches)
    come on ``req[i]`` and are answered on ``resp[i]`` in request order per port. Each cycle
    a port accesses one piece, and each of ``banks`` banks (lines interleaved over them)
    serves one access: two ports reaching one bank in a cycle is a bank conflict and one
    waits. The tag lookup takes ``hit_latency_cycles``; a hit answers then. A miss takes an
    MSHR (miss status holding register), picks its victim at once (a dirty one is written
    back whole), and sends a read of the line ``hit_latency_cycles`` after the access; later
    accesses to the line while its fill is on the way wait in that MSHR (delayed hits, up to
    ``mshr_targets``) and the cache keeps serving hits and other misses meanwhile, with at
    most ``mshrs`` lines outstanding. The fill answers its waiting pieces the next cycle.
    With ``prefetch_degree`` a stream prefetcher (Jouppi's stream buffers, ISCA 1990)
    watches each port's demand misses: a third miss of a port in a row of consecutive lines
    fills a stream buffer with the next ``prefetch_degree`` lines (never outside the memory
    below); a later miss that finds its line there takes it into the cache (at once, or when
    its fetch arrives) and the stream fetches one line further. Each port has its own history
    of misses and ``streams`` streams' room, as each core's L2 streamer watches only its own
    core's requests and follows 32 streams of its own (Intel); one history shared by every
    port let one core's misses push another's stream out before it was seen. The buffers
    hold ``streams`` x ``prefetch_degree`` x ``clients`` lines, one pool, beside the cache
    and its MSHRs, so prefetches neither evict cached lines nor take MSHRs; the oldest line
    leaves a full buffer. Random misses start no stream. A fetch's answer
    fills only the entry (or the miss that took it) that sent it, never a later entry of the
    same line, so answers that overtake each other below cannot bring back old bytes.
    With ``in_order`` false an answer leaves as soon as it is ready (hits under misses).
    A miss stalls its port (in order) when every MSHR is busy, when its victim still waits
    for its own fill, or when ``write_buffer`` write-backs are unacknowledged.

    Tags and replacement state change at the access, in the order the accesses happen, so
    the hit and miss counts of a stream played one port in order are those of an untimed
    cache on the same stream (the cross-check against pycachesim relies on it): ``hits``
    plus ``delayed_hits`` are its hits. ``policy`` is ``lru``, ``srrip`` or ``random``
    (see :mod:`.cache_array`). With ``classify_misses`` misses are split into compulsory,
    capacity and conflict (Hill's three Cs, against a fully associative LRU shadow).

    ``backdoor_read`` reads the memory below and overlays the write-backs on their way to it
    (queued, in the link, or taken and not yet acknowledged) and then the lines held here,
    so a check sees data still dirty in the cache or still travelling down; ``backdoor_write``
    writes below and updates a held copy and the bytes of a write-back of the line still on
    its way (the request carries the buffer the cache keeps for it until the memory
    acknowledges it), so that write-back cannot later put older bytes over it.

    Leaves out: coherence between caches (each cache is private or shared by its ports),
    write-through and no-write-allocate, prefetching into the cache itself (the stream
    buffers sit beside it), the tag/data array split (one latency for both), and any
    difference between the latency of a read and a write hit.
    """

    size_bytes = Param(int, 32 * 1024, "capacity", unit="bytes", check=at_least(1))
    ways = Param(int, 8, "lines per set (associativity)", check=at_least(1))
    line_bytes = Param(int, 64, "bytes per line (a power of two)", unit="bytes", check=_power_of_two)
    hit_latency_cycles = Param(int, 4, "cycles from an access to its answer on a hit (and to the miss "
                               "request leaving on a miss)", unit="cycles", check=at_least(1))
    banks = Param(int, 1, "banks, lines interleaved over them; each serves one access per cycle",
                  check=at_least(1))
    clients = Param(int, 1, "request/response port pairs (one per client of a shared cache)", check=at_least(1))
    policy = Param(str, "lru", "replacement policy", check=POLICIES.check)
    mshrs = Param(int, 16, "lines that may miss at once (outstanding fills)", check=at_least(1))
    mshr_targets = Param(int, 8, "accesses that may wait for one outstanding line", check=at_least(1))
    write_buffer = Param(int, 8, "write-backs that may be unacknowledged at once", check=at_least(1))
    queue = Param(int, 16, "requests per port taken and not yet answered", unit="requests", check=at_least(1))
    classify_misses = Param(bool, False, "split misses into compulsory, capacity and conflict")
    in_order = Param(bool, True, "answer each port in request order (false: an answer leaves as soon as it is "
                     "ready, hits under misses; for clients that match answers by tag)")
    prefetch_degree = Param(int, 0, "stream prefetcher: lines each stream buffer fetches ahead (0: none)",
                            check=at_least(0))
    streams = Param(int, 32, "stream buffers per port (sequential streams followed at once)", check=at_least(1))
    write_hits_touch = Param(bool, True, "a write hit updates the replacement state (false: it only marks the "
                             "line dirty, as pycachesim does)")

    req = In(REQUESTS, count="clients")
    resp = Out(RESPONSES, count="clients")
    mem_req = Out("line fills (reads) and write-backs to the memory below")
    mem_resp = In("fill data and write-back acknowledgements from the memory below", pair="mem_req")

    accesses = Counter("accesses", "line accesses (a request touching two lines is two)")
    hits = Counter("accesses", "accesses that found their line held")
    delayed_hits = Counter("accesses", "accesses whose line was already on its way (they wait in its MSHR)")
    misses = Counter("accesses", "accesses that allocated a line and sent a fill")
    compulsory_misses = Counter("accesses", "misses to lines never referenced before (classify_misses)")
    capacity_misses = Counter("accesses", "misses a fully associative LRU cache of the same size also has "
                              "(classify_misses)")
    conflict_misses = Counter("accesses", "misses a fully associative LRU cache of the same size would not have "
                              "(classify_misses)")
    prefetches = Counter("lines", "lines the stream prefetcher fetched into its buffers")
    useful_prefetches = Counter("lines", "misses served from a stream buffer (the line moves into the cache)")
    writebacks = Counter("lines", "dirty lines written back on eviction")
    bytes_read = Counter("bytes", "bytes fetched from the memory below")
    bytes_written = Counter("bytes", "bytes written back to the memory below")
    mshr_occupancy = Level("MSHRs", "MSHRs busy (lines waiting for their fill)")
    mshr_stalls = Counter("attempts", "access attempts that waited for a free MSHR (or MSHR target), their "
                          "victim's fill or the write buffer (a waiting port retries when memory answers)")
    bank_conflicts = Counter("cycles", "port cycles an access waited for its bank")
    miss_latency = Distribution("cycles", "cycles from a miss's request leaving to its fill arriving")
    miss_rate = Formula("%", "misses per access", lambda c: 100.0 * c.misses.value / c.accesses.value)

    def setup(self) -> None:
        lines = self.size_bytes // self.line_bytes
        if lines * self.line_bytes != self.size_bytes or lines % self.ways:
            raise ParameterError(f"{self.path}: size_bytes {self.size_bytes} is not a whole number of sets of "
                                 f"{self.ways} lines of {self.line_bytes} bytes",
                                 hint="size_bytes = sets x ways x line_bytes, e.g. 32 KiB = 64 sets x 8 ways x 64 B")
        self.sets = lines // self.ways
        self._shift = self.line_bytes.bit_length() - 1
        self._array = None  # built in start(): the random policy draws from this cache's stream
        self._classifier = MissClassifier(lines) if self.classify_misses else None
        self._lines: dict[int, bytearray] = {}  # line -> its bytes (valid once its fill arrived)
        self._mshr: dict[int, list] = {}  # line -> waiting targets
        self._sent: dict[int, tuple] = {}  # tag -> ("fill" | "stream", line, cycle sent) | ("wb", line)
        # line -> (tag, bytes) of its newest write-back not yet acknowledged: the memory below
        # may not hold those bytes yet (the request waits here or travels a long link), so
        # the functional path overlays them. Its acknowledgement means the memory took it
        # (and every older write-back of the line, sent before it); an older one's does not.
        self._leaving: dict[int, tuple[int, bytearray]] = {}
        self._out: deque = deque()  # (cycle it may leave, MemRequest), fills and write-backs in order
        self._unacked = 0  # write-backs queued or sent and not acknowledged
        self._next_tag = 0
        self._jobs = [deque() for _ in range(self.clients)]  # per port: taken, unanswered, in order
        self._piece = [None] * self.clients  # per port: (job, pieces, next index) being accessed
        self._first = 0  # the port that goes first this cycle (round robin)
        self._buffered: OrderedDict = OrderedDict()  # stream buffer lines, oldest first -> data (None: on its way)
        # Stream fetches are known by their tag, not their line: a line dropped from a full buffer
        # (its fetch still on its way) may be fetched again, written and written back before the
        # old answer comes, so an answer may fill only the entry or claim that sent it. An entry
        # itself never goes stale: a buffered line is not in the cache (a miss takes it out), so
        # it is neither written nor written back while buffered, and its fetch left after any
        # earlier write-back of the line (requests leave in order through _out).
        self._filling: dict[int, int] = {}  # buffered line on its way -> the tag of the fetch that fills it
        self._claimed: dict[int, int] = {}  # line a miss took while its fetch was on its way -> that fetch's tag
        # per port, the last lines it demand-missed, for stream detection
        self._recent_misses = [OrderedDict() for _ in range(self.clients)]
        self.mshr_busy = self.register("mshr_busy", 0, width=max(1, self.mshrs.bit_length()))
        self.driver = None  # a compiled form that computes this cache with its client (drive_with)

    def start(self) -> None:
        self._array = CacheArray(self.sets, self.ways, self.policy, self.rng, self.write_hits_touch)
        limits = self.memory_range() if self.prefetch_degree else None
        # lines the prefetcher may fetch: inside the memory below (a fetch outside is an error there)
        self._lines_below = (limits[0] >> self._shift, (limits[1] - 1) >> self._shift) if limits else None

    def memory_range(self) -> tuple[int, int] | None:
        """(first address, end) of the memory below, through any caches; None when unknown."""
        below = self.below()
        if isinstance(below, Cache):
            return below.memory_range()
        base, size = getattr(below, "base_address", None), getattr(below, "size_bytes", None)
        return (base, base + size) if base is not None and size is not None else None

    def drive_with(self, driver) -> None:
        """Let ``driver`` (a compiled form of this cache and its one client, such as a
        reference core's) run each tick of this cache: ``driver.tick()`` takes what arrives
        on ``mem_resp`` and sends on ``mem_req``; ``driver.publish()`` writes its counters and
        the lines it holds back here (:meth:`hold_lines`) when a run settles."""
        self.driver = driver

    def hold_lines(self, lines: dict, leaving: dict | None = None) -> None:
        """The lines held now (line number -> its bytes) and the newest write-back of each
        line still on its way to the memory below (line number -> its bytes), from a
        compiled form, so that :meth:`backdoor_read` sees data still dirty in the cache or
        still travelling down."""
        self._lines = lines
        self._leaving = {line: (-1, data) for line, data in (leaving or {}).items()}

    def settle(self) -> None:
        """A run returned: a compiled form publishes its state here."""
        if self.driver is not None:
            self.driver.publish()

    # -- the functional side ------------------------------------------------------------
    def below(self):
        """The component answering on ``mem_req`` (None when unconnected)."""
        channel = self.mem_req.channel
        return channel.dst_owner if channel is not None else None

    def backdoor_read(self, address: int, size: int) -> bytes:
        """The bytes at ``address`` as a client would read them now: the memory below, with
        the lines held here laid over it."""
        data = bytearray(self.below().backdoor_read(address, size))
        for at, n in split(address, size, self.line_bytes):
            line = at >> self._shift
            held = self._lines.get(line)
            if held is None and line in self._leaving:
                held = self._leaving[line][1]
            if held is not None:
                inside = at & (self.line_bytes - 1)
                data[at - address:at - address + n] = held[inside:inside + n]
        return bytes(data)

    def backdoor_write(self, address: int, data: bytes) -> None:
        """Place bytes without simulated time: in the memory below and in any line held here."""
        self.below().backdoor_write(address, data)
        for at, n in split(address, len(data), self.line_bytes):
            line = at >> self._shift
            inside = at & (self.line_bytes - 1)
            for held in (self._lines.get(line), self._leaving.get(line, (None, None))[1]):
                if held is not None:
                    held[inside:inside + n] = data[at - address:at - address + n]

    # -- the clock edge -----------------------------------------------------------------
    def tick(self) -> None:
        if self.driver is not None:
            self.driver.tick()
            return
        c = self.cycle
        if self.mem_resp.valid:
            self._answer(c, self.mem_resp.recv())
        again = False  # a port can access again next cycle without anything arriving
        banks_used = set()
        for k in range(self.clients):
            p = (self._first + k) % self.clients
            current = self._piece[p]
            if current is None:
                port = self.req[p]
                if not port.valid or len(self._jobs[p]) >= self.queue:
                    continue
                current = self._piece[p] = self._take(p, port.recv())
            outcome = self._access(c, current, banks_used, p)
            if outcome == "done":
                current[2] += 1
                if current[2] == len(current[1]):
                    self._piece[p] = None
            if outcome != "stall":
                again = True  # a stalled miss waits for a fill or an acknowledgement, which wakes us
        self._first = (self._first + 1) % self.clients
        for p in range(self.clients):
            jobs = self._jobs[p]
            if not jobs:
                continue
            if self.in_order:
                if not jobs[0].left and jobs[0].done <= c and self.resp[p].try_send(jobs[0].response()):
                    jobs.popleft()
                continue
            for k, job in enumerate(jobs):
                if not job.left and job.done <= c:
                    if self.resp[p].try_send(job.response()):
                        del jobs[k]
                    break
        out = self._out
        if out and out[0][0] <= c and self.mem_req.try_send(out[0][1]):
            out.popleft()
        if not again:
            self._rest(c)

    def _take(self, p: int, message: MemRequest) -> list:
        """Take a request from port ``p``: its pieces, one per line, to access in order."""
        if message.size_bytes < 1 or (message.is_write and len(message.data or b"") != message.size_bytes):
            kind = "write" if message.is_write else "read"
            self.fail(f"req[{p}]: a {kind} of {message.size_bytes} bytes at {message.address:#x} carrying "
                      f"{len(message.data or b'')} bytes of data")
        pieces = split(message.address, message.size_bytes, self.line_bytes)
        job = _Job(message, len(pieces))
        self._jobs[p].append(job)
        return [job, pieces, 0]

    def _rest(self, c: int) -> None:
        """Sleep until the next thing this cache must do by itself (an answer or a request
        falling due); arrivals, fills and returning credits wake it otherwise. Messages that
        already wait do not wake a sleeper, so with one waiting it stays awake."""
        if len(self.mem_resp):
            return
        for p in range(self.clients):
            if self._piece[p] is None and len(self.req[p]) and len(self._jobs[p]) < self.queue:
                return
        due = []
        for jobs in self._jobs:
            if self.in_order:
                if jobs and not jobs[0].left:
                    due.append(jobs[0].done)
            else:
                due.extend(job.done for job in jobs if not job.left)
        if self._out:
            due.append(self._out[0][0])
        if due:
            self.sleep_for(max(min(due), c + 1) - c)
        else:
            self.sleep()

    def _access(self, c: int, current: list, banks_used: set, port: int) -> str:
        """Access the next piece of ``current``: 'done' (hit, delayed hit or miss sent),
        'bank' (its bank served another port this cycle) or 'stall' (it waits for memory)."""
        job, pieces, index = current
        address, size = pieces[index]
        line = address >> self._shift
        bank = line % self.banks
        if bank in banks_used:
            self.bank_conflicts.value += 1
            return "bank"
        array = self._array
        inside = address & (self.line_bytes - 1)
        at = address - job.message.address
        write = job.message.is_write
        waiting = self._mshr.get(line)
        if waiting is not None:
            if len(waiting) >= self.mshr_targets:
                self.mshr_stalls.value += 1
                return "stall"
            banks_used.add(bank)
            self._count(line, True)
            self.delayed_hits.value += 1
            if self.write_hits_touch or not write:
                array.touch(line)
            if write:
                array.dirty.add(line)
            waiting.append(_Target(job, inside, size, at))
            return "done"
        held = self._lines.get(line)
        if held is not None:
            banks_used.add(bank)
            self._count(line, True)
            self.hits.value += 1
            if self.write_hits_touch or not write:
                array.touch(line)
            if write:
                held[inside:inside + size] = job.message.data[at:at + size]
                array.dirty.add(line)
            else:
                job.data[at:at + size] = held[inside:inside + size]
            job.finish(c + self.hit_latency_cycles)
            return "done"
        buffered = line in self._buffered
        if (len(self._mshr) >= self.mshrs and not (buffered and self._buffered[line] is not None)) \
                or not self._make_room(c, line, write):
            self.mshr_stalls.value += 1
            return "stall"
        banks_used.add(bank)
        self._count(line, False)
        self.misses.value += 1
        if buffered:
            self._from_stream(c, line, _Target(job, inside, size, at))
        else:
            leave = c + self.hit_latency_cycles
            self._mshr[line] = [_Target(job, inside, size, at)]
            self._send(leave, MemRequest(address=line << self._shift, size_bytes=self.line_bytes), ("fill", line, leave))
            self.bytes_read.value += self.line_bytes
            self._occupancy()
            if self.prefetch_degree:
                self._stream_check(c, line, port)
        return "done"

    def _from_stream(self, c: int, line: int, target: _Target) -> None:
        """A miss found its line in a stream buffer: the line moves into the cache (now, or
        when its fetch arrives) and the stream fetches one line further."""
        data = self._buffered.pop(line)
        self.useful_prefetches.value += 1
        if data is None:
            self._mshr[line] = [target]
            self._claimed[line] = self._filling.pop(line)
            self._occupancy()
        else:
            self._lines[line] = data
            self._serve(line, [target], c + self.hit_latency_cycles)
        self._prefetch(c, line + self.prefetch_degree)

    def _stream_check(self, c: int, line: int, port: int) -> None:
        """A demand miss to the line after two recent misses to the two lines before it starts
        a stream: fetch the next ``prefetch_degree`` lines. Random misses start nothing."""
        recent = self._recent_misses[port]
        if line - 1 in recent and line - 2 in recent:
            for ahead in range(1, self.prefetch_degree + 1):
                if not self._prefetch(c, line + ahead):
                    break
        recent[line] = None
        recent.move_to_end(line)
        if len(recent) > RECENT_MISSES:
            recent.popitem(last=False)

    def _make_room(self, c: int, line: int, write: bool) -> bool:
        """Give ``line`` a way, evicting a victim (written back if dirty); False when the
        victim still waits for its fill or the write buffer is full."""
        array = self._array
        victim = array.victim(line)
        if victim is not None and (victim in self._mshr
                                   or (victim in array.dirty and self._unacked >= self.write_buffer)):
            return False
        if victim is not None:
            victim_data = self._lines.pop(victim)
            if array.evict(victim):
                # The request carries the line's own buffer, kept in _leaving until the
                # acknowledgement: the functional path reads it and backdoor_write updates it.
                tag = self._send(c + self.hit_latency_cycles,
                                 MemRequest(address=victim << self._shift, size_bytes=self.line_bytes, is_write=True,
                                            data=victim_data), ("wb", victim))
                self._leaving[victim] = (tag, victim_data)
                self._unacked += 1
                self.writebacks.value += 1
                self.bytes_written.value += self.line_bytes
        array.install(line, dirty=write)
        return True

    def _prefetch(self, c: int, line: int) -> bool:
        """Fetch ``line`` into a stream buffer unless the cache or a buffer has it; False when
        it lies outside the memory below (the stream ends)."""
        if self._lines_below is None or not self._lines_below[0] <= line <= self._lines_below[1]:
            return False
        if line in self._buffered or self._array.contains(line):
            return True
        if len(self._buffered) >= self.streams * self.prefetch_degree * self.clients:
            oldest, _ = self._buffered.popitem(last=False)
            self._filling.pop(oldest, None)  # its fetch, if still on its way, is dropped on arrival
        self._buffered[line] = None
        leave = c + self.hit_latency_cycles
        self._filling[line] = self._send(leave, MemRequest(address=line << self._shift, size_bytes=self.line_bytes),
                                         ("stream", line, leave))
        self.prefetches.value += 1
        self.bytes_read.value += self.line_bytes
        return True

    def _count(self, line: int, hit: bool) -> None:
        self.accesses.value += 1
        if self._classifier is not None:
            kind = self._classifier.classify(line, hit)
            if kind is not None:
                getattr(self, f"{kind}_misses").value += 1

    def _send(self, cycle: int, request: MemRequest, what: tuple) -> int:
        """Queue ``request`` to leave at ``cycle`` under a new tag, remembered with ``what``;
        returns the tag."""
        tag = self._next_tag
        self._next_tag += 1
        self._sent[tag] = what
        self._out.append((cycle, MemRequest(address=request.address, size_bytes=request.size_bytes,
                                            is_write=request.is_write, data=request.data, source=self.path, tag=tag,
                                            created_ps=self.sim.now)))
        return tag

    def _answer(self, c: int, answer: MemResponse) -> None:
        what = self._sent.pop(answer.tag)
        if what[0] == "wb":
            self._unacked -= 1
            leaving = self._leaving.get(what[1])
            if leaving is not None and leaving[0] == answer.tag:
                del self._leaving[what[1]]  # the memory holds these bytes (or newer) now
            return
        kind, line, sent = what
        if kind == "stream":
            if self._claimed.get(line) != answer.tag:
                if self._filling.get(line) == answer.tag:  # its entry was not dropped meanwhile
                    del self._filling[line]
                    self._buffered[line] = bytearray(answer.data)
                return  # a dropped fetch: a newer one (or a demand fill) may ask for this line
            del self._claimed[line]
        self.miss_latency.sample(c - sent)
        self._lines[line] = bytearray(answer.data)
        self._serve(line, self._mshr.pop(line), c + 1)
        self._occupancy()

    def _serve(self, line: int, targets: list, cycle: int) -> None:
        """The accesses waiting for ``line``, in order, now that its bytes are here; each
        answered at ``cycle``."""
        held = self._lines[line]
        for target in targets:
            job, inside, size, at = target.job, target.inside, target.size, target.at
            if job.message.is_write:
                held[inside:inside + size] = job.message.data[at:at + size]
            else:
                job.data[at:at + size] = held[inside:inside + size]
            job.finish(cycle)

    def _occupancy(self) -> None:
        self.mshr_occupancy.set(len(self._mshr))
        self.mshr_busy.set(len(self._mshr))

    def holding(self) -> str | None:
        """Requests taken and not answered, and lines waiting for their fill."""
        if self.driver is not None:
            return None  # its client, whose compiled form this is, says what it holds
        jobs = sum(len(j) for j in self._jobs)
        return f"{jobs} requests, {len(self._mshr)} lines on their way" if jobs or self._mshr else None

    def waiting_for(self) -> list:
        below = self.below()
        return [below] if below is not None and self._mshr else []
