"""A tiny run of every benchmark, so the benchmark command cannot rot (timings are not asserted)."""

from __future__ import annotations

import re

import pytest

from benchmarks.__main__ import BENCHMARKS, main


def test_every_benchmark_runs_at_smoke_size(capsys: pytest.CaptureFixture[str]):
    assert main(["--small"]) == 0
    out = capsys.readouterr().out
    for module, _, _ in BENCHMARKS:
        assert f"== {module}\n" in out
    assert re.search(r"render \+ build 10 clusters \(\d+ objects\): [0-9.]+ s", out)
    assert re.search(r"growth 1 -> 10 clusters: .* ratio [0-9.]+", out)
    assert "baseline kubectl kustomize" in out
    assert re.search(r"ratio full / diff: [0-9.]+x", out)
    assert re.search(r"publish 5 clusters \(\d+ files\): [0-9.]+ s, peak RSS \d+ MB", out)
    assert re.search(r"no-op publish: .* GitPython index.add \(unchanged\) .* ratio [0-9.]+x", out)
