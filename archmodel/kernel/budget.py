"""How many components and channels one build may make: a guard against a small input
(``Noc(topology = "mesh(100000, 100000)")``, an array of a billion) growing memory until the
machine kills the process. The ``.arch`` front end opens a budget for each load
(``--max-instances``); every component and channel made inside it, by the language or by a
model building its parts, counts; a model about to make many parts asks first
(:func:`check_instances`), so the error comes before the memory is spent."""

from __future__ import annotations

import contextlib
import contextvars
from typing import Callable, Iterator

from .errors import ArchError

_BUDGET: contextvars.ContextVar = contextvars.ContextVar("instance_budget", default=None)


class _Budget:
    def __init__(self, limit: int):
        self.limit = limit
        self.made = 0


@contextlib.contextmanager
def instance_budget(limit: int) -> Iterator[None]:
    """Within the block, at most ``limit`` components may be made."""
    token = _BUDGET.set(_Budget(limit))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def _refuse(what: str, count: int, budget: _Budget) -> ArchError:
    return ArchError(f"{what} would make {count:,} components or channels, beyond the limit of {budget.limit:,}",
                     hint="make it smaller, or raise the limit with --max-instances N")


def check_instances(count: int, what: str) -> None:
    """Raise an ArchError, before anything is built, if ``count`` more components would pass
    the open budget (no budget open: no limit). ``what`` names the thing being built."""
    budget = _BUDGET.get()
    if budget is not None and budget.made + count > budget.limit:
        raise _refuse(what, count, budget)


def count_instance(name: str | Callable[[], str]) -> None:
    """Count one component or channel made (called as each is constructed); ``name`` is its
    name, or a function giving it (built only for the error)."""
    budget = _BUDGET.get()
    if budget is not None:
        budget.made += 1
        if budget.made > budget.limit:
            budget.made -= 1
            raise _refuse(f"'{name() if callable(name) else name}'", 1, budget)
