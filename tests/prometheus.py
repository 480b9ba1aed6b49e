"""A real Prometheus server (Debian's prometheus) on a free loopback port, scraping a Pushgateway
and evaluating rule files, read through its HTTP API.

    with Prometheus(folder, pushgateway_url, rule_files) as prom:
        prom.query("gpu_gitops_audit_complete"), prom.alerts()

It scrapes the Pushgateway twice, as two jobs: `pushgateway` with `honor_labels: true` (the
scrape the README asks for) and `pushgateway-plain` without it (what a standard scrape does), at a
one-second interval, and evaluates the rules every second. Tests that need it use the
`prometheus_binary` fixture (tests/conftest.py), which skips, naming the package, where the binary
is not installed.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
import yaml

__all__ = ["BINARY", "Prometheus", "wait_for"]

BINARY = shutil.which("prometheus")
T = TypeVar("T")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, probe: Callable[[], T | None], timeout: float = 60.0) -> T:
    """Poll `probe` until it returns something other than None (readiness, not a timed
    assertion: the timeout only bounds a hang)."""
    end = time.monotonic() + timeout
    while True:
        got = probe()
        if got is not None:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s")
        time.sleep(0.2)


class Prometheus:
    def __init__(self, folder: Path, pushgateway: str, rule_files: list[Path]) -> None:
        assert BINARY, "prometheus is not installed"
        self.folder = folder
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        target = pushgateway.removeprefix("http://")
        scrape = {"scrape_interval": "1s", "static_configs": [{"targets": [target]}]}
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(p) for p in rule_files],
            "scrape_configs": [
                {"job_name": "pushgateway", "honor_labels": True, **scrape},
                {"job_name": "pushgateway-plain", **scrape},
            ],
        }
        self.config = folder / "prometheus.yml"
        self.config.write_text(yaml.safe_dump(config))
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def __enter__(self) -> Prometheus:
        self._log = (self.folder / "prometheus.log").open("wb")
        self._process = subprocess.Popen(
            [
                BINARY or "prometheus",
                f"--config.file={self.config}",
                f"--storage.tsdb.path={self.folder / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self._log,
        )

        def ready() -> bool | None:
            if self._process is not None and self._process.poll() is not None:
                log = (self.folder / "prometheus.log").read_text()
                raise RuntimeError(f"{BINARY} exited: {log[-2000:]}")
            try:
                return httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200 or None
            except httpx.TransportError:
                return None

        try:
            wait_for("Prometheus to be ready", ready)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def _api(self, path: str, **params: str) -> Any:
        answer = httpx.get(f"{self.url}/api/v1/{path}", params=params, timeout=10).json()
        assert answer["status"] == "success", answer
        return answer["data"]

    def query(self, expr: str) -> dict[tuple[tuple[str, str], ...], float]:
        """An instant query: (sorted labels without __name__) -> value."""
        return {
            tuple(sorted((k, v) for k, v in r["metric"].items() if k != "__name__")): float(
                r["value"][1]
            )
            for r in self._api("query", query=expr)["result"]
        }

    def alerts(self) -> list[dict[str, Any]]:
        """Active alerts (pending and firing), each with its labels, state and annotations."""
        alerts: list[dict[str, Any]] = self._api("alerts")["alerts"]
        return alerts

    def firing(self) -> set[tuple[str, str]]:
        """(alertname, reason label or "") of every firing alert."""
        return {
            (a["labels"]["alertname"], a["labels"].get("reason", ""))
            for a in self.alerts()
            if a["state"] == "firing"
        }
