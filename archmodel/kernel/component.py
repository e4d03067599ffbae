"""Components: the things that tick.

A model is a subclass of :class:`Component` decorated with :func:`model`. Its class body
reads like a datasheet: ``Param`` declarations (validated by attrs), ``In``/``Out`` ports
and statistics; the docstring says what it models, what it leaves out and where its
numbers come from. ``setup()`` builds registers and children; ``tick()`` runs at every
edge of the component's clock while it is awake.

Idle skipping: a component is awake at the start. It calls ``sleep()`` when it has nothing
to do; it wakes when a message arrives on one of its inputs, an output it found not ready
becomes ready (a credit returns and its link is free), or at a time it asked for with
``wake_in``/``sleep_for``.
Messages already waiting when it falls asleep do not wake it.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import numpy as np

from .budget import count_instance
from .errors import ArchError, ModelAssertion, ParameterError
from .params import PYTHON, Param, ParamGroup, Spelling, make_params_class, unit_from_name
from .ports import In, InPort, OutPort, PortDecl
from .register import Register
from .stats import Stat
from .time import ClockDomain
from .vocabulary import did_you_mean

if TYPE_CHECKING:
    from .channel import Channel
    from .simulator import Simulator, _Schedule

_CATALOGUE: dict[str, type[Component]] = {}
_PARTS: dict[str, type[Component]] = {}

MAX_PORT_ARRAY = 1 << 16
"""The most ports one port array may have (a crossbar of 65,536 inputs is already far beyond
any router's radix)."""
# Attributes every component has; a parameter of the same name would shadow them.
_RESERVED = frozenset({
    "name", "parent", "path", "children", "clock", "domain", "sim", "registers", "ports", "stats",
    "add_stat",
    "params", "now", "cycle", "rng", "elapsed_cycles", "elapsed_ps", "tick", "setup", "start",
    "sleep", "wake_at", "wake_in", "sleep_for", "doze_until", "doze_end_ps", "progress", "fail", "register",
    "child", "walk", "add",
    "holding", "waiting_for", "find_child", "check_params", "param_declaration", "param_declarations",
    "port_declarations", "stat_declarations",
})
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def model(cls: type | None = None, *, name: str | None = None, catalogue: bool = True) -> Any:
    """Class decorator: collect a model's parameters, ports and statistics, build its attrs
    ``Params`` class, and list it in the model catalogue (or, with ``catalogue=False``, among
    the :func:`parts`)."""

    def wrap(klass: Any) -> Any:
        params, ports, stats = {}, {}, {}
        for base in reversed(klass.__mro__):
            for key, value in vars(base).items():
                if isinstance(value, Param):
                    params[key] = value
                elif isinstance(value, ParamGroup):
                    for param in value.params:
                        if param.name in vars(base) and vars(base)[param.name] is not value:
                            raise ArchError(f"model '{klass.__name__}': parameter '{param.name}' is declared "
                                            f"and also taken from '{value.source.model_name}'")
                        params[param.name] = param
                elif isinstance(value, PortDecl):
                    ports[key] = value
                elif isinstance(value, Stat):
                    stats[key] = value
        clashes = sorted(set(params) & _RESERVED)
        if clashes:
            raise ArchError(f"model '{klass.__name__}': parameter name '{clashes[0]}' is taken by Component",
                            hint="reserved names are: " + ", ".join(sorted(_RESERVED)))
        for key, param in params.items():
            implied = unit_from_name(key)
            if implied is not None and param.declared_unit not in (None, implied):
                raise ArchError(f"model '{klass.__name__}': parameter '{key}' is declared in "
                                f"{param.declared_unit} but its name says {implied}",
                                hint=f"rename it or declare unit=\"{implied}\"")
        klass._param_decls = params
        klass._required_params = [key for key, param in params.items() if param.required]
        klass._port_decls = ports
        klass._stat_decls = stats
        klass.Params = make_params_class(klass.__name__, list(params.values()))
        klass.model_name = name or klass.__name__
        if catalogue:
            register_model(klass)
        else:
            _PARTS[klass.model_name] = klass
        return klass

    return wrap(cls) if cls is not None else wrap


def register_model(klass: Any) -> None:
    """Make a model visible by name (to ``archmodel list`` and, later, the language)."""
    existing = _CATALOGUE.get(klass.model_name)
    if existing is not None and existing is not klass and existing.__qualname__ != klass.__qualname__:
        raise ArchError(f"two models are named '{klass.model_name}': {existing.__module__} and {klass.__module__}")
    _CATALOGUE[klass.model_name] = klass


def catalogue() -> dict[str, type[Component]]:
    """All registered models by name, sorted."""
    return dict(sorted(_CATALOGUE.items()))


def parts() -> dict[str, type[Component]]:
    """The models made with ``@model(catalogue=False)`` by name, sorted: parts a model or a
    workload builds inside itself (a network's monitor, a workload's report) or a test uses,
    never instanced by name from a ``.arch`` file. ``archmodel show`` prints them among the
    models; ``archmodel list`` documents them apart."""
    return dict(sorted(_PARTS.items()))


def _valid_name(name: str) -> bool:
    return _valid_base(name.split("[", 1)[0])


@functools.lru_cache(maxsize=4096)
def _valid_base(base: str) -> bool:
    # Arrays make many instances of few base names (q[0], q[1], ...): remember the verdicts.
    return bool(_NAME.match(base))


def component_rng(seed: int, path: str) -> np.random.Generator:
    """The random stream of the component at ``path`` in a simulation seeded with ``seed``:
    what ``Component.rng`` returns. A model that steps other components' logic itself (a
    network-level engine) uses it so they draw exactly what they would on their own."""
    digest = hashlib.sha256(path.encode()).digest()
    key = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    return np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=key))


