"""The auditor on real objects from public sources (tests/data/real/, each file says where from).

Each live object is paired with what git would declare for it, and audited end to end
(`audit.run.audit` on a snapshot): the clean pairing must give no finding at all, and drift
planted the way people make it (a `kubectl edit` of permittedHostDevices, a gate added with Lens,
a k9s edit of the ClusterPolicy), with and without managedFields, must be found with the right
severity, revert class and manager.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from audit.checks.node_labels import label_finding
from audit.compare.pairs import compare_objects
from audit.findings.classify import Controller, is_partial
from audit.findings.collect import Findings
from audit.findings.finding import Finding
from audit.findings.provenance import ProfileContext
from audit.result import AuditResult
from audit.run import audit
from audit.sources.desired import Desired
from audit.sources.live import Live, SnapshotReader
from audit.sources.packed import PackedObjects
from tests.conftest import DATA

REAL = DATA / "real"
T_EDIT = "2026-11-20T15:41:07Z"
MERGE = {"kustomize.toolkit.fluxcd.io/ssa": "Merge"}
CONFIG = "/spec/configuration"
PCI = f"{CONFIG}/permittedHostDevices/pciHostDevices"
PERMITTED = f"{CONFIG}/permittedHostDevices"
GATES = f"{CONFIG}/developerConfiguration/featureGates"
NO_VMS = ("virtualmachines.kubevirt.io",)
A100 = {
    "externalResourceProvider": True,
    "pciVendorSelector": "10DE:20B5",
    "resourceName": "nvidia.com/GA100_A100_PCIE_80GB",
}


def real(name: str) -> dict[str, Any]:
    text = (REAL / name).read_text(encoding="utf-8")
    assert text.startswith("# Provenance: "), f"{name} must open with its provenance"
    obj: dict[str, Any] = yaml.safe_load(text)
    return obj


def test_every_fixture_names_its_source() -> None:
    files = sorted(REAL.glob("*.yaml"))
    assert len(files) >= 12
    for path in files:
        head = path.read_text(encoding="utf-8").split("\napiVersion:", 1)[0]
        assert "https://" in head, f"{path.name}: no source URL"
        assert "Removed" in head or "removed" in head, f"{path.name}: does not say what was removed"


def bare(obj: dict[str, Any]) -> dict[str, Any]:
    """As `kubectl get -o yaml` prints it: without managedFields."""
    out = copy.deepcopy(obj)
    out["metadata"].pop("managedFields", None)
    return out


def entry(manager: str, spec: dict[str, Any], op: str = "Update") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": spec},
        "manager": manager,
        "operation": op,
        "time": T_EDIT,
    }


def declared(live: dict[str, Any], spec: dict[str, Any], partial: bool = False) -> dict[str, Any]:
    """What git declares: the live object's identity and `spec`; `partial` as the plain-Flux
    KubeVirt overlay is applied (ssa: Merge), whose annotation the live object then carries too
    (kustomize-controller applies it with the rest)."""
    meta: dict[str, Any] = {"name": live["metadata"]["name"]}
    if live["metadata"].get("namespace"):
        meta["namespace"] = live["metadata"]["namespace"]
    if partial:
        meta["annotations"] = dict(MERGE)
        live["metadata"]["annotations"] = {**live["metadata"].get("annotations", {}), **MERGE}
    return {"apiVersion": live["apiVersion"], "kind": live["kind"], "metadata": meta, "spec": spec}


def run(
    git: list[dict[str, Any]], live: list[dict[str, Any]], empty: tuple[str, ...] = ()
) -> AuditResult:
    desired = Desired("real", "profiles-head", "main@sha1:" + "0" * 40, PackedObjects(git))
    return audit(desired, Live(SnapshotReader(copy.deepcopy(live), empty)), None, now=0.0)


def only(result: AuditResult, path: str) -> Finding:
    assert result.complete, result.problems
    found = [f for f in result.findings if f.path == path]
    assert len(found) == 1, [(f.path, f.message) for f in result.findings]
    assert len(result.findings) == 1, [(f.path, f.message) for f in result.findings]
    return found[0]


def gpu_wiring(live: dict[str, Any]) -> dict[str, Any]:
    """The plain-Flux overlay for a live KubeVirt CR: its GPU wiring, declared as it is live."""
    config = live["spec"]["configuration"]
    spec: dict[str, Any] = {"configuration": {}}
    for key in ("developerConfiguration", "permittedHostDevices"):
        if key in config:
            value = config[key]
            if key == "developerConfiguration":
                value = {"featureGates": value.get("featureGates", [])}
            spec["configuration"][key] = copy.deepcopy(value)
    return spec


# -- clean pairings: nothing to report ------------------------------------------------------------

KUBEVIRTS = (
    "kubevirt-release-manifest.yaml",
    "kubevirt-harvester-duplicates.yaml",
    "kubevirt-harvester-fleet.yaml",
    "kubevirt-user-guide-permitted.yaml",
)


@pytest.mark.parametrize("name", KUBEVIRTS)
def test_kubevirt_under_the_plain_flux_overlay_is_clean(name: str) -> None:
    live = real(name)
    result = run([declared(live, gpu_wiring(live), partial=True)], [live], NO_VMS)
    assert result.complete and result.findings == [], [f.message for f in result.findings]
    assert result.exit_code == 0


def _whole(name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    live = real(name)
    return declared(live, copy.deepcopy(live["spec"])), live


def _applied_clusterpolicy_v23() -> tuple[dict[str, Any], dict[str, Any]]:
    """The v23.9.1 ClusterPolicy as applied: without what its CRD defaulted on write."""
    live = real("clusterpolicy-v23.9.1.yaml")
    spec = copy.deepcopy(live["spec"])
    del spec["daemonsets"], spec["driver"]["upgradePolicy"]
    return declared(live, spec), live


def _flux_example_helmrelease() -> tuple[dict[str, Any], dict[str, Any]]:
    """apps/base/podinfo/release.yaml as git has it (no CRD defaults)."""
    live = real("helmrelease-podinfo-example.yaml")
    spec = copy.deepcopy(live["spec"])
    del spec["chart"]["spec"]["reconcileStrategy"], spec["chart"]["spec"]["version"]
    return declared(live, spec), live


def _gotk_sync(name: str, drop: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    live = real(name)
    spec = {k: copy.deepcopy(v) for k, v in live["spec"].items() if k not in drop}
    return declared(live, spec), live


Pair = tuple[dict[str, Any], dict[str, Any]]
PAIRS: dict[str, Callable[[], Pair]] = {
    "clusterpolicy-v23.9.1": _applied_clusterpolicy_v23,
    "clusterpolicy-v24": lambda: _whole("clusterpolicy-v24.yaml"),
    "helmrelease-history": lambda: _whole("helmrelease-podinfo-history.yaml"),
    "helmrelease-example": _flux_example_helmrelease,
    # gotk-sync.yaml declares neither the GitRepository's timeout nor the Kustomization's force:
    # both are CRD defaults the server filled in
    "gitrepository": lambda: _gotk_sync("gitrepository-sveltos.yaml", ("timeout",)),
    "kustomization": lambda: _gotk_sync("kustomization-flux-system.yaml", ("force",)),
    "virtualmachine": lambda: _whole("virtualmachine-gpus.yaml"),
}


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_objects_git_applied_whole_are_clean(pair: str) -> None:
    git, live = PAIRS[pair]()
    result = run([git], [live], NO_VMS)
    assert result.complete and result.findings == [], [f.message for f in result.findings]
    # without managedFields too: nothing to attribute, nothing found
    result = run([git], [bare(live)], NO_VMS)
    assert result.findings == [] and result.warnings == [], [f.message for f in result.findings]


def git_findings(git: dict[str, Any], live: dict[str, Any]) -> list[Finding]:
    """The git comparison alone (what compare_git does for one object)."""
    findings = Findings(ProfileContext("real", "cozystack"))
    controller = Controller("kustomization", name="flux-system/real")
    made = [
        findings.from_change(c, live, controller, "git", partial=is_partial(git, live))
        for c in compare_objects(git, live)
    ]
    return [f for f in made if f is not None]


def test_cozystack_platform_package_is_clean() -> None:
    """Git comparison only: a whole audit of a Cozystack cluster also needs the Packages and the
    KubeVirt CR the platform renders, which this example installation does not show."""
    git, live = _whole("package-cozystack-platform.yaml")
    assert git_findings(git, live) == []
    assert git_findings(git, bare(live)) == []
    # a hand edit of the platform's GPU values: high, kubectl's fields are taken over by Flux
    edited = copy.deepcopy(live)
    edited["spec"]["components"]["platform"]["values"]["gpu"] = {"replaceDefaults": True}
    edit = entry("kubectl-edit", {"f:components": {"f:platform": {"f:values": {"f:gpu": {}}}}})
    [found] = git_findings(git, with_edit(edited, [edit]))
    assert (found.type, found.path, found.severity) == (
        "added",
        "/spec/components/platform/values/gpu",
        "high",
    )
    assert found.revert == "next-reconcile" and [m.manager for m in found.managers] == [
        "kubectl-edit"
    ]


def test_vm_gpus_permitted_by_a_real_kubevirt_are_not_reported() -> None:
    kubevirt, vm = real("kubevirt-user-guide-permitted.yaml"), real("virtualmachine-gpus.yaml")
    git = [declared(kubevirt, gpu_wiring(kubevirt), partial=True), declared(vm, vm["spec"])]
    result = run(git, [kubevirt, vm])
    assert result.complete and result.findings == []
    # the same VM against a KubeVirt permitting nothing: the one check that must speak
    release = real("kubevirt-release-manifest.yaml")
    release["metadata"]["namespace"] = kubevirt["metadata"]["namespace"]
    git = [declared(release, gpu_wiring(release), partial=True), declared(vm, vm["spec"])]
    result = run(git, [release, vm])
    assert [f.path for f in result.findings] == []  # no permittedHostDevices: not checked
    assert any("has no permittedHostDevices" in n for n in result.notes)


def test_node_labelled_as_the_profile_says_is_clean() -> None:
    node = real("node-gpu.yaml")
    findings = Findings(ProfileContext("real", "flux"))
    assert label_finding(findings, node, "vm-passthrough", "passthrough") is None
    relabelled = copy.deepcopy(node)
    relabelled["metadata"]["labels"]["nvidia.com/gpu.workload.config"] = "container"
    found = label_finding(findings, relabelled, "vm-passthrough", "passthrough")
    assert found is not None
    assert (found.type, found.severity, found.revert) == ("modified", "medium", "never")


# -- planted drift ---------------------------------------------------------------------------------


def _drop(fields: dict[str, Any], taken: dict[str, Any]) -> None:
    """Remove from `fields` the leaves `taken` owns (an Update moves ownership of what it set)."""
    for key, sub in taken.items():
        if key not in fields:
            continue
        if sub == {} or fields[key] == {}:
            del fields[key]
        else:
            _drop(fields[key], sub)


def with_edit(live: dict[str, Any], managers: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The live object after the edits `managers` record (None: as `kubectl get -o yaml`
    prints it, managedFields hidden)."""
    out = copy.deepcopy(live)
    if managers is None:
        out["metadata"].pop("managedFields", None)
        return out
    entries = out["metadata"].get("managedFields", [])
    for new in managers:
        for old in entries:
            _drop(old["fieldsV1"], new["fieldsV1"])
    out["metadata"]["managedFields"] = [*entries, *managers]
    return out


