"""numba for every compiled loop of the models: imported on first use, one set of options, one
tested version range, and a clear error when it cannot be used.

A model family writes its loop as plain Python functions over int64/float64 arrays and marks
them with :func:`jit`; nothing imports numba until one of them is first called from Python, so
importing archmodel or any model (compiled modules included) costs no numba import and works
where numba is missing. :func:`dispatcher` compiles a function at once, for loops that build
their functions themselves (closures over a configuration, helpers swapped into a namespace).

Options, the same for every loop:

- ``nogil=True``: a loop holds no Python object, so a thread may run beside it.
- no reference counting (numba's ``_nrt=False``, a private option, which is one reason the
  version range is pinned): the loops allocate nothing, and counting the references of the
  arrays passed to every helper call costs far more than the helpers' bodies (20x on the DRAM
  core's random traffic). A loop that does allocate arrays says ``allocates=True``.
- ``cache=True``: a loop is compiled once and then loaded from numba's on-disk cache. numba
  keys a cached function by its own source file (and the values its closure holds) only,
  never by the modules it calls into or reads constants from: a cached DRAM core whose layout
  module changed would load the old machine code. So every cached function is written under
  a folder named by the digest of all the Python sources beside it (:func:`cache_folder`): a
  loop's parts live in one package folder, and any change there compiles its loops anew. The
  folders sit in the user's cache (``$XDG_CACHE_HOME/archmodel/numba``, else
  ``~/.cache/archmodel/numba``), or under ``NUMBA_CACHE_DIR`` when that is set; nothing is
  written into the checkout or an installed wheel. A process touches each folder it uses, and
  the first process to make a folder removes the folders beside it that no process has used
  for :data:`STALE_CACHE_DAYS` days, so editing a model does not pile up machine code for
  sources that are gone (several MB a folder). A loop whose parts span folders compiles
  them with :func:`compile_parts` (uncached, inlined where it says so) and caches only its
  entry, a closure over :func:`sources_digest` of those modules.

numba versions outside :data:`NUMBA_TESTED` are refused with :class:`CompiledUnavailable`
(an :class:`~.errors.ArchError`: the command line prints it without a traceback), as is a
missing numba; :func:`unavailable_reason` says why before anything is compiled: every
family's ``engine="auto"`` asks it and runs the Python model instead, while
``engine="compiled"`` stops with the reason.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import os
import shutil
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Optional, Sequence

import numpy as np

from .errors import ArchError

NUMBA_TESTED = ((0, 61), (0, 69))
"""The numba versions the compiled loops are tested with: from the first (major, minor)
included to the second excluded (pyproject.toml pins the same range)."""

NUMBA_REQUIREMENT = "numba>={}.{},<{}.{}".format(*NUMBA_TESTED[0], *NUMBA_TESTED[1])
""":data:`NUMBA_TESTED` as pip writes it."""

STALE_CACHE_DAYS = 30
"""A cache folder no process has used for this many days is removed when a new one is made
beside it (its sources changed long ago, or belong to a checkout no longer run)."""

_numba: Optional[ModuleType] = None


class CompiledUnavailable(ArchError):
    """A compiled loop was asked for and numba is missing or outside the tested versions."""


@functools.lru_cache(maxsize=None)  # asked at every model's first tick; metadata reads are slow
def _installed_version() -> Optional[str]:
    """The installed numba's version, read from its metadata without importing it (None: missing)."""
    try:
        return importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, int]:
    """(major, minor) of a version string such as ``0.61.2`` or ``0.62.0rc1``."""
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def unavailable_reason() -> Optional[str]:
    """Why the compiled loops cannot run here (numba missing or outside :data:`NUMBA_TESTED`),
    or None when they can. Reads the installed version only; numba stays unimported."""
    version = _installed_version()
    if version is None:
        return "numba is not installed"
    low, high = NUMBA_TESTED
    if not low <= _release(version) < high:
        return f"numba {version} is outside the tested versions ({NUMBA_REQUIREMENT})"
    return None


def available() -> bool:
    """True when the compiled loops can run (numba installed, in the tested range)."""
    return unavailable_reason() is None


