"""Grammars of the strings a profile hands to other programs, which would refuse them later.

Each grammar is a `Syntax`: one regular expression, written so that Python's `re` and ECMA-262
(JSON Schema's `pattern` dialect, as ajv compiles it with the `u` flag) read it alike, and a check
that says what is wrong with a value and how to write it. The model attaches them to fields with
`spec(syntax=...)`: decoding runs the check, the JSON Schema carries the pattern and `maxLength`.
The checks are the authority; a pattern is looser only where the rule is not a regular language
in practice (`LOOSER_THAN_CHECK` lists those). Pure; imports nothing of the model, so the model and
every rule may use it.

Sources:
- Cron: the API server validates `CronJob.spec.schedule` with robfig/cron v3 `ParseStandard` (five
  fields or an `@` descriptor; kubernetes pkg/apis/batch/validation `validateScheduleFormat`) and
  refuses any schedule containing "TZ" on create. Bounds from robfig/cron v3 spec.go: minute 0-59,
  hour 0-23, day of month 1-31, month 1-12 or jan-dec, day of week 0-6 or sun-sat (7 is refused).
  Stricter than robfig on nonsense it tolerates: empty list entries ("1,,2"), "*-5", signs ("+5").
- Image references: distribution/reference regexp.go (`ReferenceRegexp`, name at most 255).
- Branch names: git-check-ref-format(1) with `--branch` (no leading "-", not "HEAD").
- URLs: RFC 3986 scheme://[user@]host[:port][/path][?query]; a password is refused (Flux and the
  Pushgateway client take credentials from Secrets, and it would be printed in messages).
"""

from __future__ import annotations

import re

from kubedata.text import shorten

from renderer.schema import Syntax

__all__ = [
    "CRON_MACROS",
    "CRON_SCHEDULE",
    "DNS_LABEL",
    "DNS_SUBDOMAIN",
    "DURATION",
    "EXTENDED_RESOURCE",
    "GIT_BRANCH",
    "GIT_URL",
    "HTTP_URL",
    "IMAGE",
    "IMAGE_PATH",
    "IMAGE_REFERENCE",
    "IMAGE_REGISTRY",
    "IMAGE_VERSION",
    "LABEL_KEY",
    "LABEL_VALUE",
    "LOOSER_THAN_CHECK",
    "cron_problem",
    "either_case",
    "git_branch_problem",
    "image_problem",
    "url_problem",
]

DNS_LABEL = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
DURATION = r"([0-9]+(\.[0-9]+)?(ms|s|m|h))+"
"""A Go duration as Flux's CRDs accept it (and @every in a schedule)."""
_LABEL_NAME = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
LABEL_KEY = rf"(?:(?=[^/]{{1,253}}/)(?:{DNS_SUBDOMAIN})/)?{_LABEL_NAME}"
"""A Kubernetes label key: [prefix/]name (apimachinery's IsQualifiedName)."""
LABEL_VALUE = f"(?:{_LABEL_NAME})?"
"""A Kubernetes label value: empty, or at most 63 of A-Z a-z 0-9 - _ . (IsValidLabelValue)."""

LOOSER_THAN_CHECK = {
    "CRON_SCHEDULE": "a range whose start is after its end (30-10)",
    "IMAGE": "a repository name over 255 characters",
}
"""What a pattern lets through that the check refuses: not a regular language in practice."""


