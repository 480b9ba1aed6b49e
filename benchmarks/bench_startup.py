"""Start-up of the gpu-gitops process, next to the same CLI importing every command up front.

    python -m benchmarks.bench_startup [--runs 15]

What a user waits for, whole process: `gpu-gitops --help` and `gpu-gitops validate` of one profile
(what a pre-commit hook runs). The baseline is the CLI as it was before each command was imported
lazily: the same process with every command's module imported first, and pykustomize's Python
layer (cffi, asyncio), which builds went through before they called its library directly. A bare
`python -c pass` in the same run shows what the interpreter alone costs. Rounds alternate the
commands, so load on the machine falls on all of them alike; figures are medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gpu_gitops.cli import COMMANDS

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent
_LAZY = "import sys; from gpu_gitops.cli import main; sys.exit(main())"
# today's main with yesterday's start: every command module loaded before argv is looked at
_EAGER = f"import pykustomize, {', '.join(sorted({m for m, _ in COMMANDS.values()}))}; {_LAZY}"
CASES = {
    "--help": ["--help"],
    "validate of one profile": ["validate", "clusters/ams1/gpu-profile.yaml", "--repo", str(ROOT)],
}


def _time(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv)
    python = sys.executable
    runs: dict[str, list[float]] = {}
    for _ in range(args.runs):
        runs.setdefault("python -c pass", []).append(_time([python, "-c", "pass"]))
        for name, cli_args in CASES.items():
            runs.setdefault(name, []).append(_time([python, "-c", _LAZY, *cli_args]))
            runs.setdefault(f"{name} (eager)", []).append(_time([python, "-c", _EAGER, *cli_args]))
    median = {name: statistics.median(times) for name, times in runs.items()}
    print(f"python -c pass: {median['python -c pass'] * 1000:.0f} ms (median of {args.runs})")
    for name in CASES:
        ours, eager = median[name], median[f"{name} (eager)"]
        print(
            f"gpu-gitops {name}: {ours * 1000:.0f} ms | baseline every command imported up front: "
            f"{eager * 1000:.0f} ms | ratio {eager / ours:.1f}x (median of {args.runs})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