KUBECTL_EDIT_PCI = entry(
    "kubectl-edit", {"f:configuration": {"f:permittedHostDevices": {"f:pciHostDevices": {}}}}
)
LENS_GATES = entry(
    "node-fetch", {"f:configuration": {"f:developerConfiguration": {"f:featureGates": {}}}}
)


@pytest.mark.parametrize("managed", [True, False], ids=["managedFields", "kubectl-get"])
def test_kubectl_edit_adds_a_device_git_does_not_declare(managed: bool) -> None:
    """Release-manifest KubeVirt, plain-Flux overlay declaring no devices (ssa: Merge)."""
    live = real("kubevirt-release-manifest.yaml")
    git = declared(live, gpu_wiring(live), partial=True)
    live["spec"]["configuration"]["permittedHostDevices"] = {"pciHostDevices": [A100]}
    found = only(
        run([git], [with_edit(live, [KUBECTL_EDIT_PCI] if managed else None)], NO_VMS), PERMITTED
    )
    assert (found.type, found.severity) == ("added", "high")
    if managed:
        assert [m.manager for m in found.managers] == ["kubectl-edit"]
        assert (found.revert, found.missed_by_drift_detection) == ("never", True)
    else:
        assert found.managers == [] and found.revert == "unknown"


@pytest.mark.parametrize("managed", [True, False], ids=["managedFields", "kubectl-get"])
@pytest.mark.parametrize("name", KUBEVIRTS)
def test_lens_adds_a_gate_to_the_declared_list(name: str, managed: bool) -> None:
    live = real(name)
    git = declared(live, gpu_wiring(live), partial=True)
    gates = live["spec"]["configuration"].setdefault("developerConfiguration", {})
    gates["featureGates"] = [*gates.get("featureGates", []), "Snapshot"]
    result = run([git], [with_edit(live, [LENS_GATES] if managed else None)], NO_VMS)
    found = only(result, GATES)
    assert (found.type, found.severity, found.revert) == ("modified", "high", "next-reconcile")
    assert found.details == ["added Snapshot"]
    assert [m.manager for m in found.managers] == (["node-fetch"] if managed else [])
    assert bool(result.warnings) == (not managed)


