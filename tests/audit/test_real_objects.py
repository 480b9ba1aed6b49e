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
    desired = Desired("real", "profiles-head", "main@sha1:" + "0" * 40, tuple(git))
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
