"""Writes the demo's live snapshots (audit/demo/<cluster>/*.yaml), as `kubectl get -o yaml` would.

    python -m tests.audit.make_demo        # regenerate; tests/audit/test_demo_data.py checks them

Two Cozystack 1.6 clusters, built from the example profiles so that what is not planted matches:

ams1 (clusters/ams1, passthrough):
- planted drift: `kubectl edit` appended an RTX PRO 6000 Workstation entry (10DE:2BB1) to the
  KubeVirt CR's atomic `permittedHostDevices.pciHostDevices` (managedFields: kubectl-edit,
  Update), and a VM uses it; Lens (`node-fetch`) set `developerConfiguration.logVerbosity`,
  which no chart renders; `flux suspend` left the gpu-operator HelmRelease suspended; a VM asks
  for a device name that no entry permits; a GPU node was relabelled `container` by hand.
- planted noise: server metadata and status; injected Helm, Flux and KubeVirt labels/annotations;
  CRD defaults on the ClusterPolicy; the platform chart's defaults left out of the live platform
  values; `1Gi` written back as `1073741824` by a `kubectl patch`; reordered feature gates,
  enabledPackages and pciHostDevices (lists whose order means nothing).
sto1 (audit/demo/clusters/sto1, variant none): the GPUs were retired, so the platform release no
  longer renders `cozystack.gpu-operator`; `helm.sh/resource-policy: keep` left the live Package
  (an orphan); a DCGM exporter HelmRelease was applied by hand (unmanaged).

What the platform chart renders (the live kubevirt and gpu-operator Packages, and so the KubeVirt
CR) comes from real Helm, rendered once and committed: tests/audit/demo_chart.py, never the
prediction the audit's wiring check makes. The platform Package itself is what the renderer writes,
as Flux applied it.

Helm release Secrets are encoded as Helm's storage driver does (tests/apiserver/helm.py): the
record's JSON, gzip, base64, and base64 again by the API.
"""

from __future__ import annotations

import copy
import hashlib
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml

from renderer.kustomize.workers import build_overlays
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.apiserver.helm import release_secret
from tests.audit import demo_chart

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "audit" / "demo"
DEMO_CLUSTERS = {"ams1": ROOT / "clusters", "sto1": DEMO / "clusters"}
"""Each demo cluster, and the clusters/ folder its profile is in."""
T0 = "2026-09-02T08:12:30Z"
T_APPLY = "2026-10-14T09:02:11Z"
T_EDIT = "2026-11-20T15:41:07Z"
T_LENS = "2026-11-24T10:03:55Z"
T_SUSPEND = "2026-11-25T18:20:00Z"
T_NOW = "2026-11-28T02:11:02Z"
RELEASE_SECRETS_DUMP = (
    "kubectl get secrets -A -l owner=helm --show-managed-fields -o yaml "
    "(newest deployed revisions only)"
)
APPLIED = "rendered@sha1:0000000000000000000000000000000000000000"
"""Placeholder: the demo sets the revision it has just published."""
WORKSTATION: dict[str, Any] = {
    "externalResourceProvider": True,
    "pciVendorSelector": "10DE:2BB1",
    "resourceName": "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_WORKSTATION_EDITION",
}


def mf(
    manager: str, operation: str, time: str, fields: dict[str, Any], sub: str = ""
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": operation,
        "time": time,
    }
    if sub:
        entry["subresource"] = sub
    return entry


def leaves(value: Any) -> dict[str, Any]:
    """FieldsV1 of a value, every list atomic (as for CRs without list markers)."""
    if isinstance(value, dict) and value:
        return {f"f:{k}": leaves(v) for k, v in value.items()}
    return {}


def meta(name: str, namespace: str = "", uid: str = "", **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "creationTimestamp": T0,
        "generation": 3,
        "name": name,
        "resourceVersion": "8812342",
        "uid": uid or f"00000000-0000-4000-8000-{hashlib.sha256(name.encode()).hexdigest()[:12]}",
    }
    if namespace:
        out["namespace"] = namespace
    out.update(extra)
    return out


