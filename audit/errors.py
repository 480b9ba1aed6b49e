"""Exceptions of the auditor.

AuditError                 base (a kubedata.errors.GpuGitopsError): the CLI prints its message
                           on one line and exits 2
 +-- KubeConfigError        kubeconfig / in-cluster credentials cannot be used
 +-- KubeApiError           the API server answered with an error Status, or could not be reached
 +-- SnapshotError          a snapshot folder holds something that is not a Kubernetes object
 +-- ReleaseDecodeError     a Helm release Secret cannot be decoded
 +-- IncompleteReadError    a read ended before it was whole (the audit is then never "clean")
"""

from __future__ import annotations

from kubedata.errors import GpuGitopsError

__all__ = [
    "AuditError",
    "IncompleteReadError",
    "KubeApiError",
    "KubeConfigError",
    "ReleaseDecodeError",
    "SnapshotError",
]


class AuditError(GpuGitopsError):
    """Base of every error the auditor raises on purpose."""


class KubeConfigError(AuditError):
    """Credentials or cluster coordinates cannot be loaded."""


class KubeApiError(AuditError):
    """The API server refused a request or could not be reached."""

    def __init__(self, message: str, *, status: int | None = None, reason: str | None = None):
        super().__init__(message)
        self.status = status
        self.reason = reason


class SnapshotError(AuditError):
    """A snapshot folder could not be read as Kubernetes objects."""


class ReleaseDecodeError(AuditError):
    """A Helm release Secret is not in Helm's storage format."""


class IncompleteReadError(AuditError):
    """A read could not be completed; what was read must not be reported as the whole."""
