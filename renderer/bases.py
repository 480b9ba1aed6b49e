"""The kustomize bases the tool ships, written by `render` to overlays/base/<name>/.

Each cluster overlay lists the bases it needs and patches them (JSON 6902) with its values.
"""

from __future__ import annotations

from renderer.objects import KubeObject

__all__ = [
    "BASES",
    "GPU_OPERATOR_CHART_REPO",
    "GPU_OPERATOR_NAMESPACE",
    "HAMI_CHART_VERSION",
]

GPU_OPERATOR_NAMESPACE = "gpu-operator"
GPU_OPERATOR_CHART_REPO = "https://helm.ngc.nvidia.com/nvidia"
HAMI_CHART_VERSION = "2.10.0"
_HELM_REPO_INTERVAL = "12h"


def _helm_repository(name: str, namespace: str, url: str) -> KubeObject:
    return {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "HelmRepository",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"interval": _HELM_REPO_INTERVAL, "url": url},
    }


def _helm_release(name: str, namespace: str, chart: str, version: str, repo: str) -> KubeObject:
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "interval": "10m",
            "chart": {
                "spec": {
                    "chart": chart,
                    "version": version,
                    "sourceRef": {"kind": "HelmRepository", "name": repo},
                }
            },
            "install": {"crds": "CreateReplace"},
            "upgrade": {"crds": "CreateReplace"},
            "driftDetection": {"mode": "enabled"},
            "values": {},
        },
    }


BASES: dict[str, dict[str, KubeObject]] = {
    # The platform Package; its values are set by each cluster's patch.
    "cozystack": {
        "platform-package.yaml": {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": "cozystack.cozystack-platform"},
            "spec": {"components": {"platform": {"values": {}}}},
        }
    },
    # The bundle rejects variant container: it is reachable only as a standalone Package.
    "cozystack-gpu-operator-container": {
        "gpu-operator-package.yaml": {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": "cozystack.gpu-operator"},
            "spec": {"variant": "container"},
        }
    },
    "flux-gpu-operator": {
        "namespace.yaml": {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": GPU_OPERATOR_NAMESPACE,
                # the operands (driver, vfio-manager, device plugins) run privileged
                "labels": {"pod-security.kubernetes.io/enforce": "privileged"},
            },
        },
        "helmrepository.yaml": _helm_repository(
            "nvidia", GPU_OPERATOR_NAMESPACE, GPU_OPERATOR_CHART_REPO
        ),
        "helmrelease.yaml": _helm_release(
            "gpu-operator", GPU_OPERATOR_NAMESPACE, "gpu-operator", "v26.3.1", "nvidia"
        ),
    },
    # A partial KubeVirt object: server-side apply claims only the fields it carries.
    "flux-kubevirt": {
        "kubevirt.yaml": {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {
                "configuration": {"developerConfiguration": {"featureGates": ["HostDevices"]}}
            },
        }
    },
    "flux-hami": {
        "helmrepository.yaml": _helm_repository(
            "hami-charts", "kube-system", "https://project-hami.github.io/HAMi"
        ),
        "helmrelease.yaml": _helm_release(
            "hami", "kube-system", "hami", HAMI_CHART_VERSION, "hami-charts"
        ),
    },
}
# HAMi schedules onto the GPU Operator's driver and toolkit: install it after them.
BASES["flux-hami"]["helmrelease.yaml"]["spec"]["dependsOn"] = [
    {"name": "gpu-operator", "namespace": GPU_OPERATOR_NAMESPACE}
]
