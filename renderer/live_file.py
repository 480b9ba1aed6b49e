"""The live files `gpu-gitops import` writes (platform.yaml, kubevirt.yaml), and their marks.

Pure: an object as the API server returned it -> the file's text. Only what the renderer carries
over is kept (apiVersion, kind, metadata name, namespace, labels and annotations, spec);
server-set fields, status and the marks of other tools are stripped, and keys are sorted so the
same live object always gives the same bytes. The import mark (source and time) says the file is
the live state, not someone's idea of it; a file written by hand says so with HAND_WRITTEN.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from kubedata.objects import KubeObject
from kubedata.yaml_io import dump_yaml

from renderer.errors import Problem, ProfileError
from renderer.profile import LiveDoc

__all__ = [
    "HAND_WRITTEN",
    "IMPORTED_AT",
    "IMPORTED_FROM",
    "MARKS",
    "ImportMark",
    "Provenance",
    "import_command",
    "live_file_text",
    "provenance",
]

IMPORTED_FROM = "gpu-gitops.io/imported-from"
"""The API server (and kubeconfig context) the object was read from."""
IMPORTED_AT = "gpu-gitops.io/imported-at"
"""When it was read, RFC 3339 UTC."""
HAND_WRITTEN = "gpu-gitops.io/hand-written"
"""`"true"`: the file was written by hand; every live list it replaces is then a warning."""
MARKS = (HAND_WRITTEN, IMPORTED_AT, IMPORTED_FROM)
"""Annotations about the file, never applied to the cluster."""

# Written by the tools that apply the object, not by its owner: never part of its desired state.
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration", *MARKS)
_DROPPED_LABEL_PREFIXES = ("kustomize.toolkit.fluxcd.io/",)

Provenance = Literal["imported", "hand-written", "unmarked"]


@dataclass(frozen=True)
class ImportMark:
    """Where and when `import` read the object."""

    source: str
    at: str


def import_command(cluster: str) -> str:
    return f"gpu-gitops import --cluster {cluster} [--kubeconfig F] [--context C]"


def provenance(doc: LiveDoc) -> Provenance:
    """Whether a live file carries import's mark, says it was written by hand, or neither."""
    annotations = (doc.obj.get("metadata") or {}).get("annotations")
    if not isinstance(annotations, dict):
        return "unmarked"
    if annotations.get(HAND_WRITTEN) == "true":
        return "hand-written"
    if all(isinstance(annotations.get(k), str) and annotations[k] for k in MARKS[1:]):
        return "imported"
    return "unmarked"


def _sorted(value: Any) -> Any:
    """Mapping keys sorted at every depth; list order is meaning, so it is kept."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def live_file_text(
    live: KubeObject, file: str, api_version: str, header: str, mark: ImportMark
) -> str:
    """The text of a live file: header comment, then the object without server fields, marked."""
    if str(live.get("apiVersion", api_version)) != api_version:
        kind = live.get("kind", "object")
        raise ProfileError(
            [Problem(file, 0, "apiVersion", f"the live {kind} is not {api_version}")]
        )
    meta = live.get("metadata") or {}
    labels = {
        k: v
        for k, v in (meta.get("labels") or {}).items()
        if not k.startswith(_DROPPED_LABEL_PREFIXES)
    }
    annotations = {
        k: v for k, v in (meta.get("annotations") or {}).items() if k not in _DROPPED_ANNOTATIONS
    }
    annotations |= {IMPORTED_FROM: mark.source, IMPORTED_AT: mark.at}
    kept_meta: dict[str, Any] = {"name": meta.get("name")}
    if meta.get("namespace"):
        kept_meta["namespace"] = meta["namespace"]
    if labels:
        kept_meta["labels"] = _sorted(labels)
    kept_meta["annotations"] = _sorted(annotations)
    doc = {
        "apiVersion": api_version,
        "kind": live.get("kind"),
        "metadata": kept_meta,
        "spec": _sorted(live.get("spec") or {}),
    }
    return header + dump_yaml(doc)