def helm_meta(release: str, namespace: str, keep: bool = False) -> dict[str, Any]:
    annotations = {
        "meta.helm.sh/release-name": release,
        "meta.helm.sh/release-namespace": namespace,
    }
    if keep:
        annotations["helm.sh/resource-policy"] = "keep"
    labels = {
        "app.kubernetes.io/managed-by": "Helm",
        "helm.toolkit.fluxcd.io/name": release,
        "helm.toolkit.fluxcd.io/namespace": namespace,
    }
    return {"annotations": annotations, "labels": labels}


def helm_applied(
    release: str, namespace: str, spec_fields: dict[str, Any], keep: bool = False
) -> dict[str, Any]:
    """helm-controller's managedFields entry on an object of a release: its Helm metadata and
    `spec_fields` (FieldsV1 of the spec it rendered)."""
    fields = {"f:metadata": leaves(helm_meta(release, namespace, keep)), "f:spec": spec_fields}
    return mf("helm-controller", "Apply", T_APPLY, fields)


def built(cluster: str, clusters: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the platform Package, every other object) of the cluster's built output."""
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(clusters / cluster, Path(tmp) / "clusters" / cluster)
        checked = check_clusters(Path(tmp), [cluster])
        text = build_overlays(render_profiles(checked.profiles).overlays)[cluster]
    objects = [o for o in yaml.safe_load_all(text) if o]
    platform = next(o for o in objects if o["metadata"]["name"] == "cozystack.cozystack-platform")
    return platform, [o for o in objects if o is not platform]


def applied(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Other objects of the render (as the profile grows), live exactly as Flux applied them."""
    out = []
    for desired in objects:
        obj = copy.deepcopy(desired)
        m = obj["metadata"]
        labels = {**(m.get("labels") or {}), **FLUX_LABELS}
        obj["metadata"] = meta(
            m["name"],
            m.get("namespace", ""),
            labels=labels,
            **{k: v for k, v in m.items() if k not in ("name", "namespace", "labels")},
        )
        body = {k: v for k, v in desired.items() if k not in ("apiVersion", "kind", "metadata")}
        fields = {"f:metadata": {"f:labels": {f"f:{k}": {} for k in labels}}, **leaves(body)}
        obj["metadata"]["managedFields"] = [mf("kustomize-controller", "Apply", T_APPLY, fields)]
        out.append(obj)
    return out


def packages(cluster: str, platform: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The GPU Packages the platform chart renders from the platform Package: Helm's, committed
    (tests/audit/demo_chart.py), never the audit's own prediction."""
    return demo_chart.load(cluster, platform)


def kubevirt_cr(values: dict[str, Any]) -> dict[str, Any]:
    """packages/system/kubevirt/templates/kubevirt-cr.yaml (cozystack@3c780acd), rendered: written
    out here from the template, not by audit/checks/wiring.py, whose prediction the demo checks
    (tests/audit/checks/test_wiring_oracle.py holds this against `helm template` of the chart)."""
    dev: dict[str, Any] = {}
    if values.get("cpuAllocationRatio"):
        dev["cpuAllocationRatio"] = values["cpuAllocationRatio"]
    dev["featureGates"] = [
        "HotplugVolumes",
        "ExpandDisks",
        "LiveMigration",
        "AutoResourceLimitsGate",
        "CPUManager",
        "GPU",
        "VMExport",
        *(values.get("extraFeatureGates") or []),
    ]
    config: dict[str, Any] = {
        "commonInstancetypesDeployment": {"enabled": False},
        "developerConfiguration": dev,
    }
    for key in ("permittedHostDevices", "mediatedDevicesConfiguration"):
        if values.get(key):
            config[key] = copy.deepcopy(values[key])
    config.update(
        evictionStrategy="LiveMigrate",
        virtualMachineOptions={"disableSerialConsoleLog": {}},
        vmRolloutStrategy="LiveUpdate",
    )
    patch = (
        '{"spec":{"template":{"spec":{"containers":[{"name":"virt-handler","resources":'
        '{"requests":{"cpu":"100m","memory":"128Mi"},"limits":{"memory":"2Gi"}}}]}}}}\n'
    )
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "cozy-kubevirt"},
        "spec": {
            "certificateRotateStrategy": {},
            "configuration": config,
            "workloadUpdateStrategy": {
                "workloadUpdateMethods": ["LiveMigrate", "Evict"],
                "batchEvictionInterval": "1m",
                "batchEvictionSize": 10,
            },
            "customizeComponents": {
                "patches": [
                    {
                        "resourceName": "virt-handler",
                        "resourceType": "DaemonSet",
                        "type": "strategic",
                        "patch": patch,
                    }
                ]
            },
            "imagePullPolicy": "IfNotPresent",
            "monitorNamespace": "tenant-root",
        },
    }


