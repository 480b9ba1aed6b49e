"""kubeconfig loading (checked against kubectl where kubectl can say), credentials, in-cluster."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from audit.errors import KubeConfigError
from audit.kube.api import KubeApi
from audit.kube.auth import ExecAuth, TokenFileAuth, build_auth, build_ssl_context
from audit.kube.kubeconfig import (
    ClusterConfig,
    ExecConfig,
    kubeconfig_paths,
    load_cluster_config,
    load_in_cluster_config,
    merge_kubeconfigs,
)
from tests.apiserver import ApiServer, CertificateAuthority
from tests.audit.conftest import TOKEN

KUBECTL = shutil.which("kubectl")
CA_PEM = b"-----BEGIN CERTIFICATE-----\nnot-really\n-----END CERTIFICATE-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write(path: Path, doc: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


def kubeconfig(
    clusters: dict[str, dict[str, Any]],
    users: dict[str, dict[str, Any]],
    contexts: dict[str, dict[str, Any]],
    current: str = "",
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": k, "cluster": v} for k, v in clusters.items()],
        "users": [{"name": k, "user": v} for k, v in users.items()],
        "contexts": [{"name": k, "context": v} for k, v in contexts.items()],
    }
    if current:
        doc["current-context"] = current
    return doc


def request_via(auth: httpx.Auth, statuses: list[int] | None = None) -> list[str]:
    """Send one request through `auth`; returns the Authorization headers the server saw."""
    seen: list[str] = []
    answers = list(statuses or [200])

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("Authorization", ""))
        return httpx.Response(answers.pop(0) if answers else 200, json={})

    with httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client:
        client.get("https://k8s.example/api")
    return seen


# -- merging -------------------------------------------------------------------------------------


@pytest.fixture
def two_files(tmp_path: Path) -> list[Path]:
    first = write(
        tmp_path / "a" / "config",
        kubeconfig(
            clusters={"prod": {"server": "https://prod-a:6443", "certificate-authority": "ca.crt"}},
            users={"alice": {"token": "token-a"}},
            contexts={"ctx-a": {"cluster": "prod", "user": "alice", "namespace": "team-a"}},
            current="ctx-a",
        ),
    )
    (tmp_path / "a" / "ca.crt").write_bytes(CA_PEM)
    second = write(
        tmp_path / "b" / "config",
        kubeconfig(
            clusters={
                "prod": {"server": "https://prod-b:6443"},
                "dev": {"server": "https://dev:6443"},
            },
            users={"alice": {"token": "token-b"}, "bob": {"tokenFile": "bob.token"}},
            contexts={
                "ctx-a": {"cluster": "dev", "user": "bob"},
                "ctx-b": {"cluster": "dev", "user": "bob"},
            },
            current="ctx-b",
        ),
    )
    (tmp_path / "b" / "bob.token").write_text("bob-token\n")
    return [first, second]


def test_first_file_to_set_a_name_or_current_context_wins(two_files: list[Path]) -> None:
    merged = merge_kubeconfigs(two_files)
    assert merged.current_context == "ctx-a"
    assert merged.clusters["prod"]["server"] == "https://prod-a:6443"
    assert merged.users["alice"]["token"] == "token-a"
    assert merged.contexts["ctx-a"]["cluster"] == "prod"
    assert set(merged.clusters) == {"prod", "dev"} and set(merged.contexts) == {"ctx-a", "ctx-b"}


@pytest.mark.skipif(KUBECTL is None, reason="kubectl not installed: cannot compare with it")
def test_merge_matches_kubectl(two_files: list[Path], tmp_path: Path) -> None:
    env = {
        "KUBECONFIG": os.pathsep.join(map(str, two_files)),
        "HOME": str(tmp_path),
        "PATH": os.environ.get("PATH", ""),
    }
    out = subprocess.run(
        [str(KUBECTL), "config", "view", "--flatten", "-o", "json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    view = json.loads(out)
    merged = merge_kubeconfigs(two_files)
    assert view["current-context"] == merged.current_context
    assert {c["name"]: c["cluster"]["server"] for c in view["clusters"]} == {
        n: c["server"] for n, c in merged.clusters.items()
    }
    assert {u["name"]: u["user"] for u in view["users"]}["alice"]["token"] == merged.users["alice"][
        "token"
    ]
    assert {c["name"]: c["context"] for c in view["contexts"]} == {
        n: {k: v for k, v in c.items()} for n, c in merged.contexts.items()
    }
    # --flatten inlines the CA: kubectl found ca.crt next to the file that names it, as we do.
    ca = next(
        c["cluster"]["certificate-authority-data"] for c in view["clusters"] if c["name"] == "prod"
    )
    assert base64.b64decode(ca) == CA_PEM
    assert merged.clusters["prod"]["certificate-authority"] == str(two_files[0].parent / "ca.crt")


def test_kubeconfig_env_order_missing_files_and_context_override(
    two_files: list[Path], tmp_path: Path
) -> None:
    env = {"KUBECONFIG": os.pathsep.join([str(tmp_path / "missing"), "", *map(str, two_files)])}
    assert kubeconfig_paths(None, env, tmp_path) == two_files
    config = load_cluster_config(env=env, home=tmp_path)
    assert (config.server, config.context, config.namespace, config.token) == (
        "https://prod-a:6443",
        "ctx-a",
        "team-a",
        "token-a",
    )
    assert config.ca_pem == CA_PEM
    other = load_cluster_config(context="ctx-b", env=env, home=tmp_path)
    assert other.server == "https://dev:6443" and other.namespace == "default"
    assert other.token_file == two_files[1].parent / "bob.token"  # relative to its own file


def test_explicit_kubeconfig_beats_the_environment(two_files: list[Path], tmp_path: Path) -> None:
    config = load_cluster_config(two_files[1], env={"KUBECONFIG": str(two_files[0])}, home=tmp_path)
    assert config.context == "ctx-b"
    with pytest.raises(KubeConfigError, match="does not exist: check the --kubeconfig path"):
        load_cluster_config(tmp_path / "nope", env={}, home=tmp_path)


def test_unknown_context_lists_the_known_ones(two_files: list[Path]) -> None:
    with pytest.raises(
        KubeConfigError, match=r"context 'nope' not found .*\(contexts: ctx-a, ctx-b\)"
    ):
        load_cluster_config(None, "nope", env={"KUBECONFIG": os.pathsep.join(map(str, two_files))})


def test_no_kubeconfig_and_not_in_a_pod(tmp_path: Path) -> None:
    with pytest.raises(
        KubeConfigError, match=r"no kubeconfig found .*pass --kubeconfig or set KUBECONFIG"
    ):
        load_cluster_config(env={}, home=tmp_path)


# -- credentials in the file ---------------------------------------------------------------------


def test_inline_data_and_files_give_the_same_bytes(tmp_path: Path) -> None:
    (tmp_path / "c.crt").write_bytes(b"CERT")
    (tmp_path / "c.key").write_bytes(b"KEY")
    inline = write(
        tmp_path / "inline",
        kubeconfig(
            {"c": {"server": "https://x", "certificate-authority-data": b64(CA_PEM)}},
            {"u": {"client-certificate-data": b64(b"CERT"), "client-key-data": b64(b"KEY")}},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    files = write(
        tmp_path / "files",
        kubeconfig(
            {"c": {"server": "https://x", "certificate-authority": "ca.pem"}},
            {"u": {"client-certificate": "c.crt", "client-key": str(tmp_path / "c.key")}},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    (tmp_path / "ca.pem").write_bytes(CA_PEM)
    a, b = load_cluster_config(inline), load_cluster_config(files)
    assert (a.ca_pem, a.client_cert_pem, a.client_key_pem) == (CA_PEM, b"CERT", b"KEY")
    assert (b.ca_pem, b.client_cert_pem, b.client_key_pem) == (CA_PEM, b"CERT", b"KEY")


def test_errors_and_repr_never_show_secrets(tmp_path: Path) -> None:
    secret_key = "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCnRvcC1zZWNyZXQ"
    bad = write(
        tmp_path / "bad",
        kubeconfig(
            {"c": {"server": "https://x"}},
            {
                "u": {
                    "token": "tok-very-secret",
                    "client-certificate-data": b64(b"CERT"),
                    "client-key-data": secret_key + "!!",
                }
            },
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    with pytest.raises(KubeConfigError) as caught:
        load_cluster_config(bad)
    assert "client-key-data is not valid base64" in str(caught.value)
    assert secret_key not in str(caught.value) and "tok-very-secret" not in str(caught.value)
    broken = tmp_path / "broken"
    broken.write_text("users:\n- name: u\n  user:\n    token: tok-very-secret: [\n")
    with pytest.raises(KubeConfigError, match=r"broken:4: not valid YAML") as caught:
        load_cluster_config(broken)
    assert "tok-very-secret" not in str(caught.value)
    config = ClusterConfig(
        server="https://x",
        token="tok-very-secret",
        client_key_pem=b"KEYBYTES",
        password="pw-secret",
        exec=ExecConfig("aws", env=(("AWS_SECRET_ACCESS_KEY", "aws-secret"),)),
    )
    text = repr(config)
    assert all(s not in text for s in ("tok-very-secret", "KEYBYTES", "pw-secret", "aws-secret"))


@pytest.mark.parametrize(
    ("user", "cluster", "message"),
    [
        (
            {"auth-provider": {"name": "oidc"}},
            {},
            "auth-provider, which kubectl no longer supports",
        ),
        ({"token": "t", "username": "u", "password": "p"}, {}, "both a token and basic auth"),
        ({"client-certificate-data": b64(b"C")}, {}, "certificate without its key"),
        (
            {"token": "t"},
            {"insecure-skip-tls-verify": True, "certificate-authority-data": b64(CA_PEM)},
            "insecure-skip-tls-verify and a certificate authority",
        ),
        (
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}},
            {},
            "exec apiVersion 'client.authentication.k8s.io/v1alpha1' is not supported",
        ),
        ({"token": "t"}, {"server": ""}, "has no server URL"),
    ],
)
def test_kubeconfigs_kubectl_refuses_are_refused(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any], message: str
) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"c": {"server": "https://x", **cluster}},
            {"u": user},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    with pytest.raises(KubeConfigError, match=message):
        load_cluster_config(path)


def test_insecure_skip_tls_verify_is_honoured_with_a_warning(
    tmp_path: Path, api_server: ApiServer
) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"c": {"server": api_server.url, "insecure-skip-tls-verify": True}},
            {"u": {"token": TOKEN}},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    config = load_cluster_config(path)
    assert config.warnings == (
        "cluster 'c': insecure-skip-tls-verify is set, the server's identity is not checked",
    )
    with KubeApi(config) as api:
        assert len(api.list("Node", "")) == 3


# -- token files and rotation --------------------------------------------------------------------


def test_token_file_is_reread_when_it_changes(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    auth = TokenFileAuth(token)
    assert request_via(auth) == ["Bearer first"]
    assert request_via(auth) == ["Bearer first"]
    new = tmp_path / "token.new"
    new.write_text("second-longer")
    new.replace(token)  # the kubelet swaps files atomically
    assert request_via(auth) == ["Bearer second-longer"]


def test_token_file_is_reread_after_a_401(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")
    auth = TokenFileAuth(token)
    assert request_via(auth) == ["Bearer old"]
    stat = token.stat()
    token.write_text("new")  # same size, and force the old mtime: only a 401 reveals the change
    os.utime(token, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert request_via(auth, [401, 200]) == ["Bearer old", "Bearer new"]


def node_reader(namespace: str, account: str) -> list[dict[str, Any]]:
    """A ClusterRole reading Nodes, bound to a service account (the server enforces RBAC)."""
    rbac = "rbac.authorization.k8s.io"
    return [
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "node-reader"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "node-reader"},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": "node-reader"},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
        },
    ]


def test_in_cluster_config_and_token_rotation_against_the_server(
    tmp_path: Path, api_server: ApiServer
) -> None:
    root = tmp_path / "serviceaccount"
    root.mkdir()
    (root / "token").write_text("sa-token-1")
    (root / "ca.crt").write_bytes(api_server.ca.cert_pem)
    (root / "namespace").write_text("cozy-system\n")
    host, port = api_server.url.removeprefix("https://").split(":")
    env = {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}
    config = load_cluster_config(env=env, home=tmp_path, in_cluster_dir=root)
    assert (config.server, config.namespace, config.source) == (
        api_server.url,
        "cozy-system",
        "in-cluster service account",
    )
    api_server.store.put_all(node_reader("cozy-system", "gpu-gitops"))
    api_server.add_token("sa-token-1", "system:serviceaccount:cozy-system:gpu-gitops")
    with KubeApi(config) as api:
        assert len(api.list("Node", "")) == 3
        api_server.tokens.clear()  # the old token expires...
        api_server.add_token("sa-token-2", "system:serviceaccount:cozy-system:gpu-gitops")
        (root / "token.tmp").write_text("sa-token-2")
        (root / "token.tmp").replace(root / "token")  # ...and the kubelet has written a new one
        assert len(api.list("Node", "")) == 3


def test_in_cluster_ipv6_host_and_missing_token(tmp_path: Path) -> None:
    root = tmp_path / "sa"
    root.mkdir()
    env = {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(KubeConfigError, match=r"token .* is missing"):
        load_in_cluster_config(env, root)
    (root / "token").write_text("t")
    (root / "ca.crt").write_bytes(CA_PEM)
    assert load_in_cluster_config(env, root).server == "https://[fd00::1]:443"


def test_in_cluster_folder_from_the_environment(tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    root.mkdir()
    (root / "token").write_text("t")
    (root / "ca.crt").write_bytes(CA_PEM)
    (root / "namespace").write_text("gpu-gitops")
    env = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    with pytest.raises(KubeConfigError, match=r"/var/run/secrets/kubernetes\.io/serviceaccount"):
        load_in_cluster_config(env)
    config = load_in_cluster_config({**env, "GPU_GITOPS_SERVICEACCOUNT_DIR": str(root)})
    assert (config.namespace, config.token_file) == ("gpu-gitops", root / "token")


# -- exec credential plugins ---------------------------------------------------------------------

PLUGIN = textwrap.dedent(
    """\
    import json, os, pathlib, sys
    calls = pathlib.Path(sys.argv[1])
    n = int(calls.read_text()) + 1 if calls.exists() else 1
    calls.write_text(str(n))
    info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
    pathlib.Path(sys.argv[1] + ".info").write_text(json.dumps(info))
    if os.environ.get("PLUGIN_FAIL"):
        print("token=leaked-in-stderr", file=sys.stderr)
        sys.exit(3)
    status = {"token": f"exec-token-{n}"}
    if os.environ.get("PLUGIN_EXPIRES"):
        status["expirationTimestamp"] = os.environ["PLUGIN_EXPIRES"]
    print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                      "status": status}))
    """
)


@pytest.fixture
def plugin(tmp_path: Path) -> Path:
    path = tmp_path / "plugin.py"
    path.write_text(PLUGIN)
    return path


def exec_config(plugin: Path, env: dict[str, str] | None = None, **kwargs: Any) -> ExecConfig:
    calls = plugin.parent / "calls"
    return ExecConfig(
        command=sys.executable,
        args=(str(plugin), str(calls)),
        env=tuple((env or {}).items()),
        interactive_mode="Never",
        **kwargs,
    )


def test_exec_token_is_cached_until_it_expires(plugin: Path) -> None:
    now = [1_800_000_000.0]  # 2027-01-15T08:00:00Z
    config = exec_config(
        plugin, {"PLUGIN_EXPIRES": "2027-01-15T08:10:00Z"}, provide_cluster_info=True
    )
    cluster = ClusterConfig(server="https://k8s.example:6443", ca_pem=CA_PEM, exec=config)
    auth = ExecAuth(config, cluster, clock=lambda: now[0])
    assert request_via(auth) == ["Bearer exec-token-1"]
    now[0] += 599
    assert request_via(auth) == ["Bearer exec-token-1"] and auth.runs == 1
    now[0] += 1  # expirationTimestamp reached
    assert request_via(auth) == ["Bearer exec-token-2"] and auth.runs == 2
    info = json.loads((plugin.parent / "calls.info").read_text())
    assert (
        info["apiVersion"] == "client.authentication.k8s.io/v1" and info["kind"] == "ExecCredential"
    )
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"] == {
        "server": "https://k8s.example:6443",
        "certificate-authority-data": b64(CA_PEM),
    }


def test_exec_without_expiry_is_rerun_only_after_a_401(plugin: Path) -> None:
    config = exec_config(plugin)
    auth = ExecAuth(config, ClusterConfig(server="https://x", exec=config))
    assert request_via(auth) == ["Bearer exec-token-1"]
    assert request_via(auth, [401, 200]) == ["Bearer exec-token-1", "Bearer exec-token-2"]
    assert auth.runs == 2


def exec_kubeconfig(path: Path, server: ApiServer, args: list[str]) -> Path:
    """A kubeconfig for `server` whose user runs `python ARGS...` as its exec plugin."""
    return write(
        path,
        kubeconfig(
            {"c": {"server": server.url, "certificate-authority-data": b64(server.ca.cert_pem)}},
            {
                "u": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1",
                        "command": sys.executable,
                        "args": args,
                        "interactiveMode": "Never",
                    }
                }
            },
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )


def test_exec_plugin_end_to_end_against_the_server(
    plugin: Path, api_server: ApiServer, tmp_path: Path
) -> None:
    args = [str(plugin), str(tmp_path / "calls")]
    kubeconfig_path = exec_kubeconfig(tmp_path / "kubeconfig", api_server, args)
    api_server.add_token("exec-token-1", "oidc:alice")
    with KubeApi(load_cluster_config(kubeconfig_path)) as api:
        assert len(api.list("Namespace", "")) == 7
    assert {r.user for r in api_server.requests} == {"oidc:alice"}


CERT_PLUGIN = textwrap.dedent(
    """\
    import json, pathlib, sys
    print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                      "status": {"clientCertificateData": pathlib.Path(sys.argv[1]).read_text(),
                                 "clientKeyData": pathlib.Path(sys.argv[2]).read_text()}}))
    """
)


def test_exec_plugin_client_certificate_against_the_server(
    api_server: ApiServer, tmp_path: Path
) -> None:
    pair = api_server.client_cert("exec-cert-user", ("team-gpu",))
    (tmp_path / "tls.crt").write_bytes(pair.cert_pem)
    (tmp_path / "tls.key").write_bytes(pair.key_pem)
    (tmp_path / "plugin.py").write_text(CERT_PLUGIN)
    args = [str(tmp_path / "plugin.py"), str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")]
    kubeconfig_path = exec_kubeconfig(tmp_path / "kubeconfig", api_server, args)
    with KubeApi(load_cluster_config(kubeconfig_path)) as api:
        assert len(api.list("Node", "")) == 3
    assert {r.user for r in api_server.requests} == {"exec-cert-user"}


def test_exec_failures_say_what_to_do_and_never_echo_output(plugin: Path) -> None:
    failing = exec_config(plugin, {"PLUGIN_FAIL": "1"})
    auth = ExecAuth(failing, ClusterConfig(server="https://x"))
    with pytest.raises(KubeConfigError) as caught:
        request_via(auth)
    assert "exited with status 3: run it by hand" in str(caught.value)
    assert "leaked" not in str(caught.value)
    missing = ExecConfig(
        command="kubelogin-not-installed", install_hint="install kubelogin: see docs"
    )
    with pytest.raises(KubeConfigError, match="not found: install kubelogin: see docs"):
        request_via(ExecAuth(missing, ClusterConfig(server="https://x")))
    interactive = ExecConfig(command="x", interactive_mode="Always")
    with pytest.raises(KubeConfigError, match="needs a terminal"):
        request_via(ExecAuth(interactive, ClusterConfig(server="https://x")))


def test_exec_output_must_be_an_exec_credential_of_the_asked_version(tmp_path: Path) -> None:
    def run_printing(stdout: bytes) -> Any:
        return lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout=stdout, stderr=b"")

    config = ExecConfig(command="plugin")
    cases = {
        b"token: not-json": "did not print an ExecCredential",
        json.dumps(
            {
                "kind": "ExecCredential",
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "status": {"token": "t"},
            }
        ).encode(): "answered 'client.authentication.k8s.io/v1beta1'",
        json.dumps(
            {
                "kind": "ExecCredential",
                "apiVersion": "client.authentication.k8s.io/v1",
                "status": {},
            }
        ).encode(): "neither a token nor a client certificate",
        json.dumps(
            {
                "kind": "ExecCredential",
                "apiVersion": "client.authentication.k8s.io/v1",
                "status": {"token": "t", "expirationTimestamp": "tomorrow"},
            }
        ).encode(): "not RFC 3339",
    }
    for stdout, message in cases.items():
        auth = ExecAuth(config, ClusterConfig(server="https://x"), run=run_printing(stdout))
        with pytest.raises(KubeConfigError, match=message) as caught:
            request_via(auth)
        assert "not-json" not in str(caught.value)


def test_token_wins_over_token_file_and_exec(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"c": {"server": "https://x"}},
            {
                "u": {
                    "token": "inline",
                    "tokenFile": "/nonexistent",
                    "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"},
                }
            },
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    config = load_cluster_config(path)
    assert config.token_file is None
    auth = build_auth(config)
    assert auth is not None and request_via(auth) == ["Bearer inline"]


def test_unusable_ca_or_client_key_is_a_config_error() -> None:
    with pytest.raises(KubeConfigError, match="certificate authority is not a PEM certificate"):
        build_ssl_context(ClusterConfig(server="https://x", source="kubeconfig k", ca_pem=CA_PEM))
    ca = CertificateAuthority()
    one, other = ca.issue_client("a"), ca.issue_client("b")
    config = ClusterConfig(
        server="https://x", client_cert_pem=one.cert_pem, client_key_pem=other.key_pem
    )
    with pytest.raises(
        KubeConfigError, match="check that they are PEM and belong together"
    ) as caught:
        build_ssl_context(config)
    assert "PRIVATE KEY" not in str(caught.value)


@pytest.mark.parametrize(
    ("user", "cluster", "told"),
    [
        ({"token": TOKEN}, {}, "the bearer token is sent unencrypted"),
        ({"password": "pw", "username": "u"}, {}, "the password is sent unencrypted"),
        (
            {"token": TOKEN},
            {"proxy-url": "http://proxy.example:3128"},
            "plain http:// (through a proxy): the bearer token",
        ),
    ],
)
def test_a_credential_for_a_plain_http_server_is_warned_about(
    tmp_path: Path, user: dict[str, Any], cluster: dict[str, Any], told: str
) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"c": {"server": "http://api.example:8080", **cluster}},
            {"u": user},
            {"x": {"cluster": "c", "user": "u"}},
            "x",
        ),
    )
    (warning,) = load_cluster_config(path).warnings
    assert warning.startswith("cluster 'c': the server is plain http://") and told in warning
    assert warning.endswith("; use https://")
    assert TOKEN not in warning


def test_no_credential_no_warning_for_plain_http(tmp_path: Path) -> None:
    path = write(
        tmp_path / "config",
        kubeconfig(
            {"c": {"server": "http://x"}}, {"u": {}}, {"x": {"cluster": "c", "user": "u"}}, "x"
        ),
    )
    assert load_cluster_config(path).warnings == ()
