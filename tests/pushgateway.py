"""A real Prometheus Pushgateway (Debian's prometheus-pushgateway) on a free loopback port.

    with Pushgateway() as pgw:
        pgw.url, pgw.samples()

Tests that need it use the `pushgateway` fixture (tests/conftest.py), which skips, saying so, only
when the binary is not installed (`apt-get install prometheus-pushgateway`; .ci/run installs it).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["BINARY", "Pushgateway", "Sample"]

BINARY = shutil.which("prometheus-pushgateway") or shutil.which("pushgateway")
Sample = tuple[str, tuple[tuple[str, str], ...]]
"""(metric name, sorted labels)"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Pushgateway:
    def __init__(self) -> None:
        assert BINARY, "prometheus-pushgateway is not installed"
        self.binary = BINARY
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Pushgateway:
        self._process = subprocess.Popen(
            [
                self.binary,
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--persistence.file=",  # in memory: never the system's /var/lib/prometheus
                "--log.level=error",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(200):
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
            self._process.wait(timeout=10)
            self._process = None

    def samples(self) -> dict[Sample, float]:
        """Every gpu_gitops_* sample the Pushgateway exposes to Prometheus."""
        text = httpx.get(f"{self.url}/metrics").text
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            if family.name.startswith("gpu_gitops_")
            for s in family.samples
        }
