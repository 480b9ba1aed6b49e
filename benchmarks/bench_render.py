"""Render + build N clusters in process, next to pykustomize in one process and kubectl per cluster.

    python -m benchmarks.bench_render [--clusters 1000] [--baseline-sample 100] [--rounds 3]

The fair baseline is pykustomize's public API (`Kustomizer.build`, one event loop) called once per
cluster in this process over the same overlays, already written to disk (its time is the builds
only; ours also checks and renders the profiles), timed in the same run as ours: rounds alternate
the two, and each figure is its median over the rounds (the machine is shared). The kubectl
baseline runs `kubectl kustomize` on a sample of the same overlays (250-300 ms a process, mostly
start-up) and scales it to all clusters; the line says so. Growth is render+build of N/10 clusters
vs N.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.profiles import write_profiles
from benchmarks.pykustomize_api import pykustomize_build
from renderer.kustomize.workers import build_overlays, materialize
from renderer.render import render_profiles
from renderer.validate import check_clusters

__all__ = ["main", "overlays_on_disk"]


def _render_build(root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    checked = check_clusters(root)
    rendered = render_profiles(checked.profiles)
    built = build_overlays(rendered.overlays)
    elapsed = time.perf_counter() - start
    return elapsed, sum(
        text.count("\nkind: ") + text.startswith("kind: ") for text in built.values()
    )


def overlays_on_disk(root: Path, tmp: Path, clusters: int | None = None) -> list[Path]:
    """The overlays of `root`'s clusters (the first `clusters`) written under tmp; their folders."""
    checked = check_clusters(root)
    rendered = render_profiles(checked.profiles[:clusters])
    materialize(tmp, rendered.overlays)
    return [tmp / "overlays" / name for name in sorted(rendered.overlays)]


def _pykustomize_loop(root: Path) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        paths = overlays_on_disk(root, Path(tmp))
        start = time.perf_counter()
        pykustomize_build(paths)
        return time.perf_counter() - start


def _kubectl_sample(root: Path, sample: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        paths = overlays_on_disk(root, Path(tmp), sample)
        start = time.perf_counter()
        for path in paths:
            subprocess.run(["kubectl", "kustomize", str(path)], check=True, capture_output=True)
        return time.perf_counter() - start


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--baseline-sample", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    n, sample = args.clusters, min(args.baseline_sample, args.clusters)
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        write_profiles(small, max(1, n // 10))
        write_profiles(large, n)
        t_small, _ = _render_build(small)
        ours: list[float] = []
        theirs: list[float] = []
        peak = 0.0
        for _ in range(max(1, args.rounds)):
            elapsed, objects = _render_build(large)
            ours.append(elapsed)
            peak = peak or _peak_mib()  # ours, before kustomize's library is loaded
            theirs.append(_pykustomize_loop(large))
        t_large, t_pykustomize = statistics.median(ours), statistics.median(theirs)
        baseline = None
        if shutil.which("kubectl"):
            baseline = _kubectl_sample(large, sample) * n / sample
    rounds = f"median of {len(ours)} rounds, alternating"
    print(
        f"render + build {n} clusters ({objects} objects): {t_large:.2f} s ({rounds}: "
        f"{', '.join(f'{t:.2f}' for t in ours)}), peak RSS {peak:.0f} MiB"
    )
    print(
        f"baseline pykustomize in one process, per overlay on disk: {t_pykustomize:.2f} s "
        f"({', '.join(f'{t:.2f}' for t in theirs)}) | ours {t_large:.2f} s "
        f"| ratio {t_pykustomize / t_large:.2f}x"
    )
    if baseline is not None:
        print(
            f"baseline kubectl kustomize per cluster: {baseline:.2f} s "
            f"(measured on {sample}, scaled to {n}); ratio {baseline / t_large:.1f}x"
        )
    else:
        print("baseline kubectl kustomize: kubectl not found, skipped")
    print(
        f"growth {max(1, n // 10)} -> {n} clusters: {t_small:.2f} s -> {t_large:.2f} s, "
        f"ratio {t_large / t_small:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
