"""A strict validator for objects against real CustomResourceDefinitions (`validate --crds DIR`).

An API server validates a custom object against its CRD's openAPIV3Schema but first *prunes* what
the schema does not declare: an unknown field, a misspelt key, a null in a non-nullable field or a
`status` sent to a status subresource is dropped without a word. For a renderer that is a bug, so
this validator turns each of those into an error. It translates openAPIV3Schema into JSON Schema
(draft 2020-12) and validates with jsonschema:

- a node that declares `properties`, or is `type: object`, without `additionalProperties` or
  `x-kubernetes-preserve-unknown-fields: true` rejects other keys;
- `x-kubernetes-int-or-string: true` accepts an integer or a string, `nullable: true` also null;
- `format: int32`/`int64` bound the integer; `x-kubernetes-list-type: set|map` reject duplicates;
- `x-kubernetes-validations` (CEL) are evaluated from a table of the rules these CRDs use; a rule
  not in the table is an error in strict mode (the tests: someone must add it) and is counted as
  not evaluated otherwise (a user's newer CRDs must not fail validation);
- `metadata` is checked as ObjectMeta: name, namespace by scope, labels and annotations only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from kubedata.errors import YamlError
from kubedata.yaml_io import documents

from renderer.errors import RenderError

__all__ = [
    "CEL_RULES",
    "CRDFileError",
    "Kind",
    "Registry",
    "namespace_kind",
    "object_meta_schema",
    "strict_schema",
]

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
_DNS_SUBDOMAIN = rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"
_QUALIFIED_NAME = rf"^({_DNS_SUBDOMAIN}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{{0,61}}[A-Za-z0-9])?$"
_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"
_INT_BOUNDS = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


def _has(*keys: str) -> Callable[[dict[str, Any]], bool]:
    return lambda s: any(k in s for k in keys)


CEL_RULES: dict[str, Callable[[dict[str, Any]], bool]] = {
    # helm-controller v1.5.0 HelmRelease v2; kustomize-controller v1.8.0 Kustomization v1
    "has(self.configMapRef) || has(self.secretRef)": _has("configMapRef", "secretRef"),
    "!has(self.configMapRef) || !has(self.secretRef)": lambda s: (
        not ("configMapRef" in s and "secretRef" in s)
    ),
    "(has(self.chart) && !has(self.chartRef)) || (!has(self.chart) && has(self.chartRef))": (
        lambda s: ("chart" in s) != ("chartRef" in s)
    ),
    "!has(self.retryInterval) || self.name != 'RemediateOnFailure'": lambda s: (
        "retryInterval" not in s or s.get("name") != "RemediateOnFailure"
    ),
    "!has(self.retryInterval) || self.name == 'RetryOnFailure'": lambda s: (
        "retryInterval" not in s or s.get("name") == "RetryOnFailure"
    ),
    # source-controller v1.8.0 GitRepository v1
    "!has(self.serviceAccountName) || (has(self.provider) && self.provider == 'azure')": lambda s: (
        "serviceAccountName" not in s or s.get("provider") == "azure"
    ),
}
"""CEL rules of the reference CRDs, as Python; the rule text must match the CRD's exactly."""


def object_meta_schema(namespaced: bool, name_pattern: str = _DNS_SUBDOMAIN) -> dict[str, Any]:
    """ObjectMeta as a manifest in git may carry it: no server-set or generated fields."""
    properties: dict[str, Any] = {
        "name": {"type": "string", "maxLength": 253, "pattern": f"^{name_pattern}$"},
        "labels": {
            "type": "object",
            "propertyNames": {"pattern": _QUALIFIED_NAME},
            "additionalProperties": {"type": "string", "pattern": _LABEL_VALUE},
        },
        "annotations": {
            "type": "object",
            "propertyNames": {"pattern": _QUALIFIED_NAME},
            "additionalProperties": {"type": "string"},
        },
    }
    if namespaced:
        # Flux applies with no default namespace: a namespaced object must name its own.
        properties["namespace"] = {"type": "string", "maxLength": 63, "pattern": f"^{_DNS_LABEL}$"}
    return {
        "type": "object",
        "properties": properties,
        "required": ["name", "namespace"] if namespaced else ["name"],
        "additionalProperties": False,
    }


