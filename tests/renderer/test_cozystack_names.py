"""The one accessor of a platform Package's chart values, and nobody walking there by hand."""

from __future__ import annotations

import re
from typing import Any

import pytest

from renderer.cozystack_names import PLATFORM_VALUES, platform_values
from tests.conftest import REPO_ROOT
from tests.test_function_length import PACKAGES


@pytest.mark.parametrize(
    ("package", "values"),
    [
        ({"spec": {"components": {"platform": {"values": {"a": 1}}}}}, {"a": 1}),
        ({"spec": {"components": {"platform": {"values": None}}}}, {}),
        ({"spec": {"components": {"platform": {}}}}, {}),
        ({"spec": {"components": {"platform": "x"}}}, {}),
        ({"spec": {"components": ["platform"]}}, {}),
        ({"spec": None}, {}),
        ({}, {}),
        (None, {}),
        ({"spec": {"components": {"platform": {"values": ["a"]}}}}, {}),
    ],
    ids=["values", "null", "no-values", "no-mapping", "a-list", "no-spec", "empty", "none", "list"],
)
def test_platform_values(package: Any, values: dict[str, Any]) -> None:
    assert platform_values(package) == values


def test_platform_values_is_the_object_itself_so_an_edit_lands_in_the_package() -> None:
    package: dict[str, Any] = {"spec": {"components": {"platform": {"values": {"a": 1}}}}}
    platform_values(package)["b"] = 2
    assert package["spec"]["components"]["platform"]["values"] == {"a": 1, "b": 2}
    assert PLATFORM_VALUES == ("spec", "components", "platform", "values")


_WALK = re.compile(
    r"""get\(["']components["']\)[^\n]*get\(["']platform["']\)"""
    r"""|["']components["'],\s*["']platform["'],\s*["']values["']"""
)


def test_no_module_walks_to_the_platform_values_but_the_accessor() -> None:
    walks = [
        f"{path.relative_to(REPO_ROOT)}:{text[: m.start()].count(chr(10)) + 1}"
        for package in PACKAGES
        for path in sorted((REPO_ROOT / package).rglob("*.py"))
        for text in [path.read_text()]
        for m in _WALK.finditer(text)
    ]
    assert walks == ["renderer/cozystack_names.py:31"]
