"""labelSelector and fieldSelector, as the API server parses them.

Label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`, comma-joined.
Field selectors: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=` (what every type
supports), plus the type-specific fields of the kinds the auditor lists (KIND_FIELDS); any other
field is refused with 400, as the real server refuses a field its type does not select on.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["KIND_FIELDS", "SelectorError", "field_matcher", "label_matcher"]

Matcher = Callable[[Mapping[str, Any]], bool]

_REQ = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[\w./-]+)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[\w.-]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?)\s*(?:,|$)"
)
_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}
FieldValue = Callable[[Mapping[str, Any]], str]


def _unschedulable(obj: Mapping[str, Any]) -> str:
    return "true" if (obj.get("spec") or {}).get("unschedulable") is True else "false"


KIND_FIELDS: dict[tuple[str, str], dict[str, FieldValue]] = {
    # kubernetes pkg/registry/core/node/strategy.go NodeToSelectableFields
    ("", "nodes"): {"spec.unschedulable": _unschedulable},
}
"""(group, plural) -> selectable field -> its value in an object, beyond the metadata ones."""


class SelectorError(ValueError):
    """Becomes a 400 BadRequest."""


def _split(text: str) -> list[re.Match[str]]:
    pos, out = 0, []
    while pos < len(text):
        match = _REQ.match(text, pos)
        if not match or match.end() == pos:
            raise SelectorError(f"unable to parse requirement: {text[pos:]!r}")
        out.append(match)
        pos = match.end()
    return out


def _requirement(m: re.Match[str]) -> tuple[str, str, frozenset[str]]:
    """(operator, key, values) of one parsed requirement."""
    if m["not"]:
        return "!", m["nkey"], frozenset()
    if m["op"]:
        return ("!=" if m["op"] == "!=" else "="), m["key"], frozenset([m["value"]])
    if m["set"]:
        values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
        return m["set"], m["key"], values
    return "exists", m["key"], frozenset()


def _holds(op: str, key: str, values: frozenset[str], labels: Mapping[str, str]) -> bool:
    if op == "exists":
        return key in labels
    if op == "!":
        return key not in labels
    if op in ("=", "in"):
        return key in labels and labels[key] in values
    return not (key in labels and labels[key] in values)  # != and notin also match a missing key


def label_matcher(text: str) -> Matcher:
    """A predicate on an object's labels."""
    requirements = [_requirement(m) for m in _split(text)]

    def match(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(_holds(op, key, values, labels) for op, key, values in requirements)

    return match


def field_matcher(text: str, kind_fields: Mapping[str, FieldValue] | None = None) -> Matcher:
    """A predicate on metadata.name / metadata.namespace and the type's own `kind_fields`."""
    extra = kind_fields or {}
    checks: list[tuple[FieldValue, str, bool]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        parsed = re.fullmatch(r"([\w.]+)\s*(==|=|!=)\s*(.*)", part)
        if not parsed:
            raise SelectorError(f"invalid selector: {part!r}; can't understand it")
        field, op, value = parsed.groups()
        if field in _FIELDS:
            checks.append((_meta_field(_FIELDS[field]), value, op == "!="))
        elif field in extra:
            checks.append((extra[field], value, op == "!="))
        else:
            raise SelectorError(f"field label not supported: {field}")

    def match(obj: Mapping[str, Any]) -> bool:
        return all((read(obj) == v) != neg for read, v, neg in checks)

    return match


def _meta_field(name: str) -> FieldValue:
    return lambda obj: str((obj.get("metadata") or {}).get(name) or "")
