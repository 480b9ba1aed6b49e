"""The tool's own overlays built in this process: their JSON 6902 patches applied to its bases,
and the result printed as kustomize prints it (kubedata.yaml_go), byte for byte.

kustomize stays the reference: tests/renderer/kustomize/test_inprocess.py builds every example
cluster and a generated variety both ways and compares the bytes. What this module does not
reproduce exactly is left to kustomize (`build_generated` answers None): an overlay it did not
write, a value yaml_go does not print (a float, non-ASCII text...), an operation that fails
(kustomize then says why), names kustomize would treat as patterns, or metadata kustomize rewrites.
"""

from __future__ import annotations

import re
from typing import Any

from kubedata.errors import NotGoYaml
from kubedata.objects import KubeObject, copy_data, pointer_tokens
from kubedata.yaml_go import dump_go

from renderer.bases import BASES
from renderer.errors import RenderError
from renderer.overlays import Op, Overlay

__all__ = ["build_generated"]

# kustomize's legacy order (its default): these kinds first and last, in this order; then by
# group_version_kind, then by kind.version.group|namespace|name (SortOrderTransformer.go)
_FIRST = [
    *("Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount"),
    *("PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"),
    *("ConfigMap", "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass"),
    *("PersistentVolume", "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob"),
    "PodDisruptionBudget",
]
_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
_ORDER = {kind: i - len(_FIRST) for i, kind in enumerate(_FIRST)} | {
    kind: 1 + i for i, kind in enumerate(_LAST)
}
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
"""A target name whose only pattern character is "." (which matches itself too)."""
_KUSTOMIZE_KEYS = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "kustomize.config")


class _LeftToKustomize(RenderError):
    """Something this module does not reproduce exactly: the overlay is built by kustomize."""


def build_generated(overlay: Overlay) -> str | None:
    """The overlay's build, as kustomize prints it; None: build it with kustomize."""
    if overlay.patches is None:
        return None
    try:
        resources = [copy_data(BASES[b][f]) for b in overlay.bases for f in sorted(BASES[b])]
        first_names = [_name(obj) for obj in resources]
        for patch in overlay.patches:
            if not _NAME.fullmatch(patch.name):
                raise _LeftToKustomize(f"target name {patch.name!r} may be a pattern")
            # kustomize selects by kind, and by the name as a pattern, the first or the current
            targets = [
                obj
                for obj, first in zip(resources, first_names, strict=True)
                if obj.get("kind") == patch.kind
                and any(re.fullmatch(patch.name, n) for n in (first, _name(obj)))
            ]
            if not targets:
                raise _LeftToKustomize(f"no {patch.kind} {patch.name}")
            for obj in targets:
                for op in patch.ops:
                    _apply(obj, op)
        return "---\n".join(dump_go(obj) for obj in sorted(resources, key=_sort_key(resources)))
    except (_LeftToKustomize, NotGoYaml):
        return None


def _name(obj: KubeObject) -> str:
    meta = obj.get("metadata")
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str):
        raise _LeftToKustomize("an object without a name")
    return name


def _apply(obj: KubeObject, op: Op) -> None:
    """One `add` or `replace` (RFC 6902); _LeftToKustomize where it would fail."""
    kind, pointer, value = op
    tokens = pointer_tokens(pointer)
    if kind not in ("add", "replace") or not tokens:
        raise _LeftToKustomize(f"{kind} {pointer!r}")
    parent: Any = obj
    for token in tokens[:-1]:
        parent = _child(parent, token)
    last, value = tokens[-1], copy_data(value)
    if isinstance(parent, dict):
        if kind == "replace" and last not in parent:
            raise _LeftToKustomize(f"replace of missing {pointer!r}")
        parent[last] = value
    elif isinstance(parent, list):
        if kind == "add" and last == "-":
            parent.append(value)
            return
        i = _index(last, len(parent) + (kind == "add"))
        if kind == "add":
            parent.insert(i, value)
        else:
            parent[i] = value
    else:
        raise _LeftToKustomize(f"{pointer!r} is inside a scalar")


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict) and token in node:
        return node[token]
    if isinstance(node, list):
        return node[_index(token, len(node))]
    raise _LeftToKustomize(f"no {token!r}")


def _index(token: str, size: int) -> int:
    if not token.isdigit() or (token[0] == "0" and token != "0") or int(token) >= size:
        raise _LeftToKustomize(f"list index {token!r}")
    return int(token)


def _sort_key(resources: list[KubeObject]) -> Any:
    """kustomize's legacy order of these resources, by their identity after the patches."""
    ids = set()
    for obj in resources:
        ids.add(_identity(obj))
        for field in ("labels", "annotations"):
            # kustomize drops an empty map, and its own annotations
            if field not in obj["metadata"]:
                continue
            marks = obj["metadata"][field]
            if (
                not isinstance(marks, dict)
                or not marks
                or any(str(k).startswith(_KUSTOMIZE_KEYS) for k in marks)
            ):
                raise _LeftToKustomize(f"metadata.{field} kustomize may rewrite")
    if len(ids) != len(resources):  # kustomize refuses it: let it say so
        raise _LeftToKustomize("two resources with one identity")
    if len({obj.get("apiVersion") for obj in resources if obj.get("kind") == "Namespace"}) > 1:
        raise _LeftToKustomize("Namespaces of two apiVersions (a special case of the order)")

    def key(obj: KubeObject) -> tuple[int, str, str]:
        group, version, kind, namespace, name = _identity(obj)
        gvk = "_".join([group or "~G", version or "~V", kind or "~K"])
        resid = ".".join([kind or "[noKind]", version or "[noVer]", group or "[noGrp]"])
        return _ORDER.get(kind, 0), gvk, f"{resid}|{namespace or '~X'}|{name or '~N'}"

    return key


def _identity(obj: KubeObject) -> tuple[str, str, str, str, str]:
    name = _name(obj)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    namespace = obj["metadata"].get("namespace", "")
    if not all(isinstance(v, str) for v in (api_version, kind, namespace)):
        raise _LeftToKustomize("apiVersion, kind or namespace is not a string")
    group, _, version = str(api_version).rpartition("/")
    return group, version, str(kind), str(namespace), name
