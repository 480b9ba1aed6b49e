"""spec.platform.version messages: each refused spelling is told what it is and what to write."""

from __future__ import annotations

import pytest

from renderer.rules.versions import KNOWN, version_problem

MAIN = '"main" = main at the pinned chart commit cozystack@3c780acd'


@pytest.mark.parametrize(
    ("version", "told"),
    [
        ("1.6.4", '"1.6.4" is a patch release: the profile names the minor version, write "1.6"'),
        ("v1.6.2", '"v1.6.2" is a patch release: the profile names the minor version, write "1.6"'),
        ("1.5.0", '"1.5.0" is a patch release: the profile names the minor version, write "1.5"'),
        ("v1.5", '"v1.5" is a release tag: the profile names the minor version, write "1.5"'),
        ("1.7", f'"1.7" is newer than the versions this tool knows: {KNOWN}; upgrade gpu-gitops'),
        (
            "1.7.1",
            f'"1.7.1" is newer than the versions this tool knows: {KNOWN}; upgrade gpu-gitops',
        ),
        ("1.10", f'"1.10" is newer than the versions this tool knows: {KNOWN}; upgrade gpu-gitops'),
        ("v2.0", f'"v2.0" is newer than the versions this tool knows: {KNOWN}; upgrade gpu-gitops'),
        (
            "1.4",
            '"1.4" is older than the GPU bundle: GPU wiring through the bundle starts at v1.5.0; '
            f"use {KNOWN}",
        ),
        ("latest", f'"latest" is not a Cozystack version: use {KNOWN}'),
        ("Main", f'"Main" is not a Cozystack version: use {KNOWN}'),
    ],
)
def test_each_refused_version_is_told_what_it_is(version: str, told: str) -> None:
    assert version_problem(version) == told


def test_the_accepted_values_say_what_main_means() -> None:
    assert f'"1.5", "1.6" or "main" ({MAIN})' == KNOWN
