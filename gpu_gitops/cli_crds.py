"""`validate --crds DIR`: the built output of every cluster against the cluster's CRD schemas.

A module of its own so that jsonschema is loaded only when CRDs are given.
"""

from __future__ import annotations

from pathlib import Path

from gpu_gitops.console import Console
from kubedata.yaml_io import load_all
from renderer.crds import CRDFileError, Registry, namespace_kind
from renderer.errors import Problem, ProfileError
from renderer.kustomize.workers import build_overlays
from renderer.render import render_profiles
from renderer.validate import Checked

__all__ = ["check_schemas"]


def check_schemas(folder: Path, checked: Checked, console: Console) -> None:
    """Built output of every cluster against the CRDs in `folder`; ProfileError on a mismatch."""
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    if not files:
        raise ProfileError([Problem(str(folder), 0, "", "no CRD files (.yaml, .yml, .json) here")])
    try:
        registry = Registry.from_files(files, extra=[namespace_kind()], strict=False)
    except CRDFileError as exc:
        raise ProfileError([Problem(str(folder), 0, "--crds", str(exc))]) from None
    built = build_overlays(render_profiles(checked.profiles).overlays)
    problems: list[Problem] = []
    unchecked: set[str] = set()
    for name, text in built.items():
        for obj in load_all(text):
            if (obj.get("apiVersion"), obj.get("kind")) not in registry.kinds:
                unchecked.add(f"{obj.get('kind')} ({obj.get('apiVersion')})")
                continue
            problems += [Problem(f"overlays/{name}", 0, "", e) for e in registry.errors(obj)]
    if problems:
        raise ProfileError(problems)
    if unchecked:
        console.say(f"no CRD in {folder} for: {', '.join(sorted(unchecked))}; not schema-checked")
    console.say(f"built output of {len(built)} cluster(s) matches the CRDs in {folder}")
