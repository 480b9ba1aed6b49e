"""`gpu-gitops comment` against a local GitHub stand-in that records and checks every request."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from gpu_gitops.cli import main
from gpu_gitops.console import Console
from kubedata.budget import Budget
from prbot.github import GITHUB_RETRY, GitHub, GitHubError
from prbot.report_markdown import MARKER

TOKEN = "ghp_test_token_never_printed"
OWNER, REPO, PR = "acme", "gitops", 7
COMMENTS = f"/repos/{OWNER}/{REPO}/issues/{PR}/comments"
PULLS = f"/repos/{OWNER}/{REPO}/pulls"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class Fault:
    """Answer the next matching request with this instead (after applying it, if `apply`)."""

    method: str
    path: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    apply: bool = False


class FakeGitHub:
    """Issue comments of one pull request, paginated `page_size` per page."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self.comments: list[dict[str, Any]] = []
        self.pulls: list[dict[str, Any]] = []
        self.faults: list[Fault] = []
        self.login: str | None = "gitops-bot"
        self.page_size = 2
        self.next_id = 100
        self.url = ""
        self.foreign_link = False

    def add(self, login: str, body: str) -> int:
        self.next_id += 1
        self.comments.append(
            {
                "id": self.next_id,
                "user": {"login": login},
                "body": body,
                "html_url": f"https://github.example/{OWNER}/{REPO}/pull/{PR}#c{self.next_id}",
            }
        )
        return self.next_id

    def handle(self, req: Request) -> tuple[int, dict[str, str], Any]:
        if req.headers.get("authorization") != f"Bearer {TOKEN}":
            return 401, {}, {"message": "Bad credentials"}
        assert req.headers.get("accept") == "application/vnd.github+json"
        fault = next(
            (f for f in self.faults if f.method == req.method and req.path == f.path), None
        )
        if fault is not None:
            self.faults.remove(fault)
            if fault.apply:
                self.route(req)
            return fault.status, fault.headers, fault.body or {"message": "fault"}
        return self.route(req)

    def route(self, req: Request) -> tuple[int, dict[str, str], Any]:
        if (req.method, req.path) == ("GET", "/user"):
            if self.login is None:
                return 403, {}, {"message": "Resource not accessible by integration"}
            return 200, {}, {"login": self.login}
        if (req.method, req.path) == ("GET", COMMENTS):
            page = int(req.query.get("page", ["1"])[0])
            start = (page - 1) * self.page_size
            items = self.comments[start : start + self.page_size]
            headers = {}
            if start + self.page_size < len(self.comments):
                host = "http://elsewhere.invalid" if self.foreign_link else self.url
                nxt = f"{host}{COMMENTS}?per_page=100&page={page + 1}"
                headers["Link"] = f'<{nxt}>; rel="next", <{self.url}{COMMENTS}?page=1>; rel="first"'
            return 200, headers, items
        if (req.method, req.path) == ("POST", COMMENTS):
            assert set(req.body) == {"body"}
            cid = self.add(self.login or "github-actions[bot]", req.body["body"])
            return 201, {}, self.comments[-1] | {"id": cid}
        if req.path == PULLS or req.path.startswith(PULLS + "/"):
            return self.route_pulls(req)
        if req.method == "PATCH" and req.path.startswith(f"/repos/{OWNER}/{REPO}/issues/comments/"):
            cid = int(req.path.rsplit("/", 1)[1])
            assert set(req.body) == {"body"}
            for c in self.comments:
                if c["id"] == cid:
                    c["body"] = req.body["body"]
                    return 200, {}, c
            return 404, {}, {"message": "Not Found"}
        return 404, {}, {"message": "Not Found"}

    def route_pulls(self, req: Request) -> tuple[int, dict[str, str], Any]:
        """Pull requests as GitHub keeps them: one open pull request per head branch."""
        if (req.method, req.path) == ("GET", PULLS):
            head = req.query.get("head", [""])[0]
            state = req.query.get("state", ["open"])[0]
            return (
                200,
                {},
                [
                    p
                    for p in self.pulls
                    if f"{OWNER}:{p['head']['ref']}" == head and p["state"] == state
                ],
            )
        if (req.method, req.path) == ("POST", PULLS):
            assert set(req.body) == {"title", "head", "base", "body"}
            if any(
                p["head"]["ref"] == req.body["head"] and p["state"] == "open" for p in self.pulls
            ):
                return 422, {}, {"message": "A pull request already exists"}
            self.next_id += 1
            pull = {
                "number": self.next_id,
                "state": "open",
                "title": req.body["title"],
                "body": req.body["body"],
                "head": {"ref": req.body["head"]},
                "base": {"ref": req.body["base"]},
                "html_url": f"https://github.example/{OWNER}/{REPO}/pull/{self.next_id}",
            }
            self.pulls.append(pull)
            return 201, {}, pull
        if req.method == "PATCH":
            number = int(req.path.rsplit("/", 1)[1])
            assert set(req.body) <= {"title", "body"}
            for p in self.pulls:
                if p["number"] == number:
                    p.update(req.body)
                    return 200, {}, p
        return 404, {}, {"message": "Not Found"}


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            req = Request(
                self.command,
                url.path,
                parse_qs(url.query),
                {k.lower(): v for k, v in self.headers.items()},
                json.loads(raw) if raw else None,
            )
            fake.requests.append(req)
            status, headers, body = fake.handle(req)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def client(fake: FakeGitHub, sleeps: list[float], **kw: Any) -> GitHub:
    return GitHub(TOKEN, fake.url, sleep=sleeps.append, clock=lambda: 1_000.0, **kw)


