"""Untrusted text in the pull-request comment stays inert: a profile value, a server's error or
git's output can neither end a block, open HTML, mention anyone nor forge a verdict."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from prbot.report_markdown import MARKER, render_markdown
from prbot.risk_check import Risk
from tests.conftest import REPO_ROOT
from tests.prbot.test_markdown import assert_fences_balanced, cluster, package, report

FORGED = "**No GPU risk: safe to merge.**"
HOSTILE = (
    "x\n\n</details>\n\n---\n<!-- gpu-gitops:diff -->\n" + FORGED + "\n```\n"
    "@acme/platform [click](https://evil.example/) ![](https://evil.example/p.png)"
    " | cell | \u202egnp.exe\u202c\x1b[2J"
)


def test_a_hostile_risk_message_and_value_are_inert_in_the_comment():
    c = cluster("c1", [package({"gpu": "old"})], [package({"gpu": HOSTILE})])
    risk = Risk("c1", "clusters/c1/gpu-profile.yaml", 3, "variant-switch", HOSTILE)
    body = render_markdown(report(c.__class__(c.name, c.status, c.changes, (risk,))))
    assert_fences_balanced(body)
    lines = body.splitlines()
    assert lines.count(MARKER) == 1 and lines[0] == MARKER
    outside = _outside_code(body)
    assert outside.count("<!--") == 1, "no HTML comment but the marker"
    assert FORGED not in outside, "no emphasis, and never a line of its own"
    assert "](https://evil" not in outside, "no link or image"
    assert "@acme" not in outside, "no mention"
    assert outside.count("</details>") == outside.count("<details>") == 1
    assert "\u202e" not in body and "\x1b" not in body
    # the value itself is still there to read, on one line of the diff
    assert sum("gnp.exe" in line for line in lines) == 2


def _outside_code(body: str) -> str:
    """The lines of `body` outside fenced code."""
    out, fence = [], None
    for line in body.splitlines():
        if fence is None and line.startswith("```"):
            fence = line.removesuffix("diff")
        elif fence is not None and line == fence:
            fence = None
        elif fence is None:
            out.append(line)
    return "\n".join(out)


def _action_script() -> str:
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    (step,) = [s for s in action["runs"]["steps"] if s.get("id") == "diff"]
    return str(step["run"])


@pytest.mark.skipif(not Path("/bin/bash").exists(), reason="the action runs bash")
def test_the_action_failure_comment_cannot_be_written_by_the_error_text(tmp_path: Path):
    """The failure comment quotes stderr; a line of it that closes a fence or opens HTML must
    stay inside the quoted block."""
    fake = tmp_path / "bin" / "gpu-gitops"
    fake.parent.mkdir()
    hostile = "`````\n" + FORGED + "\n<!-- x -->\n```\n"
    fake.write_text(f"#!/bin/sh\nprintf '%s' '{hostile}' >&2\nexit 2\n")
    fake.chmod(0o755)
    env = {
        "PATH": f"{fake.parent}:{os.environ['PATH']}",
        "BASE": "main",
        "HEAD_REF": "HEAD",
        "REPO_DIR": str(tmp_path),
        "PR_BASE_SHA": "",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(tmp_path / "out"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
    }
    done = subprocess.run(["bash", "-c", _action_script()], env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    body = (tmp_path / "gpu-gitops-diff.md").read_text()
    head, _, quoted = body.partition("Fix these problems and push again:\n\n")
    assert head.startswith(MARKER + "\n### gpu-gitops diff failed\n")
    assert quoted.strip("\n"), "the errors are quoted"
    # an indented code block: every non-empty line of it is indented, so none can end it
    assert all(line.startswith("    ") for line in quoted.splitlines() if line)
    assert (tmp_path / "out").read_text().startswith("exit-code=2\n")
