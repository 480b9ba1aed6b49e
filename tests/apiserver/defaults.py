"""What a real API server adds to (or drops from) an object when it is written.

Custom resources: fields the CRD schema does not know are pruned (unless the schema says
`x-kubernetes-preserve-unknown-fields`), then every `default:` of the schema is filled in where its
parent exists, as apiextensions-apiserver does (structural pruning and defaulting).

Built-in types, for the kinds this server holds (sources: k8s.io/kubernetes
pkg/apis/*/v1/defaults.go and registry strategies, 1.32):
- Secret: `type: Opaque`; `stringData` merged into base64 `data` and dropped.
- Namespace: `spec.finalizers: [kubernetes]`, `status.phase: Active`, label
  `kubernetes.io/metadata.name`.
- Service: `type: ClusterIP`, `sessionAffinity: None`, `ipFamilies: [IPv4]`,
  `ipFamilyPolicy: SingleStack`, `internalTrafficPolicy: Cluster`, an allocated `clusterIP`
  (`clusterIPs`), per port `protocol: TCP` and `targetPort` = `port`, `status.loadBalancer: {}`.
- Deployment: `replicas: 1`, `revisionHistoryLimit: 10`, `progressDeadlineSeconds: 600`,
  `strategy` RollingUpdate 25%/25%, and the pod template defaults below.
- Pod template: `restartPolicy: Always`, `terminationGracePeriodSeconds: 30`,
  `dnsPolicy: ClusterFirst`, `schedulerName: default-scheduler`, `securityContext: {}`; per
  container `terminationMessagePath`, `terminationMessagePolicy: File`, `imagePullPolicy`
  (Always for `:latest` or untagged images, else IfNotPresent), port `protocol: TCP`.
- ConfigMap, ServiceAccount, Node, Pod (other than the template defaults): none.
"""

from __future__ import annotations

import base64
import copy
import itertools
from typing import Any

__all__ = ["apply_builtin_defaults", "default_custom", "prune_custom"]

_cluster_ips = itertools.count(10)


def prune_custom(value: Any, schema: dict[str, Any], top: bool = True) -> Any:
    """Drop what the structural schema does not declare."""
    if not schema or schema.get("x-kubernetes-preserve-unknown-fields"):
        if isinstance(value, dict) and schema.get("properties"):
            for key, sub in schema["properties"].items():
                if key in value:
                    value[key] = prune_custom(value[key], sub, False)
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for key in list(value):
            if top and key in ("apiVersion", "kind", "metadata"):
                continue  # metadata is the server's, never pruned by the CRD schema
            if props is not None and key in props:
                value[key] = prune_custom(value[key], props[key], False)
            elif isinstance(extra, dict):
                value[key] = prune_custom(value[key], extra, False)
            elif extra is not True:
                del value[key]
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [prune_custom(v, schema["items"], False) for v in value]
    return value


def default_custom(value: Any, schema: dict[str, Any]) -> Any:
    """Fill schema defaults top-down where the parent object exists."""
    if isinstance(value, dict):
        for key, sub in (schema.get("properties") or {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                value[key] = default_custom(value[key], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            known = schema.get("properties") or {}
            for key in value:
                if key not in known:
                    value[key] = default_custom(value[key], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [default_custom(v, schema["items"]) for v in value]
    return value


def _pod_spec(spec: dict[str, Any]) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for container in [*spec.get("initContainers", []), *spec.get("containers", [])]:
        image = str(container.get("image", ""))
        tag = image.rsplit("/", 1)[-1]
        latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
        container.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        container.setdefault("terminationMessagePath", "/dev/termination-log")
        container.setdefault("terminationMessagePolicy", "File")
        for port in container.get("ports", []):
            port.setdefault("protocol", "TCP")


def apply_builtin_defaults(obj: dict[str, Any]) -> None:
    kind, name = obj.get("kind"), obj["metadata"]["name"]
    if kind == "Secret":
        obj.setdefault("type", "Opaque")
        if string_data := obj.pop("stringData", None):
            data = obj.setdefault("data", {})
            for key, text in string_data.items():
                data[key] = base64.b64encode(str(text).encode()).decode()
    elif kind == "Namespace":
        obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = name
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
    elif kind == "Service":
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec.get("clusterIP") != "None":
            ip = spec.setdefault("clusterIP", f"10.96.0.{next(_cluster_ips) % 250 + 2}")
            spec.setdefault("clusterIPs", [ip])
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
        for port in spec.get("ports", []):
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
        obj.setdefault("status", {}).setdefault("loadBalancer", {})
    elif kind == "Deployment":
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
        if strategy.get("type") == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        template = spec.setdefault("template", {})
        template.setdefault("metadata", {}).setdefault("creationTimestamp", None)
        _pod_spec(template.setdefault("spec", {}))
    elif kind == "Pod":
        _pod_spec(obj.setdefault("spec", {}))
