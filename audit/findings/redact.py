"""Secrets never leave the auditor: Secret data and Helm release values become digests.

Which fields are secret is this module's table; what a secret becomes is the one redaction digest
of kubedata.redact (`{"redacted": "sha256:<hex>"}`, DESIGN §6), the same `diff` shows, so equal
values compare equal across runs, reports and products. Redaction happens when a finding is made,
before any report sees it, so no output format can leak what it never got.
"""

from __future__ import annotations

from typing import Any

from kubedata.redact import digest

from audit.compare.patterns import Pattern, compile_pattern

__all__ = ["SENSITIVE", "scrub", "sensitive_paths"]

SENSITIVE: dict[tuple[str, str], tuple[Pattern, ...]] = {
    ("", "Secret"): (compile_pattern("data"), compile_pattern("stringData")),
    # values can carry passwords and tokens (they are what a release Secret's `config` stores)
    ("helm.toolkit.fluxcd.io", "HelmRelease"): (compile_pattern("spec/values"),),
}


def sensitive_paths(group: str, kind: str) -> tuple[Pattern, ...]:
    return SENSITIVE.get((group, kind), ())


def scrub(group: str, kind: str, field_path: tuple[str, ...], value: Any) -> tuple[Any, bool]:
    """(value with every sensitive part replaced by its digest, whether anything was)."""
    if value is None:
        return None, False
    redacted = False
    for pattern in sensitive_paths(group, kind):
        if field_path[: len(pattern)] == pattern:
            return digest(value), True
        if pattern[: len(field_path)] == field_path:
            value, hit = _scrub_below(value, pattern[len(field_path) :])
            redacted = redacted or hit
    return value, redacted


def _scrub_below(value: Any, rest: Pattern) -> tuple[Any, bool]:
    if not rest:
        return digest(value), True
    if not isinstance(value, dict) or rest[0] not in value:
        return value, False
    inner, hit = _scrub_below(value[rest[0]], rest[1:])
    if not hit:
        return value, False
    return {**value, rest[0]: inner}, True
