"""A Kubernetes API server for tests: HTTPS on 127.0.0.1, read-only, faithful where clients look.

Serves `/version`, discovery (`/api`, `/apis`, `/apis/{g}`, `/api/v1`, `/apis/{g}/{v}`), and GET of
objects and collections (namespaced, across namespaces, cluster-scoped) with `limit`/`continue`,
`labelSelector` and `fieldSelector`. Authentication: client certificates signed by its CA (CN =
user, O = groups) or bearer tokens; anonymous requests get 401. Authorization: service accounts
(`system:serviceaccount:<ns>:<name>`) get exactly what the RBAC objects in the store grant them
(rbac.py; a 403 Status otherwise, logged in `forbidden`); every other authenticated user may read
everything except what `deny()` forbids. `serve_artifact()` plays Flux's source-controller: it
serves a tar.gz over plain HTTP and sets the GitRepository's `status.artifact`. Aggregated
discovery is not served: answering plain JSON makes clients (kubectl) fall back to the legacy
documents. `/openapi/*` is a 404.

    with ApiServer(store) as server:
        server.url, server.ca.cert_pem, server.add_token("t0k3n", "alice")
"""

from __future__ import annotations

import base64
import json
import ssl
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

from tests.apiserver import responses
from tests.apiserver.artifacts import ArtifactServer, artifact_status, tarball
from tests.apiserver.faults import Faults
from tests.apiserver.pki import CertificateAuthority, KeyPair
from tests.apiserver.rbac import SERVICE_ACCOUNT_PREFIX, Attributes, allowed
from tests.apiserver.resources import Resource, api_versions, group_doc, group_list, resource_list
from tests.apiserver.selectors import KIND_FIELDS, SelectorError, field_matcher, label_matcher
from tests.apiserver.store import Expired, InvalidContinue, Store
from tests.apiserver.wire import Answer, HTTPServer, RequestRecord, User

__all__ = ["VERSION", "ApiServer"]

VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac5b2e9a7b",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:03:37Z",
    "goVersion": "go1.23.8",
    "compiler": "gc",
    "platform": "linux/amd64",
}


