"""clusters/<name>/platform.yaml from the live platform Package (`gpu-gitops import`).

Pure: the object as the API server returned it -> the file's text. Only what the renderer carries
over is kept (apiVersion, kind, metadata name, labels and annotations, spec); server-set fields,
status and the marks of other tools are stripped, and keys are sorted so the same live Package
always gives the same bytes. A value whose key looks like a secret (`password`, `token`,
`clientSecret`, ...) is left out, and named in the warning `import` prints: secrets are never
copied into git, and without the key the live value stays as it is (Flux applies only what the
file says). What is written is read back before it is returned: every value
must load equal to the live one, type included (a string `on` stays a string), and the file must
be one `validate` reads (MAX_FILE_BYTES).
"""

from __future__ import annotations

from typing import Any

from kubedata.objects import KubeObject, ObjectKey
from kubedata.redact import secret_paths
from kubedata.yaml_io import dump_yaml, load_marked
from kubedata.yaml_scalars import same_data

from renderer.cozystack_names import PLATFORM_PACKAGE
from renderer.errors import Problem, ProfileError
from renderer.profile import MAX_FILE_BYTES, PLATFORM_FILE, parse_platform

__all__ = ["PLATFORM_KEY", "platform_file_text"]

PLATFORM_KEY = ObjectKey("cozystack.io", "Package", "", PLATFORM_PACKAGE)
_API_VERSION = "cozystack.io/v1alpha1"
# Written by the tools that apply the object, not by its owner: never part of its desired state.
_DROPPED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)
_DROPPED_LABEL_PREFIXES = ("kustomize.toolkit.fluxcd.io/",)
_HEADER = (
    "# The platform Package as it is live, written by gpu-gitops import --cluster {name}\n"
    "# (server fields removed). The renderer keeps every value here and sets only the GPU keys;\n"
    "# re-run the import after changing the live Package by other means.\n"
)


def _sorted(value: Any) -> Any:
    """Mapping keys sorted at every depth; list order is meaning, so it is kept."""
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value


def _without(value: Any, paths: list[tuple[str, ...]]) -> Any:
    """`value` with the entries at `paths` left out."""
    for path in paths:
        parent = value
        for key in path[:-1]:
            parent = parent[int(key)] if isinstance(parent, list) else parent[key]
        del parent[path[-1]]
    return value


def platform_file_text(live: KubeObject, cluster: str) -> tuple[str, list[str]]:
    """The text of clusters/<cluster>/platform.yaml, and the fields left out because they look
    like secrets (never copied into git: they stay live as they are); ProfileError if it would
    not load back."""
    file = f"clusters/{cluster}/{PLATFORM_FILE}"
    if str(live.get("apiVersion", _API_VERSION)) != _API_VERSION:
        raise ProfileError(
            [Problem(file, 0, "apiVersion", f"the live Package is not {_API_VERSION}")]
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
    kept_meta: dict[str, Any] = {"name": meta.get("name")}
    if labels:
        kept_meta["labels"] = _sorted(labels)
    if annotations:
        kept_meta["annotations"] = _sorted(annotations)
    spec = _sorted(live.get("spec") or {})
    secrets = secret_paths(spec)
    spec = _without(spec, secrets)
    doc = {"apiVersion": _API_VERSION, "kind": "Package", "metadata": kept_meta, "spec": spec}
    text = _HEADER.format(name=cluster) + dump_yaml(doc)
    size = len(text.encode("utf-8"))
    if size > MAX_FILE_BYTES:
        raise ProfileError(
            [
                Problem(
                    file,
                    0,
                    "spec",
                    f"the live Package is {size} bytes as YAML, over the {MAX_FILE_BYTES} bytes "
                    "validate reads; nothing was written",
                )
            ]
        )
    parse_platform(text, file)  # the renderer must be able to read what is written
    if not same_data(load_marked(text, file)[0], doc):  # pragma: no cover - dump_yaml's promise
        raise ProfileError([Problem(file, 0, "spec", "would not read back as the live Package")])
    return text, [".".join(("spec", *p)) for p in secrets]