def cluster_policy() -> dict[str, Any]:
    """The GPU Operator's ClusterPolicy for the passthrough variant (hand-written: no chart here
    renders it), against gpu-operator v26.3.1's CRD."""
    return {
        "apiVersion": "nvidia.com/v1",
        "kind": "ClusterPolicy",
        "metadata": {"name": "cluster-policy"},
        "spec": {
            "operator": {"defaultRuntime": "containerd"},
            "daemonsets": {"priorityClassName": "system-node-critical"},
            "driver": {"enabled": False},
            "toolkit": {"enabled": True},
            "devicePlugin": {"enabled": False},
            "ccManager": {"enabled": False},
            "vgpuDeviceManager": {"enabled": False},
            "vfioManager": {"enabled": True},
            "sandboxWorkloads": {"enabled": True, "defaultWorkload": "vm-passthrough"},
            "sandboxDevicePlugin": {
                "enabled": True,
                "repository": "nvcr.io/nvidia",
                "image": "kubevirt-gpu-device-plugin",
                "version": "v1.5.0",
                "resources": {"limits": {"memory": "1Gi"}},
            },
        },
    }


def release(
    name: str,
    namespace: str,
    chart: str,
    objects: list[dict[str, Any]],
    config: dict[str, Any],
    revision: int,
) -> dict[str, Any]:
    record = {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": {"status": "deployed", "first_deployed": T0, "last_deployed": T_APPLY},
        "chart": {"metadata": {"name": chart, "version": "0.0.0", "apiVersion": "v2"}},
        "config": config,
        "manifest": "".join(
            f"---\n# Source: {chart}/templates/{o['kind'].lower()}.yaml\n"
            + yaml.safe_dump(o, sort_keys=False)
            for o in objects
        ),
        "hooks": [],
        "apply_method": "ssa",
    }
    secret = release_secret(record, revision=revision, status="deployed", when=T_APPLY)
    secret["metadata"]["namespace"] = namespace
    secret["metadata"].setdefault("uid", f"5ec0e7a1-0000-4000-8000-{revision:012d}")
    return secret


def live_package(
    predicted: dict[str, Any], *, keep: bool = True, reorder: bool = False
) -> dict[str, Any]:
    obj = copy.deepcopy(predicted)
    name = obj["metadata"]["name"]
    spec = obj["spec"]
    if reorder:
        pci = spec["components"]["kubevirt"]["values"]["permittedHostDevices"]["pciHostDevices"]
        pci.insert(0, pci.pop())  # the cluster's own device first: order means nothing here
    obj["metadata"] = meta(name, **helm_meta("cozystack-platform", "cozy-system", keep))
    obj["metadata"]["managedFields"] = [
        helm_applied("cozystack-platform", "cozy-system", leaves(spec), keep)
    ]
    obj["status"] = {
        "conditions": [
            {
                "lastTransitionTime": T_APPLY,
                "message": "reconciliation succeeded, generated 1 helmrelease(s)",
                "observedGeneration": 3,
                "reason": "ReconciliationSucceeded",
                "status": "True",
                "type": "Ready",
            }
        ]
    }
    return obj


FLUX_LABELS = {
    "kustomize.toolkit.fluxcd.io/name": "gpu-gitops",
    "kustomize.toolkit.fluxcd.io/namespace": "cozy-fluxcd",
}


