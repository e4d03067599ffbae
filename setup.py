"""Build hook: copy dsl/, library/ and topologies/ into the wheel as archmodel/_data/.

All other metadata lives in pyproject.toml. ``archmodel.paths.data_path`` finds the copies in
an installed wheel and the originals in a source checkout.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
DATA_FOLDERS = ("dsl", "library", "topologies")


class BuildPyWithData(build_py):
    """``build_py`` that also places the language's data folders inside the package."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "archmodel" / "_data"
        for folder in DATA_FOLDERS:
            source = ROOT / folder
            if source.is_dir():
                shutil.copytree(source, target / folder, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithData})
