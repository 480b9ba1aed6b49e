"""`gpu-gitops validate`: profiles against the contract and DESIGN §4; committed overlays build."""

from __future__ import annotations

import argparse
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from gpu_gitops.commands import say_warnings
from gpu_gitops.console import Console
from renderer.kustomize.committed import checked_copy
from renderer.kustomize.library import KUSTOMIZATION
from renderer.kustomize.workers import build_dirs
from renderer.profile import cluster_named_by, discover_clusters
from renderer.repofiles import repo_path
from renderer.validate import check_clusters

__all__ = ["cmd_validate"]

T = TypeVar("T")


def cmd_validate(args: argparse.Namespace, console: Console) -> int:
    repo: Path = args.repo
    names = [cluster_named_by(repo, p) for p in args.paths] or discover_clusters(repo)
    # Committed overlays must build as they are (offline, from inside the checkout only).
    present = sorted(n for n in names if repo_path(repo, f"overlays/{n}/{KUSTOMIZATION}").is_file())
    # The profiles are checked while the overlays are copied and built (kustomize's workers).
    checking = _Background(lambda: check_clusters(repo, names))
    try:
        with checked_copy(repo) as overlays:
            build_dirs([overlays / name for name in present])
    except Exception:
        checking.result()  # the profiles' errors come first
        raise
    checked = checking.result()
    say_warnings(console, checked.warnings)
    for name in present:
        console.say(f"overlays/{name}: builds")
    if args.crds:
        # jsonschema is loaded only when CRDs are given: validate alone starts without it
        from gpu_gitops.cli_crds import check_schemas

        check_schemas(args.crds, checked, console)
    console.say(f"{len(checked.profiles)} profile(s) valid, {len(checked.warnings)} warning(s)")
    return 0


class _Background(Generic[T]):
    """`work` running in a thread; result() waits for it and returns or raises what it did."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._outcome: tuple[T] | BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._outcome = (work(),)
        except BaseException as exc:
            self._outcome = exc

    def result(self) -> T:
        self._thread.join()
        if isinstance(self._outcome, BaseException):
            raise self._outcome
        assert self._outcome is not None
        return self._outcome[0]
