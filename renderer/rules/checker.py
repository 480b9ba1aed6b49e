"""Where rule problems go: the profile (or a live file) being checked and what was found.

The checks of this folder (checks.py, devices.py, platform.py, live_state.py) each take a
`RuleChecker` and add errors or warnings at the line where the field is written (or its nearest
written parent).
"""

from __future__ import annotations

from kubedata.yaml_io import Path

from renderer.errors import Problem, Severity
from renderer.profile import LiveDoc, LoadedProfile
from renderer.schema import field_path

__all__ = ["RuleChecker"]


class RuleChecker:
    """One loaded profile under check, and the Problems found in it so far."""

    def __init__(self, lp: LoadedProfile):
        self.lp = lp
        self.spec = lp.profile.spec
        self.cozystack = self.spec.platform.type == "cozystack"
        self.problems: list[Problem] = []

    def add(self, path: Path, message: str, severity: Severity = "error") -> None:
        line = self.lp.line(*path)
        self.problems.append(Problem(self.lp.file, line, field_path(path), message, severity))

    def warn(self, path: Path, message: str) -> None:
        self.add(path, message, "warning")

    def platform_problem(self, path: Path, message: str, severity: Severity = "error") -> None:
        assert self.lp.platform is not None
        self.file_problem(self.lp.platform, path, message, severity)

    def file_problem(
        self, doc: LiveDoc, path: Path, message: str, severity: Severity = "error"
    ) -> None:
        """A problem at the line of `path` (or its nearest written parent) in a live file."""
        line = 1
        probe = path
        while probe:
            if probe in doc.marks:
                line = doc.marks[probe]
                break
            probe = probe[:-1]
        self.problems.append(Problem(doc.file, line, field_path(path), message, severity))
