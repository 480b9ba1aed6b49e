"""Exceptions of the renderer.

RenderError                 base (a kubedata.errors.GpuGitopsError): the CLI prints its message
                            (one line per problem) and exits 2
 +-- ProfileError            a profile (or platform.yaml) breaks the contract; carries every problem
 +-- BuildError              kustomize could not build an overlay
 +-- WriteError              files could not be written; nothing was changed
 +-- GitError                a git repository or ref cannot be read or written
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from kubedata.errors import GpuGitopsError, YamlError
from kubedata.text import inert

__all__ = [
    "BuildError",
    "GitError",
    "Problem",
    "ProfileError",
    "RenderError",
    "WriteError",
    "yaml_problems",
]

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Problem:
    """One finding about an input file: where, which field, what is wrong and how to fix it."""

    file: str
    line: int
    field: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        # Field names and values come from the file: one line, whatever they hold.
        where = f"{self.file}:{self.line}" if self.line else self.file
        field = f"{self.field}: " if self.field else ""
        return inert(f"{where}: {self.severity}: {field}{self.message}")


class RenderError(GpuGitopsError):
    """Base of every error the renderer raises on purpose."""


class ProfileError(RenderError):
    """One or more errors in a profile; str() gives one line per problem."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BuildError(RenderError):
    """kustomize failed on an overlay."""


class WriteError(RenderError):
    """Writing output failed; the previous files are untouched."""


class GitError(RenderError):
    """A git operation failed."""


@contextmanager
def yaml_problems() -> Iterator[None]:
    """A YAML file the renderer reads that cannot be read is a ProfileError: one Problem at the
    file and line kubedata.yaml_io names."""
    try:
        yield
    except YamlError as exc:
        raise ProfileError([Problem(exc.file, exc.line, "", exc.message)]) from None
