"""The one exception of `adopt`: its message says what went wrong and what to do."""

from __future__ import annotations

__all__ = ["AdoptError"]


class AdoptError(Exception):
    """Adopting failed: nothing was written and no branch is left behind."""
