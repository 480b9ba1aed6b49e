"""Which changes become findings (collect.py): API defaults, pruned fields and the suspended
duplicate are noise; a hand deletion the served CRD keeps is drift."""

from __future__ import annotations

from typing import Any

from audit.compare.crd import schema_of
from audit.compare.pairs import compare_objects
from audit.findings.classify import Controller
from audit.findings.collect import Findings, dedup
from audit.findings.finding import Finding, ObjectRef
from audit.findings.provenance import ProfileContext
from tests.audit.compare.test_crd import widget, widget_crd

FLUX = Controller("kustomization", name="flux-system/lab1")


def entry(manager: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": "Update",
        "time": "2026-11-21T09:00:00Z",
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


def collect(
    desired: dict[str, Any], live: dict[str, Any], **kw: Any
) -> tuple[list[Finding], Findings]:
    findings = Findings(ProfileContext("lab1", "flux"))
    made = [
        findings.from_change(c, live, FLUX, "git", schema=kw.get("schema"))
        for c in compare_objects(desired, live, schema=kw.get("schema"))
    ]
    return [f for f in made if f is not None], findings


def test_a_live_only_field_no_manager_wrote_is_an_api_default_not_a_finding() -> None:
    """With managedFields to tell, a field nobody owns was set by the API server's defaulting,
    whatever its value (no table of defaults needed)."""
    live = widget(size=1, mode="fast")
    live["metadata"]["managedFields"] = [entry("kubectl-edit", {"f:spec": {"f:mode": {}}})]
    made, findings = collect(widget(size=1), live)
    assert [(f.type, f.path, [m.manager for m in f.managers]) for f in made] == [
        ("added", "/spec/mode", ["kubectl-edit"])
    ]
    live["metadata"]["managedFields"] = [entry("kubectl-create", {"f:spec": {"f:size": {}}})]
    made, findings = collect(widget(size=1), live)
    assert made == [] and findings.defaults_ignored == 1
    assert findings.noise_notes() == [
        "1 live-only field(s) no manager wrote (API defaults) were not reported"
    ]


def test_without_managed_fields_an_unknown_live_only_field_is_reported_unattributed() -> None:
    made, findings = collect(widget(size=1), widget(size=1, mode="fast"))
    assert [(f.type, f.path, f.attributed, f.severity) for f in made] == [
        ("added", "/spec/mode", False, "info")
    ]
    assert findings.warnings() and "Widget default/w" in findings.warnings()[0]


def test_a_declared_field_the_served_crd_keeps_and_live_lacks_was_removed_by_hand() -> None:
    schema = schema_of(widget_crd(), "example.com/v1")
    desired = widget(listeners=[{"name": "a", "port": 1}], colour="red", replicas=2)
    live = widget(listeners=[{"name": "a", "port": 1}])
    made, findings = collect(desired, live, schema=schema)
    # `replicas` is a field of the schema: someone deleted it; `colour` is unknown: pruned
    assert [(f.type, f.path) for f in made] == [("removed", "/spec/replicas")]
    assert findings.pruned == ["Widget default/w /spec/colour (CRD widgets.example.com v1)"]


def test_a_suspended_object_is_reported_once_as_suspended() -> None:
    ref = ObjectRef("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps")
    added = Finding(type="added", object=ref, path="/spec/suspend", live=True, severity="low")
    suspended = Finding(
        type="suspended", object=ref, path="/spec/suspend", live=True, severity="medium"
    )
    assert [f.type for f in dedup([added, suspended])] == ["suspended"]
    other = Finding(type="added", object=ref, path="/spec/interval", live="1m")
    assert [f.type for f in dedup([added, other, suspended])] == ["suspended", "added"]


def test_absorb_takes_every_record_of_the_other_after_its_own() -> None:
    """Findings made apart (the git comparison's, object by object) lose nothing when taken in:
    every record a Findings keeps, including any added later, is carried over."""
    ctx = ProfileContext("ams1", "cozystack")
    ours, theirs = Findings(ctx), Findings(ctx)
    first = Finding(type="missing", object=ObjectRef("v1", "ConfigMap", "x", "a"))
    ours.add(first)
    ours.reordered.append("ours")
    ours.defaults_ignored = 1
    records = [name for name in vars(theirs) if name != "ctx"]
    for name in records:
        value = getattr(theirs, name)
        if isinstance(value, list):
            value.append(f"their {name}")
        elif isinstance(value, set):
            value.add(f"their {name}")
        else:
            assert isinstance(value, int), f"Findings.{name}: teach this test its type"
            setattr(theirs, name, 2)
    ours.absorb(theirs)
    assert ours.made == [first, "their made"]
    assert ours.reordered == ["ours", "their reordered"]
    assert ours.defaults_ignored == 3
    for name in records:
        mine, other = getattr(ours, name), getattr(theirs, name)
        if isinstance(other, list):
            assert mine[-1:] == other, name
        elif isinstance(other, set):
            assert other <= mine, name
        else:
            assert mine >= other, name
