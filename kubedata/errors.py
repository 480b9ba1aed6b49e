"""Exceptions of the base package; each product maps them onto its own hierarchy.

KubeDataError           base
 +-- RetriesExhausted    a call kept failing in a retryable way (kubedata.retry)
 +-- YamlError           a YAML text is not plain data of one document (kubedata.yaml_io)
"""

from __future__ import annotations

__all__ = ["KubeDataError", "RetriesExhausted", "YamlError"]


class KubeDataError(Exception):
    """Base of every error the base package raises on purpose."""


class RetriesExhausted(KubeDataError):
    """Every attempt failed in a way worth retrying, or the server asked for too long a wait.

    `why` is the last failure; `wait` is the server-asked wait that was too long to honour, or None
    when the attempts ran out.
    """

    def __init__(self, attempts: int, why: str, wait: float | None = None):
        super().__init__(f"failed {attempts} time(s), last: {why}")
        self.attempts = attempts
        self.why = why
        self.wait = wait


class YamlError(KubeDataError):
    """A YAML text that cannot be read: `file`, `line` (1-based; 0 when unknown) and what to do."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")
        self.file = file
        self.line = line
        self.message = message
