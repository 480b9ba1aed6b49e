"""`gpu-gitops diff` over N clusters where a few changed, next to a full rebuild of both refs.

    python -m benchmarks.bench_diff [--clusters 1000] [--changed 10]

Both figures come from the same run on the same git repository: `diff` as a user runs it (a
`gpu-gitops diff` process, interpreter start-up included) and in process, then the full rebuild:
every cluster rendered and built at both refs and compared (diff_refs with reuse=False).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.profiles import write_profiles
from prbot.refdiff import diff_refs
from renderer.gitrepo import init_repo

__all__ = ["main"]

_CHANGE = "  flux:\n    interval: 7m\n    driftDetection: disabled\n"


def changed_repo(root: Path, n: int, changed: int) -> list[str]:
    """N clusters committed and tagged `base`, then `changed` of them changed in one commit."""
    names = write_profiles(root, n)
    repo = init_repo(root, "base", user="bench", email="bench@example.invalid")
    repo.create_tag("base")
    step = max(1, n // changed)
    picked = names[::step][:changed]
    for name in picked:
        path = root / "clusters" / name / "gpu-profile.yaml"
        path.write_text(path.read_text() + _CHANGE)
    repo.git.commit("-q", "-am", "change")
    return picked


def _timed_cli(root: Path) -> tuple[float, int]:
    cli = Path(sys.executable).with_name("gpu-gitops")
    cmd = [str(cli)] if cli.exists() else [sys.executable, "-m", "gpu_gitops.cli"]
    start = time.perf_counter()
    proc = subprocess.run(
        [*cmd, "diff", "--repo", str(root), "--base", "base", "-o", "json"],
        capture_output=True,
        check=False,
        env=os.environ | {"NO_COLOR": "1"},
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"gpu-gitops diff failed: {proc.stderr.decode()}")
    return elapsed, proc.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args(argv)
    n, k = args.clusters, min(args.changed, args.clusters)
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        changed_repo(root, n, k)
        setup = time.perf_counter() - start
        t_cli, code = _timed_cli(root)
        start = time.perf_counter()
        fast = diff_refs(root, "base", "HEAD")
        t_fast = time.perf_counter() - start
        start = time.perf_counter()
        full = diff_refs(root, "base", "HEAD", reuse=False)
        t_full = time.perf_counter() - start
    assert fast.clusters == full.clusters, "changed-only and full rebuild disagree"
    objects = sum(len(c.changes) for c in fast.clusters)
    print(f"repository: {n} clusters, {k} changed (set up in {setup:.1f} s)")
    print(
        f"gpu-gitops diff (process, exit {code}): {t_cli:.2f} s; in process {t_fast:.2f} s; "
        f"rebuilt {len(fast.rebuilt)} cluster(s), {objects} changed object(s), "
        f"{len(fast.risks)} warning(s)"
    )
    print(f"full rebuild of both refs ({2 * n} builds) and compare: {t_full:.2f} s")
    print(
        f"ratio full / diff: {t_full / t_cli:.1f}x (process), {t_full / t_fast:.1f}x (in process)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
