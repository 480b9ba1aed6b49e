"""Normalize and diff pairs in a second process, while this one reads the next pages.

Why this exists: the audit of a large cluster is bound by one core: the lists are decoded, and
every pair whose raw values differ (most Deployments and Services: the server's defaults) is
normalized on both sides and diffed, which is most of the work and needs nothing but the pair.
So a worker process (`python -m audit.compare.worker`, started early enough that its start-up
overlaps the first list) does that on the second core, one batch at a time: the audit hands over
a batch and, before the next, takes the results of the one before, so at most one is in flight
and neither side can block the other on a full pipe. Results are those of the same calls made
here (pairs.normalized_changes); only the time differs.

Frames on the pipes are a 4-byte big-endian length, then a pickle: the worker is this program,
started by this process, and reads nothing else.
"""

from __future__ import annotations

import contextlib
import pickle
import select
import struct
import subprocess
import sys
from typing import IO, Any

from kubedata.diff import Change
from kubedata.objects import KubeObject

from audit.compare.crd import Schema
from audit.compare.known_types import SERVER_METADATA
from audit.compare.pairs import normalized_changes
from audit.errors import AuditError

__all__ = ["PairWorker"]

Result = tuple[int, list[Change]]

_LENGTH = struct.Struct(">I")
_SERVER_METADATA = frozenset(SERVER_METADATA)


def _stripped(live: KubeObject) -> KubeObject:
    """What normalize reads of a live object: without status and server-set metadata, which
    it drops anyway (managedFields alone are often most of an object's bytes)."""
    out = {k: v for k, v in live.items() if k != "status"}
    meta = out.get("metadata")
    if isinstance(meta, dict):
        out["metadata"] = {k: v for k, v in meta.items() if k not in _SERVER_METADATA}
    return out


def _write(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _read(stream: IO[bytes]) -> Any:
    """The next message; EOFError when the other side has gone."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        raise EOFError
    size = _LENGTH.unpack(head)[0]
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class PairWorker:
    """The worker process: `send` a batch of pairs, and get the results of the batch before."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "audit.compare.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        self._sent: set[int] = set()
        """Ids of the schemas the worker holds (each is sent once)."""
        self._in_flight = False

    def send(self, pairs: list[tuple[int, bytes, KubeObject, Schema | None]]) -> list[Result]:
        """Hand `pairs` (index, desired pickled, live, schema) over; the results of the batch
        sent before, if any, in its order."""
        done = self.collect()
        schemas = {id(s): s for _, _, _, s in pairs if s is not None and id(s) not in self._sent}
        self._sent.update(schemas)
        batch = [
            (i, blob, _stripped(live), None if s is None else id(s)) for i, blob, live, s in pairs
        ]
        assert self._proc.stdin is not None
        try:
            _write(self._proc.stdin, (schemas, batch))
        except BrokenPipeError:
            raise self._gone() from None
        self._in_flight = True
        return done

    @property
    def busy(self) -> bool:
        """Whether the batch in flight is still being worked on (its results not yet sent)."""
        assert self._proc.stdout is not None
        if not self._in_flight:
            return False
        return not select.select([self._proc.stdout], [], [], 0)[0]

    def collect(self) -> list[Result]:
        """The results of the batch in flight (none when there is none)."""
        if not self._in_flight:
            return []
        self._in_flight = False
        assert self._proc.stdout is not None
        try:
            status, payload = _read(self._proc.stdout)
        except EOFError:
            raise self._gone() from None
        if status == "error":
            raise payload  # the exception the same call raises here
        results: list[Result] = payload
        return results

    def close(self) -> None:
        """End the worker (it exits when its input ends)."""
        if self._proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()

    def _gone(self) -> AuditError:
        code = self._proc.wait()
        return AuditError(
            f"the audit's compare worker stopped (exit code {code}): out of memory? Give the "
            "audit more memory, or rerun"
        )


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> None:
    schemas: dict[int, Schema] = {}
    while True:
        try:
            new, batch = _read(stdin)
        except EOFError:
            return
        schemas.update(new)
        try:
            results = []
            for index, blob, live, schema_id in batch:
                schema = None if schema_id is None else schemas[schema_id]
                changes = normalized_changes(pickle.loads(blob), live, None, schema)
                results.append((index, changes))
            reply: tuple[str, Any] = ("ok", results)
        except Exception as exc:  # handed back, raised there as it would be here
            reply = ("error", exc)
        try:
            _write(stdout, reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _write(stdout, ("error", RuntimeError(f"{reply[1]!r} ({exc})")))


if __name__ == "__main__":
    protocol = sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed can break the frames
    _serve(sys.stdin.buffer, protocol)
