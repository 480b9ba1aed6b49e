"""Helm release storage: the newest deployed revision of each release, decoded from its Secret.

Helm (3 and 4) stores each revision in a Secret `sh.helm.release.v1.<release>.v<N>` of type
`helm.sh/release.v1`, labelled owner=helm, name, version and status
(`pkg/storage/driver/secrets.go`). `data.release` is, from the outside in: base64 (the API's
encoding of Secret data), base64 (Helm's), gzip (absent in old releases: look for the magic bytes
1f 8b), JSON of the release record (`pkg/release/v1/release.go`). The record keeps the rendered
`manifest` (hooks excluded), the chart's metadata, the user values (`config`) and, from Helm 4,
`apply_method` ("ssa" or "csa"; empty means client-side, a release installed by Helm 3).

Values can hold secrets: only their digest leaves this module, and no error quotes the payload.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kubedata.errors import YamlError
from kubedata.objects import KubeObject
from kubedata.redact import digest
from kubedata.yaml_io import documents

from audit.errors import ReleaseDecodeError

__all__ = [
    "MAX_RELEASE_BYTES",
    "RELEASE_SECRET_TYPE",
    "HelmRelease",
    "decode_release",
    "is_release_secret",
    "load_releases",
    "newest_deployed",
    "values_digest",
]

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
MAX_RELEASE_BYTES = 64 << 20
"""Cap on the decompressed record: a Secret holds at most 1 MiB, so more is a zip bomb."""
_NAME = re.compile(r"^sh\.helm\.release\.v1\.(?P<release>.+)\.v(?P<revision>[0-9]+)$")


@dataclass(frozen=True)
class HelmRelease:
    """One decoded release revision. Values are represented by their digest only."""

    name: str
    namespace: str
    revision: int
    status: str
    chart_name: str
    chart_version: str
    app_version: str
    apply_method: str
    """"ssa" or "csa" (Helm 4 writes it; empty in the record means csa)."""
    values_digest: str
    """`sha256:<hex>` of the user values as canonical JSON."""
    objects: tuple[KubeObject, ...]
    """The manifest's objects, in manifest order; hooks are not part of it."""
    secret: str
    """`namespace/name` of the Secret this came from."""


def is_release_secret(obj: KubeObject) -> bool:
    return (
        obj.get("kind") == "Secret"
        and obj.get("type") == RELEASE_SECRET_TYPE
        and bool(_NAME.match(str((obj.get("metadata") or {}).get("name", ""))))
    )


def _revision_of(secret: KubeObject) -> tuple[str, int, str]:
    """(release, revision, status) from labels, falling back to the name for the first two."""
    meta = secret.get("metadata") or {}
    labels = meta.get("labels") or {}
    match = _NAME.match(str(meta.get("name", "")))
    assert match is not None
    release = str(labels.get("name") or match["release"])
    version = str(labels.get("version") or match["revision"])
    revision = int(version) if version.isdigit() else int(match["revision"])
    return release, revision, str(labels.get("status", ""))


def newest_deployed(secrets: Iterable[KubeObject]) -> list[KubeObject]:
    """Per (namespace, release), the Secret of the highest revision labelled deployed."""
    best: dict[tuple[str, str], tuple[int, KubeObject]] = {}
    for secret in secrets:
        if not is_release_secret(secret):
            continue
        release, revision, status = _revision_of(secret)
        if status != "deployed":
            continue
        where = (str(secret["metadata"].get("namespace", "")), release)
        if where not in best or revision > best[where][0]:
            best[where] = (revision, secret)
    return [best[k][1] for k in sorted(best)]


def values_digest(values: Any) -> str:
    """The redaction digest of the user values (none: `{}`), as `sha256:<hex>`."""
    return digest(values or {})["redacted"]


def _payload(secret: KubeObject, where: str) -> bytes:
    """The release record's JSON bytes, undoing both base64 layers and gzip."""
    fail = f"Helm release Secret {where}"
    data = (secret.get("data") or {}).get("release")
    if not isinstance(data, str) or not data:
        raise ReleaseDecodeError(f"{fail} has no data.release: is it a Helm release Secret?")
    try:
        helm_layer = base64.b64decode(data, validate=True)
        raw = base64.b64decode(helm_layer, validate=True)
    except binascii.Error:
        raise ReleaseDecodeError(
            f"{fail}: data.release is not base64 inside base64 as Helm writes it; "
            "was it written by Helm?"
        ) from None
    if raw[:2] != b"\x1f\x8b":
        return raw  # Helm accepts an uncompressed record too
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(raw, MAX_RELEASE_BYTES)
    except zlib.error:
        raise ReleaseDecodeError(f"{fail}: the gzip stream is corrupt; check the Secret") from None
    if inflater.unconsumed_tail:
        raise ReleaseDecodeError(f"{fail}: decompresses to more than {MAX_RELEASE_BYTES} bytes")
    if not inflater.eof:
        raise ReleaseDecodeError(f"{fail}: the gzip stream is truncated; check the Secret")
    return out


def _objects(manifest: str, where: str) -> tuple[KubeObject, ...]:
    try:
        docs = [doc for _, doc in documents(manifest, where)]
    except YamlError as exc:
        raise ReleaseDecodeError(
            f"Helm release Secret {where}: manifest line {exc.line} is {exc.message}"
        ) from None
    out = []
    for doc in docs:
        if doc is None or doc == {}:
            continue  # templates that rendered to nothing
        if not isinstance(doc, dict) or "kind" not in doc:
            raise ReleaseDecodeError(
                f"Helm release Secret {where}: the manifest holds a document that is not an object"
            )
        out.append(doc)
    return tuple(out)


def decode_release(secret: KubeObject) -> HelmRelease:
    """Decode one release Secret; ReleaseDecodeError names the Secret, never its content."""
    meta = secret.get("metadata") or {}
    where = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    raw = _payload(secret, where)
    try:
        record = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        record = None
    if not isinstance(record, dict) or not isinstance(record.get("manifest", ""), str):
        raise ReleaseDecodeError(f"Helm release Secret {where}: the record is not Helm's JSON")
    try:
        revision = int(record.get("version") or 0)
    except (TypeError, ValueError):
        raise ReleaseDecodeError(
            f"Helm release Secret {where}: the record's version is not a number"
        ) from None
    chart_meta = (record.get("chart") or {}).get("metadata") or {}
    info = record.get("info") or {}
    return HelmRelease(
        name=str(record.get("name", "")),
        namespace=str(record.get("namespace") or meta.get("namespace", "")),
        revision=revision,
        status=str(info.get("status", "")),
        chart_name=str(chart_meta.get("name", "")),
        chart_version=str(chart_meta.get("version", "")),
        app_version=str(chart_meta.get("appVersion", "")),
        apply_method=str(record.get("apply_method") or "csa"),
        values_digest=values_digest(record.get("config")),
        objects=_objects(record.get("manifest", ""), where),
        secret=where,
    )


def load_releases(secrets: Iterable[KubeObject]) -> list[HelmRelease]:
    """The newest deployed revision of every release among `secrets`, decoded."""
    return [decode_release(s) for s in newest_deployed(secrets)]
