"""The one exception base of gpu-gitops, and the exceptions of the base package.

GpuGitopsError              every error raised on purpose: the CLI prints it on one line, exit 2
 +-- KubeDataError           the base package's
 |    +-- RetriesExhausted    a call kept failing in a retryable way (kubedata.retry)
 |    +-- YamlError           a YAML text is not plain data of one document (kubedata.yaml_io)
 |    +-- OverBudget          a bound of the network budget was reached (kubedata.budget)
 |    |    +-- OverReadBudget  its bytes: final, no later read is sent (the command ends)
 |    +-- NotRegularFile      also an OSError: no regular file (kubedata.files)
 |    +-- TooLarge            also an OSError: a file over its limit (kubedata.files)
 |    +-- NotGoYaml           a value kubedata.yaml_go does not write as kustomize would
 +-- RenderError             the renderer's (renderer.errors)
 +-- AuditError              the auditor's (audit.errors)
 +-- GitHubError             the PR bot's GitHub calls (prbot.github)
 +-- AdoptError              adopt's (adopt.errors)
"""

from __future__ import annotations

__all__ = ["GpuGitopsError", "KubeDataError", "NotGoYaml", "RetriesExhausted", "YamlError"]


class GpuGitopsError(Exception):
    """Base of every error gpu-gitops raises on purpose: its message is the one line the user
    sees (the CLI catches this class alone; anything else is an internal error)."""


class KubeDataError(GpuGitopsError):
    """Base of every error the base package raises on purpose."""


class RetriesExhausted(KubeDataError):
    """Every attempt failed in a way worth retrying, or the server asked for too long a wait.

    `why` is the last failure; `wait` is the server-asked wait that was too long to honour, or None
    when the attempts ran out.
    """

    def __init__(self, attempts: int, why: str, wait: float | None = None):
        super().__init__(f"failed {attempts} time(s), last: {why}")
        self.attempts = attempts
        self.why = why
        self.wait = wait


class YamlError(KubeDataError):
    """A YAML text that cannot be read: `file`, `line` (1-based; 0 when unknown) and what to do."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}" if line else f"{file}: {message}")
        self.file = file
        self.line = line
        self.message = message


class NotGoYaml(KubeDataError):
    """A value kubedata.yaml_go does not write byte for byte as kustomize would (a float, a tab,
    non-ASCII text...): the caller builds with kustomize instead."""
