"""Cluster coordinates and credentials: kubeconfig files (merged as kubectl does) or in-cluster.

Where they come from, as kubectl decides: an explicit `--kubeconfig` file; else every file named in
`KUBECONFIG` (missing ones skipped); else `~/.kube/config`; else, inside a pod, the service account.
Merging several files: the first file to set a cluster, user or context name wins and its entry is
taken whole; `current-context` comes from the first file that sets it. Relative paths are relative
to the file that holds them. File contents (certificates, keys) are read here, tokens in files are
read per request by `kube_auth`, so a rotated token is picked up.

Secrets (tokens, keys, passwords) are kept out of `repr()` and out of every error message.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubedata.errors import YamlError
from kubedata.files import NotRegularFile, TooLarge, read_regular
from kubedata.yaml_io import documents

from audit.errors import KubeConfigError

__all__ = [
    "EXEC_API_VERSIONS",
    "IN_CLUSTER_DIR",
    "IN_CLUSTER_DIR_ENV",
    "ClusterConfig",
    "ExecConfig",
    "Kubeconfig",
    "config_from_kubeconfig",
    "kubeconfig_paths",
    "load_cluster_config",
    "load_in_cluster_config",
    "merge_kubeconfigs",
]

IN_CLUSTER_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
IN_CLUSTER_DIR_ENV = "GPU_GITOPS_SERVICEACCOUNT_DIR"
"""Overrides IN_CLUSTER_DIR: where the kubelet mounted token, ca.crt and namespace (tests, or a
projected token volume mounted elsewhere)."""
EXEC_API_VERSIONS = ("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")
KUBECONFIG_MAX = 16 << 20
"""Kubeconfigs with hundreds of contexts are a few hundred KB."""


@dataclass(frozen=True)
class ExecConfig:
    """An exec credential plugin (`users[].user.exec`)."""

    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    api_version: str = EXEC_API_VERSIONS[0]
    interactive_mode: str = "IfAvailable"
    provide_cluster_info: bool = False
    install_hint: str = ""


@dataclass(frozen=True)
class ClusterConfig:
    """Everything needed to open an authenticated connection to one API server."""

    server: str
    source: str = ""
    """Where this came from, for messages: `kubeconfig /path (context ams1)` or `in-cluster`."""
    context: str = ""
    namespace: str = "default"
    ca_pem: bytes | None = field(default=None, repr=False)
    insecure_skip_tls_verify: bool = False
    tls_server_name: str = ""
    proxy_url: str = ""
    token: str = field(default="", repr=False)
    token_file: Path | None = None
    client_cert_pem: bytes | None = field(default=None, repr=False)
    client_key_pem: bytes | None = field(default=None, repr=False)
    username: str = ""
    password: str = field(default="", repr=False)
    exec: ExecConfig | None = None
    warnings: tuple[str, ...] = ()
    """Things the user should hear about (insecure TLS); the CLI prints them."""


@dataclass(frozen=True)
class Kubeconfig:
    """Merged kubeconfig maps, each entry with relative paths already resolved."""

    clusters: Mapping[str, Mapping[str, Any]]
    users: Mapping[str, Mapping[str, Any]]
    contexts: Mapping[str, Mapping[str, Any]]
    current_context: str
    files: tuple[Path, ...]


def kubeconfig_paths(
    kubeconfig: str | Path | None, env: Mapping[str, str], home: Path
) -> list[Path]:
    """The files to merge, in kubectl's order; an explicit file must exist, the others may not."""
    if kubeconfig:
        path = Path(kubeconfig)
        if not path.is_file():
            what = "is not a regular file" if path.exists() else "does not exist"
            raise KubeConfigError(f"kubeconfig {path} {what}: check the --kubeconfig path")
        return [path]
    if env.get("KUBECONFIG"):
        seen: list[Path] = []
        for part in env["KUBECONFIG"].split(os.pathsep):
            if part and Path(part) not in seen and Path(part).is_file():
                seen.append(Path(part))
        return seen
    default = home / ".kube" / "config"
    return [default] if default.is_file() else []


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = read_regular(path, KUBECONFIG_MAX)
        docs = list(documents(data.decode("utf-8", "replace"), str(path), guarded=True))
    except (NotRegularFile, TooLarge):
        raise KubeConfigError(
            f"kubeconfig {path} is not a regular file of at most {KUBECONFIG_MAX} bytes"
        ) from None
    except OSError as exc:
        raise KubeConfigError(f"kubeconfig {path} cannot be read: {exc.strerror}") from None
    except YamlError as exc:
        # Only the position and the parser's complaint: the offending line may hold a token.
        raise KubeConfigError(f"kubeconfig {exc}; fix or remove the file") from None
    if len(docs) > 1:
        raise KubeConfigError(
            f"kubeconfig {path}:{docs[1][0]}: a second YAML document; keep one per file"
        )
    doc = docs[0][1] if docs else None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise KubeConfigError(f"kubeconfig {path} is not a mapping: is it a kubeconfig file?")
    return doc


