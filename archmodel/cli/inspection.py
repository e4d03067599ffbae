"""``archmodel check`` and ``show``: a system looked at without running it."""

from __future__ import annotations

import sys
from pathlib import Path

import attrs

from ..kernel import ArchError, Tree
from ..outputs import check_writable, write_whole
from .codes import EXIT_OK
from .targets import build_top, check_trace_statements, import_paths, is_arch, load_arch, load_models, parse_params


def cmd_check(args) -> int:
    """Parse and elaborate a .arch file, reporting every independent error."""
    load_models(args.plugin)
    if not is_arch(args.target):
        raise ArchError(f"'{args.target}' is not a .arch file", hint="check takes a .arch file, e.g. topologies/pipeline.arch")
    from ..lang import Limits, check_library, is_library

    if args.top is None and not args.param and is_library(args.target):
        # a library: every module on its own, with its defaults, its exposed ports open
        checked = check_library(args.target, limits=Limits(max_instances=args.max_instances),
                                search_path=import_paths(args))
        print(f"ok: {args.target}: library of {len(checked)} module{'s' if len(checked) != 1 else ''} "
              f"({', '.join(e.top.name for e in checked)})")
        return EXIT_OK
    elaborated, _ = load_arch(args)
    tree = Tree(elaborated.top)
    check_trace_statements(elaborated, tree)
    print(f"ok: {args.target}: system {elaborated.top.name}, {len(tree.components)} components "
          f"({elaborated.instances} instances), {len(tree.channels)} channels, {len(tree.domains)} "
          f"clock domain{'s' if len(tree.domains) != 1 else ''}")
    return EXIT_OK


def cmd_show(args) -> int:
    """Print the elaborated hierarchy, clocks and instance counts (and a Graphviz file)."""
    load_models(args.plugin)
    if is_arch(args.target):
        from ..lang import show_text, to_dot

        elaborated, _ = load_arch(args)
        tree = Tree(elaborated.top)
        print(show_text(tree, f"{elaborated.top_module.kind} {elaborated.top_module.name} ({args.target})"))
        if args.dot:
            inputs = list(elaborated.sources.files) + list(args.plugin or [])
            if any(Path(name).is_file() and Path(name).resolve() == Path(args.dot).resolve() for name in inputs):
                raise ArchError(f"--dot {args.dot} would overwrite an input of the system",
                                hint="write the graph somewhere else, e.g. waves/graph.dot")
            check_writable("--dot", Path(args.dot))
            write_whole(Path(args.dot), to_dot(tree))
            print(f"connection graph: {args.dot} (render with: dot -Tsvg {args.dot} -o graph.svg)", file=sys.stderr)
        return EXIT_OK
    top, _ = build_top(args.target, parse_params(args.param))
    tree = Tree(top)
    counts: dict[str, int] = {}
    for comp in tree.components:
        counts[comp.model_name] = counts.get(comp.model_name, 0) + 1
        depth = comp.path.count(".")
        params = ", ".join(f"{k}={v!r}" for k, v in attrs.asdict(comp.params).items())
        print(f"{'  ' * depth}{comp.name} : {comp.model_name}({params}) @ {comp.domain.name}")
    print()
    print("clocks: " + ", ".join(f"{d.name} {d.period_ps} ps" for d in tree.domains))
    print("instances: " + ", ".join(f"{n} {name}" for name, n in sorted(counts.items())))
    print(f"channels: {len(tree.channels)}")
    return EXIT_OK


