"""The demo snapshots shipped as package data are what tests/audit/make_demo.py writes."""

from __future__ import annotations

from tests.audit import make_demo


def test_committed_demo_snapshots_are_current() -> None:
    for rel, text in make_demo.generate().items():
        path = make_demo.DEMO / rel
        assert path.is_file(), f"{rel} missing: run python -m tests.audit.make_demo"
        assert path.read_text(encoding="utf-8") == text, (
            f"{rel} is stale: run python -m tests.audit.make_demo"
        )
    written = {
        p.relative_to(make_demo.DEMO).as_posix()
        for p in (make_demo.DEMO / "snapshots").rglob("*.yaml")
    }
    assert written == set(make_demo.generate())