def _resolve(body: dict[str, Any], keys: tuple[str, ...], base: Path) -> None:
    for key in keys:
        if isinstance(body.get(key), str) and body[key] and not Path(body[key]).is_absolute():
            body[key] = str(base / body[key])


def _named(doc: Mapping[str, Any], section: str, inner: str, path: Path) -> dict[str, Any]:
    out: dict[str, dict[str, Any]] = {}
    for entry in doc.get(section) or ():
        if not isinstance(entry, dict) or not entry.get("name"):
            raise KubeConfigError(f"kubeconfig {path}: an entry of {section} has no name")
        body = dict(entry.get(inner) or {})
        _resolve(
            body,
            ("certificate-authority", "client-certificate", "client-key", "tokenFile"),
            path.parent,
        )
        if isinstance(body.get("exec"), dict) and "/" in str(body["exec"].get("command", "")):
            # kubectl resolves an exec command only when it is a path, not a name on PATH.
            body["exec"] = dict(body["exec"])
            _resolve(body["exec"], ("command",), path.parent)
        out.setdefault(str(entry["name"]), body)
    return out


def merge_kubeconfigs(paths: list[Path]) -> Kubeconfig:
    """Merge files as kubectl does: the first file to set a name or current-context wins."""
    clusters: dict[str, dict[str, Any]] = {}
    users: dict[str, dict[str, Any]] = {}
    contexts: dict[str, dict[str, Any]] = {}
    current = ""
    for path in paths:
        doc = _read_yaml(path)
        for target, section, inner in (
            (clusters, "clusters", "cluster"),
            (users, "users", "user"),
            (contexts, "contexts", "context"),
        ):
            for name, body in _named(doc, section, inner, path).items():
                target.setdefault(name, body)
        current = current or str(doc.get("current-context") or "")
    return Kubeconfig(clusters, users, contexts, current, tuple(paths))


def _inline_or_file(entry: Mapping[str, Any], key: str, what: str) -> bytes | None:
    data, path = entry.get(f"{key}-data"), entry.get(key)
    if data:
        try:
            return base64.b64decode(str(data), validate=True)
        except binascii.Error:
            raise KubeConfigError(f"{what} {key}-data is not valid base64: re-encode it") from None
    if path:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise KubeConfigError(f"{what} {key} {path} cannot be read: {exc.strerror}") from None
    return None


def _exec_config(raw: Mapping[str, Any], what: str) -> ExecConfig:
    api_version = str(raw.get("apiVersion") or "")
    if api_version not in EXEC_API_VERSIONS:
        raise KubeConfigError(
            f"{what} exec apiVersion {api_version!r} is not supported: "
            f"use one of {', '.join(EXEC_API_VERSIONS)}"
        )
    if not raw.get("command"):
        raise KubeConfigError(f"{what} exec has no command: set users[].user.exec.command")
    mode = str(raw.get("interactiveMode") or "IfAvailable")
    if mode not in ("Never", "IfAvailable", "Always"):
        raise KubeConfigError(
            f"{what} exec interactiveMode {mode!r}: use Never, IfAvailable or Always"
        )
    env = tuple((str(e["name"]), str(e.get("value", ""))) for e in raw.get("env") or ())
    return ExecConfig(
        command=str(raw["command"]),
        args=tuple(str(a) for a in raw.get("args") or ()),
        env=env,
        api_version=api_version,
        interactive_mode=mode,
        provide_cluster_info=bool(raw.get("provideClusterInfo")),
        install_hint=str(raw.get("installHint") or ""),
    )


