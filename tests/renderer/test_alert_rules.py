"""The built PrometheusRule, as Prometheus reads it: `promtool check rules --lint-fatal` on its rule
groups, and `promtool test rules` unit tests of what the alerts do over days of pushed series
(high drift fires and resolves after a clean audit; an incomplete audit fires its own alert and
leaves the drift alert firing; no complete audit for 36 h; never pushed). Also what
`spec.audit.alerts` sets: the PrometheusRule's labels and each alert's runbook_url.

promtool is Debian's (package prometheus); the tests that run it skip, saying so, without it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from renderer.bases import README_URL
from renderer.rules.checks import check_profile
from renderer.version import package_version
from tests.renderer.test_audit_rbac import PROFILES, built, loaded

PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    not PROMTOOL, reason="promtool is not installed (apt-get install prometheus)"
)
JOB = 'job="gpu-gitops-audit",cluster="c1",instance=""'
HOUR = 60  # samples, at one a minute
DAY = 24 * HOUR


def prometheus_rule(alerts: str = "true") -> dict[str, Any]:
    audit = f"  audit:\n    pushgateway: http://pgw.monitoring:9091\n    alerts: {alerts}\n"
    objects = built(loaded(PROFILES["cozystack-none"], audit=audit))
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
    return rule


def rule_file(tmp_path: Path) -> Path:
    """The PrometheusRule's rule groups as a Prometheus rule file."""
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": prometheus_rule()["spec"]["groups"]}))
    return path


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL
    return subprocess.run([PROMTOOL, *args], capture_output=True, text=True, timeout=120)


