"""The one family of errors archmodel raises for bad input and failed simulations.

Every error is a sentence for the user. ``ArchError`` may carry a source span (the
language front end fills it); the CLI prints it without a traceback and exits 2.
``SimulationError`` (deadlock, a model's assertion) makes the CLI exit 1.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Span:
    """A region of a source file: 1-based line and column, end exclusive."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


QUOTE_WIDTH = 100
"""The most characters of a source line a diagnostic quotes (a window around the column)."""


class ArchError(Exception):
    """Bad input: a configuration, parameter, connection or source file that cannot be used.

    ``message`` is one sentence; ``hint`` an optional suggestion; ``span`` where it happened.
    """

    exit_code = 2

    def __init__(self, message: str, *, hint: str | None = None, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.span = span

    def render(self, source_line: str | None = None) -> str:
        """The full diagnostic: ``file:line:col: error: message``, the line, a caret, a hint."""
        head = f"{self.span}: error: {self.message}" if self.span else f"error: {self.message}"
        lines = [head]
        if self.span is not None and source_line is not None:
            text = source_line.rstrip("\n")
            start = self.span.col - 1
            end = self.span.end_col if self.span.end_line in (None, self.span.line) else None
            width = max(1, (end or self.span.col + 1) - self.span.col)
            if len(text) > QUOTE_WIDTH:  # quote a window around the column, not a whole huge line
                first = max(0, min(start - QUOTE_WIDTH // 4, len(text) - QUOTE_WIDTH))
                window = text[first:first + QUOTE_WIDTH]
                prefix = "..." if first > 0 else ""
                text = prefix + window + ("..." if first + QUOTE_WIDTH < len(text) else "")
                start = start - first + len(prefix)
                width = max(1, min(width, len(prefix) + QUOTE_WIDTH - start))
            lines.append(text)
            lines.append(" " * start + "^" * width)
        if self.hint:
            lines.append(f"hint: {self.hint}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


class ParameterError(ArchError):
    """A component parameter is unknown, missing, of the wrong type or out of range.

    ``param`` names the parameter given (or missing) when the error is about one, so the
    language can point at the argument that gave it."""

    def __init__(self, message: str, *, hint: str | None = None, span: Span | None = None,
                 param: str | None = None):
        super().__init__(message, hint=hint, span=span)
        self.param = param


class PortError(ArchError):
    """Two ports cannot be connected, or a required port is left unconnected."""


class SimulationError(Exception):
    """A simulation that started but could not finish correctly (exit code 1)."""

    exit_code = 1


class DeadlockError(SimulationError):
    """Work is pending but nothing moves; the message names the stuck channels."""


class ModelAssertion(SimulationError):
    """A model detected an impossible state (raised with ``Component.fail``)."""
