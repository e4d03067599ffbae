"""The one numba wrapper of the compiled loops: imported on first use, the same options for every
loop, a pinned version range and a clear error outside it, caches outside the tracked tree."""

import importlib
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from archmodel.kernel import ArchError, compiled
from archmodel.kernel.compiled import CompiledUnavailable, Loop, jit

ROOT = Path(__file__).resolve().parents[2]

_IMPORT_EVERYTHING = """
import pkgutil, sys
import archmodel
names = [m.name for m in pkgutil.walk_packages(archmodel.__path__, "archmodel.") if not m.name.endswith("__main__")]
for name in names:
    __import__(name)
assert "archmodel.models.memory.compiled_core_kernel" in sys.modules, "the walk missed the compiled modules"
print(len(names), "numba" in sys.modules)
from archmodel.models.memory.compiled_tags import play
play([0, 1, 0], [False, True, False], sets=2, ways=1)
print("numba" in sys.modules)
"""


def test_importing_every_module_leaves_numba_unimported_until_a_loop_is_called():
    done = subprocess.run([sys.executable, "-c", _IMPORT_EVERYTHING], cwd=ROOT, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    count, before, after = done.stdout.split()
    assert int(count) > 100 and (before, after) == ("False", "True")


def test_the_pin_in_pyproject_is_the_tested_range():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.findall(r'"(numba[<>=~!][^"]*)"', pyproject) == [compiled.NUMBA_REQUIREMENT]
    assert compiled.NUMBA_REQUIREMENT == "numba>={}.{},<{}.{}".format(*compiled.NUMBA_TESTED[0],
                                                                     *compiled.NUMBA_TESTED[1])


def test_the_installed_numba_is_in_the_tested_range():
    # a dependency: a machine without it, or with an untested one, is a broken install
    assert compiled.unavailable_reason() is None
    assert compiled.available()


@pytest.mark.parametrize("version, why", [
    (None, "numba is not installed"),
    ("0.57.1", "numba 0.57.1 is outside the tested versions ({})"),
    ("{high}.0rc1", "numba {high}.0rc1 is outside the tested versions ({})"),
])
def test_a_missing_or_untested_numba_is_refused_with_the_reason(monkeypatch, version, why):
    high = "{}.{}".format(*compiled.NUMBA_TESTED[1])
    if version is not None:
        version = version.format(high=high)
    why = why.format(compiled.NUMBA_REQUIREMENT, high=high)
    monkeypatch.setattr(compiled, "_installed_version", lambda: version)
    monkeypatch.setattr(compiled, "_numba", None)
    assert compiled.unavailable_reason() == why and not compiled.available()
    with pytest.raises(CompiledUnavailable) as raised:
        compiled.numba()
    assert isinstance(raised.value, ArchError)  # the command line prints it, exit 2, no traceback
    assert str(raised.value) == (f"error: a compiled loop needs numba: {why}\n"
                                 f"hint: pip install '{compiled.NUMBA_REQUIREMENT}', or choose engine=\"python\"")


def test_the_dram_core_reports_the_reason_and_auto_keeps_the_python_path(monkeypatch):
    from archmodel.models.memory import compiled_core
    monkeypatch.setattr(compiled, "_installed_version", lambda: None)
    assert not compiled_core.available()


def test_the_edge_versions_of_the_range():
    low, high = compiled.NUMBA_TESTED
    assert compiled._release("{}.{}.0".format(*low)) == low
    assert compiled._release("{}.{}.3".format(*high)) == high
    assert compiled._release("0.62.0rc1") == (0, 62)


def _module(tmp_path, monkeypatch, name: str, text: str):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return importlib.import_module(name)


def test_a_loop_binds_its_module_and_the_modules_of_its_callees(tmp_path, monkeypatch):
    _module(tmp_path, monkeypatch, "loop_parts", """
        from archmodel.kernel.compiled import jit

        @jit
        def twice(x):
            return 2 * x
        """)
    entry = _module(tmp_path, monkeypatch, "loop_entry", """
        from archmodel.kernel.compiled import jit
        from loop_parts import twice

        @jit
        def total(a):
            s = 0
            for v in a:
                s += twice(v)
            return s
        """)
    parts = sys.modules["loop_parts"]
    assert isinstance(entry.total, Loop) and isinstance(entry.twice, Loop) and isinstance(parts.twice, Loop)
    assert repr(entry.total) == "<compiled loop loop_entry.total>" and entry.total.__doc__ is None
    assert entry.total(np.arange(5, dtype=np.int64)) == 20
    # the names numba resolves are its dispatchers now, in both modules
    for namespace, name in ((entry, "total"), (entry, "twice"), (parts, "twice")):
        assert type(getattr(namespace, name)).__name__ == "CPUDispatcher", name
    assert entry.twice is parts.twice
    assert entry.total.targetoptions["nogil"] and entry.total.targetoptions["_nrt"] is False


def test_a_loop_marked_inline_is_inlined_into_its_callers(tmp_path, monkeypatch):
    loops = _module(tmp_path, monkeypatch, "loop_inlined", """
        from archmodel.kernel.compiled import jit

        @jit(inline=True)
        def thrice(x):
            return 3 * x

        @jit
        def total(n):
            s = 0
            for v in range(n):
                s += thrice(v)
            return s
        """)
    assert loops.total(4) == 18
    assert loops.thrice.targetoptions["inline"] == "always" and "inline" not in loops.total.targetoptions
    assert loops.thrice.targetoptions["_nrt"] is False and type(loops.thrice._cache).__name__ != "NullCache"


def test_a_loop_allocates_only_when_it_says_so(tmp_path, monkeypatch):
    loops = _module(tmp_path, monkeypatch, "loop_allocating", """
        import numpy as np
        from archmodel.kernel.compiled import jit

        @jit
        def counted(n):
            return np.zeros(n).size

        @jit(allocates=True)
        def allowed(n):
            return np.zeros(n).size
        """)
    assert loops.allowed(7) == 7
    numba = compiled.numba()
    with pytest.raises(numba.core.errors.NumbaError):  # no reference counting: no arrays of its own
        loops.counted(7)


def test_the_caches_numba_writes_stay_out_of_the_tracked_tree():
    from archmodel.models.memory import compiled_tags
    compiled_tags.play([0, 1], [False, False], sets=2, ways=1)
    where = Path(compiled_tags._play._cache._cache_path).resolve()
    inside = ROOT in where.parents
    if inside and not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    if inside:
        ignored = subprocess.run(["git", "check-ignore", "-q", str(where / "x.nbi")], cwd=ROOT)
        assert ignored.returncode == 0, f"numba caches into {where}, which git does not ignore"


_STALE_CALLER = """
from archmodel.kernel.compiled import jit
from stale_callee import offset, LIMIT

@jit
def shifted(x):
    return min(x + offset(), LIMIT)

print(shifted(1))
"""


def test_a_cached_loop_compiles_anew_when_a_module_it_calls_or_reads_changes(tmp_path):
    """numba keys its cache by a function's own file only: without the folder digest, the
    second process would load ``shifted`` with the old callee and constant inlined."""
    package = tmp_path / "loops"
    package.mkdir()
    (package / "stale_caller.py").write_text(_STALE_CALLER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package), str(ROOT)]),
               NUMBA_CACHE_DIR=str(tmp_path / "cache"))

    def run(callee: str) -> str:
        (package / "stale_callee.py").write_text(textwrap.dedent(callee))
        result = subprocess.run([sys.executable, str(package / "stale_caller.py")], env=env,
                                capture_output=True, text=True, check=True)
        return result.stdout.strip()

    first = "from archmodel.kernel.compiled import jit\nLIMIT = 100\n@jit\ndef offset():\n    return 10\n"
    assert run(first) == "11"
    assert run(first) == "11" and any((tmp_path / "cache").rglob("*.nbi")), "the loop was not cached"
    assert run(first.replace("return 10", "return 20")) == "21"
    assert run(first.replace("LIMIT = 100", "LIMIT = 5")) == "5"


