"""The generated CRD tables: what they say of the releases the issue names, that the committed file
is what the generator makes from its pins, and that the audit picks the release the cluster runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from audit.compare.crd_tables import TABLES_FILE, kind_table
from audit.compare.gen_crd_tables import GenError, Git, build, dump, find_repo
from audit.compare.known_types import crd_defaults

CP = ("nvidia.com", "ClusterPolicy")
ENV = "GPU_GITOPS_UPSTREAM_GIT"


def _held(group: str, kind: str, path: str, value: object) -> str:
    table = kind_table(group, kind)
    assert table is not None
    [entry] = [e for e in table.defaults if "/".join(e.path) == path and e.value == value]
    return table.span(entry.versions)


def test_defaults_name_the_releases_they_hold_in() -> None:
    assert _held(*CP, "spec/driver/kernelModuleType", "auto") == "v25.3.0..v26.7.0"
    assert (
        _held(*CP, "spec/migManager/config/name", "default-mig-parted-config")
        == "v23.9.0..v25.10.1"
    )
    assert _held(*CP, "spec/cdi/enabled", True) == "v25.10.0..v26.7.0"
    table = kind_table(*CP)
    assert table is not None and len(table.releases) == 22  # v23.9.0 .. v26.7.0, every release
    assert kind_table("kubevirt.io", "KubeVirt") is not None
    assert kind_table("cozystack.io", "Package") is not None


def test_a_default_is_universal_only_where_every_candidate_has_it() -> None:
    def universal(candidates: frozenset[str] | None) -> set[str]:
        return {"/".join(d.path) for d in crd_defaults(*CP, candidates) if d.universal}

    every = universal(None)
    assert "spec/driver/kernelModuleType" not in every
    assert "spec/migManager/config/default" in every
    v25_3_2 = universal(frozenset({"v25.3.2"}))
    assert {"spec/driver/kernelModuleType", "spec/migManager/config/name"} <= v25_3_2
    assert "spec/sandboxWorkloads/mode" not in v25_3_2  # a default from v26.3.0 only


def _mirrors() -> Path:
    root = os.environ.get(ENV)
    if not root:
        pytest.skip(f"set {ENV} to a folder of upstream git mirrors (gen_crd_tables.py's doc)")
    return Path(root)


def test_committed_tables_are_what_the_generator_makes_from_the_pins() -> None:
    root = _mirrors()
    pinned = json.loads(TABLES_FILE.read_text(encoding="utf-8"))
    for repo in sorted({p["repo"] for p in pinned["pins"]}):
        try:
            find_repo(root, repo)
        except GenError as exc:
            pytest.skip(str(exc))
    assert dump(build(Git(root), pinned)) == TABLES_FILE.read_text(encoding="utf-8")
