"""Snapshots and kubeconfigs that would explode once read: refused with one line naming the file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from audit.errors import KubeConfigError, SnapshotError
from audit.kube.kubeconfig import load_cluster_config
from audit.kube.snapshot import load_snapshot


def _bomb(levels: int = 9) -> str:
    """Billion laughs: ten levels of nine aliases each, 9**10 values once expanded."""
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _deep(n: int = 500) -> str:
    return "a: " + "[" * n + "]" * n + "\n"


KUBECONFIG = """\
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: &cluster {server: "https://127.0.0.1:6443"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user: {token: t}
"""


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + _bomb(),
            "1: its aliases expand to over 1000000 values (an alias bomb?)",
            id="alias-bomb",
        ),
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + _deep(),
            "4: nested more than 100 levels deep",
            id="deep",
        ),
        pytest.param(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n" + _deep(150),
            "4: nested more than 100 levels deep",
            id="deep-within-what-yaml-rs-reads",
        ),
    ],
)
def test_a_snapshot_that_would_explode_is_refused(tmp_path: Path, text: str, problem: str):
    (tmp_path / "cm.yaml").write_text(text)
    with pytest.raises(SnapshotError) as exc:
        load_snapshot(tmp_path)
    assert str(exc.value) == f"{tmp_path / 'cm.yaml'}:{problem}; fix or remove the file"


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        pytest.param(
            _bomb(), "its aliases expand to over 1000000 values (an alias bomb?)", id="alias-bomb"
        ),
        pytest.param(_deep(), "nested more than 100 levels deep", id="deep"),
    ],
)
def test_a_kubeconfig_that_would_explode_is_refused(tmp_path: Path, extra: str, problem: str):
    path = tmp_path / "config"
    path.write_text(KUBECONFIG + extra)
    with pytest.raises(KubeConfigError) as exc:
        load_cluster_config(path)
    assert str(exc.value).startswith(f"kubeconfig {path}:")
    assert str(exc.value).endswith(f"{problem}; fix or remove the file")


def test_a_kubeconfig_with_a_plain_anchor_still_loads(tmp_path: Path):
    path = tmp_path / "config"
    path.write_text(KUBECONFIG)
    assert load_cluster_config(path).server == "https://127.0.0.1:6443"


@pytest.mark.parametrize(
    ("kind", "what"),
    [
        ("fifo", "is not a regular file"),
        ("folder", "is not a regular file"),
        ("none", "does not exist"),
    ],
)
def test_a_kubeconfig_that_is_no_file_is_refused_without_blocking(
    tmp_path: Path, kind: str, what: str
):
    path = tmp_path / "config"
    if kind == "fifo":
        os.mkfifo(path)  # nobody writes: a blocking open would hang
    elif kind == "folder":
        path.mkdir()
    with pytest.raises(KubeConfigError) as exc:
        load_cluster_config(path)
    assert str(exc.value) == f"kubeconfig {path} {what}: check the --kubeconfig path"
