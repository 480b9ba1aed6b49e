"""Terminal habits: colour only on a terminal without NO_COLOR, progress only on a terminal."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from kubedata.text import inert, masked

__all__ = ["Console"]

_COLOURS = {"error": "31", "warning": "33", "ok": "32", "dim": "2"}


class Console:
    """Where the CLI writes: data to stdout, messages and progress to stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None):
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.tty = self.err.isatty()
        self.colour = self.tty and not os.environ.get("NO_COLOR")

    def paint(self, text: str, style: str) -> str:
        return f"\033[{_COLOURS[style]}m{text}\033[0m" if self.colour else text

    def data(self, text: str) -> None:
        """Output in its own format (YAML, JSON, markdown, ...), which escapes what it carries;
        a credential in use is masked all the same."""
        self.out.write(masked(text))

    def say(self, text: str) -> None:
        """One message line: whatever it quotes cannot start another line or hide text."""
        self.err.write(inert(text) + "\n")

    def problem(self, line: str) -> None:
        """A `file:line: severity: ...` line, with the severity coloured."""
        line = inert(line)
        for severity in ("error", "warning"):
            marker = f": {severity}: "
            if marker in line:
                head, _, tail = line.partition(marker)
                line = f"{head}: {self.paint(severity, severity)}: {tail}"
                break
        self.err.write(line + "\n")

    def progress(self, done: int, total: int, label: str) -> None:
        """One rewritten status line on a terminal; nothing when piped."""
        if self.tty:
            end = "\n" if done == total else ""
            self.err.write(f"\r\033[K[{done}/{total}] {inert(label)}{end}")
            self.err.flush()
