"""The bytes bound of a Budget is final: refused once, refused for every later read."""

from __future__ import annotations

import pytest

from kubedata.budget import Budget, OverBudget, OverReadBudget


def test_the_bytes_bound_refuses_every_read_after_the_first_refusal() -> None:
    budget = Budget(60, max_wait=1, max_bytes=1024, bytes_setting="--max-read-bytes")
    budget.take(1024)
    budget.check()  # at the bound, not past it
    with pytest.raises(OverReadBudget, match=r"over 1Ki bytes \(--max-read-bytes 1Ki\)"):
        budget.take(1)
    with pytest.raises(OverReadBudget, match=r"rerun with a larger --max-read-bytes \(e.g. 2Ki\)"):
        budget.check()  # before the next request is sent


def test_a_passed_deadline_is_not_a_bytes_refusal() -> None:
    now = [0.0]
    budget = Budget(5, max_wait=1, max_bytes=1024, clock=lambda: now[0])
    now[0] = 6.0
    with pytest.raises(OverBudget) as passed:
        budget.check()
    assert not isinstance(passed.value, OverReadBudget)
