"""One deadline for every network step of a command that talks to a git remote (and GitHub):
`publish --push` (its pushes and fetches) and `adopt --pr` (the push and the pull request).

It is a kubedata Budget, so GitHub's client draws on the same one; each git step gets what is left
of it as its timeout (run_git's `deadline`), and run_git ends a step that overruns with everything
it started.
"""

from __future__ import annotations

import math
import os

from kubedata.budget import Budget

from renderer.errors import GitError

__all__ = ["PUSH_TIMEOUT_ENV", "network_budget"]

PUSH_TIMEOUT_ENV = "GPU_GITOPS_PUSH_TIMEOUT"
DEFAULT_SECONDS = 300.0
_MAX_BYTES = 64 * 1024 * 1024
"""GitHub answers the command may read in all (the PR bot's own cap is per answer)."""


def network_budget() -> Budget:
    """The command's deadline, from GPU_GITOPS_PUSH_TIMEOUT (seconds; default 300)."""
    text = os.environ.get(PUSH_TIMEOUT_ENV, "").strip()
    seconds = DEFAULT_SECONDS
    if text:
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not (seconds > 0 and math.isfinite(seconds)):
            raise GitError(f"{PUSH_TIMEOUT_ENV}={text} is not a number of seconds above 0")
    return Budget(seconds, max_wait=seconds, max_bytes=_MAX_BYTES, setting=PUSH_TIMEOUT_ENV)
