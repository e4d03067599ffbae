"""What a command runs: a ``.arch`` file, a bundled system by name or a Python builder
``MODULE:FUNCTION``, the models and plugins it may use, the ``-p NAME=VALUE`` parameters it
is given, and the checks of a ``.arch`` file's own statements."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
import types
from pathlib import Path

from ..kernel import ArchError, Component, SimulationError, Simulator, Span, Tree, did_you_mean
from ..paths import bundled_systems


def load_models(plugins: list[str] | None = None) -> None:
    """Fill the model catalogue: the built-in families, installed plugins (entry point group
    ``archmodel.models``) and plugin files given with ``--plugin``."""
    importlib.import_module("archmodel.models")
    from importlib.metadata import entry_points

    for entry in entry_points(group="archmodel.models"):
        try:
            entry.load()
        except Exception as err:  # a broken third-party plugin is bad input, not our crash
            raise ArchError(f"plugin entry point '{entry.name}' ({entry.value}) failed to load: "
                            f"{type(err).__name__}: {err}") from None
    for plugin in plugins or []:
        _load_plugin_file(plugin)


def _load_plugin_file(plugin: str) -> None:
    # a name of its own per file, so two plugins called models.py do not replace each other
    path = Path(plugin)
    if path.suffix != ".py" or not path.is_file():
        raise ArchError(f"--plugin {plugin}: no such Python file", hint="give a .py file defining @model classes")
    module_name = f"archmodel_plugin_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    if module_name in sys.modules:
        return
    try:
        _exec_file(path, module_name)
    except ArchError:
        raise
    except Exception as err:
        del sys.modules[module_name]
        raise ArchError(f"--plugin {plugin} failed to load: {type(err).__name__}: {err}") from None


def _exec_file(path: Path, module_name: str) -> types.ModuleType:
    """Run the Python file ``path`` as the module ``module_name`` (in ``sys.modules`` from
    before it runs, so its classes can be pickled and found again); returns it."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ArchError(f"{path}: cannot be loaded as a Python module", hint="give a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def is_arch(target: str) -> bool:
    """Whether a target is a ``.arch`` file (else a builder ``MODULE:FUNCTION``)."""
    return target.endswith(".arch")


def resolve_target(target: str) -> str:
    """A target as the commands read it: a ``.arch`` file or a builder as given, and a bare
    name (no ``/``, ``.`` or ``:``) the bundled system of that name (``snitch_cluster``), so
    the systems that travel with archmodel run from anywhere once it is installed."""
    if any(mark in target for mark in "/.:") or not target:
        return target
    systems = bundled_systems()
    if target in systems:
        return str(systems[target])
    raise ArchError(f"'{target}' is not a .arch file, a builder MODULE:FUNCTION or a bundled system",
                    hint=did_you_mean(target, systems) or "'archmodel list --systems' lists the bundled systems")


def load_arch(args):
    """Parse and elaborate the ``.arch`` file of ``args.target`` (with ``--top``, ``-p``,
    ``--max-instances``)."""
    from ..lang import Limits, load, parse_overrides

    params = parse_overrides(args.param)
    limits = Limits(max_instances=args.max_instances)
    return load(args.target, top=args.top, params=params, limits=limits, search_path=import_paths(args)), params


def import_paths(args) -> list[Path]:
    """The folders given with ``--import-path``, each checked to exist."""
    folders = []
    for folder in args.import_path:
        if not Path(folder).is_dir():
            raise ArchError(f"--import-path {folder}: no such folder")
        folders.append(Path(folder))
    return folders


def _parse_value(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    if text in ("true", "false"):
        return text == "true"
    return text


def parse_params(pairs: list[str]) -> dict:
    """``-p NAME=VALUE`` pairs as a builder's keyword arguments: a whole number, a float,
    ``true``/``false`` as a bool, anything else as the text it is."""
    from ..lang import parse_overrides

    return {key: _parse_value(value) for key, value in parse_overrides(pairs).items()}


def load_builder(target: str):
    """Resolve ``package.module:function`` or ``path/to/file.py:function`` to a callable
    and the file it came from."""
    module_name, sep, func_name = target.partition(":")
    if not sep or not func_name or not module_name:
        raise ArchError(f"'{target}' is not a builder",
                        hint="give MODULE:FUNCTION, e.g. archmodel.examples.banked_memory:build")
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise ArchError(f"no such file: {module_name}")
            module = _exec_file(path, path.stem)
        else:
            module = importlib.import_module(module_name)
    except SyntaxError as err:  # the builder's file does not parse: say where, as for a .arch file
        raise ArchError(f"the builder module does not parse: {err.msg}",
                        span=Span(err.filename or module_name, err.lineno or 1, err.offset or 1)) from None
    except ModuleNotFoundError as err:
        raise ArchError(f"cannot import module '{module_name}': {err}",
                        hint="is the package installed, or did you mean a path ending in .py?") from None
    except (ArchError, KeyboardInterrupt):
        raise
    except Exception:  # the builder module itself raised while loading: its author needs the traceback
        raise SimulationError(f"importing the builder module '{module_name}' raised:\n{traceback.format_exc()}") from None
    builder = getattr(module, func_name, None)
    if not callable(builder):
        names = [n for n in dir(module) if callable(getattr(module, n)) and not n.startswith("_")]
        raise ArchError(f"module '{module_name}' has no function '{func_name}'", hint=did_you_mean(func_name, names))
    return builder, getattr(module, "__file__", None)


def build_top(target: str, params: dict) -> tuple[Component, str | None]:
    """Call the builder with ``params`` and check it returns a component tree."""
    builder, source = load_builder(target)
    signature = inspect.signature(builder)
    try:
        signature.bind(**params)
    except TypeError as err:
        accepted = ", ".join(signature.parameters) or "none"
        raise ArchError(f"{target}: {err}", hint=f"the builder's parameters are: {accepted}") from None
    top = builder(**params)
    if not isinstance(top, Component):
        raise ArchError(f"{target} returned {type(top).__name__}, not a Component")
    return top, source


def file_hash(path: str | None) -> str | None:
    """The SHA-256 of a file's bytes (for the run manifest), None when there is no such file."""
    if path is None or not Path(path).is_file():
        return None
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def check_trace_statements(elaborated, tree: Tree | Simulator) -> None:
    """Each ``trace`` statement of a ``.arch`` file must select some signal: one that selects
    none is an error at the statement (``check`` finds it, not only ``run``)."""
    from ..lang import LanguageErrors
    from ..trace import Selection, signal_names

    names = signal_names(tree) if elaborated.traces else []
    errors = []
    for pattern in dict.fromkeys(elaborated.traces):
        try:
            Selection([pattern]).check_matches(names)
        except ArchError as err:
            err.span = elaborated.trace_spans.get(pattern)
            errors.append(err)
    if errors:
        raise LanguageErrors(errors, elaborated.sources)
