"""Committed overlays, built as they are (`validate`), offline and from inside the repository only.

A pull request can commit any kustomization under overlays/: a URL resource or a remote base (the
build would fetch it: request forgery from CI, or a hang on a silent server), or a path leading
out of the checkout (../../../home/..., /etc). So overlays/ is copied to a scratch folder (regular
files only; a link is refused), every kustomization in the copy is checked for references that are
URLs or leave overlays/, and only then may the copy be built (workers.py: a deadline, no network).
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kubedata.yaml_io import load_marked, nearest_line

from renderer.errors import Problem, ProfileError, yaml_problems
from renderer.kustomize.workers import scratch_dir
from renderer.repofiles import link_problem, repo_path

__all__ = ["MAX_OVERLAYS_BYTES", "checked_copy"]

MAX_OVERLAYS_BYTES = 64 * 1024 * 1024
"""overlays/ of a thousand clusters is a few MB; more is not generated output."""
_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
# Fields whose values are files or folders kustomize reads (a string, or items with a path).
_PATH_LISTS = (
    "resources",
    "bases",
    "components",
    "crds",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "patchesStrategicMerge",
)
_PATH_ITEMS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_REFUSED = ("helmCharts", "helmChartInflationGenerator", "helmGlobals", "openapi")
_REMOTE_PREFIXES = ("git@", "github.com/", "gitlab.com/", "bitbucket.org/")


def _copy(root: Path, dest: Path) -> None:
    """overlays/ -> dest, regular files and folders only; a link (or a FIFO...) is refused."""
    src = repo_path(root, "overlays")
    total = 0
    for top, dirs, files in os.walk(src):
        rel_top = Path(top).relative_to(src)
        for name in [*dirs, *files]:
            path = Path(top, name)
            rel = f"overlays/{(rel_top / name).as_posix()}"
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise link_problem(rel)
            if stat.S_ISDIR(mode):
                (dest / rel_top / name).mkdir()
                continue
            if not stat.S_ISREG(mode):
                raise ProfileError([Problem(rel, 0, "", "not a regular file; remove it")])
            total += path.lstat().st_size
            if total > MAX_OVERLAYS_BYTES:
                message = f"overlays/ is over {MAX_OVERLAYS_BYTES} bytes; it is not generated"
                raise ProfileError([Problem("overlays/", 0, "", message)])
            shutil.copyfile(path, dest / rel_top / name, follow_symlinks=False)


def _references(doc: dict[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(path in the document, reference) of every file or folder a kustomization names."""
    for key in _PATH_LISTS:
        for i, item in enumerate(doc.get(key) or []):
            # patchesStrategicMerge also takes an inline patch: text with a newline
            if isinstance(item, str) and "\n" not in item:
                yield (key, i), item
    for key in _PATH_ITEMS:
        for i, item in enumerate(doc.get(key) or []):
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                yield (key, i, "path"), item["path"]
    for key in _GENERATORS:
        for i, gen in enumerate(doc.get(key) or []):
            if not isinstance(gen, dict):
                continue
            for field in ("files", "envs"):
                for j, ref in enumerate(gen.get(field) or []):
                    if isinstance(ref, str):
                        yield (key, i, field, j), ref.partition("=")[2] or ref
            if isinstance(gen.get("env"), str):
                yield (key, i, "env"), gen["env"]


def _check(copy: Path, rel_file: str) -> None:
    """Every reference of the kustomization `rel_file` (under copy/) stays inside overlays/."""
    path = copy / rel_file
    with yaml_problems():
        doc, marks = load_marked(path.read_text(encoding="utf-8"), rel_file)
    if not isinstance(doc, dict):
        raise ProfileError([Problem(rel_file, 1, "", "must be a kustomization (a mapping)")])
    problems: list[Problem] = []

    def refuse(where: tuple[str | int, ...], field: str, message: str) -> None:
        problems.append(Problem(rel_file, nearest_line(marks, where), field, message))

    for key in _REFUSED:
        if key in doc:
            refuse((key,), key, "is not built by gpu-gitops (it fetches or runs programs)")
    folder = posixpath.dirname(rel_file)
    for where, ref in _references(doc):
        field = str(where[0])
        if "://" in ref or ref.startswith(_REMOTE_PREFIXES):
            refuse(where, field, f'remote resource "{ref}" is refused: builds are offline')
            continue
        target = posixpath.normpath(posixpath.join(folder, ref))
        inside = target == "overlays" or target.startswith("overlays/")
        if posixpath.isabs(ref) or not inside:
            refuse(where, field, f'"{ref}" leads out of overlays/; only files in it are built')
        elif not (copy / target).exists():
            refuse(where, field, f'"{ref}" is not a file or folder in overlays/')
    if problems:
        raise ProfileError(problems)


def _check_all(copy: Path) -> None:
    for top, _, files in os.walk(copy / "overlays"):
        for name in sorted(files):
            if name in _KUSTOMIZATIONS:
                _check(copy, Path(top, name).relative_to(copy).as_posix())


@contextmanager
def checked_copy(root: Path) -> Iterator[Path]:
    """A scratch copy of overlays/ (removed afterwards) in which every kustomization was checked;
    ProfileError naming file and line for what may not be built."""
    with scratch_dir("gpu-gitops-committed-") as tmp:
        copy = Path(tmp)
        (copy / "overlays").mkdir()
        _copy(root, copy / "overlays")
        _check_all(copy)
        yield copy / "overlays"
