"""Closed vocabularies: the names a parameter may take, and the hint for a misspelt one.

A :class:`Registry` maps each name of a vocabulary (routing functions, allocators, DRAM
presets, workloads, engines, traffic patterns, schedulers, page policies ...) to what it
stands for: the object a model builds from it, or a one-line description where the model
itself carries the behaviour. The same registry gives the ``Param``
check (so ``archmodel check`` rejects a misspelt routing before a run starts), the lookup a
model makes when it builds (with the same hint), and the list ``archmodel list`` can print;
a plugin that registers a name is accepted everywhere at once.
"""

from __future__ import annotations

import difflib
from typing import Any, Callable, Generic, Iterable, Iterator, Mapping, TypeVar

from .errors import ArchError

V = TypeVar("V")


def closest(name: str, options: Iterable[str]) -> str | None:
    """The option closest to a misspelt ``name`` (one differing only in case first), or None."""
    options = [o for o in options if isinstance(o, str)]
    same_letters = [option for option in options if option.lower() == name.lower()]
    close = same_letters or difflib.get_close_matches(name, options, n=1)
    return close[0] if close else None


def did_you_mean(name: str, options: Iterable[str]) -> str | None:
    """A hint naming the closest of ``options`` to a misspelt ``name``, or None."""
    match = closest(name, options)
    return f"did you mean '{match}'?" if match is not None else None


def _plural(noun: str) -> str:
    """The English plural of a vocabulary's noun: ``routing`` -> ``routings``, ``topology``
    -> ``topologies``, ``injection process`` -> ``injection processes``."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


class Problem(str):
    """What a ``Param`` check says is wrong (``must be one of 'a', 'b'``), with an optional
    ``hint`` for the error's hint line (``did you mean 'a'?``). It is a ``str``, so a check
    may return either."""

    hint: str | None

    def __new__(cls, text: str, hint: str | None = None) -> "Problem":
        problem = super().__new__(cls, text)
        problem.hint = hint
        return problem


def choice_problem(value: Any, choices: Iterable[Any]) -> Problem | None:
    """What a ``Param`` check says of ``value`` when it must be one of ``choices``: None when
    it is, else ``must be one of 'a', 'b'`` with the hint ``did you mean 'a'?`` when one is
    close."""
    choices = list(choices)
    if value in choices:
        return None
    listed = ", ".join(repr(c) for c in choices)
    match = closest(value, choices) if isinstance(value, str) else None
    return Problem(f"must be one of {listed}", f"did you mean {match!r}?" if match is not None else None)


class Registry(Mapping[str, V], Generic[V]):
    """A closed vocabulary: ``what`` names its kind (``"routing"``), each entry maps a name to
    the object it stands for (a class, a function, a preset, or a one-line description).

    ``check`` is a ``Param`` check over the names registered when it runs, ``lookup`` the
    entry or an :class:`ArchError` ``unknown routing 'dro'`` with a did-you-mean hint.
    Names keep the order they were registered in.
    """

    def __init__(self, what: str, entries: Mapping[str, V] | None = None):
        self.what = what
        self._entries: dict[str, V] = dict(entries or {})

    def add(self, name: str, value: V) -> V:
        """Register ``value`` under ``name`` (a later registration of a name replaces it)."""
        self._entries[name] = value
        return value

    def remove(self, name: str) -> V:
        """Unregister ``name`` and return what it stood for (a test's temporary entry)."""
        return self._entries.pop(name)

    def register(self, name: str) -> Callable[[V], V]:
        """Decorator form of :meth:`add`."""
        def wrap(value: V) -> V:
            return self.add(name, value)
        return wrap

    def __getitem__(self, name: str) -> V:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._entries)})"

    def names(self) -> list[str]:
        """The registered names, in registration order."""
        return list(self._entries)

    def hint(self, name: str) -> str:
        """``did you mean 'dor'?``, or the list of names when none is close."""
        plural = _plural(self.what)
        return did_you_mean(name, self._entries) or (f"{plural}: " + ", ".join(self._entries)
                                                     if self._entries else f"no {plural} are registered")

    def lookup(self, name: str) -> V:
        """The entry called ``name``; an ArchError ``unknown <what> 'name'`` with a hint otherwise."""
        try:
            return self._entries[name]
        except (KeyError, TypeError):
            raise ArchError(f"unknown {self.what} '{name}'", hint=self.hint(str(name))) from None

    def check(self, value: Any) -> Problem | None:
        """The ``Param`` check: None for a registered name, else what is required (with a
        did-you-mean hint when a name is close)."""
        return choice_problem(value, self._entries)

    def check_also(self, *names: str) -> "RegistryCheck":
        """A ``Param`` check admitting the registered names (when it runs) and ``names``
        besides, which stand for the absence of an entry (a network's ``traffic = "none"``)."""
        return RegistryCheck(self, names)

    def extended(self, what: str, entries: Mapping[str, V]) -> "Registry[V]":
        """A new registry of these names and ``entries`` (a model whose vocabulary adds to a
        shared one: the network's engines are every model's and its own)."""
        return Registry(what, {**self._entries, **entries})


class RegistryCheck:
    """The check :meth:`Registry.check_also` makes: ``choices`` lists what it admits, the
    extra names first, then the registry's names at the time of asking."""

    def __init__(self, registry: Registry, extra: Iterable[str]):
        self.registry = registry
        self.extra = tuple(extra)

    @property
    def choices(self) -> list[str]:
        """The names admitted now."""
        return [*self.extra, *(name for name in self.registry if name not in self.extra)]

    def __call__(self, value: Any) -> Problem | None:
        return choice_problem(value, self.choices)


ENGINES: Registry[str] = Registry("engine", {
    "auto": "the compiled form where the configuration allows it, the Python model elsewhere",
    "python": "the Python model, the reference every compiled form is held to",
    "compiled": "the compiled form; a configuration it cannot run is refused with the reason",
})
"""The ``engine`` vocabulary every model with a compiled form shares (DESIGN: one
``engine = auto | python | compiled`` parameter)."""
