"""Diagnostics of the ``.arch`` front end.

Every problem in a source file is an :class:`~archmodel.kernel.ArchError` with a span.
``archmodel check`` reports all independent problems of one pass together, so the front end
collects them into :class:`LanguageErrors`, which renders each one as
``file:line:col: error: message``, the source line, a caret under the span and a hint.
"""

from __future__ import annotations

from ..kernel import ArchError, Span


class SourceText:
    """The text of every file read in one load, so diagnostics can quote their lines, and the
    SHA-256 of every file read (for the run manifest)."""

    def __init__(self) -> None:
        self.files: dict[str, list[str]] = {}
        self.digests: dict[str, str] = {}

    def add(self, name: str, text: str) -> None:
        self.files[name] = text.splitlines()

    def line(self, span: Span | None) -> str | None:
        if span is None or span.file not in self.files:
            return None
        lines = self.files[span.file]
        if 1 <= span.line <= len(lines):
            return lines[span.line - 1]
        return "" if span.line == len(lines) + 1 else None


def render(error: ArchError, sources: SourceText) -> str:
    """One diagnostic with the quoted source line."""
    return error.render(sources.line(error.span))


class LanguageErrors(ArchError):
    """One or more diagnostics from loading a ``.arch`` file, in source order."""

    def __init__(self, errors: list[ArchError], sources: SourceText):
        file_order: dict = {}
        for err in errors:
            file_order.setdefault(err.span.file if err.span else "", len(file_order))
        errors = sorted(errors, key=lambda e: _position(e, file_order))
        first = errors[0]
        super().__init__(first.message, hint=first.hint, span=first.span)
        self.errors = errors
        self.sources = sources

    def render(self, source_line: str | None = None) -> str:
        parts = [render(err, self.sources) for err in self.errors]
        count = len(self.errors)
        parts.append(f"{count} error{'s' if count != 1 else ''}")
        return "\n".join(parts)


def _position(error: ArchError, file_order: dict):
    span = error.span
    if span is None:
        return (file_order[""], 0, 0)
    return (file_order[span.file], span.line, span.col)
