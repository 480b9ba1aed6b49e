"""Syntax of the strings a profile hands to other programs: cron schedules, image references, URLs.

Each check returns None when the value is valid, else what is wrong and how to write it, so the
rules that use them add one Problem naming file:line and field; IMAGE_REFERENCE is a pattern the
model checks (and the JSON Schema carries). Pure; imports nothing of the project, so the model and
every rule module may use it.

Sources: CronJob schedules are parsed by robfig/cron v3 with the standard five-field parser plus
the `@` descriptors (kubernetes pkg/controller/cronjob, `cron.ParseStandard`); image references
follow the grammar of distribution/reference (`reference.go`, the `ReferenceRegexp`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["CRON_MACROS", "IMAGE_REFERENCE", "cron_problem", "url_problem"]

CRON_MACROS = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
_CRON_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {m: i for i, m in enumerate(_MONTHS, 1)}),
    ("day of week", 0, 7, {d: i for i, d in enumerate(_DAYS)}),
)

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[0-9a-fA-F:]+\])(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_REFERENCE = (
    rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?"
)
"""distribution/reference's grammar: [domain[:port]/]path[:tag][@digest]."""


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    value = names.get(text.lower()) if not text.isdigit() else int(text)
    return value if value is not None and low <= value <= high else None


def _cron_field(text: str, low: int, high: int, names: dict[str, int]) -> bool:
    for part in text.split(","):
        span, _, step = part.partition("/")
        if step and not (step.isdigit() and int(step) > 0):
            return False
        if span in ("*", "?"):
            continue
        first, dash, last = span.partition("-")
        start = _cron_value(first, low, high, names)
        end = _cron_value(last, low, high, names) if dash else start
        if start is None or end is None or end < start:
            return False
    return True


def cron_problem(schedule: str) -> str | None:
    """What is wrong with a CronJob schedule, or None."""
    fields = schedule.split()
    if len(fields) == 1 and fields[0].startswith("@"):
        if fields[0] in CRON_MACROS:
            return None
        return f'"{schedule}" is not a cron macro; use one of {", ".join(sorted(CRON_MACROS))}'
    if len(fields) != 5:
        return (
            f'"{schedule}" has {len(fields)} field(s); a CronJob schedule has five '
            '(minute hour day-of-month month day-of-week, e.g. "17 3 * * *") or is a macro '
            "like @daily"
        )
    for text, (name, low, high, names) in zip(fields, _CRON_FIELDS, strict=True):
        if not _cron_field(text, low, high, names):
            return f'"{schedule}": the {name} field "{text}" is not a value in {low}-{high}'
    return None


def url_problem(url: str, schemes: tuple[str, ...] = ("http", "https")) -> str | None:
    """What is wrong with a URL a job connects to (scheme and host required), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        port, parts = -1, None
    if (
        parts is None
        or parts.scheme not in schemes
        or not parts.hostname
        or port == -1
        or any(c.isspace() for c in url)
    ):
        return (
            f'"{url}" is not a URL; write {"|".join(schemes)}://HOST[:PORT][/PATH], '
            "e.g. http://pushgateway.monitoring:9091"
        )
    if parts.username or parts.password:
        return f"{parts.scheme}://{parts.hostname}: leave credentials out of the URL"
    return None
