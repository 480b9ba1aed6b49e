"""A tiny run of every benchmark, so the benchmark command cannot rot (timings are not asserted)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from benchmarks import bench_publish
from benchmarks.__main__ import BENCHMARKS, main
from gpu_gitops.arguments import COMMANDS


def test_every_benchmark_runs_at_smoke_size(capsys: pytest.CaptureFixture[str]):
    servers = _apiservers()
    assert main(["--small"]) == 0
    assert _apiservers() == servers, "bench_audit left its test API server running"
    out = capsys.readouterr().out
    for module, _, _ in BENCHMARKS:
        assert f"== {module}\n" in out
    assert re.search(r"python -c pass: \d+ ms", out)
    for case in ("--help", "validate of one profile"):
        figure = rf"gpu-gitops {case}: \d+ ms \| baseline .*: \d+ ms \| ratio [0-9.]+x"
        assert re.search(figure, out)
    assert re.search(r"COMMAND --help against --help \(\d+ ms\), target <= 2x:\n", out)
    for command in COMMANDS:
        assert re.search(rf"\n  {command} --help: \d+ ms \| ratio [0-9.]+x\n", out)
    assert re.search(r"  slowest: \d+ ms, [0-9.]+x --help: (met|NOT met)", out)
    tiny = r"audit of the tiny snapshot \(demo ams1, 18 objects\): \d+ ms \| target 150 ms: "
    assert re.search(tiny + r"(met|NOT met) \| python -c pass \d+ ms", out)
    render = r"render \+ build 10 clusters \(\d+ objects\): [0-9.]+ s \(median of 3 rounds, "
    assert re.search(render + r"alternating: [0-9., ]+\), peak RSS \d+ MiB", out)
    assert re.search(r"growth 1 -> 10 clusters: .* ratio [0-9.]+", out)
    pykustomize = r"baseline pykustomize in one process, per overlay on disk: [0-9.]+ s "
    assert re.search(pykustomize + r"\([0-9., ]+\) \| ours [0-9.]+ s \| ratio [0-9.]+x", out)
    assert "baseline kubectl kustomize" in out
    assert re.search(r"ratio full / diff: [0-9.]+x", out)
    fleet = r"fleet, 20 clusters x 10 findings \(120 listed\): [0-9.]+ s \(median of 1\), "
    fleet += r"peak RSS \d+ MiB, 3 queries \| baseline .*: [0-9.]+ s .*, 21 queries"
    assert re.search(fleet, out)
    live = r"diff --live-findings, 20-cluster repo, 2 changed: [0-9.]+ s .*, 3 queries \| "
    assert re.search(live + r"baseline .*, 2 queries \| ratio [0-9.]+x", out)
    built = r"baseline pykustomize build \+ write \+ git add -A "
    first = r"publish 5 clusters \(\d+ files\): [0-9.]+ s, peak RSS \d+ MiB \| " + built
    assert re.search(first + r"\+ git commit: [0-9.]+ s, peak RSS \d+ MiB \| ratio [0-9.]+x", out)
    noop = r"no-op publish \(median of 3: [0-9., ]+\): [0-9.]+ s, peak RSS \d+ MiB \| " + built
    assert re.search(noop + r"\(unchanged\) \+ diff: [0-9.]+ s, .* ratio [0-9.]+x", out)
    files = r"publish 5 clusters, files already built: .* \| baseline write files \+ git add -A "
    assert re.search(files + r"\+ git commit: [0-9.]+ s, .* ratio [0-9.]+x", out)
    files = r"no-op publish, files already built: .* \| baseline write files \+ git add -A "
    assert re.search(files + r"\(unchanged\) \+ diff: [0-9.]+ s, .* ratio [0-9.]+x", out)
    targets = r"targets on 2 cores \(they are for 1,000 clusters; this run had 5\): publish of "
    targets += r"1,000 clusters <= 5 s: (met|MISSED); no-op publish of 1,000 clusters <= 1 s: "
    assert re.search(targets + r"(met|MISSED)\n", out)
    check = r"render --check of 5 clusters \(\d+ files in the checkout\), render cache warm: "
    assert re.search(
        check + r"[0-9.]+ s \(median of 1 rounds, .*\), peak RSS \d+ MiB \| target 3 s", out
    )
    for line in ("after one profile was edited", "baseline without the cache", "floor git status"):
        assert re.search(line + r".*: [0-9.]+ s \([0-9., ]+\).* \| [0-9.]+x the warm check", out)
    assert re.search(r"ours \(normalize \+ fast path \+ differ\): +[0-9.]+ s", out)
    assert re.search(r"DeepDiff on normalized pairs: +[0-9.]+ s +x *[0-9.]+ ours", out)
    audit = r"audit of 200 live objects end to end \(\d+ desired read from git; live state read in "
    audit += (
        r"\d+ requests; \d+ findings; complete=True\): [0-9.]+ s \(median of .*; desired state "
    )
    audit += r"read [0-9.]+ s\), peak RSS \d+ MiB \(its worker and git processes \d+ MiB of it\)"
    assert re.search(audit, out)
    baseline = (
        r"baseline GitPython \+ PyYAML read, list, DeepDiff per pair: [0-9.]+ s \(read [0-9.]+ s; "
    )
    assert re.search(baseline + r"list [0-9.]+ s; .*scaled\).*ratio [0-9.]+x", out)
    script = (
        r"baseline careful script \(ls-tree \+ cat-file --batch, C YAML, httpx \+ orjson lists, "
    )
    script += (
        r"dict walk\): [0-9.]+ s \(median of .*\), flags \d+ of \d+ objects \| ours [0-9.]+ s, "
    )
    assert re.search(script + r"\d+ findings \| ratio [0-9.]+x", out)
    adopt = r"adopt on the same cluster \(2 findings adopted, \d+ not adoptable; commit on a new "
    adopt += r"branch\): [0-9.]+ s \(median of .*: its audit [0-9.]+ s \+ plan, edit, validate, "
    adopt += r"render and commit [0-9.]+ s; at most [0-9.]+ s over its audit\), peak RSS \d+ MiB; "
    adopt += r"the audit alone: [0-9.]+ s"
    assert re.search(adopt, out)
    assert re.search(r"growth \d+ -> 200 objects: [0-9.]+ s -> [0-9.]+ s, ratio [0-9.]+", out)
    assert "targets on 2 cores (they are for 20,000 objects; this run had 200): wall" in out
    assert re.search(r"job on ams1: exit 0, [0-9.]+ s, peak RSS \d+ MiB", out)
    job = r"job on the 200-object cluster \(\d+ desired; \d+ findings; complete=True\): exit 0"
    assert re.search(job + r", [0-9.]+ s \(CPU [0-9.]+ s\), peak RSS \d+ MiB", out)
    growth = r"growth \d+ -> \d+ objects: time x[0-9.]+ \(exponent -?[0-9.]+; target <= 1.05 "
    assert re.search(
        growth + r"\(it is for 20000 -> 200000 objects\): (met|MISSED)\), the job's CPU x[0-9.]+ "
        r"\(exponent -?[0-9.]+\), peak RSS",
        out,
    )


def test_publish_targets_are_those_of_the_run_size():
    first, noop = {"seconds": 30.0}, {"seconds": 1.2}
    assert bench_publish._verdicts(10000, first, noop) == (
        "targets on 2 cores: no-op publish of 10,000 clusters <= 1.5 s: met"
    )
    assert bench_publish._verdicts(1000, first, noop) == (
        "targets on 2 cores: publish of 1,000 clusters <= 5 s: MISSED; "
        "no-op publish of 1,000 clusters <= 1 s: MISSED"
    )


def _apiservers() -> set[int]:
    """This test's own `python -m tests.apiserver` processes (the benchmark's servers), by pid.

    Only descendants of this process count: other work on the machine may run servers too.
    """
    found = set()
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"tests.apiserver" in cmdline and _descends_from_us(int(proc.name)):
                found.add(int(proc.name))
    return found


def _descends_from_us(pid: int) -> bool:
    me = os.getpid()
    while pid > 1:
        if pid == me:
            return True
        try:
            # /proc/<pid>/stat is "pid (comm) state ppid ...", comm may hold spaces: split after ")"
            pid = int((Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False
