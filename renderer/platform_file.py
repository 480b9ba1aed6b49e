"""clusters/<name>/platform.yaml from the live platform Package (`gpu-gitops import`). Pure.

A value whose key looks like a secret (`password`, `token`, `clientSecret`, ...) is left out, and
named in the warning `import` prints (`left_out_secrets`): secrets are never copied into git, and
without the key the live value stays as it is (Flux applies only what the file says). The text
must be one `validate` reads (MAX_FILE_BYTES) and load back equal to what was kept, type included.
"""

from __future__ import annotations

import copy
from typing import Any

from kubedata.objects import KubeObject, ObjectKey
from kubedata.redact import secret_paths
from kubedata.yaml_io import load_marked
from kubedata.yaml_scalars import same_data

from renderer.cozystack_names import PLATFORM_PACKAGE
from renderer.errors import Problem, ProfileError
from renderer.live_file import ImportMark, live_file_text
from renderer.profile import MAX_FILE_BYTES, parse_platform, platform_path

__all__ = ["PLATFORM_KEY", "left_out_secrets", "platform_file_text"]

PLATFORM_KEY = ObjectKey("cozystack.io", "Package", "", PLATFORM_PACKAGE)
_HEADER = (
    "# The platform Package as it is live, written by gpu-gitops import --cluster {name}\n"
    "# (server fields removed). The renderer keeps every value here and sets only the GPU keys;\n"
    "# re-run the import after changing the live Package by other means.\n"
)


def left_out_secrets(live: KubeObject) -> list[str]:
    """The fields of the live Package that look like secrets, which platform.yaml leaves out."""
    return [".".join(("spec", *p)) for p in sorted(secret_paths(live.get("spec") or {}))]


def _without_secrets(live: KubeObject) -> KubeObject:
    kept = copy.deepcopy(live)
    spec: Any = kept.get("spec") or {}
    for path in secret_paths(spec):
        parent = spec
        for key in path[:-1]:
            parent = parent[int(key)] if isinstance(parent, list) else parent[key]
        del parent[path[-1]]
    return kept


def platform_file_text(live: KubeObject, cluster: str, mark: ImportMark) -> str:
    """The text of clusters/<cluster>/platform.yaml; ProfileError if it would not load back."""
    file = platform_path(cluster)
    kept = _without_secrets(live)
    text = live_file_text(kept, file, "cozystack.io/v1alpha1", _HEADER.format(name=cluster), mark)
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
    written = load_marked(text, file)[0]
    if not same_data(written.get("spec"), kept.get("spec") or {}):  # pragma: no cover
        raise ProfileError([Problem(file, 0, "spec", "would not read back as the live Package")])
    return text
