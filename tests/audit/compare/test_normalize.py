"""Normalization: noise compares equal, and what is not noise survives."""

from __future__ import annotations

import base64
import datetime as dt
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

from audit.compare.known_types import DEFAULTS
from audit.compare.normalize import canonical_duration, normalize
from audit.compare.pairs import compare_objects
from audit.compare.quantity import QuantityError, canonical_quantity, parse_quantity
from kubedata.objects import canonical


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1Gi", 1 << 30),
        ("1073741824", 1 << 30),
        (1073741824, 1 << 30),
        ("1024Mi", 1 << 30),
        ("1Ki", 1024),
        ("1Mi", 1024**2),
        ("1Ti", 1024**4),
        ("1Pi", 1024**5),
        ("1Ei", 1024**6),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),
        ("100m", Fraction(1, 10)),
        ("0.1", Fraction(1, 10)),
        (".5", Fraction(1, 2)),
        ("1.5Gi", 3 * (1 << 29)),
        ("1e3", 1000),
        ("1E3", 1000),
        ("12e-1", Fraction(6, 5)),
        ("+2", 2),
        ("-1Ki", -1024),
        ("0", 0),
        (0.25, Fraction(1, 4)),
    ],
)
def test_quantities_parse_exactly(text: Any, value: Any) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("bad", ["", "Gi", "1 Gi", "1gi", "1KiB", "one", "1e", "1.2.3", True, None])
def test_not_quantities(bad: Any) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("1Gi", 1073741824),
        ("1024Mi", "1Gi"),
        ("0.5", "500m"),
        ("1000m", "1"),
        ("1000M", "1G"),
        ("3072Mi", "3Gi"),
        ("1e3", "1k"),
    ],
)
def test_equal_quantities_have_one_spelling(a: Any, b: Any) -> None:
    assert canonical_quantity(a) == canonical_quantity(b)


def test_durations() -> None:
    assert canonical_duration("10m") == canonical_duration("600s") == "10m0s"
    assert canonical_duration("1h30m") == "1h30m0s"
    assert canonical_duration("500ms") == "500ms"
    assert canonical_duration("soon") == "soon"


def _pod(resources: dict[str, Any], **container: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app", "namespace": "default"},
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1.2", "resources": resources, **container}
                    ]
                }
            }
        },
    }


def test_quantities_compare_as_numbers_at_quantity_paths_only() -> None:
    desired = _pod({"limits": {"memory": "1Gi", "cpu": "0.5"}})
    live = _pod({"limits": {"memory": "1073741824", "cpu": "500m"}})
    assert compare_objects(desired, live) == []
    # the same strings elsewhere are compared as written
    desired["metadata"]["annotations"] = {"size": "1Gi"}
    live["metadata"]["annotations"] = {"size": "1073741824"}
    assert [c.pointer for c in compare_objects(desired, live)] == ["/metadata/annotations/size"]


def test_server_metadata_status_and_last_applied_are_stripped() -> None:
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "x",
            "namespace": "default",
            "uid": "u",
            "resourceVersion": "9",
            "generation": 2,
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": [{"manager": "m"}],
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"data":1}'},
        },
        "data": {"a": "1"},
        "status": {"whatever": True},
    }
    assert normalize(live) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default"},
        "data": {"a": "1"},
    }


def test_string_data_equals_base64_data_and_opaque_is_the_default() -> None:
    desired = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "default"},
        "stringData": {"token": "abc"},
    }
    live: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "default"},
        "type": "Opaque",
        "data": {"token": base64.b64encode(b"abc").decode()},
    }
    assert compare_objects(desired, live) == []
    live["data"]["token"] = base64.b64encode(b"abd").decode()
    assert [c.pointer for c in compare_objects(desired, live)] == ["/data/token"]


