"""Starting a command-line run as a terminal starts it, for the tests that signal it."""

import signal
import subprocess


def start_from_a_terminal(command, ignored=(), **popen) -> subprocess.Popen:
    """Start ``command`` (its stdout and stderr piped) with Ctrl-C (SIGINT) at its default
    disposition even when this test run ignores it, and with the signals ``ignored`` ignored,
    as ``nohup`` starts one with SIGHUP. Pytest started as a background job of a
    non-interactive shell (``pytest ... &``, as a long suite often is) inherits SIGINT
    ignored, its children inherit that, and a process started with a signal ignored keeps
    ignoring it (Python's convention for SIGINT, and archmodel's for every stop signal): a
    test's Ctrl-C would go unheard. A handler set here is reset to the default in the child
    at exec; an ignored signal stays ignored."""
    wanted = {signal.SIGINT: signal.default_int_handler, **{number: signal.SIG_IGN for number in ignored}}
    previous = {number: signal.signal(number, handler) for number, handler in wanted.items()}
    try:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
