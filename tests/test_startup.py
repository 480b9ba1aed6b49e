"""Each command loads only what it uses: the CLI runs in a fresh interpreter, which then lists the
modules it loaded (start-up time itself is measured in benchmarks/bench_startup.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from benchmarks.bench_startup import tiny_snapshot
from gpu_gitops import arguments
from gpu_gitops.arguments import COMMANDS
from tests.conftest import REPO_ROOT

_PROBE = """
import contextlib, io, json, sys
from gpu_gitops.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""
# what only the auditor, the PR bot, publishing or `validate --crds` need; pykustomize's Python
# layer (cffi, asyncio) is never needed: its library is called directly
# (renderer/kustomize/worker.py)
_HEAVY = (
    "audit",
    "prbot",
    "httpx",
    "git",
    "gitdb",
    "deepdiff",
    "jsonschema",
    "pykustomize",
    "cffi",
    "asyncio",
)


def loaded(*argv: str, cwd: Path = REPO_ROOT) -> tuple[int, set[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], cwd=cwd, capture_output=True, text=True, check=True
    )
    report = json.loads(done.stdout)
    return report["code"], set(report["modules"])


def packages(modules: set[str]) -> set[str]:
    return {m.partition(".")[0] for m in modules}


def test_help_loads_no_command():
    code, modules = loaded("--help")
    assert code == 0
    assert not packages(modules) & {*_HEAVY, "yaml", "pykustomize"}
    assert {m for m in modules if m.startswith("renderer.")} == {
        "renderer.checkout",
        "renderer.errors",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "clusters/ams1/gpu-profile.yaml"],
        ["render", "--check"],
        ["build", "--cluster", "ams1"],
        ["schema"],
    ],
    ids=["validate", "render", "build", "schema"],
)
def test_renderer_commands_never_load_the_auditor_git_or_httpx(argv: list[str]):
    code, modules = loaded(*argv)
    assert code == 0
    assert not packages(modules) & set(_HEAVY), sorted(packages(modules) & set(_HEAVY))
    assert "renderer.model" in modules  # the probe sees what a command loads


def test_render_builds_nothing():
    _, modules = loaded("render", "--check")
    assert "renderer.kustomize.workers" not in modules


def test_validate_with_crds_loads_jsonschema(tmp_path: Path):
    """What --crds needs is loaded when, and only when, it is asked for."""
    code, modules = loaded("validate", "--crds", str(tmp_path))
    assert code == 2  # no CRD in the folder
    assert "jsonschema" in packages(modules)


def test_audit_loads_the_auditor(tmp_path: Path):
    """The probe does see the heavy packages when a command needs them."""
    code, modules = loaded("audit", "--cluster", "ams1", "--snapshot", str(tmp_path / "nope"))
    assert code == 2
    assert "gpu_gitops.cli_audit" in modules
    assert {"audit", "yaml"} <= packages(modules)


def test_a_snapshot_audit_loads_no_network_client_and_builds_nothing(tmp_path: Path):
    """An audit of a snapshot folder reads files and git: the API client (httpx, ssl) and its
    network budget, the Pushgateway's prometheus_client and the renderer's build are left
    unloaded."""
    code, modules = loaded(*tiny_snapshot(tmp_path))
    assert code == 1  # the demo snapshot's planted drift
    assert "audit.run" in modules
    unused = {"httpx", "ssl", "prometheus_client", "prbot", "deepdiff", "jsonschema", "pykustomize"}
    assert not packages(modules) & unused, sorted(packages(modules) & unused)
    network = {"audit.kube.api", "kubedata.budget"}
    assert not {"renderer.kustomize.workers", "renderer.render", *network} & modules


def test_a_snapshot_audit_reads_git_without_gitpython(tmp_path: Path):
    """The audit reads commits, trees and blobs through the git command (renderer/gitdir.py):
    GitPython (git, gitdb) is left unloaded, and so is the renderer's GitPython layer."""
    code, modules = loaded(*tiny_snapshot(tmp_path))
    assert code == 1
    assert "renderer.gitdir" in modules
    assert not packages(modules) & {"git", "gitdb"}, sorted(packages(modules) & {"git", "gitdb"})
    assert "renderer.gitrepo" not in modules


@pytest.mark.parametrize("command", list(COMMANDS))
def test_command_help_loads_no_command(command: str):
    """`COMMAND --help` is answered from gpu_gitops/arguments.py alone: no command module, nothing
    heavy, no PyYAML (what --help itself loads, and the argument definitions)."""
    code, modules = loaded(command, "--help")
    assert code == 0
    assert not packages(modules) & {*_HEAVY, "yaml", "prometheus_client", "ssl"}
    assert not {m for m, _ in COMMANDS.values()} & modules
    renderer = {m for m in modules if m.startswith("renderer.")}
    assert renderer == {"renderer.checkout", "renderer.errors"}


def test_the_copied_defaults_match_their_sources():
    """arguments.py copies a few constants of heavy modules rather than import them."""
    from audit.findings.finding import SEVERITIES
    from audit.fleet.prometheus import ENV_PASSWORD, ENV_TOKEN, ENV_USER
    from audit.fleet.report import FORMATS as FLEET_FORMATS
    from audit.kube.api import DEFAULT_DEADLINE, DEFAULT_MAX_READ_BYTES
    from audit.report import FORMATS as AUDIT_FORMATS
    from prbot.github import DEFAULT_API_URL
    from renderer.publish.deadline import PUSH_TIMEOUT_ENV

    assert arguments.SEVERITIES == SEVERITIES
    assert tuple(AUDIT_FORMATS) == arguments.AUDIT_FORMATS
    assert tuple(FLEET_FORMATS) == arguments.FLEET_FORMATS
    assert arguments.AUDIT_DEADLINE == DEFAULT_DEADLINE
    assert arguments.AUDIT_MAX_READ_BYTES == DEFAULT_MAX_READ_BYTES
    assert arguments.PROMETHEUS_ENV == (ENV_TOKEN, ENV_USER, ENV_PASSWORD)
    assert arguments.GITHUB_API_URL == DEFAULT_API_URL
    assert arguments.PUSH_TIMEOUT_ENV == PUSH_TIMEOUT_ENV


@pytest.mark.parametrize(
    ("argv", "code", "last_line"),
    [
        (["validate", "clusters/ams1/gpu-profile.yaml"], 0, "1 profile(s) valid, 0 warning(s)"),
        (["validate", "clusters/nope"], 2, "clusters/nope/gpu-profile.yaml: error: file not found"),
    ],
    ids=["valid", "error"],
)
def test_the_installed_script_exits_with_the_command_s_code(
    argv: list[str], code: int, last_line: str
):
    """`gpu-gitops` is cli.run: main() in its own process, exiting with main's code."""
    with (REPO_ROOT / "pyproject.toml").open("rb") as f:
        assert tomllib.load(f)["project"]["scripts"] == {"gpu-gitops": "gpu_gitops.cli:run"}
    done = subprocess.run(
        [sys.executable, "-c", "from gpu_gitops.cli import run; run()", *argv],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == code
    assert done.stderr.splitlines()[-1] == last_line
    assert "Traceback" not in done.stderr