def numba() -> ModuleType:
    """The numba module, imported on the first call; :class:`CompiledUnavailable` when it
    cannot be used."""
    global _numba
    if _numba is None:
        why = unavailable_reason()
        if why is not None:
            raise CompiledUnavailable(f"a compiled loop needs numba: {why}",
                                      hint=f"pip install '{NUMBA_REQUIREMENT}', or choose engine=\"python\"")
        _numba = importlib.import_module("numba")
    return _numba


def dispatcher(function: Callable[..., Any], *, allocates: bool = False, inline: bool = False,
               cache: bool = True) -> Any:
    """``function`` compiled by numba with the project's options (see the module docstring):
    a numba dispatcher, which compiles on its first call or loads from the cache. ``inline``
    inlines it into its callers (numba's ``inline="always"``)."""
    options: dict[str, Any] = dict(nogil=True, cache=cache)
    if not allocates:
        options["_nrt"] = False
    if inline:
        options["inline"] = "always"
    if not cache:
        return numba().njit(**options)(function)
    # numba picks a cached function's folder from its config when the dispatcher is made
    config = numba().config
    user_folder = config.CACHE_DIR
    config.CACHE_DIR = str(claim_cache_folder(cache_folder(function)))
    try:
        return numba().njit(**options)(function)
    finally:
        config.CACHE_DIR = user_folder


_ENTRIES: dict = {}  # (dispatcher, the arguments' layouts) -> its compiled entry


def argument_layout(value: Any) -> Optional[tuple]:
    """What numba's type of an argument depends on: for an array its dtype, dimensions,
    contiguity, and whether it is writeable and aligned; for a Python scalar its type; None
    for anything else (whose type may depend on its contents)."""
    if type(value) is np.ndarray:
        flags = value.flags
        return (value.dtype.str, value.ndim, flags.c_contiguous, flags.f_contiguous, flags.writeable, flags.aligned)
    if type(value) in (int, float, bool):
        return (type(value),)
    return None


def compiled_entry(loop: Any, args: tuple) -> Any:
    """The compiled entry of the numba dispatcher ``loop`` for arguments like ``args``, once
    the dispatcher holds it (after a call with them); None when it holds none, or an argument
    is neither an array nor a Python scalar. Calling the entry skips the dispatcher's typing
    of every argument at every call, which for a loop of 40-odd arrays called once per short
    batch or DRAM edge costs more than the call's work. Kept per layout of the arguments: typing
    them (numba's typeof) costs more than a thousand calls. Only a found entry is kept: a
    caller may ask before its first call through the dispatcher (whose entry another caller
    with the same layouts may already have made), and ask again after it."""
    layouts = tuple(map(argument_layout, args))
    if None in layouts:
        return None
    key = (loop, layouts)
    entry = _ENTRIES.get(key)
    if entry is None:
        types = tuple(loop.typeof_pyval(value) for value in args)
        for signature in loop.signatures:
            if tuple(signature) == types:
                entry = _ENTRIES[key] = loop.get_overload(signature)
    return entry


