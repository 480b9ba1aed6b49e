"""The PR bot's only network I/O: one sticky issue comment through GitHub's REST API (httpx); and
the pull request `adopt` opens (found again by its branch, updated in place or created).

The comment is found again by a hidden marker *and* its author (the marker alone could be quoted by
anyone), then updated in place or created. Requests are retried under the one policy of
kubedata.retry on 5xx responses, network errors and rate limits (403/429 with Retry-After, or
x-ratelimit-remaining: 0 until x-ratelimit-reset); a rate limit that resets later than the policy
waits is given up at once. A create is never repeated blindly: after a failed POST the comments
are listed again first, so a comment that was created anyway is updated instead of duplicated.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from kubedata.budget import Budget, OverBudget
from kubedata.errors import GpuGitopsError, RetriesExhausted
from kubedata.retry import TRANSIENT_STATUS, Retry, RetryPolicy, retry_after, with_retries
from kubedata.text import mask_secret

__all__ = [
    "DEFAULT_API_URL",
    "GITHUB_RETRY",
    "GitHub",
    "GitHubError",
    "Posted",
    "parse_repo",
]

DEFAULT_API_URL = "https://api.github.com"
GITHUB_RETRY = RetryPolicy(
    attempts=5,
    backoff=1.0,
    backoff_max=120.0,
    jitter=0.0,
    retry_after_max=120.0,
    give_up_over_max=True,
)
"""One PR comment at a time: plain doubling from a second; a reset over two minutes away ends it."""
COMMENT_DEADLINE = 600.0
"""Seconds `comment` may take in all, rate-limit waits included: a CI step, not a service."""
MAX_RESPONSE_BYTES = 16 << 20
"""A page of 100 comments of 64 KB each is 6.4 MB at most."""
_SECONDARY_DEFAULT_WAIT = 60.0
"""GitHub: without a Retry-After header, wait at least one minute after a secondary rate limit."""
_PAGE_SIZE = 100
_MAX_PAGES = 100


class GitHubError(GpuGitopsError):
    """A GitHub API call failed for good; the message says what to do."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Posted:
    """What `upsert_comment` did."""

    action: Literal["created", "updated"]
    id: int
    url: str


class _Unsure(Exception):
    """A call that must not be repeated blindly failed in a way that may have applied it."""

    def __init__(self, why: str):
        super().__init__(why)
        self.why = why


def parse_repo(text: str) -> tuple[str, str]:
    """OWNER/NAME, as gh takes it."""
    owner, sep, name = text.partition("/")
    if not sep or not owner or not name or "/" in name or text.strip() != text:
        raise GitHubError(f'"{text}" is not a GitHub repository: use OWNER/NAME, e.g. acme/gitops')
    return owner, name