def strict_schema(node: Any) -> Any:
    """openAPIV3Schema -> JSON Schema that rejects what an API server would prune."""
    if isinstance(node, list):
        return [strict_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties"):
            out[key] = {k: strict_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not", "allOf", "anyOf", "oneOf"):
            out[key] = strict_schema(value)
        elif key in ("description", "default", "example", "x-kubernetes-map-type"):
            continue
        else:
            out[key] = value
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        for k in ("apiVersion", "kind"):
            props.setdefault(k, {"type": "string"})
        props.setdefault(
            "metadata", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        )
    declares_object = "properties" in node or node.get("type") == "object"
    if declares_object and "additionalProperties" not in node and not preserve:
        out["additionalProperties"] = False
    if node.get("x-kubernetes-int-or-string"):
        # The CRD states it as anyOf [integer, string] (or not at all): say it once, as a type.
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    bounds = _INT_BOUNDS.get(node.get("format", ""))
    if bounds and node.get("type") == "integer":
        out.setdefault("minimum", bounds[0])
        out.setdefault("maximum", bounds[1])
    if node.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = [*types, "null"]
    return out


def _list_type(
    validator: Any, list_type: str, instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not isinstance(instance, list):
        return
    if list_type == "set":
        seen: list[Any] = []
        for item in instance:
            if item in seen:
                yield jsonschema.ValidationError(f"duplicate {item!r} in a list-type set")
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: set[tuple[Any, ...]] = set()
        for item in instance:
            if isinstance(item, dict):
                key = tuple(item.get(k) for k in keys)
                if key in seen_keys:
                    yield jsonschema.ValidationError(
                        f"duplicate list-map key {dict(zip(keys, key, strict=True))}"
                    )
                seen_keys.add(key)


def _cel(
    validator: Any, rules: list[dict[str, Any]], instance: Any, schema: dict[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    if not isinstance(instance, dict):
        return
    for rule in rules:
        check = CEL_RULES.get(rule["rule"])
        if check is None:
            if validator.STRICT_CEL:
                yield jsonschema.ValidationError(
                    f"CEL rule {rule['rule']!r} is not in renderer.crds.CEL_RULES: add it"
                )
        elif not check(instance):
            yield jsonschema.ValidationError(f"{rule.get('message', 'CEL rule')} ({rule['rule']})")


_STRICT = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {"x-kubernetes-list-type": _list_type, "x-kubernetes-validations": _cel},
)
_STRICT.STRICT_CEL = True
_LENIENT = jsonschema.validators.extend(_STRICT, {})
_LENIENT.STRICT_CEL = False


@dataclass
class Kind:
    """One served version of one kind, with the schema its objects are checked against."""

    api_version: str
    kind: str
    namespaced: bool
    source: str
    openapi: dict[str, Any] = field(repr=False)
    has_status_subresource: bool = False
    name_pattern: str = _DNS_SUBDOMAIN
    strict: bool = True
    """Unknown CEL rules are errors (tests) rather than left unevaluated (users' CRDs)."""
    _validator: Any = field(default=None, repr=False)

    def schema(self) -> dict[str, Any]:
        root: dict[str, Any] = strict_schema(self.openapi)
        props = root.setdefault("properties", {})
        props["apiVersion"] = {"const": self.api_version}
        props["kind"] = {"const": self.kind}
        props["metadata"] = object_meta_schema(self.namespaced, self.name_pattern)
        if self.has_status_subresource:
            props.pop("status", None)  # the server ignores status on the main resource
        root["required"] = sorted({*root.get("required", []), "apiVersion", "kind", "metadata"})
        root["additionalProperties"] = False
        return root

    def errors(self, obj: Any) -> list[str]:
        if self._validator is None:
            schema = self.schema()
            cls = _STRICT if self.strict else _LENIENT
            cls.check_schema(schema)
            self._validator = cls(schema)
        found = sorted(
            self._validator.iter_errors(obj), key=lambda e: [str(p) for p in e.absolute_path]
        )
        return [f"{_pointer(e.absolute_path)}: {e.message}" for e in found]


def _pointer(path: Iterable[Any]) -> str:
    return "/" + "/".join(str(p) for p in path)


def namespace_kind() -> Kind:
    """The built-in core/v1 Namespace, as far as a manifest in git may set it."""
    openapi = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "finalizers": {
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set",
                    }
                },
            }
        },
    }
    return Kind("v1", "Namespace", False, "built-in", openapi, True, _DNS_LABEL)


class CRDFileError(RenderError):
    """A file in the CRD folder cannot be read as YAML."""


class Registry:
    """Schemas by (apiVersion, kind), read from CRD files; the first file naming a kind wins."""

    def __init__(self, kinds: Iterable[Kind] = ()) -> None:
        self.kinds: dict[tuple[str, str], Kind] = {}
        for kind in kinds:
            self.kinds.setdefault((kind.api_version, kind.kind), kind)

    @classmethod
    def from_files(
        cls, paths: Iterable[Path], extra: Iterable[Kind] = (), *, strict: bool = True
    ) -> Registry:
        kinds = list(extra)
        for path in paths:
            try:
                docs = [doc for _, doc in documents(path.read_text(encoding="utf-8"), str(path))]
            except YamlError as exc:
                raise CRDFileError(f"{exc}; not a file of CRDs") from None
            except (OSError, UnicodeDecodeError) as exc:
                reason = str(exc).splitlines()[0]
                raise CRDFileError(f"{path}: not a YAML file of CRDs ({reason})") from None
            for doc in docs:
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    kinds += crd_kinds(doc, path.name, strict=strict)
        return cls(kinds)

    def errors(self, obj: Any) -> list[str]:
        """Every problem of one object, each as `Kind/name: /pointer: message`."""
        if not isinstance(obj, dict):
            return [f"not an object: {obj!r}"]
        api_version, kind_name = obj.get("apiVersion"), obj.get("kind")
        name = f"{kind_name}/{(obj.get('metadata') or {}).get('name')}"
        kind = self.kinds.get((str(api_version), str(kind_name)))
        if kind is None:
            return [f"{name}: no schema for apiVersion {api_version!r} kind {kind_name!r}"]
        return [f"{name}: {e}" for e in kind.errors(obj)]


def crd_kinds(crd: dict[str, Any], source: str, *, strict: bool = True) -> list[Kind]:
    """The served, not deprecated versions of a CRD."""
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    out = []
    for version in spec["versions"]:
        if not version.get("served") or version.get("deprecated"):
            continue
        out.append(
            Kind(
                api_version=f"{group}/{version['name']}",
                kind=kind,
                namespaced=spec["scope"] == "Namespaced",
                source=source,
                openapi=version["schema"]["openAPIV3Schema"],
                has_status_subresource="status" in (version.get("subresources") or {}),
                strict=strict,
            )
        )
    return out
