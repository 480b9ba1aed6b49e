"""Render + build N clusters in process, next to one `kubectl kustomize` process per cluster.

    python -m benchmarks.bench_render [--clusters 1000] [--baseline-sample 100]

The baseline runs kubectl on a sample of the same overlays (250-300 ms a process) and scales it to
all clusters; the line says so. Growth is render+build of N/10 clusters vs N.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.profiles import write_profiles
from renderer.kustomize.workers import build_overlays, materialize
from renderer.render import render_profiles
from renderer.validate import check_clusters

__all__ = ["main"]


def _render_build(root: Path) -> tuple[float, int]:
    start = time.perf_counter()
    checked = check_clusters(root)
    rendered = render_profiles(checked.profiles)
    built = build_overlays(rendered.overlays)
    elapsed = time.perf_counter() - start
    return elapsed, sum(
        text.count("\nkind: ") + text.startswith("kind: ") for text in built.values()
    )


def _kubectl_sample(root: Path, sample: int) -> float:
    checked = check_clusters(root)
    rendered = render_profiles(checked.profiles[:sample])
    with tempfile.TemporaryDirectory() as tmp:
        materialize(Path(tmp), rendered.overlays)
        start = time.perf_counter()
        for name in rendered.overlays:
            subprocess.run(
                ["kubectl", "kustomize", str(Path(tmp) / "overlays" / name)],
                check=True,
                capture_output=True,
            )
        return time.perf_counter() - start


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--baseline-sample", type=int, default=100)
    args = parser.parse_args(argv)
    n, sample = args.clusters, min(args.baseline_sample, args.clusters)
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        small, large = Path(tmp) / "small", Path(tmp) / "large"
        write_profiles(small, max(1, n // 10))
        write_profiles(large, n)
        t_small, _ = _render_build(small)
        t_large, objects = _render_build(large)
        peak = _peak_mb()
        baseline = None
        if shutil.which("kubectl"):
            baseline = _kubectl_sample(large, sample) * n / sample
    print(
        f"render + build {n} clusters ({objects} objects): {t_large:.2f} s, peak RSS {peak:.0f} MB"
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
