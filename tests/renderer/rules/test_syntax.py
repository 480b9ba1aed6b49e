"""The grammars of renderer/rules/syntax.py: what they accept and refuse, and that each pattern (the
JSON Schema's) agrees with its check (validate's) on every value, except where LOOSER_THAN_CHECK
says the pattern cannot follow."""

from __future__ import annotations

import random
import re

import pytest

from renderer.rules import syntax
from renderer.schema import Syntax

CRON_OK = [
    "17 3 * * *",
    "  0 3 * * *  ",
    "0\t3 * * *",
    "*/15 * * * *",
    "0 0-23/2 * * *",
    "5/10 * * * ?",
    "0 3 1,15 * *",
    "0 3 * JAN-mar mon-FRI",
    "007 03 * * sun",
    "59 23 31 12 6",
    "@yearly",
    "@annually",
    "@monthly",
    "@weekly",
    "@daily",
    "@midnight",
    "@hourly",
    "@every 1h30m",
]
CRON_BAD = {
    "every night": '"every night" has 2 fields; write five fields',
    "0 0 3 * * *": "has 6 fields (a CronJob has no seconds field)",
    "": '"" has 0 fields',
    "61 * * * *": "minute 61 is outside 0-59",
    "* 24 * * *": "hour 24 is outside 0-23",
    "* * 0 * *": "day of month 0 is outside 1-31",
    "* * * 13 *": "month 13 is outside 1-12",
    "* * * * 7": "day of week 7 is outside 0-6",
    "* * * foo *": '"foo" is not a month (1-12, jan-dec)',
    "30-10 * * * *": 'minute range "30-10" runs backwards; write 10-30',
    "*/0 * * * *": 'step "0" in the minute field must be a positive number',
    "*-5 * * * *": '"*-5": * takes no range',
    "1,,2 * * * *": "the minute field has an empty list entry",
    "1-2-3 * * * *": '"2-3" is not a minute',
    "@daily ": '"@daily " is not a schedule macro',
    "@every": '"@every" is not a schedule macro',
    "@every 1d": '"@every 1d" is not a schedule macro',
    "TZ=UTC 0 3 * * *": "Kubernetes refuses TZ= and CRON_TZ=",
    "CRON_TZ=Europe/Berlin 0 3 * * *": "Kubernetes refuses TZ= and CRON_TZ=",
    "0 3 * * *\n": '"*" is not a day of week',  # the message shows the first line
}

IMAGE_OK = [
    "ghcr.io/example/gpu-gitops:0.1.0",
    "gpu-gitops",
    "localhost:5000/a/b",
    "[::1]:5000/a",
    "Registry.Example.com/a__b.c--d",
    "nvcr.io/nvidia/vgpu-manager@sha256:" + "a" * 64,
    "a:TAG_1.2-x@sha512:" + "F" * 128,
]
IMAGE_BAD = {
    "nvcr.io/nvidia/x y": "contains whitespace",
    "": "is empty",
    "a:b:c": '"a:b:c" is not an image reference',
    "ghcr.io/Example/app": "(it is lower case)",
    "a:" + "t" * 129: "is not an image reference",
    "a@sha256:abc": "is not an image reference",
    "-a/b": "is not an image reference",
    "a" * 256: "the repository name is 256 characters long; at most 255",
}

BRANCH_OK = ["rendered", "feature/x", "release-1.0", "a.b", "x@y", "ü"]
BRANCH_BAD = {
    "": "is empty",
    "ren dered": "has a space or a control character",
    "a~1": "has one of ~ ^ : ? * [ \\",
    "a:b": "has one of",
    "a..b": 'has ".."',
    "a@{1}": 'has "@{"',
    "a//b": 'has "//"',
    "-x": 'starts with "-", "." or "/"',
    ".x": "starts with",
    "/x": "starts with",
    "a/.b": 'has a part starting with "."',
    "a.lock": 'has a part ending in ".lock"',
    "a.lock/b": 'has a part ending in ".lock"',
    "x.": 'ends with "." or "/"',
    "x/": "ends with",
    "HEAD": "is reserved",
    "@": "is reserved",
}

URL_OK = [
    "https://github.com/a/b.git",
    "http://pushgateway.monitoring:9091",
    "http://10.0.0.1:9091/metrics?x=1",
    "https://[fd00::1]:443/a",
]
URL_BAD = {
    "git@github.com:a/b": "is not an http or https URL",
    "https://u:s3cret@host/x": "https://...: carries a password; put credentials in a Secret",
    "https://glpat-s3cret@host/x": "https://...: carries user-info (a user name or token before @)",
    "http://h:65536/": "is not a valid URL",
    "http://h x/": "contains whitespace",
    "ftp://x/": "is not an http or https URL",
    "https://": "is not a valid URL",
    "https://-host/": "is not a valid URL",
}


def _check(grammar: Syntax, ok: list[str], bad: dict[str, str]) -> None:
    for value in ok:
        assert grammar.check(value) is None, value
        assert re.fullmatch(grammar.pattern, value), value
    for value, expected in bad.items():
        problem = grammar.check(value)
        assert problem is not None and expected in problem, (value, problem)


def test_cron_schedules_as_the_api_server_parses_them():
    _check(syntax.CRON_SCHEDULE, CRON_OK, CRON_BAD)
    assert syntax.cron_problem("every night") == (
        '"every night" has 2 fields; write five fields (minute hour day-of-month month '
        'day-of-week, e.g. "17 3 * * *") or one of @yearly, @annually, @monthly, @weekly, '
        "@daily, @midnight, @hourly, @every DURATION"
    )