class ApiServer:
    """Start with `start()` or `with`; `stop()` shuts it down."""

    def __init__(self, store: Store | None = None, *, allow_anonymous: bool = False) -> None:
        self.store = store or Store()
        self.ca = CertificateAuthority()
        self.faults = Faults()
        self.tokens: dict[str, User] = {}
        self.denied: set[tuple[str, str, str, str]] = set()
        self.requests: list[RequestRecord] = []
        self.sent: list[int] = []
        """The body size of every answer, in bytes."""
        self.allow_anonymous = allow_anonymous
        self.forbidden: list[str] = []
        """Every 403: the Status message (the request it refused)."""
        self.artifacts: ArtifactServer | None = None
        self._rbac: tuple[int, list[dict[str, Any]]] = (-1, [])
        self._http: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> ApiServer:
        pair = self.ca.issue_server()
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        _load_pair(ctx, pair)
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(cadata=self.ca.cert_pem.decode())
        self._http = HTTPServer(("127.0.0.1", 0), self, ctx)
        self._thread = threading.Thread(
            target=self._http.serve_forever,
            name="test-apiserver",
            kwargs={"poll_interval": 0.05},
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.artifacts is not None:
            self.artifacts.stop()
            self.artifacts = None
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._http is not None, "start the server first"
        host, port = self._http.server_address[:2]
        return f"https://{host!s}:{port}"

    # -- identities -------------------------------------------------------------------------

    def add_token(self, token: str, user: str, groups: tuple[str, ...] = ()) -> None:
        self.tokens[token] = User(user, groups)

    def client_cert(self, user: str, groups: tuple[str, ...] = ()) -> KeyPair:
        return self.ca.issue_client(user, groups)

    def deny(self, user: str, verb: str, plural: str, group: str = "") -> None:
        """Forbid `user` to `verb` (get, list) `plural` of `group` (403)."""
        self.denied.add((user, verb, group, plural))

    def service_account(self, token: str, namespace: str, name: str) -> None:
        """A service-account token: its requests are authorized by the stored RBAC objects."""
        self.add_token(token, f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")

    def serve_artifact(self, namespace: str, name: str, sha: str, files: dict[str, bytes]) -> str:
        """Pack `files` as source-controller's artifact of GitRepository namespace/name at
        commit `sha`, serve it and publish it in the stored object's status.artifact; the URL."""
        if self.artifacts is None:
            self.artifacts = ArtifactServer()
        data = tarball(files)
        url = self.artifacts.publish(namespace, name, sha, data)
        resource = self.store.resource("source.toolkit.fluxcd.io", "gitrepositories")
        stored = self.store.get(resource, namespace, name) if resource else None
        if stored is None:
            raise ValueError(f"GitRepository {namespace}/{name} is not stored")
        obj = json.loads(stored.encode(stored.obj["apiVersion"].rpartition("/")[2]))
        branch = ((obj.get("spec") or {}).get("ref") or {}).get("branch") or "main"
        status = obj.setdefault("status", {})
        status["artifact"] = artifact_status(
            url, f"{branch}@sha1:{sha}", data, obj["metadata"]["creationTimestamp"]
        )
        self.store.put(obj)
        return url

    def kubeconfig(
        self,
        path: Path,
        *,
        token: str | None = None,
        cert: KeyPair | None = None,
        context: str = "test",
    ) -> Path:
        """Write a kubeconfig for this server (CA inline) with a token or a client certificate."""

        def b64(data: bytes) -> str:
            return base64.b64encode(data).decode()

        user: dict[str, Any] = {}
        if token:
            user["token"] = token
        if cert:
            user["client-certificate-data"] = b64(cert.cert_pem)
            user["client-key-data"] = b64(cert.key_pem)
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": context,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": b64(self.ca.cert_pem),
                    },
                }
            ],
            "users": [{"name": context, "user": user}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    # -- request handling (called from the handler threads) ---------------------------------

    def authenticate(self, peer: Any, authorization: str) -> User | None:
        subject = dict(rdn[0] for rdn in (peer or {}).get("subject", ()))
        if subject.get("commonName"):
            groups = tuple(
                value for rdn in peer["subject"] for key, value in rdn if key == "organizationName"
            )
            return User(subject["commonName"], groups)
        if authorization.startswith("Bearer "):
            return self.tokens.get(authorization[7:].strip())
        return (
            User("system:anonymous", ("system:unauthenticated",)) if self.allow_anonymous else None
        )

    def answer(self, method: str, raw_path: str, user: User, accept: str) -> Answer:
        url = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        parts = [p for p in url.path.split("/") if p]
        if method != "GET":
            return Answer(405, responses.status_body(405))
        if url.path in ("/healthz", "/livez", "/readyz"):
            return Answer(200, b"ok", content_type="text/plain")
        if url.path == "/version":
            return Answer(200, json.dumps(VERSION).encode())
        if not parts or parts[0] not in ("api", "apis"):
            return Answer(404, b"404 page not found\n", content_type="text/plain")
        resources = self.store.resources()
        if parts == ["api"]:
            return Answer(200, json.dumps(api_versions(self.url.split("//")[1])).encode())
        if parts == ["apis"]:
            return Answer(200, json.dumps(group_list(resources)).encode())
        if parts[0] == "apis" and len(parts) == 2:
            doc = group_doc(resources, parts[1])
            return _json_or_404(doc)
        group, version, rest = (
            ("", parts[1], parts[2:]) if parts[0] == "api" else (parts[1], parts[2], parts[3:])
        )
        if not rest:
            return _json_or_404(resource_list(resources, group, version))
        namespace = ""
        if (
            rest[0] == "namespaces"
            and len(rest) >= 3
            and not (group == "" and rest[2] in ("status", "finalize"))
        ):
            namespace, rest = rest[1], rest[2:]
        plural, name = rest[0], (rest[1] if len(rest) > 1 else "")
        if len(rest) > 3 or (len(rest) == 3 and rest[2] != "status"):
            return Answer(404, responses.status_body(404, details={}))
        resource = self.store.resource(group, plural)
        if (
            resource is None
            or version not in resource.versions
            or (namespace and not resource.namespaced)
        ):
            return Answer(404, responses.status_body(404, details={}))
        if name and resource.namespaced and not namespace:
            return Answer(404, responses.status_body(404, details={}))  # only lists span namespaces
        verb = "get" if name else "list"
        if (user.name, verb, group, plural) in self.denied or not self._authorized(
            user, Attributes(verb, group, plural, namespace, name)
        ):
            body = responses.forbidden(resource, user.name, verb, namespace, name)
            self.forbidden.append(json.loads(body)["message"])
            return Answer(403, body)
        table = "as=Table" in accept
        if name:
            return self._get(resource, version, namespace, name, table)
        return self._list(resource, version, namespace, query, table)

    def _authorized(self, user: User, want: Attributes) -> bool:
        if not user.name.startswith(SERVICE_ACCOUNT_PREFIX):
            return True
        revision, objects = self._rbac
        if revision != self.store.revision:  # re-read the RBAC objects only after a write
            objects = [
                obj
                for plural in ("roles", "rolebindings", "clusterroles", "clusterrolebindings")
                for obj in self.store.objects_of("rbac.authorization.k8s.io", plural)
            ]
            self._rbac = (self.store.revision, objects)
        return allowed(objects, user.name, user.groups, want)

    def _get(
        self, resource: Resource, version: str, namespace: str, name: str, table: bool
    ) -> Answer:
        stored = self.store.get(resource, namespace if resource.namespaced else "", name)
        if stored is None:
            return Answer(404, responses.not_found(resource, name))
        if table:
            return Answer(200, responses.table_body([stored], None, time.time()))
        return Answer(200, stored.encode(version))

    def _list(
        self, resource: Resource, version: str, namespace: str, query: dict[str, str], table: bool
    ) -> Answer:
        try:
            limit = int(query.get("limit") or 0)
            label = label_matcher(query["labelSelector"]) if query.get("labelSelector") else None
            fields = (
                field_matcher(
                    query["fieldSelector"], KIND_FIELDS.get((resource.group, resource.plural))
                )
                if query.get("fieldSelector")
                else None
            )
        except (ValueError, SelectorError) as exc:
            return Answer(400, responses.status_body(400, str(exc)))
        match = None
        if label or fields:
            match = lambda obj: (label is None or label(obj)) and (fields is None or fields(obj))  # noqa: E731
        try:
            page = self.store.list_page(
                resource, namespace, match, limit, query.get("continue", "")
            )
        except Expired as exc:
            # as etcd3's handleCompactedErrorForPaging: a fresh token that continues the list at
            # the latest resourceVersion (inconsistent), in the Status's metadata.continue
            fresh = {"continue": exc.fresh_token}
            return Answer(
                410, responses.status_body(410, responses.EXPIRED_MESSAGE, "Expired", meta=fresh)
            )
        except InvalidContinue as exc:
            return Answer(400, responses.status_body(400, str(exc)))
        if table:
            return Answer(200, responses.table_body(page.items, page, time.time()))
        return Answer(200, responses.list_body(resource, version, page))


def _json_or_404(doc: dict[str, Any] | None) -> Answer:
    if doc is None:
        return Answer(404, responses.status_body(404, details={}))
    return Answer(200, json.dumps(doc).encode())


def _load_pair(ctx: ssl.SSLContext, pair: KeyPair) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert.write_bytes(pair.cert_pem)
        key.write_bytes(pair.key_pem)
        ctx.load_cert_chain(cert, key)