def cache_folder(function: Callable[..., Any]) -> Path:
    """Where numba caches ``function``: a folder named by the digest of every Python source
    in the folder of ``function``'s own source (see the module docstring), under
    ``NUMBA_CACHE_DIR`` or the user's cache."""
    base = os.environ.get("NUMBA_CACHE_DIR") or Path(
        os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "archmodel" / "numba"
    return Path(base) / _folder_digest(str(Path(function.__code__.co_filename).resolve().parent))


@functools.lru_cache(maxsize=None)  # once per folder and process
def claim_cache_folder(folder: Path) -> Path:
    """``folder``, made if missing and marked as used now (its modification time); when this
    call made it, the folders beside it unused for :data:`STALE_CACHE_DAYS` days are removed.
    A folder another process removes at the same time is no error: numba compiles anew."""
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    os.utime(folder)
    if made:
        stale_before = time.time() - STALE_CACHE_DAYS * 86400
        for sibling in folder.parent.iterdir():
            try:
                unused = sibling.is_dir() and sibling != folder and sibling.stat().st_mtime < stale_before
            except FileNotFoundError:  # removed by another process meanwhile
                continue
            if unused:
                shutil.rmtree(sibling, ignore_errors=True)
    return folder


@functools.lru_cache(maxsize=None)  # once per folder and process: sources do not change under a run
def _folder_digest(folder: str) -> str:
    """The first 16 hex digits of the SHA-256 of the Python sources in ``folder`` (names and
    contents, in name order)."""
    digest = hashlib.sha256()
    for source in sorted(Path(folder).glob("*.py")):
        digest.update(source.name.encode() + b"\0" + source.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def compile_parts(modules: Sequence[ModuleType], inline: Iterable[str] = ()) -> None:
    """Compile the parts of one loop spread over ``modules``: each module lists the names of
    its functions numba compiles in a ``COMPILED`` tuple. Every one is compiled uncached (its
    own source is not the whole of what it computes; the loop's entry is cached under
    :func:`sources_digest` instead), inlined into its callers when ``inline`` names it, and
    its dispatcher takes the place of the Python function in every one of ``modules`` that
    names it, where numba resolves a callee by name. Called once per loop (its functions are
    dispatchers afterwards)."""
    inlined = set(inline)
    compiled: dict[int, Any] = {}  # id of a Python function -> its numba dispatcher
    for module in modules:
        for name in module.COMPILED:
            function = vars(module)[name]
            if id(function) not in compiled:
                compiled[id(function)] = dispatcher(function, inline=name in inlined, cache=False)
    for module in modules:
        namespace = vars(module)
        for name, value in list(namespace.items()):
            if id(value) in compiled:
                namespace[name] = compiled[id(value)]


def sources_digest(modules: Sequence[ModuleType]) -> str:
    """A SHA-256 hex digest of the source files of ``modules``, in order: the cache key a
    loop's entry closes over, so numba's cache tells the loops built from different sources
    of its parts apart (see the module docstring)."""
    digest = hashlib.sha256()
    for module in modules:
        with open(module.__file__ or "", "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


class Loop:
    """A function of a compiled loop, compiled on its first call from Python (see :func:`jit`).

    numba finds the functions a compiled function calls by name in its module, so the first
    call binds the module: every :class:`Loop` in its namespace is replaced there by its numba
    dispatcher, and so on through the modules those come from. Calls from Python go to the
    dispatcher (:meth:`bind` returns it, for a caller that keeps it). ``py_func`` is the
    Python function.
    """

    def __init__(self, function: Callable[..., Any], allocates: bool, cache: bool, inline: bool = False):
        functools.update_wrapper(self, function)
        self.py_func = function
        self._options = dict(allocates=allocates, cache=cache, inline=inline)
        self._dispatcher: Any = None

    def __call__(self, *args: Any) -> Any:
        return self.bind()(*args)

    def __repr__(self) -> str:
        return f"<compiled loop {self.py_func.__module__}.{self.py_func.__qualname__}>"

    def bind(self) -> Any:
        """The numba dispatcher, after binding this function's modules (see the class docstring)."""
        if self._dispatcher is None:
            _bind(self.py_func.__module__)
        return self.make_dispatcher()  # also when its module no longer names it

    def make_dispatcher(self) -> Any:
        """The numba dispatcher, made on the first call (without binding any module)."""
        if self._dispatcher is None:
            self._dispatcher = dispatcher(self.py_func, **self._options)
        return self._dispatcher


def _bind(module_name: str) -> None:
    """Replace every :class:`Loop` in the namespace of ``module_name``, and of the modules the
    loops found there come from, by its dispatcher."""
    todo, seen = [module_name], {module_name}
    while todo:
        namespace = vars(sys.modules[todo.pop()])
        for name, value in list(namespace.items()):
            if isinstance(value, Loop):
                namespace[name] = value.make_dispatcher()
                home = value.py_func.__module__
                if home not in seen:
                    seen.add(home)
                    todo.append(home)


def jit(function: Optional[Callable[..., Any]] = None, *, allocates: bool = False, inline: bool = False,
        cache: bool = True) -> Any:
    """Mark ``function`` as part of a compiled loop: a :class:`Loop` that numba compiles on
    its first call, with the options of :func:`dispatcher` (``inline``: inlined into the
    compiled functions that call it). Use as ``@jit`` or ``@jit(allocates=True)``."""
    if function is None:
        return lambda f: Loop(f, allocates, cache, inline)
    return Loop(function, allocates, cache, inline)