def comment(
    fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: str, *extra: str
) -> tuple[int, str, str]:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    monkeypatch.setenv("GITHUB_API_URL", fake.url + "/")
    file = tmp_path / "body.md"
    file.write_text(body)
    out, err = io.StringIO(), io.StringIO()
    argv = ["comment", "--repo", f"{OWNER}/{REPO}", "--pr", str(PR), "--body", str(file), *extra]
    code = main(argv, Console(out, err))
    assert TOKEN not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


def calls(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests]


BODY = f"{MARKER}\n### gpu-gitops diff\n\nsomething changed\n"


def test_creates_the_comment(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    code, out, err = comment(github, monkeypatch, tmp_path, BODY)
    assert code == 0, err
    assert calls(github) == [("GET", "/user"), ("GET", COMMENTS), ("POST", COMMENTS)]
    post = github.requests[-1]
    assert post.body == {"body": BODY}
    assert post.headers["authorization"] == f"Bearer {TOKEN}"
    assert post.headers["x-github-api-version"] == "2022-11-28"
    assert github.requests[1].query["per_page"] == ["100"]
    assert out.strip() == github.comments[0]["html_url"]
    assert err.strip() == f"created comment 101 on {OWNER}/{REPO}#{PR}"


def test_updates_its_own_comment_in_place_across_pages(
    github: FakeGitHub, monkeypatch, tmp_path
) -> None:
    github.add("alice", "LGTM")
    github.add("alice", f"quoting the bot:\n{MARKER}")
    github.add("mallory", f"{MARKER}\nnot the bot's")  # marker, wrong author
    mine = github.add("gitops-bot", f"{MARKER}\nold diff")
    github.add("gitops-bot", "an unrelated bot comment")
    code, _, err = comment(github, monkeypatch, tmp_path, BODY)
    assert code == 0, err
    pages = [r.query.get("page", ["1"])[0] for r in github.requests if r.path == COMMENTS]
    assert pages == ["1", "2"]  # stopped at the page holding the comment
    assert calls(github)[-1] == ("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/{mine}")
    assert github.requests[-1].body == {"body": BODY}
    assert [c["body"] for c in github.comments if c["id"] == mine] == [BODY]
    assert len(github.comments) == 5
    # a second run updates the same comment again
    comment(github, monkeypatch, tmp_path, BODY.replace("something", "more"))
    assert len(github.comments) == 5 and "more changed" in github.comments[3]["body"]


def test_body_from_stdin_gets_the_marker(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("plain body\n"))
    code, _, err = comment(github, monkeypatch, tmp_path, "", "--body", "-")
    assert code == 0, err
    assert github.requests[-1].body == {"body": f"{MARKER}\nplain body\n"}


def test_actions_token_without_user_access(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    github.login = None
    bot = github.add("github-actions[bot]", f"{MARKER}\nold")
    code, _, err = comment(github, monkeypatch, tmp_path, BODY)
    assert code == 0, err
    assert calls(github)[-1] == ("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/{bot}")


def test_author_option_skips_user_lookup(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    app = github.add("my-app[bot]", f"{MARKER}\nold")
    code, _, _ = comment(github, monkeypatch, tmp_path, BODY, "--author", "my-app[bot]")
    assert code == 0
    assert calls(github) == [
        ("GET", COMMENTS),
        ("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/{app}"),
    ]


def test_missing_token(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    assert comment(github, monkeypatch, tmp_path, BODY)[0] == 0
    github.requests.clear()
    monkeypatch.delenv("GITHUB_TOKEN")
    out_, err_ = io.StringIO(), io.StringIO()
    argv = [
        "comment",
        "--repo",
        f"{OWNER}/{REPO}",
        "--pr",
        "7",
        "--body",
        str(tmp_path / "body.md"),
    ]
    assert main(argv, Console(out_, err_)) == 2
    (line,) = err_.getvalue().splitlines()
    assert line.startswith("gpu-gitops: error: GITHUB_TOKEN is not set")
    assert github.requests == []


def test_bad_token_is_reported_not_printed(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "wrong")
    monkeypatch.setenv("GITHUB_API_URL", github.url)
    (tmp_path / "b.md").write_text(BODY)
    err = io.StringIO()
    argv = ["comment", "--repo", f"{OWNER}/{REPO}", "--pr", "7", "--body", str(tmp_path / "b.md")]
    assert main(argv, Console(io.StringIO(), err)) == 2
    assert "HTTP 401 (Bad credentials)" in err.getvalue() and "GITHUB_TOKEN" in err.getvalue()
    assert "wrong" not in err.getvalue()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--repo", "acme"], '"acme" is not a GitHub repository'),
        (["--pr", "0"], "--pr 0 is not a pull request number"),
    ],
)
def test_bad_arguments(github, monkeypatch, tmp_path, argv: list[str], message: str) -> None:
    code, _, err = comment(github, monkeypatch, tmp_path, BODY, *argv)
    assert code == 2 and message in err and github.requests == []


def test_body_over_the_limit(github: FakeGitHub, monkeypatch, tmp_path) -> None:
    code, _, err = comment(github, monkeypatch, tmp_path, MARKER + "x" * 70_000)
    assert code == 2 and "over GitHub's 65536" in err and github.requests == []


def test_retries_on_502(github: FakeGitHub) -> None:
    github.faults = [Fault("GET", COMMENTS, 502), Fault("GET", COMMENTS, 503)]
    sleeps: list[float] = []
    with client(github, sleeps) as gh:
        posted = gh.upsert_comment(OWNER, REPO, PR, BODY, MARKER, "gitops-bot")
    assert posted.action == "created"
    assert sleeps == [1.0, 2.0]  # exponential backoff
    assert calls(github) == [("GET", COMMENTS)] * 3 + [("POST", COMMENTS)]


def test_failed_create_is_not_duplicated(github: FakeGitHub) -> None:
    # the POST is applied, but the answer is lost in a 502: list again, then update
    github.faults = [Fault("POST", COMMENTS, 502, apply=True)]
    sleeps: list[float] = []
    with client(github, sleeps) as gh:
        posted = gh.upsert_comment(OWNER, REPO, PR, BODY, MARKER, "gitops-bot")
    assert posted.action == "updated" and len(github.comments) == 1
    assert [m for m, _ in calls(github)] == ["GET", "POST", "GET", "PATCH"]


def test_secondary_rate_limit_retry_after(github: FakeGitHub) -> None:
    github.faults = [
        Fault("GET", COMMENTS, 403, {"Retry-After": "7"}, {"message": "secondary rate limit"}),
        Fault("POST", COMMENTS, 429, {"Retry-After": "3"}),
    ]
    sleeps: list[float] = []
    with client(github, sleeps) as gh:
        posted = gh.upsert_comment(OWNER, REPO, PR, BODY, MARKER, "gitops-bot")
    assert posted.action == "created" and len(github.comments) == 1
    assert sleeps == [7.0, 3.0]


def test_rate_limit_waits_for_reset(github: FakeGitHub) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1030"}
    github.faults = [Fault("GET", COMMENTS, 403, headers)]
    sleeps: list[float] = []
    with client(github, sleeps) as gh:
        assert list(gh.comments(OWNER, REPO, PR)) == []
    assert sleeps == [31.0]  # clock is 1000: until the reset, plus a second


def test_secondary_rate_limit_without_headers_waits_a_minute(github: FakeGitHub) -> None:
    github.faults = [
        Fault("GET", "/user", 403, {}, {"message": "You have exceeded a secondary rate limit"})
    ]
    sleeps: list[float] = []
    with client(github, sleeps) as gh:
        assert gh.token_login() == "gitops-bot"
    assert sleeps == [60.0]


def test_retries_are_bounded(github: FakeGitHub) -> None:
    github.faults = [Fault("GET", COMMENTS, 502) for _ in range(10)]
    sleeps: list[float] = []
    with (
        client(github, sleeps, retry=replace(GITHUB_RETRY, attempts=3)) as gh,
        pytest.raises(GitHubError) as exc,
    ):
        list(gh.comments(OWNER, REPO, PR))
    assert "failed 3 time(s), last: HTTP 502" in str(exc.value)
    assert sleeps == [1.0, 2.0] and len(github.requests) == 3


def test_reset_too_far_away_gives_up(github: FakeGitHub) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "5000"}
    github.faults = [Fault("GET", "/user", 403, headers)]
    with client(github, []) as gh, pytest.raises(GitHubError, match="resets in 4001 s"):
        gh.token_login()


def test_forbidden_is_not_retried(github: FakeGitHub) -> None:
    github.faults = [Fault("POST", COMMENTS, 403, {}, {"message": "Must have admin rights"})]
    sleeps: list[float] = []
    with client(github, sleeps) as gh, pytest.raises(GitHubError, match="pull-requests: write"):
        gh.upsert_comment(OWNER, REPO, PR, BODY, MARKER, "gitops-bot")
    assert sleeps == []


def test_pagination_link_to_another_host_is_refused(github: FakeGitHub) -> None:
    for i in range(3):
        github.add("alice", f"c{i}")
    github.foreign_link = True
    with client(github, []) as gh, pytest.raises(GitHubError, match="another host"):
        list(gh.comments(OWNER, REPO, PR))


def test_a_server_echoing_the_token_gets_it_masked(github: FakeGitHub, monkeypatch, tmp_path):
    echo = {"message": f"Bad credentials for Authorization: Bearer {TOKEN}"}
    github.faults.append(Fault("GET", "/user", 401, body=echo))
    code, _, err = comment(github, monkeypatch, tmp_path, "body\n")  # asserts TOKEN absent
    assert code == 2
    assert "Bearer [masked]" in err


def test_a_trickling_server_is_given_up_at_the_deadline() -> None:
    """Headers, then one byte at a time well inside any read timeout: the deadline ends it."""

    class Trickle(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                return

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        budget = Budget(1.5, max_wait=1.5, max_bytes=1 << 20)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with GitHub(TOKEN, url, budget=budget) as gh, pytest.raises(GitHubError) as exc:
            gh.request("GET", "/user")
        assert str(exc.value) == (
            "GET /user: the deadline of 1.5 s passed before it was read; try again later"
        )
    finally:
        server.shutdown()
        server.server_close()
