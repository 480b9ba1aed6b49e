"""clusters/<name>/platform.yaml from the live platform Package (`gpu-gitops import`). Pure."""

from __future__ import annotations

from kubedata.objects import KubeObject, ObjectKey

from renderer.cozystack_names import PLATFORM_PACKAGE
from renderer.live_file import ImportMark, live_file_text
from renderer.profile import parse_platform, platform_path

__all__ = ["PLATFORM_KEY", "platform_file_text"]

PLATFORM_KEY = ObjectKey("cozystack.io", "Package", "", PLATFORM_PACKAGE)
_HEADER = (
    "# The platform Package as it is live, written by gpu-gitops import --cluster {name}\n"
    "# (server fields removed). The renderer keeps every value here and sets only the GPU keys;\n"
    "# re-run the import after changing the live Package by other means.\n"
)


def platform_file_text(live: KubeObject, cluster: str, mark: ImportMark) -> str:
    """The text of clusters/<cluster>/platform.yaml; ProfileError if it would not load back."""
    file = platform_path(cluster)
    text = live_file_text(live, file, "cozystack.io/v1alpha1", _HEADER.format(name=cluster), mark)
    parse_platform(text, file)  # the renderer must be able to read what is written
    return text