def live_platform(desired: dict[str, Any], cluster: str) -> dict[str, Any]:
    obj = copy.deepcopy(desired)
    values = obj["spec"]["components"]["platform"]["values"]
    values["bundles"]["enabledPackages"].reverse()  # noise: the chart only asks `has`
    gpu = values["gpu"]
    for key in (
        "vgpuManager",
        "vgpuDeviceManager",
        "replaceDefaults",
        "mediatedDevicesConfiguration",
    ):
        gpu.pop(key, None)  # noise: equal to the platform chart's defaults
    labels = dict(FLUX_LABELS)
    annotations = obj["metadata"].get("annotations") or {}  # as Flux applied them
    obj["metadata"] = meta(obj["metadata"]["name"], labels=labels, annotations=annotations)
    fields = {
        "f:metadata": {
            "f:annotations": {f"f:{k}": {} for k in annotations},
            "f:labels": {f"f:{k}": {} for k in labels},
        },
        "f:spec": {"f:components": {"f:platform": {"f:values": {}}}, "f:variant": {}},
    }
    obj["metadata"]["managedFields"] = [
        mf("kustomize-controller", "Apply", T_APPLY, fields),
        mf(
            "cozystack-operator",
            "Update",
            T_APPLY,
            {"f:status": {".": {}, "f:conditions": {}}},
            "status",
        ),
    ]
    obj["status"] = {
        "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded"}]
    }
    return obj


def helm_release_obj(
    name: str, namespace: str, package: str, revision: int, suspended: bool = False
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "chartRef": {
            "kind": "ExternalArtifact",
            "name": f"{package.replace('.', '-')}-default-{name}",
            "namespace": "cozy-system",
        },
        "install": {
            "strategy": {"name": "RetryOnFailure", "retryInterval": "30s"},
            "timeout": "10m",
        },
        "interval": "5m",
        "maxHistory": 5,
        "upgrade": {
            "strategy": {"name": "RetryOnFailure", "retryInterval": "30s"},
            "timeout": "10m",
        },
        "values": {"note": "operator-generated"},
    }
    managed = [
        mf(
            "cozystack-operator",
            "Update",
            T_APPLY,
            {"f:spec": leaves({k: v for k, v in spec.items()})},
        ),
        mf("helm-controller", "Update", T_APPLY, {"f:status": {"f:history": {}}}, "status"),
    ]
    if suspended:
        spec["suspend"] = True
        managed.append(mf("flux", "Update", T_SUSPEND, {"f:spec": {"f:suspend": {}}}))
    metadata = meta(
        name,
        namespace,
        labels={"cozystack.io/package": package, "cozystack.io/privileged": "true"},
        ownerReferences=[
            {
                "apiVersion": "cozystack.io/v1alpha1",
                "kind": "Package",
                "name": package,
                "controller": True,
                "blockOwnerDeletion": True,
                "uid": "7d8e9f0a-1b2c-4d3e-8f4a-5b6c7d8e9f21",
            }
        ],
        finalizers=["finalizers.fluxcd.io"],
    )
    metadata["managedFields"] = managed
    history = {"name": name, "namespace": namespace, "version": revision, "status": "deployed"}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": metadata,
        "spec": spec,
        "status": {"history": [history], "storageNamespace": namespace},
    }


def flux(cluster: str) -> list[dict[str, Any]]:
    repo: dict[str, Any] = {
        "apiVersion": "source.toolkit.fluxcd.io/v1",
        "kind": "GitRepository",
        "metadata": meta("gpu-gitops", "cozy-fluxcd", finalizers=["finalizers.fluxcd.io"]),
        "spec": {
            "interval": "10m",
            "ref": {"branch": "rendered"},
            "secretRef": {"name": "flux-system"},
            "timeout": "60s",
            "url": "ssh://git@git.example.com/platform/gitops.git",
        },
        "status": {"artifact": {"revision": APPLIED, "digest": "sha256:" + "0" * 64}},
    }
    ks: dict[str, Any] = {
        "apiVersion": "kustomize.toolkit.fluxcd.io/v1",
        "kind": "Kustomization",
        "metadata": meta("gpu-gitops", "cozy-fluxcd", finalizers=["finalizers.fluxcd.io"]),
        "spec": {
            "force": False,
            "interval": "10m",
            "path": f"./{cluster}",
            "prune": True,
            "sourceRef": {"kind": "GitRepository", "name": "gpu-gitops"},
        },
        "status": {
            "inventory": {
                "entries": [
                    {"id": "_cozystack.cozystack-platform_cozystack.io_Package", "v": "v1alpha1"}
                ]
            },
            "lastAppliedRevision": APPLIED,
        },
    }
    for obj in (repo, ks):
        obj["metadata"]["managedFields"] = [
            mf("kubectl", "Apply", T0, {"f:spec": leaves(obj["spec"])})
        ]
    return [repo, ks]


