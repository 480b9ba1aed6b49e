"""The one exception of `adopt`: its message says what went wrong and what to do."""

from __future__ import annotations

from kubedata.errors import GpuGitopsError

__all__ = ["AdoptError"]


class AdoptError(GpuGitopsError):
    """Adopting failed: nothing was written and no branch is left behind."""
