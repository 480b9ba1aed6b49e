"""Untrusted text made inert before it is printed: one line, no control characters, no secret.

Values from profiles, API servers and git reach error messages and reports. A raw newline there
forges a second message line (or closes a code fence in a PR comment), a terminal escape repaints
the screen, a bidi control reorders what the reader sees; and a server that echoes the request's
Authorization header would get the token printed. `inert` escapes the first three and masks every
credential registered with `mask_secret` (the process's own, registered where it is loaded).
"""

from __future__ import annotations

import re

__all__ = [
    "adopt_command",
    "code_span",
    "html_text",
    "inert",
    "inert_lines",
    "markdown_code",
    "markdown_text",
    "mask_secret",
    "masked",
    "shorten",
]

# C0 and C1 controls, DEL, and the Unicode format characters that reorder or hide text
# (bidi embeddings, overrides and isolates, zero-width characters, the BOM).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
_SECRETS: set[str] = set()
_MIN_SECRET = 8
"""Shorter strings are too likely to occur in ordinary text to be masked."""
MASK = "[masked]"


def mask_secret(secret: str) -> None:
    """Mask `secret` in everything `inert` and `masked` return from now on (process-wide)."""
    secret = secret.strip()
    if len(secret) >= _MIN_SECRET:
        _SECRETS.add(secret)


def masked(text: str) -> str:
    """`text` with every registered secret replaced by [masked] (longest first)."""
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def inert(text: str) -> str:
    """One line: control and format characters escaped (\\n, \\x1b, \\u202e), secrets masked."""
    return _UNSAFE.sub(_escape, masked(text))


def inert_lines(text: str) -> str:
    """Several lines (a diff, a listing), each made inert; the line breaks between them kept."""
    return "\n".join(inert(line) for line in text.split("\n"))


def shorten(text: str, limit: int = 80) -> str:
    """The first line of `text`, cut to `limit` characters; "…" marks what was left out."""
    first, _, rest = text.partition("\n")
    if len(first) > limit:
        return first[:limit] + "…"
    return first + ("…" if rest else "")


_MARKDOWN = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;"}  # HTML, as html.escape(quote=False)
    | {c: f"&#{ord(c)};" for c in "`*_[]|!@#~\\"}  # code, emphasis, links, tables, mentions
)


def markdown_text(text: str) -> str:
    """Untrusted text for Markdown outside code (a PR comment, an issue): one line, and no HTML
    or HTML comment, code span, emphasis, link, image, table cell or @mention it could open."""
    return inert(text).translate(_MARKDOWN)


_BACKTICKS = re.compile("`+")


def markdown_code(text: str, *, cell: bool = False) -> str:
    """Untrusted text as an inline code span, shown as it is: one line, and a span its own
    backticks cannot close. In a table `cell`, `|` is escaped (GFM splits cells before it reads
    code spans, and drops the backslash inside them)."""
    text = inert(text)
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_span(text: str) -> str:
    """Untrusted text as one Markdown code span that also sits in a table cell: one line, and
    no backtick or pipe to end the span or the cell early (look-alikes stand in for them, where
    markdown_code keeps the text exact)."""
    return "`" + inert(text).replace("`", "\u02cb").replace("|", "\u00a6") + "`"


def html_text(text: str) -> str:
    """Untrusted text for HTML, in element content or a quoted attribute value: one line,
    `& < > " '` as character references, so it can open no element, attribute or script."""
    # html builds its table of 2,231 entities when imported: only the fleet's HTML page escapes
    import html

    return html.escape(inert(text), quote=True)


def adopt_command(cluster: str, finding_id: str) -> str:
    """The command that keeps a live change in git (`adopt`), as the audit's, the fleet's and the
    PR bot's reports print it."""
    return f"gpu-gitops adopt --cluster {cluster} --finding {finding_id}"
