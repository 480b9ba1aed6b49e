"""The fleet view and `diff --live-findings` at fleet size, each beside the script a careful
engineer writes instead (one PromQL query per cluster), side by side in one run.

    python -m benchmarks.bench_fleet [--clusters 1000] [--findings 100] [--changed 10]

A Prometheus stand-in in a process of its own holds the series the nightly audits push
(audit/metrics.py: the state series, the counts by type, severity and revert, one series per
finding) for N clusters x M findings and answers /api/v1/query for the selectors both sides
send, every answer computed once before the timed runs (as a real Prometheus answers from its
index, the server's cost is not what is compared). Each side is a process of its own, timed from
its start (interpreter and imports included) to its exit, its peak RSS (VmHWM) sampled:

- fleet: `gpu-gitops fleet -o json` (three queries) against the baseline: list the clusters,
  then one query per cluster for all its series, keeping the findings at or above medium;
- diff: `gpu-gitops diff --live-findings URL -o json` on a repository of N clusters where
  `--changed` changed, against `gpu-gitops diff -o json` followed by one query per changed
  cluster for its findings (what a CI step would script around the diff).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.bench_diff import changed_repo
from benchmarks.rss import wait_peak_rss_mib

__all__ = ["main"]

NOW = 1_764_650_000.0
SEVERITIES = ("high", "medium", "low", "info")
JOB = "gpu-gitops-audit"
_MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"')
_WRAPPER = re.compile(r"^(sum|group) by \(([\w, ]+)\) \((.*)\)$")


def _series(clusters: int, findings: int) -> list[tuple[dict[str, str], float]]:
    """What the audits of `clusters` clusters pushed, M findings each (1 in 10 incomplete: its
    findings are those of its last complete audit; 1 in 7 last complete 50 h ago)."""
    out: list[tuple[dict[str, str], float]] = []
    for c in range(clusters):
        name = f"c{c:04d}"
        base = {"job": JOB, "instance": "", "cluster": name}
        for metric, value in (
            ("gpu_gitops_audit_complete", 1.0 if c % 10 else 0.0),
            ("gpu_gitops_audit_timestamp_seconds", NOW - 3600),
            ("gpu_gitops_audit_last_success_timestamp_seconds", NOW - 3600 * (1 if c % 7 else 50)),
            ("gpu_gitops_audit_findings_omitted", 0.0),
            ("gpu_gitops_audit_problems", 0.0 if c % 10 else 1.0),
        ):
            out.append(({"__name__": metric, **base}, value))
        counts: dict[tuple[str, str, str], int] = {}
        for i in range(findings):
            labels = {
                "__name__": "gpu_gitops_audit_finding", **base, "id": f"{c:04d}{i:08x}",
                "severity": SEVERITIES[i % 4], "type": ("modified", "added")[i % 2],
                "revert": ("never", "next-upgrade")[i % 3 == 0], "kind": "Deployment",
                "namespace": "gpu-operator", "name": f"app-{i}", "path": "/spec/replicas",
                "manager": "kubectl-edit",
            }  # fmt: skip
            out.append((labels, NOW - 86400))
            key = (labels["type"], labels["severity"], labels["revert"])
            counts[key] = counts.get(key, 0) + 1
        for (ftype, severity, revert), n in sorted(counts.items()):
            labels = {"__name__": "gpu_gitops_audit_findings", **base, "type": ftype}
            out.append(({**labels, "severity": severity, "revert": revert}, float(n)))
    return out


def _literal(text: str) -> str:
    """A PromQL string literal's value (Go escapes: \\\\ and \\")."""
    return re.sub(r"\\(.)", r"\1", text)


def _matches(labels: dict[str, str], matchers: list[tuple[str, str, str]]) -> bool:
    for name, op, value in matchers:
        got = labels.get(name, "")
        ok = {
            "=": got == value,
            "!=": got != value,
            "=~": re.fullmatch(value, got) is not None,
            "!~": re.fullmatch(value, got) is None,
        }[op]
        if not ok:
            return False
    return True


