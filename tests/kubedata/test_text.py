"""Markdown-safe text: what html.escape and the Markdown table did in two passes, in one."""

from __future__ import annotations

import html

import pytest

from kubedata.text import inert, markdown_text

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
