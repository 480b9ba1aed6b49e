"""Publish N clusters into a fresh repository, then a no-op publish, next to git CLI baselines.

    python -m benchmarks.bench_publish [--clusters 1000] [--noop-runs 3]

The baseline is what a user would otherwise script, measured in the same run: build the same
overlays (rendered and written to disk beforehand, not timed) with pykustomize's public API in one
process (benchmarks/pykustomize_api.py, as bench_render's baseline), write each cluster's output
into a checkout, `git add -A`, `git commit` for the first publish; build and write them again
(unchanged), `git add -A` and `git diff --cached --quiet` (nothing to commit) for the no-op. A
second baseline starts from the files already built (the rendered branch's tree, as an archive):
only the writes and git. Each measured step runs in its own process, and its peak RSS is that
process's VmHWM (benchmarks/rss.py: not ru_maxrss, which would report this runner's peak); the
time is taken inside it (imports and the interpreter's start are not counted, for either side).
Our no-op is the median of --noop-runs processes (it is short, and the machine is shared).
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
from benchmarks.pykustomize_api import pykustomize_build
from benchmarks.rss import peak_rss_mib
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
OVERLAYS = "overlays.txt"
"""The overlay folders the baseline builds, one a line, beside its checkout."""
TARGETS = {
    ("publish", 1000): 5.0,
    ("no-op publish", 1000): 1.0,
    ("no-op publish", 10000): 1.5,
}
"""Seconds on a 2-core machine: (step, clusters) -> limit (1,000 clusters: issue 3)."""
_STEPS = ("publish", "build-commit", "build-noop", "files-commit", "files-noop")
"""Ours, then the baselines: built by pykustomize, or from the files already built."""


def _write_built(repo: Path) -> int:
    """Build the overlays listed beside `repo` and write each cluster's YAML; the files written."""
    paths = [Path(line) for line in (repo.parent / OVERLAYS).read_text().splitlines()]
    for path, text in zip(paths, pykustomize_build(paths), strict=True):
        (repo / f"{path.name}.yaml").write_text(text, encoding="utf-8")
    return len(paths)


def _write_archive(repo: Path) -> int:
    """Extract the rendered branch's files into `repo`; the files written."""
    with tarfile.open(repo.parent / ARCHIVE) as tar:
        files = [m.name for m in tar.getmembers() if m.isfile()]
        tar.extractall(repo, filter="data")
    return len(files)


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
        files = _write_built(repo) if step.startswith("build-") else _write_archive(repo)
        git = ["git", "-C", str(repo)]
        subprocess.run([*git, "add", "-A"], check=True)
        if step.endswith("-commit"):
            subprocess.run([*git, "commit", "-q", "-m", "baseline"], check=True)
            changed = files
        else:
            staged = subprocess.run([*git, "diff", "--cached", "--quiet"], check=False)
            changed = staged.returncode
        seconds = time.perf_counter() - start
        extra = {"files": files, "changed": changed}
    return {"seconds": seconds, "rss_mib": peak_rss_mib(), **extra}


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
        f"{what}: {ours['seconds']:.2f} s, peak RSS {ours['rss_mib']:.0f} MiB | "
        f"baseline {base_what}: {base['seconds']:.2f} s, peak RSS {base['rss_mib']:.0f} MiB | "
        f"ratio {ratio:.1f}x"
    )


def _baseline(kind: str, repo: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The commit and the no-op of one baseline, in a fresh checkout."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, capture_output=True)
    commit = _measure(f"{kind}-commit", repo)
    noop = _measure(f"{kind}-noop", repo)
    assert noop["changed"] == 0, "the baseline's second write must stage nothing"
    return commit, noop


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median time (a real run: its RSS goes with its time)."""
    return sorted(runs, key=lambda r: float(r["seconds"]))[len(runs) // 2]


def _verdicts(n: int, first: dict[str, Any], noop: dict[str, Any]) -> str:
    """The targets for `n` clusters (those for 1,000 when none is, and the line says so)."""
    sizes = {size for _, size in TARGETS}
    size = n if n in sizes else 1000
    measured = {"publish": first, "no-op publish": noop}
    verdicts = [
        f"{step} of {clusters:,} clusters <= {limit:g} s: "
        + ("met" if measured[step]["seconds"] <= limit else "MISSED")
        for (step, clusters), limit in TARGETS.items()
        if clusters == size
    ]
    scope = "" if size == n else f" (they are for {size:,} clusters; this run had {n})"
    return f"targets on 2 cores{scope}: {'; '.join(verdicts)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--noop-runs", type=int, default=3)
    parser.add_argument("--step", choices=_STEPS)
    parser.add_argument("--repo", type=Path)
    args = parser.parse_args(argv)
    if args.step:
        print(json.dumps(_step(args.step, args.repo)))
        return 0
    from benchmarks.bench_render import overlays_on_disk  # the renderer: not in a step's process

    n = args.clusters
    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        source = Path(tmp) / "source"
        write_profiles(source, n)
        init_repo(source, "profiles", user="bench", email="bench@example.invalid").close()
        first = _measure("publish", source)
        noops = [_measure("publish", source) for _ in range(max(1, args.noop_runs))]
        assert all(r["commit"] is None for r in noops), "the second publish must change nothing"
        noop = _median(noops)
        built = Path(tmp) / "built"
        paths = overlays_on_disk(source, built / "scratch")
        (built / OVERLAYS).write_text("".join(f"{p}\n" for p in paths))
        build_commit, build_noop = _baseline("build", built / "checkout")
        archive = subprocess.run(
            ["git", "-C", str(source), "archive", "rendered"], check=True, capture_output=True
        ).stdout
        files = Path(tmp) / "files"
        files.mkdir()
        (files / ARCHIVE).write_bytes(archive)
        files_commit, files_noop = _baseline("files", files / "checkout")
    count = files_commit["files"]
    times = ", ".join(f"{r['seconds']:.2f}" for r in noops)
    runs = f"median of {len(noops)}: {times}"
    for what, ours, base, base_what in (
        (
            f"publish {n} clusters ({count} files)",
            first,
            build_commit,
            "pykustomize build + write + git add -A + git commit",
        ),
        (
            f"publish {n} clusters, files already built",
            first,
            files_commit,
            "write files + git add -A + git commit",
        ),
        (
            f"no-op publish ({runs})",
            noop,
            build_noop,
            "pykustomize build + write + git add -A (unchanged) + diff",
        ),
        (
            "no-op publish, files already built",
            noop,
            files_noop,
            "write files + git add -A (unchanged) + diff",
        ),
    ):
        print(_line(what, ours, base, base_what))
    print(_verdicts(n, first, noop))
    return 0


if __name__ == "__main__":
    sys.exit(main())
