"""The ``archmodel`` command line: ``run``, ``check``, ``list``, ``show`` and ``sweep``.

``run``, ``show``, ``check`` and ``sweep`` take a ``.arch`` file (the language,
:mod:`archmodel.lang`), the name of a bundled system (``snitch_cluster``: ``archmodel list
--systems`` lists them) or, except ``check``, a Python builder ``MODULE:FUNCTION`` returning
the top component.

Exit codes (:mod:`.codes`): 0 success, 1 the simulation failed (deadlock, a model's assertion,
a bug in model code), 2 bad input (the message says what and where), 3 the run ended but the
measurement it made failed (a network past saturation: unstable), 130 interrupted by Ctrl-C
(143 SIGTERM, 129 SIGHUP). Errors are one clear message on stderr, never a Python traceback,
except for a bug inside model code, whose traceback is what its author needs.
"""

from __future__ import annotations

import os
import sys

from ..kernel import ArchError, SimulationError
from .codes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from .parser import make_parser
from .targets import resolve_target

__all__ = ["main", "make_parser"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``archmodel`` console script."""
    args = make_parser().parse_args(argv)
    try:
        if getattr(args, "target", None) is not None:
            args.target = resolve_target(args.target)
        return args.handler(args)
    except ArchError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except SimulationError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader (e.g. `| head`) has gone; stop quietly, as Unix tools do.
        sys.stdout = open(os.devnull, "w")
        return EXIT_OK