class _Store:
    """The series, indexed by cluster, and the PromQL subset both sides send: `metric{...}`,
    `{...}`, `sum by (...) (...)`, `group by (...) (...)`."""

    def __init__(self, series: list[tuple[dict[str, str], float]]):
        self.by_cluster: dict[str, list[tuple[dict[str, str], float]]] = {}
        for labels, value in series:
            self.by_cluster.setdefault(labels["cluster"], []).append((labels, value))

    def select(self, selector: str) -> list[tuple[dict[str, str], float]]:
        name, _, rest = selector.partition("{")
        matchers = [(n, op, _literal(v)) for n, op, v in _MATCHER.findall(rest)]
        if name.strip():
            matchers.append(("__name__", "=", name.strip()))
        on_cluster = [m for m in matchers if m[0] == "cluster"]
        clusters = [c for c in self.by_cluster if _matches({"cluster": c}, on_cluster)]
        return [s for c in clusters for s in self.by_cluster[c] if _matches(s[0], matchers)]

    def answer(self, query: str) -> bytes:
        wrapped = _WRAPPER.match(query)
        rows = self.select(wrapped.group(3) if wrapped else query)
        if wrapped:
            by = [b.strip() for b in wrapped.group(2).split(",")]
            groups: dict[tuple[str, ...], float] = {}
            for labels, value in rows:
                key = tuple(labels.get(b, "") for b in by)
                groups[key] = (groups.get(key, 0.0) + value) if wrapped.group(1) == "sum" else 1.0
            rows = [(dict(zip(by, k, strict=True)), v) for k, v in sorted(groups.items())]
        result = [{"metric": m, "value": [NOW, repr(v)]} for m, v in rows]
        body = {"status": "success", "data": {"resultType": "vector", "result": result}}
        return json.dumps(body).encode()


