"""The pull-request comment body: order, escaping, and the 65,536-character budget."""

from __future__ import annotations

import re
from typing import Any

import pytest

from prbot.diff import diff_objects, index_objects
from prbot.refdiff import ClusterDiff, RefDiff, Side
from prbot.report_diff import render_text
from prbot.report_markdown import COMMENT_LIMIT, MARKER, render_markdown
from prbot.risk_check import Risk

BASE = Side("main", "a" * 40)
HEAD = Side("HEAD", "b" * 40)
FENCE = re.compile(r"^(`{3,})(\w*)$")


def package(values: dict[str, Any], name: str = "cozystack.cozystack-platform") -> dict[str, Any]:
    return {
        "apiVersion": "cozystack.io/v1alpha1",
        "kind": "Package",
        "metadata": {"name": name},
        "spec": {"components": {"platform": {"values": values}}},
    }


def cluster(name: str, before: list[Any], after: list[Any], risks: int = 0) -> ClusterDiff:
    changes = diff_objects(index_objects(before), index_objects(after))
    warn = tuple(
        Risk(name, f"clusters/{name}/gpu-profile.yaml", 11, "variant-switch", f"risk {i}")
        for i in range(risks)
    )
    return ClusterDiff(name, "changed", tuple(changes), warn)


def report(*clusters: ClusterDiff, total: int = 0) -> RefDiff:
    return RefDiff(BASE, HEAD, clusters, total or len(clusters))


def assert_fences_balanced(body: str) -> None:
    """Every opening fence is closed; <details> open and close outside code."""
    open_fence = None
    details = 0
    for line in body.splitlines():
        m = FENCE.match(line)
        if open_fence is None:
            if m:
                open_fence = m.group(1)
            else:
                details += line.count("<details>") - line.count("</details>")
                assert details >= 0
        elif m and len(m.group(1)) >= len(open_fence) and not m.group(2):
            open_fence = None
    assert open_fence is None, "a code fence is left open"
    assert details == 0, "a <details> is left open"


def huge(name: str, entries: int) -> ClusterDiff:
    """One object whose change alone is far over the limit."""
    before = {f"key{i:05d}": f"old value {i} " + "x" * 40 for i in range(entries)}
    after = {f"key{i:05d}": f"new value {i} " + "y" * 40 for i in range(entries)}
    return cluster(name, [package(before)], [package(after)], risks=1)


def test_order_marker_warnings_table_details() -> None:
    body = render_markdown(
        report(
            cluster("ams1", [package({"a": 1})], [package({"a": 2})], risks=2),
            cluster("ber1", [], [package({"b": True}, "cozystack.gpu-operator")]),
            total=6,
        )
    )
    assert body.startswith(MARKER + "\n")
    assert body.index("[!WARNING]") < body.index("| Cluster |") < body.index("<details>")
    assert "| ams1 | 0 | 1 | 0 | 2 |" in body and "| ber1 | 1 | 0 | 0 | 0 |" in body
    assert "**2** of 6 cluster(s) change" in body
    assert "@@ spec.components.platform.values.a @@\n! ± value change\n- 1\n+ 2\n" in body
    assert "+ apiVersion: cozystack.io/v1alpha1\n" in body
    assert "Cut to fit" not in body
    assert_fences_balanced(body)


def test_no_changes_says_so() -> None:
    body = render_markdown(report(total=6))
    assert body.startswith(MARKER) and "No rendered changes: all 6 cluster(s)" in body


def test_huge_change_is_cut_inside_its_fence() -> None:
    d = report(cluster("ams1", [package({"a": 1})], [package({"a": 2})]), huge("big", 3000))
    assert len(render_text(d)) > 3 * COMMENT_LIMIT
    body = render_markdown(d)
    assert len(body) <= COMMENT_LIMIT and len(body.encode()) <= COMMENT_LIMIT
    assert len(body.encode()) > COMMENT_LIMIT - 2_000  # the budget is used, not wasted
    assert_fences_balanced(body)
    assert re.search(r"_✂️ \d+ more line\(s\) of this object cut\._", body)
    notice = body[body.index("✂️ **Cut to fit") :]
    assert "the rest of big" in notice
    assert f"gpu-gitops diff --base {'a' * 12} --head {'b' * 12}" in notice
    # the small cluster before it is shown whole
    assert "@@ spec.components.platform.values.a @@" in body


def test_many_clusters_cut_rows_and_sections() -> None:
    clusters = [
        cluster(f"c{i:04d}", [package({"v": i})], [package({"v": i + 1})], risks=1)
        for i in range(1500)
    ]
    body = render_markdown(report(*clusters))
    assert len(body.encode()) <= COMMENT_LIMIT
    assert_fences_balanced(body)
    notice = body[body.index("✂️ **Cut to fit") :]
    assert re.search(r"\d+ cluster section\(s\) \(c\d{4}, .*, …\)", notice)


def test_warnings_alone_over_the_limit() -> None:
    c = cluster("ams1", [package({"a": 1})], [package({"a": 2})], risks=0)
    long = tuple(
        Risk("ams1", "clusters/ams1/gpu-profile.yaml", i, "device-removed", "w" * 300)
        for i in range(400)
    )
    body = render_markdown(report(ClusterDiff("ams1", "changed", c.changes, long)))
    assert len(body.encode()) <= COMMENT_LIMIT
    assert_fences_balanced(body)
    assert re.search(
        r"Cut to fit .*:\*\* \d+ warning\(s\); 1 summary row\(s\); 1 cluster section", body
    )


@pytest.mark.parametrize("limit", [3_000, 5_000, 20_000])
def test_any_limit_holds(limit: int) -> None:
    body = render_markdown(report(huge("big", 500), huge("other", 500)), limit=limit)
    assert len(body.encode()) <= limit
    assert_fences_balanced(body)


def test_user_text_cannot_break_out() -> None:
    evil = "```\n</details><script>x</script>"
    c = cluster("ams1", [package({"a": "x"})], [package({"a": evil})])
    warn = Risk("ams1", "clusters/ams1/gpu-profile.yaml", 3, "device-removed", 'class "<b>`x`"')
    body = render_markdown(report(ClusterDiff("ams1", "changed", c.changes, (warn,))))
    assert "<script>" not in body.split("````diff")[0]
    assert "&lt;b&gt;&#96;x&#96;" in body
    assert "````diff\n" in body  # a longer fence around content holding ```
    assert_fences_balanced(body)
