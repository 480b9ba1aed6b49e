"""The one retry policy: backoff, jitter, server-asked waits, giving up, what passes through."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from kubedata.errors import RetriesExhausted
from kubedata.retry import Retry, RetryPolicy, retry_after, with_retries


def run(policy: RetryPolicy, outcomes: list[object]) -> tuple[object, list[float], list[int]]:
    """with_retries over a script of outcomes; what it returned, slept and which attempts ran."""
    sleeps: list[float] = []
    seen: list[int] = []

    def attempt(n: int) -> object:
        seen.append(n)
        outcome = outcomes[n - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    result = with_retries(policy, attempt, sleep=sleeps.append, rng=random.Random(7))
    return result, sleeps, seen


def test_backoff_grows_with_jitter_and_is_bounded() -> None:
    policy = RetryPolicy(backoff=1.0, backoff_max=4.0)
    rng = random.Random(1)
    delays = [policy.backoff_delay(a, rng) for a in range(1, 7)]
    assert 0.5 <= delays[0] <= 1 and 1 <= delays[1] <= 2 and 2 <= delays[2] <= 4
    assert all(2 <= d <= 4 for d in delays[3:])
    assert len(set(delays)) == len(delays)  # jittered: no two alike


def test_without_jitter_the_backoff_doubles_exactly() -> None:
    policy = RetryPolicy(backoff=1.0, backoff_max=5.0, jitter=0.0)
    rng = random.Random(1)
    assert [policy.backoff_delay(a, rng) for a in range(1, 5)] == [1.0, 2.0, 4.0, 5.0]


def test_a_result_after_retries_is_returned() -> None:
    policy = RetryPolicy(backoff=1.0, jitter=0.0)
    result, sleeps, seen = run(policy, [Retry("HTTP 502"), Retry("HTTP 503"), "ok"])
    assert result == "ok" and sleeps == [1.0, 2.0] and seen == [1, 2, 3]


def test_attempts_are_bounded_and_the_last_reason_is_kept() -> None:
    policy = RetryPolicy(attempts=3, backoff=1.0, jitter=0.0)
    with pytest.raises(RetriesExhausted) as caught:
        run(policy, [Retry("a"), Retry("b"), Retry("c"), "never reached"])
    assert (caught.value.attempts, caught.value.why, caught.value.wait) == (3, "c", None)
    assert str(caught.value) == "failed 3 time(s), last: c"


def test_no_sleep_after_the_last_attempt() -> None:
    sleeps: list[float] = []
    with pytest.raises(RetriesExhausted):
        with_retries(RetryPolicy(attempts=2), lambda n: Retry("x"), sleep=sleeps.append)
    assert len(sleeps) == 1


def test_a_server_asked_wait_longer_than_the_backoff_is_honoured() -> None:
    policy = RetryPolicy(backoff=1.0, jitter=0.0)
    _, sleeps, _ = run(policy, [Retry("429", wait=7.0), Retry("429", wait=0.0), "ok"])
    assert sleeps == [7.0, 2.0]  # a shorter one never undercuts the backoff


def test_a_too_long_wait_is_capped_or_ends_the_call() -> None:
    capped = RetryPolicy(backoff=1.0, jitter=0.0, retry_after_max=20.0)
    _, sleeps, _ = run(capped, [Retry("429", wait=3600.0), "ok"])
    assert sleeps == [20.0]
    strict = RetryPolicy(retry_after_max=20.0, give_up_over_max=True)
    with pytest.raises(RetriesExhausted) as caught:
        run(strict, [Retry("rate limited", wait=3600.0), "never reached"])
    assert caught.value.attempts == 1 and caught.value.wait == 3600.0


def test_the_callers_own_exceptions_pass_through_at_once() -> None:
    with pytest.raises(KeyError):
        run(RetryPolicy(), [Retry("x"), KeyError("final"), "never reached"])


def test_retry_after_reads_seconds_and_http_dates() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    in_90s = format_datetime(datetime(2026, 1, 1, 12, 1, 30, tzinfo=UTC), usegmt=True)
    assert retry_after("3", now) == 3.0
    assert retry_after("-5", now) == 0.0
    assert retry_after(in_90s, now) == 90.0
    assert retry_after("soon", now) is None
    assert retry_after(None, now) is None and retry_after("", now) is None