def vm(name: str, device: str) -> dict[str, Any]:
    """A tenant VM as its vm-instance release renders it: helm-controller owns the whole spec."""
    release = f"vm-instance-{name}"
    spec = {
        "runStrategy": "Always",
        "template": {
            "spec": {
                "domain": {
                    "devices": {"gpus": [{"deviceName": device, "name": "gpu0"}]},
                    "resources": {"requests": {"memory": "64Gi"}},
                }
            }
        },
    }
    managed = [helm_applied(release, "tenant-root", leaves(spec))]
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": meta(
            name, "tenant-root", **helm_meta(release, "tenant-root"), managedFields=managed
        ),
        "spec": spec,
    }


def node(name: str, workload: str, by: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.workload.config": workload}
    obj: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta(name, labels=labels),
        "spec": {"podCIDR": "10.244.12.0/24"},
        "status": {"capacity": {"cpu": "64", "memory": "528357924Ki"}},
    }
    obj["metadata"].pop("generation")
    obj["metadata"]["managedFields"] = [
        mf("kubelet", "Update", T0, {"f:metadata": {"f:labels": {"f:kubernetes.io/hostname": {}}}}),
        mf(
            by,
            "Update",
            T_EDIT,
            {"f:metadata": {"f:labels": {"f:nvidia.com/gpu.workload.config": {}}}},
        ),
    ]
    return obj


def one(obj: dict[str, Any], command: str) -> str:
    return f"# {command}\n" + yaml.safe_dump(obj, sort_keys=True, width=100)


def rendered_others(others: list[dict[str, Any]]) -> dict[str, str]:
    if not others:
        return {}
    return {"rendered-others.yaml": as_list(applied(others), "the render's other objects, live")}


def as_list(objects: list[dict[str, Any]], header: str) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "List",
        "items": objects,
        "metadata": {"resourceVersion": ""},
    }
    return f"# {header}\n" + yaml.safe_dump(doc, sort_keys=True, width=100)