def test_api_defaults_are_not_drift() -> None:
    desired = _pod({})
    live = _pod(
        {},
        terminationMessagePath="/dev/termination-log",
        terminationMessagePolicy="File",
        imagePullPolicy="IfNotPresent",
    )
    live["spec"].update(replicas=1, revisionHistoryLimit=10, progressDeadlineSeconds=600)
    live["spec"]["strategy"] = {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    live["spec"]["template"]["spec"].update(dnsPolicy="ClusterFirst", restartPolicy="Always")
    assert compare_objects(desired, live) == []


def test_image_pull_policy_default_follows_the_tag() -> None:
    desired = _pod({})
    desired["spec"]["template"]["spec"]["containers"][0]["image"] = "app:latest"
    live = _pod({}, imagePullPolicy="IfNotPresent")
    live["spec"]["template"]["spec"]["containers"][0]["image"] = "app:latest"
    # IfNotPresent is not the default for :latest, so it is drift
    assert [c.pointer for c in compare_objects(desired, live)] == [
        "/spec/template/spec/containers/0/imagePullPolicy"
    ]


def test_empty_is_absent_but_kubevirt_flags_are_values() -> None:
    desired = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {}}
    live = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {}}}
    assert compare_objects(desired, live) == []
    kv = {"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt", "metadata": {"name": "kubevirt"}}
    flagged = {
        **kv,
        "spec": {"configuration": {"virtualMachineOptions": {"disableSerialConsoleLog": {}}}},
    }
    changes = compare_objects(flagged, {**kv, "spec": {}})
    assert [c.kind for c in changes] == ["removed"]


def test_int_or_string_and_bool_types_are_kept() -> None:
    def svc(port: Any) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            "data": {"port": port},
        }

    assert compare_objects(svc(8080), svc("8080"))
    assert compare_objects(svc(True), svc(1))
    assert compare_objects(svc(1), svc(1.0)) == []


def test_yaml_typing_of_desired_files() -> None:
    doc = yaml.safe_load("a: 2026-01-02T03:04:05Z\nb: 1.0\nc: 2026-01-02\n")
    assert isinstance(doc["a"], dt.datetime)
    obj = normalize(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": doc}
    )
    assert obj["data"] == {"a": "2026-01-02T03:04:05Z", "b": 1, "c": "2026-01-02"}


def test_platform_values_equal_to_chart_defaults_are_not_drift() -> None:
    def platform(gpu: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "cozystack.io/v1alpha1",
            "kind": "Package",
            "metadata": {"name": "cozystack.cozystack-platform"},
            "spec": {"components": {"platform": {"values": {"gpu": gpu}}}},
        }

    explicit = platform({"replaceDefaults": False, "vgpuDeviceManager": {"enabled": False}})
    assert compare_objects(explicit, platform({})) == []
    assert compare_objects(platform({"replaceDefaults": True}), platform({}))


def test_flux_durations_and_crd_defaults() -> None:
    hr = {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "h", "namespace": "n"},
        "spec": {"interval": "10m", "chart": {"spec": {"chart": "c"}}},
    }
    live = {
        **hr,
        "spec": {
            "interval": "600s",
            "chart": {"spec": {"chart": "c", "reconcileStrategy": "ChartVersion", "version": "*"}},
        },
    }
    assert compare_objects(hr, live) == []


def _crd_defaults(schema: Any, path: tuple[str, ...], out: dict[tuple[str, ...], Any]) -> None:
    if not isinstance(schema, dict):
        return
    if "default" in schema:
        out[path] = schema["default"]
    for key, sub in (schema.get("properties") or {}).items():
        _crd_defaults(sub, (*path, key), out)
    if isinstance(schema.get("items"), dict):
        _crd_defaults(schema["items"], (*path, "*"), out)


@pytest.mark.parametrize(
    ("file", "group", "kind"),
    [
        (
            "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
        ),
        (
            "kustomize-controller/config/crd/bases/kustomize.toolkit.fluxcd.io_kustomizations.yaml",
            "kustomize.toolkit.fluxcd.io",
            "Kustomization",
        ),
        (
            "source-controller/config/crd/bases/source.toolkit.fluxcd.io_gitrepositories.yaml",
            "source.toolkit.fluxcd.io",
            "GitRepository",
        ),
        (
            "gpu-operator/deployments/gpu-operator/crds/nvidia.com_clusterpolicies.yaml",
            "nvidia.com",
            "ClusterPolicy",
        ),
    ],
)
def test_defaults_table_covers_the_real_crds(
    reference_dir: Path, file: str, group: str, kind: str
) -> None:
    crd = yaml.safe_load((reference_dir / file).read_text())
    version = next(v for v in crd["spec"]["versions"] if v.get("storage"))
    found: dict[tuple[str, ...], Any] = {}
    _crd_defaults(version["schema"]["openAPIV3Schema"], (), found)
    table = {d.path: d.value for d in DEFAULTS[(group, kind)]}
    for path, value in found.items():
        if path[:1] == ("status",):
            continue
        assert table.get(path) == value, f"{kind} {'/'.join(path)} default {value!r} missing"


