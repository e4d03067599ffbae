"""Which signals a trace records: glob patterns over hierarchical signal names.

A register ``count`` of ``top.fifo`` is the signal ``top.fifo.count``; the handshake of the
channel driven by output ``top.src.out`` gives ``top.src.out.valid``, ``.ready``, ``.fire``,
``.occupancy`` and ``.data``. Patterns follow :mod:`fnmatch` (``*`` also crosses dots), with
one convenience: an array index in a pattern (``top.core[3].*``) also matches literally, so
the instance ``core[3]`` is found whether or not ``[3]`` is read as a character class.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from typing import Iterable, Sequence

from archmodel.kernel import ArchError


def _literal_brackets(pattern: str) -> str:
    return re.sub(r"[\[\]]", lambda m: f"[{m.group()}]", pattern)


class Selection:
    """A set of glob patterns; ``selects(name)`` says whether a signal is traced."""

    def __init__(self, patterns: Sequence[str] | str = ("*",)):
        if isinstance(patterns, str):
            patterns = (patterns,)
        patterns = tuple(patterns)
        for pattern in patterns:
            if not isinstance(pattern, str) or not pattern:
                raise ArchError(f"trace selection {pattern!r} is not a glob pattern",
                                hint="write a hierarchical name with wildcards, e.g. 'top.cluster0.*'")
        self.patterns = patterns
        self._each = [self._compile(p) for p in patterns]
        self._any = re.compile("|".join(f"(?:{rx.pattern})" for rx in self._each)) if patterns else None
        self._everything = "*" in patterns  # (the commonest selection, and one pattern match per signal)

    @staticmethod
    def _compile(pattern: str) -> re.Pattern:
        variants = {fnmatch.translate(pattern)}
        if "[" in pattern:
            variants.add(fnmatch.translate(_literal_brackets(pattern)))
        return re.compile("|".join(f"(?:{v})" for v in sorted(variants)))

    def selects(self, name: str) -> bool:
        """True if any pattern matches the whole signal name."""
        return self._everything or (self._any is not None and self._any.match(name) is not None)

    def check_matches(self, names: Iterable[str]) -> None:
        """Raise ArchError naming the first pattern (other than ``*``) that matches none of
        ``names``, with the closest signal or scope as a hint: a typo must not silently
        produce an empty waveform."""
        if all(pattern == "*" for pattern in self.patterns):
            return  # (matches any signal; an empty design is no typo)
        names = list(names)
        for pattern, rx in zip(self.patterns, self._each):
            if pattern == "*" or any(rx.match(n) for n in names):
                continue
            scopes = sorted({n.rsplit(".", depth)[0] for n in names for depth in range(n.count(".") + 1)})
            stem = pattern.split("*")[0].split("?")[0].rstrip(".")
            close = difflib.get_close_matches(stem, scopes, n=1, cutoff=0.6) if stem else []
            raise ArchError(f"trace selection '{pattern}' matches no signal",
                            hint=f"did you mean '{close[0]}.*'?" if close else
                            "signals are named like top.fifo.count or top.src.out.valid")