def either_case(text: str) -> str:
    """A pattern matching `text` in any letter case: ECMA-262 patterns have no inline (?i)."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in text)


# --- cron -----------------------------------------------------------------------------------------

CRON_MACROS = ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_STEP = "0*[1-9][0-9]{0,17}"  # a positive int64 (robfig parses it with strconv.Atoi)


class _CronField:
    def __init__(self, name: str, low: int, high: int, number: str, names: tuple[str, ...] = ()):
        self.name, self.low, self.high = name, low, high
        self.names = {n: i for i, n in enumerate(names, 1 if name == "month" else 0)}
        value = f"0*(?:{number})" + "".join(f"|{either_case(n)}" for n in names)
        item = f"(?:[*?](?:/{_STEP})?|(?:{value})(?:-(?:{value}))?(?:/{_STEP})?)"
        self.pattern = f"{item}(?:,{item})*"

    def value(self, text: str) -> tuple[int | None, str]:
        if text.isascii() and text.isdigit():
            number = int(text)
            if self.low <= number <= self.high:
                return number, ""
            return None, f"{self.name} {number} is outside {self.low}-{self.high}"
        if text.lower() in self.names:
            return self.names[text.lower()], ""
        names = f", {self.names_text()}" if self.names else ""
        return None, f'"{shorten(text)}" is not a {self.name} ({self.low}-{self.high}{names})'

    def names_text(self) -> str:
        first, *_, last = self.names
        return f"{first}-{last}"

    def item_problem(self, item: str) -> str | None:
        if not item:
            return f"the {self.name} field has an empty list entry"
        span, slash, step = item.partition("/")
        if slash and not re.fullmatch(_STEP, step):
            return f'step "{shorten(step)}" in the {self.name} field must be a positive number'
        first, dash, last = span.partition("-")
        if first in ("*", "?"):
            return (
                f'"{shorten(span)}": {first} takes no range; write {first} or a range like 1-5'
                if dash
                else None
            )
        start, why = self.value(first)
        if start is None:
            return why
        if not dash:
            return None
        end, why = self.value(last)
        if end is None:
            return why
        if start > end:
            return f'{self.name} range "{shorten(span)}" runs backwards; write {last}-{first}'
        return None


_CRON_FIELDS = (
    _CronField("minute", 0, 59, "[1-5]?[0-9]"),
    _CronField("hour", 0, 23, "1?[0-9]|2[0-3]"),
    _CronField("day of month", 1, 31, "[1-9]|[12][0-9]|3[01]"),
    _CronField("month", 1, 12, "[1-9]|1[0-2]", _MONTHS),
    _CronField("day of week", 0, 6, "[0-6]", _DAYS),
)
_CRON_HINT = (
    'write five fields (minute hour day-of-month month day-of-week, e.g. "17 3 * * *") '
    f"or one of {', '.join(CRON_MACROS)}, @every DURATION"
)


def cron_problem(schedule: str) -> str | None:
    """What the API server would refuse in a CronJob schedule, and how to write it; None if fine."""
    if "TZ" in schedule:
        return (
            f'"{shorten(schedule)}": Kubernetes refuses TZ= and CRON_TZ= in a CronJob schedule; '
            "write the time in UTC"
        )
    if schedule.startswith("@"):
        if schedule in CRON_MACROS or re.fullmatch(f"@every {DURATION}", schedule):
            return None
        return f'"{shorten(schedule)}" is not a schedule macro; {_CRON_HINT}'
    fields = re.split("[ \t]+", schedule.strip(" \t")) if schedule.strip(" \t") else []
    if len(fields) != len(_CRON_FIELDS):
        seconds = " (a CronJob has no seconds field)" if len(fields) == 6 else ""
        return f'"{shorten(schedule)}" has {len(fields)} fields{seconds}; {_CRON_HINT}'
    for text, field in zip(fields, _CRON_FIELDS, strict=True):
        for item in text.split(","):
            why = field.item_problem(item)
            if why:
                return f'"{shorten(schedule)}": {why}'
    return None


_CRON_PATTERN = (
    "[ \t]*"
    + "[ \t]+".join(f"(?:{f.pattern})" for f in _CRON_FIELDS)
    + "[ \t]*|"
    + "|".join(CRON_MACROS)
    + f"|@every {DURATION}"
)


# --- image references (distribution/reference) ----------------------------------------------------

_ALNUM = "[a-z0-9]+"
_SEPARATOR = "(?:[._]|__|-+)"
_PATH_COMPONENT = f"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_REMOTE_NAME = f"{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_NAME = f"(?:{_DOMAIN}/)?{_REMOTE_NAME}"
_TAG = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"  # Go's \w is ASCII; Python's is not
_DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
IMAGE_REFERENCE = f"{_NAME}(?::{_TAG})?(?:@{_DIGEST})?"
"""distribution/reference's grammar: [registry[:port]/]path[:tag][@digest]."""
_NAME_MAX = 255
_IMAGE_MAX = 1024  # bounds the regex's work; a name is at most 255, a tag 128


