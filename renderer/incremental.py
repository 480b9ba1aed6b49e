"""The render of a checkout (`gpu-gitops render`, `render --check`), cluster by cluster, reusing
what the render cache (render_cache.py) remembers of the clusters whose inputs did not change.

It gives what check_clusters + render_profiles give, warnings and errors alike, as digests of the
generated files; the texts of the cached clusters are rendered only when asked for (`texts`): a
cluster whose files on disk match their digests has nothing to write.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from renderer.bootstrap import url_problem
from renderer.checkout import origin_url
from renderer.errors import GitError, Problem, ProfileError
from renderer.gitdir import open_checkout
from renderer.overlays import base_files, cluster_overlay
from renderer.profile import (
    ClusterFiles,
    LoadedProfile,
    discover_clusters,
    load_profile,
    load_profile_bytes,
    read_cluster_files,
)
from renderer.render import BASE_DIR, cluster_dirs, in_write_order, label_commands
from renderer.render_cache import Entry, cache_key, load_cache, save_cache
from renderer.repofiles import Folders
from renderer.rules.checks import check_profile
from renderer.validate import NO_CLUSTERS
from renderer.write import file_digest

__all__ = ["CheckoutRender", "render_checkout"]

Texts = dict[str, dict[str, str]]


@dataclass(frozen=True)
class CheckoutRender:
    """The digests of every generated file, and the texts rendered so far."""

    warnings: tuple[Problem, ...]
    digests: dict[str, dict[str, str]]
    """Generated folder -> file -> file_digest of its text, in the order render writes them."""
    labels: tuple[str, ...]
    """The node label commands of every cluster, in cluster order."""
    origin: str | None
    rendered: Texts = field(repr=False)
    cached: dict[str, tuple[str, ClusterFiles]] = field(repr=False)
    """A folder whose text is not rendered yet -> its cluster and the cluster's input files."""

    def texts(self, dirs: Collection[str]) -> Texts:
        """The texts of `dirs`, rendering again the cached clusters they belong to."""
        for d in dirs:
            if d not in self.rendered:
                name, files = self.cached[d]
                lp = _loaded(load_profile_bytes(name, files), self.origin)
                self.rendered.update(_render(lp, "", check_profile(lp))[1])
        return {d: self.rendered[d] for d in dirs}


def render_checkout(root: Path, names: Sequence[str] = ()) -> CheckoutRender:
    """Load, check and render `names` (default: every cluster); ProfileError lists every problem
    found, as check_clusters does."""
    every = not names
    names = list(names) or discover_clusters(root)
    if not names:
        raise ProfileError([NO_CLUSTERS])
    origin, where = origin_url(root), _git_dir(root)
    cache = load_cache(where)
    entries: dict[str, Entry] = {}
    rendered: Texts = {BASE_DIR: base_files()}
    cached: dict[str, tuple[str, ClusterFiles]] = {}
    problems: list[Problem] = []
    with Folders(root) as folders:
        inputs = [(name, read_cluster_files(folders, name)) for name in names]
    for name, files in inputs:
        key = "" if files is None else cache_key(name, files, origin)
        entry = cache.get(name)
        if key and entry is not None and entry.key == key:
            assert files is not None  # a key is made of them
            cached |= {d: (name, files) for d in entry.digests}
        else:
            new = _render_new(root, name, files, key, origin)
            if isinstance(new, list):  # errors: reported with the others below
                problems += new
                continue
            entry, texts = new
            rendered |= texts
        entries[name] = entry
        problems += entry.problems
    _keep(where, cache, entries, every)
    if any(p.severity == "error" for p in problems):
        raise ProfileError(problems)
    urls = [e.url_problem for e in entries.values() if e.url_problem is not None]
    base = {BASE_DIR: _digests(rendered[BASE_DIR])}
    return CheckoutRender(
        warnings=tuple(sorted((*problems, *urls))),
        digests=in_write_order(base, {n: e.digests for n, e in entries.items()}),
        labels=tuple(c for name in names if name in entries for c in entries[name].labels),
        origin=origin,
        rendered=rendered,
        cached=cached,
    )


def _render_new(
    root: Path, name: str, files: ClusterFiles | None, key: str, origin: str | None
) -> tuple[Entry, Texts] | list[Problem]:
    """A cluster the cache does not hold: its entry and texts, or its problems if it has errors."""
    try:
        # unusual files (a link, a FIFO...) are left to load_profile, which says why
        loaded = load_profile(root, name) if files is None else load_profile_bytes(name, files)
    except ProfileError as exc:
        return list(exc.problems)
    lp = _loaded(loaded, origin)
    found = check_profile(lp)
    if any(p.severity == "error" for p in found):
        return found
    return _render(lp, key, found)


def _keep(
    where: Path | None, cache: dict[str, Entry], entries: dict[str, Entry], every: bool
) -> None:
    """Save the entries of this render (with the others', when only some clusters were
    rendered) when they differ from the cache's."""
    kept = {n: e for n, e in (entries if every else cache | entries).items() if e.key}
    if kept != cache:
        save_cache(where, kept)


def _git_dir(root: Path) -> Path | None:
    """Where the cache goes; None (no cache) outside a git checkout."""
    try:
        return Path(open_checkout(root).git_dir)
    except GitError:
        return None


def _loaded(lp: LoadedProfile, origin: str | None) -> LoadedProfile:
    # origin's URL is the default of spec.flux.url (see bootstrap.py)
    return dataclasses.replace(lp, origin_url=origin)


def _render(lp: LoadedProfile, key: str, problems: Sequence[Problem]) -> tuple[Entry, Texts]:
    """One checked cluster's entry (under `key`; "": not to be cached) and generated texts."""
    texts = cluster_dirs(lp, cluster_overlay(lp))
    digests = {d: _digests(files) for d, files in texts.items()}
    entry = Entry(key, tuple(problems), url_problem(lp), digests, tuple(label_commands(lp)))
    return entry, texts


def _digests(files: Mapping[str, str]) -> dict[str, str]:
    return {f: file_digest(t.encode()) for f, t in files.items()}
