"""Publish N clusters into a fresh repository, then a no-op publish, next to a git CLI baseline.

    python -m benchmarks.bench_publish [--clusters 1000]

The baseline is what a user would otherwise script, measured in the same run on the same flat
files (the rendered branch's tree, as an archive): write the files into a checkout, `git add -A`,
`git commit` for the first publish; write them again unchanged, `git add -A` and
`git diff --cached --quiet` (nothing to commit) for the no-op. Each measured step runs in its own
process, and its peak RSS is that process's VmHWM (benchmarks/rss.py: not
ru_maxrss, which would report this runner's peak); the time is taken inside it (imports and the
interpreter's start are not counted, for either side).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.profiles import write_profiles
from benchmarks.rss import peak_rss_mb
from renderer.gitrepo import init_repo

__all__ = ["main"]

_ROOT = Path(__file__).resolve().parent.parent
_IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
ARCHIVE = "rendered.tar"
"""The rendered branch's files, beside the baseline's checkout."""
TARGETS = {"publish": 5.0, "noop": 1.0}
"""Seconds on a 2-core machine for 1,000 clusters (issue 3)."""


def _step(step: str, repo: Path) -> dict[str, Any]:
    """Run one measured step here; the time and this process's own peak RSS."""
    if step == "publish":
        from renderer.publish.publish import publish

        start = time.perf_counter()
        result = publish(repo)
        seconds = time.perf_counter() - start
        extra: dict[str, Any] = {"commit": result.commit, "changed": len(result.changed)}
    else:
        start = time.perf_counter()
        with tarfile.open(repo.parent / ARCHIVE) as tar:
            files = [m.name for m in tar.getmembers() if m.isfile()]
            tar.extractall(repo, filter="data")
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "add", "-A"], check=True)
        if step == "baseline-commit":
            subprocess.run([*git, "commit", "-q", "-m", "baseline"], check=True)
            changed = len(files)
        else:
            staged = subprocess.run([*git, "diff", "--cached", "--quiet"], check=False)
            changed = staged.returncode
        seconds = time.perf_counter() - start
        extra = {"files": len(files), "changed": changed}
    return {"seconds": seconds, "rss_mb": peak_rss_mb(), **extra}


def _measure(step: str, repo: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_publish", "--step", step, "--repo", str(repo)],
        check=True,
        capture_output=True,
        text=True,
        cwd=_ROOT,
        env={**os.environ, **_IDENTITY},
    ).stdout
    result: dict[str, Any] = json.loads(out.splitlines()[-1])
    return result


def _line(what: str, ours: dict[str, Any], base: dict[str, Any], base_what: str) -> str:
    ratio = base["seconds"] / ours["seconds"] if ours["seconds"] else float("inf")
    return (
        f"{what}: {ours['seconds']:.2f} s, peak RSS {ours['rss_mb']:.0f} MB | "
        f"baseline {base_what}: {base['seconds']:.2f} s, peak RSS {base['rss_mb']:.0f} MB | "
        f"ratio {ratio:.1f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--step", choices=("publish", "baseline-commit", "baseline-noop"))
    parser.add_argument("--repo", type=Path)
    args = parser.parse_args(argv)
    if args.step:
        print(json.dumps(_step(args.step, args.repo)))
        return 0
    n = args.clusters
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        source, baseline = Path(tmp) / "source", Path(tmp) / "baseline"
        write_profiles(source, n)
        init_repo(source, "profiles", user="bench", email="bench@example.invalid").close()
        first = _measure("publish", source)
        noop = _measure("publish", source)
        assert noop["commit"] is None, "the second publish must change nothing"
        # the same flat files, for GitPython to add and commit
        subprocess.run(
            ["git", "init", "-q", "-b", "main", str(baseline)], check=True, capture_output=True
        )
        archive = subprocess.run(
            ["git", "-C", str(source), "archive", "rendered"], check=True, capture_output=True
        ).stdout
        (baseline.parent / ARCHIVE).write_bytes(archive)
        base_commit = _measure("baseline-commit", baseline)
        base_noop = _measure("baseline-noop", baseline)
        assert base_noop["changed"] == 0, "the baseline's second write must stage nothing"
    files = base_commit["files"]
    print(
        _line(
            f"publish {n} clusters ({files} files)",
            first,
            base_commit,
            "write files + git add -A + git commit",
        )
    )
    print(_line("no-op publish", noop, base_noop, "write files + git add -A (unchanged) + diff"))
    verdicts = [
        f"{name} <= {limit:g} s: {'met' if m['seconds'] <= limit else 'MISSED'}"
        for (name, limit), m in zip(TARGETS.items(), (first, noop), strict=True)
    ]
    scope = "" if n == 1000 else f" (they are for 1,000 clusters; this run had {n})"
    print(f"targets on 2 cores{scope}: {'; '.join(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
