"""API request paths -> the RBAC rule each needs, to compare the audit job's RBAC with what the
auditor requests from the test API server (`ApiServer.requests`).

Discovery (`/api`, `/apis`, `/apis/<group>[/<version>]`, `/version`, `/openapi/...`) needs no rule:
every authenticated user may read it (ClusterRole system:discovery).
"""

from __future__ import annotations

from collections.abc import Iterable

from renderer.audit_rbac import RbacRule

__all__ = ["request_rule", "uncovered", "unused"]


def request_rule(path: str) -> RbacRule | None:
    """(apiGroup, resource, namespace or None) a GET of `path` needs; None for discovery."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    return (group, rest[0], namespace)


def _covers(rule: RbacRule, need: RbacRule) -> bool:
    return rule[:2] == need[:2] and (rule[2] is None or rule[2] == need[2])


def uncovered(rules: Iterable[RbacRule], paths: Iterable[str]) -> list[str]:
    """Paths no rule allows."""
    granted = list(rules)
    needs = [(p, request_rule(p)) for p in paths]
    return [p for p, need in needs if need and not any(_covers(r, need) for r in granted)]


def unused(rules: Iterable[RbacRule], paths: Iterable[str]) -> list[RbacRule]:
    """Rules no request needed ("nothing more" than the auditor reads)."""
    needs = [n for n in (request_rule(p) for p in paths) if n]
    return [r for r in rules if not any(_covers(r, n) for n in needs)]
