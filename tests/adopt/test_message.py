"""The adopt commit message and pull-request body: who changed what and when, the Adopted-From
trailer, and no secret (not even its digest) for a finding that holds one."""

from __future__ import annotations

from adopt.message import MARKER, commit_message, pr_body
from adopt.plan import Adoptable, Refused, revert_command
from adopt.yamledit import Edit
from audit.findings.finding import Finding, Manager, ObjectRef

NODE = Finding(
    "modified",
    ObjectRef("v1", "Node", "", "gpu-1"),
    "/metadata/labels/nvidia.com~1gpu.workload.config",
    desired="vm-passthrough",
    live="container",
    managers=[Manager("kubectl-label", "Update", "2026-11-20T15:41:07Z")],
)
SECRET = Finding(
    "modified",
    ObjectRef("v1", "Secret", "gpu-operator", "licensing-config"),
    "/data/client_configuration_token.tok",
    desired={"redacted": "sha256:" + "a" * 64},
    live={"redacted": "sha256:" + "b" * 64},
    redacted=True,
)
ADOPTED = Adoptable(
    NODE, "clusters/ams1/gpu-profile.yaml", (Edit("set", ("spec", "nodes", "gpu-1"), "container"),)
)
REFUSED = Refused(SECRET, "the value is a secret", revert_command(SECRET, "ams1"))


def test_commit_message_lists_the_findings_and_ends_with_the_trailer() -> None:
    text = commit_message("ams1", [ADOPTED], "snapshot dumps/ams1", 1_767_225_600.0)
    assert text == (
        "Adopt live drift of ams1: 1 finding\n"
        "\n"
        f"- {NODE.id} Node gpu-1 /metadata/labels/nvidia.com~1gpu.workload.config "
        "(changed by kubectl-label at 2026-11-20T15:41:07Z)\n"
        "  clusters/ams1/gpu-profile.yaml: spec.nodes.gpu-1 = container\n"
        "\n"
        "Adopted-From: snapshot dumps/ams1 at 2026-01-01T00:00:00Z\n"
    )


def test_pr_body_holds_no_secret_value_or_digest() -> None:
    body = pr_body("ams1", [ADOPTED], [REFUSED], "cluster ams1", 0.0, "### gpu-gitops diff\n")
    assert body.startswith(MARKER + "\n## Adopt live drift of ams1: 1 finding\n")
    assert f"| `{NODE.id}` | `Node gpu-1` |" in body
    assert "kubectl-label at 2026-11-20T15:41:07Z" in body
    assert f"- `{SECRET.id}` `Secret gpu-operator/licensing-config`" in body
    assert "sha256" not in body and "aaaa" not in body and "bbbb" not in body
    assert body.rstrip().endswith("### gpu-gitops diff")
