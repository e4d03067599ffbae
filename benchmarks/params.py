"""Parameter checks: what building components through ``Param`` (the one check of a model's
parameters, :meth:`Component.check_params`) costs.

Three measurements, CPU time, best of a few repeats:

* the check alone on Source's nine parameters: ``Source.check_params`` against a peer, the same
  declarations as an attrs class with one validator per field (how the kernel validated before
  the check became one path for the kernel and the language); the ratio is ours / peer;
* 20,000 Fifo components built from Python (the check, the ports, the setup);
* elaborating a ``.arch`` system of 20,000 Fifo instances in arrays (the language's argument
  conversion, the check once per array statement, the build).

With ``--against DIR`` (a checkout of another commit, e.g. ``git worktree add /tmp/base a1def61``)
the last two also run in that checkout, in the same run, and the table prints our time over its.

Run: python benchmarks/params.py [--against DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
COMPONENTS = 20_000


def _cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def _validated_peer(model: type) -> type:
    """The model's declarations as an attrs class validating each field on its own."""
    from archmodel.kernel import accepts

    def validator(param):
        def validate(_instance, attribute, value):
            if param.default is None and value is None:
                return
            if not accepts(param.type, value):
                raise TypeError(attribute.name)
            if param.check is not None and param.check(value):
                raise ValueError(attribute.name)
        return validate

    fields = {name: attrs.field(default=p.default, validator=validator(p), kw_only=True)
              for name, p in model.param_declarations().items()}
    return attrs.make_class("Peer", fields, frozen=True, slots=True)


def check_alone(count: int = 50_000) -> tuple[float, float]:
    """CPU s of ``count`` checks of Source's parameters: ours, the attrs-validator peer."""
    import archmodel.models  # noqa: F401
    from archmodel.models.basic import Source

    given = {"count": 8, "rate": 0.5, "size_bits": 64, "pattern": "bernoulli"}
    peer = _validated_peer(Source)
    ours = _cpu(lambda: [Source.check_params(given) for _ in range(count)])
    theirs = _cpu(lambda: [peer(**given) for _ in range(count)])
    return ours, theirs


def build_and_elaborate() -> dict:
    """CPU s of building COMPONENTS Fifos from Python, and of elaborating as many from .arch."""
    import archmodel.models  # noqa: F401
    from archmodel.kernel import Component, catalogue
    from archmodel.lang import Limits, load

    fifo = catalogue()["Fifo"]

    def build():
        top = Component("top")
        for i in range(COMPONENTS):
            fifo(f"q{i}", top, depth=4)

    text = f"""
module Row(n: int = 1000) {{
    q[n] : Fifo(depth = 4)
    for i in 0 .. n - 1 {{ q[i].out -> q[i + 1].inp }}
    q[n - 1].out -> q[0].inp
}}
system Rows {{
    row[{COMPONENTS // 1000}] : Row()
}}
"""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.arch"
        path.write_text(text)
        elaborate = _cpu(lambda: load(path, limits=Limits(max_instances=10_000_000)), repeat=2)
    return {"build": _cpu(build), "elaborate": elaborate}


def _in_checkout(folder: str) -> dict:
    env = dict(os.environ, PYTHONPATH=folder)
    code = ("import json, runpy, sys; sys.path.insert(0, %r); "
            "m = runpy.run_path(%r); print(json.dumps(m['build_and_elaborate']()))" % (folder, __file__))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                          cwd=folder)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", metavar="DIR", help="another checkout to run the same builds in")
    args = parser.parse_args()
    ours_check, peer_check = check_alone()
    rows = [("Source.check_params x50,000", f"{ours_check:.3f}", "attrs validators", f"{peer_check:.3f}",
             f"{ours_check / peer_check:.2f}")]
    ours = _in_checkout(str(ROOT))
    theirs = _in_checkout(args.against) if args.against else None
    for key, title in (("build", f"{COMPONENTS:,} Fifos built from Python"),
                       ("elaborate", f"{COMPONENTS:,} Fifos elaborated from .arch")):
        if theirs is None:
            rows.append((title, f"{ours[key]:.3f}", "-", "-", "-"))
        else:
            rows.append((title, f"{ours[key]:.3f}", args.against, f"{theirs[key]:.3f}",
                         f"{ours[key] / theirs[key]:.2f}"))
    header = ("measurement", "ours CPU s", "peer", "peer CPU s", "ours/peer")
    table = [header] + rows
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))


if __name__ == "__main__":
    main()