def test_canonical_is_key_order_free() -> None:
    assert canonical({"a": 1, "b": [1, 2]}) == canonical({"b": [1, 2], "a": 1})


# -- the decision points, as tables ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "spelling"),
    [
        ("1Gi", "1Gi"),
        (1073741824, "1Gi"),
        ("-1Gi", "-1Gi"),
        ("-500m", "-500m"),
        (-1.5, "-1500m"),
        ("-2000", "-2k"),
        ("0.5", "500m"),
        ("1.5", "1500m"),
        ("12345m", "12345m"),
        ("1.25m", "0.00125"),
        ("-0.0001", "-0.0001"),
        ("1500", "1500"),
        ("2000", "2k"),
        ("0", "0"),
        ("-0", "0"),
    ],
)
def test_each_quantity_has_one_spelling_sign_included(value: Any, spelling: str) -> None:
    """Negative quantities keep their sign: -1Gi of a limit is not 1Gi."""
    assert canonical_quantity(value) == spelling


@pytest.mark.parametrize("exponent", ["1e101", "1e-101", "5E-1000000", "1e1000000"])
def test_an_exponent_out_of_range_either_way_is_refused(exponent: str) -> None:
    """A hostile 1e-1000000 would cost seconds of arithmetic: refused like 1e1000000."""
    with pytest.raises(QuantityError, match="exponent out of range"):
        parse_quantity(exponent)
    assert parse_quantity("1e-100") == Fraction(1, 10**100)


@pytest.mark.parametrize(
    ("text", "spelling"),
    [
        ("1s", "1s"),
        ("1000ms", "1s"),
        ("0.5s", "500ms"),
        ("1.5s", "1.5s"),
        ("90s", "1m30s"),
        ("0s", "0s"),
        ("1h", "1h0m0s"),
        ("1h1s", "1h0m1s"),
        ("250us", "250us"),
        ("1.5ns", "1.5ns"),
        ("10x", "10x"),
        ("5", "5"),
        ("", ""),
    ],
)
def test_each_duration_has_go_spelling_and_the_rest_stays_as_written(
    text: str, spelling: str
) -> None:
    assert canonical_duration(text) == spelling


@pytest.mark.parametrize(
    ("value", "json"),
    [
        (1.5, 1.5),
        (2.0, 2),
        (-3.0, -3),
        (
            dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            "2026-01-01T10:00:00Z",
        ),
        (
            dt.datetime(2026, 1, 1, 9, 30, tzinfo=dt.timezone(dt.timedelta(hours=-5))),
            "2026-01-01T14:30:00Z",
        ),
        (dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC), "2026-01-01T12:00:00Z"),
        (dt.datetime(2026, 1, 1, 12, 0), "2026-01-01T12:00:00Z"),
        (dt.date(2026, 1, 2), "2026-01-02"),
        (b"ab", "YWI="),
    ],
)
def test_plain_json_values(value: Any, json: Any) -> None:
    """YAML's typing of a desired file, as the API server would store it: timestamps in UTC."""
    got = normalize(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "x": value}
    )
    assert got["x"] == json and type(got["x"]) is type(json)


def test_a_timestamp_written_with_an_offset_equals_the_same_instant_live() -> None:
    desired = yaml.safe_load(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nx: 2026-01-01T12:00:00+02:00\n"
    )
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c"},
        "x": "2026-01-01T10:00:00Z",
    }
    assert compare_objects(desired, live) == []
    live["x"] = "2026-01-01T12:00:00Z"
    assert [c.pointer for c in compare_objects(desired, live)] == ["/x"]


def test_string_data_wins_over_data_as_the_api_server_merges_them() -> None:
    """stringData is written over data on write: a key in both is stringData's."""
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s", "namespace": "default"},
        "data": {
            "token": base64.b64encode(b"old").decode(),
            "other": base64.b64encode(b"o").decode(),
        },
        "stringData": {"token": "new"},
    }
    assert normalize(secret)["data"] == {
        "token": base64.b64encode(b"new").decode(),
        "other": base64.b64encode(b"o").decode(),
    }
