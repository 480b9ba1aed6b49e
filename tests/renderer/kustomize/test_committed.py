"""`validate` builds committed overlays offline, from inside the repository, with a deadline.

Each hostile overlay is committed next to a valid cluster; a loopback HTTP server stands in for
the attacker's host and must receive no request; a secret beside the repository must appear in
no output; nothing outside the repository may change.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from renderer.errors import BuildError
from renderer.kustomize.workers import build_dir, build_dirs
from renderer.repofiles import LINK_REFUSED
from tests.renderer.profile_texts import kubevirt_text
from tests.renderer.test_bad_input import run, tree
from tests.renderer.test_hostile_paths import PROFILE, SECRET

K = "overlays/c1/kustomization.yaml"


@pytest.fixture
def attacker() -> Iterator[tuple[str, list[str]]]:
    """(base URL, paths requested) of a loopback server serving a ConfigMap."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A rendered repository (overlays/ committed) and a secret beside it."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text(f"apiVersion: v1\nkind: {SECRET}\n")
    root = tmp_path / "repo"
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "gpu-profile.yaml").write_text(PROFILE)
    (root / "clusters" / "c1" / "kubevirt.yaml").write_text(kubevirt_text())
    assert run("render", "--repo", str(root))[0] == 0
    return root


def _validate(repo: Path) -> tuple[int, str, str]:
    outside = repo.parent / "outside"
    before = tree(outside)
    code, out, err = run("validate", "--repo", str(repo))
    assert SECRET not in out + err
    assert tree(outside) == before
    return code, out, err


def _add(repo: Path, text: str) -> None:
    path = repo / K
    path.write_text(path.read_text() + text)


def test_committed_overlays_build(repo):
    assert _validate(repo) == (0, "", "overlays/c1: builds\n1 profile(s) valid, 0 warning(s)\n")


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        pytest.param(
            "- {url}/cm.yaml\n",
            'resources: remote resource "{url}/cm.yaml" is refused: builds are offline',
            id="url-resource",
        ),
        pytest.param(
            "- github.com/attacker/repo//base?ref=main\n",
            'resources: remote resource "github.com/attacker/repo//base?ref=main" is refused: '
            "builds are offline",
            id="remote-base",
        ),
        pytest.param(
            "- ../../../outside/secret.yaml\n",
            'resources: "../../../outside/secret.yaml" leads out of overlays/; '
            "only files in it are built",
            id="relative-escape",
        ),
        pytest.param(
            "- /etc/hostname\n",
            'resources: "/etc/hostname" leads out of overlays/; only files in it are built',
            id="absolute-path",
        ),
    ],
)
def test_a_hostile_resource_is_refused_before_any_build(repo, attacker, extra, line):
    url, seen = attacker
    (repo / K).write_text("resources:\n- ../base/flux-gpu-operator\n" + extra.format(url=url))
    code, out, err = _validate(repo)
    assert (code, out, err) == (2, "", f"{K}:3: error: {line.format(url=url)}\n")
    assert seen == []


def test_a_patch_read_from_outside_is_refused(repo):
    _add(repo, "- path: ../../../outside/secret.yaml\n")  # the generated file ends in patches
    n = len((repo / K).read_text().splitlines())
    assert _validate(repo) == (
        2,
        "",
        f'{K}:{n}: error: patches: "../../../outside/secret.yaml" leads out of overlays/; '
        "only files in it are built\n",
    )


def test_helm_charts_are_refused(repo, attacker):
    url, seen = attacker
    _add(repo, f"helmCharts:\n- name: x\n  repo: {url}\n")
    n = len((repo / K).read_text().splitlines()) - 2
    assert _validate(repo) == (
        2,
        "",
        f"{K}:{n}: error: helmCharts: is not built by gpu-gitops (it fetches or runs programs)\n",
    )
    assert seen == []


def test_a_link_inside_overlays_is_refused(repo):
    (repo / "overlays" / "c1" / "extra.yaml").symlink_to(repo.parent / "outside" / "secret.yaml")
    assert _validate(repo) == (2, "", f"overlays/c1/extra.yaml: error: {LINK_REFUSED}\n")


def test_a_fifo_inside_overlays_is_refused(repo):
    os.mkfifo(repo / "overlays" / "c1" / "pipe.yaml")
    assert _validate(repo) == (
        2,
        "",
        "overlays/c1/pipe.yaml: error: not a regular file; remove it\n",
    )


def test_a_build_that_hangs_is_stopped_at_the_deadline(tmp_path: Path):
    """A FIFO nobody writes to blocks kustomize's read forever: the deadline ends it."""
    hang = tmp_path / "hang"
    hang.mkdir()
    (hang / "kustomization.yaml").write_text("resources: [pipe.yaml]\n")
    os.mkfifo(hang / "pipe.yaml")
    ok = tmp_path / "ok"
    ok.mkdir()
    (ok / "kustomization.yaml").write_text("resources: [cm.yaml]\n")
    (ok / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    with pytest.raises(BuildError) as exc:
        build_dirs([ok, hang], timeout=2)
    assert str(exc.value) == (
        "kustomize build of hang did not finish within 2 s (GPU_GITOPS_BUILD_TIMEOUT); "
        "it was stopped"
    )
    # the stopped workers are replaced: the next build works
    assert "kind: ConfigMap" in build_dir(ok)
