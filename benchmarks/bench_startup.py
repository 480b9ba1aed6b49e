"""Start-up of the gpu-gitops process, next to the code as it was when issue 10 measured it.

    python -m benchmarks.bench_startup [--runs 15] [--baseline COMMIT]

What a user waits for, whole process, as the installed `gpu-gitops` script runs it:
`gpu-gitops --help` and `gpu-gitops validate` of one profile (what a pre-commit hook runs). The
baseline is the same two commands on the code of COMMIT (default: the main that issue 10 measured),
taken from this repository's history into a scratch folder and run by the same interpreter with
the same packages, on that commit's own example clusters. Where the history lacks the commit (a
shallow clone), the baseline is today's code with every command and pykustomize's Python layer
imported up front, as the CLI started before issue 10; the output says which.

Bytecode is written for both before timing, as `pip install` does (see benchmarks/__init__.py):
a first round, not counted, runs every command once. A bare `python -c pass` in the same run shows
what the interpreter alone costs, and a process that only imports what `validate` imports what
those imports cost. Rounds alternate the commands, so load on the machine falls on all of them
alike; figures are medians.

Issue 25's start-up targets, in the same rounds: every `gpu-gitops COMMAND --help` at most 2x
`gpu-gitops --help`, and `gpu-gitops audit` of a tiny snapshot within 150 ms: the demo's
snapshot of ams1 (audit/demo/snapshots/ams1, 8 files, 18 objects) against a repository holding
only ams1's example profile, published, whose revision the snapshot's Kustomization names as
applied (so the audit reads the rendered branch, as in a cluster Flux keeps in sync).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gpu_gitops.cli import COMMANDS
from renderer.gitrepo import init_repo
from renderer.publish.publish import publish

__all__ = ["ISSUE_DAY", "main", "tiny_snapshot"]

ROOT = Path(__file__).resolve().parent.parent
ISSUE_DAY = "a49d0c795a1950d2e7c42623f348b4cda530a3c9"
"""main when issue 10 was filed (its `--help`: 0.70 s as measured there)."""
_OURS = "from gpu_gitops.cli import run; run()"
# the console script of that day
_THEN = "import sys; from gpu_gitops.cli import main; sys.exit(main())"
# today's code with yesterday's start: every command module loaded before argv is looked at
_EAGER = f"import pykustomize, {', '.join(sorted({m for m, _ in COMMANDS.values()}))}; {_THEN}"
# what `validate` imports before it does anything, and nothing else (exit as cli.run exits)
_IMPORTS = "import gc, gpu_gitops.cli, gpu_gitops.cli_validate, renderer.kustomize.workers; "
_IMPORTS += "gc.freeze()"
CASES = {
    "--help": ["--help"],
    "validate of one profile": ["validate", "clusters/ams1/gpu-profile.yaml", "--repo", "{repo}"],
}
HELP_RATIO = 2.0
"""Every `COMMAND --help` takes at most this many times `--help` (issue 25)."""
SNAPSHOT_TARGET = 0.150
"""Seconds an audit of the tiny snapshot may take, whole process (issue 25)."""
DEMO_SNAPSHOT = ROOT / "audit" / "demo" / "snapshots" / "ams1"
_PLACEHOLDER = "rendered@sha1:" + "0" * 40


def _time(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def _issue_day_tree(commit: str, dest: Path) -> bool:
    """The files of `commit` under dest; False when this clone's history does not hold it."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", commit], capture_output=True
    )
    if archive.returncode != 0:
        return False
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return True


def tiny_snapshot(dest: Path) -> list[str]:
    """The arguments of `gpu-gitops audit` on the demo's ams1 snapshot, against a repository of
    ams1's profile alone whose published tip the snapshot names as applied."""
    repo = dest / "repo"
    shutil.copytree(ROOT / "clusters" / "ams1", repo / "clusters" / "ams1")
    init_repo(repo, "ams1", user="bench", email="bench@gpu-gitops.invalid").close()
    tip = publish(repo).tip
    snapshot = dest / "snapshot"
    shutil.copytree(DEMO_SNAPSHOT, snapshot)
    for file in snapshot.iterdir():
        text = file.read_text()
        file.write_text(text.replace(_PLACEHOLDER, f"rendered@sha1:{tip}"))
    return ["audit", "--cluster", "ams1", "--snapshot", str(snapshot), "--repo", str(repo)]