def test_declared_empty_gate_list_against_a_hand_added_gate() -> None:
    """kubevirt-cr.yaml declares `featureGates: []`: a gate added live is reverted by the next
    apply, not "never reverted"."""
    live = real("kubevirt-release-manifest.yaml")
    git = declared(live, {"configuration": {"developerConfiguration": {"featureGates": []}}}, True)
    live["spec"]["configuration"]["developerConfiguration"]["featureGates"] = ["HostDevices"]
    found = only(run([git], [with_edit(live, [LENS_GATES])], NO_VMS), GATES)
    assert (found.type, found.desired, found.live) == ("modified", [], ["HostDevices"])
    assert (found.severity, found.revert) == ("high", "next-reconcile")


def test_kubectl_edit_in_a_declared_device_list() -> None:
    live = real("kubevirt-user-guide-permitted.yaml")
    git = declared(live, gpu_wiring(live), partial=True)
    live["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"].append(A100)
    for managers in ([KUBECTL_EDIT_PCI], None):
        found = only(run([git], [with_edit(live, managers)], NO_VMS), PCI)
        assert (found.type, found.severity, found.revert) == ("modified", "high", "next-reconcile")
        assert found.details == [f"added 10DE:20B5 -> {A100['resourceName']}"]
        assert ("kubectl-edit" in [m.manager for m in found.managers]) == (managers is not None)