def _image_part_problem(value: str, what: str) -> str:
    """What is wrong with `value`, where a mistake usually sits."""
    if not value:
        return "is empty"
    if any(c.isspace() for c in value):
        return f'"{shorten(value)}" contains whitespace'
    upper = " (it is lower case)" if value != value.lower() and what != "image tag" else ""
    return f'"{shorten(value)}" is not an {what}{upper}'


def image_problem(image: str) -> str | None:
    """What a container runtime would refuse in an image reference; None if fine."""
    if len(image) > _IMAGE_MAX:
        return f"is {len(image)} characters long; an image reference is at most {_IMAGE_MAX}"
    m = re.fullmatch(f"({_NAME})(?::{_TAG})?(?:@{_DIGEST})?", image)
    if m is None:
        return (
            f"{_image_part_problem(image, 'image reference')}; write "
            "[registry[:port]/]path[:tag][@sha256:...], e.g. ghcr.io/example/gpu-gitops:0.1.0"
        )
    if len(m[1]) > _NAME_MAX:
        return f"the repository name is {len(m[1])} characters long; at most {_NAME_MAX}"
    return None


def _image_part(pattern: str, what: str, example: str, empty: bool) -> Syntax:
    """One part of an image the GPU Operator joins as repository/image:version."""

    def check(value: str) -> str | None:
        if (empty and not value) or re.fullmatch(pattern, value):
            return None
        return f"{_image_part_problem(value, what)}; e.g. {example}"

    return Syntax(f"(?:{pattern})?" if empty else pattern, check, _NAME_MAX)


# --- git ------------------------------------------------------------------------------------------

_REF_CHAR = r"[^\x00-\x20\x7f~^:?*\[\\]"
_GIT_BRANCH = (
    r"(?![-./])(?!HEAD$)(?!@$)(?!.*(?:\.\.|@\{|//|/\.|\.lock/))(?!.*(?:\.lock|[./])$)"
    f"{_REF_CHAR}+"
)
_REF_RULES: tuple[tuple[str, str], ...] = (
    (r"[\x00-\x20\x7f]", "has a space or a control character"),
    (r"[~^:?*\[\\]", "has one of ~ ^ : ? * [ \\"),
    (r"\.\.", 'has ".."'),
    (r"@\{", 'has "@{"'),
    (r"//", 'has "//"'),
    (r"^[-./]", 'starts with "-", "." or "/"'),
    (r"/\.", 'has a part starting with "."'),
    (r"\.lock(/|$)", 'has a part ending in ".lock"'),
    (r"[./]$", 'ends with "." or "/"'),
    (r"^(HEAD|@)$", "is reserved"),
)


def git_branch_problem(branch: str) -> str | None:
    """What git would refuse in a branch name (git check-ref-format --branch); None if fine."""
    if not branch:
        return 'is empty; name the branch, e.g. "rendered"'
    for rule, why in _REF_RULES:
        if re.search(rule, branch):
            return f'"{shorten(branch)}" {why}, so git refuses it as a branch name; e.g. "rendered"'
    return None


# --- URLs -----------------------------------------------------------------------------------------

_HOST = (
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*"
    r"|\[[0-9A-Fa-f:.]+\])"
)
_PORT = "(?:[0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])"
_URL_CHAR = r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/]"  # RFC 3986 pchar and "/"
_QUERY_CHAR = r"[A-Za-z0-9\-._~!$&'()*+,;=:@%/?]"
_USER = r"[A-Za-z0-9\-._~!$&'()*+,;=%]+"  # no ":": a password never goes into a URL
_URL_MAX = 2048


def _url_pattern(schemes: tuple[str, ...], user: bool = False) -> str:
    scheme = "|".join(schemes)
    userinfo = f"(?:{_USER}@)?" if user else ""
    return rf"(?:{scheme})://{userinfo}{_HOST}(?::{_PORT})?(?:/{_URL_CHAR}*)?(?:\?{_QUERY_CHAR}*)?"