def config_from_kubeconfig(merged: Kubeconfig, context: str | None = None) -> ClusterConfig:
    """The ClusterConfig of one context (default: current-context) of a merged kubeconfig."""
    files = ", ".join(str(p) for p in merged.files)
    name = context or merged.current_context
    if not name:
        raise KubeConfigError(f"kubeconfig {files} sets no current-context: pass --context")
    if name not in merged.contexts:
        known = ", ".join(sorted(merged.contexts)) or "none"
        raise KubeConfigError(
            f"context {name!r} not found in kubeconfig {files} (contexts: {known})"
        )
    ctx = merged.contexts[name]
    cluster_name, user_name = str(ctx.get("cluster") or ""), str(ctx.get("user") or "")
    if cluster_name not in merged.clusters:
        raise KubeConfigError(f"context {name!r} names cluster {cluster_name!r}, not in {files}")
    if user_name and user_name not in merged.users:
        raise KubeConfigError(f"context {name!r} names user {user_name!r}, not in {files}")
    cluster, user = merged.clusters[cluster_name], merged.users.get(user_name, {})
    cwhat, uwhat = f"cluster {cluster_name!r}", f"user {user_name!r}"
    if not cluster.get("server"):
        raise KubeConfigError(f"{cwhat} has no server URL: set clusters[].cluster.server")
    if user.get("auth-provider"):
        raise KubeConfigError(
            f"{uwhat} uses auth-provider, which kubectl no longer supports: use an exec plugin"
        )
    if user.get("token") and (user.get("username") or user.get("password")):
        raise KubeConfigError(f"{uwhat} sets both a token and basic auth: keep only one")
    insecure = bool(cluster.get("insecure-skip-tls-verify"))
    ca_pem = _inline_or_file(cluster, "certificate-authority", cwhat)
    if insecure and ca_pem:
        # client-go refuses this combination rather than guessing which one was meant.
        raise KubeConfigError(
            f"{cwhat} sets insecure-skip-tls-verify and a certificate authority: remove one"
        )
    cert = _inline_or_file(user, "client-certificate", uwhat)
    key = _inline_or_file(user, "client-key", uwhat)
    if bool(cert) != bool(key):
        raise KubeConfigError(f"{uwhat} has a client certificate without its key (or the reverse)")
    warnings: tuple[str, ...] = ()
    if insecure:
        warnings = (
            f"{cwhat}: insecure-skip-tls-verify is set, the server's identity is not checked",
        )
    server = str(cluster["server"])
    credential = next(
        (what for key, what in _SECRETS if user.get(key)),
        "",
    )
    if server.lower().startswith("http://") and credential:
        # kubectl sends it all the same; a proxy (proxy-url, HTTPS_PROXY) or anyone on the path
        # reads it in clear
        via = " (through a proxy)" if cluster.get("proxy-url") else ""
        warnings += (
            f"{cwhat}: the server is plain http://{via}: the {credential} is sent unencrypted; "
            "use https://",
        )
    token_file = user.get("tokenFile")
    return ClusterConfig(
        server=str(cluster["server"]).rstrip("/"),
        source=f"kubeconfig {files} (context {name})",
        context=name,
        namespace=str(ctx.get("namespace") or "default"),
        ca_pem=ca_pem,
        insecure_skip_tls_verify=insecure,
        tls_server_name=str(cluster.get("tls-server-name") or ""),
        proxy_url=str(cluster.get("proxy-url") or ""),
        token=str(user.get("token") or ""),
        # kubectl: a token in the kubeconfig wins over tokenFile.
        token_file=Path(token_file) if token_file and not user.get("token") else None,
        client_cert_pem=cert,
        client_key_pem=key,
        username=str(user.get("username") or ""),
        password=str(user.get("password") or ""),
        exec=_exec_config(user["exec"], uwhat) if user.get("exec") else None,
        warnings=warnings,
    )


_SECRETS = (
    ("token", "bearer token"),
    ("tokenFile", "bearer token"),
    ("exec", "exec plugin's token"),
    ("password", "password"),
)


def load_in_cluster_config(
    env: Mapping[str, str] | None = None, root: Path | None = None
) -> ClusterConfig:
    """The pod's service account: API address from the environment, token re-read as it rotates;
    its files in `root`, else $GPU_GITOPS_SERVICEACCOUNT_DIR, else the kubelet's mount point."""
    env = os.environ if env is None else env
    root = root or Path(env.get(IN_CLUSTER_DIR_ENV) or IN_CLUSTER_DIR)
    host, port = env.get("KUBERNETES_SERVICE_HOST"), env.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise KubeConfigError(
            "not running in a pod (KUBERNETES_SERVICE_HOST/PORT unset): pass --kubeconfig"
        )
    token = root / "token"
    if not token.is_file():
        raise KubeConfigError(
            f"service account token {token} is missing: mount one (automountServiceAccountToken)"
        )
    try:
        ca_pem = (root / "ca.crt").read_bytes()
    except OSError as exc:
        raise KubeConfigError(f"service account CA {root / 'ca.crt'}: {exc.strerror}") from None
    ns_file = root / "namespace"
    namespace = ns_file.read_text().strip() if ns_file.is_file() else "default"
    host = f"[{host}]" if ":" in host else host
    return ClusterConfig(
        server=f"https://{host}:{port}",
        source="in-cluster service account",
        namespace=namespace or "default",
        ca_pem=ca_pem,
        token_file=token,
    )


def load_cluster_config(
    kubeconfig: str | Path | None = None,
    context: str | None = None,
    *,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    in_cluster_dir: Path | None = None,
) -> ClusterConfig:
    """Kubeconfig (explicit, KUBECONFIG, ~/.kube/config), else the in-cluster service account."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    paths = kubeconfig_paths(kubeconfig, env, home)
    if paths:
        return config_from_kubeconfig(merge_kubeconfigs(paths), context)
    if env.get("KUBERNETES_SERVICE_HOST") and not context:
        return load_in_cluster_config(env, in_cluster_dir)
    where = env.get("KUBECONFIG") or str(home / ".kube" / "config")
    raise KubeConfigError(
        f"no kubeconfig found (looked at {where}): pass --kubeconfig or set KUBECONFIG"
    )
