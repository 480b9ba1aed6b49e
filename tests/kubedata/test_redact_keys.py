"""Which values keys look like secrets: what `import` leaves out and `adopt` refuses."""

from __future__ import annotations

import pytest

from kubedata.redact import secret_key, secret_paths


@pytest.mark.parametrize(
    "key",
    ["password", "adminPassword", "clientSecret", "token", "apiToken", "api_key", "apiKey",
     "privateKey", "credentials", "SECRET", "passwd", "accessToken"],
)  # fmt: skip
def test_secret_looking_keys(key: str) -> None:
    assert secret_key(key)


@pytest.mark.parametrize(
    "key",
    ["existingSecret", "secretName", "imagePullSecrets", "tokenFile", "passwordRef", "host",
     "clientId", "secretRef"],
)  # fmt: skip
def test_names_of_secrets_are_not_secrets(key: str) -> None:
    assert not secret_key(key)


def test_secret_paths_finds_set_values_at_any_depth() -> None:
    value = {"a": {"password": "x", "token": ""}, "l": [{"apiKey": 3}], "enabled": {"secret": True}}
    assert secret_paths(value) == [("a", "password"), ("l", "0", "apiKey")]