def ams1(clusters: Path) -> dict[str, str]:
    desired, others = built("ams1", clusters)
    pkgs = packages("ams1", desired)
    kv_values = pkgs["cozystack.kubevirt"]["spec"]["components"]["kubevirt"]["values"]
    released_cr = kubevirt_cr(kv_values)
    # live KubeVirt CR: the release, then the planted edits and noise
    cr = copy.deepcopy(released_cr)
    config = cr["spec"]["configuration"]
    config["permittedHostDevices"]["pciHostDevices"].append(WORKSTATION)  # kubectl edit
    config["developerConfiguration"]["logVerbosity"] = {"virtLauncher": 4}  # Lens
    gates = config["developerConfiguration"]["featureGates"]
    gates.insert(0, gates.pop())  # noise: HostDevices first
    annotations = {
        "kubevirt.io/latest-observed-api-version": "v1",
        "kubevirt.io/storage-observed-api-version": "v1",
        **helm_meta("kubevirt", "cozy-kubevirt")["annotations"],
    }
    cr["metadata"] = meta(
        "kubevirt",
        "cozy-kubevirt",
        annotations=annotations,
        labels=helm_meta("kubevirt", "cozy-kubevirt")["labels"],
        finalizers=["foregroundDeleteKubeVirt"],
    )
    helm_fields = leaves(released_cr["spec"])
    del helm_fields["f:configuration"]["f:permittedHostDevices"]  # ownership moved to kubectl-edit
    cr["metadata"]["managedFields"] = [
        helm_applied("kubevirt", "cozy-kubevirt", helm_fields),
        mf(
            "virt-operator",
            "Update",
            T0,
            {
                "f:metadata": {
                    "f:annotations": {
                        ".": {},
                        "f:kubevirt.io/latest-observed-api-version": {},
                        "f:kubevirt.io/storage-observed-api-version": {},
                    },
                    "f:finalizers": {".": {}, 'v:"foregroundDeleteKubeVirt"': {}},
                }
            },
        ),
        mf(
            "kubectl-edit",
            "Update",
            T_EDIT,
            {"f:spec": {"f:configuration": {"f:permittedHostDevices": {"f:pciHostDevices": {}}}}},
        ),
        mf(
            "node-fetch",
            "Update",
            T_LENS,
            {
                "f:spec": {
                    "f:configuration": {
                        "f:developerConfiguration": {
                            "f:logVerbosity": {".": {}, "f:virtLauncher": {}}
                        }
                    }
                }
            },
        ),
        mf("virt-operator", "Update", T_NOW, {"f:status": {".": {}, "f:phase": {}}}, "status"),
    ]
    cr["status"] = {"phase": "Deployed", "observedKubeVirtVersion": "v1.8.4"}

    released_cp = cluster_policy()
    cp = copy.deepcopy(released_cp)
    cp["spec"]["sandboxDevicePlugin"]["resources"]["limits"]["memory"] = "1073741824"  # = 1Gi
    cp["spec"]["sandboxWorkloads"]["mode"] = "kubevirt"  # CRD defaults the server filled in
    cp["spec"]["driver"]["kernelModuleType"] = "auto"
    cp["spec"]["cdi"] = {"default": False, "enabled": True, "nriPluginEnabled": False}
    cp["metadata"] = meta("cluster-policy", **helm_meta("gpu-operator", "cozy-gpu-operator"))
    cp["metadata"]["managedFields"] = [
        helm_applied("gpu-operator", "cozy-gpu-operator", leaves(released_cp["spec"])),
        mf(
            "kubectl-patch",
            "Update",
            T_EDIT,
            {"f:spec": {"f:sandboxDevicePlugin": {"f:resources": {"f:limits": {"f:memory": {}}}}}},
        ),
    ]
    cp["status"] = {"state": "ready"}

    platform_values = desired["spec"]["components"]["platform"]["values"]
    files = {
        "packages.yaml": as_list(
            [
                live_platform(desired, "ams1"),
                live_package(pkgs["cozystack.kubevirt"], reorder=True),
                live_package(pkgs["cozystack.gpu-operator"]),
            ],
            "kubectl get packages.cozystack.io --show-managed-fields -o yaml",
        ),
        **rendered_others(others),
        "kubevirt.yaml": one(
            cr, "kubectl get kubevirt -n cozy-kubevirt kubevirt --show-managed-fields -o yaml"
        ),
        "clusterpolicy.yaml": one(
            cp, "kubectl get clusterpolicy cluster-policy --show-managed-fields -o yaml"
        ),
        "helmreleases.yaml": as_list(
            [
                helm_release_obj(
                    "cozystack-platform", "cozy-system", "cozystack.cozystack-platform", 5
                ),
                helm_release_obj("kubevirt", "cozy-kubevirt", "cozystack.kubevirt", 3),
                helm_release_obj(
                    "gpu-operator", "cozy-gpu-operator", "cozystack.gpu-operator", 2, suspended=True
                ),
            ],
            "kubectl get helmreleases.helm.toolkit.fluxcd.io -A --show-managed-fields -o yaml",
        ),
        "flux.yaml": as_list(
            flux("ams1"),
            "kubectl get gitrepository,kustomization -n cozy-fluxcd --show-managed-fields -o yaml",
        ),
        "virtualmachines.yaml": as_list(
            [
                vm("render01", str(WORKSTATION["resourceName"])),
                vm("train02", "nvidia.com/GB202GL_RTX_PRO_6000"),
                vm("infer01", "nvidia.com/GH100_H100_PCIE"),
            ],
            "kubectl get virtualmachines.kubevirt.io -A --show-managed-fields -o yaml",
        ),
        "nodes.yaml": as_list(
            [
                node("gpu-ams1-01", "vm-passthrough", "kubectl-label"),
                node("gpu-ams1-02", "container", "kubectl-label"),
            ],
            "kubectl get nodes --show-managed-fields -o yaml (GPU workers)",
        ),
        "release-secrets.yaml": as_list(
            [
                release(
                    "cozystack-platform",
                    "cozy-system",
                    "cozy-platform",
                    [_bare(pkgs["cozystack.kubevirt"]), _bare(pkgs["cozystack.gpu-operator"])],
                    platform_values,
                    5,
                ),
                release("kubevirt", "cozy-kubevirt", "cozy-kubevirt", [released_cr], kv_values, 3),
                release(
                    "gpu-operator", "cozy-gpu-operator", "cozy-gpu-operator", [released_cp], {}, 2
                ),
            ],
            RELEASE_SECRETS_DUMP,
        ),
    }
    return files


