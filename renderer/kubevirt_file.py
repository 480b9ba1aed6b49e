"""clusters/<name>/kubevirt.yaml from the live KubeVirt CR (`gpu-gitops import`, plain Flux). Pure.

The partial KubeVirt object of the build sets featureGates and permittedHostDevices, lists that
KubeVirt's CRD marks x-kubernetes-list-type: atomic: the list applied replaces the live one whole,
so the build starts from what this file shows is live.
"""

from __future__ import annotations

from kubedata.objects import KubeObject, ObjectKey

from renderer.live_file import ImportMark, live_file_text
from renderer.model import KubeVirtTarget
from renderer.profile import kubevirt_path, parse_kubevirt

__all__ = ["KUBEVIRT_API_VERSION", "kubevirt_file_text", "kubevirt_key"]

KUBEVIRT_API_VERSION = "kubevirt.io/v1"
_HEADER = (
    "# The KubeVirt CR as it is live, written by gpu-gitops import --cluster {name}\n"
    "# (server fields and status removed). The build keeps its feature gates and permitted\n"
    "# devices unless the profile says otherwise; re-run the import after changing the live CR.\n"
)


def kubevirt_key(target: KubeVirtTarget) -> ObjectKey:
    """The KubeVirt CR the profile's spec.kubevirt names."""
    return ObjectKey("kubevirt.io", "KubeVirt", target.namespace, target.name)


def kubevirt_file_text(live: KubeObject, cluster: str, mark: ImportMark) -> str:
    """The text of clusters/<cluster>/kubevirt.yaml; ProfileError if it would not load back."""
    file = kubevirt_path(cluster)
    text = live_file_text(live, file, KUBEVIRT_API_VERSION, _HEADER.format(name=cluster), mark)
    parse_kubevirt(text, file)
    return text