class Component:
    """Base class of every model and structural module.

    ``Component(name, parent=None, clock=None, **params)``: ``clock`` is a ClockDomain;
    without one a component takes its parent's. A component that does not override
    ``tick`` is structural and is never scheduled.
    """

    _param_decls: dict = {}
    _required_params: list = []
    _port_decls: dict = {}
    _stat_decls: dict = {}
    Params = make_params_class("Component", [])
    model_name = "Component"

    # Set when the tree is elaborated (:class:`~.tree.Tree`, then the Simulator); None before.
    domain: ClockDomain
    sim: Simulator
    _sched: _Schedule
    _in_channels: list[Channel]
    _out_channels: list[Channel]
    _wake_edge: int | None
    _declares_sends: bool

    def __init__(self, name: str, parent: "Component | None" = None, *, clock: ClockDomain | None = None,
                 **params: Any):
        if not isinstance(name, str) or not _valid_name(name):
            raise ArchError(f"{name!r} is not a valid component name", hint="use letters, digits and _")
        count_instance(name)
        self.name = name
        self.parent: Component | None = None
        self.children: list[Component] = []
        self._children_by_name: dict[str, Component] = {}
        if parent is not None:
            parent.add(self)
        self.clock = clock
        self.domain = None  # type: ignore[assignment]  # (see the class's annotations)
        self.sim = None  # type: ignore[assignment]
        self._sched = None  # type: ignore[assignment]  # the simulator's schedule of this component's clock domain
        self.registers: list[Register] = []
        self._awake = False
        self.doze_end_ps = 0  # while awake, its ticks before this time may return at once (doze_until)
        self.progress_count = 0  # progress() calls, for the per-part watchdog
        self._rng: np.random.Generator | None = None
        self._set_params(params)
        self.ports: list = []
        for pname, decl in self._port_decls.items():
            setattr(self, pname, self._make_ports(pname, decl))
        self._added_stats: list[Stat] = []
        self.setup()

    # -- construction -------------------------------------------------------------------
    def _set_params(self, given: dict) -> None:
        self.params = self.check_params(given, where=self.path)
        for key in self._param_decls:
            setattr(self, key, getattr(self.params, key))

    @classmethod
    def param_declarations(cls) -> Mapping[str, Param]:
        """This model's parameter declarations by name, in declaration order (read only)."""
        return MappingProxyType(cls._param_decls)

    @classmethod
    def port_declarations(cls) -> Mapping[str, PortDecl]:
        """This model's port declarations by name, in declaration order (read only)."""
        return MappingProxyType(cls._port_decls)

    @classmethod
    def stat_declarations(cls) -> Mapping[str, Stat]:
        """This model's declared statistics by name, in declaration order (read only)."""
        return MappingProxyType(cls._stat_decls)

    @classmethod
    def param_declaration(cls, key: str, where: str | None = None) -> Param:
        """The declaration of parameter ``key``; a ParameterError ``'Fifo' has no parameter
        'dpeth'`` with a did-you-mean hint otherwise (``where``: as in :meth:`check_params`)."""
        decls = cls._param_decls
        try:
            return decls[key]
        except KeyError:
            prefix = f"{where}: " if where else ""
            raise ParameterError(f"{prefix}'{cls.model_name}' has no parameter '{key}'", param=key,
                                 hint=did_you_mean(key, decls) or
                                 (f"parameters are: {', '.join(decls)}" if decls else "it takes no parameters")) from None

    @classmethod
    def check_params(cls, given: Mapping[str, Any], *, where: str | None = None,
                     spelling: Spelling = PYTHON) -> Any:
        """Validate ``given`` (parameter name -> value) against this model's declarations and
        return the ``Params`` record of every value, defaults filled in; the one check of a
        model's parameters, whoever builds it. A ParameterError names the first unknown,
        missing or unacceptable parameter (``err.param``) and hints at its declaration.

        ``where`` is the component's path when one is being built (``top.q: parameter 'depth'
        must be ...``); without it, the message names the model instead (``parameter 'depth'
        of 'Fifo' must be ...``), as the language reports an argument. ``spelling`` writes the
        values given (see :class:`~.params.Spelling`)."""
        decls = cls._param_decls
        if not given.keys() <= decls.keys():
            for key in given:
                cls.param_declaration(key, where)
        missing = [k for k in cls._required_params if k not in given] if cls._required_params else None
        if missing:
            prefix = f"{where}: " if where else ""
            raise ParameterError(f"{prefix}'{cls.model_name}' is missing required parameter '{missing[0]}'",
                                 hint=decls[missing[0]].describe(), param=missing[0])
        for key, value in given.items():
            problem = decls[key].problem(value, spelling)
            if problem:
                subject = f"{where}: parameter '{key}'" if where else f"parameter '{key}' of '{cls.model_name}'"
                # A close name first (did you mean 'frfcfs'?), then the declaration it is for.
                hint = decls[key].describe()
                if problem.hint:
                    hint = f"{problem.hint} ({hint})"
                raise ParameterError(f"{subject} {problem}", hint=hint, param=key)
        return cls.Params(**given)

    def _make_ports(self, name: str, decl: PortDecl) -> Any:
        kind = InPort if isinstance(decl, In) else OutPort
        if decl.count is None:
            port = kind(self, name, decl)
            self.ports.append(port)
            return port
        count = decl.count if isinstance(decl.count, int) else getattr(self, decl.count)
        if count > MAX_PORT_ARRAY:  # each port is an object: a billion would exhaust memory
            raise ParameterError(f"{self.path}: the port array '{name}' would have {count:,} ports, more than "
                                 f"{MAX_PORT_ARRAY:,}", hint=f"lower '{decl.count}'" if isinstance(decl.count, str) else None)
        ports = [kind(self, f"{name}[{i}]", decl) for i in range(count)]
        self.ports.extend(ports)
        return ports

    def add(self, child: "Component") -> "Component":
        """Make ``child`` (built without a parent) a part of this component; returns it."""
        if child.parent is not None:
            raise ArchError(f"{child.path} is already a part of {child.parent.path}")
        if child.name in self._children_by_name:
            raise ArchError(f"{self.path} already has a part named '{child.name}'")
        child.parent = self
        self.children.append(child)
        self._children_by_name[child.name] = child
        return child

    @property
    def path(self) -> str:
        """The hierarchical name, e.g. ``top.cluster0.core3``."""
        if self.parent is None:
            return self.name
        return f"{self.parent.path}.{self.name}"

    def setup(self) -> None:
        """Build registers, internal state and child components (called by ``__init__``)."""

    def start(self) -> None:
        """Called once the simulator is bound, before the first edge."""

    def settle(self) -> None:
        """Called whenever a run returns (its limit reached, quiescent, stopped, or an error
        raised): a model that computes several cycles at once and keeps their state
        elsewhere (a compiled loop's arrays) copies it back here, so statistics and tests
        read it. Most models keep nothing aside and need not override it."""

    def register(self, name: str, init: Any = 0, width: int | None = None) -> Register:
        """Create a register of this component (see :class:`Register`)."""
        reg = Register(self, name, init, width)
        self.registers.append(reg)
        return reg

    @property
    def stats(self) -> list[Stat]:
        """This component's statistics: the declared ones, then any added by ``add_stat``."""
        return [getattr(self, name) for name in self._stat_decls] + self._added_stats

    def add_stat(self, name: str, declaration: Stat) -> Stat:
        """Add a statistic not declared on the class (one per input of a port array, say) and
        return this component's copy of it."""
        declaration.name = name
        stat = declaration.instantiate(self)
        self._added_stats.append(stat)
        return stat

    def take_reported_stats(self, reported: Mapping[str, Stat]) -> None:
        """Replace each of this component's statistics named in ``reported`` by the one given
        there (figures a run elsewhere reported: :class:`~.stats.Reported`), keeping the order."""
        for name, stat in reported.items():
            stat.name = name
            stat.owner = self
            if name in self._stat_decls:
                self.__dict__[name] = stat
            else:
                self._added_stats = [stat if old.name == name else old for old in self._added_stats]

    def find_child(self, name: str) -> "Component | None":
        """The direct child called ``name``, or None."""
        return self._children_by_name.get(name)

    def child(self, name: str) -> "Component":
        """The direct child called ``name``."""
        try:
            return self._children_by_name[name]
        except KeyError:
            raise ArchError(f"{self.path} has no part named '{name}'",
                            hint=did_you_mean(name, self._children_by_name)) from None

    def walk(self) -> Iterator["Component"]:
        """This component and all its descendants, depth first, in creation order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    # -- behaviour ----------------------------------------------------------------------
    def tick(self) -> None:
        """One clock edge of behaviour. Override in a model."""

    def sleep(self) -> None:
        """Stop ticking until a message arrives, a credit returns or a requested time comes."""
        if self._awake:
            self._awake = False
            self.doze_end_ps = 0
            self._sched.slept = True
            self.sim._fell_asleep(self)

    def doze_until(self, time_ps: int) -> None:
        """Stay awake, with nothing to do before ``time_ps`` unless something comes: the
        kernel still ticks the component at the edges where another component of its clock
        domain ticks, and it returns at once from a tick before :attr:`doze_end_ps` (one
        comparison, where its full look at its inputs may cost far more); the edges where
        every awake component of the domain dozes are skipped. The kernel brings
        :attr:`doze_end_ps` forward to a message's arrival on one of its inputs (one its
        port lets wake it), to the next edge when a credit returns to a port it was refused
        on, and to a wake-up it asked for; the edges before :attr:`doze_end_ps` since the
        doze began were dozed through. Cheaper than :meth:`sleep` with a wake-up for a
        component awake most edges: it keeps its place in the tick order, and nothing is
        worked out as it dozes off. Messages already on their way do not end the doze: it
        says until when it can wait for them."""
        if self._awake:
            self.doze_end_ps = time_ps

    def wake_at(self, time_ps: int) -> None:
        """Make sure this component ticks at its first edge at or after ``time_ps``."""
        self.sim.wake_at(self, time_ps)

    def wake_for_upkeep_at(self, time_ps: int) -> None:
        """Like :meth:`wake_at`, for upkeep only (a refresh with nothing outstanding): should
        nothing else be left to happen in the system, the run ends quiescent rather than
        ticking this component for ever. See :meth:`Simulator.wake_for_upkeep_at`."""
        self.sim.wake_for_upkeep_at(self, time_ps)

    def wake_in(self, cycles: int) -> None:
        """Make sure this component ticks ``cycles`` edges from now (``cycles`` >= 1)."""
        if cycles < 1:
            raise ModelAssertion(f"{self.path}: wake_in({cycles}) must look at least one cycle ahead")
        self.sim._wake_later(self, self.sim.now + cycles * self.domain.period_ps)

    def sleep_for(self, cycles: int) -> None:
        """Sleep now and wake ``cycles`` edges later (or earlier, on a message or credit)."""
        self.sleep()
        self.wake_in(cycles)

    def earliest_send_ps(self, port: OutPort) -> int | None:
        """A lower bound on the time (ps) this component next sends a message on its output
        ``port`` from the state it holds now, with no new input; None: never without new
        input. The kernel's lookahead (:meth:`Simulator.undisturbed_until_ps`) asks it of
        every sender. By default, its next tick (:meth:`Simulator.next_tick_ps`). A model
        that knows better declares a later bound (a memory holding no request cannot
        answer); the bound must never be later than the truth, or a model computing ahead
        would miss the message."""
        return self.sim.next_tick_ps(self)

    def least_message_bits(self, port: OutPort) -> int:
        """A lower bound on the size in bits of the next message this component sends on its
        output ``port`` from the state it holds now (the messages :meth:`earliest_send_ps`
        counts). On a channel with a width a message holds the link for its beats and arrives
        after its last one, so the lookahead adds them. 0 by default: one beat."""
        return 0

    def earliest_take_ps(self, port: InPort) -> int:
        """A lower bound on the time this component next takes a message from its input
        ``port`` (taking it returns the sender a credit: :meth:`OutPort.unblocks_from_ps`), from
        the state it holds now. By default now: a component may take at any edge. A model
        that knows it cannot take before some edge (a memory that has already scheduled the
        cycles before it) declares it; the bound must never be later than the truth, or a
        sender computing ahead would miss its credit."""
        return self.sim.now

    def bounds_version(self) -> int | None:
        """A count that grows whenever state that this component's :meth:`earliest_send_ps`
        (and any per-client bound it offers) reads changes, whoever changed it (its own tick,
        a message arriving on an input, a restore), and never decreases; None, the default:
        not kept. The lookahead asks the same bounds many times per time point (every
        cluster of a mesh, at one edge), so a caller may keep them, keyed on this: a kept
        bound is then used only while the state it was worked out from holds, and every
        answer is the one worked out from scratch. Without a version a caller keeps nothing
        across the time point."""
        return None

    bounds_inputs_in_flight = False
    """True when :meth:`earliest_send_ps` already counts the messages on their way to (or
    waiting at) this component's inputs, so the lookahead adds no reaction for them (a
    memory knows that a request queues behind its client's earlier ones). Messages that
    others send later still count through :meth:`reaction_ps`."""

    sends_hold_through_credits = False
    """True when :meth:`earliest_send_ps` holds on every output whatever credits return, but
    for the output whose credit it is: a credit freed on one channel lets this component send
    sooner there only (a crossbar whose queues per output are independent), so the lookahead
    wakes nothing else of it. False: a returning credit may let it send anywhere."""

    answers_in_order_per_client = False
    """True when this component answers the requests of each client (each ``source``) in
    the order it takes them: one response per request (a write's acknowledgement too, even
    a posted one), and never a response to a client before the response to an earlier
    request of that client. A client whose requests go to it on one channel and whose
    answers come back from it on one (channels deliver in the order they were sent) then
    knows that the answer to a request it sends while an older one is unanswered arrives
    no sooner than the older one's: a model computing ahead, whose horizon from the
    lookahead already bounds the older answer, need not cut its batch for the newer one.
    False, the default: no such promise (a cache answering hits under misses, a network
    whose paths differ, may let a younger request's answer overtake an older one's)."""

    def reaction_ps(self, inp: InPort, out: OutPort) -> int | None:
        """A lower bound on the time from a message arriving on input port ``inp`` to a
        message on output port ``out`` that it causes (0 by default: the component may
        answer at the edge the message arrives). The lookahead adds it after each arrival;
        a memory declares its minimum access time. None: nothing on ``inp`` ever causes a
        message on ``out`` that :meth:`earliest_send_ps` does not already count (a memory
        whose channels answer only it, and whose bound follows their state)."""
        return 0

    def least_reaction_ps(self, inp: InPort, out: OutPort) -> int | None:
        """The least :meth:`reaction_ps` from ``inp`` to ``out`` can ever be, whatever this
        component holds (None: it is None always). The lookahead reads it once, from the
        wiring, to skip what cannot reach the asking model in time; 0, the default, is always
        safe. A model whose reactions follow from its parameters alone returns them."""
        return 0

    def reactions(self, inp: InPort) -> list:
        """``(output channel, reaction_ps)`` for every output on which a message arriving on
        ``inp`` may cause one, as :meth:`reaction_ps` says (outputs where it says None are
        left out). The lookahead walks these after each arrival; a model with many outputs
        of which few can react (a network's memory ports) lists those directly instead of
        being asked about each."""
        found = []
        for channel in self._out_channels:
            reaction = self.reaction_ps(inp, channel.src)
            if reaction is not None:
                found.append((channel, reaction))
        return found

    def holding(self) -> str | None:
        """Work this component holds inside (flits in its buffers, requests in its queues) that
        it cannot finish without others moving, described in a few words (``"3 flits"``), or
        None. The deadlock watchdog counts it as pending work and names it in its report;
        override it in models that take messages off their channels into internal buffers."""
        return None

    def waiting_for(self) -> list["Component"]:
        """The components this one waits on while it holds work (for the deadlock report's
        wait-for graph); override together with ``holding``."""
        return []

    def progress(self) -> None:
        """Tell the deadlock watchdog this component (and every part inside it) did useful
        work without a transfer. Report it only when state changed: the per-part watchdog
        takes a part that holds work and reports none for a whole window as stuck, even
        while the rest of the system moves (a core spinning on a poll that cannot succeed
        changes nothing)."""
        self.sim.transfers += 1
        self.progress_count += 1

    def fail(self, message: str) -> None:
        """Stop the simulation: this model found an impossible state."""
        raise ModelAssertion(f"{self.path} at {self.sim.now} ps: {message}")

    @property
    def now(self) -> int:
        """The current simulated time in ps."""
        return self.sim.now

    @property
    def cycle(self) -> int:
        """The index of the current edge of this component's clock."""
        return self.domain.cycle_of(self.sim.now)

    @property
    def elapsed_cycles(self) -> int:
        """Edges of this component's clock from time 0 up to and including now."""
        return self.domain.cycle_of(self.sim.now) + 1

    @property
    def elapsed_ps(self) -> int:
        """Simulated time covered so far in this component's clock, in ps."""
        return self.elapsed_cycles * self.domain.period_ps

    @property
    def rng(self) -> np.random.Generator:
        """This component's own random stream, seeded from the global seed and its path."""
        rng = self._rng
        if rng is None:
            rng = self._rng = component_rng(self.sim.seed, self.path)
        return rng

    @classmethod
    def documentation(cls) -> str:
        """The catalogue entry: docstring, parameters, ports and statistics."""
        doc = inspect.cleandoc(cls.__doc__ or "")
        lines = [f"{cls.model_name}  ({cls.__module__})", ""]
        lines += ["  " + line if line.strip() else "" for line in doc.splitlines()]
        for title, decls in (("parameters", cls.param_declarations()), ("ports", cls.port_declarations()),
                             ("statistics", cls.stat_declarations())):
            lines += ["", f"{title}:"]
            for decl in decls.values():
                lines.append(f"  {decl.describe()}")
                choices = getattr(decl, "choices", None)  # a parameter of a closed vocabulary
                if choices:
                    lines.append("      one of: " + ", ".join(str(c) for c in choices))
            if not decls:
                lines.append("  (none)")
        return "\n".join(lines)

    @classmethod
    def summary_line(cls) -> str:
        """The docstring's first paragraph on one line (``archmodel list`` prints it)."""
        doc = inspect.cleandoc(cls.__doc__ or "")
        return " ".join(doc.split("\n\n")[0].split())

    def __repr__(self) -> str:
        return f"<{self.model_name} {self.path}>"