def test_harvester_duplicate_selectors_are_reported_with_a_fix_that_can_be_done() -> None:
    live = real("kubevirt-harvester-duplicates.yaml")
    spec = gpu_wiring(live)
    spec["configuration"]["permittedHostDevices"]["pciHostDevices"].pop()  # git permits one
    found = only(run([declared(live, spec, partial=True)], [live], NO_VMS), PCI)
    assert found.severity == "high"
    assert found.details == [
        "duplicate 8086:10ed: live lists it 2 times (8086:10ed -> "
        "intel.com/hp-148-tink-system-000004101; 8086:10ed -> "
        "intel.com/hp-148-tink-system-000004103)"
    ]
    assert "changed" not in " ".join(found.details)
    assert "delete the duplicate entries" in found.fix
    assert "move this device into spec.devices" not in found.fix


K9S_SANDBOX = entry("k9s", {"f:sandboxWorkloads": {"f:enabled": {}}})


@pytest.mark.parametrize("managed", [True, False], ids=["managedFields", "kubectl-get"])
def test_k9s_edit_of_the_clusterpolicy(managed: bool) -> None:
    git, live = _whole("clusterpolicy-v24.yaml")
    live["spec"]["sandboxWorkloads"]["enabled"] = True
    found = only(
        run([git], [with_edit(live, [K9S_SANDBOX] if managed else None)]),
        "/spec/sandboxWorkloads/enabled",
    )
    assert (found.type, found.desired, found.live) == ("modified", False, True)
    assert (found.severity, found.revert) == ("high", "next-reconcile")
    assert [m.manager for m in found.managers] == (["k9s"] if managed else [])


