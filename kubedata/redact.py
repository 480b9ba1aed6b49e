"""The one redaction digest: what a Secret value (or Helm release values) becomes in every output.

A redacted value is `{"redacted": "sha256:<hex>"}` (DESIGN §6): the SHA-256 of the value's
canonical JSON. `diff` and `audit` both redact through `digest`, so the same value shows the same
digest in each, and equal values still compare equal across runs and reports. Which fields are
secret is each product's policy; how a secret is shown is this module's.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kubedata.objects import canonical

__all__ = ["digest", "is_digest"]


def digest(value: Any) -> dict[str, str]:
    """What `value` shows as wherever it must not appear."""
    return {"redacted": "sha256:" + hashlib.sha256(canonical(value).encode()).hexdigest()}


def is_digest(value: Any) -> bool:
    """Whether `value` is a digest: it stands for one value, compared whole, never walked into."""
    return isinstance(value, dict) and len(value) == 1 and "redacted" in value