def test_the_cache_folder_is_named_by_the_sources_beside_a_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    from archmodel.models.memory import compiled_tags
    folder = compiled.cache_folder(compiled_tags._play.py_func)
    assert folder.parent == tmp_path / "cache" and len(folder.name) == 16
    assert folder == compiled.cache_folder(compiled_tags.play)  # one folder per package folder
    from archmodel.models.compute import compiled_reference_loop
    assert compiled.cache_folder(compiled_reference_loop._find.py_func) != folder


def test_a_new_cache_folder_removes_the_ones_beside_it_unused_for_a_month(tmp_path):
    old, recent, other = tmp_path / "aaaa", tmp_path / "bbbb", tmp_path / "not-a-folder"
    for folder in (old, recent):
        folder.mkdir()
        (folder / "loop.nbi").write_bytes(b"index")
    other.write_text("kept: only folders are caches")
    month = compiled.STALE_CACHE_DAYS * 86400
    os.utime(old, (time.time() - month - 60,) * 2)
    os.utime(recent, (time.time() - month + 3600,) * 2)
    os.utime(other, (time.time() - month - 60,) * 2)
    fresh = compiled.claim_cache_folder(tmp_path / "cccc")
    assert fresh.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["bbbb", "cccc", "not-a-folder"]
    # claiming an existing folder marks it used and removes nothing
    os.utime(recent, (time.time() - month - 60,) * 2)
    assert compiled.claim_cache_folder(recent) == recent
    assert recent.stat().st_mtime > time.time() - 60 and (tmp_path / "cccc").is_dir()


