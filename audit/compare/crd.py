"""What the CustomResourceDefinition a cluster serves says of a kind: its schema defaults, its list
semantics and which fields it keeps.

Why this exists: the defaults of known_types.py hold across every release of a CRD; the cluster
serves one. Read from the cluster (or from a CRD in a snapshot), the served schema says exactly
which values the API server filled in, how server-side apply merges each list
(`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) and which declared fields it prunes (an
older CRD than the chart expects). Without it, `tables_schema` says the same of the release the
cluster runs, or of what every candidate release agrees on, from the generated tables
(crd_tables.py). Pure: the CRD object comes from `Live.crd`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kubedata.diff import ListRule
from kubedata.objects import KubeObject

from audit.compare.crd_tables import KindTable
from audit.compare.known_types import Default

__all__ = ["Schema", "schema_of", "tables_schema"]

_Path = tuple[str, ...]


@dataclass(frozen=True)
class Schema:
    """One served version of a custom resource's schema."""

    source: str
    """`CRD <name> <version>`, for notes."""
    defaults: tuple[Default, ...] = ()
    """Every `default:` below spec, at its field path (`*` for list items and map values)."""
    lists: Mapping[_Path, ListRule] = field(default_factory=dict)
    """Field path of each list the schema marks -> how server-side apply treats it."""
    root: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """The openAPIV3Schema, for `keeps`."""

    def list_rule(self, field_path: _Path) -> ListRule | None:
        return self.lists.get(field_path)

    def keeps(self, field_path: _Path) -> bool:
        """Whether the API server keeps a value at this path (an unknown field is pruned, unless
        the schema preserves unknown fields there); always, for a schema of the tables (no root)."""
        if not self.root:
            return True
        node: Any = self.root
        for segment in field_path:
            if not isinstance(node, dict) or node.get("x-kubernetes-preserve-unknown-fields"):
                return True
            if segment == "*" and isinstance(node.get("items"), dict):
                node = node["items"]
            elif segment in (node.get("properties") or {}):
                node = node["properties"][segment]
            elif isinstance(node.get("additionalProperties"), dict):
                node = node["additionalProperties"]
            else:
                return node.get("additionalProperties") is True
        return True


def _version(crd: KubeObject, want: str) -> Mapping[str, Any] | None:
    """The served version named `want`, else the storage version."""
    versions = [v for v in ((crd.get("spec") or {}).get("versions") or ()) if isinstance(v, dict)]
    for version in versions:
        if version.get("name") == want and version.get("served", True):
            return version
    return next((v for v in versions if v.get("storage")), None)


def _walk(node: Any, path: _Path) -> Iterator[tuple[_Path, Mapping[str, Any]]]:
    """(field path, schema node) of every node below `node`."""
    if not isinstance(node, dict):
        return
    yield path, node
    for name, sub in (node.get("properties") or {}).items():
        yield from _walk(sub, (*path, name))
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], (*path, "*"))
    if isinstance(node.get("additionalProperties"), dict):
        yield from _walk(node["additionalProperties"], (*path, "*"))


def _list_rule(node: Mapping[str, Any]) -> ListRule | None:
    kind = node.get("x-kubernetes-list-type")
    if kind == "map":
        keys = tuple(str(k) for k in node.get("x-kubernetes-list-map-keys") or ())
        return ListRule(keys=keys, atomic=False, ordered=False) if keys else None
    if kind == "set":
        return ListRule(keys=None, atomic=False, ordered=False)
    if kind == "atomic":
        return ListRule(keys=None, atomic=True, ordered=True)
    return None


def schema_of(crd: KubeObject, api_version: str) -> Schema | None:
    """The schema of the version `api_version` names (the storage version if the CRD does not
    serve it); None when the CRD carries no structural schema."""
    version = _version(crd, api_version.rpartition("/")[2])
    root = ((version or {}).get("schema") or {}).get("openAPIV3Schema")
    if not isinstance(root, dict):
        return None
    name = str((crd.get("metadata") or {}).get("name", ""))
    source = f"CRD {name} {(version or {}).get('name', '')}".strip()
    defaults: list[Default] = []
    lists: dict[_Path, ListRule] = {}
    for path, node in _walk(root, ()):
        if path[:1] != ("spec",):
            continue  # metadata is the server's, status is never compared
        if "default" in node:
            defaults.append(Default(path, node["default"], source))
        if node.get("type") == "array":
            rule = _list_rule(node)
            if rule is not None:
                lists[path] = rule
    return Schema(source, tuple(defaults), lists, root)


def tables_schema(table: KindTable, candidates: frozenset[str], source: str) -> Schema:
    """What the `candidates` releases of the kind's CRD agree on (crd_tables.py), as a schema: a
    default of every candidate, a list every candidate marks alike. No structure: `keeps` keeps
    everything (an unknown field is not told from one of another release)."""
    defaults = tuple(
        Default(e.path, e.value, source) for e, every in table.agreed_defaults(candidates) if every
    )
    return Schema(source, defaults, table.agreed_lists(candidates))
