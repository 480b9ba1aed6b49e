"""Exceptions of the base package; each product maps them onto its own hierarchy.

KubeDataError           base
 +-- RetriesExhausted    a call kept failing in a retryable way (kubedata.retry)
"""

from __future__ import annotations

__all__ = ["KubeDataError", "RetriesExhausted"]


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
