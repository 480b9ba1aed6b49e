"""Marked YAML loading: lines of every path, and what is not plain data refused at its line."""

from __future__ import annotations

import pytest

from kubedata.errors import YamlError
from kubedata.yaml_io import dump_all, load_all, load_marked, nearest_line
from renderer.errors import ProfileError, yaml_problems


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
