"""labelSelector and fieldSelector, as the API server parses them.

Label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`, comma-joined.
Field selectors: `metadata.name` and `metadata.namespace` with `=`, `==`, `!=` (what every type
supports; type-specific fields such as `spec.nodeName` are not served).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SelectorError", "field_matcher", "label_matcher"]

Matcher = Callable[[Mapping[str, Any]], bool]

_REQ = re.compile(
    r"\s*(?:(?P<not>!)\s*(?P<nkey>[\w./-]+)"
    r"|(?P<key>[\w./-]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[\w.-]*)"
    r"|\s+(?P<set>in|notin)\s*\((?P<values>[^)]*)\))?)\s*(?:,|$)"
)
_FIELDS = {"metadata.name": "name", "metadata.namespace": "namespace"}


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


def label_matcher(text: str) -> Matcher:
    """A predicate on an object's labels."""
    checks: list[Callable[[Mapping[str, str]], bool]] = []
    for m in _split(text):
        if m["not"]:
            key = m["nkey"]
            checks.append(lambda labels, k=key: k not in labels)
        elif m["op"]:
            key, value, negate = m["key"], m["value"], m["op"] == "!="
            checks.append(lambda labels, k=key, v=value, n=negate: (labels.get(k) == v) != n)
        elif m["set"]:
            values = frozenset(v.strip() for v in m["values"].split(",") if v.strip())
            key, negate = m["key"], m["set"] == "notin"
            checks.append(
                lambda labels, k=key, vs=values, n=negate: (k in labels and labels[k] in vs) != n
            )
        else:
            checks.append(lambda labels, k=m["key"]: k in labels)

    def match(obj: Mapping[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(check(labels) for check in checks)

    return match


def field_matcher(text: str) -> Matcher:
    """A predicate on metadata.name / metadata.namespace."""
    checks: list[tuple[str, str, bool]] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        match = re.fullmatch(r"([\w.]+)\s*(==|=|!=)\s*(.*)", part)
        if not match:
            raise SelectorError(f"invalid selector: {part!r}; can't understand it")
        field, op, value = match.groups()
        if field not in _FIELDS:
            raise SelectorError(f'field label not supported: {field}')
        checks.append((_FIELDS[field], value, op == "!="))

    def match(obj: Mapping[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        return all((str(meta.get(f) or "") == v) != neg for f, v, neg in checks)

    return match
