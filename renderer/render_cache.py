"""What render made of each cluster's inputs, kept in the checkout's git folder
(`<git dir>/gpu-gitops/render-cache.json`), so that `render --check` (the pre-commit hook) and
`render` neither parse nor render a cluster whose inputs did not change.

An entry is keyed by a digest of everything a cluster's render reads: the bytes of its input files
(publish's profile digest), origin's URL (the default of spec.flux.url), the cluster's name and
the tool version (a digest of the renderer's code and the versions of the libraries that print its
output). It holds the cluster's warnings, its node label commands and a digest of every file of
its generated folders, never their text: a cluster whose files on disk differ from its digests is
rendered again to write them. Only clusters without errors are kept.

The cache only ever saves work: missing, unreadable, of another format or not writable, it is
an empty one, and nothing is said. It is written whole to a temporary file that is then renamed,
so a render killed while writing it leaves the previous cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from renderer.errors import Problem, WriteError
from renderer.profile import ClusterFiles
from renderer.publish.flat import profile_digest
from renderer.version import tool_version
from renderer.write import replace_file

__all__ = ["CACHE_FILE", "Entry", "cache_key", "load_cache", "save_cache"]

CACHE_FILE = "gpu-gitops/render-cache.json"
"""Under the git folder: never committed, and gone with the checkout."""
_FORMAT = 1


@dataclass(frozen=True)
class Entry:
    """One cluster's render, as far as render needs it when its inputs did not change."""

    key: str
    problems: tuple[Problem, ...]
    """check_profile's warnings, in its order."""
    url_problem: Problem | None
    digests: dict[str, dict[str, str]]
    """Generated folder -> file -> file_digest of its text."""
    labels: tuple[str, ...]


def cache_key(name: str, files: ClusterFiles, origin: str | None) -> str:
    """The digest of everything the render of cluster `name` reads."""
    parts = (tool_version(), name, origin or "", profile_digest(files))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def load_cache(git_dir: Path | None) -> dict[str, Entry]:
    """Cluster name -> its entry; empty when there is no usable cache."""
    if git_dir is None:
        return {}
    try:
        raw = json.loads((git_dir / CACHE_FILE).read_bytes())
        if raw["format"] != _FORMAT:
            return {}
        return {str(name): _entry(e) for name, e in raw["clusters"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_cache(git_dir: Path | None, entries: Mapping[str, Entry]) -> None:
    """Replace the cache by `entries` (quietly nothing when it cannot be written)."""
    if git_dir is None:
        return
    doc = {"format": _FORMAT, "clusters": {n: _raw(e) for n, e in sorted(entries.items())}}
    with contextlib.suppress(WriteError):
        replace_file(git_dir / CACHE_FILE, json.dumps(doc, separators=(",", ":")))


def _problem(raw: Any) -> Problem:
    file, line, field, message, severity = raw
    if severity not in ("warning", "error"):
        raise ValueError(severity)
    return Problem(str(file), int(line), str(field), str(message), severity)


def _entry(raw: Any) -> Entry:
    url = raw["url_problem"]
    return Entry(
        key=str(raw["key"]),
        problems=tuple(_problem(p) for p in raw["problems"]),
        url_problem=None if url is None else _problem(url),
        digests={
            str(d): {str(f): str(v) for f, v in files.items()}
            for d, files in raw["digests"].items()
        },
        labels=tuple(str(c) for c in raw["labels"]),
    )


def _raw(entry: Entry) -> dict[str, Any]:
    def problem(p: Problem) -> list[Any]:
        return [p.file, p.line, p.field, p.message, p.severity]

    return {
        "key": entry.key,
        "problems": [problem(p) for p in entry.problems],
        "url_problem": None if entry.url_problem is None else problem(entry.url_problem),
        "digests": entry.digests,
        "labels": list(entry.labels),
    }
