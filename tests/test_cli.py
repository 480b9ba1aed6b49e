"""Whole-output snapshot tests of the gpu-gitops CLI on the example clusters, run in process.

Each snapshot under tests/snapshots/cli/<name>.txt holds the command line (without --repo), the
exit code, stdout and stderr of one run, and is compared as a whole text. After an intended change
of the output, regenerate them and review the diff:

    UPDATE_SNAPSHOTS=1 python -m pytest tests/test_cli.py

A missing snapshot fails (it is never written silently without UPDATE_SNAPSHOTS=1).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import git
import pytest

from adopt.errors import AdoptError
from audit.errors import AuditError
from gpu_gitops import arguments, cli, cli_render
from gpu_gitops.cli import main
from gpu_gitops.console import Console
from kubedata.budget import OverBudget
from kubedata.errors import GpuGitopsError, RetriesExhausted, YamlError
from kubedata.text import inert
from prbot.github import GitHubError
from renderer.errors import RenderError
from renderer.gitrepo import init_repo
from tests.conftest import REPO_ROOT
from tests.renderer.profile_texts import kubevirt_text

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots" / "cli"
UPDATE = os.environ.get("UPDATE_SNAPSHOTS") == "1"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """The repository's example clusters (only clusters/) in a scratch checkout."""
    shutil.copytree(REPO_ROOT / "clusters", tmp_path / "clusters")
    return tmp_path