def test_k9s_adds_a_vgpu_setting_git_does_not_declare() -> None:
    """On an object git applies whole (no ssa: Merge), kustomize-controller never takes over
    k9s's field: it stays, and it is GPU wiring."""
    git, live = _applied_clusterpolicy_v23()
    live["spec"]["vgpuManager"] = {"enabled": True}
    k9s = entry("k9s", {"f:vgpuManager": {"f:enabled": {}}})
    found = only(run([git], [with_edit(live, [k9s])]), "/spec/vgpuManager")
    assert (found.type, found.severity, found.revert) == ("added", "high", "never")
    assert [m.manager for m in found.managers] == ["k9s"]
    # without managedFields it is still high; who wrote it and what reverts it is unknown
    found = only(run([git], [with_edit(live, None)]), "/spec/vgpuManager")
    assert (found.severity, found.revert, found.managers) == ("high", "unknown", [])


LENS_HOST_DEVICES = {
    # Lens's node-fetch, adding a host device as an atomic list (KubeVirt's CRD marks none)...
    "atomic": {"f:hostDevices": {}},
    # ... and as a server would record it where the list is keyed by name
    "keyed": {"f:hostDevices": {'k:{"name":"hd1"}': {".": {}, "f:deviceName": {}, "f:name": {}}}},
}


@pytest.mark.parametrize("shape", ["atomic", "keyed", "kubectl-get"])
def test_a_vm_asking_for_an_unpermitted_device_names_who_added_it(shape: str) -> None:
    kubevirt, vm = real("kubevirt-user-guide-permitted.yaml"), real("virtualmachine-gpus.yaml")
    git = [declared(kubevirt, gpu_wiring(kubevirt), partial=True), declared(vm, vm["spec"])]
    devices = vm["spec"]["template"]["spec"]["domain"]["devices"]
    devices["hostDevices"] = [{"deviceName": "nvidia.com/GA100_A100_PCIE_80GB", "name": "hd1"}]
    fields = LENS_HOST_DEVICES.get(shape)
    edit = None
    if fields is not None:
        edit = entry("node-fetch", {"f:template": {"f:spec": {"f:domain": {"f:devices": fields}}}})
    result = run(git, [kubevirt, with_edit(vm, [edit] if edit else None)])
    found = only(result, "/spec/template/spec/domain/devices/hostDevices/0/deviceName")
    assert (found.type, found.severity) == ("missing", "high")
    if edit:
        assert [(m.manager, m.time) for m in found.managers] == [("node-fetch", T_EDIT)]
        assert result.warnings == []
    else:
        assert found.managers == []
        (warning,) = result.warnings
        assert "VirtualMachine" in warning and "--show-managed-fields" in warning


def test_a_relabelled_node_without_managed_fields_says_how_to_get_them() -> None:
    node = bare(real("node-gpu.yaml"))
    node["metadata"]["labels"]["nvidia.com/gpu.workload.config"] = "container"
    findings = Findings(ProfileContext("real", "flux"))
    found = label_finding(findings, node, "vm-passthrough", "passthrough")
    assert found is not None and found.managers == []
    (warning,) = findings.warnings()
    assert f"Node {node['metadata']['name']}" in warning
    assert "kubectl get --show-managed-fields -o yaml" in warning


# -- the release the cluster runs picks the defaults ---------------------------------------------

HELM_MIG = entry("helm", {"f:migManager": {"f:config": {"f:name": {}, "f:default": {}}}})


