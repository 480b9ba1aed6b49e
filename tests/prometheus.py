"""A real Prometheus (Debian's prometheus) on a free loopback port, scraping a Pushgateway every
second with `honor_labels: true` (the scrape the README documents).

    with Prometheus(pgw.url, tmp_path) as prom:
        prom.url, prom.query("up"), prom.wait_scraped()

Tests use the `prometheus` fixture (tests/conftest.py), which skips, saying so, only when the
binary is not installed (`apt-get install prometheus`; .ci/run installs it).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from tests.pushgateway import _free_port

__all__ = ["BINARY", "Prometheus"]

BINARY = shutil.which("prometheus")
SCRAPE_INTERVAL = "1s"
_CONFIG = """\
global:
  scrape_interval: {interval}
  evaluation_interval: {interval}
scrape_configs:
  - job_name: pushgateway
    honor_labels: true
    static_configs:
      - targets: ["{target}"]
"""


class Prometheus:
    def __init__(self, pushgateway_url: str, workdir: Path) -> None:
        assert BINARY, "prometheus is not installed"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir
        target = pushgateway_url.removeprefix("http://").rstrip("/")
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "prometheus.yml").write_text(
            _CONFIG.format(interval=SCRAPE_INTERVAL, target=target), encoding="utf-8"
        )
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Prometheus:
        assert BINARY
        self._process = subprocess.Popen(
            [
                BINARY,
                f"--config.file={self.workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(400):
            try:
                if httpx.get(f"{self.url}/-/ready", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if self._process.poll() is not None:
                break
            time.sleep(0.05)
        self.__exit__()
        raise RuntimeError(f"{BINARY} did not start on port {self.port}")

    def __exit__(self, *exc: Any) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=20)
            self._process = None

    def query(self, promql: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": promql} | ({"time": str(at)} if at is not None else {})
        body = httpx.get(f"{self.url}/api/v1/query", params=params, timeout=10).json()
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    def wait_for(self, promql: str, value: float, tries: int = 300) -> float:
        """Wait until `promql` evaluates to one sample of `value` (a scrape has picked up the
        latest push); the query time of that answer, for queries that must see the same data."""
        for _ in range(tries):
            now = time.time()
            got = self.query(promql, now)
            if len(got) == 1 and float(got[0]["value"][1]) == value:
                return now
            time.sleep(0.1)
        raise AssertionError(f"{promql} never became {value}: {self.query(promql)}")
