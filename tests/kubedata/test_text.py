"""Markdown-safe text: what html.escape and the Markdown table did in two passes, in one."""

from __future__ import annotations

import html

import pytest

from kubedata.text import inert, inert_lines, markdown_code, markdown_text

_MARKDOWN_ONLY = str.maketrans({c: f"&#{ord(c)};" for c in "`*_[]|!@#~\\"})


@pytest.mark.parametrize(
    "text",
    [
        "plain words",
        "<!-- hide --> <img src=x onerror=alert(1)>",
        "&amp; already escaped, & bare, &#35; entity",
        "`code` *em* _em_ [link](http://x) ![img](y) | cell | @team #1 ~strike~ \\",
        "line one\nline two\x1b[31m\u202e",
        "",
    ],
)
def test_markdown_text_is_html_escape_then_the_markdown_characters(text: str):
    two_passes = html.escape(inert(text), quote=False).translate(_MARKDOWN_ONLY)
    assert markdown_text(text) == two_passes
    assert "<" not in markdown_text(text)
    assert "`" not in markdown_text(text)


def test_inert_lines_keeps_the_line_breaks_and_escapes_the_rest():
    assert inert_lines("a\x1b[2J\nb\u202ec\n\n") == "a\\x1b[2J\nb\\u202ec\n\n"
    assert inert_lines("a\rb\n") == "a\\x0db\n"  # a carriage return rewrites the line: escaped


@pytest.mark.parametrize(
    ("text", "cell", "span"),
    [
        ("kubectl get pods", False, "`kubectl get pods`"),
        ("a`b", False, "``a`b``"),
        ("`x`", False, "`` `x` ``"),
        ("a|b", True, "`a\\|b`"),
        ("a|b", False, "`a|b`"),
        ("x\n- fake\x1b", False, "`x\\x0a- fake\\x1b`"),
    ],
)
def test_markdown_code_is_one_closed_span(text: str, cell: bool, span: str):
    assert markdown_code(text, cell=cell) == span
