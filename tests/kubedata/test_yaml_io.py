"""Marked YAML loading: lines of every path, and what is not plain data refused at its line."""

from __future__ import annotations

import ast
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchmarks.profiles import write_profiles
from kubedata.errors import YamlError
from kubedata.yaml_io import documents, dump_all, dump_yaml, load_all, load_marked, nearest_line
from kubedata.yaml_scalars import escaped_only, plain_is_string
from renderer.errors import ProfileError, yaml_problems
from renderer.render import render_profiles
from renderer.validate import check_clusters
from tests.conftest import REPO_ROOT
from tests.test_function_length import PACKAGES


def refused(text: str) -> tuple[int, str]:
    with pytest.raises(YamlError) as caught:
        load_marked(text, "f.yaml")
    assert caught.value.file == "f.yaml"
    return caught.value.line, caught.value.message


def test_every_path_keeps_its_line() -> None:
    data, marks = load_marked("a:\n  b:\n    - x\n    - y\n  c: 1\n", "f.yaml")
    assert data == {"a": {"b": ["x", "y"], "c": 1}}
    assert marks[("a", "b", 1)] == 4 and marks[("a", "c")] == 5
    assert nearest_line(marks, ("a", "b", 7, "deeper")) == 2
    assert nearest_line(marks, ("z",), missing=9) == 1  # the document's own line


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a: &x 1\nb: *x\n", 1, "YAML anchors and aliases are not allowed; write the value out"),
        ("a: 1\na: 2\n", 2, 'duplicate key "a"; keep one of them'),
        ("a:\n  <<: {b: 1}\n", 2, "YAML merge keys (<<) are not allowed"),
        (
            "a: !!python/name:os.system x\n",
            1,
            'cannot read the value tagged "!!python/name:os.system"; remove the tag',
        ),
        ("a: 1\n---\nb: 2\n", 3, "more than one YAML document; keep one"),
        ("# nothing\n", 0, "the file is empty; it must hold one document"),
        ("a: [1,\n", 2, "YAML syntax error: did not find expected node content"),
    ],
)
def test_what_is_not_plain_data_is_refused_at_its_line(text: str, line: int, message: str) -> None:
    got_line, got = refused(text)
    assert got_line == line and got.startswith(message)


def test_the_renderer_reports_it_as_one_profile_problem() -> None:
    with pytest.raises(ProfileError) as caught, yaml_problems():
        load_marked("a: 1\na: 2\n", "clusters/c1/gpu-profile.yaml")
    assert str(caught.value) == (
        'clusters/c1/gpu-profile.yaml:2: error: duplicate key "a"; keep one of them'
    )


def test_dumping_is_deterministic_and_loads_back() -> None:
    docs = [{"b": 1, "a": [True, "x"]}, {"c": None}]
    text = dump_all(docs)
    assert text == "b: 1\na:\n- true\n- x\n---\nc: null\n"
    assert load_all(text) == docs


class _PyYamlDumper(yaml.CSafeDumper):
    """PyYAML's own representer, with dump_yaml's string styles: what its fast path must match."""


def _represent_str(dumper: _PyYamlDumper, text: str) -> yaml.ScalarNode:
    style = '"' if escaped_only(text) else None if plain_is_string(text) else "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_PyYamlDumper.add_representer(str, _represent_str)


def test_dumping_writes_what_pyyamls_own_representer_writes() -> None:
    """dump_yaml's nodes for plain data are made without PyYAML's representer: the same bytes on
    every generated file of the examples and the benchmark's profiles, and on odd data (an object
    met twice is an anchor and an alias, floats, keys that are not strings, tuples)."""
    shared: dict[str, Any] = {"a": [1, 2]}
    docs: list[Any] = [
        {"x": shared, "y": shared, "z": [shared, shared["a"]]},
        [1.5, float("inf"), (1, 2), "é", "a\u2028b", "", "yes", "1e3", None, True, 0, -5, 10**30],
        {1: "int key", None: 1, False: 2, 1.5: 3, (): 4},
        [[], {}, [[]], {"": {}}],
    ]
    with tempfile.TemporaryDirectory() as tmp:
        write_profiles(Path(tmp), 200)
        for root in (REPO_ROOT, Path(tmp)):
            docs += [
                load_all(text)
                for files in render_profiles(check_clusters(root).profiles).dirs.values()
                for text in files.values()
            ]
    for doc in docs:
        pyyaml = yaml.dump(
            doc,
            Dumper=_PyYamlDumper,
            sort_keys=False,
            default_flow_style=False,
            allow_unicode=True,
            width=4096,
        )
        assert dump_yaml(doc) == pyyaml, doc


def test_documents_gives_each_document_with_its_first_line_nulls_included() -> None:
    """The first line of a document is that of its first value (comments are no value)."""
    text = "a: 1\n---\n---\n# c\nb: [x, &y y, *y]\n"
    assert list(documents(text, "f")) == [(1, {"a": 1}), (3, None), (5, {"b": ["x", "y", "y"]})]
    assert list(documents(text.encode(), "f")) == list(documents(text, "f"))


_LEVELS = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f")]
"""Each anchor ten aliases of the one before: 10**7 values from a few lines."""


@pytest.mark.parametrize(
    ("text", "guarded", "line", "message"),
    [
        ("a: 1\nb: [1\n", False, 3, "not valid YAML (did not find expected ',' or ']')"),
        (
            "token: s3cr3t: x\n",
            False,
            1,
            "not valid YAML (mapping values are not allowed in this context)",
        ),
        ("a: " + "[" * 101 + "]" * 101 + "\n", True, 1, "nested more than 100 levels deep"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
            + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in _LEVELS)
            + "g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n",
            True,
            1,
            "its aliases expand to over 1000000 values (an alias bomb?)",
        ),
    ],
    ids=["syntax", "no-secret-quoted", "deep", "alias-bomb"],
)
def test_documents_refuses_with_file_line_and_never_the_line_itself(
    text: str, guarded: bool, line: int, message: str
) -> None:
    with pytest.raises(YamlError) as caught:
        list(documents(text, "in/f.yaml", guarded=guarded))
    assert (caught.value.file, caught.value.line, caught.value.message) == (
        "in/f.yaml",
        line,
        message,
    )
    assert "s3cr3t" not in str(caught.value)


def test_unguarded_documents_let_a_deep_document_through() -> None:
    """Built output and Helm manifests are not hostile: only what comes from outside is guarded."""
    assert len(list(documents("a: " + "[" * 101 + "]" * 101 + "\n", "f"))) == 1


def test_no_package_loads_yaml_but_through_kubedata_yaml_io() -> None:
    """One entry point: PyYAML is imported by kubedata.yaml_lib alone (adopt's round-trip
    editor uses ruamel.yaml, which keeps comments; the audit's fast path, yaml-rs, is checked
    against `documents`)."""
    importers = []
    for package in PACKAGES:
        for path in sorted((REPO_ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = (
                    [a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                )  # fmt: skip
                if any(n == "yaml" or n.startswith("yaml.") for n in names):
                    importers.append(path.relative_to(REPO_ROOT).as_posix())
    assert sorted(set(importers)) == ["kubedata/yaml_lib.py"]
