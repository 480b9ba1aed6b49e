"""The one HTTP retry policy: the auditor's Kubernetes API reads and the PR bot's GitHub calls.

A call is tried up to `attempts` times. Between tries it waits an exponential backoff with jitter,
or what the server asked for (Retry-After, a rate-limit reset) when that is longer. The caller's
attempt function says what happened each time: a result (done), a `Retry` (transient: 429, 5xx,
a connection error, a body cut short) or an exception of its own (final). The transport stays with
the caller; the only I/O here is `sleep`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TypeVar

from kubedata.errors import RetriesExhausted

__all__ = ["TRANSIENT_STATUS", "Retry", "RetryPolicy", "retry_after", "with_retries"]

TRANSIENT_STATUS = frozenset({429, 500, 502, 503, 504})
"""HTTP statuses that say "try again later" rather than "no"."""

T = TypeVar("T")


@dataclass(frozen=True)
class Retry:
    """An attempt failed in a way worth trying again."""

    why: str
    wait: float | None = None
    """Seconds the server asked to wait (Retry-After, a rate-limit reset); None: back off."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    """Tries per call, the first included."""
    backoff: float = 0.25
    """First delay in seconds; doubled per retry, up to `backoff_max`."""
    backoff_max: float = 8.0
    jitter: float = 0.5
    """The random share of each backoff delay: 0.5 is "equal jitter" (never below half), 0 none."""
    retry_after_max: float = 60.0
    """The longest server-asked wait honoured as asked."""
    give_up_over_max: bool = False
    """A longer server-asked wait: False waits `retry_after_max` and tries again; True gives up at
    once (a rate limit that resets in an hour is not lifted by asking sooner)."""

    def backoff_delay(self, attempt: int, rng: random.Random) -> float:
        """The backoff after failed attempt number `attempt` (1-based)."""
        ceiling = min(self.backoff_max, self.backoff * 2.0 ** (attempt - 1))
        return ceiling * (1 - self.jitter) + rng.uniform(0, ceiling * self.jitter)

    def delay(self, attempt: int, retry: Retry, rng: random.Random) -> float | None:
        """How long to wait before the next attempt; None: give up now."""
        delay = self.backoff_delay(attempt, rng)
        if retry.wait is None:
            return delay
        if retry.wait > self.retry_after_max:
            return None if self.give_up_over_max else max(delay, self.retry_after_max)
        return max(delay, retry.wait)


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds from `now` that a Retry-After header asks for (delay-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError):
        return None


_RNG = random.Random()


def with_retries(
    policy: RetryPolicy,
    attempt: Callable[[int], T | Retry],
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """`attempt(n)` for n = 1, 2, ... until it returns a result; RetriesExhausted when it will not.

    Exceptions `attempt` raises pass through untouched: they are the caller's final answers.
    """
    n = 0
    while True:
        n += 1
        outcome = attempt(n)
        if not isinstance(outcome, Retry):
            return outcome
        delay = policy.delay(n, outcome, rng or _RNG)
        if delay is None:
            raise RetriesExhausted(n, outcome.why, outcome.wait)
        if n >= policy.attempts:
            raise RetriesExhausted(n, outcome.why)
        sleep(delay)