def _v25_3_2_install(label: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """A ClusterPolicy as GPU Operator v25.3.2's chart declares it (`kernelModuleType: auto`, no
    migManager.config) against the live one its CRD defaulted (`migManager.config.name`), the
    field Helm's earlier apply left owned by Helm; `label`: with the chart's helm.sh/chart label."""
    git, live = _whole("clusterpolicy-v24.yaml")
    git["spec"]["driver"]["kernelModuleType"] = "auto"
    live["spec"]["migManager"]["config"] = {
        "name": "default-mig-parted-config",
        "default": "all-disabled",
    }
    if label:
        live["metadata"].setdefault("labels", {})["helm.sh/chart"] = "gpu-operator-v25.3.2"
    return git, with_edit(live, [HELM_MIG])


def test_clusterpolicy_of_a_known_release_takes_that_releases_defaults() -> None:
    git, live = _v25_3_2_install(label=True)
    result = run([git], [live])
    assert result.complete and result.findings == [], [f.message for f in result.findings]
    assert any("gpu-operator v25.3.2 (from its label helm.sh/chart" in n for n in result.notes)
    # the release unknown: neither is a default of every release v23.9.0..v26.7.0
    git, live = _v25_3_2_install(label=False)
    result = run([git], [live])
    assert sorted(f.path for f in result.findings) == [
        "/spec/driver/kernelModuleType",
        "/spec/migManager/config",
    ]
    assert any("every release v23.9.0..v26.7.0 defaults it" in n for n in result.notes)


V25_3_2 = "clusterpolicy-v25.3.2-flux.yaml"
KMT = "/spec/driver/kernelModuleType"
HELM_CONTROLLER_MIG = entry("helm-controller", {"f:migManager": {"f:config": {"f:name": {}}}})


def _chart_v25_3_2() -> tuple[dict[str, Any], dict[str, Any]]:
    """The real v25.3.2 ClusterPolicy, and what its chart declares for it: `kernelModuleType:
    auto` (clusterpolicy.yaml L143), which the live object lacks, and no migManager.config.name,
    which the live object holds (its CRD's default until v25.10.1), owned by helm-controller."""
    live = real(V25_3_2)
    spec = copy.deepcopy(live["spec"])
    spec["driver"]["kernelModuleType"] = "auto"
    del spec["migManager"]["config"]["name"]
    git = declared(live, spec)
    labels = live["metadata"]["labels"]
    # the chart's labels (gpu-operator.labels); Helm's annotations and Flux's labels are injected
    git["metadata"]["labels"] = {k: v for k, v in labels.items() if "fluxcd" not in k}
    return git, live


@pytest.mark.parametrize("managed", [True, False], ids=["managedFields", "kubectl-get"])
def test_real_v25_3_2_clusterpolicy_takes_its_releases_defaults(managed: bool) -> None:
    git, live = _chart_v25_3_2()
    live = with_edit(live, [HELM_CONTROLLER_MIG] if managed else None)
    result = run([git], [live])
    assert result.complete and result.findings == [], [f.message for f in result.findings]
    assert any(
        "ClusterPolicy: no CRD read; the defaults and list types of gpu-operator v25.3.2 (from "
        "its label helm.sh/chart=gpu-operator-v25.3.2)" in n
        for n in result.notes
    ), result.notes
    # the same object with its chart label stripped: the release is unknown, so neither value is
    # a default of every release (kernelModuleType's is v25.3.0 on, config.name's until v25.10.1)
    del live["metadata"]["labels"]["helm.sh/chart"], git["metadata"]["labels"]["helm.sh/chart"]
    found = {f.path: f for f in run([git], [live]).findings}
    assert (found[KMT].type, found[KMT].severity) == ("removed", "high")
    assert sorted(found) == sorted([KMT, *(["/spec/migManager/config"] if managed else [])])


def test_real_v25_3_2_clusterpolicy_time_slicing_edit_is_found() -> None:
    git, live = _chart_v25_3_2()
    live["spec"]["devicePlugin"]["config"]["name"] = "time-slicing-config-x4"
    k9s = entry("k9s", {"f:devicePlugin": {"f:config": {"f:name": {}}}})
    found = only(
        run([git], [with_edit(live, [HELM_CONTROLLER_MIG, k9s])]), "/spec/devicePlugin/config/name"
    )
    assert (found.type, found.desired, found.live) == (
        "modified",
        "time-slicing-config",
        "time-slicing-config-x4",
    )
    assert found.severity in ("high", "medium", "low") and found.revert == "next-reconcile"
    assert [m.manager for m in found.managers] == ["k9s"]


OKD = "kubevirt-gpu-device-plugin-okd.yaml"
P40 = {"pciVendorSelector": "10DE:1B38", "resourceName": "nvidia.com/GP102GL_Tesla_P40"}


def _okd_kubevirt() -> tuple[dict[str, Any], dict[str, Any]]:
    """The OKD KubeVirt CR and what `kubectl apply` gave it (its last-applied spec)."""
    live = real(OKD)
    return declared(live, copy.deepcopy(live["spec"])), live


def test_okd_kubevirt_applied_whole_is_clean_and_says_the_release_is_unknown() -> None:
    git, live = _okd_kubevirt()
    for shown in (live, bare(live)):
        result = run([git], [shown], NO_VMS)
        assert result.complete and result.findings == [], [f.message for f in result.findings]
    assert any(
        n.startswith("KubeVirt: no CRD read and nothing in the snapshot names the release")
        for n in result.notes
    ), result.notes


def test_okd_kubevirt_gpu_gate_and_device_edited_in_are_found() -> None:
    """What the thread did next: the GPU gate and the P40 put into the CR by hand (the example
    CR of the issue's description), which git does not declare."""
    git, live = _okd_kubevirt()
    live["spec"]["configuration"] = {
        "developerConfiguration": {"featureGates": ["GPU"]},
        "permittedHostDevices": {"pciHostDevices": [P40]},
    }
    edit = entry(
        "kubectl-edit",
        {"f:configuration": {"f:developerConfiguration": {}, "f:permittedHostDevices": {}}},
    )
    result = run([git], [with_edit(live, [edit])], NO_VMS)
    found = {f.path: f for f in result.findings}
    assert sorted(found) == [f"{CONFIG}/developerConfiguration", PERMITTED]
    for finding in found.values():
        assert (finding.type, finding.severity) == ("added", "high")
        assert [m.manager for m in finding.managers] == ["kubectl-edit"]


def test_a_release_newer_than_the_tables_falls_back_to_what_every_release_agrees_on() -> None:
    git, live = _chart_v25_3_2()
    for obj in (git, live):
        obj["metadata"]["labels"]["helm.sh/chart"] = "gpu-operator-v27.1.0"
    result = run([git], [live])
    assert [f.path for f in result.findings] == [KMT]
    assert any(
        "gpu-operator v27.1.0 (from its label helm.sh/chart=gpu-operator-v27.1.0) is not in the "
        "tables" in n
        for n in result.notes
    ), result.notes


VELERO = "helmrelease-velero-restored.yaml"
VELERO_LABELS = ("velero.io/backup-name", "velero.io/restore-name")


def _restored() -> tuple[dict[str, Any], dict[str, Any]]:
    """The restored HelmRelease and what git applies: its spec without the CRD's defaults."""
    live = real(VELERO)
    spec = copy.deepcopy(live["spec"])
    del spec["chart"]["spec"]["version"]  # a default of every helm-controller release
    return declared(live, spec), live


def test_velero_restored_helmrelease_shows_only_the_restore() -> None:
    git, live = _restored()
    result = run([git], [bare(live)], NO_VMS)
    # without managedFields, the restore's labels (the real drift this dump shows) are all there
    # is, at info: a label no one can be named for is not told from one the server set
    assert result.complete and {(f.path, f.severity) for f in result.findings} == {
        (f"/metadata/labels/{k.replace('/', '~1')}", "info") for k in VELERO_LABELS
    }
    result = run([git], [live], NO_VMS)
    assert result.complete and result.findings == [], [f.message for f in result.findings]
    # Flux's CRDs agree across releases: no note on which release's defaults were used
    assert not any(n.startswith("HelmRelease:") for n in result.notes), result.notes


def test_velero_restore_labels_are_found_and_named_with_their_owner() -> None:
    """The labels the restore wrote, owned as Velero writes them (its restore creates the
    object): found, low (metadata), and never reverted (kustomize-controller leaves them)."""
    git, live = _restored()
    velero = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:metadata": {"f:labels": {f"f:{k}": {} for k in VELERO_LABELS}}},
        "manager": "velero-server",
        "operation": "Update",
        "time": "2022-12-15T14:51:27Z",
    }
    result = run([git], [with_edit(live, [velero])], NO_VMS)
    found = {f.path: f for f in result.findings}
    assert sorted(found) == [f"/metadata/labels/{k.replace('/', '~1')}" for k in VELERO_LABELS]
    for finding in found.values():
        assert (finding.type, finding.severity) == ("added", "low")
        assert [m.manager for m in finding.managers] == ["velero-server"]
    # a hand edit of a value the git comparison finds, and names who made it
    edited = copy.deepcopy(live)
    edited["spec"]["values"]["replicaCount"] = 3
    helm_edit = entry("kubectl-edit", {"f:values": {"f:replicaCount": {}}})
    [changed] = git_findings(git, with_edit(edited, [helm_edit]))
    # HelmRelease values can hold secrets: the finding shows digests, never the values
    assert (changed.type, changed.path, changed.redacted) == (
        "modified",
        "/spec/values/replicaCount",
        True,
    )
    assert [m.manager for m in changed.managers] == ["kubectl-edit"]
