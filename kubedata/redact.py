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

__all__ = ["digest", "is_digest", "secret_key", "secret_paths"]

_SECRET_WORDS = ("password", "passwd", "secret", "token", "apikey", "privatekey", "credential")
# what names a Secret (or lists their names) is no secret: kept
_NAMES = ("name", "ref", "secrets", "file", "path")


def digest(value: Any) -> dict[str, str]:
    """What `value` shows as wherever it must not appear."""
    return {"redacted": "sha256:" + hashlib.sha256(canonical(value).encode()).hexdigest()}


def is_digest(value: Any) -> bool:
    """Whether `value` is a digest: it stands for one value, compared whole, never walked into."""
    return isinstance(value, dict) and len(value) == 1 and "redacted" in value


def secret_key(key: str) -> bool:
    """Whether a values key looks like it holds a secret (`password`, `clientSecret`, `token`,
    `apiKey`, ...), not the name of one (`existingSecret`, `secretName`, `imagePullSecrets`)."""
    k = key.lower().replace("_", "").replace("-", "")
    if k.endswith(_NAMES) or k.startswith("existing"):
        return False
    return any(word in k for word in _SECRET_WORDS)


def secret_paths(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths under `value` whose key looks like a secret and whose value is set (a string, a
    number or a non-empty mapping or list)."""
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in secret_paths(v, (*path, str(i)))]
    if not isinstance(value, dict):
        return []
    out: list[tuple[str, ...]] = []
    for key, inner in value.items():
        here = (*path, str(key))
        if secret_key(str(key)) and inner not in (None, "", {}, []) and not isinstance(inner, bool):
            out.append(here)
        else:
            out += secret_paths(inner, here)
    return out
