"""Fault knobs: make the next N matching requests fail the way networks and servers fail.

Kinds:
- status: answer with an error Status of the given code (and Retry-After, if given);
- delay: sleep first, then answer normally (exceed the client's read timeout with it);
- truncate: answer normally but close the connection halfway through the body, so the body is
  shorter than its Content-Length;
- malformed: a complete HTTP response whose JSON body is cut in half (a proxy that mangles);
- reset: no answer; the TCP connection is reset.

A fault applies to requests whose "METHOD /path?query" contains `match` ("" matches all).
Faults are taken first-added first; each is used `count` times.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["Fault", "Faults"]


@dataclass
class Fault:
    kind: str
    count: int = 1
    status: int = 503
    retry_after: str | None = None
    seconds: float = 0.0
    match: str = ""
    used: int = 0


class Faults:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        if fault.kind not in ("status", "delay", "truncate", "malformed", "reset"):
            raise ValueError(f"unknown fault kind {fault.kind!r}")
        with self._lock:
            self._queue.append(fault)
        return fault

    def status(
        self, code: int, count: int = 1, *, retry_after: float | str | None = None, match: str = ""
    ) -> Fault:
        after = None if retry_after is None else str(retry_after)
        return self.add(Fault("status", count, status=code, retry_after=after, match=match))

    def delay(self, seconds: float, count: int = 1, *, match: str = "") -> Fault:
        return self.add(Fault("delay", count, seconds=seconds, match=match))

    def truncate(self, count: int = 1, *, match: str = "") -> Fault:
        return self.add(Fault("truncate", count, match=match))

    def malformed(self, count: int = 1, *, match: str = "") -> Fault:
        return self.add(Fault("malformed", count, match=match))

    def reset(self, count: int = 1, *, match: str = "") -> Fault:
        return self.add(Fault("reset", count, match=match))

    def take(self, target: str) -> Fault | None:
        """The fault to inject into this request, if any (and count it as used)."""
        with self._lock:
            for fault in self._queue:
                if fault.used < fault.count and fault.match in target:
                    fault.used += 1
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._queue.clear()
