"""Server-set metadata and continue tokens, as kube-apiserver writes them."""

from __future__ import annotations

import base64
import binascii
import json
import time
from typing import Any

__all__ = [
    "InvalidContinue",
    "decode_token",
    "encode_token",
    "fields_v1",
    "ordered_meta",
    "timestamp",
    "update_entry",
]

_SERVER_META = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "name",
    "namespace",
    "selfLink",
)


class InvalidContinue(ValueError):
    """A continue token that does not decode: 400."""


def fields_v1(value: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, sub in value.items():
        if isinstance(sub, dict) and sub:
            out[f"f:{key}"] = (
                {".": {}, **fields_v1(sub)} if key in ("labels", "annotations") else fields_v1(sub)
            )
        else:
            out[f"f:{key}"] = {}
    return out


def timestamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def ordered_meta(meta: dict[str, Any]) -> dict[str, Any]:
    order = (
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    )
    return {
        **{k: meta[k] for k in order if k in meta},
        **{k: v for k, v in meta.items() if k not in order},
    }


def update_entry(obj: dict[str, Any], manager: str, when: str) -> dict[str, Any]:
    meta = {k: v for k, v in obj["metadata"].items() if k not in _SERVER_META}
    owned = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata", "status")}
    fields = fields_v1(owned)
    if meta:
        fields = {"f:metadata": fields_v1(meta), **fields}
    return {
        "manager": manager,
        "operation": "Update",
        "apiVersion": obj["apiVersion"],
        "time": when,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


def encode_token(rv: int, last: tuple[str, str]) -> str:
    # Same shape as the real server's token: base64url of {"v","rv","start"}.
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{last[0]}/{last[1]}\x00"})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_token(token: str) -> tuple[int, tuple[str, str]]:
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        ns, _, name = str(raw["start"]).rstrip("\x00").partition("/")
        if raw.get("v") != "meta.k8s.io/v1":
            raise ValueError("unknown version")
        return int(raw["rv"]), (ns, name)
    except (binascii.Error, ValueError, KeyError, TypeError) as exc:
        raise InvalidContinue(f"continue key is not valid: {exc}") from None
