"""A tiny run of each benchmark, so the benchmark commands cannot rot (timings are not asserted)."""

from __future__ import annotations

import re

import pytest

from benchmarks import bench_render


def test_bench_render_smoke(capsys: pytest.CaptureFixture[str]):
    assert bench_render.main(["--clusters", "10", "--baseline-sample", "2"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"render \+ build 10 clusters \(\d+ objects\): [0-9.]+ s", out)
    assert re.search(r"growth 1 -> 10 clusters: .* ratio [0-9.]+", out)
    assert "baseline kubectl kustomize" in out