def test_image_references_follow_distribution_reference():
    _check(syntax.IMAGE, IMAGE_OK, IMAGE_BAD)
    assert syntax.image_problem("nvcr.io/nvidia/x y") == (
        '"nvcr.io/nvidia/x y" contains whitespace; write [registry[:port]/]path[:tag]'
        "[@sha256:...], e.g. ghcr.io/example/gpu-gitops:0.1.0"
    )


def test_image_parts_the_gpu_operator_joins():
    _check(
        syntax.IMAGE_REGISTRY,
        ["", "nvcr.io/nvidia", "registry.example.com:5000", "nvidia"],
        {"nvcr.io/Nvidia": "is not an image registry path (it is lower case)", "a b": "whitesp"},
    )
    _check(syntax.IMAGE_PATH, ["vgpu-manager", "a/b"], {"": "is empty", "vGPU": "lower case"})
    _check(
        syntax.IMAGE_VERSION,
        ["", "550.144.02", "sha256:" + "0" * 64],
        {"5 5": "contains whitespace", ".1": "is not an image tag", "sha256:abc": "image tag"},
    )


def test_branch_names_as_git_check_ref_format_branch():
    _check(syntax.GIT_BRANCH, BRANCH_OK, BRANCH_BAD)


def test_urls():
    _check(syntax.HTTP_URL, URL_OK, URL_BAD)
    _check(
        syntax.GIT_URL,
        ["ssh://git@github.com/a/b", "ssh://git@host:2222/a"],
        {"git@github.com:a/b": 'is scp-like "user@host:path"'},
    )


def test_extended_resource_names():
    _check(
        syntax.EXTENDED_RESOURCE,
        ["nvidia.com/GA102GL_A10", "example.org/a", "nvidia.com/NVIDIA_A100-20C"],
        {
            "nvidia.com/L40S GPU": "is not a valid extended resource name (domain/name",
            "kubernetes.io/gpu": "the kubernetes.io domain is reserved for Kubernetes",
            "node.kubernetes.io/gpu": "reserved",
            "a" * 254 + "/x": "is not a valid extended resource name",
            "nvidia.com/": "is not a valid",
            "gpu": "is not a valid",
        },
    )


def test_a_password_never_appears_in_the_message():
    problem = syntax.url_problem("https://user:hunter2@example.com/x y")
    assert problem is not None and "hunter2" not in problem
    # a token passed as the user name (no password) is refused the same way, never echoed
    problem = syntax.url_problem("http://glpat-hunter2@pgw.monitoring:9091")
    assert problem is not None and "hunter2" not in problem and "user-info" in problem
    assert syntax.url_problem("ssh://git@github.com/a/b", ("ssh",), user=True) is None


# --- the pattern (JSON Schema) agrees with the check (validate) ----------------------------------

# (grammar, alphabet of random values, seeds that random values are built around)
FUZZ = {
    "CRON_SCHEDULE": (" \t*?/,-0123456789JanMONsunx@TZ=", [*CRON_OK, *CRON_BAD]),
    "IMAGE": ("abcAB019._-:/@[]+ ", [*IMAGE_OK, *IMAGE_BAD]),
    "IMAGE_REGISTRY": ("abcA019._-:/@[] ", ["nvcr.io/nvidia", "registry.example.com:5000"]),
    "IMAGE_PATH": ("abcA019._-/ ", ["vgpu-manager", "a/b"]),
    "IMAGE_VERSION": ("abcfA019._-:+ ", ["550.144.02", "sha256:" + "0" * 64]),
    "GIT_BRANCH": ("ab./-@{}~^:?*[\\ \x7fHEADlock", [*BRANCH_OK, *BRANCH_BAD]),
    "HTTP_URL": ("hts:/@[]aAb0-9.?%# ", [*URL_OK, *URL_BAD]),
    "GIT_URL": ("hts:/@[]aAb0-9.?%# ", ["ssh://git@github.com/a/b", "git@github.com:a/b"]),
    "EXTENDED_RESOURCE": (
        "aZ09-_./ k",
        ["nvidia.com/GA102GL_A10", "kubernetes.io/x", "a.b/c-d.e_f", "x/" + "y" * 63],
    ),
}


def _mutations(rng: random.Random, alphabet: str, seeds: list[str], n: int) -> list[str]:
    out = list(seeds)
    for _ in range(n):
        value = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(3)
            at = rng.randint(0, len(value))
            if op == 0:
                value.insert(at, rng.choice(alphabet))
            elif op == 1 and value:
                del value[min(at, len(value) - 1)]
            elif value:
                value[min(at, len(value) - 1)] = rng.choice(alphabet)
        out.append("".join(value))
    return out


@pytest.mark.parametrize("name", list(FUZZ))
def test_pattern_agrees_with_check(name: str):
    grammar: Syntax = getattr(syntax, name)
    alphabet, seeds = FUZZ[name]
    rng = random.Random(name)  # fixed: the same values on every run
    looser = {"CRON_SCHEDULE": "runs backwards", "IMAGE": "the repository name is"}.get(name)
    accepted = refused = 0
    for value in _mutations(rng, alphabet, seeds, 4000):
        matches = re.fullmatch(grammar.pattern, value) is not None
        if grammar.max_length is not None and len(value) > grammar.max_length:
            matches = False
        problem = grammar.check(value)
        if problem is None:
            assert matches, f"{name}: the check accepts {value!r}, the pattern refuses it"
            accepted += 1
        else:
            refused += 1
            if matches:
                assert looser and looser in problem, f"{name}: only the check refuses {value!r}"
    assert accepted > 50 and refused > 50  # the values exercise both sides
    assert set(syntax.LOOSER_THAN_CHECK) == {"CRON_SCHEDULE", "IMAGE"}
