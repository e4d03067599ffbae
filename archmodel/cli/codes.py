"""The exit codes of the ``archmodel`` command (the README lists them)."""

EXIT_OK = 0
"""The command did what it was asked."""
EXIT_FAILED = 1
"""The simulation failed (a deadlock, a model's assertion, a bug in model code), or an output
could not be written at the end."""
EXIT_BAD_INPUT = 2
"""Bad input: the message says what and where."""
EXIT_UNSTABLE = 3
"""The run ended but the measurement it made failed (a network past saturation)."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (a stop signal exits 128 + its number: 143 for SIGTERM, 129 for SIGHUP)."""
