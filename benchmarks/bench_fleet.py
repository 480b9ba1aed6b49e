"""`fleet` at fleet size: N clusters x M findings served by a Prometheus-compatible HTTP API on
loopback (precomputed answers of /api/v1/query), our three queries against the baseline a
careful engineer scripts (list the clusters, then one PromQL query per cluster), in one run:
wall time and Python's peak allocation (tracemalloc) of each, side by side.

    python -m benchmarks.bench_fleet [--clusters 1000] [--findings 100]
"""

from __future__ import annotations

import argparse
import json
import threading
import time
import tracemalloc
import urllib.parse
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from audit.fleet.model import counts_query, findings_query, state_query
from audit.fleet.prometheus import Prometheus, fleet_budget
from gpu_gitops.cli_fleet import read_fleet

SEVERITIES = ("high", "medium", "low", "info")
NOW = 1_764_650_000.0


def _series(clusters: int, findings: int) -> dict[str, list[dict[str, Any]]]:
    """The series a fleet pushes, by kind: state, counts (by cluster and severity), findings."""
    state: list[dict[str, Any]] = []
    counts: list[dict[str, Any]] = []
    listed: list[dict[str, Any]] = []
    job = {"job": "gpu-gitops-audit", "instance": ""}
    for c in range(clusters):
        name = f"c{c:04d}"
        for metric, value in (
            ("gpu_gitops_audit_complete", 1.0 if c % 10 else 0.0),
            ("gpu_gitops_audit_timestamp_seconds", NOW - 3600),
            (
                "gpu_gitops_audit_last_success_timestamp_seconds",
                NOW - (3600 if c % 7 else 50 * 3600),
            ),
            ("gpu_gitops_audit_findings_omitted", 0.0),
            ("gpu_gitops_audit_problems", 0.0 if c % 10 else 1.0),
        ):
            state.append(
                {"metric": {"__name__": metric, "cluster": name, **job}, "value": [NOW, str(value)]}
            )
        per = dict.fromkeys(SEVERITIES, 0)
        for i in range(findings):
            sev = SEVERITIES[i % 4]
            per[sev] += 1
            labels = {
                "__name__": "gpu_gitops_audit_finding", "cluster": name, "id": f"{c:04d}{i:06d}",
                "severity": sev, "type": "modified", "revert": "never", "kind": "Deployment",
                "namespace": "gpu-operator", "name": f"app-{i}", "path": "/spec/replicas",
                "manager": "kubectl-edit", **job,
            }  # fmt: skip
            listed.append({"metric": labels, "value": [NOW, str(NOW - 86400)]})
        for sev, n in per.items():
            counts.append({"metric": {"cluster": name, "severity": sev}, "value": [NOW, str(n)]})
    return {"state": state, "counts": counts, "findings": listed}


def _answer(result: list[dict[str, Any]]) -> bytes:
    body = {"status": "success", "data": {"resultType": "vector", "result": result}}
    return json.dumps(body).encode()


def _server(series: dict[str, list[dict[str, Any]]]) -> tuple[ThreadingHTTPServer, dict[str, int]]:
    by_cluster: dict[str, list[dict[str, Any]]] = {}
    for kind in ("state", "findings"):
        for s in series[kind]:
            by_cluster.setdefault(s["metric"]["cluster"], []).append(s)
    answers = {
        state_query(): _answer(series["state"]),
        counts_query(): _answer(series["counts"]),
        findings_query("medium"): _answer(
            [s for s in series["findings"] if s["metric"]["severity"] in ("high", "medium")]
        ),
        "group by (cluster) (gpu_gitops_audit_complete)": _answer(
            [{"metric": {"cluster": c}, "value": [NOW, "1"]} for c in sorted(by_cluster)]
        ),
    }
    per_cluster = {c: _answer(v) for c, v in by_cluster.items()}
    stats = {"requests": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            stats["requests"] += 1
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)["query"][0]
            body = answers.get(query)
            if body is None:  # the baseline's {cluster="NAME"} selector
                body = per_cluster[query.split('cluster="')[1].split('"')[0]]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, stats


def _ours(url: str) -> int:
    with Prometheus(url, fleet_budget(600)) as prometheus:
        fleet = read_fleet(prometheus, NOW, "medium", [])
    return len(fleet.findings())


def _baseline(url: str) -> int:
    """List the clusters, then one query per cluster for all its series; findings at or above
    medium, as a careful engineer's script collects them."""
    found = 0
    with httpx.Client(timeout=60) as client:

        def query(q: str) -> list[dict[str, Any]]:
            r = client.get(f"{url}/api/v1/query", params={"query": q, "time": NOW})
            r.raise_for_status()
            result: list[dict[str, Any]] = r.json()["data"]["result"]
            return result

        for c in query("group by (cluster) (gpu_gitops_audit_complete)"):
            name = c["metric"]["cluster"]
            rows = query(
                f'{{__name__=~"gpu_gitops_audit_.+",job="gpu-gitops-audit",cluster="{name}"}}'
            )
            found += sum(
                r["metric"]["__name__"] == "gpu_gitops_audit_finding"
                and r["metric"].get("severity") in ("high", "medium")
                for r in rows
            )
    return found


def _measure(run: Callable[[str], int], url: str) -> tuple[float, float, int]:
    tracemalloc.start()
    start = time.perf_counter()
    n = run(url)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clusters", type=int, default=1000)
    parser.add_argument("--findings", type=int, default=100)
    args = parser.parse_args(argv)
    server, stats = _server(_series(args.clusters, args.findings))
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        size = f"{args.clusters} clusters x {args.findings} findings"
        stats["requests"] = 0
        ours = _measure(_ours, url)
        ours_requests = stats["requests"]
        stats["requests"] = 0
        base = _measure(_baseline, url)
        assert ours[2] == base[2], (ours[2], base[2])
        print(
            f"fleet, {size} ({ours[2]} listed): {ours[0]:.2f} s, peak {ours[1]:.0f} MB, "
            f"{ours_requests} queries | baseline one query per cluster: {base[0]:.2f} s, "
            f"peak {base[1]:.0f} MB, {stats['requests']} queries | ratio {base[0] / ours[0]:.1f}x"
        )
    finally:
        server.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
