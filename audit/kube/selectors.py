"""Kubernetes label selectors and kustomize Selectors, matched against an object in memory.

Why this exists: Flux ignore rules name their targets with kustomize Selectors (classify.py), and
a snapshot folder answers a list by label selector the way the API server would (live.py).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["selector_matches", "target_matches"]


def target_matches(target: dict[str, Any], obj: dict[str, Any]) -> bool:
    """kustomize.Selector: regexes on group/version/kind/name/namespace (label selectors: =, !=)."""
    api_version = str(obj.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    meta = obj.get("metadata") or {}
    values = {
        "group": group,
        "version": version,
        "kind": str(obj.get("kind", "")),
        "name": str(meta.get("name", "")),
        "namespace": str(meta.get("namespace") or ""),
    }
    for key, value in values.items():
        want = target.get(key)
        if want and not re.fullmatch(str(want), value):
            return False
    for key, source in (("labelSelector", "labels"), ("annotationSelector", "annotations")):
        selector = target.get(key)
        if selector and not selector_matches(str(selector), meta.get(source) or {}):
            return False
    return True


def selector_matches(selector: str, labels: dict[str, Any]) -> bool:
    """A label selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-separated: all must hold)."""
    for term in (t.strip() for t in selector.split(",") if t.strip()):
        if "!=" in term:
            k, v = (s.strip() for s in term.split("!=", 1))
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = (s.strip() for s in term.replace("==", "=").split("=", 1))
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True