def url_problem(
    url: str, schemes: tuple[str, ...] = ("http", "https"), user: bool = False
) -> str | None:
    """What is wrong with a URL a program will connect to, and how to write it; None if fine.
    `user`: a user name may come before the host (ssh://git@...); else no user-info at all."""
    if len(url) > _URL_MAX:
        return f"is {len(url)} characters long; a URL here is at most {_URL_MAX}"
    if re.fullmatch(_url_pattern(schemes, user), url):
        return None
    form = f"{'|'.join(schemes)}://HOST[:PORT][/PATH]"
    head, sep, rest = url.partition("://")
    userinfo = rest.split("/", 1)[0].rpartition("@")[0] if sep else ""
    if ":" in userinfo:
        # never echo the value: it holds a password
        return f"{head}://...: carries a password; put credentials in a Secret, not the URL"
    if userinfo and not user:
        # nor a user name: a token is often passed as one
        return (
            f"{head}://...: carries user-info (a user name or token before @), which this URL "
            f"never sends; write {'|'.join(schemes)}://HOST[:PORT][/PATH] and keep credentials "
            "out of the URL"
        )
    if not sep or head not in schemes:
        scp = "ssh" in schemes and re.fullmatch(r"[^/:@]+@[^/:]+:.+", url)
        why = 'is scp-like "user@host:path"' if scp else f"is not an {' or '.join(schemes)} URL"
        return f'"{shorten(url)}" {why}; write {form}'
    if any(c.isspace() for c in url):
        return f'"{shorten(url)}" contains whitespace; write {form} with %20 for a space'
    return f'"{shorten(url)}" is not a valid URL; write {form}'


# --- extended resource names ---------------------------------------------------------------------

_RESOURCE_NAME = "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_RESOURCE_EXAMPLE = 'e.g. "nvidia.com/GA102GL_A10"'


def _resource_problem(name: str) -> str | None:
    m = re.fullmatch(f"({DNS_SUBDOMAIN})/{_RESOURCE_NAME}", name)
    if m and m[1].endswith("kubernetes.io"):
        return (
            f'"{shorten(name)}": the kubernetes.io domain is reserved for Kubernetes; use the '
            f"device plugin's, {_RESOURCE_EXAMPLE}"
        )
    if not m or len(m[1]) > 253:
        return (
            f'"{shorten(name)}" is not a valid extended resource name (domain/name, no spaces), '
            f"{_RESOURCE_EXAMPLE}"
        )
    return None


# --- the grammars fields use ----------------------------------------------------------------------

CRON_SCHEDULE = Syntax(_CRON_PATTERN, cron_problem)
IMAGE = Syntax(IMAGE_REFERENCE, image_problem, _IMAGE_MAX)
_REGISTRY = f"{_DOMAIN}(?:/{_REMOTE_NAME})?|{_REMOTE_NAME}"
IMAGE_REGISTRY = _image_part(
    _REGISTRY, "image registry path", "registry.example.com/nvidia", empty=True
)
"""The registry (and path) in front of an image name: `repository` of the GPU Operator's images."""
IMAGE_PATH = _image_part(_REMOTE_NAME, "image name", "vgpu-manager", empty=False)
IMAGE_VERSION = _image_part(
    f"{_TAG}|sha256:[0-9a-f]{{64}}", "image tag", '"550.144.02" or sha256:<64 hex>', empty=True
)
"""A tag, or a digest: the GPU Operator joins `repository/image` and `version` with "@" then."""
GIT_BRANCH = Syntax(_GIT_BRANCH, git_branch_problem)
GIT_URL = Syntax(
    _url_pattern(("http", "https", "ssh"), user=True),
    lambda url: url_problem(url, ("http", "https", "ssh"), user=True),
    _URL_MAX,
)
"""A URL Flux's GitRepository pulls from (it does not take the scp-like `git@host:path`)."""
HTTP_URL = Syntax(_url_pattern(("http", "https")), url_problem, _URL_MAX)
"""A URL the tool connects to over HTTP (the Pushgateway, a runbook): no user-info."""
EXTENDED_RESOURCE = Syntax(
    rf"(?=[^/]{{1,253}}/)(?![^/]*kubernetes\.io/)({DNS_SUBDOMAIN})/{_RESOURCE_NAME}",
    _resource_problem,
)
"""A Kubernetes extended resource name, as a device plugin advertises it (domain/name)."""