def _bare(package: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": package["apiVersion"],
        "kind": package["kind"],
        "metadata": copy.deepcopy(package["metadata"]),
        "spec": copy.deepcopy(package["spec"]),
    }


def sto1(clusters: Path) -> dict[str, str]:
    desired, others = built("sto1", clusters)
    pkgs = packages("sto1", desired)
    kv_values = pkgs["cozystack.kubevirt"]["spec"]["components"]["kubevirt"]["values"]
    cr = kubevirt_cr(kv_values)
    released_cr = copy.deepcopy(cr)
    cr["metadata"] = meta("kubevirt", "cozy-kubevirt", **helm_meta("kubevirt", "cozy-kubevirt"))
    cr["metadata"]["managedFields"] = [
        helm_applied("kubevirt", "cozy-kubevirt", leaves(released_cr["spec"]))
    ]
    left = {
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {"name": "cozystack.gpu-operator"},
        "spec": {"variant": "default"},
    }
    exporter: dict[str, Any] = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": meta("nvidia-dcgm-exporter", "tenant-ml"),
        "spec": {
            "chart": {
                "spec": {
                    "chart": "dcgm-exporter",
                    "sourceRef": {"kind": "HelmRepository", "name": "nvidia"},
                    "version": "4.1.1",
                }
            },
            "interval": "10m",
        },
    }
    exporter["metadata"]["managedFields"] = [
        mf("kubectl-client-side-apply", "Update", T_EDIT, {"f:spec": leaves(exporter["spec"])})
    ]
    platform_values = desired["spec"]["components"]["platform"]["values"]
    return {
        "packages.yaml": as_list(
            [
                live_platform(desired, "sto1"),
                live_package(pkgs["cozystack.kubevirt"]),
                live_package(left),
            ],
            "kubectl get packages.cozystack.io --show-managed-fields -o yaml",
        ),
        **rendered_others(others),
        "kubevirt.yaml": one(
            cr, "kubectl get kubevirt -n cozy-kubevirt kubevirt --show-managed-fields -o yaml"
        ),
        "helmreleases.yaml": as_list(
            [
                helm_release_obj(
                    "cozystack-platform", "cozy-system", "cozystack.cozystack-platform", 7
                ),
                helm_release_obj("kubevirt", "cozy-kubevirt", "cozystack.kubevirt", 4),
                exporter,
            ],
            "kubectl get helmreleases.helm.toolkit.fluxcd.io -A --show-managed-fields -o yaml",
        ),
        "flux.yaml": as_list(
            flux("sto1"),
            "kubectl get gitrepository,kustomization -n cozy-fluxcd --show-managed-fields -o yaml",
        ),
        # none left: an empty list, named after the resource so the audit knows it was dumped
        "virtualmachines.kubevirt.io.yaml": as_list(
            [], "kubectl get virtualmachines.kubevirt.io -A --show-managed-fields -o yaml"
        ),
        "release-secrets.yaml": as_list(
            [
                release(
                    "cozystack-platform",
                    "cozy-system",
                    "cozy-platform",
                    [_bare(pkgs["cozystack.kubevirt"])],
                    platform_values,
                    7,
                ),
                release("kubevirt", "cozy-kubevirt", "cozy-kubevirt", [released_cr], kv_values, 4),
            ],
            RELEASE_SECRETS_DUMP,
        ),
    }


def generate() -> dict[str, str]:
    """Relative path under audit/demo -> file text."""
    out: dict[str, str] = {}
    makers = {"ams1": ams1, "sto1": sto1}
    for name, clusters in DEMO_CLUSTERS.items():
        files = makers[name](clusters)
        out |= {f"snapshots/{name}/{f}": text for f, text in files.items()}
    return out


def main() -> None:
    for rel, text in generate().items():
        path = DEMO / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