def test_jit_keeps_the_function_for_reading():
    def add(a, b):
        """The sum."""
        return a + b
    loop = jit(add)
    assert loop.py_func is add and loop.__doc__ == "The sum." and loop.__name__ == "add"


def test_a_loop_its_module_does_not_name_compiles_on_its_own():
    def triple(x):
        return 3 * x
    assert jit(triple)(4) == 12


def test_the_parts_of_a_loop_are_compiled_in_place_and_its_entry_keyed_by_their_sources(tmp_path, monkeypatch):
    parts = _module(tmp_path, monkeypatch, "listed_parts", """
        def twice(x):
            return 2 * x

        def plus_one(x):
            return x + 1

        COMPILED = ("twice", "plus_one")
        """)
    entry = _module(tmp_path, monkeypatch, "listed_entry", """
        from listed_parts import twice

        def total(a):
            s = 0
            for v in a:
                s += twice(v)
            return s

        COMPILED = ("total",)
        """)
    digest = compiled.sources_digest((parts, entry))
    compiled.compile_parts((parts, entry), inline=("twice",))
    for namespace, name in ((parts, "twice"), (parts, "plus_one"), (entry, "twice"), (entry, "total")):
        assert type(getattr(namespace, name)).__name__ == "CPUDispatcher", name
    assert entry.twice is parts.twice
    assert parts.twice.targetoptions["inline"] == "always" and "inline" not in parts.plus_one.targetoptions
    # uncached (numba's null cache): the loop's entry is what is cached, under the digest
    assert all(type(f._cache).__name__ == "NullCache" for f in (parts.twice, parts.plus_one, entry.total))
    assert entry.total(np.arange(5, dtype=np.int64)) == 20 and parts.plus_one(2) == 3
    assert entry.total.targetoptions["_nrt"] is False
    # the key changes with any part's source
    (tmp_path / "listed_parts.py").write_text((tmp_path / "listed_parts.py").read_text() + "\n# changed\n")
    assert compiled.sources_digest((parts, entry)) != digest


def test_a_compiled_entry_asked_for_before_the_first_call_is_found_after_it():
    def scaled_sum(a, k):
        return k * a.sum()
    loop = compiled.dispatcher(scaled_sum, cache=False)
    args = (np.arange(4, dtype=np.int64), 3)
    assert compiled.compiled_entry(loop, args) is None  # (nothing compiled yet)
    assert loop(*args) == 18
    entry = compiled.compiled_entry(loop, args)
    assert entry is not None and entry(*args) == 18
    # arrays of the same layout take the entry without the dispatcher's typing
    assert compiled.compiled_entry(loop, (np.ones(7, np.int64), 2)) is entry
    assert compiled.compiled_entry(loop, (np.ones(7, np.float64), 2)) is None