class GitHub:
    """A small REST client. `transport`, `sleep`, `clock` and `rng` are injectable for tests."""

    def __init__(
        self,
        token: str,
        base_url: str = DEFAULT_API_URL,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        retry: RetryPolicy = GITHUB_RETRY,
        timeout: float = 30.0,
        budget: Budget | None = None,
    ):
        if not token:
            raise GitHubError("GITHUB_TOKEN is empty: set it to a token that may comment")
        mask_secret(token)  # a server echoing the request must not get it printed
        self.base_url = base_url.rstrip("/")
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        self.retry = retry
        self._timeout = timeout
        self.budget = budget or Budget(
            COMMENT_DEADLINE, max_wait=COMMENT_DEADLINE, max_bytes=8 * MAX_RESPONSE_BYTES
        )
        self.budget.sleeper = sleep
        self._origin = urlsplit(self.base_url)[:2]
        self._client = httpx.Client(
            transport=transport,
            timeout=timeout,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": "2022-11-28",
                "User-Agent": "gpu-gitops",
            },
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> GitHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transport with bounded retries -------------------------------------------------------

    def _url(self, path_or_url: str) -> str:
        if path_or_url.startswith("/"):
            return self.base_url + path_or_url
        # A Link header URL: follow it only to the API we were given (it gets the token).
        if urlsplit(path_or_url)[:2] != self._origin:
            raise GitHubError(
                f"refusing to follow a pagination link to another host: {path_or_url}"
            )
        return path_or_url

    def _why_retry(self, response: httpx.Response) -> Retry | None:
        status = response.status_code
        if status in (403, 429):
            return self._rate_limited(response)
        if status in TRANSIENT_STATUS:
            return Retry(f"HTTP {status}")
        return None

    def _rate_limited(self, response: httpx.Response) -> Retry | None:
        status, headers = response.status_code, response.headers
        why = f"rate limited (HTTP {status})"
        if "retry-after" in headers:
            wait = retry_after(headers["retry-after"], self.clock())
            return Retry(why, _SECONDARY_DEFAULT_WAIT if wait is None else wait)
        if headers.get("x-ratelimit-remaining") == "0":
            try:
                reset = float(headers.get("x-ratelimit-reset", ""))
            except ValueError:
                reset = self.clock() + _SECONDARY_DEFAULT_WAIT
            return Retry(why, max(0.0, reset - self.clock()) + 1.0)
        if status == 429 or "secondary rate limit" in response.text.lower():
            return Retry(f"secondary rate limit (HTTP {status})", _SECONDARY_DEFAULT_WAIT)
        return None

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None, *, retry_5xx: bool = True
    ) -> httpx.Response:
        """One API call; 2xx response or GitHubError. Retries what is safe to retry.

        retry_5xx=False: a 5xx or network error raises _Unsure to the caller instead (a POST that
        failed that way may still have been applied); rate limits are retried all the same.
        """
        url = self._url(path)

        def again(retry: Retry) -> Retry:
            if retry.wait is None and not retry_5xx:
                raise _Unsure(retry.why)
            return retry

        def attempt(n: int) -> httpx.Response | Retry:
            try:
                response = self._bounded(method, url, body)
            except httpx.TransportError as exc:
                return again(Retry(f"network error ({type(exc).__name__})"))
            if (retry := self._why_retry(response)) is not None:
                return again(retry)
            if response.is_success:
                return response
            raise GitHubError(_failure(method, path, response), response.status_code)

        try:
            return with_retries(self.retry, attempt, sleep=self.budget.sleep, rng=self.rng)
        except RetriesExhausted as exc:
            resets = f"; the limit resets in {exc.wait:.0f} s" if exc.wait is not None else ""
            raise GitHubError(f"{method} {path} {exc}{resets}; try again later") from None
        except OverBudget as exc:
            raise GitHubError(f"{method} {path}: {exc}; try again later") from None

    def _bounded(self, method: str, url: str, body: dict[str, Any] | None) -> httpx.Response:
        """One request whose answer is read within the command's deadline (checked per chunk:
        a server trickling bytes cannot hold it) and at most MAX_RESPONSE_BYTES long."""
        timeout = self.budget.timeout(self._timeout)
        with self._client.stream(method, url, json=body, timeout=timeout) as streamed:
            chunks: list[bytes] = []
            for chunk in streamed.iter_bytes():
                self.budget.take(len(chunk))
                self.budget.check()
                chunks.append(chunk)
                if sum(map(len, chunks)) > MAX_RESPONSE_BYTES:
                    raise OverBudget(f"an answer is over {MAX_RESPONSE_BYTES} bytes")
        return httpx.Response(
            streamed.status_code,
            headers=streamed.headers,
            content=b"".join(chunks),
            request=streamed.request,
        )

    # --- the sticky comment ---------------------------------------------------------------------

    def token_login(self) -> str | None:
        """The token's user login; None for tokens that cannot read /user (GitHub Actions)."""
        try:
            data = _json(self.request("GET", "/user"))
        except GitHubError as exc:
            if exc.status == 403:
                return None
            raise
        login = data.get("login") if isinstance(data, dict) else None
        return str(login) if login else None

    def comments(self, owner: str, repo: str, number: int) -> Iterator[dict[str, Any]]:
        """Every comment of an issue or pull request, oldest first, following Link: rel=next."""
        url: str | None = f"/repos/{owner}/{repo}/issues/{number}/comments?per_page={_PAGE_SIZE}"
        for _ in range(_MAX_PAGES):
            if url is None:
                return
            response = self.request("GET", url)
            page = _json(response)
            if not isinstance(page, list):
                raise GitHubError(f"GET {url}: expected a list of comments")
            yield from (c for c in page if isinstance(c, dict))
            url = response.links.get("next", {}).get("url")
        raise GitHubError(f"more than {_MAX_PAGES * _PAGE_SIZE} comments; giving up")

    def find_comment(
        self, owner: str, repo: str, number: int, marker: str, author: str
    ) -> dict[str, Any] | None:
        """The oldest comment by `author` whose body starts with `marker`."""
        for c in self.comments(owner, repo, number):
            login = (c.get("user") or {}).get("login")
            if login == author and str(c.get("body") or "").lstrip().startswith(marker):
                return c
        return None

    def _upsert(
        self,
        find: Callable[[], dict[str, Any] | None],
        update: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
        create: tuple[str, dict[str, Any]],
        id_field: str,
        what: str,
    ) -> Posted:
        """PATCH what `find` finds, else POST `create`; a failed POST is never repeated blindly:
        `find` runs again first, so one that was created anyway is updated, not duplicated."""

        def attempt(n: int) -> Posted | Retry:
            found = find()
            if found is not None:
                path, body = update(found)
                r = self.request("PATCH", path, body)
                return Posted("updated", int(found[id_field]), str(_json(r).get("html_url", "")))
            try:
                r = self.request("POST", create[0], create[1], retry_5xx=False)
            except _Unsure as exc:
                return Retry(exc.why)  # find again first: it may exist now
            data = _json(r)
            return Posted("created", int(data.get(id_field, 0)), str(data.get("html_url", "")))

        try:
            return with_retries(self.retry, attempt, sleep=self.sleep, rng=self.rng)
        except RetriesExhausted as exc:
            raise GitHubError(f"creating the {what} {exc}; try again later") from None

    def upsert_comment(
        self, owner: str, repo: str, number: int, body: str, marker: str, author: str
    ) -> Posted:
        """Update the earlier comment in place, or create one. `body` must start with `marker`."""
        return self._upsert(
            lambda: self.find_comment(owner, repo, number, marker, author),
            lambda c: (f"/repos/{owner}/{repo}/issues/comments/{int(c['id'])}", {"body": body}),
            (f"/repos/{owner}/{repo}/issues/{number}/comments", {"body": body}),
            "id",
            "comment",
        )

    # --- the adopt pull request ------------------------------------------------------------------

    def find_pull(self, owner: str, repo: str, branch: str) -> dict[str, Any] | None:
        """The open pull request from `branch` of this repository, if any."""
        response = self.request(
            "GET", f"/repos/{owner}/{repo}/pulls?state=open&head={owner}:{branch}&per_page=100"
        )
        pulls = _json(response)
        if not isinstance(pulls, list):
            raise GitHubError(f"GET /repos/{owner}/{repo}/pulls: expected a list of pull requests")
        return next(
            (
                p
                for p in pulls
                if isinstance(p, dict) and (p.get("head") or {}).get("ref") == branch
            ),
            None,
        )

    def upsert_pull(
        self, owner: str, repo: str, branch: str, base: str, title: str, body: str
    ) -> Posted:
        """Update the open pull request from `branch`, or open one: never two for one branch."""
        return self._upsert(
            lambda: self.find_pull(owner, repo, branch),
            lambda p: (
                f"/repos/{owner}/{repo}/pulls/{int(p['number'])}",
                {"title": title, "body": body},
            ),
            (
                f"/repos/{owner}/{repo}/pulls",
                {"title": title, "head": branch, "base": base, "body": body},
            ),
            "number",
            "pull request",
        )


def _json(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        raise GitHubError(
            f"{response.request.method} {response.request.url.path}: the answer is not JSON; "
            "check GITHUB_API_URL"
        ) from None


def _failure(method: str, path: str, response: httpx.Response) -> str:
    status = response.status_code
    try:
        message = str(response.json().get("message", ""))
    except (ValueError, AttributeError):
        message = ""
    hint = {
        401: "the token is invalid or expired: check GITHUB_TOKEN",
        403: "the token may not do this: it needs pull-requests: write (or issues: write)",
        404: "no such repository or pull request, or the token cannot see it",
        422: "GitHub refused the body (over 65,536 characters?)",
    }.get(status, "see the GitHub API status")
    shown = f" ({message})" if message else ""
    return f"{method} {path.split('?')[0]}: HTTP {status}{shown}; {hint}"