def _serve(clusters: int, findings: int) -> None:
    """The Prometheus stand-in (`--serve`): prints its port, serves until stdin closes."""
    store = _Store(_series(clusters, findings))
    answers: dict[str, bytes] = {}
    stats = {"requests": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            if url.path == "/stats":  # the queries since the last /stats
                with lock:
                    body, stats["requests"] = json.dumps(stats).encode(), 0
            else:
                query = urllib.parse.parse_qs(url.query)["query"][0]
                with lock:
                    stats["requests"] += 1
                    if query not in answers:
                        answers[query] = store.answer(query)
                    body = answers[query]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        print(server.server_address[1], flush=True)
        sys.stdin.read()
        server.shutdown()


def _query(client: Any, url: str, promql: str) -> list[dict[str, Any]]:
    r = client.get(f"{url}/api/v1/query", params={"query": promql, "time": NOW})
    r.raise_for_status()
    result: list[dict[str, Any]] = r.json()["data"]["result"]
    return result


def _baseline_fleet(url: str) -> None:
    """The careful script: the clusters, then one query per cluster for all its series; prints
    (compact JSON, C encoder) each cluster's state and its findings at or above medium."""
    import httpx

    report: dict[str, Any] = {}
    with httpx.Client(timeout=60) as client:
        for c in _query(client, url, "group by (cluster) (gpu_gitops_audit_complete)"):
            name = c["metric"]["cluster"]
            rows = _query(
                client, url, f'{{__name__=~"gpu_gitops_audit_.+",job="{JOB}",cluster="{name}"}}'
            )
            state = {r["metric"]["__name__"]: float(r["value"][1]) for r in rows}
            findings = [
                {**r["metric"], "changed": float(r["value"][1])}
                for r in rows
                if r["metric"]["__name__"] == "gpu_gitops_audit_finding"
                and r["metric"].get("severity") in ("high", "medium")
            ]
            report[name] = {"state": state, "findings": findings}
    json.dump(report, sys.stdout)


def _baseline_findings(url: str, clusters: list[str]) -> None:
    """After the diff: one query per changed cluster for its findings."""
    import httpx

    with httpx.Client(timeout=60) as client:
        found = sum(
            len(_query(client, url, f'gpu_gitops_audit_finding{{job="{JOB}",cluster="{c}"}}'))
            for c in clusters
        )
    print(found)


class _Side:
    """One measured side: each round runs its processes one after the other; the median round's
    wall time, the peak RSS of all, and the queries the stand-in answered per round."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.rounds: list[float] = []
        self.peak = 0.0
        self.queries = 0
        self.out: list[str] = []

    @property
    def seconds(self) -> float:
        return statistics.median(self.rounds)

    def round(self, *argvs: list[str], ok: tuple[int, ...] = (0,)) -> None:
        self.out = []
        start = time.perf_counter()
        for argv in argvs:
            self._run(argv, ok)
        self.rounds.append(time.perf_counter() - start)
        self.queries = _requests(self.url)

    def _run(self, argv: list[str], ok: tuple[int, ...]) -> None:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            child = subprocess.Popen(
                argv, stdout=out, stderr=err, env=os.environ | {"NO_COLOR": "1"}
            )
            self.peak = max(self.peak, wait_peak_rss_mib(child))
            out.seek(0)
            err.seek(0)
            if child.returncode not in ok:
                raise SystemExit(f"{argv[:3]}: exit {child.returncode}: {err.read().decode()}")
            self.out.append(out.read().decode())


def _cli() -> list[str]:
    cli = Path(sys.executable).with_name("gpu-gitops")
    return [str(cli)] if cli.exists() else [sys.executable, "-m", "gpu_gitops.cli"]


def _me(*args: str) -> list[str]:
    return [sys.executable, "-m", "benchmarks.bench_fleet", *args]


def _requests(url: str) -> int:
    import httpx

    count: int = httpx.get(f"{url}/stats", timeout=10).json()["requests"]
    return count


def _fleet(url: str, rounds: int) -> tuple[_Side, _Side]:
    """Ours and the baseline, alternating round by round (load on a shared machine hits both)."""
    ours, base = _Side(url), _Side(url)
    fleet = [*_cli(), "fleet", "--prometheus", url, "--at", str(NOW), "-o", "json"]
    for _ in range(rounds):
        ours.round(fleet, ok=(1,))
        base.round(_me("--baseline-fleet", url))
    return ours, base


def _diff(url: str, repo: Path, changed: list[str], rounds: int) -> tuple[_Side, _Side]:
    ours, base = _Side(url), _Side(url)
    diff = [*_cli(), "diff", "--repo", str(repo), "--base", "base", "-o", "json"]
    for _ in range(rounds):
        ours.round([*diff, "--live-findings", url], ok=(1,))
        base.round(diff, _me("--baseline-findings", url, *changed), ok=(0, 1))
    return ours, base


def _line(what: str, ours: _Side, base: _Side, how: str) -> str:
    return (
        f"{what}: {ours.seconds:.2f} s (median of {len(ours.rounds)}), "
        f"peak RSS {ours.peak:.0f} MiB, {ours.queries} queries | "
        f"baseline {how}: {base.seconds:.2f} s (median), peak RSS {base.peak:.0f} MiB, "
        f"{base.queries} queries | ratio {base.seconds / ours.seconds:.2f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--findings", type=int, default=100)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds per side")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-fleet", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--baseline-findings", nargs="+", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        _serve(args.clusters, args.findings)
        return 0
    if args.baseline_fleet:
        _baseline_fleet(args.baseline_fleet)
        return 0
    if args.baseline_findings:
        _baseline_findings(args.baseline_findings[0], args.baseline_findings[1:])
        return 0
    size = f"{args.clusters} clusters x {args.findings} findings"
    server = subprocess.Popen(
        _me("--serve", "--clusters", str(args.clusters), "--findings", str(args.findings)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    with server, tempfile.TemporaryDirectory() as tmp:
        url = f"http://127.0.0.1:{server.stdout.readline().strip()}"
        repo = Path(tmp)
        changed = changed_repo(repo, args.clusters, args.changed)
        # every answer computed once, untimed
        _fleet(url, 1)
        _diff(url, repo, changed, 1)
        ours, base = _fleet(url, args.rounds)
        listed = len([f for c in json.loads(ours.out[0])["clusters"] for f in c["findings"]])
        theirs = sum(len(c["findings"]) for c in json.loads(base.out[0]).values())
        if listed != theirs:
            raise SystemExit(f"fleet lists {listed} findings, the baseline {theirs}")
        print(_line(f"fleet, {size} ({listed} listed)", ours, base, "one query per cluster"))
        ours, base = _diff(url, repo, changed, args.rounds)
        live = json.loads(ours.out[0])["liveDrift"]
        if live["unaudited"] or int(base.out[1]) != args.findings * len(changed):
            raise SystemExit(f"diff --live-findings: {live['unaudited']} unaudited, {base.out}")
        what = f"diff --live-findings, {args.clusters}-cluster repo, {len(changed)} changed"
        print(_line(what, ours, base, "diff, then one query per changed cluster"))
        server.stdin.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
