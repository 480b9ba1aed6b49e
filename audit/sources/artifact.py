"""The rendered tree as Flux has it: source-controller's artifact of the GitRepository (a tar.gz).

In the nightly CronJob there is no checkout and no git credential. source-controller serves the
artifact of the revision it fetched at `status.artifact.url` (plain HTTP inside the cluster) and
publishes its digest in `status.artifact.digest` (`sha256:<hex>`); the bytes are verified before
anything is read. The tarball is read in memory: regular files only, no absolute or `..` paths,
bounded in size: every byte inflated counts, whatever member type holds it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import tarfile
import zlib
from collections.abc import Mapping
from typing import IO, Any, cast
from urllib.parse import urlsplit

import httpx
from kubedata.budget import Budget, OverBudget, OverReadBudget
from kubedata.text import inert

from audit.errors import AuditError, IncompleteReadError

__all__ = [
    "ARTIFACT_HOSTS_ENV",
    "MAX_ARTIFACT_BYTES",
    "MAX_TOTAL_BYTES",
    "artifact_of",
    "check_artifact_url",
    "download_artifact",
    "read_tarball",
]

MAX_ARTIFACT_BYTES = 256 << 20
"""A rendered branch is kilobytes; a quarter of a GiB is a broken or hostile server."""
MAX_FILE_BYTES = 16 << 20
MAX_TOTAL_BYTES = 512 << 20
"""All files of the artifact after decompression: a few MB for a thousand clusters' GPU objects,
~1.8 KB per object of a cluster git declares whole (a tar header, the file, its padding), ~340 MB
for the 186,000 desired objects of benchmarks/bench_audit.py's 200,000-object cluster; a gzip
bomb (4 MB that expand to 4 GB) stops here."""
MAX_MEMBERS = 500_000
ARTIFACT_HOSTS_ENV = "GPU_GITOPS_ARTIFACT_HOSTS"
"""Comma-separated host[:port] the artifact may also come from (source-controller elsewhere)."""
FLUX_NAMESPACES = ("flux-system", "cozy-fluxcd")
"""Where Flux's source-controller runs (plain Flux, Cozystack), besides the GitRepository's own."""
_SERVICE = re.compile(r"source-controller\.([a-z0-9-]+)\.svc(?:\.cluster\.local)?\.?")


def check_artifact_url(url: str, namespace: str, name: str) -> None:
    """The artifact is read only from source-controller's Service (in the GitRepository's
    namespace or Flux's), at the GitRepository's own path, or from a host the user allows in
    GPU_GITOPS_ARTIFACT_HOSTS: a GitRepository status anyone could patch names no other server."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    where = f"{host}:{parts.port}" if parts.port else host
    allowed = {h.strip().lower() for h in os.environ.get(ARTIFACT_HOSTS_ENV, "").split(",")}
    service = _SERVICE.fullmatch(host)
    flux = service is not None and service.group(1) in {namespace, *FLUX_NAMESPACES}
    user = bool({host, where} & (allowed - {""}))  # a host without a port allows every port
    if parts.scheme not in ("http", "https") or not (flux or user):
        raise IncompleteReadError(
            f"artifact {inert(url)}: not source-controller's Service; the artifact is read only "
            f"from source-controller.<namespace>.svc or a host in {ARTIFACT_HOSTS_ENV}"
        )
    if not parts.path.startswith(f"/gitrepository/{namespace}/{name}/"):
        raise IncompleteReadError(
            f"artifact {inert(url)}: not the path of GitRepository {namespace}/{name}"
        )


def artifact_of(git_repository: Mapping[str, Any]) -> tuple[str, str, str]:
    """(url, digest, revision) of a GitRepository's current artifact."""
    meta = git_repository.get("metadata") or {}
    where = f"GitRepository {meta.get('namespace', '')}/{meta.get('name', '')}"
    artifact = (git_repository.get("status") or {}).get("artifact") or {}
    url, digest = str(artifact.get("url") or ""), str(artifact.get("digest") or "")
    if not url:
        raise IncompleteReadError(f"{where} has no artifact yet: is source-controller running?")
    if not digest.startswith("sha256:"):
        raise IncompleteReadError(f"{where}: artifact digest {digest!r} is not sha256")
    return url, digest, str(artifact.get("revision") or "")