@needs_promtool
def test_the_rules_pass_promtool_lint(tmp_path: Path) -> None:
    done = promtool("check", "rules", "--lint-fatal", str(rule_file(tmp_path)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 4 rules found" in done.stdout


def expanded_annotations(alert: str, value: str) -> dict[str, str]:
    """The alert's annotations as Prometheus expands them, with `value` for {{ $value }}."""
    (rule, *_) = [r for r in prometheus_rule()["spec"]["groups"][0]["rules"] if r["alert"] == alert]
    return {k: v.replace("{{ $value }}", value) for k, v in rule["annotations"].items()}


def alert(name: str, value: str = "1", **labels: str) -> dict[str, Any]:
    return {
        "exp_labels": {"severity": "warning", **labels},
        "exp_annotations": expanded_annotations(name, value),
    }


def at(eval_time: str, name: str, *alerts: dict[str, Any]) -> dict[str, Any]:
    """At `eval_time`, alert `name` is firing exactly as `alerts` (none: not firing)."""
    return {"eval_time": eval_time, "alertname": name, "exp_alerts": list(alerts)}


def series(name: str, values: str, **labels: str) -> dict[str, str]:
    extra = "".join(f',{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{JOB}{extra}}}", "values": values}


LAST_SUCCESS = "gpu_gitops_audit_last_success_timestamp_seconds"
HIGH = {"type": "modified", "severity": "high", "revert": "never"}
GROUP = {"job": "gpu-gitops-audit", "cluster": "c1"}
SERIES = GROUP  # Prometheus drops the empty instance="" the Pushgateway exposes
# pushes once a night (t=0 is night 1); Pushgateway keeps a value until the next push changes it
TESTS: list[dict[str, Any]] = [
    {
        "name": "high drift fires, and resolves after a clean audit (the PUT drops the series)",
        "interval": "1m",
        "input_series": [
            series("gpu_gitops_audit_findings", f"2x{24 * HOUR - 1} stale", **HIGH),
            series("gpu_gitops_audit_complete", f"1x{48 * HOUR}"),
            series(LAST_SUCCESS, f"0x{24 * HOUR - 1} 86400x{24 * HOUR}"),
        ],
        "alert_rule_test": [
            at("1m", "GpuGitopsHighDrift", alert("GpuGitopsHighDrift", "2", **GROUP)),
            at("23h", "GpuGitopsHighDrift", alert("GpuGitopsHighDrift", "2", **GROUP)),
            at("25h", "GpuGitopsHighDrift"),
            at("25h", "GpuGitopsAuditMissing"),
        ],
    },
    {
        "name": "an incomplete audit fires its own alert and leaves the drift alert firing",
        "interval": "1m",
        "input_series": [
            # night 2 is incomplete: its POST keeps night 1's findings and last success
            series("gpu_gitops_audit_findings", f"2x{48 * HOUR}", **HIGH),
            series("gpu_gitops_audit_complete", f"1x{24 * HOUR - 1} 0x{24 * HOUR}"),
            series(LAST_SUCCESS, f"0x{48 * HOUR}"),
        ],
        "alert_rule_test": [
            at("23h", "GpuGitopsAuditIncomplete"),
            # pending for an hour: the Job's one retry may still complete
            at("24h30m", "GpuGitopsAuditIncomplete"),
            at(
                "25h30m",
                "GpuGitopsAuditIncomplete",
                alert("GpuGitopsAuditIncomplete", "0", **SERIES),
            ),
            at("25h30m", "GpuGitopsHighDrift", alert("GpuGitopsHighDrift", "2", **GROUP)),
            at("25h30m", "GpuGitopsAuditMissing"),
        ],
    },
    {
        "name": "no complete audit for 36 hours",
        "interval": "1m",
        "input_series": [
            series("gpu_gitops_audit_complete", f"1x{24 * HOUR - 1} 0x{24 * HOUR}"),
            series(LAST_SUCCESS, f"0x{48 * HOUR}"),
        ],
        "alert_rule_test": [
            at("35h59m", "GpuGitopsAuditMissing"),
            at(
                "36h1m",
                "GpuGitopsAuditMissing",
                alert("GpuGitopsAuditMissing", "129660", reason="stale", **SERIES),
            ),
        ],
    },
    {
        "name": "a nightly complete audit keeps the missing alert quiet",
        "interval": "1m",
        "input_series": [
            series(LAST_SUCCESS, f"0x{DAY - 1} 86400x{DAY - 1} 172800x{DAY}"),
        ],
        "alert_rule_test": [at(f"{h}h", "GpuGitopsAuditMissing") for h in (12, 35, 47, 59, 71)],
    },
    {
        "name": "never pushed: missing after 36 hours",
        "interval": "1m",
        "input_series": [{"series": 'up{job="pushgateway"}', "values": f"1x{48 * HOUR}"}],
        "alert_rule_test": [
            at("35h", "GpuGitopsAuditMissing"),
            at(
                "36h1m",
                "GpuGitopsAuditMissing",
                alert("GpuGitopsAuditMissing", "1", reason="never-pushed", **GROUP),
            ),
        ],
    },
]


@needs_promtool
def test_the_alerts_over_nights_of_pushes(tmp_path: Path) -> None:
    rules = rule_file(tmp_path)
    tests = tmp_path / "tests.yaml"
    tests.write_text(
        yaml.safe_dump({"rule_files": [rules.name], "evaluation_interval": "1m", "tests": TESTS})
    )
    done = promtool("test", "rules", str(tests))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("SUCCESS") == 1


@needs_promtool
def test_a_wrong_expectation_fails(tmp_path: Path) -> None:
    """The unit tests can fail: the drift alert expected to resolve on the incomplete night."""
    rules = rule_file(tmp_path)
    wrong = [dict(TESTS[1], alert_rule_test=[at("25h30m", "GpuGitopsHighDrift")])]
    tests = tmp_path / "tests.yaml"
    tests.write_text(yaml.safe_dump({"rule_files": [rules.name], "tests": wrong}))
    done = promtool("test", "rules", str(tests))
    assert done.returncode == 1 and "GpuGitopsHighDrift" in done.stdout + done.stderr


def test_every_alert_has_summary_description_and_runbook() -> None:
    rule = prometheus_rule()
    assert "labels" not in rule["metadata"], "alerts: true sets no labels"
    for r in rule["spec"]["groups"][0]["rules"]:
        assert set(r["annotations"]) == {"summary", "description", "runbook_url"}, r["alert"]
        readme = README_URL.format(version=package_version())
        assert r["annotations"]["runbook_url"] == f"{readme}#{r['alert'].lower()}"


def test_the_readme_has_the_runbook_sections() -> None:
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    for name in ("GpuGitopsHighDrift", "GpuGitopsAuditIncomplete", "GpuGitopsAuditMissing"):
        assert f"\n#### {name}\n" in readme, "the anchor each default runbook_url points at"


def test_alert_settings_set_labels_and_runbooks() -> None:
    settings = (
        "{labels: {release: kube-prometheus-stack}, runbookBaseURL: 'https://wiki.example.com/rb/'}"
    )
    rule = prometheus_rule(settings)
    assert rule["metadata"]["labels"] == {"release": "kube-prometheus-stack"}
    urls = {r["annotations"]["runbook_url"] for r in rule["spec"]["groups"][0]["rules"]}
    assert urls == {
        "https://wiki.example.com/rb/gpugitopshighdrift",
        "https://wiki.example.com/rb/gpugitopsauditincomplete",
        "https://wiki.example.com/rb/gpugitopsauditmissing",
    }


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("{'a b': x}", '"a b" is not a label key'),
        ("{release: 'kube prometheus'}", '"kube prometheus" is not a label value'),
        ("{'-x/y': x}", "is not a label key"),
    ],
)
def test_labels_the_api_server_would_refuse_are_refused(labels: str, message: str) -> None:
    audit = f"  audit:\n    alerts: {{labels: {labels}}}\n"
    problems = check_profile(loaded(PROFILES["flux-passthrough"], audit))
    (problem,) = [p for p in problems if p.severity == "error"]
    assert problem.field.startswith("spec.audit.alerts.labels.") and message in str(problem)


def test_labels_the_api_server_takes_are_taken() -> None:
    audit = "  audit:\n    alerts: {labels: {release: kps, example.com/team: gpu-1, empty: ''}}\n"
    problems = check_profile(loaded(PROFILES["flux-passthrough"], audit))
    assert not [p for p in problems if p.severity == "error"]
