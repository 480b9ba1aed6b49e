"""The rendered branch's files parse as PyYAML (YAML 1.1, as Kubernetes reads them) parses them,
whichever parser does the work."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
import yaml_rs

from audit.errors import AuditError
from audit.sources import rendered_yaml
from audit.sources.rendered_yaml import load_files

OBJECT = b"""apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    app.kubernetes.io/name: web
  name: web
  namespace: tenant-1
spec:
  replicas: 3
  template:
    spec:
      containers:
      - image: nginx:1.27
        name: web
        ports:
        - containerPort: 8080
        resources:
          limits: {}
          requests:
            cpu: 250m
            memory: 1.5Gi
"""

# Texts whose plain scalars YAML 1.2 (yaml-rs) reads otherwise than YAML 1.1 (PyYAML, go-yaml)
DIFFERENT = {
    "boolean words": b"a: on\nb: yes\nc: No\nd: OFF\n",
    "a boolean key": b"on: 1\n",
    "booleans in flow style": b"a: [on,off]\nb: {c: yes}\n",
    "octal": b"mode: 0755\n",
    "1.2 octal": b"mode: 0o17\n",
    "base 60": b"a: 12:30\n",
    "exponent without a dot": b"a: 1e3\n",
    "merge key": b"base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
    "binary tag": b"a: !!binary aGk=\n",
    "two documents": b"- 1\n---\n- 2\n",
}


def pyyaml(data: bytes) -> list[Any]:
    return list(yaml.load_all(data, Loader=yaml.CSafeLoader))


@pytest.mark.parametrize("text", DIFFERENT.values(), ids=DIFFERENT.keys())
def test_texts_yaml_versions_read_differently_parse_as_yaml_1_1(text: bytes):
    got = dict(load_files({"f.yaml": text}, "bench"))["f.yaml"]
    assert got == pyyaml(text)
    assert [yaml_rs.loads(text.decode())] != got  # the case the guard exists for


def test_a_plain_object_file_takes_the_fast_parser(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(rendered_yaml, "_pyyaml", _not_called)
    files = {"ams1/deployment_tenant-1_web.yaml": OBJECT, "ams1/empty.yaml": b"# nothing\n"}
    got = dict(load_files(files, "abc123"))
    assert got == {path: pyyaml(data) for path, data in files.items()}
    assert got["ams1/empty.yaml"] == []


def test_one_word_that_differs_sends_only_its_files_to_pyyaml(monkeypatch: pytest.MonkeyPatch):
    seen: list[str] = []
    original = rendered_yaml._pyyaml

    def spy(data: bytes, where: str, path: str) -> list[Any]:
        seen.append(path)
        return original(data, where, path)

    monkeypatch.setattr(rendered_yaml, "_pyyaml", spy)
    files = {"a.yaml": OBJECT, "b.yaml": OBJECT + b"  paused: on\n"}
    got = dict(load_files(files, "abc123"))
    assert seen == ["b.yaml"]
    assert got["b.yaml"][0]["spec"]["paused"] is True


def test_invalid_yaml_names_the_file_on_one_line():
    one_line = r"^abc123:ams1/x.yaml:2: not valid YAML \(.+\); republish$"
    with pytest.raises(AuditError, match=one_line):
        dict(load_files({"ams1/ok.yaml": OBJECT, "ams1/x.yaml": b"a: [1\n"}, "abc123"))


def _not_called(data: bytes, where: str, path: str) -> list[Any]:
    raise AssertionError(f"PyYAML parsed {path}")