def run(repo: Path | None, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    args = [*argv, "--repo", str(repo)] if repo is not None else list(argv)
    code = main(args, Console(out, err))
    return code, out.getvalue(), err.getvalue()


def transcript(argv: list[str], code: int, out: str, err: str) -> str:
    return f"$ gpu-gitops {' '.join(argv)}\nexit {code}\n--- stdout\n{out}--- stderr\n{err}"


def snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / f"{name}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.is_file():
        pytest.fail(f"no snapshot {path.name}: run UPDATE_SNAPSHOTS=1 pytest {__file__}")
    assert text == path.read_text(encoding="utf-8"), f"output differs from {path.name}"


def check(repo: Path | None, name: str, *argv: str, code: int) -> tuple[str, str]:
    got, out, err = run(repo, *argv)
    snapshot(name, transcript(list(argv), got, out, err))
    assert got == code
    return out, err


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# --- snapshots ------------------------------------------------------------------------------------


def test_validate(repo):
    check(repo, "validate", "validate", code=0)


def test_validate_one_cluster_by_path(repo):
    check(repo, "validate-path", "validate", "clusters/ams1/gpu-profile.yaml", code=0)


# --- --repo defaults to the enclosing checkout ----------------------------------------------------


def _in(folder: Path, *argv: str) -> tuple[int, str]:
    """Run from `folder` without --repo; exit code and stderr."""
    out, err = io.StringIO(), io.StringIO()
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        code = main(list(argv), Console(out, err))
    finally:
        os.chdir(cwd)
    return code, err.getvalue()


def test_repo_defaults_to_the_root_of_the_enclosing_checkout(repo):
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    ams1 = repo / "clusters" / "ams1"
    assert _in(ams1, "validate") == (0, "6 profile(s) valid, 0 warning(s)\n")
    assert _in(ams1, "validate", ".") == (0, "1 profile(s) valid, 0 warning(s)\n")
    assert _in(ams1, "validate", "gpu-profile.yaml") == (0, "1 profile(s) valid, 0 warning(s)\n")
    assert _in(repo / "clusters", "validate", "lab1") == (0, "1 profile(s) valid, 0 warning(s)\n")
    code, err = _in(ams1, "render", "--cluster", "ams1")
    assert code == 0
    assert "wrote overlays/ams1/" in err.splitlines()
    assert (repo / "overlays" / "ams1" / "kustomization.yaml").is_file()
    assert not (ams1 / "overlays").exists()


def test_repo_outside_a_checkout_is_the_current_directory(repo):
    assert _in(repo, "validate") == (0, "6 profile(s) valid, 0 warning(s)\n")
    code, err = _in(repo / "clusters", "validate")
    assert code == 2
    assert "no clusters/<name>/gpu-profile.yaml found" in err


def test_render_writes_overlays_and_prints_label_commands(repo):
    out, err = check(repo, "render", "render", code=0)
    assert out.startswith("kubectl label node ")
    assert err.startswith("wrote overlays/base/\n")
    names = sorted(p.name for p in (repo / "clusters").iterdir())
    assert sorted(p.name for p in (repo / "overlays").iterdir()) == sorted(["base", *names])


def test_render_twice_reports_no_changes(repo):
    run(repo, "render")
    before = files(repo)
    check(repo, "render-again", "render", code=0)
    assert files(repo) == before


def test_validate_after_render_builds_committed_overlays(repo):
    run(repo, "render")
    check(repo, "validate-after-render", "validate", code=0)


def test_render_check_clean(repo):
    run(repo, "render")
    before = files(repo)
    check(repo, "render-check-clean", "render", "--check", code=0)
    assert files(repo) == before


def test_render_check_stale(repo):
    run(repo, "render")
    profile = repo / "clusters" / "lab1" / "gpu-profile.yaml"
    profile.write_text(profile.read_text().replace("interval: 5m", "interval: 6m"))
    (repo / "overlays" / "edge1" / "extra.yaml").write_text("# left over\n")
    (repo / "overlays" / "par1" / "kustomization.yaml").unlink()
    before = files(repo)
    check(repo, "render-check-stale", "render", "--check", code=1)
    assert files(repo) == before


def test_render_one_cluster(repo):
    check(repo, "render-cluster", "render", "--cluster", "lab1", code=0)
    assert sorted(p.name for p in (repo / "overlays").iterdir()) == ["base", "lab1"]


def test_build_flux_cluster_yaml(repo):
    out, _ = check(repo, "build-lab1", "build", "--cluster", "lab1", code=0)
    assert out.startswith("apiVersion: ")


def test_build_cozystack_cluster_yaml(repo):
    check(repo, "build-ams1", "build", "--cluster", "ams1", code=0)


def test_build_json(repo):
    out, _ = check(repo, "build-lab1-json", "build", "--cluster", "lab1", "-o", "json", code=0)
    kinds = [obj["kind"] for obj in json.loads(out)]
    assert "KubeVirt" in kinds
    assert "HelmRelease" in kinds


def test_schema():
    out, _ = check(None, "schema", "schema", code=0)
    schema = json.loads(out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["spec"] == {
        "$ref": "#/$defs/ProfileSpec",
        "description": "The GPU setup.",
    }


def test_bad_profile_gives_one_line_and_exit_2(repo):
    profile = repo / "clusters" / "lab1" / "gpu-profile.yaml"
    profile.write_text(profile.read_text().replace("variant: passthrough", "variant: passtrough"))
    check(repo, "validate-bad", "validate", code=2)


@pytest.mark.parametrize("command", ["validate", "render", "build", "publish"])
def test_cozystack_without_platform_yaml_is_refused_and_names_the_import(repo, command):
    (repo / "clusters" / "par1" / "platform.yaml").unlink()
    argv = [command, "--cluster", "par1"] if command == "build" else [command]
    if command == "publish":
        git.Repo.init(repo).git.add("-A")
        git.Repo(repo).git.commit("-qm", "profiles", "--author", "t <t@example.com>")
    before = files(repo)
    out, err = check(repo, f"{command}-no-platform", *argv, code=2)
    assert out == ""
    assert "clusters/par1/gpu-profile.yaml:9: error: spec.platform.type: " in err
    assert "gpu-gitops import --cluster par1" in err
    assert files(repo) == before, "nothing is written"


@pytest.mark.parametrize("output", ["text", "markdown"])
def test_diff_shows_nodes_risks_and_validate_warnings(repo, monkeypatch, output):
    """A pull request moving ber1's nodes and switching lab1 (plain Flux) to container."""
    for var in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(var, "2026-01-01T00:00:00+0000")
    r = init_repo(repo, "example clusters", user="t", email="t@example.invalid")
    ber1 = repo / "clusters" / "ber1" / "gpu-profile.yaml"
    ber1.write_text(
        ber1.read_text().replace(
            "    gpu-ber1-01: vm-passthrough\n    gpu-ber1-02: container\n",
            "    gpu-ber1-01: container\n",
        )
    )
    lab1 = repo / "clusters" / "lab1" / "gpu-profile.yaml"
    lab1.write_text(lab1.read_text().replace("variant: passthrough", "variant: container"))
    r.git.add("-A")
    r.git.commit("-qm", "pull request")
    out, _ = check(repo, f"diff-{output}", "diff", "--base", "HEAD~1", "-o", output, code=1)
    assert "kubectl label node gpu-ber1-02 nvidia.com/gpu.workload.config-" in out
    assert "KubeVirt" in out and "Flux deletes it" not in out.split("KubeVirt")[0][-300:]


# --- output is byte-identical on every run -------------------------------------------------


def test_render_and_build_are_deterministic(tmp_path):
    results = []
    for copy in ("a", "b"):
        root = tmp_path / copy
        shutil.copytree(REPO_ROOT / "clusters", root / "clusters")
        render = run(root, "render")
        builds = [
            run(root, "build", "--cluster", p.name) for p in sorted((root / "clusters").iterdir())
        ]
        results.append((render, builds, files(root / "overlays")))
    assert results[0] == results[1]
    # and building the same cluster twice in one process gives the same bytes
    root = tmp_path / "a"
    assert run(root, "build", "--cluster", "ams1") == run(root, "build", "--cluster", "ams1")


# --- terminal habits ---------------------------------------------------------------------------


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


WARNING_PROFILE = """\
apiVersion: gpu-gitops/v1alpha1
kind: GPUProfile
metadata:
  name: c1
spec:
  platform: {type: flux}
  variant: passthrough
"""


def _warn_run(tmp_path: Path, err: io.StringIO) -> int:
    folder = tmp_path / "clusters" / "c1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gpu-profile.yaml").write_text(WARNING_PROFILE)
    (folder / "kubevirt.yaml").write_text(kubevirt_text())
    return main(["validate", "--repo", str(tmp_path)], Console(io.StringIO(), err))


def test_no_colour_when_not_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    err = io.StringIO()
    assert _warn_run(tmp_path, err) == 0
    assert "\033[" not in err.getvalue()
    assert "clusters/c1/gpu-profile.yaml:5: warning: spec.devices: " in err.getvalue()


def test_colour_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    err = FakeTty()
    assert _warn_run(tmp_path, err) == 0
    assert (
        "clusters/c1/gpu-profile.yaml:5: \033[33mwarning\033[0m: spec.devices: " in err.getvalue()
    )


def test_no_color_is_honoured_on_a_terminal(tmp_path, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    err = FakeTty()
    assert _warn_run(tmp_path, err) == 0
    assert "\033[" not in err.getvalue()


def test_progress_only_on_a_terminal():
    piped, tty = io.StringIO(), FakeTty()
    Console(io.StringIO(), piped).progress(1, 2, "ams1")
    Console(io.StringIO(), tty).progress(2, 2, "ber1")
    assert piped.getvalue() == ""
    assert tty.getvalue() == "\r\033[K[2/2] ber1\n"


def _commands() -> list[str]:
    parser = arguments.parser(None)
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == list(cli.COMMANDS)
    return sorted(sub.choices)


def test_every_command_has_help_with_examples(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    commands = _commands()
    assert {"validate", "render", "build", "schema", "demo"} <= set(commands)
    for name in commands:
        with pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0
        out = capsys.readouterr().out
        assert f"usage: gpu-gitops {name}" in out
        examples = out.partition("\nexamples:\n")[2]
        assert f"gpu-gitops {name}" in examples, name


def test_top_level_help_names_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    assert "Exit codes: 0 success, 1 drift/diff/stale found, 2 bad input or error." in (
        capsys.readouterr().out
    )


# --- internal errors ----------------------------------------------------------------------------


def _boom(*args: object, **kwargs: object) -> object:
    raise RuntimeError("boom")


def test_internal_error_is_one_line_without_traceback(repo, monkeypatch):
    monkeypatch.setattr(cli_render, "render_checkout", _boom)
    code, out, err = run(repo, "render")
    assert (code, out) == (2, "")
    assert err == (
        "gpu-gitops: error: internal error (RuntimeError: boom); rerun with --debug and report it\n"
    )
    assert "Traceback" not in err
    assert not (repo / "overlays").exists()


def test_internal_error_raises_with_debug(repo, monkeypatch):
    monkeypatch.setattr(cli_render, "render_checkout", _boom)
    with pytest.raises(RuntimeError, match=r"^boom$"):
        main(["--debug", "render", "--repo", str(repo)], Console(io.StringIO(), io.StringIO()))


def _every_error_class() -> list[type[BaseException]]:
    """Every exception class the packages define, from the packages' own modules."""
    import importlib
    import inspect
    import pkgutil

    found: dict[str, type[BaseException]] = {}
    for package in ("kubedata", "renderer", "prbot", "audit", "adopt", "gpu_gitops"):
        root = importlib.import_module(package)
        names = [package, *(m.name for m in pkgutil.walk_packages(root.__path__, f"{package}."))]
        for name in names:
            if name.endswith("__main__"):
                continue
            for obj in vars(importlib.import_module(name)).values():
                is_error = inspect.isclass(obj) and issubclass(obj, BaseException)
                if is_error and obj.__module__ == name:
                    found[f"{name}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def test_every_error_of_the_packages_derives_from_the_one_base():
    """Private control-flow exceptions (a leading underscore) never leave their module."""
    public = [e for e in _every_error_class() if not e.__name__.startswith("_")]
    assert len(public) > 15
    outside = [f"{e.__module__}.{e.__name__}" for e in public if not issubclass(e, GpuGitopsError)]
    assert outside == []


@pytest.mark.parametrize(
    "error",
    [
        RetriesExhausted(5, "HTTP 503"),
        OverBudget("the deadline of 60 s passed before it was read"),
        YamlError("clusters/a/gpu-profile.yaml", 3, "YAML syntax error: bad"),
        GitHubError("POST /repos/a/b/issues/1/comments: 403 Forbidden"),
        AuditError("the API server said no"),
        AdoptError("branch adopt/x exists"),
        RenderError("kustomize failed:\nline two"),
    ],
    ids=lambda e: type(e).__name__,
)
@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_an_error_raised_on_purpose_is_one_line_and_exit_2(repo, monkeypatch, error, debug):
    def fail(*args: object, **kwargs: object) -> object:
        raise error

    monkeypatch.setattr(cli_render, "render_checkout", fail)
    code, out, err = run(repo, *(["--debug"] if debug else []), "render")
    assert (code, out) == (2, "")
    assert err == f"gpu-gitops: error: {inert(str(error))}\n"
    assert err.count("\n") == 1
    assert "internal error" not in err


# --- validate --crds ------------------------------------------------------------------------------


@pytest.fixture
def crd_dir(tmp_path: Path, reference_dir: Path) -> Path:
    """The CRDs of the kinds the examples emit, as a user would dump them into a folder."""
    folder = tmp_path / "crds"
    folder.mkdir()
    for rel in (
        "cozystack/internal/crdinstall/manifests/cozystack.io_packages.yaml",
        "helm-controller/config/crd/bases/helm.toolkit.fluxcd.io_helmreleases.yaml",
        "cozystack/internal/fluxinstall/manifests/fluxcd.yaml",
    ):
        shutil.copy(reference_dir / rel, folder)
    operator = reference_dir / "cozystack/packages/system/kubevirt-operator/templates"
    text = (operator / "kubevirt-operator.yaml").read_text(encoding="utf-8")
    (folder / "kubevirt.yaml").write_text("\n".join(text.splitlines()[:6910]) + "\n")
    return folder


def test_validate_crds_accepts_the_examples(repo, crd_dir):
    code, _, err = run(repo, "validate", "--crds", str(crd_dir))
    assert code == 0, err
    assert f"built output of 6 cluster(s) matches the CRDs in {crd_dir}\n" in err


def test_validate_crds_reports_a_field_the_crd_does_not_declare(repo, crd_dir):
    path = crd_dir / "cozystack.io_packages.yaml"
    text = path.read_text(encoding="utf-8")
    # A CRD whose Package spec no longer declares `components`: the server would prune it.
    path.write_text(text.replace("              components:\n", "              componentz:\n", 1))
    code, out, err = run(repo, "validate", "--crds", str(crd_dir))
    assert code == 2 and out == ""
    assert "overlays/ams1: error: Package/cozystack.cozystack-platform: /spec: Additional " in err


def test_validate_crds_names_a_file_that_is_not_yaml(repo, crd_dir):
    (crd_dir / "broken.yaml").write_text("a: [1\n")
    code, _, err = run(repo, "validate", "--crds", str(crd_dir))
    assert code == 2
    assert err.endswith(
        "broken.yaml:2: not valid YAML (did not find expected ',' or ']'); not a file of CRDs\n"
    )


# --- demo -----------------------------------------------------------------------------------------


def test_demo_whole_output():
    """The demo's whole output; the published revision is masked, since it names a digest of the
    renderer's code (hydrator.metadata's tool version) and so moves with every code change."""
    code, out, err = run(None, "demo")
    assert code == 0, err
    again = run(None, "demo")
    assert again == (code, out, err), "two runs of the demo print the same bytes"
    masked = re.sub(r"sha1:[0-9a-f]{40}", "sha1:<published commit>", out)
    snapshot("demo", transcript(["demo"], code, masked, err))
