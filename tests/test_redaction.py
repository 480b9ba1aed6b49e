"""One redaction digest: the same Secret value shows the same digest in `diff` and in `audit`."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from audit.findings.redact import scrub
from kubedata.redact import digest
from prbot.diff import diff_objects, index_objects

VALUE = "czNjcjN0LWxpY2Vuc2U="  # what a Secret's data holds: base64 text


def _secret(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "licensing", "namespace": "cozy-gpu-operator"},
        "data": {"token": value},
    }


def test_digest_is_the_sha256_of_canonical_json() -> None:
    expected = "sha256:" + hashlib.sha256(json.dumps(VALUE).encode()).hexdigest()
    assert digest(VALUE) == {"redacted": expected}
    assert digest({"b": 1, "a": [True]}) == digest({"a": [True], "b": 1})  # key order is no value
    assert digest(1) != digest(True) and digest("1") != digest(1)


def test_the_same_secret_value_has_the_same_digest_in_diff_and_in_audit() -> None:
    (change,) = diff_objects(index_objects([_secret(VALUE)]), index_objects([_secret("b3RoZXI=")]))
    (token,) = change.fields
    shown_by_diff = token.before

    shown_by_audit, hit = scrub("", "Secret", ("data", "token"), VALUE)

    assert hit and shown_by_audit == shown_by_diff == digest(VALUE)
    assert VALUE not in repr(change) and VALUE not in repr(shown_by_audit)
