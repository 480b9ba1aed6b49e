"""RBAC authorization of service-account requests, as kube-apiserver's RBAC authorizer decides it.

A request of `system:serviceaccount:<ns>:<name>` is allowed when a ClusterRoleBinding, or a
RoleBinding in the request's namespace, binds the account (or one of its groups:
`system:serviceaccounts`, `system:serviceaccounts:<ns>`, `system:authenticated`) to a
ClusterRole or Role with a rule matching the verb, the API group, the resource and, where the
rule names any, the object's name (`resourceNames` never match a list or a create: there is no
name). A RoleBinding grants only in its own namespace, even when it refers to a ClusterRole.
Discovery and `/version` are not resources: every authenticated user may read them
(ClusterRole system:discovery). Aggregated ClusterRoles are not resolved.

Sources: kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows, appliesTo) and
pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches,
ResourceNameMatches), v1.32.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SERVICE_ACCOUNT_PREFIX", "Attributes", "allowed"]

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
_RBAC = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class Attributes:
    """What a resource request asks: verb (get, list), group, resource (plural), namespace
    ("" cluster-wide) and name ("" for a collection)."""

    verb: str
    group: str
    resource: str
    namespace: str
    name: str


def _subject_matches(subject: dict[str, Any], user: str, groups: tuple[str, ...]) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return user == f"{SERVICE_ACCOUNT_PREFIX}{subject.get('namespace', '')}:{subject['name']}"
    if kind == "User":
        return bool(subject.get("name") == user)
    return kind == "Group" and subject.get("name") in groups


def _rule_allows(rule: dict[str, Any], want: Attributes) -> bool:
    def has(key: str, value: str) -> bool:
        values = rule.get(key) or []
        return "*" in values or value in values

    names = rule.get("resourceNames") or []
    return (
        has("verbs", want.verb)
        and has("apiGroups", want.group)
        and has("resources", want.resource)
        and (not names or (bool(want.name) and want.name in names))
    )


def _groups(user: str, groups: tuple[str, ...]) -> tuple[str, ...]:
    namespace = user.removeprefix(SERVICE_ACCOUNT_PREFIX).split(":")[0]
    return (
        *groups,
        "system:serviceaccounts",
        f"system:serviceaccounts:{namespace}",
        "system:authenticated",
    )


def allowed(
    objects: list[dict[str, Any]], user: str, groups: tuple[str, ...], want: Attributes
) -> bool:
    """Whether the RBAC objects among `objects` allow the service account's request."""
    every = _groups(user, groups)
    roles = {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
        for o in objects
        if o.get("apiVersion", "").startswith(_RBAC) and o.get("kind") in ("Role", "ClusterRole")
    }
    for binding in objects:
        kind = binding.get("kind")
        if not binding.get("apiVersion", "").startswith(_RBAC) or kind not in (
            "RoleBinding",
            "ClusterRoleBinding",
        ):
            continue
        namespace = binding["metadata"].get("namespace", "")
        if kind == "RoleBinding" and namespace != want.namespace:
            continue
        if not any(_subject_matches(s, user, every) for s in binding.get("subjects") or []):
            continue
        ref = binding.get("roleRef") or {}
        role = roles.get(
            (ref.get("kind", ""), namespace if ref.get("kind") == "Role" else "", ref.get("name"))
        )
        if role is not None and any(_rule_allows(r, want) for r in role.get("rules") or []):
            return True
    return False