def _time_audit(argv: list[str]) -> float:
    """One audit of the snapshot; exit 1 (its planted drift) is what it must end with."""
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True)
    seconds = time.perf_counter() - start
    if done.returncode != 1:
        raise SystemExit(f"the snapshot audit exited {done.returncode}: {done.stderr.decode()}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--baseline", default=ISSUE_DAY, metavar="COMMIT")
    args = parser.parse_args(argv)
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        then = Path(tmp)
        if _issue_day_tree(args.baseline, then):
            # run from its own folder: `python -c` puts it first on sys.path
            baseline = f"the code of {args.baseline[:7]} (when issue 10 was filed)"
            old, old_root = [python, "-c", _THEN], then
        else:
            baseline = f"({args.baseline} is not in this clone) every command imported up front"
            old, old_root = [python, "-c", _EAGER], ROOT
        tiny = Path(tmp) / "tiny"
        audit = [python, "-c", _OURS, *tiny_snapshot(tiny)]
        runs: dict[str, list[float]] = {}
        for round_ in range(args.runs + 1):  # round 0 writes the bytecode and is not counted
            times = {
                "python -c pass": _time([python, "-c", "pass"], ROOT),
                "imports": _time([python, "-c", _IMPORTS], ROOT),
            }
            for name, cli_args in CASES.items():
                ours = [a.format(repo=ROOT) for a in cli_args]
                times[name] = _time([python, "-c", _OURS, *ours], ROOT)
                olds = [a.format(repo=old_root) for a in cli_args]
                times[f"{name} (baseline)"] = _time([*old, *olds], old_root)
            for command in COMMANDS:
                times[f"{command} --help"] = _time([python, "-c", _OURS, command, "--help"], ROOT)
            times["audit of the tiny snapshot"] = _time_audit(audit)
            for name, seconds in times.items():
                runs.setdefault(name, []).extend([seconds] if round_ else [])
    median = {name: statistics.median(times) for name, times in runs.items()}
    print(f"python -c pass: {median['python -c pass'] * 1000:.0f} ms (median of {args.runs})")
    for name in CASES:
        now, then_ = median[name], median[f"{name} (baseline)"]
        print(
            f"gpu-gitops {name}: {now * 1000:.0f} ms | baseline {baseline}: "
            f"{then_ * 1000:.0f} ms | ratio {then_ / now:.1f}x (median of {args.runs})"
        )
    budget = median["validate of one profile (baseline)"] / 4
    print(
        f"importing what validate imports, and nothing else: {median['imports'] * 1000:.0f} ms "
        f"(a 4x validate: {budget * 1000:.0f} ms)"
    )
    _report_targets(median, args.runs)
    return 0


def _report_targets(median: dict[str, float], runs: int) -> None:
    """Issue 25's lines: each COMMAND --help against --help, the snapshot audit against 150 ms."""
    top, bare = median["--help"], median["python -c pass"]
    print(f"COMMAND --help against --help ({top * 1000:.0f} ms), target <= {HELP_RATIO:g}x:")
    worst = max(median[f"{command} --help"] for command in COMMANDS)
    for command in COMMANDS:
        seconds = median[f"{command} --help"]
        print(f"  {command} --help: {seconds * 1000:.0f} ms | ratio {seconds / top:.2f}x")
    met = "met" if worst <= HELP_RATIO * top else "NOT met"
    print(f"  slowest: {worst * 1000:.0f} ms, {worst / top:.2f}x --help: {met} (median of {runs})")
    seconds = median["audit of the tiny snapshot"]
    met = "met" if seconds <= SNAPSHOT_TARGET else "NOT met"
    print(
        f"audit of the tiny snapshot (demo ams1, 18 objects): {seconds * 1000:.0f} ms | target "
        f"{SNAPSHOT_TARGET * 1000:.0f} ms: {met} | python -c pass {bare * 1000:.0f} ms, "
        f"--help {top * 1000:.0f} ms | ratio {seconds / bare:.1f}x python -c pass "
        f"(median of {runs})"
    )


if __name__ == "__main__":
    sys.exit(main())
