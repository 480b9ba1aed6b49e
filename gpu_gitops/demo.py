"""`gpu-gitops demo`: the whole loop on the built-in example clusters, offline."""

from __future__ import annotations

import shutil
import tempfile
from collections import Counter
from pathlib import Path

import git

from gpu_gitops.console import Console
from renderer.build import build_overlays
from renderer.render import label_commands, render_profiles
from renderer.validate import check_clusters
from renderer.write import write_dirs
from renderer.yaml_io import load_all

__all__ = ["examples_dir", "run_demo"]


def examples_dir() -> Path:
    """The example clusters: packaged in the wheel, or the checkout's clusters/ in development."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "examples" / "clusters", here.parent / "clusters"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the example clusters are missing from this installation")


def run_demo(console: Console) -> int:
    with tempfile.TemporaryDirectory(prefix="gpu-gitops-demo-") as tmp:
        root = Path(tmp)
        shutil.copytree(examples_dir(), root / "clusters")
        repo = git.Repo.init(root, initial_branch="main")
        with repo.config_writer() as cfg:
            cfg.set_value("user", "name", "gpu-gitops demo")
            cfg.set_value("user", "email", "demo@gpu-gitops.invalid")
        repo.git.add("clusters")
        repo.git.commit("-q", "-m", "Example GPU profiles")
        console.say(f"demo repository: {len(list((root / 'clusters').iterdir()))} example clusters")

        checked = check_clusters(root)
        for w in checked.warnings:
            console.problem(str(w))
        rendered = render_profiles(checked.profiles)
        write_dirs(root, rendered.dirs)
        total = len(rendered.overlays)
        done = 0

        def tick(name: str) -> None:
            nonlocal done
            done += 1
            console.progress(done, total, f"built {name}")

        built = build_overlays(rendered.overlays, progress=tick)
        console.data(f"{'cluster':<8} {'platform':<10} {'variant':<12} objects\n")
        for lp in checked.profiles:
            spec = lp.profile.spec
            kinds = Counter(o["kind"] for o in load_all(built[lp.name]))
            summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
            platform = f"{spec.platform.type} {spec.platform.version or ''}".strip()
            console.data(f"{lp.name:<8} {platform:<10} {spec.variant:<12} {summary}\n")
            for command in label_commands(lp):
                console.data(f"         label: {command}\n")
    return 0