def download_artifact(
    url: str,
    digest: str,
    client: httpx.Client | None = None,
    timeout: float = 60.0,
    budget: Budget | None = None,
) -> bytes:
    """The artifact's bytes, verified against its digest; IncompleteReadError otherwise. With a
    budget, its deadline bounds the download (checked per chunk: a trickling server cannot hold
    it) and its bytes count."""
    own = client is None
    http = client or httpx.Client(timeout=timeout, trust_env=False)
    try:
        limit = budget.timeout(timeout) if budget else timeout
        with http.stream("GET", url, timeout=limit) as response:
            if response.status_code != 200:
                raise IncompleteReadError(
                    f"artifact {url}: HTTP {response.status_code}; is source-controller reachable "
                    "from this pod (network policy)?"
                )
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_ARTIFACT_BYTES:
                    raise IncompleteReadError(f"artifact {url} is over {MAX_ARTIFACT_BYTES} bytes")
                if budget:
                    budget.take(len(chunk))
                    budget.check()
                chunks.append(chunk)
    except OverReadBudget:
        raise  # final for the audit, as for its API reads (KubeApi.fetch)
    except OverBudget as exc:
        raise IncompleteReadError(f"artifact {url}: {exc}") from None
    except httpx.HTTPError as exc:
        raise IncompleteReadError(
            f"artifact {url}: {type(exc).__name__}; is source-controller reachable?"
        ) from None
    finally:
        if own:
            http.close()
    data = b"".join(chunks)
    got = "sha256:" + hashlib.sha256(data).hexdigest()
    if got != digest:
        raise IncompleteReadError(
            f"artifact {url}: digest {got} does not match {digest}; rerun (it may have changed)"
        )
    return data


class _Inflated:
    """The decompressed tar stream, read once, forward only, and never past MAX_TOTAL_BYTES:
    headers, the data of every member (whatever its type; tarfile inflates what it skips) and
    padding all count."""

    def __init__(self, data: bytes):
        self._gzip = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb")
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        want = MAX_TOTAL_BYTES + 1 - self.read_bytes
        chunk = self._gzip.read(want if size < 0 else min(size, want))
        self.read_bytes += len(chunk)
        if self.read_bytes > MAX_TOTAL_BYTES:
            raise AuditError(
                f"the artifact inflates to over {MAX_TOTAL_BYTES} bytes (every tar member "
                "counted); a rendered branch is at most a few hundred MB"
            )
        return chunk


def read_tarball(data: bytes) -> dict[str, bytes]:
    """Regular files of a tar.gz, path -> bytes (unsafe or oversized members refused)."""
    files: dict[str, bytes] = {}
    total = 0
    try:
        # stream mode: members are read in order and skipped by reading, through the cap
        inflated = cast("IO[bytes]", _Inflated(data))  # all tarfile reads of its fileobj
        with tarfile.open(fileobj=inflated, mode="r|") as tar:
            for n, member in enumerate(tar):
                if n >= MAX_MEMBERS:
                    raise AuditError(f"the artifact holds over {MAX_MEMBERS} entries")
                name = member.name.removeprefix("./")
                total += member.size  # every type: an unknown one is inflated all the same
                if total > MAX_TOTAL_BYTES:
                    raise AuditError(
                        f"the artifact's members add up to over {MAX_TOTAL_BYTES} bytes "
                        f"uncompressed (at {inert(name)!r}); a rendered branch is at most a "
                        "few hundred MB"
                    )
                if not member.isfile():
                    continue
                if name.startswith("/") or ".." in name.split("/"):
                    raise AuditError(f"artifact member {member.name!r} escapes the tree")
                if member.size > MAX_FILE_BYTES:
                    raise AuditError(f"artifact member {name} is over {MAX_FILE_BYTES} bytes")
                stream = tar.extractfile(member)
                if stream is not None:
                    files[name] = stream.read()
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise IncompleteReadError(f"the artifact is not a readable tar.gz ({exc})") from None
    return files
