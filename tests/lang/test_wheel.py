"""The grammar, library and topologies travel with the package: build a wheel, install it
(not editable) into a fresh virtual environment, and check and run bundled files there."""

import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(cmd, cwd, timeout=120):
    # without PYTHONPATH: one pointing at a checkout (as a worktree's tests run) would make the
    # venv import the checkout instead of the wheel installed in it
    env = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_wheel_in_a_fresh_venv_checks_and_runs_library_and_topology_files(tmp_path):
    dist = tmp_path / "dist"
    # built from a copy: setuptools writes build/ and archmodel.egg-info/ into the tree it builds
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "waves", "*.vcd", "*.gtkw"))
    run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-w", str(dist),
         "-q"], cwd=tmp_path, timeout=180)
    (wheel,) = dist.glob("archmodel-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "archmodel/_data/dsl/arch.lark" in names
    assert "archmodel/_data/library/stages.arch" in names
    assert "archmodel/_data/topologies/pipeline.arch" in names
    (license_file,) = [name for name in names if name.startswith("archmodel-") and name.endswith("/LICENSE")]
    assert "Apache License" in zipfile.ZipFile(wheel).read(license_file).decode()

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    # The dependencies (numpy, lark, ...) come from this interpreter's site-packages through a
    # .pth file, without a download, whether or not this interpreter is itself a venv. Those
    # directories come after the venv's own, so the wheel installed there is the archmodel found.
    venv_site = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    cwd=tmp_path).stdout.strip()
    (Path(venv_site) / "parent_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    run([python, "-m", "pip", "install", "--no-deps", "--force-reinstall", "-q", str(wheel)], cwd=tmp_path)
    where = run([python, "-c", "import archmodel.paths as p; print(p.data_path('dsl'))"], cwd=tmp_path).stdout
    assert str(venv) in where and "_data" in where, where  # the installed copy, not the checkout

    archmodel = venv / "bin" / "archmodel"
    topology = Path(where.strip()).parent / "topologies" / "pipeline.arch"
    out = run([archmodel, "check", str(topology)], cwd=tmp_path).stdout
    assert out.startswith(f"ok: {topology}: system Pipeline")
    result = run([archmodel, "run", str(topology), "-q", "--vcd", str(tmp_path / "p.vcd")], cwd=tmp_path)
    assert "stopped at" in result.stderr
    # The bundled systems by name, from anywhere, and their list.
    result = run([archmodel, "run", "pipeline", "-q", "--vcd", str(tmp_path / "q.vcd")], cwd=tmp_path)
    assert "stopped at" in result.stderr
    listed = run([archmodel, "list", "--systems"], cwd=tmp_path).stdout.splitlines()
    assert ["snitch_cluster", "One Manticore cluster running GEMM with operands streamed by DMA from an ideal memory."] in [
            line.split(None, 1) for line in listed]
    # The version is written once, in archmodel/__init__.py; the metadata and --version agree.
    from archmodel import __version__

    assert run([archmodel, "--version"], cwd=tmp_path).stdout == f"archmodel {__version__}\n"
    assert run([python, "-c", "import importlib.metadata as m; print(m.version('archmodel'))"],
               cwd=tmp_path).stdout == f"{__version__}\n"
    # A user's file importing the bundled library by name.
    user = tmp_path / "mine.arch"
    user.write_text('import "stages.arch"\nsystem Mine {\n  s : Source(count = 3)\n  st : Stage()\n'
                    '  k : Sink()\n  s.out -> st.inp\n  st.out -> k.inp\n}\n')
    assert run([archmodel, "check", "mine.arch"], cwd=tmp_path).stdout.startswith("ok: mine.arch")
